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

__all__ = ["CribbageVectorEnv", "Opponent", "random_opponent"]

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

    ``reset(seed=S)`` makes everything that follows reproducible: the games' seeds, the
    learner seats and the default opponent's choices.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, num_players: int = 2, target: int = 121, *,
                 reward: str = "win", skunks: bool = False, shaping: float = 0.0,
                 learner_seat: int | None = None, opponent: Opponent | None = None,
                 rules: Rules | None = None, threads: int = 1) -> None:
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

    # ---------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start N new games and play the opponents up to each game's first learner decision.

        ``seed`` (an int) seeds the generator of the games' seeds and learner seats, and the
        default opponent's (a separate stream of the same seed)."""
        if seed is not None or self._rng is None:
            root = np.random.SeedSequence(seed)
            games, opp = root.spawn(2)
            self._rng = np.random.default_rng(games)
            self._np_random_seed = seed
            if self._user_opponent is None:
                self.opponent = random_opponent(np.random.default_rng(opp))
        rows = np.arange(self.num_envs)
        self._new_games(rows)
        return self._observe(), self._info()

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
        vg.step(acts)
        self._play_opponents()
        seat = self.learner_seat
        rows = np.arange(self.num_envs)
        reward = vg.cumulative_rewards[rows, seat].astype(np.float32)
        terminated = vg.done.copy()
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
            final = {"final_obs": final_obs, "_final_obs": terminated.copy(),
                     "final_info": {"scores": scores, "winner": winner, "won": won,
                                    "game_points": points, "learner_seat": seat.copy(),
                                    "_scores": terminated.copy(), "_winner": terminated.copy(),
                                    "_won": terminated.copy(),
                                    "_game_points": terminated.copy(),
                                    "_learner_seat": terminated.copy()},
                     "_final_info": terminated.copy()}
            self._new_games(ended)
        obs, info = self._observe(), self._info()
        if final is not None:
            info.update(final)
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """``(N, 52)`` bool: the learner's legal cards in each game (never all False)."""
        return self._mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        self.game.close()

    # ---------------------------------------------------------------- the engine's side
    def _new_games(self, rows: np.ndarray) -> None:
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
        self._play_opponents()

    def _play_opponents(self) -> None:
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

    def _observe(self) -> np.ndarray:
        vg = self.game
        self._mask = vg.legal_mask()
        return vg.observe(seats=self.learner_seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "_action_mask": np.ones(self.num_envs, bool),
                "learner_seat": self.learner_seat.copy(),
                "_learner_seat": np.ones(self.num_envs, bool)}
