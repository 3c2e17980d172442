"""TorchRL on the batched engine: two ``EnvBase`` classes whose ``batch_size=[N]`` is N games of
:class:`cribenv.vector.VectorGame`, stepped together in compiled code (over a hundred times
the frames per second of the AEC route, :func:`cribenv.integrations.torchrl.make_env`).

* :class:`BatchedCribbageEnv`, one agent: a learner in one seat of each game against a batched
  opponent (random by default), whose turns are played inside ``step``; the engine's side is
  :class:`cribenv.vector_env.CribbageVectorEnv` (its opponent, seats and seeding). Entries:
  ``"observation"`` (601 float32, the learner's view), ``"action_mask"`` (52 bool),
  ``"action"`` (a card id), ``"reward"`` (everything the learner's seat was paid since its
  previous decision, so with ``reward="points"`` a game's rewards add up to its side's final
  score difference), ``"done"``, ``"terminated"``, ``"truncated"``, and two read-outs the policy
  does not need: ``"learner_seat"`` and ``"scores"`` (each side's score; the final ones on the
  row where a game ends).
* :class:`SelfPlayCribbageEnv`, self-play: every seat of every game is a row, in TorchRL's
  multi-agent layout (``PettingZooWrapper``'s, VMAS's): the batch is the games, ``[N]``, and
  the group ``"players"`` has shape ``[N, num_players]``, the seats. Each step, the seat to act
  in each game lays a card: ``("players", "mask")`` marks it (one seat a game),
  ``("players", "action")`` of the other seats is ignored. Every seat gets its own view
  ``("players", "observation")`` every step, and ``("players", "reward")`` is what the engine
  paid each seat on that step, whoever acted: points pegged on the opponent's turn, the show
  and the final result land in the seat's own row when they are scored, so each seat's
  rewards add up exactly to its total. The done entries are at the root (the game) and in the
  group (``("players", "done")`` etc., ``[N, num_players, 1]``), so TorchRL's ``GAE`` runs
  along each seat's row with the group's keys (a seat's waiting steps included: the points
  scored on them are its own), and a loss then keeps the rows where the seat acted,
  ``data["players"][data["players", "mask"]]``: elsewhere its action was ignored
  (``tests/test_integration_torchrl_batched.py`` trains ``ClipPPOLoss`` so).

Both follow TorchRL's conventions for batched envs:

* **No auto-reset.** A game that ends keeps its row ``done`` (``"next"`` holds the final
  position) until ``reset`` with a ``"_reset"`` mask starts a new game there, which
  ``step_and_maybe_reset`` (collectors, ``rollout(..., break_when_any_done=False)``) does. A
  finished row stepped anyway stays as it is, with reward 0; partial steps (``"_step"``,
  ``rollout(break_when_all_done=True)``) step only their rows. A ``"_reset"`` of a game that is
  still playing (``StepCounter``'s truncation) starts a new game in its row.
* **Masked actions.** ``"action"`` is ``Categorical(52, mask=...)``, its mask kept equal to
  ``"action_mask"`` after every ``reset`` and ``step`` (what TorchRL's ``ActionMask`` transform
  does), so ``env.rand_action()`` and ``check_env_specs`` lay legal cards; a policy samples
  from ``MaskedCategorical`` over ``"action_mask"``
  (:func:`cribenv.integrations.torchrl.masked_policy`). Rows with no decision (a finished game,
  a seat that waits) get an all-ones mask, so a masked distribution never sees an empty one.
  In a ``TransformedEnv`` add ``ActionMask()`` to keep ``rand_action`` masked.

    >>> import torch
    >>> from cribenv.integrations.torchrl import masked_policy
    >>> env = BatchedCribbageEnv(num_envs=4, target=61, reward="points", seed=0)
    >>> policy = masked_policy(env)
    >>> with torch.no_grad():
    ...     data = env.rollout(8, policy, break_when_any_done=False)
    >>> data.batch_size, data["observation"].shape
    (torch.Size([4, 8]), torch.Size([4, 8, 601]))
    >>> bool(data["action_mask"].gather(-1, data["action"].unsqueeze(-1)).all())   # all legal
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from cribenv.game import Rules
from cribenv.integrations.torchrl import GROUP, masked_policy
from cribenv.observation import OBS_SIZE
from cribenv.vector import VectorGame
from cribenv.vector_env import CribbageVectorEnv, make_vector_env

__all__ = ["BatchedCribbageEnv", "SelfPlayCribbageEnv", "GROUP", "masked_policy"]

_SEED_MAX = 2**63 - 1   # the AEC env's range for game seeds


def _num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not (isinstance(num_envs, (int, np.integer))
                                          and num_envs >= 1):
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    return int(num_envs)


def _flag(shape: tuple[int, ...]) -> Categorical:
    return Categorical(2, shape=shape, dtype=torch.bool)


def _done_specs(shape: tuple[int, ...]) -> dict[str, Categorical]:
    return {key: _flag((*shape, 1)) for key in ("done", "terminated", "truncated")}


def _rows_to_reset(tensordict: TensorDictBase | None, num: int) -> np.ndarray | None:
    """The games a ``reset`` call starts anew (``None``: all of them): the root ``"_reset"``
    and the group's (a game restarts whole when any of its seats is named)."""
    if tensordict is None:
        return None
    masks = []
    for key in ("_reset", (GROUP, "_reset")):
        value = tensordict.get(key, None)
        if value is not None:
            masks.append(value.detach().cpu().reshape(num, -1).any(-1).numpy())
    if not masks:
        return None
    rows = np.logical_or.reduce(masks)
    return None if rows.all() else rows


