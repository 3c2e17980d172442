"""Show and pegging scoring.

Fast paths use tables built once at import (~0.1 s):

* ``RANK_POINTS``: fifteens + pairs + runs for every ordered 5-tuple of ranks, a flat
  ``uint8`` array indexed by ``rank_key(r0, r1, r2, r3, r4) = ((((r0*13+r1)*13+r2)*13+r3)*13+r4``.
  These three depend on ranks only; flush and nobs are a few integer ops on the suits.
* :func:`score_hand_ids` / :func:`peg_points_ids` skip validation for trusted callers
  (the engine, bots); :func:`score_hand` / :func:`peg_points` accept ids or strings and
  raise ``ValueError`` on bad input.
* :func:`score_hands` scores many hands at once with numpy.

Cards are ints ``rank * 4 + suit`` (see :mod:`cribenv.cards`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cribenv.cards import CARD_VALUES, JACK, Card, parse, parse_many, to_str, to_str_many

__all__ = [
    "RANK_POINTS",
    "RANK_POINTS_BYTES",
    "Breakdown",
    "PegBreakdown",
    "peg_breakdown",
    "peg_count",
    "peg_points",
    "peg_points_ids",
    "peg_points_last",
    "rank_key",
    "score_hand",
    "score_hand_breakdown",
    "score_hand_ids",
    "score_hands",
    "show_points",
]

_N_KEYS = 13**5
_JACK_BASE = JACK * 4  # card id of the Jack of clubs; + suit gives the Jack of that suit


def rank_key(r0: int, r1: int, r2: int, r3: int, r4: int) -> int:
    """Index into :data:`RANK_POINTS` for five rank indices 0..12 (order matters)."""
    return (((r0 * 13 + r1) * 13 + r2) * 13 + r3) * 13 + r4


def _multiset_points(ranks: np.ndarray) -> np.ndarray:
    """Fifteens + pairs + runs for rows of 5 rank indices (any order), vectorised."""
    n = ranks.shape[0]
    values = np.minimum(ranks + 1, 10)
    points = np.zeros(n, dtype=np.int32)
    for size in range(2, 6):  # fifteens: every subset of 2..5 cards
        for idx in itertools.combinations(range(5), size):
            points += 2 * (values[:, list(idx)].sum(axis=1) == 15)
    counts = np.zeros((n, 13), dtype=np.int32)
    for i in range(5):
        counts[np.arange(n), ranks[:, i]] += 1
    points += (counts * (counts - 1)).sum(axis=1)  # c of a rank make c*(c-1)/2 pairs of 2
    # Runs: the (at most one) maximal stretch of >= 3 present ranks scores
    # length * product of the multiplicities (double / triple / double-double runs).
    present = counts > 0
    for length in (5, 4, 3):
        for start in range(13 - length + 1):
            stop = start + length
            ok = present[:, start:stop].all(axis=1)
            if start > 0:
                ok &= ~present[:, start - 1]
            if stop < 13:
                ok &= ~present[:, stop]
            points += ok * length * counts[:, start:stop].prod(axis=1)
    return points


def _build_rank_points() -> np.ndarray:
    """Fifteens + pairs + runs for all 13**5 ordered rank 5-tuples (uint8, max 28).

    Scores the 6188 sorted multisets, then maps every ordered tuple to its sorted one.
    """
    multisets = np.array(list(itertools.combinations_with_replacement(range(13), 5)))
    by_sorted_key = np.zeros(_N_KEYS, dtype=np.uint8)
    by_sorted_key[_keys(multisets)] = _multiset_points(multisets)
    ordered = np.indices((13,) * 5, dtype=np.int32).reshape(5, -1).T  # rank_key order
    return by_sorted_key[_keys(np.sort(ordered, axis=1))]


def _keys(ranks: np.ndarray) -> np.ndarray:
    """rank_key of each row of an (N, 5) rank array."""
    r = ranks.astype(np.int32)
    return (((r[:, 0] * 13 + r[:, 1]) * 13 + r[:, 2]) * 13 + r[:, 3]) * 13 + r[:, 4]


RANK_POINTS: np.ndarray = _build_rank_points()
"""uint8[13**5]: fifteens + pairs + runs points keyed by :func:`rank_key` (flush/nobs excluded)."""
RANK_POINTS.setflags(write=False)
RANK_POINTS_BYTES: bytes = RANK_POINTS.tobytes()
""":data:`RANK_POINTS` as ``bytes``: the kernels' table from Python (indexing gives an int)."""


# --------------------------------------------------------------------------------------
# Kernels: plain functions over ints and int sequences, the one home of the scoring rules on
# the hot paths. They use no Python objects beyond indexing, so ``numba.njit`` compiles them
# unchanged (the batched engine, ``cribenv.vector``) while the engine calls them as they are.
# Tables are arguments: ``bytes`` from Python, a ``uint8`` array from numba (see KERNELS.md).
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
    fifteens = tuple(
        combo
        for size in range(2, 6)
        for combo in itertools.combinations(five, size)
        if sum(CARD_VALUES[c] for c in combo) == 15
    )
    pairs = tuple(p for p in itertools.combinations(five, 2) if p[0] >> 2 == p[1] >> 2)

    by_rank: dict[int, list[int]] = {}
    for c in five:
        by_rank.setdefault(c >> 2, []).append(c)
    runs: tuple[tuple[int, ...], ...] = ()
    for start in by_rank:
        if start - 1 in by_rank:
            continue  # not the bottom of a stretch
        stop = start
        while stop + 1 in by_rank:
            stop += 1
        if stop - start >= 2:
            groups = [by_rank[r] for r in range(start, stop + 1)]
            runs = tuple(itertools.product(*groups))

    flush: tuple[int, ...] = ()
    if len({c & 3 for c in ids}) == 1:
        if s & 3 == ids[0] & 3:
            flush = tuple(five)
        elif not is_crib:
            flush = tuple(sorted(ids))
    jack = _JACK_BASE | (s & 3)
    nobs = jack if jack in ids else None
    return Breakdown(fifteens, pairs, runs, flush, nobs, tuple(ids), s, is_crib)


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
    combos = peg_points_last(ids, n, 0)  # pairs or a run (a count of 0 scores nothing)
    same = 1
    while same < n and ids[n - 1 - same] >> 2 == ids[-1] >> 2:
        same += 1
    pair = combos if same > 1 else 0
    return PegBreakdown(
        count=count,
        fifteen=total - combos if count == 15 else 0,
        thirty_one=total - combos if count == 31 else 0,
        pair=pair,
        run=combos - pair,
        run_length=combos - pair,
        pair_count=same if same > 1 else 0,
    )


def peg_count(series: Iterable[int]) -> int:
    """Running count (sum of counting values) of trusted card ids."""
    return sum(map(CARD_VALUES.__getitem__, series))
