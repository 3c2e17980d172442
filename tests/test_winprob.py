"""The win-probability table (agents.winprob): solved exactly on hand-made hands, and the
shipped table's shape: monotone, exact where the game is decided, symmetric."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from agents import winprob
from agents.winprob import TARGETS, dealer_wins, seat_wins, solve


def test_solve_follows_the_race_of_one_hand_by_hand():
    # to 5: every hand the pone pegs 3, then the dealer 3
    w = solve([[(1, 3), (0, 3)]], target=5)
    assert w[3, 3] == 0.0      # the pone (3 + 3) gets there first
    assert w[0, 0] == 1.0      # 3-3 after the hand, the old dealer is then the pone: 1 - W(3, 3)
    assert w[2, 0] == 1.0      # 2 + 3 = 5: the dealer gets there (the pone is at 3)
    assert w[0, 2] == 0.0      # the pone reaches 5 first


def test_solve_averages_the_hands():
    # to 3: half the hands the dealer pegs 3 at once, half the pone does
    w = solve([[(0, 3)], [(1, 3)]], target=3)
    assert w[0, 0] == 0.5 and w[2, 2] == 0.5
    w = solve([[(0, 1)], [(1, 1)]], target=2)
    # from 1-1 whoever scores wins: a half; from 0-0 the scorer reaches 1, then 1-0 or 0-1
    assert w[1, 1] == 0.5
    assert w[0, 0] == pytest.approx(0.5 * (1 - w[0, 1]) + 0.5 * (1 - w[1, 0]))


@pytest.mark.parametrize("target", TARGETS)
def test_the_shipped_table_is_monotone_decided_and_symmetric(target):
    s = np.arange(target)
    d, p = np.meshgrid(s, s, indexing="ij")
    w = dealer_wins(d, p, target)
    assert ((0 <= w) & (w <= 1)).all()
    assert (np.diff(w, axis=0) >= 0).all() and (np.diff(w, axis=1) <= 0).all()
    assert dealer_wins(target, 50, target) == 1.0 and dealer_wins(50, target, target) == 0.0
    assert dealer_wins(target - 1, 0, target) == 1.0   # the pone cannot peg a game first
    own = seat_wins(d, p, True, target)
    np.testing.assert_array_equal(own + seat_wins(p, d, False, target), 1.0)
    assert 0.52 < dealer_wins(0, 0, target) < 0.62   # the first dealer's edge


def test_the_shipped_table_records_its_sampling_error():
    with np.load(winprob.TABLE_FILE) as data:
        for target in TARGETS:
            se = data[f"se{target}"]
            assert se.shape == (target, target) and 0 < se.max() < 0.05
            assert se.mean() < 0.01


def test_the_command_rebuilds_a_table_and_refuses_bad_input(tmp_path):
    out = tmp_path / "t.npz"
    run = subprocess.run([sys.executable, "-m", "agents.winprob", "--hands", "40", "--agent",
                          "greedy", "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with np.load(out) as data:
        assert data["w121"].shape == (121, 121) and data["w61"].shape == (61, 61)
    for args, word in ((["--hands", "3"], "at least 8"), (["--agent", "gredy"], "gredy")):
        bad = subprocess.run([sys.executable, "-m", "agents.winprob", *args, "--out",
                              str(tmp_path / "x.npz")], capture_output=True, text=True)
        assert bad.returncode == 2 and word in bad.stderr and "Traceback" not in bad.stderr
        assert not (tmp_path / "x.npz").exists()


def test_a_target_without_a_table_is_refused():
    with pytest.raises(ValueError, match="targets"):
        dealer_wins(0, 0, target=100)
