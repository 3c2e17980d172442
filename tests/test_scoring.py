"""Show and pegging scoring, the full RULES.md distribution, and discard analysis."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cribenv.cards import parse, parse_many, to_str_many
from cribenv.discard import analyse_discards, discard_evs
from cribenv.reference_scoring import ref_peg_points, ref_score_hand
from cribenv.scoring import (
    PEG_COUNT_POINTS,
    PEG_PAIR_POINTS,
    RANK_POINTS,
    Breakdown,
    all_four_card_hands,
    peg_add,
    peg_all,
    peg_breakdown,
    peg_points,
    peg_points_ids,
    rank_key,
    score4,
    score_hand,
    score_hand_breakdown,
    score_hand_ids,
    score_hands,
    show_score_counts,
    throw_points,
)

# ----------------------------------------------------------------------------- show: examples


def test_rules_worked_examples() -> None:
    assert score_hand("6D JH 4H 7C", "5H") == 9  # Bob
    assert score_hand("5S 4S 2S 6H", "5H") == 12  # Alice
    assert score_hand("TS 8D KC 8C", "5H", is_crib=True) == 6  # Alice's crib

    bob = score_hand_breakdown("6D JH 4H 7C", "5H")
    assert bob.fifteens == ((parse("5H"), parse("JH")), tuple(parse_many("4H 5H 6D")))
    assert bob.runs == (tuple(parse_many("4H 5H 6D 7C")),)
    assert (bob.pairs, bob.flush, bob.nobs) == ((), (), parse("JH"))
    assert (bob.fifteen_points, bob.run_points, bob.nobs_points, bob.total) == (4, 4, 1, 9)

    alice = score_hand_breakdown("5S 4S 2S 6H", "5H")
    assert (alice.fifteen_points, alice.run_points, alice.pair_points) == (4, 6, 2)
    assert alice.runs == (
        tuple(parse_many("4S 5H 6H")),
        tuple(parse_many("4S 5S 6H")),
    )

    crib = score_hand_breakdown("TS 8D KC 8C", "5H", is_crib=True)
    assert (crib.fifteen_points, crib.pair_points, crib.total) == (4, 2, 6)
    assert crib.pairs == ((parse("8C"), parse("8D")),)


@pytest.mark.parametrize(
    ("hand", "starter", "total", "fifteens", "pairs", "runs"),
    [
        ("5C 5D 5S JH", "5H", 29, 16, 12, 0),  # the maximum: nobs with the starter's suit
        ("5C 5D 5H JS", "5S", 29, 16, 12, 0),
        ("5C 5D 5S JC", "5H", 28, 16, 12, 0),  # wrong jack: no nobs
        ("2C 2D 3H 4S", "KH", 12, 4, 2, 6),  # double run 8, plus K+3+2 twice
        ("2C 2D 2H 3S", "4C", 15, 0, 6, 9),  # triple run
        ("2C 3D 3H 4S", "4D", 16, 0, 4, 12),  # double-double run
        ("4C 4D 5H 5S", "6C", 24, 8, 4, 12),
        ("6C 7D 7H 8S", "8C", 24, 8, 4, 12),
        ("AC 2D 3H 4S", "5C", 7, 2, 0, 5),  # run of 5 that sums to 15
        ("QC KD AH 2S", "9C", 0, 0, 0, 0),  # A is low only: Q-K-A is no run
        ("TC JD QH KS", "5C", 12, 8, 0, 4),
    ],
)
def test_known_hands(
    hand: str, starter: str, total: int, fifteens: int, pairs: int, runs: int
) -> None:
    b = score_hand_breakdown(hand, starter)
    assert (b.total, b.fifteen_points, b.pair_points, b.run_points) == (
        total,
        fifteens,
        pairs,
        runs,
    )
    assert score_hand(hand, starter) == total


def test_flush_rules() -> None:
    # 2 4 6 8 10 are all even: no fifteens; no pairs, no runs, so only the flush scores.
    assert score_hand("2H 4H 6H 8H", "KS") == 4
    assert score_hand("2H 4H 6H 8H", "KS", is_crib=True) == 0  # no 4-card flush in the crib
    assert score_hand("2H 4H 6H 8H", "QH") == 5
    assert score_hand("2H 4H 6H 8H", "QH", is_crib=True) == 5
    assert score_hand("2H 4H 6H 8S", "QH") == 0  # starter + 3 hand cards is no flush
    b = score_hand_breakdown("2H 4H 6H 8H", "QH")
    assert b.flush == tuple(parse_many("2H 4H 6H 8H QH")) and b.flush_points == 5
    assert score_hand_breakdown("2H 4H 6H 8H", "KS").flush == tuple(parse_many("2H 4H 6H 8H"))


def test_nobs_rules() -> None:
    # Values 10 2 4 6 10 are all even: nothing else can score.
    assert score_hand("JH 2C 4D 6S", "KH") == 1
    assert score_hand("JH 2C 4D 6S", "KH", is_crib=True) == 1
    assert score_hand("JH 2C 4D 6S", "KC") == 0  # jack of another suit
    assert score_hand("KH 2C 4D 6S", "JH") == 0  # the jack as starter is not nobs
    assert score_hand_breakdown("JH 2C 4D 6S", "KH").nobs == parse("JH")
    assert score_hand_breakdown("KH 2C 4D 6S", "JH").nobs is None


def test_29_breakdown_and_describe() -> None:
    b = score_hand_breakdown("5C 5D 5S JH", "5H")
    assert isinstance(b, Breakdown)
    assert len(b.fifteens) == 8 and len(b.pairs) == 6 and b.runs == () and b.flush == ()
    assert b.nobs == parse("JH") and b.total == 29
    assert (parse("5H"), parse("JH")) in b.fifteens
    assert tuple(parse_many("5C 5D 5H")) in b.fifteens
    lines = b.describe()
    assert lines[0] == "fifteen 2: 5C+JH"
    assert "pair 2: 5H 5S" in lines
    assert lines[-2:] == ["nobs 1: JH", "total 29"]
    assert str(b).splitlines() == lines
    run = score_hand_breakdown("4H 5S 6D 7C", "KD")
    assert "run 4: 4H 5S 6D 7C" in run.describe()
    assert "flush 5: 2H 4H 6H 8H QH" in str(score_hand_breakdown("2H 4H 6H 8H", "QH"))


def test_input_forms_agree() -> None:
    ids = parse_many("6D JH 4H 7C")
    s = parse("5H")
    assert score_hand(ids, s) == score_hand(tuple(ids), s) == 9
    assert score_hand(["6D", "JH", "4H", "7C"], "5H") == 9
    assert score_hand([np.int64(c) for c in ids], np.int8(s)) == 9
    assert score_hand_ids(ids, s) == 9
    assert score_hands(np.array([ids]), np.array([s])).tolist() == [9]


@pytest.mark.parametrize(
    ("hand", "starter", "message"),
    [
        ("5H 5S JD", "4C", "4 cards"),
        ("5H 5S JD 4C 2C", "3C", "4 cards"),
        ("5H 5S 5H 4C", "3C", "duplicate card 5H"),
        ("5H 5S JD 4C", "5S", "starter 5S"),
        ("5H 5S JD 1X", "3C", "'1X'"),
        ([1, 2, 3, 52], 7, "52"),
        ([1, 2, 3, 4], -1, "-1"),
        ([1, 2, 3, 4], True, "True"),
        ([1, 2, 2, 4], 7, "duplicate"),
        ([1, 2, 3, 4], 4, "starter"),
    ],
)
def test_invalid_hands(hand: object, starter: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score_hand(hand, starter)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        score_hand_breakdown(hand, starter)  # type: ignore[arg-type]


def test_score_hands_invalid() -> None:
    with pytest.raises(ValueError, match="shape"):
        score_hands(np.zeros((3, 5), dtype=int), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="shape"):
        score_hands(np.zeros((3, 4), dtype=int), np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match="0..51"):
        score_hands(np.array([[1, 2, 3, 52]]), np.array([0]))
    with pytest.raises(ValueError, match="row 1: duplicate"):
        score_hands(np.array([[1, 2, 3, 4], [1, 2, 3, 4]]), np.array([0, 4]))
    with pytest.raises(ValueError, match="integers"):
        score_hands(np.zeros((1, 4)), np.zeros(1))
    assert score_hands(np.zeros((0, 4), dtype=int), np.zeros(0, dtype=int)).shape == (0,)


# ----------------------------------------------------------------------------- show: vs reference


def _random_deals(n: int, seed: int) -> np.ndarray:
    """n rows of 5 distinct card ids (4 hand cards + starter)."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n, 52)), axis=1)[:, :5]


