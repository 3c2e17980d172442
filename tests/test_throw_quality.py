"""scripts/throw_quality.py and the evaluation's throw diagnostic (train.evaluation): the
exact value of an agent's throws."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import throw_quality  # noqa: E402

from agents import make_agent  # noqa: E402


def test_expert_throws_have_no_regret_and_greedy_ones_some():
    expert = throw_quality.throws(make_agent("expert"), range(12))
    greedy = throw_quality.throws(make_agent("greedy"), range(12))
    assert len(expert) == 24 and {d for d, _, _ in expert} == {True, False}
    for (_, six, thrown), (_, six_g, _) in zip(expert, greedy):
        assert six == six_g and len(thrown) == 2 and set(thrown) <= set(six)
    q_expert, q_greedy = throw_quality.quality(expert), throw_quality.quality(greedy)
    assert abs(q_expert["all"]["regret"]) < 1e-9      # the expert throws the analysis's best
    assert q_greedy["all"]["regret"] > 0.05            # greedy ignores the starter and the crib
    assert q_greedy["dealer"]["expected"] > q_greedy["pone"]["expected"]   # the crib's sign


def test_bad_agent_is_a_clear_error(capsys):
    assert throw_quality.main(["--agents", "nobody", "--deals", "1"]) == 2
    assert "nobody" in capsys.readouterr().err
