"""N games of Cribbage stepped together in compiled code (numba): the engine of fast self-play.

:class:`VectorGame` holds N games in arrays and steps all of them with one call. Game ``i``
plays exactly as ``Game(rules, seed=seeds[i])`` of :mod:`cribenv.game` (the same cut, deals and
starters, the same forced Go passes, scores and winner), and :meth:`VectorGame.observe` is
exactly ``observation.encode(game.view(seat))``; ``tests/test_vector.py`` checks both step by
step against ``Game`` (``scripts/vector_differential.py`` runs 10^6 games).

    >>> import numpy as np
    >>> from cribenv.game import Rules
    >>> vg = VectorGame(Rules(num_players=2), seeds=[0, 1, 2])
    >>> rng = np.random.default_rng(0)
    >>> while not vg.done.all():
    ...     rewards = vg.step(vg.random_actions(rng))      # (3, 2): +1 / -1 at the end
    >>> vg.winner.tolist(), vg.scores.tolist()
    ([0, 1, 0], [[124, 105], [96, 122], [121, 81]])

Code compiled on the engine (the search agent's playouts) reads and steps the raw rows through
the documented layout and row functions of :mod:`cribenv.vector_kernels`.

This module and its kernels (alone in ``cribenv``) import numba; the kernels compile once (about
20 s) and are cached on disk (``cache=True``), so later imports take about a second. With
``threads=k`` every call splits the games into ``k`` blocks stepped on ``k`` threads (the
kernels release the GIL); the games do not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cribenv import _vector_kernels as K
from cribenv import cards as C
from cribenv.game import IllegalActionError, Rules
from cribenv.observation import OBS_SIZE
from cribenv.scoring import RANK_POINTS

__all__ = ["HIDDEN_SIZE", "VectorGame", "VectorIllegalActionError", "seed_words"]

HIDDEN_SIZE = K.HIDDEN_SIZE   # entries of VectorGame.hidden

_SEED_MAX = 2**63 - 1   # the AEC env's range for game seeds


_BITS = np.int64(1) << np.arange(52, dtype=np.int64)


def _card_ids(sets: np.ndarray, size: int) -> np.ndarray:
    """The card ids of the card sets ``sets`` (int64 bitsets, any shape) as ``(*shape, size)``,
    ascending; each set must hold exactly ``size`` cards.

    >>> _card_ids(np.array([0b1010, 0b0110]), 2).tolist()
    [[1, 3], [1, 2]]
    """
    held = (sets[..., None] & _BITS) != 0
    ids = np.nonzero(held.reshape(-1, 52))[1]
    return ids.reshape(*sets.shape, size)


def _buffer(out: np.ndarray | None, shape: tuple[int, int], dtype: type,
            method: str) -> np.ndarray:
    """``out`` checked to be a writable C-contiguous array of ``shape`` and ``dtype`` (the
    kernels write it in place: anything else would write out of bounds), or a new one."""
    if out is None:
        return np.empty(shape, dtype)
    want = np.dtype(dtype)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != want \
            or not out.flags.c_contiguous or not out.flags.writeable:
        got = (f"{type(out).__name__}" if not isinstance(out, np.ndarray) else
               f"shape {out.shape} {out.dtype}"
               + ("" if out.flags.c_contiguous else " not C-contiguous")
               + ("" if out.flags.writeable else " read-only"))
        raise ValueError(f"VectorGame.{method}(out=...) needs a writable C-contiguous "
                         f"{want} array of shape {shape}; got {got}")
    return out


class VectorIllegalActionError(IllegalActionError):
    """An action of :meth:`VectorGame.step` is illegal. ``game``, ``seat`` and ``card`` name
    it; no game was stepped."""

    def __init__(self, message: str, game: int, seat: int, card: int) -> None:
        super().__init__(message)
        self.game = game
        self.seat = seat
        self.card = card


def seed_words(seeds: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The key ``random.Random(seed)`` seeds MT19937 with: the 32-bit words of ``abs(seed)``,
    least significant first (at least one word). Returns ``(words (N, W) uint32, lengths (N,))``.

    >>> words, lengths = seed_words([0, 5, -5, 2**32 + 7])
    >>> words.tolist(), lengths.tolist()
    ([[0, 0], [5, 0], [5, 0], [7, 1]], [1, 1, 1, 2])
    """
    if isinstance(seeds, np.ndarray) and seeds.dtype.kind in "iu" and seeds.ndim == 1:
        mag = np.abs(seeds.astype(np.int64)).astype(np.uint64) if seeds.dtype.kind == "i" \
            else seeds.astype(np.uint64)
        words = np.empty((len(mag), 2), np.uint32)
        words[:, 0] = mag & np.uint64(0xFFFFFFFF)
        words[:, 1] = mag >> np.uint64(32)
        lengths = np.where(words[:, 1] > 0, 2, 1).astype(np.int64)
        if seeds.dtype == np.int64 and (seeds == np.iinfo(np.int64).min).any():
            return seed_words([int(s) for s in seeds])
        return words, lengths
    ints = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"seeds must be ints (as Game's seed), got {s!r}")
        ints.append(abs(int(s)))
    width = max([1] + [(s.bit_length() + 31) // 32 for s in ints])
    words = np.zeros((len(ints), width), np.uint32)
    lengths = np.ones(len(ints), np.int64)
    for row, s in enumerate(ints):
        k = 0
        while s:
            words[row, k] = s & 0xFFFFFFFF
            s >>= 32
            k += 1
        lengths[row] = max(k, 1)
    return words, lengths


class VectorGame:
    """N games of Cribbage under one :class:`~cribenv.game.Rules`, stepped together.

    Args:
        rules: the table rules (2, 3 or 4 players, target, skunk lines, exact peg-out).
        seeds: one int per game; game ``i`` is dealt exactly as ``Game(rules, seed=seeds[i])``.
        first_dealer: as ``Game``'s (skip the cut; the same seat deals first in every game).
        max_hands: as ``Game``'s (stop after that many hands, no winner unless one reached the
            target): one-hand episodes (the AEC env's ``episode="hand"``).
        reward: the AEC env's rewards (:attr:`rewards`): ``"win"`` (+1 to the winning side,
            -1 shared by the losers at the end, times the game points with ``skunks``) or
            ``"points"`` (the zero-sum point differential of each step).
        skunks: scale the win reward by the game points (1, 2 or 3).
        shaping: with ``reward="win"``, add ``shaping`` x the point differential each step.
        auto_reset: a game that ends is replaced at once by a new one, seeded from
            ``seed_stream``; the step's :attr:`finished`, :attr:`final_scores`,
            :attr:`final_winner` and :attr:`final_game_points` describe the games that ended.
        seed_stream: seed of the ``numpy`` generator that draws the new games' seeds (in game
            order, ``integers(2**63 - 1)`` each, like the AEC env's ``reset()``).
        threads: step blocks of games on this many threads (1: in the calling thread).

    State (numpy arrays, one row a game; read-only views, refreshed by every call):
    :attr:`to_act` (seat, -1 once over), :attr:`done`, :attr:`scores` ``(N, sides)``,
    :attr:`winner` (side, -1 while playing), :attr:`game_points`, :attr:`phase`,
    :attr:`dealer`, :attr:`hand_number`, :attr:`count`; after a step :attr:`rewards` and
    :attr:`cumulative_rewards` ``(N, num_players)`` float64 (the AEC env's values).

    Built on: :attr:`state`, :attr:`generators` and :attr:`config` are the raw arrays, in the
    layout of :mod:`cribenv.vector_kernels`, whose compiled functions step a row;
    :meth:`from_state` makes games from rows, :meth:`copy_rows` copies them and
    :meth:`map_rows` runs a kernel on blocks of rows on the threads.
    """

    def __init__(self, rules: Rules | None = None, seeds: Sequence[int] | np.ndarray = (0,), *,
                 first_dealer: int | None = None, max_hands: int | None = None,
                 reward: str = "win", skunks: bool = False, shaping: float = 0.0,
                 auto_reset: bool = False, seed_stream: int | None = None,
                 threads: int = 1) -> None:
        self.rules = rules = rules if rules is not None else Rules()
        n = rules.num_players
        if first_dealer is not None and not (isinstance(first_dealer, (int, np.integer))
                                             and 0 <= first_dealer < n):
            raise ValueError(f"first_dealer must be None or a seat 0..{n - 1}, "
                             f"got {first_dealer!r}")
        if max_hands is not None and max_hands < 1:
            raise ValueError(f"max_hands must be None or at least 1, got {max_hands!r}")
        if reward not in ("win", "points"):
            raise ValueError(f"reward must be 'win' or 'points', got {reward!r}")
        if rules.target not in (61, 121):
            raise ValueError(f"the batched engine encodes 61- or 121-point games (the "
                             f"observation's), not target={rules.target}")
        cfg = np.zeros(K.NCFG, np.int64)
        cfg[K.C_PLAYERS] = n
        cfg[K.C_TARGET] = rules.target
        cfg[K.C_SKUNK] = rules.skunk_line
        cfg[K.C_DOUBLE_SKUNK] = rules.double_skunk_line
        cfg[K.C_EXACT] = int(rules.must_peg_out_exactly)
        cfg[K.C_MAX_HANDS] = 0 if max_hands is None else max_hands
        cfg[K.C_HAND_SIZE] = rules.hand_size
        cfg[K.C_NEED] = rules.discards_per_player
        cfg[K.C_SIDES] = rules.num_sides
        cfg[K.C_FIRST_DEALER] = -1 if first_dealer is None else int(first_dealer)
        cfg[K.C_REWARD] = 0 if reward == "win" else 1
        cfg[K.C_SKUNKS] = int(bool(skunks))
        self._cfg = cfg
        self._rank_points = np.asarray(RANK_POINTS)
        self.num_players = n
        self.num_sides = rules.num_sides
        self.reward_mode = reward
        self.shaping = float(shaping)
        self.auto_reset = bool(auto_reset)
        self._seed_rng = np.random.default_rng(seed_stream)
        if not (isinstance(threads, int) and threads >= 1):
            raise ValueError(f"threads must be an int >= 1, got {threads!r}")
        self.threads = threads
        self._pool = ThreadPoolExecutor(threads) if threads > 1 else None
        self.reset(seeds)

    # ---------------------------------------------------------------- (re)starting games
    def reset(self, seeds: Sequence[int] | np.ndarray) -> None:
        """Start a new game in every row (``len(seeds)`` games, game ``i`` from ``seeds[i]``)."""
        num = len(seeds)
        if num < 1:
            raise ValueError("VectorGame needs at least one seed")
        self._allocate(num)
        self.reset_games(np.arange(num), seeds)

    def _allocate(self, num: int) -> None:
        """Arrays for ``num`` games (no game started in them)."""
        self.num_games = num
        self._st = np.zeros((num, K.NCOL), np.int64)
        self._mt = np.zeros((num, 624), np.uint32)
        self.rewards = np.zeros((num, self.num_players), np.float64)
        self.cumulative_rewards = np.zeros((num, self.num_players), np.float64)
        self.finished = np.zeros(num, bool)
        self.final_scores = np.zeros((num, self.num_sides), np.int64)
        self.final_winner = np.full(num, -1, np.int64)
        self.final_game_points = np.zeros(num, np.int64)
        self.games_finished = 0
        step = -(-num // self.threads)
        self._blocks = [(a, min(a + step, num)) for a in range(0, num, step)]

    def map_rows(self, fn: Callable[[int, int], object], num: int | None = None) -> None:
        """``fn(a, b)`` on the blocks of rows ``[a, b)`` (of ``num`` rows, default all the
        games) on the engine's threads (``threads``), one call in the calling thread with
        ``threads=1``: how a kernel built on the engine (:mod:`cribenv.vector_kernels`) runs
        on slices ``[a:b]`` of :attr:`state` and :attr:`generators`."""
        if num == 0:
            return
        if self._pool is None:
            fn(0, self.num_games if num is None else num)
            return
        if num is None:
            blocks = self._blocks
        else:
            step = -(-num // self.threads)
            blocks = [(a, min(a + step, num)) for a in range(0, num, step)]
        for f in [self._pool.submit(fn, a, b) for a, b in blocks]:
            f.result()

    def reset_games(self, rows: Sequence[int] | np.ndarray,
                    seeds: Sequence[int] | np.ndarray) -> None:
        """Start a new game in each row of ``rows``, from the matching seed."""
        rows = np.asarray(rows, np.int64)
        if len(rows) != len(seeds):
            raise ValueError(f"{len(rows)} rows but {len(seeds)} seeds")
        if len(rows) == 0:
            return
        words, lengths = seed_words(seeds)
        mt, st, cfg = self._mt, self._st, self._cfg
        self.map_rows(lambda a, b: K.start_games(mt, st, cfg, rows[a:b], words[a:b],
                                                 lengths[a:b]), len(rows))
        self.rewards[rows] = 0.0
        self.cumulative_rewards[rows] = 0.0

    @classmethod
    def from_state(cls, rules: Rules, state: np.ndarray,
                   seeds: Sequence[int] | np.ndarray | None = None, **kwargs) -> VectorGame:
        """Games from raw rows of the state: game ``i`` starts from a copy of ``state[i]``
        (``(N, NCOL)`` int64, the layout of :mod:`cribenv.vector_kernels`), its generator
        seeded as ``random.Random(seeds[i])`` (the cut, if still to come, and the hands after
        this one), or, with ``seeds=None``, left unseeded (zero words: for reading the
        positions, not for dealing). Other keyword arguments are the constructor's. Nothing
        checks that the rows are positions the rules can reach: code that builds them (the
        search agent's positions of a view, ``agents/search/playouts.py``) proves its rows
        against ``Game``.

        >>> vg = VectorGame(Rules(), seeds=[3, 4])
        >>> twin = VectorGame.from_state(Rules(), vg.state[::-1], seeds=[4, 3])
        >>> twin.hands(0) == vg.hands(0)[::-1], twin.to_act.tolist() == vg.to_act[::-1].tolist()
        (True, True)
        """
        state = np.asarray(state)
        if state.ndim != 2 or state.shape[1] != K.NCOL or len(state) < 1 \
                or state.dtype.kind not in "iu":
            raise ValueError(f"state must be integer rows of {K.NCOL} columns (at least one), "
                             f"got shape {state.shape} {state.dtype}")
        num = len(state)
        if seeds is not None and len(seeds) != num:
            raise ValueError(f"{num} rows of state but {len(seeds)} seeds")
        vg = cls(rules, seeds=[0], **kwargs)
        vg._allocate(num)
        vg._st[:] = state
        if seeds is not None:
            words, lengths = seed_words(seeds)
            K.seed_rows(vg._mt, vg._st, np.arange(num), words, lengths)
        return vg

    def copy_rows(self, rows: np.ndarray) -> VectorGame:
        """A new VectorGame of the games ``rows`` (repeats allowed), state and generators
        copied: paired playouts start the same position in several rows."""
        rows = np.asarray(rows, np.int64)
        new = VectorGame.__new__(VectorGame)
        new.__dict__.update(self.__dict__)
        new._pool = None
        new.threads = 1
        new._st = self._st[rows].copy()
        new._mt = self._mt[rows].copy()
        new.num_games = len(rows)
        new._blocks = [(0, len(rows))]
        for name in ("rewards", "cumulative_rewards", "final_scores"):
            setattr(new, name, getattr(self, name)[rows].copy())
        for name in ("finished", "final_winner", "final_game_points"):
            setattr(new, name, getattr(self, name)[rows].copy())
        return new

    # ---------------------------------------------------------------- state
    @property
    def state(self) -> np.ndarray:
        """``(N, NCOL)`` int64: the games' state, one row a game, in the layout of
        :mod:`cribenv.vector_kernels` (the array itself: kernels built on the engine read and
        step it in place; the named properties below are read-only views of its columns)."""
        return self._st

    @property
    def generators(self) -> np.ndarray:
        """``(N, 624)`` uint32: each game's generator (CPython's MT19937 words; its position
        is the row's ``MTI`` column), the array itself."""
        return self._mt

    @property
    def config(self) -> np.ndarray:
        """``(NCFG,)`` int64: the rules as the kernels read them (the ``C_`` indices of
        :mod:`cribenv.vector_kernels`), the array itself: not to be changed."""
        return self._cfg

    def _column(self, col: int) -> np.ndarray:
        view = self._st[:, col]
        view.flags.writeable = False
        return view

    @property
    def to_act(self) -> np.ndarray:
        """``(N,)`` int64: the seat to act in each game, -1 once it is over."""
        return self._column(K.TO_ACT)

    @property
    def done(self) -> np.ndarray:
        """``(N,)`` bool: the game is over (always False with ``auto_reset``)."""
        return self._st[:, K.TO_ACT] < 0

    @property
    def scores(self) -> np.ndarray:
        """``(N, sides)`` int64: each side's score."""
        view = self._st[:, K.SCORES:K.SCORES + self.num_sides]
        view.flags.writeable = False
        return view

    @property
    def winner(self) -> np.ndarray:
        """``(N,)`` int64: the winning side, -1 while playing (or cut short by ``max_hands``)."""
        return self._column(K.WINNER)

    @property
    def game_points(self) -> np.ndarray:
        """``(N,)`` int64: 1, 2 (skunk) or 3 (double skunk) once won, else 0."""
        return self._column(K.GAME_POINTS)

    @property
    def phase(self) -> np.ndarray:
        """``(N,)`` int64: :class:`~cribenv.game.Phase` values (0 discard, 1 play, 2 over)."""
        return self._column(K.PHASE)

    @property
    def dealer(self) -> np.ndarray:
        return self._column(K.DEALER)

    @property
    def crib_shown(self) -> np.ndarray:
        """``(N,)`` bool: this hand's crib has been counted in the show (a game that ends on a
        hand's count, or in the play, never shows its crib)."""
        return self._column(K.CRIB_SHOWN) == 1

    @property
    def hand_number(self) -> np.ndarray:
        return self._column(K.HAND_NO)

    @property
    def count(self) -> np.ndarray:
        """``(N,)`` int64: the running count of the play."""
        return self._column(K.COUNT)

    def hands(self, seat: int) -> list[list[int]]:
        """The cards ``seat`` holds in each game (sorted card ids; for tests and debugging)."""
        sets = self._st[:, K.HAND + seat]
        return [[c for c in range(52) if (int(s) >> c) & 1] for s in sets]

    def show_cards(self, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The cards of this hand's show, as the table reveals them once the starter is
        turned: ``starter`` ``(n,)``, ``crib`` ``(n, 4)`` and, per seat, ``kept`` ``(n, seats,
        4)`` and ``laid`` ``(n, seats, k)`` (the cards it laid away; k = 2 with 2 players,
        else 1), each sorted by card id; ``rows`` (indices) picks games. Only meaningful
        after the turn (:attr:`phase` 1, or a game that the turn itself ended); the values
        before it are not defined.

        >>> vg = VectorGame(Rules(), [3], first_dealer=0)
        >>> for _ in range(4):
        ...     _ = vg.step(vg.random_actions(np.random.default_rng(0)))
        >>> s = vg.show_cards()
        >>> s["kept"].shape, s["laid"].shape, s["crib"].shape, int(vg.phase[0])
        ((1, 2, 4), (1, 2, 2), (1, 4), 1)
        >>> sorted(s["crib"][0].tolist()) == sorted(s["laid"][0].ravel().tolist())
        True
        """
        st = self._st if rows is None else self._st[np.asarray(rows, np.int64)]
        n, k = self.num_players, 2 if self.num_players == 2 else 1
        return {"starter": st[:, K.STARTER].copy(),
                "crib": _card_ids(st[:, K.CRIB], 4),
                "kept": _card_ids(st[:, K.KEPT:K.KEPT + n], 4),
                "laid": _card_ids(st[:, K.DISC:K.DISC + n], k)}

    # ---------------------------------------------------------------- acting
    def legal_mask(self, out: np.ndarray | None = None,
                   rows: np.ndarray | None = None) -> np.ndarray:
        """``(N, 52)`` bool: the legal cards of the seat to act (all False once over); with
        ``rows`` (indices), ``(len(rows), 52)`` for those games only."""
        st = self._st if rows is None else self._st[np.asarray(rows, np.int64)]
        out = _buffer(out, (len(st), 52), np.bool_, "legal_mask")
        self.map_rows(lambda a, b: K.legal_masks(st[a:b], out[a:b]), len(st))
        return out

    def random_actions(self, rng: np.random.Generator,
                       mask: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal card for every game (0 for finished games), drawn with one
        ``rng.random()`` a game from ``mask`` (by default :meth:`legal_mask`; a mask of some
        games' rows gives their actions only)."""
        if mask is None:
            mask = self.legal_mask()
        out = np.empty(len(mask), np.int64)
        u = rng.random(len(mask))
        self.map_rows(lambda a, b: K.sample_masks(mask[a:b], u[a:b], out[a:b]), len(mask))
        return out

    def step(self, actions: Sequence[int] | np.ndarray,
             rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Every game still playing lays ``actions[i]`` (a discard or a card to play);
        finished games ignore theirs. Returns :attr:`rewards`.

        ``rows`` (game indices) steps only those games (``actions`` still has one entry per
        game; the others are ignored): the other games are left as they are, with zero
        :attr:`rewards` and unchanged :attr:`cumulative_rewards`.

        Raises :class:`VectorIllegalActionError` (naming the game, seat and card; no game is
        stepped) if an action is illegal.
        """
        acts = np.asarray(actions)
        if acts.shape != (self.num_games,):
            raise ValueError(f"expected {self.num_games} actions, got shape {acts.shape}")
        if acts.dtype != np.int64:
            if acts.dtype.kind not in "iu":
                raise ValueError(f"actions must be integer card ids, got dtype {acts.dtype}")
            acts = acts.astype(np.int64)
        if rows is not None:
            return self._step_rows(acts, np.asarray(rows, np.int64))
        st = self._st
        bad = K.first_illegal(st, acts)
        if bad >= 0:
            raise self._illegal(bad, int(acts[bad]))
        playing = st[:, K.TO_ACT] >= 0
        mt, cfg, rank_points, shaping = self._mt, self._cfg, self._rank_points, self.shaping
        rewards, cumulative = self.rewards, self.cumulative_rewards
        self.map_rows(lambda a, b: K.step_games(mt[a:b], st[a:b], cfg, rank_points, acts[a:b],
                                                rewards[a:b], cumulative[a:b], shaping))
        self.finished = playing & (st[:, K.TO_ACT] < 0)
        if self.auto_reset:
            self._replace_finished()
        return self.rewards

    def _step_rows(self, acts: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """:meth:`step` of the games ``rows`` only (stepped on copies of their rows)."""
        if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= self.num_games)) \
                or len(np.unique(rows)) != len(rows):
            raise ValueError(f"rows must be distinct game indices 0..{self.num_games - 1}")
        st, mt, sub_acts = self._st[rows], self._mt[rows], acts[rows]
        bad = K.first_illegal(st, sub_acts)
        if bad >= 0:
            raise self._illegal(int(rows[bad]), int(sub_acts[bad]))
        playing = st[:, K.TO_ACT] >= 0
        rewards = np.zeros((len(rows), self.num_players), np.float64)
        cumulative = self.cumulative_rewards[rows]
        cfg, rank_points, shaping = self._cfg, self._rank_points, self.shaping
        self.map_rows(lambda a, b: K.step_games(mt[a:b], st[a:b], cfg, rank_points,
                                                sub_acts[a:b], rewards[a:b], cumulative[a:b],
                                                shaping), len(rows))
        self._st[rows], self._mt[rows] = st, mt
        self.rewards[:] = 0.0
        self.rewards[rows] = rewards
        self.cumulative_rewards[rows] = cumulative
        self.finished = np.zeros(self.num_games, bool)
        self.finished[rows] = playing & (st[:, K.TO_ACT] < 0)
        if self.auto_reset:
            self._replace_finished()
        return self.rewards

    def _illegal(self, i: int, card: int) -> VectorIllegalActionError:
        seat = int(self._st[i, K.TO_ACT])
        legal = np.flatnonzero(self.legal_mask()[i]).tolist()
        what = C.to_str(card) if 0 <= card < 52 else repr(card)
        return VectorIllegalActionError(
            f"game {i}: seat {seat} cannot lay {what} (legal: {C.to_str_many(legal)})",
            i, seat, card)

    def _replace_finished(self) -> None:
        st = self._st
        if not self.finished.any():
            return
        rows = np.flatnonzero(self.finished)
        self.final_scores[rows] = st[rows, K.SCORES:K.SCORES + self.num_sides]
        self.final_winner[rows] = st[rows, K.WINNER]
        self.final_game_points[rows] = st[rows, K.GAME_POINTS]
        self.games_finished += len(rows)
        seeds = self._seed_rng.integers(_SEED_MAX, size=len(rows))
        rewards = self.rewards[rows]
        self.reset_games(rows, seeds)
        self.rewards[rows] = rewards   # the ended games' last rewards stay readable

    # ---------------------------------------------------------------- observations
    def _observers(self, st: np.ndarray, seats: np.ndarray | None) -> np.ndarray:
        """``seats`` checked (one seat per row of ``st``), or by default the seat to act in
        each game (seat 0 in a finished one)."""
        if seats is None:
            return np.maximum(st[:, K.TO_ACT], 0)
        seats = np.asarray(seats, np.int64)
        if seats.shape != (len(st),) or seats.min() < 0 or seats.max() >= self.num_players:
            raise ValueError(f"seats must be {len(st)} seats 0..{self.num_players - 1}")
        return seats

    def observe(self, seats: np.ndarray | None = None,
                out: np.ndarray | None = None,
                rows: np.ndarray | None = None) -> np.ndarray:
        """``(N, OBS_SIZE)`` float32: ``observation.encode(game.view(seat))`` of each game.

        ``seats`` (``(N,)``) picks the observer of each game; by default the seat to act,
        and seat 0 in a finished game (its view of the final position). With ``rows``
        (indices), only those games: ``(len(rows), OBS_SIZE)``, ``seats`` one per row.
        """
        st = self._st if rows is None else self._st[np.asarray(rows, np.int64)]
        num = len(st)
        seats = self._observers(st, seats)
        out = _buffer(out, (num, OBS_SIZE), np.float32, "observe")
        cfg = self._cfg
        self.map_rows(lambda a, b: K.encode_rows(st[a:b], cfg, seats[a:b], out[a:b]), num)
        return out

    def hidden(self, seats: np.ndarray | None = None, out: np.ndarray | None = None,
               rows: np.ndarray | None = None) -> np.ndarray:
        """``(N, HIDDEN_SIZE)`` float32: what the observer of each game cannot see, for a
        critic that trains with it (an asymmetric actor-critic; the policy never reads it).

        Blocks of 52 one-hot entries: the cards held now by each other seat, in seat order
        after the observer (three blocks; those past ``num_players - 1`` are zero), then the
        crib so far (all its cards), then the starter: the turned one, or during the discard
        the card the cut will turn (the next draw of the game's generator, computed on a copy
        of it; the game itself is not changed). Then five numbers, the show to come: the
        points / 29 of each seat's four kept cards with that starter (the observer first, then
        in seat order; 0 until the seat has laid away its cards) and of the crib (0 until it
        is complete). ``seats`` and ``rows`` as in :meth:`observe`.

        >>> vg = VectorGame(Rules(), [7])
        >>> h = vg.hidden()
        >>> h.shape, int(h[0, :52].sum()), int(h[0, 52:156].sum()), int(h[0, 208:260].sum())
        ((1, 265), 6, 0, 1)
        """
        sel = slice(None) if rows is None else np.asarray(rows, np.int64)
        st, mt = self._st[sel], self._mt[sel]
        num = len(st)
        seats = self._observers(st, seats)
        out = _buffer(out, (num, HIDDEN_SIZE), np.float32, "hidden")
        cfg = self._cfg
        rp = self._rank_points
        self.map_rows(lambda a, b: K.hidden_rows(mt[a:b], st[a:b], cfg, rp, seats[a:b],
                                                 out[a:b]), num)
        return out

    def close(self) -> None:
        """Stop the worker threads (``threads > 1``); the state stays readable."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __repr__(self) -> str:
        return (f"VectorGame(players={self.num_players}, target={self.rules.target}, "
                f"games={self.num_games}, done={int(self.done.sum())})")
