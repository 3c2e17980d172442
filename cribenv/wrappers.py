"""Gymnasium single-agent Cribbage: one learner against opponents, for single-agent RL libraries.

:class:`SingleAgentCribbageEnv` seats a learner at the table of the raw PettingZoo env
(:class:`cribenv.aec.CribbageEnv`, which holds all the rules) and plays every other seat with an
opponent, so that each ``step`` is one decision of the learner::

    >>> from cribenv.wrappers import SingleAgentCribbageEnv
    >>> env = SingleAgentCribbageEnv(opponent="random", reward="points", seed=0)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, bool(env.action_masks().any())
    ((601,), True)

``make_vec_env`` builds a Stable-Baselines3 ``VecEnv`` of them (sb3-contrib's ``MaskablePPO``
reads the masks through ``action_masks()``). ``import cribenv`` registers it with Gymnasium as
``cribenv/SingleAgentCribbage-v0`` (``gymnasium.make`` and SB3's ``make_vec_env`` take the id).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from gymnasium import spaces

from cribenv import GYM_ENV_ID, opponents
from cribenv import cards as C
from cribenv.aec import RENDER_MODES, CribbageEnv, check_render_mode, render_table
from cribenv.game import IllegalActionError
from cribenv.observation import OBS_SIZE
from cribenv.turn_mask import TurnMaskWrapper

if TYPE_CHECKING:  # pragma: no cover
    from stable_baselines3.common.vec_env import VecEnv

__all__ = ["SingleAgentCribbageEnv", "make_vec_env", "GYM_ENV_ID", "END_MASK", "TurnMaskWrapper"]

_SEED_MAX = 2**63 - 1

END_MASK = np.ones(52, np.int8)
END_MASK.flags.writeable = False
"""``info["action_mask"]`` of the last step of an episode: every card marked.

