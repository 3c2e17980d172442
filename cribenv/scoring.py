"""Show and pegging scoring: the one home of the scoring rules.

* Kernels (:func:`show_points`, :func:`peg_points_last`, :func:`rank_key`): plain functions over
  ints and int sequences that the engine calls and that numba compiles unchanged for the
  batched engine (see ``tests/test_kernels.py``).
* Tables built once at import (~0.06 s, in numpy): :data:`RANK_POINTS`,
  fifteens + pairs + runs for every ordered 5-tuple of ranks, a flat ``uint8`` array indexed by
  ``rank_key(r0, r1, r2, r3, r4) = ((((r0*13+r1)*13+r2)*13+r3)*13+r4`` (these three depend on
  ranks only; flush and nobs are a few integer ops on the suits); :data:`HAND4_POINTS` and
  :data:`TWO_POINTS`, the same for 4 and 2 ranks alone (the greedy bot's discard).
* :func:`score_hand_ids` / :func:`peg_points_ids` skip validation for trusted callers
  (the engine, bots); :func:`score_hand` / :func:`peg_points` accept ids or strings and
  raise ``ValueError`` on bad input; :func:`score_hands` scores many hands at once with numpy.
* The bots' pegging fast paths on ranks, :func:`peg_add` and :func:`peg_all` (cached), call the
  pegging kernel; :data:`PEG_COUNT_POINTS` and :data:`PEG_PAIR_POINTS` tabulate its parts.

Cards are ints ``rank * 4 + suit`` (see :mod:`cribenv.cards`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from cribenv.cards import (
    CARD_VALUES,
    JACK,
    RANK_VALUES,
    Card,
    parse,
    parse_many,
    to_str,
    to_str_many,
)

__all__ = [
    "HAND4_POINTS",
    "PEG_COUNT_POINTS",
    "PEG_PAIR_POINTS",
    "RANK_POINTS",
    "RANK_POINTS_BYTES",
    "TWO_POINTS",
    "Breakdown",
    "PegBreakdown",
    "all_four_card_hands",
    "peg_add",
    "peg_all",
    "peg_breakdown",
    "peg_count",
    "peg_points",
    "peg_points_ids",
    "peg_points_last",
    "rank_key",
    "score4",
    "score_hand",
    "score_hand_breakdown",
    "score_hand_ids",
    "score_hands",
    "show_combinations",
    "show_score_counts",
    "show_points",
    "throw_points",
]

_JACK_BASE = JACK * 4  # card id of the Jack of clubs; + suit gives the Jack of that suit
T = TypeVar("T")


def rank_key(r0: int, r1: int, r2: int, r3: int, r4: int) -> int:
    """Index into :data:`RANK_POINTS` for five rank indices 0..12 (order matters; a kernel)."""
    return (((r0 * 13 + r1) * 13 + r2) * 13 + r3) * 13 + r4


# --------------------------------------------------------------------------------------
# The show's combinations, and the rank tables built from them
# --------------------------------------------------------------------------------------


def show_combinations(items: Sequence[T], ranks: Sequence[int]) -> tuple[
        tuple[tuple[T, ...], ...], tuple[tuple[T, T], ...], tuple[tuple[T, ...], ...]]:
    """``(fifteens, pairs, runs)`` of the show among ``items`` with rank indices ``ranks``:
    every combination of 2 or more items whose counting values total 15, every pair of items
    of one rank, and every run (one item of each rank of the stretch of 3 or more consecutive
    ranks present, 5 items hold at most one; a double run is two runs). Items keep their order.

    >>> show_combinations("abcd", [1, 1, 2, 3])  # 2 2 3 4: a double run, a pair, no fifteen
    ((), (('a', 'b'),), (('a', 'c', 'd'), ('b', 'c', 'd')))
    """
    n = len(items)
    sums = [0]  # the total value of each subset of the items, indexed by its bit mask
    for r in ranks:
        v = RANK_VALUES[r]
        sums += [total + v for total in sums]
    fifteens = tuple(tuple(items[i] for i in combo) for mask, combo in _subsets(n)
                     if sums[mask] == 15)  # one card is worth 10 at most: 2 or more items
    pairs = tuple((items[i], items[j]) for i, j in itertools.combinations(range(n), 2)
                  if ranks[i] == ranks[j])
    by_rank: dict[int, list[T]] = {}
    for item, r in zip(items, ranks):
        by_rank.setdefault(r, []).append(item)
    runs: tuple[tuple[T, ...], ...] = ()
    for start in by_rank:
        if start - 1 in by_rank:
            continue  # not the bottom of a stretch
        stop = start
        while stop + 1 in by_rank:
            stop += 1
        if stop - start >= 2:
            runs = tuple(itertools.product(*(by_rank[r] for r in range(start, stop + 1))))
    return fifteens, pairs, runs


@functools.cache
def _subsets(n: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """(bit mask, positions) of every combination of 2..n of n items, smaller ones first."""
    return tuple((sum(1 << i for i in c), c)
                 for size in range(2, n + 1) for c in itertools.combinations(range(n), size))


def _rank_table(k: int) -> np.ndarray:
    """Fifteens + pairs + runs of every ordered ``k``-tuple of ranks (uint8, flat, indexed like
    :func:`rank_key`): each sorted multiset is scored once by :func:`_multiset_points`."""
    multisets = np.array(list(itertools.combinations_with_replacement(range(13), k)),
                         dtype=np.int16)
    by_sorted_key = np.zeros(13**k, dtype=np.uint8)
    by_sorted_key[_keys(multisets)] = _multiset_points(multisets)
    ordered = np.indices((13,) * k, dtype=np.int16).reshape(k, -1).T  # key order
    return by_sorted_key[_keys(np.sort(ordered, axis=1))]


def _multiset_points(ranks: np.ndarray) -> np.ndarray:
    """Fifteens + pairs + runs of each row of ``ranks`` (n x k, k <= 5), in numpy: the counts
    :func:`show_combinations` lists, for thousands of rows at once (``tests/test_scoring.py``
    checks every table against it)."""
    n, k = ranks.shape
    values = np.asarray(RANK_VALUES, dtype=np.int16)[ranks]
    subsets = np.array([[mask >> i & 1 for i in range(k)] for mask, _ in _subsets(k)],
                       dtype=np.int16).T
    points = 2 * np.count_nonzero(values @ subsets == 15, axis=1)
    counts = np.zeros((n, 15), dtype=np.int16)  # per rank, with an empty rank either side
    rows = np.arange(n)
    for i in range(k):
        counts[rows, ranks[:, i] + 1] += 1
    points += (counts * (counts - 1)).sum(axis=1)  # c cards of a rank: c(c-1)/2 pairs of 2
    present = counts > 0
    for length in range(3, k + 1):  # a stretch of `length` ranks with none either side
        for start in range(1, 15 - length):
            run = (present[:, start:start + length].all(axis=1)
                   & ~present[:, start - 1] & ~present[:, start + length])
            points += np.where(run, length * counts[:, start:start + length].prod(axis=1), 0)
    return points


def _keys(ranks: np.ndarray) -> np.ndarray:
    """The flat key (base 13, first rank most significant) of each row of a rank array."""
    key = np.zeros(ranks.shape[0], dtype=np.int32)
    for i in range(ranks.shape[1]):
        key = key * 13 + ranks[:, i].astype(np.int32)
    return key


RANK_POINTS: np.ndarray = _rank_table(5)
"""uint8[13**5]: fifteens + pairs + runs points keyed by :func:`rank_key` (flush/nobs excluded)."""
RANK_POINTS.setflags(write=False)
RANK_POINTS_BYTES: bytes = RANK_POINTS.tobytes()
""":data:`RANK_POINTS` as ``bytes``: the kernels' table from Python (indexing gives an int)."""
HAND4_POINTS: bytes = _rank_table(4).tobytes()
"""Fifteens + pairs + runs of 4 ranks alone (no starter), keyed ``((r0*13+r1)*13+r2)*13+r3``."""
TWO_POINTS: bytes = _rank_table(2).tobytes()
"""Points of 2 ranks alone (a pair 2, a fifteen 2), indexed by ``r0 * 13 + r1``."""


