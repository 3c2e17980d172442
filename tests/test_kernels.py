"""The scoring kernels compile with numba unchanged and give the Python results.

The kernels (:func:`cribenv.cards.value`, :func:`cribenv.game.seat_side`,
:func:`cribenv.game.side_count`, :func:`cribenv.scoring.rank_key`,
:func:`cribenv.scoring.show_points`, :func:`cribenv.scoring.peg_points_last`) are the one home of
the rules on the hot paths: the Python engine calls them as they are, the batched engine
compiles them. See KERNELS.md.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from cribenv import cards, game, scoring
from cribenv.reference_scoring import ref_peg_points, ref_score_hand

numba = pytest.importorskip("numba", reason="numba is not installed (the kernels' compiled "
                            "form is checked only where numba is available)")

N = 20_000


@pytest.fixture(scope="module")
def jit():
    return lambda fn: numba.njit(fn)


def test_value_and_sides(jit) -> None:
    value = jit(cards.value)
    assert [value(c) for c in range(52)] == [cards.value(c) for c in range(52)]
    assert [cards.value(c) for c in range(52)] == list(cards.CARD_VALUES)
    seat_side, side_count = jit(game.seat_side), jit(game.side_count)
    for n in (2, 3, 4):
        assert side_count(n) == game.side_count(n) == game.Rules(num_players=n).num_sides
        for seat in range(n):
            assert seat_side(seat, n) == game.seat_side(seat, n) == \
                game.Rules(num_players=n).side_of(seat)


def test_rank_key(jit) -> None:
    rank_key = jit(scoring.rank_key)
    rng = random.Random(0)
    for _ in range(1000):
        r = [rng.randrange(13) for _ in range(5)]
        assert rank_key(*r) == scoring.rank_key(*r)


def test_show_points(jit) -> None:
    show = jit(scoring.show_points)
    table = scoring.RANK_POINTS
    rng = random.Random(1)
    for i in range(N):
        c = rng.sample(range(52), 5)
        is_crib = i % 2 == 1
        expected = scoring.show_points(*c, is_crib, scoring.RANK_POINTS_BYTES)
        assert show(*c, is_crib, table) == expected
        assert expected == ref_score_hand(c[:4], c[4], is_crib)
    # numpy integer arguments (what a batched engine passes) give the same
    hand = np.array(rng.sample(range(52), 5), dtype=np.int8)
    assert show(hand[0], hand[1], hand[2], hand[3], hand[4], False, table) == \
        ref_score_hand([int(x) for x in hand[:4]], int(hand[4]))


def _series(rng: random.Random) -> list[int]:
    """A legal pegging series (distinct cards, count <= 31), often low cards for pairs/runs."""
    deck = list(range(52)) if rng.random() < 0.5 else list(range(24))
    rng.shuffle(deck)
    out, count = [], 0
    for c in deck:
        if count + cards.value(c) > 31:
            break
        out.append(c)
        count += cards.value(c)
        if rng.random() < 0.15:
            break
    return out


@pytest.mark.parametrize("dtype", [np.int8, np.int64])
def test_peg_points_last(jit, dtype) -> None:
    peg = jit(scoring.peg_points_last)
    rng = random.Random(2)
    buf = np.zeros(16, dtype=dtype)  # a fixed-size row, as a batched engine keeps it
    for _ in range(N):
        s = _series(rng)
        count = sum(map(cards.value, s))
        expected = scoring.peg_points_last(s, len(s), count)
        assert expected == ref_peg_points(s)
        buf[:len(s)] = s
        assert peg(buf, len(s), count) == expected
