"""The self-play trainer of this tree beside the trainer of an older commit, on the same machine
in the same run: decisions learnt per second for one config (the from-rules recipe by
default), each trainer in its own process with one torch thread, runs interleaved so that a
change of load hits both alike.

The older trainer runs from a git worktree of ``--old`` (made in a temporary folder and
removed after). Each run trains ``--steps`` learner decisions with the config's settings but
no evaluation, checkpoint or search table; its ``logs/progress.csv`` gives the rate: the
decisions of every round but the first (warm-up: numba and torch start) over their collection
and update time (``wall``), and over this process's CPU time (``cpu``: one core's worth of
work, steadier on a busy machine; with ``"workers": N`` in ``--new-settings``, the wall time
times N: the cores the run holds). The first rounds' losses are printed side by side: with
the same learning per decision they agree (up to float rounding).

    python scripts/trainer_side_by_side.py --old 6f034a7 --steps 300000 --repeats 3

Output: a table per run and the median ratio new/old, also written to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUNNER = r"""
import json, sys
from train.selfplay import SelfPlayConfig, train
settings = json.loads(sys.argv[1])
train(SelfPlayConfig(**settings), sys.argv[2], progress=False, log=lambda s: None)
"""


def _settings(config: Path, steps: int) -> dict:
    settings = json.loads(config.read_text())
    settings.update(total_steps=steps, eval_games=0, time_limit=0, checkpoint_every=10**9,
                    search_table_hands=0, threads=1, engine_threads=1)
    return settings


def _run(tree: Path, settings: dict, run_dir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", RUNNER, json.dumps(settings), str(run_dir)],
                   cwd=tree, env=env, check=True)
    with (run_dir / "logs" / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    timed = rows[1:] or rows
    steps = sum(float(r["samples"]) for r in timed)
    wall = sum(float(r["collect_s"]) + float(r["update_s"]) for r in timed)
    # several processes (workers): cpu_s is the leader's alone; the run holds a core each
    workers = settings.get("workers", 1)
    cpu = (sum(float(r["cpu_s"]) for r in timed) if workers == 1 else wall * workers)
    collect = sum(float(r["collect_s"]) for r in timed)
    return {"steps": steps, "per_s": steps / wall, "per_cpu_s": steps / cpu,
            "collect_share": collect / wall,
            "policy_loss": [float(r["policy_loss"]) for r in rows[:4]],
            "value_loss": [float(r["value_loss"]) for r in rows[:4]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="6f034a7",
                        help="the commit of the older trainer (default 6f034a7)")
    parser.add_argument("--config", type=Path,
                        default=ROOT / "train" / "configs" / "selfplay-from-rules.json",
                        help="the self-play config both run (default: the from-rules recipe)")
    parser.add_argument("--steps", type=int, default=300_000,
                        help="learner decisions a run trains (default 300,000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each trainer")
    parser.add_argument("--new-settings", type=json.loads, default={}, metavar="JSON",
                        help="settings this tree's runs take on top of the config, e.g. "
                             "'{\"minibatch_size\": 4096}' (a lever to measure)")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        parser.error("--steps and --repeats must be positive")
    if not isinstance(args.new_settings, dict):
        parser.error(f"--new-settings must be a JSON object, got {args.new_settings!r}")
    settings = _settings(args.config, args.steps)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip()
    results: dict[str, list[dict]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old_tree),
                        args.old], cwd=ROOT, check=True)
        try:
            for i in range(args.repeats):
                for name, tree in (("old", old_tree), ("new", ROOT)):
                    run_settings = {**settings, **(args.new_settings if name == "new" else {})}
                    r = _run(tree, run_settings, Path(tmp) / f"{name}-{i}")
                    results[name].append(r)
                    print(f"run {i + 1}/{args.repeats} {name:>3}: {r['per_s']:>8,.0f} decisions/s"
                          f" wall, {r['per_cpu_s']:>8,.0f} per CPU-second, collection "
                          f"{100 * r['collect_share']:.0f}% of the time", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT)
    summary = {}
    for key in ("per_s", "per_cpu_s"):
        old = statistics.median(r[key] for r in results["old"])
        new = statistics.median(r[key] for r in results["new"])
        summary[key] = {"old": old, "new": new, "ratio": new / old}
    print(f"\nconfig {args.config.name}, {args.steps:,} decisions a run, {args.repeats} runs each;"
          f" old {args.old}, new {commit}"
          + (f" with {json.dumps(args.new_settings)}" if args.new_settings else ""))
    print(f"{'':<24}{'old':>10}{'new':>10}{'new/old':>9}")
    for key, label in (("per_s", "decisions/s (wall)"), ("per_cpu_s", "decisions/CPU-second")):
        s = summary[key]
        print(f"{label:<24}{s['old']:>10,.0f}{s['new']:>10,.0f}{s['ratio']:>8.2f}x")
    print("\nfirst rounds' losses (the same learning per decision agrees up to float rounding):")
    for name in ("old", "new"):
        r = results[name][0]
        print(f"  {name}: policy {[f'{x:.5f}' for x in r['policy_loss']]}, "
              f"value {[f'{x:.4f}' for x in r['value_loss']]}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"old": args.old, "new": commit, "steps": args.steps,
                                        "new_settings": args.new_settings,
                                        "config": args.config.name, "runs": results,
                                        "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
