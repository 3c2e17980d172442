"""Tianshou 2 on the batched engine: :class:`BatchedTianshouVectorEnv`, a
``tianshou.env.BaseVectorEnv`` whose N envs are N games of :class:`cribenv.vector.VectorGame`,
stepped together in compiled code, for Tianshou's ``Collector`` and its single-agent
algorithms (``DQN``, ...).

A learner plays one seat of each game against a batched opponent (random by default), whose
turns are played inside ``step``; the engine's side is
:class:`cribenv.vector_env.CribbageVectorEnv` (its opponent, seats and seeding), built from
:func:`cribenv.vector_env.make_vector_env`'s keyword arguments. One env step is one decision
of the learner:

* **Observations** are a ``tianshou.data.Batch`` with ``obs`` (``(k, 601)`` float32, the
  learner's view) and ``mask`` (``(k, 52)`` bool, its legal cards): where Tianshou's masked
  policies read the legal actions (``batch.obs.mask``: ``DiscreteQLearningPolicy`` and its
  epsilon-greedy noise, ``MARLRandomDiscreteMaskedOffPolicyAlgorithm``), and the layout of the
  project's multi-agent adapter (:class:`cribenv.integrations.tianshou.CribbageTianshouEnv`)
  less its ``agent_id``. A finished game's mask is all True (no decision; the action is
  ignored).
* **Rewards**: everything the learner's seat was paid since its previous decision (its
  opponents' pegging and the show included), so a game's rewards add up to its result:
  ``reward="points"``, the learner's side's final score difference; ``"win"``, +1 for a win
  and -1 shared by the losers (times the game points with ``skunks``), as the AEC env's.
  Tianshou's episode returns (``CollectStats.returns``) are the games' results.
* **Infos**: an object array of one dict a row, the same keys on every row: by default empty
  (Tianshou's ``Collector`` reads none, and stacking them costs more than the engine's step);
  ``info="env_id"``: ``env_id``, as Tianshou's own vector envs add; ``info="game"``: also
  ``learner_seat``, ``scores`` (each side's score; the final ones on a game's last row) and
  ``winner`` (its side, -1 while playing). With ``illegal_action="penalty"`` every row has
  ``illegal_action`` (bool) too.
* **No autoreset**, Tianshou's convention: a game that ends returns ``terminated`` with its
  final position (the learner's view) and keeps its row finished (stepped anyway: the same
  observation, reward 0, ``terminated``) until ``reset(env_id=...)`` starts a new game there,
  which the collector does for the envs that finished. So the engine is stepped here
  directly, not through ``CribbageVectorEnv.step`` (Gymnasium's same-step autoreset), and new
  games start only in ``reset``, with the vector env's own routine (its seeds, learner seats
  and opponent). ``step(action, id=...)`` steps only the games named.

``reset()`` (no ``env_id``) starts N new games, from the seed given to it, to :meth:`seed` or
to the constructor (``seed=``), else from where the env's generator is. The N games share one
generator, so ``seed(s)`` takes one int for all of them (not one per env).

    >>> envs = BatchedTianshouVectorEnv(num_envs=4, target=61, reward="points", seed=0,
    ...                                 info="game")
    >>> obs, info = envs.reset()
    >>> obs.obs.shape, obs.mask.shape, len(envs), sorted(info[0])
    ((4, 601), (4, 52), 4, ['env_id', 'learner_seat', 'scores', 'winner'])
    >>> first_legal = obs.mask.argmax(axis=1)
    >>> obs, rew, terminated, truncated, info = envs.step(first_legal[[1, 3]], id=[1, 3])
    >>> [i["env_id"] for i in info], rew.shape, bool(obs.mask.any(axis=1).all())
    ([1, 3], (2,), True)
    >>> envs.close()

Train with it as with any Tianshou vector env::

    from tianshou.data import Collector, VectorReplayBuffer
    envs = BatchedTianshouVectorEnv(num_envs=64, target=61, opponent="random", seed=0)
    collector = Collector(algorithm, envs, VectorReplayBuffer(50_000, len(envs)),
                          exploration_noise=True)
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from tianshou.data import Batch
from tianshou.env import BaseVectorEnv

from cribenv.observation import OBS_SIZE
from cribenv.vector import VectorGame
from cribenv.vector_env import CribbageVectorEnv, make_vector_env

__all__ = ["BatchedTianshouVectorEnv", "INFO_MODES", "MaskInObs"]

INFO_MODES = ("none", "env_id", "game")


class BatchedTianshouVectorEnv(BaseVectorEnv):
    """N games on the batched engine as a Tianshou vector env, a learner in one seat of each
    (see the module docstring for the observations, rewards, infos and resets).

    Args:
        num_envs: the number of games N (``len(envs)``, ``envs.env_num``).
        info: what each row's info dict holds: ``"none"`` (default: nothing; Tianshou's
            ``Collector`` reads no info), ``"env_id"`` (what Tianshou's own vector envs add)
            or ``"game"`` (``env_id`` and the game's ``learner_seat``, ``scores`` and
            ``winner``). The collector stacks the dicts into a ``Batch`` twice a step, which
            costs more than the engine: at N=256 with a random policy on a busy 2-core
            machine, ``"none"`` gave 48,000 to 93,000 steps a second, ``"env_id"`` 32,000 to
            43,000, ``"game"`` about 20,000.
        env_kwargs: :func:`cribenv.vector_env.make_vector_env`'s keyword arguments (the single
            env's): ``opponent`` (``"random"`` is played batched, a bot spec such as
            ``"greedy"``, an agent or a callable row by row), ``num_players``, ``target``,
            ``reward``, ``shaping``, ``learner_seat`` (``None``: drawn anew for each game),
            ``skunks``, ``seed`` (the first ``reset``'s), ``threads``,
            ``illegal_action="penalty"`` (an illegal card ends that game with
            ``illegal_reward``, ``info["illegal_action"]`` True in its row) and rules.

    The spaces follow Tianshou's vector envs (a list, one per env): ``envs.action_space[i]`` is
    ``Discrete(52)``, ``envs.observation_space[i]`` a ``Dict`` of ``obs`` and ``mask``; the
    single ones are :attr:`single_action_space` and :attr:`single_observation_space`.
    """

    def __init__(self, num_envs: int = 8, *, info: str = "none", **env_kwargs: Any) -> None:
        if info not in INFO_MODES:
            raise ValueError(f"info must be one of {', '.join(map(repr, INFO_MODES))}, "
                             f"got {info!r}")
        # BaseVectorEnv.__init__ builds one worker per env; here there are none, the N games are
        # rows of one engine, so only the attributes its methods and the collectors read are set
        self.venv: CribbageVectorEnv = make_vector_env(num_envs, **env_kwargs)
        n = self.venv.num_envs
        self._env_fns: list[Any] = []
        self.workers: list[Any] = []
        self.env_num = n
        self.wait_num = n
        self.timeout = None
        self.is_async = False
        self.waiting_conn: list[Any] = []
        self.waiting_id: list[int] = []
        self.ready_id = list(range(n))
        self.is_closed = False
        self.single_action_space = spaces.Discrete(52)
        self.single_observation_space = spaces.Dict({
            "obs": spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32),
            "mask": spaces.Box(0, 1, (52,), np.bool_)})
        self._env_attrs: dict[str, Any] = {
            "action_space": self.single_action_space,
            "observation_space": self.single_observation_space,
            "metadata": {"render_modes": []}, "spec": None,
            "reward_range": (-float("inf"), float("inf"))}
        self.info = info
        self._penalty = self.venv.illegal_action == "penalty"
        self._forfeit = np.zeros(n, bool)     # ended by an illegal card (illegal_action="penalty")
        self._seed: int | list[int] | None = None
        self._started = False

    @property
    def game(self) -> VectorGame:
        """The engine (``VectorGame``) of the N games."""
        return self.venv.game

    # ---------------------------------------------------------------- Tianshou's venv API
    def reset(self, env_id: int | list[int] | np.ndarray | None = None,
              **kwargs: Any) -> tuple[Batch, np.ndarray]:
        """New games in the envs ``env_id`` (default: all, seeded by ``seed=`` or the pending
        :meth:`seed`), played up to the learner's first decision; their observations and
        infos."""
        self._assert_is_not_closed()
        seed = kwargs.pop("seed", None)
        if kwargs.pop("options", None) or kwargs:
            raise TypeError(f"reset takes env_id and seed only, got {sorted(kwargs) or 'options'}")
        rows = self._rows(env_id)
        if env_id is None or not self._started:
            if env_id is not None and seed is not None:
                raise ValueError("seed resets every game: call reset(seed=...) without env_id")
            if seed is None:
                seed, self._seed = self._seed, None
            self.venv.reset(seed=seed)     # every game (before the first reset: all of them)
            self._forfeit[:] = False
            self._started = True
        else:
            if seed is not None:
                raise ValueError("the N games share one generator: seed them all with "
                                 "reset(seed=...) (no env_id) or seed()")
            self.venv.new_games(rows)      # the vector env's seeds, seats and opponent
            self._forfeit[rows] = False
        obs, info = self._output(rows)
        return obs, info

    def step(self, action: Any, id: int | list[int] | np.ndarray | None = None  # noqa: A002
             ) -> tuple[Batch, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The learner lays ``action[j]`` in game ``id[j]`` (default: every game), then the
        opponents play until it is to act again or the game is over. Finished games ignore
        their action (reward 0, ``terminated`` again) until they are reset."""
        self._assert_is_not_closed()
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if action is None:
            raise ValueError("action must not be None (this vector env is synchronous)")
        if hasattr(action, "detach"):          # a torch tensor
            action = action.detach().cpu().numpy()
        rows = self._rows(id)
        acts = np.asarray(action).reshape(-1)
        if acts.shape != rows.shape:
            raise ValueError(f"{len(rows)} envs to step but {acts.size} actions")
        if acts.dtype.kind not in "iu":
            if acts.dtype.kind != "f" or not np.all(acts == np.round(acts)):
                raise ValueError(f"actions must be card ids (integers), got {acts!r}")
        acts = acts.astype(np.int64)
        venv, vg, n = self.venv, self.venv.game, self.env_num
        live = ~(vg.done[rows] | self._forfeit[rows])
        illegal = np.zeros(len(rows), bool)
        if self._penalty and live.any():
            idx = np.flatnonzero(live)
            ok = (acts[idx] >= 0) & (acts[idx] < 52)
            mask = vg.legal_mask(rows=rows[idx])
            ok[ok] = mask[np.flatnonzero(ok), acts[idx][ok]]
            illegal[idx[~ok]] = True
            live &= ~illegal
            self._forfeit[rows[illegal]] = True
        full = np.zeros(n, np.int64)
        full[rows] = acts
        if live.all() and len(rows) == n:
            vg.step(full)
        elif live.any():
            vg.step(full, rows=rows[live])
        venv.play_opponents()     # until the learner is to act again or the game is over
        reward = np.zeros(len(rows), np.float32)
        stepped = rows[live]
        reward[live] = vg.cumulative_rewards[stepped, venv.learner_seat[stepped]]
        reward[illegal] = venv.illegal_reward
        terminated = vg.done[rows] | self._forfeit[rows]
        obs, info = self._output(rows)
        return obs, reward, terminated, np.zeros(len(rows), bool), info

    def seed(self, seed: int | list[int] | None = None) -> list[int | list[int] | None]:
        """The seed of the next ``reset()`` without ``env_id`` (one for every game: the N games
        share one generator; an int, or a list of ints as ``numpy.random.SeedSequence``
        entropy)."""
        self._assert_is_not_closed()
        self._seed = seed
        return [seed] * self.env_num

    def get_env_attr(self, key: str, id: int | list[int] | np.ndarray | None = None  # noqa: A002
                     ) -> list[Any]:
        """The attribute ``key`` of the envs ``id`` (a list): the spaces, ``metadata`` etc.,
        else the vector env's (one value shared by every env)."""
        self._assert_is_not_closed()
        value = self._env_attrs[key] if key in self._env_attrs else getattr(self.venv, key)
        return [value] * len(self._rows(id))

    def set_env_attr(self, key: str, value: Any,
                     id: int | list[int] | np.ndarray | None = None) -> None:  # noqa: A002
        raise NotImplementedError("the N games share one engine: set attributes on env.venv")

    def render(self, **kwargs: Any) -> list[Any]:
        raise NotImplementedError("the batched env does not render; DummyVectorEnv of "
                                  "cribenv.wrappers.SingleAgentCribbageEnv(render_mode=...) does")

    def close(self) -> None:
        self._assert_is_not_closed()
        self.venv.close()
        self.is_closed = True

    # ---------------------------------------------------------------- helpers
    def _rows(self, env_id: int | list[int] | np.ndarray | None) -> np.ndarray:
        if env_id is None:
            return np.arange(self.env_num)
        rows = np.atleast_1d(np.asarray(env_id, np.int64))
        if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= self.env_num)) \
                or len(np.unique(rows)) != len(rows):
            raise ValueError(f"env ids must be distinct ints 0..{self.env_num - 1}, "
                             f"got {env_id!r}")
        return rows

    def _output(self, rows: np.ndarray) -> tuple[Batch, np.ndarray]:
        vg = self.venv.game
        seats = self.venv.learner_seat[rows]
        ended = vg.done[rows] | self._forfeit[rows]
        mask = vg.legal_mask(rows=rows)
        mask[ended] = True                 # no decision in a finished game: any card (ignored)
        obs = Batch(obs=vg.observe(seats=seats, rows=rows), mask=mask)
        info = np.empty(len(rows), object)
        ids = rows.tolist()
        if self.info == "game":
            forfeit = self._forfeit[rows]
            winner = np.where(forfeit, -1, vg.winner[rows]).tolist()
            scores = vg.scores[rows]           # a copy (fancy indexing)
            info[:] = [{"env_id": r, "learner_seat": s, "scores": sc, "winner": w}
                       for r, s, sc, w in zip(ids, seats.tolist(), scores, winner, strict=True)]
        elif self.info == "env_id":
            info[:] = [{"env_id": r} for r in ids]
        else:
            info[:] = [{} for _ in ids]
        if self._penalty:
            for d, f in zip(info, self._forfeit[rows].tolist(), strict=True):
                d["illegal_action"] = f
        return obs, info


class MaskInObs(gymnasium.Wrapper):
    """The per-env route for Tianshou's masked policies, the one to compare with: a
    :class:`cribenv.wrappers.SingleAgentCribbageEnv` whose legal-card mask is moved where
    those policies read it (``obs["mask"]``), for ``DummyVectorEnv([lambda: MaskInObs(...)])``.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.observation_space = spaces.Dict({"obs": env.observation_space,
                                              "mask": spaces.Box(0, 1, (52,), np.bool_)})

    def reset(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return {"obs": obs, "mask": info["action_mask"].astype(bool)}, {}

    def step(self, action: Any) -> tuple[Any, ...]:
        obs, rew, term, trunc, info = self.env.step(action)
        return {"obs": obs, "mask": info["action_mask"].astype(bool)}, rew, term, trunc, {}