@pytest.mark.parametrize("is_crib", [False, True])
def test_random_hands_match_reference(is_crib: bool) -> None:
    deals = _random_deals(3000, seed=1 + is_crib)
    # Force plenty of flushes and nobs: make a third of the hands one suit, add jacks.
    deals[::3, :4] = deals[::3, :4] & ~3 | (deals[::3, :1] & 3)
    deals = deals[[len(set(row)) == 5 for row in deals.tolist()]]
    fast = score_hands(deals[:, :4], deals[:, 4], is_crib)
    for row, got in zip(deals.tolist(), fast.tolist()):
        hand, starter = row[:4], row[4]
        expected = ref_score_hand(hand, starter, is_crib)
        assert got == expected, (hand, starter)
        assert score_hand(hand, starter, is_crib) == expected
        assert score_hand_ids(hand, starter, is_crib) == expected
    for row in deals[:300].tolist():
        assert score_hand_breakdown(row[:4], row[4], is_crib).total == ref_score_hand(
            row[:4], row[4], is_crib
        )


def test_rank_table_every_multiset() -> None:
    """RANK_POINTS (fifteens + pairs + runs) for every multiset of 5 ranks, in every order."""
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if len(set(ranks)) == 1:
            continue  # five of a rank is impossible
        seen: dict[int, int] = {}
        cards = []
        for r in ranks:  # distinct suits per rank; hand suits mixed so no flush/nobs
            cards.append(r * 4 + seen.get(r, 0))
            seen[r] = seen.get(r, 0) + 1
        base = ref_score_hand(cards[:4], cards[4])
        base -= any(c >> 2 == 10 and c & 3 == cards[4] & 3 for c in cards[:4])
        if len({c & 3 for c in cards[:4]}) == 1:
            base -= 5 if cards[4] & 3 == cards[0] & 3 else 4
        for perm in {ranks, ranks[::-1], ranks[1:] + ranks[:1]}:
            assert RANK_POINTS[rank_key(*perm)] == base, ranks