def _partial_steps(tensordict: TensorDictBase, num: int) -> np.ndarray | None:
    value = tensordict.get("_step", None)
    return None if value is None else value.detach().cpu().reshape(num).numpy()


class BatchedCribbageEnv(EnvBase):
    """N games, a learner in one seat of each, the other seats played by ``opponent`` inside
    ``step`` (see the module docstring for the entries and the reset convention).

    ``opponent``, ``num_players``, ``target``, ``reward``, ``shaping``, ``learner_seat``,
    ``skunks``, ``threads`` and the ``rules`` keywords are those of
    :func:`cribenv.vector_env.make_vector_env` (the single env's keyword arguments):
    ``opponent="random"`` is played batched, a bot spec (``"greedy"``, ``"expert"``), an agent
    or a callable row by row; ``learner_seat=None`` draws the seat anew for each game.

    Args:
        num_envs: the number of games N (``batch_size=[N]``).
        seed: the seed of the first ``reset`` (games, learner seats, the random opponent);
            ``env.set_seed(s)`` sets the next one.
    """

    def __init__(self, num_envs: int = 8, *, opponent: Any = "random", num_players: int = 2,
                 target: int = 121, reward: str = "win", shaping: float = 0.0,
                 learner_seat: int | None = None, skunks: bool = False,
                 seed: int | None = None, threads: int = 1, **rules: Any) -> None:
        n = _num_envs(num_envs)
        super().__init__(batch_size=torch.Size([n]))
        self.venv: CribbageVectorEnv = make_vector_env(
            n, opponent=opponent, num_players=num_players, target=target, reward=reward,
            shaping=shaping, learner_seat=learner_seat, skunks=skunks, seed=seed,
            threads=threads, **rules)
        self.num_players = self.venv.num_players
        sides = self.venv.rules.num_sides
        self._seed = seed
        self._started = False
        self.full_observation_spec = Composite(
            observation=Bounded(0.0, 2.0, shape=(n, OBS_SIZE), dtype=torch.float32),
            action_mask=Binary(52, shape=(n, 52), dtype=torch.bool),
            learner_seat=Categorical(self.num_players, shape=(n,), dtype=torch.int64),
            scores=Unbounded(shape=(n, sides), dtype=torch.int64),
            shape=(n,))
        self.full_action_spec = Composite(
            action=Categorical(52, shape=(n,), dtype=torch.int64,
                               mask=torch.ones(n, 52, dtype=torch.bool)),
            shape=(n,))
        self.full_reward_spec = Composite(reward=Unbounded(shape=(n, 1)), shape=(n,))
        self.full_done_spec = Composite(_done_specs((n,)), shape=(n,))

    @property
    def game(self) -> VectorGame:
        """The engine (``VectorGame``) of the N games."""
        return self.venv.game

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        rows = _rows_to_reset(tensordict, self.batch_size[0])
        if rows is None or not self._started:
            self.venv.reset(seed=self._seed)
            self._seed, self._started = None, True
        elif rows.any():
            # CribbageVectorEnv auto-resets inside its step (Gymnasium's same-step mode), which
            # TorchRL does not expect: this env steps its engine itself and starts new games
            # only here, with the vector env's own routine (its seeds, seats and opponent)
            self.venv.new_games(np.flatnonzero(rows))
        return self._output(None)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        vg, n = self.venv.game, self.batch_size[0]
        actions = tensordict.get("action").detach().cpu().reshape(n).numpy().astype(np.int64)
        stepped = ~vg.done
        partial = _partial_steps(tensordict, n)
        if partial is None:
            vg.step(actions)                       # finished games ignore their action
        else:
            stepped &= partial
            vg.step(actions, rows=np.flatnonzero(stepped))
        self.venv.play_opponents()   # until the learner is to act again or the game is over
        owed = vg.cumulative_rewards[np.arange(n), self.venv.learner_seat]
        return self._output(np.where(stepped, owed, 0.0))

    def _output(self, reward: np.ndarray | None) -> TensorDictBase:
        vg, n = self.venv.game, self.batch_size[0]
        done = torch.from_numpy(vg.done.copy()).unsqueeze(-1)
        mask = vg.legal_mask()
        mask[vg.done] = True            # no decision in a finished game: any card (ignored)
        mask = torch.from_numpy(mask)
        self.full_action_spec["action"].update_mask(mask.clone())
        out = {"observation": torch.from_numpy(vg.observe(seats=self.venv.learner_seat)),
               "action_mask": mask,
               "learner_seat": torch.from_numpy(self.venv.learner_seat.copy()),
               "scores": torch.from_numpy(vg.scores.copy()),
               "done": done, "terminated": done.clone(), "truncated": torch.zeros_like(done)}
        if reward is not None:
            out["reward"] = torch.from_numpy(reward.astype(np.float32)).unsqueeze(-1)
        return TensorDict(out, batch_size=[n])

    def _set_seed(self, seed: int | None) -> None:
        self._seed = seed
        self._started = False    # the next reset starts every game from this seed

    def close(self, *, raise_if_closed: bool = True) -> None:
        if getattr(self, "venv", None) is not None:
            self.venv.close()
        super().close(raise_if_closed=raise_if_closed)


