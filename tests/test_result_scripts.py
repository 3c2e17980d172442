"""The scripts that made figures of ``results/`` (``results/`` keeps records, ``scripts/`` the
code): ``scripts/head_to_head.py`` (``results/expert-iteration/evaluations.txt``) and
``scripts/pooled_tournaments.py`` (``results/search``'s sharper models). Here, that they start,
compute on a small case and refuse bad input without a traceback."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(script: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def test_head_to_head_plays_a_policy_file_and_refuses_bad_input():
    shown = _run("head_to_head.py", "--help")
    assert shown.returncode == 0 and "--games" in shown.stdout
    assert "evaluations.txt" in shown.stdout
    out = _run("head_to_head.py", "results/expert-iteration/policy.safetensors", "greedy",
               "--games", "2", "--seed", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("policy.safetensors vs greedy ") and " net " in out.stdout
    for bad, said in ((["greedy", "greedy", "--games", "1"], "--games"),
                      (["results/none.safetensors", "greedy"], "no policy file"),
                      (["greedy", "nobody"], "unknown agent")):
        refused = _run("head_to_head.py", *bad)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr


def _tournament(tmp_path: Path, name: str, spec: str) -> Path:
    db = tmp_path / f"{name}.sqlite"
    cli = str(Path(sys.executable).parent / "cribenv")
    subprocess.run([cli, "tournament", "--agents", f"S={spec}", "random", "--games", "4",
                    "--workers", "1", "--db", str(db), "--out", str(tmp_path / name),
                    "--no-progress", "--bootstrap", "0"], check=True, capture_output=True)
    return db


def test_pooled_tournaments_pools_and_pairs_and_refuses_bad_input(tmp_path):
    assert _run("pooled_tournaments.py", "--help").returncode == 0
    a = _tournament(tmp_path, "a", "greedy")
    b = _tournament(tmp_path, "b", "greedy")
    same = _run("pooled_tournaments.py", f"{a},{b}", f"{b},{a}")
    assert same.returncode == 0, same.stderr
    assert "A wins:" in same.stdout and "over 8 games" in same.stdout
    alike = _run("pooled_tournaments.py", str(a), str(b))   # the same deals, the same play
    assert "A - B, paired: +0.0% [+0.0, +0.0] over 4 games" in alike.stdout
    text = tmp_path / "x.sqlite"
    text.write_text("not a database")
    for bad, said in (([str(tmp_path / "none.sqlite")], "no tournament database"),
                      ([str(text)], "not a tournament database"),
                      ([str(a), "--label", "nobody"], "no game of 'nobody'")):
        refused = _run("pooled_tournaments.py", *bad)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