@pytest.mark.parametrize("k", [2, 4])
def test_small_rank_tables_match_show_combinations(k: int) -> None:
    """HAND4_POINTS and TWO_POINTS (numpy counting) agree with show_combinations's listing for
    every ordered tuple of ranks."""
    from cribenv import scoring

    table = scoring.HAND4_POINTS if k == 4 else scoring.TWO_POINTS
    for key, ranks in enumerate(itertools.product(range(13), repeat=k)):
        fifteens, pairs, runs = scoring.show_combinations(ranks, ranks)
        assert table[key] == 2 * len(fifteens) + 2 * len(pairs) + sum(map(len, runs)), ranks


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(52)), st.booleans())
def test_hypothesis_hands(deck: list[int], is_crib: bool) -> None:
    hand, starter = deck[:4], deck[4]
    expected = ref_score_hand(hand, starter, is_crib)
    assert score_hand(hand, starter, is_crib) == expected
    assert score_hand_breakdown(hand, starter, is_crib).total == expected


# ----------------------------------------------------------------------------- full enumeration


@pytest.fixture(scope="module")
def all_hands() -> np.ndarray:
    """All C(52, 4) = 270,725 four-card hands."""
    return all_four_card_hands()


def test_all_four_card_hands_are_every_hand_once(all_hands: np.ndarray) -> None:
    assert all_hands.shape == (270_725, 4)
    assert (np.diff(all_hands, axis=1) > 0).all()  # 4 distinct cards, ascending
    codes = (all_hands.astype(np.int64) * np.array([52**3, 52**2, 52, 1])).sum(axis=1)
    assert (np.diff(codes) > 0).all()  # rows distinct (in lexicographic order)
    assert all_hands.min() == 0 and all_hands.max() == 51


