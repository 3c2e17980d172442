"""A Gymnasium ``VectorEnv`` on the batched engine: a learner plays one seat of N games against
opponents, the opponents' turns played inside :meth:`CribbageVectorEnv.step`.

Each observation row is the learner's view (``observation.encode``, ``(601,)`` float32) at one
of its decisions; an action is a card id (``Discrete(52)``); the legal cards are
``info["action_mask"]`` and :meth:`~CribbageVectorEnv.action_masks` (``(N, 52)`` bool, for
MaskablePPO-style learners). A reward is everything the learner's seat earned since its previous
decision (the AEC env's ``_cumulative_rewards``), so with ``reward="points"`` a game's rewards
add up to the learner's side's final score difference.

Autoreset is Gymnasium's **same-step** mode (``metadata["autoreset_mode"]``): when a game ends
in a step, that step returns ``terminated[i] = True``, the reward of the end, and already the
first learner decision of a fresh game in ``obs[i]`` and ``info["action_mask"][i]`` (so a
returned mask is never all False); the final position (the learner's view) is
``info["final_obs"][i]`` and the game's result ``info["final_info"]`` (``scores``, ``winner``,
``won``, ``game_points``, ``learner_seat``), valid where ``info["_final_obs"]`` is True.

    >>> env = CribbageVectorEnv(num_envs=4, num_players=2, reward="points")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, info["action_mask"].shape, bool(info["action_mask"].any(axis=1).all())
    ((4, 601), (4, 52), True)
    >>> rng = np.random.default_rng(0)
    >>> finished = 0
    >>> while finished < 4:
    ...     acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
    ...     obs, reward, terminated, truncated, info = env.step(acts)
    ...     finished += int(terminated.sum())
    >>> env.close()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from cribenv.game import Rules, seat_side
from cribenv.observation import OBS_SIZE
from cribenv.vector import VectorGame

__all__ = ["CribbageVectorEnv", "Opponent", "make_vector_env", "per_row_opponent",
           "random_opponent"]

_SEED_MAX = 2**63 - 1   # the AEC env's range for game seeds

Opponent = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``opponent(obs (k, 601) float32, mask (k, 52) bool) -> (k,) int`` legal card ids."""


