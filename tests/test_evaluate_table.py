"""scripts/evaluate_table.py: an agent against bots at a table of 2, 3 or 4 players."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import evaluate_table  # noqa: E402


def test_writes_each_bots_duplicate_result(tmp_path, capsys):
    out = tmp_path / "res.json"
    assert evaluate_table.main(["--agent", "greedy", "--players", "3", "--bots", "random",
                                "greedy", "--deals", "3", "--target", "61", "--workers", "1",
                                "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert set(res) == {"random", "greedy"}
    for r in res.values():
        assert r["games"] == 9 and r["fair_share"] == pytest.approx(1 / 3)
        assert r["win_lo"] <= r["win_rate"] <= r["win_hi"]
    assert "greedy vs random (3 players, 9 games)" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("argv,word", [
    (["--agent", "nobody", "--players", "2"], "nobody"),
    (["--agent", "greedy", "--players", "2", "--bots", "nobot"], "nobot"),
    (["--agent", "greedy", "--players", "5"], "5"),
    (["--agent", "greedy", "--players", "2", "--deals", "0"], "--deals"),
])
def test_bad_input_exits_2_naming_it(argv, word, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate_table.main(argv)
    assert exc.value.code == 2 and word in capsys.readouterr().err