RULES_TABLE = {  # score: (hand count, crib count), from RULES.md
    0: (1_009_008, 1_022_208),
    1: (99_792, 99_792),
    2: (2_813_796, 2_839_800),
    3: (505_008, 508_908),
    4: (2_855_676, 2_868_960),
    5: (697_508, 703_496),
    6: (1_800_268, 1_787_176),
    7: (751_324, 755_320),
    8: (1_137_236, 1_118_336),
    9: (361_224, 358_368),
    10: (388_740, 378_240),
    11: (51_680, 43_880),
    12: (317_340, 310_956),
    13: (19_656, 16_548),
    14: (90_100, 88_132),
    15: (9_168, 9_072),
    16: (58_248, 57_288),
    17: (11_196, 11_196),
    18: (2_708, 2_264),
    20: (8_068, 7_828),
    21: (2_496, 2_472),
    22: (444, 444),
    23: (356, 356),
    24: (3_680, 3_680),
    28: (76, 76),
    29: (4, 4),
}


@pytest.mark.parametrize("is_crib", [False, True])
def test_full_enumeration_matches_rules_table(all_hands: np.ndarray, is_crib: bool) -> None:
    hist = show_score_counts(is_crib, all_hands)
    assert hist.sum() == 12_994_800
    expected = np.zeros(30, dtype=np.int64)
    for score, counts in RULES_TABLE.items():
        expected[score] = counts[is_crib]
    assert hist.tolist() == expected.tolist()
    assert hist[[19, 25, 26, 27]].tolist() == [0, 0, 0, 0]
    total = int((hist * np.arange(30)).sum())
    if is_crib:
        assert round(total / 12_994_800, 4) == 4.7348
    else:
        assert total == 61_974_180 and round(total / 12_994_800, 4) == 4.7692


# ----------------------------------------------------------------------------- pegging


@pytest.mark.parametrize(
    ("series", "points"),
    [
        ("6C 4D 5H", 5),  # run 3 + fifteen (6+4+5 = 15)
        ("6C 4D 5H 3S", 4),  # run 4
        ("9C TD QH", 0),
        ("3C 5D 4H", 3),
        ("3C 5D 4H 4S", 2),  # pair; the run is broken
        ("3C 5D 4H 4S 2C", 0),  # 5 4 4 2 holds a duplicate, 4 4 2 is no run
        ("5C 5D", 2),
        ("5C 5D 5H", 8),  # triplet 6 + fifteen 2
        ("5C 5D 5H 5S", 12),  # four of a kind
        ("TC KD 3H 4S 4D", 4),  # pair that makes 31
        ("TC KD 5H 6S", 2),  # 31 alone
        ("AC 2D 3H 4S 5C", 7),  # run of 5 + fifteen
        ("3C 3D 9H", 2),  # fifteen made by three cards
        ("5C 6D 5H", 0),  # broken pair
        ("2C 4D 3H", 3),  # run out of order
        ("7C 5D 6H 4S", 4),
        ("QC KD AH", 0),  # A low only
        ("AC 2D 3H", 3),
        ("KC", 0),
        ("TC 5D", 2),
        ("4C 5D 6H 4S", 3),  # last 3 = 5 6 4 is a run even though a 4 came before
        ("4C 4D 5H 6S", 3),
    ],
)
def test_peg_examples(series: str, points: int) -> None:
    assert peg_points(series) == points
    assert peg_points(parse_many(series)) == points
    assert peg_points(series.split()) == points
    assert peg_points_ids(parse_many(series)) == points
    assert peg_breakdown(series).total == points
    assert ref_peg_points(parse_many(series)) == points