No decision is pending (the next call is ``reset()``), but code that samples an action from
every observation it gets still does so there: Gymnasium's vector envs (next-step autoreset)
hand back the final observation and its info, the policy picks an action, and the following
``step`` resets the env and ignores it. An all-zero mask would make a masked categorical all
``-inf`` (NaN probabilities); all ones keeps it a proper (uniform) distribution. The action is
never applied. ``action_masks()`` stays the legal cards (none once the episode is over), for
code that reads it as such (bots, feature builders).
"""

# What may play a seat: a spec string resolved by cribenv.opponents ("random", "expert",
# "ppo:PATH", ...: agents.make_agent's specs once the project is installed), an object with
# .act(obs_dict) -> card, or a plain callable f(obs_dict) -> card.
Opponent = Any


class _Seat:
    """One opponent seat: the spec as given, and what acts for it once resolved."""

    __slots__ = ("spec", "act", "agent")

    def __init__(self, spec: Opponent) -> None:
        if isinstance(spec, str):
            if not spec:
                raise ValueError("an opponent spec must be a non-empty string, e.g. 'random'")
            self.agent: Any = None          # resolved by cribenv.opponents at the next reset
            self.act: Callable[[dict[str, np.ndarray]], Any] | None = None
        elif callable(getattr(spec, "act", None)):
            self.agent = spec
            self.act = spec.act
        elif callable(spec):
            self.agent = spec
            self.act = spec
        else:
            raise TypeError(
                "an opponent must be a spec string (e.g. 'random'), an agent with "
                f".act(observation) or a callable f(observation) -> card; got {spec!r}")
        self.spec = spec

    def resolve(self, seed: int) -> None:
        """Build the agent of a spec string (again, with ``seed``, after a seeded reset)."""
        self.agent = opponents.make(self.spec, seed=seed)
        act = getattr(self.agent, "act", None)
        self.act = act if callable(act) else self.agent

    @property
    def name(self) -> str:
        if isinstance(self.spec, str):
            return self.spec
        return str(getattr(self.agent, "name", None) or getattr(self.agent, "__name__", None)
                   or type(self.agent).__name__)


class SingleAgentCribbageEnv(gymnasium.Env):
    """Cribbage for one learner against opponents, as a Gymnasium env.

    Args:
        opponent: who plays the other seats. A spec string resolved by
            :mod:`cribenv.opponents` (with this project installed, :func:`agents.make_agent`'s
            ``"random"``, ``"greedy"``, ``"expert"``, ``"ppo:PATH"``; built lazily, one agent
            per seat, seeded from the env's RNG and rebuilt after every seeded ``reset``), an
            agent with ``.act(obs_dict) -> card`` or a callable ``f(obs_dict) -> card`` (used
            as given; its ``reset()``, if any, is called before each game). For 3 or 4 players
            either one opponent for every other seat (a spec gives each seat its own agent, an
            object is shared) or a list of ``num_players - 1``: ``opponent[i]`` plays the seat
            ``i + 1`` places to the learner's left (in 4-player games ``opponent[1]`` is the
            learner's partner).
        num_players: 2, 3 or 4.
        target: 121 or 61.
        reward: ``"win"`` (+1 / -1 at the end, x game points with ``skunks``) or ``"points"``
            (the zero-sum point differential), as in :class:`cribenv.aec.CribbageEnv`. The
            reward of a step is everything the learner earned since its previous decision,
            including points scored on the opponents' turns and the final result.
        shaping: with ``reward="win"``, add ``shaping`` x the point differential.
        learner_seat: ``None`` (a random seat each episode, from the env's RNG) or a seat.
        skunks: scale the win reward by the game points (2 skunk, 3 double skunk).
        episode: ``"game"`` or ``"hand"`` (one deal per episode).
        seed: seeds the env's RNG for the first ``reset()`` that is not given a seed.
        illegal_action: ``"raise"`` (default): an illegal card raises
            :class:`~cribenv.game.IllegalActionError` naming it and the legal cards; mask your
            policy with ``action_masks()``. ``"penalty"``: the episode ends (``terminated``)
            with ``illegal_reward`` and ``info["illegal_action"]`` (for algorithms that cannot
            mask, and for ``gymnasium.utils.env_checker.check_env``, which steps random cards).
        illegal_reward: the reward of an illegal card with ``illegal_action="penalty"``.
        render_mode: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (an image of the
            table, learner marked: what SB3's ``make_vec_env`` and video recorders ask for).
        rules: extra :class:`~cribenv.game.Rules` fields.

    Observations are the float32 vector of :mod:`cribenv.observation` (the ``observation_space``
    Box); actions are card ids (``Discrete(52)``). ``info["action_mask"]`` (int8, like the AEC
    env's) and ``action_masks()`` (bool, for ``MaskablePPO``) give the legal cards; once the
    episode is over ``action_masks()`` is all False and the last step's ``info["action_mask"]``
    all ones (:data:`END_MASK`: no decision is pending, and a masked categorical of the final
    observation stays valid under Gymnasium's next-step autoreset).
    ``reset(seed=..., options=...)`` follows Gymnasium: ``seed`` fixes the deals, the learner's
    seat and spec-built opponents; ``options`` may hold ``deals``, ``first_dealer``,
    ``game_seed`` (passed to the AEC env) and ``learner_seat`` (this episode only).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(self, opponent: Opponent | Sequence[Opponent] = "random",
                 num_players: int = 2, target: int = 121, reward: str = "win",
                 shaping: float = 0.0, learner_seat: int | None = None, skunks: bool = False,
                 episode: str = "game", seed: int | None = None,
                 illegal_action: str = "raise", illegal_reward: float = -1.0,
                 render_mode: str | None = None, **rules: Any) -> None:
        super().__init__()
        check_render_mode(render_mode)
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty', got "
                             f"{illegal_action!r}")
        self.aec = CribbageEnv(num_players=num_players, target=target, reward=reward,
                               episode=episode, skunks=skunks, shaping=shaping, **rules)
        self.num_players = num_players
        self._check_seat(learner_seat)
        self._fixed_seat = learner_seat
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(52)
        self._seats = self._make_seats(opponent)
        self._pending: list[_Seat] | None = None
        self._init_seed = seed
        self._needs_resolve = True
        self.learner_seat: int = learner_seat if learner_seat is not None else 0
        self.learner: str = self.aec.possible_agents[self.learner_seat]
        self._by_agent: dict[str, _Seat] = {}
        self._done = True
        self._mask = np.zeros(52, np.int8)   # the learner's legal cards (from the last observe)

    # ---------------------------------------------------------------- opponents
    def _check_seat(self, seat: int | None) -> None:
        if seat is not None and not (isinstance(seat, (int, np.integer))
                                     and 0 <= seat < self.num_players):
            raise ValueError(f"learner_seat must be None (random) or a seat 0.."
                             f"{self.num_players - 1}, got {seat!r}")

    def _make_seats(self, opponent: Opponent | Sequence[Opponent]) -> list[_Seat]:
        need = self.num_players - 1
        if isinstance(opponent, (list, tuple)):
            if len(opponent) != need:
                raise ValueError(f"{self.num_players} players need {need} opponent(s), got a "
                                 f"list of {len(opponent)}")
            return [_Seat(o) for o in opponent]
        return [_Seat(opponent) for _ in range(need)]

    def set_opponent(self, opponent: Opponent | Sequence[Opponent]) -> None:
        """Play the next episodes against ``opponent`` (same forms as the constructor's).

        Takes effect at the next ``reset()``, so an episode in progress finishes against the
        opponents it started with (with SB3 vec envs: ``vec_env.env_method("set_opponent",
        "expert")``; spec strings are the cheapest to send to subprocesses).
        """
        self._pending = self._make_seats(opponent)

    @property
    def opponents(self) -> list[Any]:
        """What plays each other seat, in order to the learner's left (agents once resolved)."""
        return [s.agent if s.agent is not None else s.spec for s in self._seats]

    @property
    def game(self):
        """The :class:`cribenv.game.Game` being played (``None`` before the first reset)."""
        return self.aec.game

    # ---------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None and self._init_seed is not None:
            seed, self._init_seed = self._init_seed, None
        super().reset(seed=seed)
        self._init_seed = None
        options = dict(options or {})
        rng = self.np_random
        if self._pending is not None:
            self._seats, self._pending = self._pending, None
            self._needs_resolve = True
        seat = options.pop("learner_seat", self._fixed_seat)
        self._check_seat(seat)
        if seat is None:
            seat = int(rng.integers(self.num_players))
        seat = int(seat)
        if "game_seed" not in options:
            options["game_seed"] = int(rng.integers(_SEED_MAX))
        if seed is not None or self._needs_resolve:
            for s in self._seats:
                agent_seed = int(rng.integers(2**31))   # drawn for every seat: stable stream
                if isinstance(s.spec, str):
                    s.resolve(agent_seed)
            self._needs_resolve = False
        for s in self._seats:
            reset = getattr(s.agent, "reset", None)
            if callable(reset):
                reset()
        n = self.num_players
        agents = self.aec.possible_agents
        self.learner_seat = seat
        self.learner = agents[seat]
        self._by_agent = {agents[(seat + 1 + i) % n]: s for i, s in enumerate(self._seats)}
        self._done = False
        aec = self.aec
        aec.reset(options=options)
        self._play_opponents()
        if aec.agent_selection != self.learner or aec.terminations[self.learner]:
            raise RuntimeError("the game ended before the learner's first decision")
        obs = aec.observe(self.learner)
        self._mask = obs["action_mask"]   # the wrapper's own; the caller gets a copy
        return obs["observation"], {"action_mask": self._mask.copy(), "learner_seat": seat}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode is over (or never began): call reset() first")
        aec = self.aec
        learner = self.learner
        mask = self._mask
        try:
            card = operator.index(action)     # ints, numpy integers; not floats or strings
            legal = 0 <= card < 52 and mask[card] and action is not True and action is not False
        except TypeError:
            card, legal = action, False
        if not legal:
            return self._illegal(action, mask)
        aec.step(card)
        self._play_opponents()
        reward = aec._cumulative_rewards[learner]
        obs = aec.observe(learner)
        self._mask = mask = obs["action_mask"]
        info: dict[str, Any] = {"action_mask": mask.copy(), "learner_seat": self.learner_seat}
        terminated = aec.terminations[learner]
        if terminated:
            self._done = True
            info.update(aec.infos[learner])
            info["action_mask"] = END_MASK
        if self.render_mode == "human":
            self.render()
        return obs["observation"], float(reward), terminated, False, info

    def _play_opponents(self) -> None:
        """Step the opponents until it is the learner's turn or the game is over."""
        aec = self.aec
        learner = self.learner
        by_agent = self._by_agent
        terminations = aec.terminations
        while True:
            agent = aec.agent_selection
            if agent == learner or terminations[agent]:
                return
            seat = by_agent[agent]
            card = seat.act(aec.observe(agent))
            try:
                aec.step(int(card))
            except IllegalActionError as exc:
                raise IllegalActionError(f"opponent {seat.name!r} ({agent}) chose an illegal "
                                         f"card: {exc}") from None

    def _illegal(self, card: Any, mask: np.ndarray
                 ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        legal = C.to_str_many(int(c) for c in np.flatnonzero(mask))
        what = (C.to_str(int(card)) if isinstance(card, int | np.integer) and not
                isinstance(card, bool) and 0 <= card < 52 else repr(card))
        if self.illegal_action == "raise":
            raise IllegalActionError(
                f"illegal action {what} for the learner ({self.learner}): the legal cards "
                f"are {legal} (mask the policy with env.action_masks() or "
                "info['action_mask'])")
        self._done = True
        obs = self.aec.observe(self.learner)["observation"].copy()
        info = {"action_mask": END_MASK, "learner_seat": self.learner_seat,
                "illegal_action": card}
        return obs, self.illegal_reward, True, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal cards as a bool array of 52 (all False once the episode ended;
        the last step's ``info["action_mask"]`` is :data:`END_MASK`): the method sb3-contrib's
        ``MaskablePPO`` looks for."""
        if self._done:
            return np.zeros(52, bool)
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table: text (``"ansi"``), printed (``"human"``) or an image with the learner's
        seat marked (``"rgb_array"``, :mod:`cribenv.render_image`; needs Pillow)."""
        return render_table(self.render_mode, self.aec._table,
                            lambda: self.aec._image(learner=self.learner_seat),
                            "pass render_mode='ansi', 'human' or 'rgb_array'.")

    def close(self) -> None:
        self.aec.close()


def _make_single_env(rank: int, opponent_factory: Any, env_kwargs: dict[str, Any],
                     monitor: bool) -> gymnasium.Env:
    opponent = opponent_factory if isinstance(opponent_factory, (str, list, tuple)) \
        else opponent_factory(rank)
    env: gymnasium.Env = SingleAgentCribbageEnv(opponent=opponent, **env_kwargs)
    if monitor:
        from stable_baselines3.common.monitor import Monitor

        env = Monitor(env)
    return env


class _EnvFn:
    """A picklable env constructor for SB3's vec envs (shows its arguments in a repr)."""

    def __init__(self, rank: int, opponent_factory: Any, env_kwargs: dict[str, Any],
                 monitor: bool) -> None:
        self.args = (rank, opponent_factory, env_kwargs, monitor)

    def __call__(self) -> gymnasium.Env:
        return _make_single_env(*self.args)

    def __repr__(self) -> str:
        rank, factory, kwargs, monitor = self.args
        return f"_EnvFn(rank={rank}, opponent_factory={factory!r}, monitor={monitor}, {kwargs})"


def make_vec_env(n_envs: int = 8, opponent_factory: Any = "random", seed: int | None = None,
                 vec: str = "dummy", monitor: bool = True, start_method: str | None = None,
                 **env_kwargs: Any) -> VecEnv:
    """A Stable-Baselines3 ``VecEnv`` of ``n_envs`` :class:`SingleAgentCribbageEnv`.

    Args:
        n_envs: how many envs.
        opponent_factory: a spec string (``"random"``, ``"expert"``, ...) or list of them for
            every env, or a callable ``factory(rank) -> opponent`` giving env ``rank`` its
            opponent(s) in any form the env accepts (an opponent pool: different bots per env,
            or swap later with ``vec_env.env_method("set_opponent", ...)``). With
            ``vec="subproc"`` it must be picklable (a module-level function).
        seed: env ``i`` is reset with ``seed + i`` first (SB3's ``VecEnv.seed``).
        vec: ``"dummy"`` (one process; fastest for a cheap env like this one) or ``"subproc"``.
        monitor: wrap each env in SB3's ``Monitor`` (episode returns for the logger).
        start_method: for ``"subproc"`` (``"fork"``, ``"forkserver"``, ``"spawn"``).
        env_kwargs: passed to :class:`SingleAgentCribbageEnv` (``reward``, ``num_players``...).

    Works with ``sb3_contrib.MaskablePPO``, which calls each env's ``action_masks()``.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if not isinstance(n_envs, int) or n_envs < 1:
        raise ValueError(f"n_envs must be a positive int, got {n_envs!r}")
    if vec not in ("dummy", "subproc"):
        raise ValueError(f"vec must be 'dummy' or 'subproc', got {vec!r}")
    if not (isinstance(opponent_factory, (str, list, tuple)) or callable(opponent_factory)):
        raise TypeError("opponent_factory must be a spec string, a list of specs or a "
                        f"callable factory(rank) -> opponent; got {opponent_factory!r}")
    fns = [_EnvFn(i, opponent_factory, env_kwargs, monitor) for i in range(n_envs)]
    venv: VecEnv
    if vec == "dummy":
        venv = DummyVecEnv(fns)
    else:
        venv = SubprocVecEnv(fns, start_method=start_method)
    if seed is not None:
        venv.seed(seed)
    return venv

