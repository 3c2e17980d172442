"""Smoke runs of ``cribenv bench`` with a tiny time budget (no timing assertions)."""

from __future__ import annotations

import json
import re

import pytest

from cribenv.cli import main
from train.benchmarks import env as bench_env

NUMBER = r"\d[\d,]*(\.\d+)?"
RATIO = NUMBER + "x"


def test_bench_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--seconds" in out and "--only" in out and "--json" in out


def test_bench_engine_and_env_print_rates_and_ratios(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = main(["bench", "--seconds", "0.05", "--only", "engine", "--only", "env", "-q",
               "--json", str(path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "engine: cribenv.game.Game" in out and "environments: random" in out
    assert "scoring: show score" not in out
    assert re.search(rf"2 players\s+{NUMBER}\s+{NUMBER}", out)
    raw = re.search(rf"cribenv raw AEC \(CribbageEnv\)\s+{NUMBER}\s+{NUMBER}", out)
    wrapped = re.search(
        rf"cribenv wrapped AEC \(cribenv.env\(\)\)\s+{NUMBER}\s+{NUMBER}(?P<rest>.*)", out)
    assert raw and wrapped
    assert re.search(r"single-agent Gymnasium \(learner steps\)\s+" + NUMBER, out)
    data = json.loads(path.read_text())
    envs = data["env"]["envs"]
    assert envs["cribenv_raw"]["steps_per_s"] > 0 and envs["cribenv_wrapped"]["steps_per_s"] > 0
    assert data["engine"]["2p"]["decisions_per_s"] > 0
    for peer in bench_env.PEERS:
        ratio = data["env"]["ratios"]["cribenv_wrapped"][peer]
        if envs[peer] is None:        # not installed here: a note, and n/a in the table
            assert any(peer_label in note for note in data["env"]["notes"]
                       for peer_label in ("leduc", "OpenSpiel"))
            assert ratio is None
        else:
            assert ratio == pytest.approx(envs["cribenv_wrapped"]["steps_per_s"]
                                          / envs[peer]["steps_per_s"])
            assert re.search(RATIO, wrapped.group("rest"))


def test_bench_scoring_prints_ratios_and_the_full_enumeration(capsys):
    assert main(["bench", "--seconds", "0.02", "--only", "scoring", "-q"]) == 0
    out = capsys.readouterr().out
    for label in ("reference scorer", "score_hand_ids", "score_hands (numpy"):
        assert re.search(rf"{re.escape(label)}.*?\s{NUMBER}\s+{RATIO}", out), label
    assert "12,994,800" in out and "check ok" in out
    assert re.search(r"estimated", out)


def test_missing_peers_are_a_note_not_a_crash(monkeypatch, capsys):
    def missing():
        raise ImportError("No module named 'rlcard'")

    envs = [(key, label, missing if key in bench_env.PEERS else factory, kind)
            for key, label, factory, kind in bench_env.ENVS]
    monkeypatch.setattr(bench_env, "ENVS", envs)
    assert main(["bench", "--seconds", "0.02", "--only", "env", "-q"]) == 0
    out = capsys.readouterr().out
    assert "note: skipped PettingZoo leduc_holdem_v4: ImportError" in out
    assert "note: skipped OpenSpiel cribbage" in out
    assert re.search(r"cribenv wrapped AEC.*n/a\s+n/a", out)


def test_bad_seconds_is_an_error(capsys):
    assert main(["bench", "--seconds", "0", "--only", "engine"]) == 2
    assert "--seconds" in capsys.readouterr().err


def test_sections_have_the_documented_shape():
    from train import benchmarks

    names = benchmarks.section_names()
    assert names == ["scoring", "engine", "vector_engine", "jax", "env", "openspiel", "search",
                     "protocol", "sb3", "training", "libraries"]   # by ORDER, then name
    for name in names:
        section = benchmarks.load_section(name)
        assert callable(section.run) and callable(section.report), name
    with pytest.raises(ValueError, match="no benchmark section 'nope'"):
        benchmarks.load_section("nope")


def test_the_protocol_section_measures_the_overhead_beside_a_bare_round_trip(capsys):
    assert main(["bench", "--seconds", "0.2", "--only", "protocol"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"overhead (-?\d+) us a decision .*round trip through the pipes: (\d+) us",
                      out)
    assert found and int(found.group(2)) > 0, out


def test_a_new_section_is_found_by_its_presence(tmp_path, monkeypatch, capsys):
    from train import benchmarks

    (tmp_path / "zz_fake.py").write_text(
        "ORDER = 5\n"
        "def run(seconds, progress):\n"
        "    progress('fake: working')\n"
        "    return {'rate': 2 * seconds}\n"
        "def report(result):\n"
        "    print(f\"fake section: rate {result['rate']}\")\n")
    (tmp_path / "zz_optional.py").write_text(
        "DEFAULT = False\n"
        "def run(seconds, progress):\n"
        "    return {}\n"
        "def report(result):\n"
        "    print('optional section ran')\n")
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(tmp_path)])
    assert benchmarks.section_names()[0] == "zz_fake"                   # ORDER 5 < scoring's 10
    assert "zz_optional" not in benchmarks.section_names(default_only=True)
    path = tmp_path / "out.json"
    rc = main(["bench", "--seconds", "0.5", "--only", "zz_fake", "--json", str(path)])
    assert rc == 0
    captured = capsys.readouterr()
    assert "fake section: rate 1.0" in captured.out and "fake: working" in captured.err
    assert "optional section ran" not in captured.out
    assert json.loads(path.read_text())["zz_fake"] == {"rate": 1.0}


def test_envs_are_seeded_once_then_reset_without_a_seed():
    """As users run an env: reseeding every episode would charge short games (leduc: about 4.6
    steps an episode) a seeding each time and skew the ratios."""
    import cribenv

    seeds = []
    env = cribenv.env()
    reset = env.reset

    def spy(seed=None, options=None):
        seeds.append(seed)
        return reset(seed=seed, options=options)

    env.reset = spy
    runner = bench_env.AECRandomPlay(env, seed=7)     # the warm-up episode seeds the env
    runner.run(0.05)
    assert seeds[0] == 7 and len(seeds) >= 2 and all(s is None for s in seeds[1:])
    assert runner.steps > 0 and runner.episodes == len(seeds) - 1


def test_the_bench_command_is_a_thin_dispatcher():
    """The benchmarks live in their sections; the command only parses and calls."""
    from pathlib import Path

    import train.benchmarks.command as command

    source = Path(command.__file__).read_text()
    assert "def run(" in source and source.count("\n") < 80
    assert "benchmarks.run_sections" in source


def test_bench_runs_beside_another_distributions_top_level_benchmarks(tmp_path):
    """torchrl 0.14's wheel installs a top-level ``benchmarks`` folder (a namespace package),
    which once shadowed ours; cribenv installs no such name now (``train.benchmarks``)."""
    import os
    import subprocess
    import sys

    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "bench_other.py").write_text("")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    code = ("import benchmarks; assert getattr(benchmarks, '__file__', None) is None; "
            "from cribenv.cli import main; raise SystemExit(main(['bench', '--help']))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "vector_engine" in out.stdout and "Traceback" not in out.stderr


def test_the_libraries_section_prints_each_route_and_the_ratio(monkeypatch, capsys):
    """Gymnasium's two routes measured in one run (the other libraries, slower to start,
    are left out here): the batched route is the faster, and the line says by how much."""
    import train.benchmarks.libraries as libraries

    monkeypatch.setattr(libraries, "LIBRARIES", {"Gymnasium": libraries._gymnasium})
    assert main(["bench", "--seconds", "0.3", "--only", "libraries", "-q"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"Gymnasium +per-env +([\d,]+) +batched +([\d,]+) +([\d.]+)x", out)
    assert found, out
    slow, fast = (int(found[i].replace(",", "")) for i in (1, 2))
    assert fast > slow and float(found[3]) == pytest.approx(fast / slow, rel=0.02)


def test_the_jax_section_prints_the_jax_engine_beside_vector_game(monkeypatch, capsys):
    """One small batch (the compile is most of the time): both rates and their ratio."""
    pytest.importorskip("jax")
    import train.benchmarks.jax as bench_jax

    monkeypatch.setattr(bench_jax, "BATCHES", (256,))
    assert main(["bench", "--seconds", "0.1", "--only", "jax", "-q"]) == 0
    out = capsys.readouterr().out
    found = re.search(rf"256\s+({NUMBER})\s+({NUMBER})\s+({RATIO})", out)
    assert found and "VectorGame" in out, out
    jax_rate, numba_rate = (float(found[i].replace(",", "")) for i in (1, 3))
    assert jax_rate > 0 and numba_rate > 0


def test_the_jax_section_skips_in_a_line_without_jax(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "jax", None)        # import jax raises ImportError
    assert main(["bench", "--seconds", "0.05", "--only", "jax", "-q"]) == 0
    out = capsys.readouterr().out
    assert "jax engine: skipped: jax is not installed" in out


def test_the_training_section_prints_the_recipe_on_two_workers_beside_one(capsys):
    """The 2-worker row has no rate a CPU-second (its CPU time is the leader's alone) and the
    ratio line divides the two wall rates."""
    import train.benchmarks.training as training

    one = {"steps_per_s": 9000.0, "steps_per_cpu_s": 9500.0}
    two = {"steps_per_s": 13500.0, "steps_per_cpu_s": None}
    training.report({"net_arch": [128, 128], "sb3": {"steps_per_s": 3000.0,
                                                     "steps_per_cpu_s": 3100.0},
                     "selfplay_recipe_1t": one, "selfplay_recipe_2w": two})
    out = capsys.readouterr().out
    assert re.search(r"the recipe, 2 workers \(processes\) +13,500 +4\.5x +n/a +n/a", out), out
    assert "the recipe on 2 workers: 1.50x its decisions a second (wall) on 1" in out
