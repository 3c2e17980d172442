"""scripts/budget_curve.py: the search's win rate against its time a decision, from reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "budget_curve.py"
spec = importlib.util.spec_from_file_location("budget_curve", SCRIPT)
budget_curve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(budget_curve)


def report(path: Path, label: str, ms: float, rate: float) -> Path:
    path.write_text(json.dumps({
        "pairs": [{"agent_a": label, "agent_b": "expert",
                   "win_rate_a": {"value": rate, "low": rate - 0.02, "high": rate + 0.02}}],
        "think_ms_per_decision": {label: ms, "expert": 0.08}}), encoding="utf-8")
    return path


def test_a_point_per_report_and_a_picture(tmp_path):
    a = report(tmp_path / "a.json", "S600", 10.3, 0.567)
    assert budget_curve.point(a) == ("S600", 10.3, 0.567, 0.567 - 0.02, 0.567 + 0.02)
    b = report(tmp_path / "b.json", "S3000", 50.0, 0.585)
    base = report(tmp_path / "p.json", "P", 0.3, 0.535)
    out = tmp_path / "curve.png"
    assert budget_curve.main([str(out), str(b), str(a), "--base", str(base)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_named_point_and_the_pair_against_a_named_opponent(tmp_path):
    path = tmp_path / "two.json"
    path.write_text(json.dumps({
        "pairs": [{"agent_a": "search", "agent_b": "expert",
                   "win_rate_a": {"value": 0.57, "low": 0.55, "high": 0.59}},
                  {"agent_a": "search", "agent_b": "old",
                   "win_rate_a": {"value": 0.546, "low": 0.534, "high": 0.558}}],
        "think_ms_per_decision": {"search": 10.3}}), encoding="utf-8")
    assert budget_curve.point(f"S600={path}", "old") == ("S600", 10.3, 0.546, 0.534, 0.558)
    assert budget_curve.point(str(path))[0] == "search"
    assert budget_curve.main([str(tmp_path / "c.png"), str(path), "--opponent", "nobody"]) == 2


def test_a_missing_or_foreign_report_is_exit_status_2(tmp_path, capsys):
    out = tmp_path / "curve.png"
    assert budget_curve.main([str(out), str(tmp_path / "nope.json")]) == 2
    (tmp_path / "foreign.json").write_text("{}", encoding="utf-8")
    assert budget_curve.main([str(out), str(tmp_path / "foreign.json")]) == 2
    assert "cannot read a report" in capsys.readouterr().err and not out.exists()