class SelfPlayCribbageEnv(EnvBase):
    """N games of pure self-play, every seat a row of the group ``"players"``
    (``[N, num_players]``); see the module docstring for the entries.

    Args:
        num_envs: the number of games N (``batch_size=[N]``).
        num_players: 2, 3 or 4.
        target: 121 or 61.
        reward: ``"win"`` (+1 / -1 shared by the losers at the end, times the game points with
            ``skunks``) or ``"points"`` (each step's point differential), as the AEC env's.
        skunks: as the AEC env's.
        shaping: as the AEC env's.
        seed: the seed of the games' seeds (``env.set_seed(s)`` sets it anew for the next
            ``reset``).
        threads: the engine's threads (:class:`~cribenv.vector.VectorGame`).
        rules: other :class:`~cribenv.game.Rules` fields (``must_peg_out_exactly``, ...).
    """

    def __init__(self, num_envs: int = 8, *, num_players: int = 2, target: int = 121,
                 reward: str = "win", skunks: bool = False, shaping: float = 0.0,
                 seed: int | None = None, threads: int = 1, **rules: Any) -> None:
        n = _num_envs(num_envs)
        super().__init__(batch_size=torch.Size([n]))
        self.rules = Rules(num_players=num_players, target=target, **rules)
        p = self.num_players = self.rules.num_players
        self._rng = np.random.default_rng(seed)
        self.game = VectorGame(self.rules, seeds=self._rng.integers(_SEED_MAX, size=n),
                               reward=reward, skunks=skunks, shaping=shaping, threads=threads)
        self._seats = [np.full(n, s, np.int64) for s in range(p)]
        self.full_observation_spec = Composite(
            {GROUP: Composite(
                observation=Bounded(0.0, 2.0, shape=(n, p, OBS_SIZE), dtype=torch.float32),
                action_mask=Binary(52, shape=(n, p, 52), dtype=torch.bool),
                mask=_flag((n, p)),
                shape=(n, p)),
             "scores": Unbounded(shape=(n, self.rules.num_sides), dtype=torch.int64)},
            shape=(n,))
        self.full_action_spec = Composite(
            {GROUP: Composite(action=Categorical(52, shape=(n, p), dtype=torch.int64,
                                                 mask=torch.ones(n, p, 52, dtype=torch.bool)),
                              shape=(n, p))},
            shape=(n,))
        self.full_reward_spec = Composite(
            {GROUP: Composite(reward=Unbounded(shape=(n, p, 1)), shape=(n, p))}, shape=(n,))
        self.full_done_spec = Composite(
            {**_done_specs((n,)), GROUP: Composite(_done_specs((n, p)), shape=(n, p))},
            shape=(n,))

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        rows = _rows_to_reset(tensordict, self.batch_size[0])
        rows = np.arange(self.batch_size[0]) if rows is None else np.flatnonzero(rows)
        if len(rows):
            self.game.reset_games(rows, self._rng.integers(_SEED_MAX, size=len(rows)))
        return self._output(None)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        vg, n = self.game, self.batch_size[0]
        actions = tensordict.get((GROUP, "action")).detach().cpu().reshape(n, -1).numpy()
        to_act = vg.to_act
        cards = actions[np.arange(n), np.maximum(to_act, 0)].astype(np.int64)
        partial = _partial_steps(tensordict, n)
        if partial is None:
            rewards = vg.step(cards)           # finished games ignore theirs (reward 0)
        else:
            rewards = vg.step(cards, rows=np.flatnonzero(partial & (to_act >= 0)))
        return self._output(rewards)

    def _output(self, rewards: np.ndarray | None) -> TensorDictBase:
        vg, n, p = self.game, self.batch_size[0], self.num_players
        to_act = vg.to_act
        live = np.flatnonzero(to_act >= 0)
        obs = np.stack([vg.observe(seats=seat) for seat in self._seats], axis=1)
        mask = np.ones((n, p, 52), bool)         # the seats that wait: any card (ignored)
        mask[live, to_act[live]] = vg.legal_mask(rows=live)
        turn = np.zeros((n, p), bool)
        turn[live, to_act[live]] = True
        mask = torch.from_numpy(mask)
        self.full_action_spec[GROUP, "action"].update_mask(mask.clone())
        done = torch.from_numpy(vg.done.copy()).unsqueeze(-1)
        seat_done = done.unsqueeze(1).expand(n, p, 1).clone()
        group = {"observation": torch.from_numpy(obs), "action_mask": mask,
                 "mask": torch.from_numpy(turn), "done": seat_done,
                 "terminated": seat_done.clone(), "truncated": torch.zeros_like(seat_done)}
        if rewards is not None:
            group["reward"] = torch.from_numpy(rewards.astype(np.float32)).unsqueeze(-1)
        return TensorDict({GROUP: TensorDict(group, batch_size=[n, p]),
                           "scores": torch.from_numpy(vg.scores.copy()),
                           "done": done, "terminated": done.clone(),
                           "truncated": torch.zeros_like(done)}, batch_size=[n])

    def _set_seed(self, seed: int | None) -> None:
        self._rng = np.random.default_rng(seed)   # the next reset's games come from it

    def close(self, *, raise_if_closed: bool = True) -> None:
        if getattr(self, "game", None) is not None:
            self.game.close()
        super().close(raise_if_closed=raise_if_closed)
