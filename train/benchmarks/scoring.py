"""Scoring: the show score of a hand and starter, by the table-driven and vectorised scorers,
against the plain reference scorer (``cribenv/reference_scoring.py``), and the full enumeration
of every (hand, starter) combination."""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np

from train.benchmarks import Progress
from train.benchmarks._timing import fmt_rate, fmt_ratio, fmt_seconds, timed

ORDER = 10
FULL_COMBOS = 12_994_800          # C(52, 4) hands x 48 starters
FULL_HAND_MEAN = 4.7692           # mean show score (RULES.md), a check on the enumeration


def _full_enumeration(all_hands: np.ndarray) -> tuple[int, int]:
    """Score every (hand, starter) combination with ``score_hands``: (combinations, total)."""
    from cribenv.scoring import show_score_counts

    counts = show_score_counts(False, all_hands)
    return int(counts.sum()), int((counts * np.arange(len(counts))).sum())


def _random_deals(all_hands: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random hands with a starter not in the hand."""
    rng = np.random.default_rng(seed)
    hands = all_hands[rng.integers(len(all_hands), size=n)].astype(np.int64)
    starters = rng.integers(52, size=n)
    clash = (hands == starters[:, None]).any(axis=1)
    while clash.any():
        starters[clash] = (starters[clash] + 1) % 52
        clash = (hands == starters[:, None]).any(axis=1)
    return hands, starters


def run(seconds: float, progress: Progress) -> dict[str, Any]:
    from cribenv.reference_scoring import ref_score_hand
    from cribenv.scoring import all_four_card_hands, score_hand_ids, score_hands

    progress("scoring: building the 270,725 four-card hands")
    all_hands = all_four_card_hands()
    hands, starters = _random_deals(all_hands, 200_000, seed=0)
    pairs = list(zip(hands[:20_000].tolist(), starters[:20_000].tolist()))
    ref_pairs = pairs[:2_000]

    def run_ref() -> int:
        for h, s in ref_pairs:
            ref_score_hand(h, s)
        return len(ref_pairs)

    def run_ids() -> int:
        for h, s in pairs:
            score_hand_ids(h, s)
        return len(pairs)

    def run_vec() -> int:
        score_hands(hands, starters)
        return len(hands)

    def run_vec_trusted() -> int:
        score_hands(hands, starters, validate=False)
        return len(hands)

    # the same answers, or the speed means nothing
    sample = slice(0, 500)
    ref_scores = [ref_score_hand(h, s) for h, s in pairs[sample]]
    assert [score_hand_ids(h, s) for h, s in pairs[sample]] == ref_scores
    assert score_hands(hands[sample], starters[sample]).tolist() == ref_scores

    rates: dict[str, float] = {}
    for key, label, fn in (
        ("reference", "reference scorer (plain Python)", run_ref),
        ("score_hand_ids", "score_hand_ids (table-driven)", run_ids),
        ("score_hands", "score_hands (numpy, validated)", run_vec),
        ("score_hands_trusted", "score_hands (numpy, validate=False)", run_vec_trusted),
    ):
        progress(f"scoring: {label}")
        elapsed, n = timed(fn, seconds)
        rates[key] = n / elapsed

    progress("scoring: full enumeration of 12,994,800 (hand, starter) combinations")
    gc.collect()
    t0 = time.perf_counter()
    combos, total = _full_enumeration(all_hands)
    full_s = time.perf_counter() - t0
    mean = total / combos
    return {
        "hands_per_s": rates,
        "full_enumeration": {
            "combinations": combos,
            "mean_score": round(mean, 4),
            "check_ok": combos == FULL_COMBOS and round(mean, 4) == FULL_HAND_MEAN,
            "score_hands_s": full_s,
            "reference_estimated_s": FULL_COMBOS / rates["reference"],
        },
    }


def report(res: dict[str, Any]) -> None:
    r = res["hands_per_s"]
    ref = r["reference"]
    rows = [
        ("reference scorer (plain Python)", r["reference"]),
        ("score_hand_ids (table-driven, one hand a call)", r["score_hand_ids"]),
        ("score_hands (numpy, validated)", r["score_hands"]),
        ("score_hands (numpy, validate=False)", r["score_hands_trusted"]),
    ]
    print("scoring: show score of a 4-card hand + starter")
    print(f"  {'':<48}{'hands/s':>14}{'vs reference':>14}{'vs ids':>10}")
    for label, rate in rows:
        print(f"  {label:<48}{fmt_rate(rate):>14}{fmt_ratio(rate / ref):>14}"
              f"{fmt_ratio(rate / r['score_hand_ids']):>10}")
    full = res["full_enumeration"]
    check = "ok" if full["check_ok"] else "MISMATCH"
    est = full["reference_estimated_s"]
    print(f"  full enumeration, {full['combinations']:,} (hand, starter) combinations "
          f"(mean {full['mean_score']:.4f}, check {check}):")
    print(f"  {'score_hands':<48}{fmt_seconds(full['score_hands_s']):>14}")
    print(f"  {'reference scorer (estimated from its rate)':<48}{fmt_seconds(est):>14}"
          f"{'estimated':>14}  ratio {fmt_ratio(est / full['score_hands_s'])}")