def test_peg_breakdown_fields() -> None:
    b = peg_breakdown("6C 4D 5H")
    fields = (b.count, b.fifteen, b.thirty_one, b.pair, b.run, b.run_length, b.pair_count)
    assert fields == (15, 2, 0, 0, 3, 3, 0)
    b = peg_breakdown("TC KD 3H 4S 4D")
    assert (b.count, b.thirty_one, b.pair, b.pair_count, b.total) == (31, 2, 2, 2, 4)
    b = peg_breakdown("5C 5D 5H")
    assert (b.fifteen, b.pair, b.pair_count, b.total) == (2, 6, 3, 8)
    assert peg_breakdown("5C 5D 5H 5S").pair == 12


@pytest.mark.parametrize(
    ("series", "message"),
    [
        ("TC JD QH 2S", "exceeds 31"),
        ("", "at least one card"),
        ("5C 5C", "duplicate card 5C"),
        ("5C ZZ", "'ZZ'"),
    ],
)
def test_peg_invalid(series: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        peg_points(series)
    with pytest.raises(ValueError, match=message):
        peg_breakdown(series)


def _random_series(rng: np.random.Generator, low_only: bool) -> list[int]:
    """A legal series (count <= 31); low_only draws A..7 for plenty of pairs and runs."""
    deck = rng.permutation(28 if low_only else 52).tolist()
    series: list[int] = []
    count = 0
    for c in deck:
        v = min((c >> 2) + 1, 10)
        if count + v > 31:
            break
        series.append(c)
        count += v
    return series


def test_random_series_match_reference() -> None:
    rng = np.random.default_rng(7)
    for i in range(2000):
        series = _random_series(rng, low_only=i % 2 == 0)
        for k in range(1, len(series) + 1):
            prefix = series[:k]
            assert peg_points(prefix) == ref_peg_points(prefix), prefix
            assert peg_breakdown(prefix).total == ref_peg_points(prefix)


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(24)), st.integers(1, 12))
def test_hypothesis_peg(deck: list[int], length: int) -> None:
    series = deck[:length]  # ranks A..6 only: lots of pairs and runs; long ones pass 31
    if sum(min((c >> 2) + 1, 10) for c in series) > 31:
        with pytest.raises(ValueError):
            peg_points(series)
    else:
        assert peg_points(series) == ref_peg_points(series)


# ----------------------------------------------------------------------------- discard analysis


ALICE = "5S 4S 2S 8D 6H 8C"


def test_discard_options_sorted_and_complete() -> None:
    six = parse_many(ALICE)
    options = analyse_discards(ALICE, is_dealer=True)
    assert len(options) == 15
    expected = [o.expected for o in options]
    assert expected == sorted(expected, reverse=True)
    assert {frozenset(o.throw) for o in options} == {
        frozenset(p) for p in itertools.combinations(six, 2)
    }
    for o in options:
        assert sorted(o.keep + o.throw) == sorted(six)
        assert o.hand_min <= o.hand_ev <= o.hand_max
    assert set(options[0].throw) == set(parse_many("8D 8C"))  # Alice's choice in RULES.md


def test_discard_hand_ev_brute_force() -> None:
    six = parse_many(ALICE)
    option = next(o for o in analyse_discards(six, True) if set(o.throw) == {six[3], six[5]})
    unseen = [c for c in range(52) if c not in six]
    scores = [ref_score_hand(list(option.keep), s) for s in unseen]
    assert option.hand_ev == pytest.approx(sum(scores) / 46, abs=1e-12)
    assert (option.hand_min, option.hand_max) == (min(scores), max(scores))


def test_discard_crib_ev_brute_force() -> None:
    six = parse_many("TS 6D JH 4H KC 7C")  # Bob's deal
    option = next(o for o in analyse_discards(six, False) if set(o.throw) == {six[0], six[4]})
    unseen = [c for c in range(52) if c not in six]
    t0, t1 = option.throw
    total = n = 0
    for a, b in itertools.combinations(unseen, 2):
        crib = (t0, t1, a, b)
        for s in unseen:
            if s != a and s != b:
                total += score_hand_ids(crib, s, True)
                n += 1
    assert n == 1035 * 44
    assert option.crib_ev == pytest.approx(total / n, abs=1e-12)
    # spot-check the fast scorer against the reference on part of that loop
    for a, b in itertools.islice(itertools.combinations(unseen, 2), 0, 1035, 97):
        for s in unseen[:10]:
            if s not in (a, b):
                crib = [t0, t1, a, b]
                assert score_hand_ids(crib, s, True) == ref_score_hand(crib, s, True)