# --------------------------------------------------------------------------------------
# Kernels: plain functions over ints and int sequences, the one home of the scoring rules on
# the hot paths. They use no Python objects beyond indexing, so ``numba.njit`` compiles them
# unchanged (the batched engine, ``cribenv.vector``) while the engine calls them as they are.
# Tables are arguments: ``bytes`` from Python, a ``uint8`` array from numba (tests/test_kernels.py).
# --------------------------------------------------------------------------------------


def show_points(c0: int, c1: int, c2: int, c3: int, starter: int, is_crib: bool,
                rank_points: bytes | np.ndarray) -> int:
    """Show score of the hand (or crib) ``c0..c3`` with ``starter`` (card ids, trusted).

    ``rank_points`` is :data:`RANK_POINTS` (as :data:`RANK_POINTS_BYTES` from Python): fifteens,
    pairs and runs by ranks; the flush and nobs are added here.

    >>> show_points(16, 17, 18, 43, 19, False, RANK_POINTS_BYTES)  # 5C 5D 5H JS + 5S: 29
    29
    """
    pts = rank_points[((((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)) * 13
                      + (starter >> 2)]
    su = c0 & 3
    if (c1 & 3) == su and (c2 & 3) == su and (c3 & 3) == su:
        if (starter & 3) == su:
            pts += 5
        elif not is_crib:
            pts += 4
    jack = _JACK_BASE + (starter & 3)  # the Jack of the starter's suit: nobs
    if jack == c0 or jack == c1 or jack == c2 or jack == c3:
        pts += 1
    return pts


def peg_points_last(series: Sequence[int], n: int, count: int) -> int:
    """Pegging points of the last card of ``series[:n]`` (card ids laid since the count last
    reset), the running ``count`` including it: fifteen or 31 2, pairs 2/6/12, the longest run
    of the last k >= 3 cards. Go and last-card points are not included. Trusted input.

    Only the ranks (``card >> 2``) matter, so rank ``r`` may be passed as ``r << 2``.

    >>> peg_points_last([12, 20, 16], 3, 15)  # 4C 6C 5C: fifteen 2 + run of 3
    5
    """
    pts = 2 if count == 15 or count == 31 else 0
    r = series[n - 1] >> 2
    i = n - 2
    while i >= 0 and (series[i] >> 2) == r:
        i -= 1
    same = n - 1 - i  # cards of the last card's rank ending the series
    if same > 1:
        return pts + same * (same - 1)  # a pair at the end rules out any run
    run = 0
    seen = 1 << r
    lo = r
    hi = r
    i = n - 2
    while i >= 0:
        q = series[i] >> 2
        bit = 1 << q
        if seen & bit:
            break  # every longer tail holds this duplicate too
        seen |= bit
        if q < lo:
            lo = q
        elif q > hi:
            hi = q
        if hi - lo >= n:
            break  # wider than the whole series: no longer tail is a run either
        if n - i >= 3 and hi - lo == n - i - 1:
            run = n - i
        i -= 1
    return pts + run


# --------------------------------------------------------------------------------------
# The show: single hands
# --------------------------------------------------------------------------------------


def score_hand_ids(hand_ids: Sequence[int], starter_id: int, is_crib: bool = False) -> int:
    """Show score of 4 card ids + starter id. **No validation**: for trusted callers only."""
    c0, c1, c2, c3 = hand_ids
    return show_points(c0, c1, c2, c3, starter_id, is_crib, RANK_POINTS_BYTES)


def _card(x: object) -> Card:
    """Parse one card, also accepting numpy integers."""
    if isinstance(x, np.integer):
        x = int(x)
    return parse(x)  # type: ignore[arg-type]


def _hand_and_starter(
    hand: str | Iterable[str | int], starter: str | int
) -> tuple[list[Card], Card]:
    """Validate and parse a 4-card hand and a starter; raise ValueError naming the problem."""
    if isinstance(hand, str):
        ids = parse_many(hand)
    else:
        ids = [_card(c) for c in hand]
    if len(ids) != 4:
        raise ValueError(f"a hand must have 4 cards, got {len(ids)}: {to_str_many(ids)!r}")
    for i, c in enumerate(ids):
        if c in ids[:i]:
            raise ValueError(f"duplicate card {to_str(c)} in hand {to_str_many(ids)!r}")
    s = _card(starter)
    if s in ids:
        raise ValueError(f"starter {to_str(s)} is also in the hand {to_str_many(ids)!r}")
    return ids, s


def score_hand(hand: str | Iterable[str | int], starter: str | int, is_crib: bool = False) -> int:
    """Show score of a 4-card hand (or crib, ``is_crib=True``) plus the starter.

    ``hand`` is 4 distinct cards (ids, strings like ``"5H"``, or one string ``"5H 5S JD 4C"``);
    ``starter`` is one card not in the hand. Raises ``ValueError`` on bad input.
    """
    if type(hand) in (list, tuple) and len(hand) == 4 and type(starter) is int:  # fast path
        c0, c1, c2, c3 = hand  # type: ignore[misc]
        if (
            type(c0) is int
            and type(c1) is int
            and type(c2) is int
            and type(c3) is int
            and 0 <= min(c0, c1, c2, c3, starter)
            and max(c0, c1, c2, c3, starter) < 52
            and len({c0, c1, c2, c3, starter}) == 5
        ):
            return show_points(c0, c1, c2, c3, starter, is_crib, RANK_POINTS_BYTES)
    ids, s = _hand_and_starter(hand, starter)
    return show_points(ids[0], ids[1], ids[2], ids[3], s, is_crib, RANK_POINTS_BYTES)


@dataclass(frozen=True)
class Breakdown:
    """Every scoring combination of a show hand; card ids in each combo are ascending."""

    fifteens: tuple[tuple[int, ...], ...]
    pairs: tuple[tuple[int, int], ...]
    runs: tuple[tuple[int, ...], ...]
    flush: tuple[int, ...]  # the 4 or 5 cards of a scoring flush, else ()
    nobs: int | None  # the Jack of the starter's suit, if in the hand
    hand: tuple[int, ...] = ()
    starter: int | None = None
    is_crib: bool = False
    fifteen_points: int = field(init=False)
    pair_points: int = field(init=False)
    run_points: int = field(init=False)
    flush_points: int = field(init=False)
    nobs_points: int = field(init=False)
    total: int = field(init=False)

    def __post_init__(self) -> None:
        parts = {
            "fifteen_points": 2 * len(self.fifteens),
            "pair_points": 2 * len(self.pairs),
            "run_points": sum(len(r) for r in self.runs),
            "flush_points": len(self.flush),
            "nobs_points": 0 if self.nobs is None else 1,
        }
        for name, pts in parts.items():
            object.__setattr__(self, name, pts)
        object.__setattr__(self, "total", sum(parts.values()))

    def describe(self) -> list[str]:
        """Human-readable lines, e.g. ``"fifteen 2: 5H+TD"``, ..., ``"total 29"``."""
        lines = [f"fifteen 2: {'+'.join(to_str(c) for c in f)}" for f in self.fifteens]
        lines += [f"pair 2: {to_str_many(p)}" for p in self.pairs]
        lines += [f"run {len(r)}: {to_str_many(r)}" for r in self.runs]
        if self.flush:
            lines.append(f"flush {len(self.flush)}: {to_str_many(self.flush)}")
        if self.nobs is not None:
            lines.append(f"nobs 1: {to_str(self.nobs)}")
        lines.append(f"total {self.total}")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.describe())


def score_hand_breakdown(
    hand: str | Iterable[str | int], starter: str | int, is_crib: bool = False
) -> Breakdown:
    """Itemised show score (slow, for display and logs); ``.total == score_hand(...)``."""
    ids, s = _hand_and_starter(hand, starter)
    five = sorted([*ids, s])
    fifteens, pairs, runs = show_combinations(five, [c >> 2 for c in five])
    flush: tuple[int, ...] = ()
    if len({c & 3 for c in ids}) == 1:
        if s & 3 == ids[0] & 3:
            flush = tuple(five)
        elif not is_crib:
            flush = tuple(sorted(ids))
    jack = _JACK_BASE | (s & 3)
    nobs = jack if jack in ids else None
    return Breakdown(fifteens, pairs, runs, flush, nobs, tuple(ids), s, is_crib)


def score4(c0: int, c1: int, c2: int, c3: int) -> int:
    """Points of 4 cards alone (no starter): fifteens, pairs, runs, a 4-card flush; no nobs.

    >>> score4(*parse_many("2C 3C 4C QC"))  # run 3, 2+3+Q, flush 4
    9
    """
    pts = HAND4_POINTS[(((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)]
    s = c0 & 3
    if (c1 & 3) == s and (c2 & 3) == s and (c3 & 3) == s:
        pts += 4
    return pts


def throw_points(cards: Sequence[int]) -> int:
    """Points of 1 or 2 thrown cards alone: a pair 2, a fifteen 2 (a single card scores 0)."""
    if len(cards) != 2:
        return 0
    return TWO_POINTS[(cards[0] >> 2) * 13 + (cards[1] >> 2)]


# --------------------------------------------------------------------------------------
# The show: many hands with numpy
# --------------------------------------------------------------------------------------


def score_hands(
    hands: np.ndarray | Sequence[Sequence[int]],
    starters: np.ndarray | Sequence[int],
    is_crib: bool = False,
    *,
    validate: bool = True,
) -> np.ndarray:
    """Vectorised show scores: ``hands`` (N, 4) card ids, ``starters`` (N,) ids -> (N,) int64.

    With ``validate`` (default) shapes, the id range and distinctness of the 5 cards of each
    row are checked (ValueError); ``validate=False`` checks shapes only (faster for trusted data).
    """
    h = np.asarray(hands)
    s = np.asarray(starters)
    if h.ndim != 2 or h.shape[1] != 4:
        raise ValueError(f"hands must have shape (N, 4), got {h.shape}")
    if s.shape != (h.shape[0],):
        raise ValueError(f"starters must have shape ({h.shape[0]},), got {s.shape}")
    if h.dtype.kind not in "iu" or s.dtype.kind not in "iu":
        raise ValueError(f"card ids must be integers, got dtypes {h.dtype} and {s.dtype}")
    if h.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    h = h.astype(np.int32, copy=False)
    s = s.astype(np.int32, copy=False)
    if validate:
        lo, hi = min(h.min(), s.min()), max(h.max(), s.max())
        if lo < 0 or hi >= 52:
            raise ValueError(f"card ids must be 0..51, got values in {lo}..{hi}")
        bits = np.left_shift(np.int64(1), s.astype(np.int64))
        union = bits.copy()
        for i in range(4):
            bit = np.left_shift(np.int64(1), h[:, i].astype(np.int64))
            bits += bit
            union |= bit
        dup = bits != union  # the sum of distinct powers of two equals their union
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ValueError(
                f"row {i}: duplicate card in hand {to_str_many(int(c) for c in h[i])} "
                f"+ starter {to_str(int(s[i]))}"
            )
    r = h >> 2
    key = (((r[:, 0] * 13 + r[:, 1]) * 13 + r[:, 2]) * 13 + r[:, 3]) * 13 + (s >> 2)
    points = RANK_POINTS[key].astype(np.int64)
    su = h & 3
    s_su = s & 3
    flush4 = (su[:, 0] == su[:, 1]) & (su[:, 0] == su[:, 2]) & (su[:, 0] == su[:, 3])
    flush5 = flush4 & (su[:, 0] == s_su)
    if is_crib:
        points += 5 * flush5
    else:
        points += 4 * flush4 + flush5
    points += (h == (_JACK_BASE | s_su)[:, None]).any(axis=1)
    return points


# --------------------------------------------------------------------------------------
# Pegging
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PegBreakdown:
    """Points made by the last card of a pegging series (go / last card excluded).

    ``pair_count`` is how many cards of the last card's rank end the series in a row
    (2, 3 or 4), 0 if no pair; ``run_length`` is the run scored (>= 3), 0 if none.
    """

    count: int
    fifteen: int
    thirty_one: int
    pair: int
    run: int
    run_length: int
    pair_count: int
    total: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.fifteen + self.thirty_one + self.pair + self.run)


def all_four_card_hands() -> np.ndarray:
    """All C(52, 4) = 270,725 four-card hands as an (N, 4) int8 array of card ids, rows in
    lexicographic order.

        >>> hands = all_four_card_hands()
        >>> hands.shape, hands[0].tolist(), hands[-1].tolist()
        ((270725, 4), [0, 1, 2, 3], [48, 49, 50, 51])
    """
    flat = itertools.chain.from_iterable(itertools.combinations(range(52), 4))
    return np.fromiter(flat, dtype=np.int8).reshape(-1, 4)


def show_score_counts(is_crib: bool = False, hands: np.ndarray | None = None) -> np.ndarray:
    """How many (hand, starter) pairs make each show score 0..29: every hand of ``hands``
    (default :func:`all_four_card_hands`) with every starter it does not hold, scored by
    :func:`score_hands` one starter at a time (a chunk of 249,900 rows for all hands).

    The four fives (12 for the pairs, 8 for the four fifteens of three fives) with each of the
    48 other starters: a ten-card (16 of them) adds four fifteens, the other 32 nothing:

        >>> counts = show_score_counts(hands=np.array([[16, 17, 18, 19]]))
        >>> {score: int(n) for score, n in enumerate(counts) if n}
        {20: 32, 28: 16}
    """
    if hands is None:
        hands = all_four_card_hands()
    counts = np.zeros(30, dtype=np.int64)
    for starter in range(52):
        chunk = hands[~(hands == starter).any(axis=1)]
        starters = np.full(len(chunk), starter, dtype=np.int8)
        counts += np.bincount(score_hands(chunk, starters, is_crib, validate=False),
                              minlength=30)
    return counts


def peg_points_ids(series: Sequence[int]) -> int:
    """Pegging points for the last card of ``series`` (card ids). **No validation**
    beyond the count (ValueError if it exceeds 31)."""
    count = peg_count(series)
    if count > 31:
        raise ValueError(f"count {count} exceeds 31 for series {to_str_many(series)}")
    return peg_points_last(series, len(series), count)


def _series_ids(series: str | Iterable[str | int]) -> list[Card]:
    """Validate a pegging series: non-empty, distinct cards."""
    if isinstance(series, str):
        ids = parse_many(series)
    else:
        ids = [_card(c) for c in series]
    if not ids:
        raise ValueError("a pegging series must contain at least one card")
    if len(set(ids)) != len(ids):
        dup = next(c for i, c in enumerate(ids) if c in ids[:i])
        raise ValueError(f"duplicate card {to_str(dup)} in series {to_str_many(ids)}")
    return ids


def peg_points(series: str | Iterable[str | int]) -> int:
    """Pegging points scored by the last card of ``series``: the cards laid since the count
    last reset (ids or strings), in order. Fifteen 2, thirty-one 2, pairs 2/6/12, runs k.
    Go and last-card points are not included. ValueError on bad input or a count over 31."""
    if type(series) in (list, tuple) and series:
        ok = True
        for c in series:  # type: ignore[union-attr]
            if type(c) is not int or not 0 <= c < 52:
                ok = False
                break
        if ok and len(set(series)) == len(series):  # type: ignore[arg-type]
            return peg_points_ids(series)  # type: ignore[arg-type]
    return peg_points_ids(_series_ids(series))


def peg_breakdown(series: str | Iterable[str | int]) -> PegBreakdown:
    """Itemised pegging points for the last card of ``series`` (see :func:`peg_points`)."""
    ids = _series_ids(series)
    n = len(ids)
    total = peg_points_ids(ids)
    count = peg_count(ids)
    same = 1  # cards of the last card's rank ending the series
    while same < n and ids[n - 1 - same] >> 2 == ids[-1] >> 2:
        same += 1
    pair = PEG_PAIR_POINTS[same]
    run = total - PEG_COUNT_POINTS[count] - pair
    return PegBreakdown(
        count=count,
        fifteen=PEG_COUNT_POINTS[count] if count == 15 else 0,
        thirty_one=PEG_COUNT_POINTS[count] if count == 31 else 0,
        pair=pair,
        run=run,
        run_length=run,
        pair_count=same if same > 1 else 0,
    )


def peg_count(series: Iterable[int]) -> int:
    """Running count (sum of counting values) of trusted card ids."""
    return sum(map(CARD_VALUES.__getitem__, series))


PEG_COUNT_POINTS: tuple[int, ...] = tuple(peg_points_last([0, 48], 2, c) for c in range(32))
"""Pegging points of the count alone (2 at fifteen and at 31), indexed by the count 0..31."""
PEG_PAIR_POINTS: tuple[int, ...] = (0,) + tuple(peg_points_last([0, 1, 2, 3], k, 0)
                                                for k in range(1, 5))
"""Pegging points of ``k`` cards of one rank ending the series (k = 1..4: 0, 2, 6, 12)."""


# --------------------------------------------------------------------------------------
# Pegging on ranks: the bots' fast paths (suits never matter in the play)
# --------------------------------------------------------------------------------------


def peg_add(ranks: Sequence[int], count: int, r: int) -> int:
    """Points for laying a card of rank ``r`` on a series with ranks ``ranks`` and running
    ``count`` (fifteen/31 2, pairs 2/6/12, runs). The caller makes sure the card fits.

    >>> peg_add([3, 5], 10, 4)  # 4 6 then a 5: fifteen and a run of 3
    5
    """
    series = [q << 2 for q in ranks]
    series.append(r << 2)
    return peg_points_last(series, len(series), count + RANK_VALUES[r])


_PEG_CACHE: dict[tuple[int, ...], tuple[int, ...]] = {}
_PEG_CACHE_MAX = 100_000


def peg_all(ranks: tuple[int, ...], count: int) -> tuple[int, ...]:
    """:func:`peg_add` for all 13 ranks at once: points for laying each rank on the series
    ``ranks`` at running ``count`` (0 for ranks that do not fit). Results are cached by series
    (the count follows from the ranks; at most 100,000 entries).

    >>> peg_all((4, 4), 10)[4]  # a third 5: pair royal 6, fifteen 2
    8
    """
    got = _PEG_CACHE.get(ranks)
    if got is not None:
        return got
    series = [q << 2 for q in ranks]
    series.append(0)
    n = len(series)
    pts = [0] * 13
    for r in range(13):
        c = count + RANK_VALUES[r]
        if c > 31:
            break  # values only grow with the rank
        series[-1] = r << 2
        pts[r] = peg_points_last(series, n, c)
    result = tuple(pts)
    if len(_PEG_CACHE) >= _PEG_CACHE_MAX:
        _PEG_CACHE.clear()
    _PEG_CACHE[ranks] = result
    return result