def random_opponent(rng: np.random.Generator) -> Opponent:
    """An opponent that lays a uniformly random legal card, drawn with ``rng``.

    >>> pick = random_opponent(np.random.default_rng(0))
    >>> mask = np.zeros((2, 52), bool); mask[0, [3, 7]] = True; mask[1, 50] = True
    >>> int(pick(np.zeros((2, 601), np.float32), mask)[1])
    50
    """
    def pick(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        counts = mask.sum(axis=1)
        nth = (rng.random(len(mask)) * counts).astype(np.int64)
        # the nth True of each row: the first column where the running count passes nth
        return np.argmax(np.cumsum(mask, axis=1) > nth[:, None], axis=1)
    return pick


def per_row_opponent(agent: Any) -> Opponent:
    """A batched opponent from a one-decision opponent, asked row by row: an object with
    ``act(observation_dict) -> card`` or a callable ``f(observation_dict) -> card`` (what
    :class:`cribenv.wrappers.SingleAgentCribbageEnv` takes). One agent answers every row, so it
    must keep no state between its decisions (the project's bots keep none).

    >>> pick = per_row_opponent(lambda obs: int(np.flatnonzero(obs["action_mask"])[-1]))
    >>> mask = np.zeros((2, 52), bool); mask[0, [3, 7]] = True; mask[1, 50] = True
    >>> pick(np.zeros((2, 601), np.float32), mask).tolist()
    [7, 50]
    """
    act = agent.act if callable(getattr(agent, "act", None)) else agent
    if not callable(act):
        raise ValueError(f"an opponent must be a spec string, an agent with act() or a "
                         f"callable, got {agent!r}")

    def pick(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        masks = mask.astype(np.int8)
        return np.array([int(act({"observation": obs[i], "action_mask": masks[i]}))
                         for i in range(len(obs))], np.int64)
    return pick


class CribbageVectorEnv(VectorEnv):
    """N games of Cribbage, a learner in one seat of each, the other seats played by
    ``opponent``.

    Args:
        num_envs: the number of games N.
        num_players: 2, 3 or 4 (with 4, the learner's partner is played by ``opponent`` too).
        target: 121 or 61.
        reward: ``"win"`` (+1 / -1 shared by the losers at the end, times the game points with
            ``skunks``) or ``"points"`` (the point differential), as the AEC env.
        skunks: as the AEC env's.
        shaping: as the AEC env's.
        learner_seat: the learner's seat in every game, or ``None`` (default): a random seat
            per game, drawn anew for each game.
        opponent: a batched policy ``opponent(obs, mask) -> actions`` (see :data:`Opponent`),
            called with the rows of the games where an opponent is to act, each row that
            opponent's own view and legal cards. Default: :func:`random_opponent` on a
            generator seeded by :meth:`reset`'s ``seed``.
        rules: a full :class:`~cribenv.game.Rules` (overrides ``num_players`` and ``target``).
        threads: the engine's threads (:class:`~cribenv.vector.VectorGame`).
        seed: the seed of the first :meth:`reset` called without one.
        illegal_action: ``"raise"`` (default): an illegal card raises, naming it;
            ``"penalty"``: that game ends there (``terminated``, reward ``illegal_reward``,
            ``info["illegal_action"]`` True in its row) and a new one starts, for learners that
            cannot mask (SB3's plain ``PPO``).
        illegal_reward: the reward of an illegal card with ``illegal_action="penalty"``.

    ``reset(seed=S)`` makes everything that follows reproducible: the games' seeds, the
    learner seats and the default opponent's choices.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, num_players: int = 2, target: int = 121, *,
                 reward: str = "win", skunks: bool = False, shaping: float = 0.0,
                 learner_seat: int | None = None, opponent: Opponent | None = None,
                 rules: Rules | None = None, threads: int = 1, seed: int | None = None,
                 illegal_action: str = "raise", illegal_reward: float = -1.0) -> None:
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty', got "
                             f"{illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        rules = rules if rules is not None else Rules(num_players=num_players, target=target)
        n = rules.num_players
        if learner_seat is not None and not (isinstance(learner_seat, (int, np.integer))
                                             and 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat 0..{n - 1}, "
                             f"got {learner_seat!r}")
        if not (isinstance(num_envs, (int, np.integer)) and num_envs >= 1):
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.rules = rules
        self.num_players = n
        self.fixed_seat = learner_seat
        self._user_opponent = opponent
        self.single_observation_space = spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32)
        self.single_action_space = spaces.Discrete(52)
        self.observation_space = spaces.Box(0.0, 2.0, (self.num_envs, OBS_SIZE), np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, 52))
        self.game = VectorGame(rules, seeds=[0] * self.num_envs, reward=reward,
                               skunks=skunks, shaping=shaping, threads=threads)
        self.learner_seat = np.zeros(self.num_envs, np.int64)
        self.game_seeds = np.zeros(self.num_envs, np.int64)   # Game(rules, seed) of each row
        self._mask = np.zeros((self.num_envs, 52), bool)
        self._rng: np.random.Generator | None = None
        self.opponent: Opponent = opponent if opponent is not None else \
            random_opponent(np.random.default_rng())
        self._first_seed = seed

    # ---------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start N new games and play the opponents up to each game's first learner decision.

        ``seed`` (an int) seeds the generator of the games' seeds and learner seats, and the
        default opponent's (a separate stream of the same seed)."""
        if seed is None and self._rng is None:
            seed = self._first_seed
        if seed is not None or self._rng is None:
            root = np.random.SeedSequence(seed)
            games, opp = root.spawn(2)
            self._rng = np.random.default_rng(games)
            self._np_random_seed = seed
            if self._user_opponent is None:
                self.opponent = random_opponent(np.random.default_rng(opp))
        rows = np.arange(self.num_envs)
        self.new_games(rows)
        return self.observe_learners(), self._info()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray, dict[str, Any]]:
        """Every game lays the learner's card ``actions[i]``, then the opponents play until
        the learner is to act again or the game ends (and a new one starts, same-step)."""
        if self._rng is None:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, got shape {acts.shape}")
        vg = self.game
        illegal = None
        if self.illegal_action == "penalty":
            ok = (acts >= 0) & (acts < 52)
            ok[ok] = self._mask[np.flatnonzero(ok), acts[ok]]
            if not ok.all():
                illegal = ~ok
        if illegal is None:
            vg.step(acts)
        else:
            vg.step(acts, rows=np.flatnonzero(~illegal))
        self.play_opponents()
        seat = self.learner_seat
        rows = np.arange(self.num_envs)
        reward = vg.cumulative_rewards[rows, seat].astype(np.float32)
        terminated = vg.done.copy()
        if illegal is not None:
            reward[illegal] = self.illegal_reward
            terminated |= illegal
        truncated = np.zeros(self.num_envs, bool)
        final = None
        if terminated.any():
            ended = np.flatnonzero(terminated)
            final_obs = np.zeros((self.num_envs, OBS_SIZE), np.float32)
            final_obs[ended] = vg.observe(seats=seat[ended], rows=ended)
            sides = np.array([seat_side(int(s), self.num_players) for s in seat[ended]])
            winner = np.full(self.num_envs, -1, np.int64)
            winner[ended] = vg.winner[ended]
            scores = np.zeros_like(vg.scores)
            scores[ended] = vg.scores[ended]
            points = np.zeros(self.num_envs, np.int64)
            points[ended] = vg.game_points[ended]
            won = np.zeros(self.num_envs, bool)
            won[ended] = winner[ended] == sides
            if illegal is not None:   # ended by the learner's illegal card: nobody won
                winner[illegal], won[illegal], points[illegal] = -1, False, 0
            final = {"final_obs": final_obs, "_final_obs": terminated.copy(),
                     "final_info": {"scores": scores, "winner": winner, "won": won,
                                    "game_points": points, "learner_seat": seat.copy(),
                                    "_scores": terminated.copy(), "_winner": terminated.copy(),
                                    "_won": terminated.copy(),
                                    "_game_points": terminated.copy(),
                                    "_learner_seat": terminated.copy()},
                     "_final_info": terminated.copy()}
            self.new_games(ended)
        obs, info = self.observe_learners(), self._info()
        if final is not None:
            info.update(final)
        if illegal is not None:
            info["illegal_action"], info["_illegal_action"] = illegal, illegal.copy()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """``(N, 52)`` bool: the learner's legal cards in each game (never all False)."""
        return self._mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        self.game.close()

    # ---------------------------------------------------------------- the engine's side
    # Public for the adapters that step the engine themselves with another autoreset
    # (cribenv.integrations: RLlib's next-step, TorchRL's and Tianshou's reset-by-row).
    def new_games(self, rows: np.ndarray) -> None:
        """New games in ``rows`` (seeds and learner seats from the env's generator), played
        up to the learner's first decision."""
        rng = self._rng
        seeds = rng.integers(_SEED_MAX, size=len(rows))
        if self.fixed_seat is None:
            self.learner_seat[rows] = rng.integers(self.num_players, size=len(rows))
        else:
            self.learner_seat[rows] = self.fixed_seat
        self.game_seeds[rows] = seeds
        self.game.reset_games(rows, seeds)
        self.play_opponents()

    def play_opponents(self) -> None:
        """Step every game whose seat to act is an opponent's until none is (the learner is to
        act, or the game is over)."""
        vg = self.game
        actions = np.zeros(self.num_envs, np.int64)
        while True:
            to_act = vg.to_act
            rows = np.flatnonzero((to_act >= 0) & (to_act != self.learner_seat))
            if len(rows) == 0:
                return
            mask = vg.legal_mask(rows=rows)
            picks = np.asarray(self.opponent(vg.observe(rows=rows), mask))
            if picks.shape != (len(rows),):
                raise ValueError(f"the opponent returned shape {picks.shape} for "
                                 f"{len(rows)} games")
            actions[rows] = picks
            vg.step(actions, rows=rows)

    def observe_learners(self) -> np.ndarray:
        """``(N, 601)``: each game's learner's view; the learner's legal cards are kept for
        :meth:`action_masks`."""
        vg = self.game
        self._mask = vg.legal_mask()
        return vg.observe(seats=self.learner_seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "_action_mask": np.ones(self.num_envs, bool),
                "learner_seat": self.learner_seat.copy(),
                "_learner_seat": np.ones(self.num_envs, bool)}


def make_vector_env(num_envs: int = 1, opponent: Any = "random", num_players: int = 2,
                    target: int = 121, reward: str = "win", shaping: float = 0.0,
                    learner_seat: int | None = None, skunks: bool = False,
                    episode: str = "game", seed: int | None = None,
                    illegal_action: str = "raise", illegal_reward: float = -1.0,
                    render_mode: str | None = None, threads: int = 1,
                    **rules: Any) -> CribbageVectorEnv:
    """``gymnasium.make_vec("cribenv/SingleAgentCribbage-v0", num_envs=N)``: the batched
    engine's :class:`CribbageVectorEnv`, built from the single env's keyword arguments
    (:class:`cribenv.wrappers.SingleAgentCribbageEnv`).

    ``opponent``: ``"random"`` is played batched; another spec (``"greedy"``, ``"expert"``,
    ``"ppo:PATH"``, resolved by :mod:`cribenv.opponents`), an agent or a callable is asked row
    by row (:func:`per_row_opponent`); one opponent plays every other seat. Whole games only
    (``episode="game"``) and no rendering: the per-env route (``vectorization_mode="sync"``)
    has those.

    >>> import gymnasium, cribenv
    >>> envs = gymnasium.make_vec(cribenv.GYM_ENV_ID, num_envs=8, opponent="greedy", seed=0)
    >>> obs, info = envs.reset()
    >>> obs.shape, envs.metadata["autoreset_mode"].name
    ((8, 601), 'SAME_STEP')
    >>> envs.close()
    """
    from cribenv import opponents

    if episode != "game":
        raise ValueError(f"the batched env plays whole games, got episode={episode!r}; "
                         "use vectorization_mode='sync' for episode='hand'")
    if render_mode is not None:
        raise ValueError(f"the batched env does not render, got render_mode={render_mode!r}; "
                         "use vectorization_mode='sync'")
    if isinstance(opponent, (list, tuple)):
        raise ValueError("the batched env takes one opponent for every other seat, got a "
                         f"list of {len(opponent)}; use vectorization_mode='sync' for one a seat")
    if isinstance(opponent, str):
        batched = None if opponent == "random" else per_row_opponent(
            opponents.make(opponent, seed=seed))
    else:
        batched = per_row_opponent(opponent)
    game_rules = Rules(num_players=num_players, target=target, **rules)
    return CribbageVectorEnv(num_envs, reward=reward, skunks=skunks, shaping=shaping,
                             learner_seat=learner_seat, opponent=batched, rules=game_rules,
                             threads=threads, seed=seed, illegal_action=illegal_action,
                             illegal_reward=illegal_reward)