def test_discard_dealer_vs_pone() -> None:
    dealer = {o.throw: o for o in analyse_discards(ALICE, is_dealer=True)}
    pone = {o.throw: o for o in analyse_discards(ALICE, is_dealer=False)}
    assert dealer.keys() == pone.keys()
    for throw, d in dealer.items():
        p = pone[throw]
        assert (d.hand_ev, d.crib_ev) == (p.hand_ev, p.crib_ev)
        assert d.expected == pytest.approx(d.hand_ev + d.crib_ev)
        assert p.expected == pytest.approx(p.hand_ev - p.crib_ev)
        assert 0 < d.crib_ev < 29


@pytest.mark.parametrize(
    ("six", "message"),
    [
        ("5S 4S 2S 8D 6H", "expected 6 cards"),
        ("5S 4S 2S 8D 6H 8C 9C", "expected 6 cards"),
        ("5S 4S 2S 8D 6H 5S", "duplicate card 5S"),
        ("5S 4S 2S 8D 6H XX", "'XX'"),
    ],
)
def test_discard_invalid(six: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        analyse_discards(six, is_dealer=True)


# ----------------------------------------------------------------------------- the bots' fast paths


def _points4_reference(cards: list[int]) -> int:
    """Fifteens, pairs, runs and a 4-card flush of 4 cards alone, by subsets."""
    ranks = [c >> 2 for c in cards]
    values = [min(r + 1, 10) for r in ranks]
    pts = 0
    for size in (2, 3, 4):
        for idx in itertools.combinations(range(4), size):
            if sum(values[i] for i in idx) == 15:
                pts += 2
    pts += 2 * sum(1 for a, b in itertools.combinations(ranks, 2) if a == b)
    for size in (4, 3):
        runs = [idx for idx in itertools.combinations(range(4), size)
                if len({ranks[i] for i in idx}) == size
                and max(ranks[i] for i in idx) - min(ranks[i] for i in idx) == size - 1]
        if runs:
            pts += size * len(runs)
            break
    if len({c & 3 for c in cards}) == 1:
        pts += 4
    return pts


def test_score4_and_throw_points():
    rng = random.Random(0)
    for _ in range(3000):
        hand = rng.sample(range(52), 4)
        assert score4(*hand) == _points4_reference(hand), to_str_many(hand)
    assert score4(*parse_many("5C 5D 5H JS")) == 14  # 3 x 5+J, 5+5+5, pair royal
    assert score4(*parse_many("2C 3C 4C QC")) == 9  # run 3, 2+3+Q, flush 4
    assert score4(*parse_many("3C 3D 4H 5S")) == 10  # double run 6, pair 2, 3+3+4+5
    assert throw_points(parse_many("7H 8S")) == 2
    assert throw_points(parse_many("9H 9S")) == 2
    assert throw_points(parse_many("9H TS")) == 0
    assert throw_points([parse("5H")]) == 0
    for a, b in itertools.permutations(range(52), 2):  # every pair: a pair 2, a fifteen 2
        expected = 2 * (a >> 2 == b >> 2) + 2 * (min((a >> 2) + 1, 10) + min((b >> 2) + 1, 10)
                                                 == 15)
        assert throw_points([a, b]) == expected


def test_peg_tables_are_the_kernels_parts():
    assert PEG_COUNT_POINTS[15] == PEG_COUNT_POINTS[31] == 2
    assert sum(PEG_COUNT_POINTS) == 4 and len(PEG_COUNT_POINTS) == 32
    assert PEG_PAIR_POINTS == (0, 0, 2, 6, 12)


def _enumerated_evs(six: list[int], throw: tuple[int, ...]) -> tuple[float, float]:
    """The oracle: the kept hand over every unseen starter, the crib over every pair the
    opponent may throw and every starter left (numpy enumeration, 45,540 cribs)."""
    unseen = np.array([c for c in range(52) if c not in six])
    keep = [c for c in six if c not in throw]
    hand = score_hands(np.tile(keep, (unseen.size, 1)), unseen).mean()
    a, b = np.triu_indices(unseen.size, k=1)
    rows, starters = [], []
    for s in range(unseen.size):
        ok = (a != s) & (b != s)
        rows.append(np.column_stack([np.full(ok.sum(), throw[0]), np.full(ok.sum(), throw[1]),
                                     unseen[a[ok]], unseen[b[ok]]]))
        starters.append(np.full(ok.sum(), unseen[s]))
    cribs = np.concatenate(rows)
    assert len(cribs) == 1035 * 44
    crib = score_hands(cribs, np.concatenate(starters), is_crib=True).mean()
    return float(hand), float(crib)


@pytest.mark.parametrize("six", [
    "5H 5D JC 7S 8C 9D", "JS JH 4S 8S 2S TD", "AC 2C 3C 4C 9C KH", "5S 5C JH 3D 4H 6C",
])
def test_discard_evs_match_enumeration(six):
    cards = parse_many(six)
    unseen = [c for c in range(52) if c not in cards]
    keeps, throws, hand_ev, crib_ev = discard_evs(cards, unseen, 2)
    assert (keeps, throws, hand_ev, crib_ev) == discard_evs(cards, None, 2)
    assert throws == list(itertools.combinations(cards, 2))
    options = {o.throw: o for o in analyse_discards(cards, is_dealer=True)}
    for i in (0, 4, 9, 14) if six.startswith("5H") else (2, 11):
        h, c = _enumerated_evs(cards, throws[i])
        assert hand_ev[i] == pytest.approx(h, abs=1e-9)
        assert crib_ev[i] == pytest.approx(c, abs=1e-9)
        # the analysis gives the exact fractions: the same floats as the enumeration's means
        assert (options[throws[i]].hand_ev, options[throws[i]].crib_ev) == (h, c)


def test_one_card_crib_ev_matches_enumeration():
    """3/4 players: one card thrown, 3 more crib cards and the starter from the unseen."""
    five = parse_many("JH 5S 5D 9C KH")
    unseen = np.array([c for c in range(52) if c not in five])
    keeps, throws, hand_ev, crib_ev = discard_evs(five, unseen.tolist(), 1)
    assert [t[0] for t in throws] == five
    card = five[0]  # the Jack: nobs in the crib counts too
    trips = np.array(list(itertools.combinations(unseen.tolist(), 3)))
    rows, starters = [], []
    for s in unseen.tolist():
        ok = (trips != s).all(axis=1)
        rows.append(trips[ok])
        starters.append(np.full(ok.sum(), s))
    t3 = np.concatenate(rows)
    cribs = np.column_stack([np.full(len(t3), card), t3])
    scores = score_hands(cribs, np.concatenate(starters), is_crib=True, validate=False)
    assert crib_ev[0] == pytest.approx(scores.mean(), abs=1e-9)
    hands = np.tile(np.array(keeps[0]), (unseen.size, 1))
    assert hand_ev[0] == pytest.approx(score_hands(hands, unseen).mean(), abs=1e-9)


def test_peg_helpers_match_scoring():
    rng = random.Random(1)
    for _ in range(3000):
        deck = rng.sample(range(52), 52)
        series, count = [], 0
        for c in deck:
            v = min((c >> 2) + 1, 10)
            if len(series) >= rng.randint(0, 8) or count + v > 31:
                continue
            series.append(c)
            count += v
        ranks = [c >> 2 for c in series]
        table = peg_all(tuple(ranks), count)
        for c in deck:
            if c in series:
                continue
            if count + min((c >> 2) + 1, 10) > 31:
                assert table[c >> 2] == 0
                continue
            expected = peg_points_ids(series + [c])
            assert peg_add(ranks, count, c >> 2) == expected
            assert table[c >> 2] == expected
