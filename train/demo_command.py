"""``cribenv demo``: the README's main job, a tour of about a minute on 2 cores.

1. score a hand with its breakdown; 2. rank the discards of a deal; 3. a bot game (expert vs
greedy); 4. self-play PPO from scratch on the batched engine (``train/demo.py``,
``train/selfplay.py``) with its win rate against greedy as it rises, and its learning curve;
5. a duplicate tournament of that agent, the shipped one and the heuristic bots. Optional
(``--sb3-steps``): the shipped agent's recipe scaled down (a paired-rollout fit, then SB3 PPO
from it), which adds minutes.

Every run writes to a fresh folder (``runs/demo-YYYYmmdd-HHMMSS``, or ``--run-dir``) and ends
with the list of the files it wrote. ``--resume`` continues a demo that was stopped (the
newest one, or ``--run-dir``'s) with the sizes it was started with.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from cribenv import cards
from cribenv.checks import int_arg, writable_dir
from cribenv.files import write_text

SETTINGS_FILE = "demo.json"
RUNS = Path("runs")
# how long the tour takes, as the README and the install page say it (measured: 57 s with the
# batched engine compiled, 41 s with it cached, on 2 cores with another job busy on one)
DURATION = "about a minute on 2 cores"
# the self-play part of it, the default --scratch-steps (measured: 46 s and 34 s of the above)
TRAINING = "30-50 s"

# the sizes of the tour (stored in the run folder: a resumed demo keeps them)
SIZES = {"scratch_steps": 300_000, "evals": 6, "eval_games": 100, "games": 60,
         "sb3_steps": 0, "rollout_games": 400, "bc_games": 300, "seed": 0}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        f"A tour of {DURATION}: scoring a hand, discard advice, a bot game, "
        f"self-play PPO from scratch on the batched engine ({TRAINING}: its win rate "
        "against greedy printed as it rises, and a learning curve), and a small duplicate "
        "tournament of that agent, the shipped one and the heuristic bots. The first run "
        "after an install also compiles the batched engine (15-60 s, cached after). Each run "
        "writes to a fresh folder, runs/demo-YYYYmmdd-HHMMSS (or --run-dir): demo.json, "
        "learning_curve.png, selfplay/ (the training run: policy, evaluations, logs, "
        "checkpoints) and tournament.sqlite/.png/.json/.csv, and ends with the list of the "
        "files it wrote.")
    parser.epilog = ("Examples: cribenv demo; cribenv demo --run-dir runs/mine; after a stop: "
                     "cribenv demo --resume (the newest demo) or cribenv demo --run-dir "
                     "runs/mine --resume. The sizes above are stored in the folder's "
                     f"{SETTINGS_FILE}; a resumed demo keeps them.")
    parser.add_argument("--run-dir", "--out", dest="run_dir", metavar="DIR",
                        help="output folder, new or empty (default: a fresh "
                             "runs/demo-YYYYmmdd-HHMMSS)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the demo in --run-dir (default: the newest "
                             "runs/demo-*) where it stopped, with its stored sizes")
    parser.add_argument("--scratch-steps", type=int_arg(0), metavar="N",
                        help=f"self-play PPO learner steps from scratch ({SIZES['scratch_steps']}"
                             f", the tour's {TRAINING}; 0 skips the training)")
    parser.add_argument("--evals", type=int_arg(1), metavar="N",
                        help=f"evaluations against greedy during the training "
                             f"({SIZES['evals']}, plus one of the final policy)")
    parser.add_argument("--eval-games", type=int_arg(0), metavar="N",
                        help=f"games of each evaluation, even ({SIZES['eval_games']})")
    parser.add_argument("--games", type=int_arg(2), metavar="N",
                        help=f"tournament games per pair, even ({SIZES['games']})")
    parser.add_argument("--sb3-steps", "--train-steps", dest="sb3_steps", type=int_arg(0),
                        metavar="N",
                        help="optional: SB3 PPO steps of the shipped agent's recipe, scaled "
                             "down (0: skipped; 40000 adds minutes)")
    parser.add_argument("--rollout-games", type=int_arg(1), metavar="N",
                        help=f"with --sb3-steps and an 'expert-prior' recipe: games of paired "
                             f"rollouts fitted before PPO ({SIZES['rollout_games']})")
    parser.add_argument("--bc-games", type=int_arg(0), metavar="N",
                        help=f"with --sb3-steps and an 'mlp' recipe: expert games imitated "
                             f"before PPO ({SIZES['bc_games']})")
    parser.add_argument("--seed", type=int_arg(0), metavar="N", help="seed (0)")
    parser.add_argument("--workers", type=int_arg(1), default=os.cpu_count() or 1,
                        metavar="N", help="tournament processes (default: all cores)")
    parser.add_argument("--threads", type=int_arg(1), default=1, metavar="N",
                        help="torch threads for the optional SB3 step (1)")


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def fresh_run_dir(runs: Path = RUNS, now: float | None = None) -> Path:
    """A folder name for a new demo, ``runs/demo-YYYYmmdd-HHMMSS`` (``-2``, ``-3``, ... if
    taken).

    >>> fresh_run_dir(Path("runs"), now=0).name.startswith("demo-1970")
    True
    """
    stem = runs / time.strftime("demo-%Y%m%d-%H%M%S", time.localtime(now))
    path, n = stem, 1
    while path.exists():
        n += 1
        path = stem.with_name(f"{stem.name}-{n}")
    return path


def newest_demo(runs: Path = RUNS) -> Path | None:
    """The most recently started demo folder under ``runs`` (by its stored settings)."""
    found = sorted((p.parent for p in runs.glob(f"demo-*/{SETTINGS_FILE}")),
                   key=lambda p: (p / SETTINGS_FILE).stat().st_mtime)
    return found[-1] if found else None


def open_run_dir(args: argparse.Namespace) -> tuple[Path, dict, bool]:
    """(folder, sizes, resumed) for this run; ``ValueError`` (exit status 2) for a folder that
    holds files without ``--resume``, or a ``--resume`` with nothing to resume or with sizes
    that differ from the stored ones."""
    given = {k: getattr(args, k) for k in SIZES if getattr(args, k) is not None}
    if not args.resume:
        run_dir = Path(args.run_dir) if args.run_dir else fresh_run_dir()
        if run_dir.is_dir() and any(run_dir.iterdir()):
            raise ValueError(f"--run-dir {str(run_dir)!r} already holds files: add --resume to "
                             f"continue the demo there, or name a new folder")
        writable_dir(run_dir, "--run-dir")
        sizes = {**SIZES, **given}
        for key in ("eval_games", "games"):
            if sizes[key] % 2:
                raise ValueError(f"--{key.replace('_', '-')} must be even (duplicate deals: "
                                 f"each played twice), got {sizes[key]}")
        run_dir.mkdir(parents=True, exist_ok=True)
        write_text(run_dir / SETTINGS_FILE, json.dumps(sizes, indent=2) + "\n")
        return run_dir, sizes, False
    run_dir = Path(args.run_dir) if args.run_dir else newest_demo()
    if run_dir is None:
        raise ValueError(f"--resume: there is no demo to resume under {RUNS}/ (run "
                         f"'cribenv demo' first, or name one with --run-dir)")
    settings = run_dir / SETTINGS_FILE
    try:
        stored = json.loads(settings.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--resume: {str(run_dir)!r} is not a demo folder ({settings} cannot "
                         f"be read: {exc})") from None
    if not isinstance(stored, dict) or set(stored) != set(SIZES):
        raise ValueError(f"--resume: {settings} is not a demo's settings file")
    changed = [f"--{k.replace('_', '-')} {v} (the demo has {stored[k]})"
               for k, v in given.items() if v != stored[k]]
    if changed:
        raise ValueError(f"--resume keeps the sizes the demo in {run_dir} was started with; "
                         f"refused: {', '.join(changed)}. Start a new demo to change them")
    writable_dir(run_dir, "--run-dir")
    return run_dir, stored, True


def run(args: argparse.Namespace) -> int:
    run_dir, sizes, resumed = open_run_dir(args)
    started = time.perf_counter()
    timings: list[tuple[str, float]] = []
    if resumed:
        print(f"cribenv demo: resuming the demo in {run_dir} (a finished step is not redone)")
    else:
        print(f"cribenv demo: a tour of {DURATION}, writing to {run_dir}")

    n = _basics(sizes["seed"])
    timings.append(("scoring, discards, a game", time.perf_counter() - started))
    specs = []
    if sizes["scratch_steps"] > 0:
        n += 1
        t = time.perf_counter()
        policy = _scratch(n, run_dir, sizes)
        timings.append(("self-play PPO from scratch", time.perf_counter() - t))
        if policy is not None:
            specs.append(f"scratch=ppo:{policy}")
    if sizes["sb3_steps"] > 0:
        n += 1
        t = time.perf_counter()
        policy = _sb3(n, run_dir, sizes, args)
        timings.append(("SB3 recipe", time.perf_counter() - t))
        if policy is not None:
            specs.append(f"demo=ppo:{policy}")
    from agents.ppo import SHIPPED_POLICY

    if SHIPPED_POLICY.is_file():
        specs.append("shipped=ppo:shipped")
    specs += ["random", "greedy", "expert"]
    t = time.perf_counter()
    _tournament(n + 1, run_dir, specs, sizes, args.workers)
    timings.append(("tournament", time.perf_counter() - t))

    total = time.perf_counter() - started
    print(f"\ndemo finished in {total:.0f} s (" +
          ", ".join(f"{name} {s:.0f} s" for name, s in timings) + ")")
    files = written_files(run_dir)
    since = ", by this run and the one it resumed" if resumed else ""
    print(f"\nfiles written ({len(files)}, under {run_dir}{since}):")
    for path in files:
        note = NOTES.get(path.relative_to(run_dir).as_posix())
        print(f"  {path}" + (f"   {note}" if note else ""))
    return 0


# what the closing list says about the main files (the rest are the runs' logs and snapshots)
NOTES = {
    SETTINGS_FILE: "the demo's sizes (--resume keeps them)",
    "learning_curve.png": "self-play from scratch: win rate and net points against greedy",
    "selfplay/policy.safetensors": "the self-play agent: cribenv play --bot ppo:THIS",
    "selfplay/eval.csv": "its evaluations against greedy",
    "selfplay/training.png": "win rate over minutes, entropy, KL, value loss, steps/s",
    "tournament.png": "win rates and ratings with 95% intervals",
    "tournament.sqlite": "every tournament game (cribenv serve --tournament-db THIS)",
    "ppo/policy.safetensors": "the SB3 recipe's agent",
}


def written_files(run_dir: Path) -> list[Path]:
    """Every file under ``run_dir``, sorted (all of them written by the demo: it starts in a
    new or empty folder)."""
    return sorted(p for p in run_dir.rglob("*") if p.is_file())


def _basics(seed: int) -> int:
    """Sections 1-3 (scoring, discards, a bot game); returns the number of the last one."""
    from agents import make_agent
    from agents.arena import play_game
    from cribenv.discard import analyse_discards
    from cribenv.game import Rules
    from cribenv.scoring import score_hand_breakdown

    _section("1. Scoring: 5C 5D 5S JH with the 5H turned (the 29 hand)")
    print(score_hand_breakdown(cards.parse_many("5C 5D 5S JH"), cards.parse("5H")))

    _section("2. Discards: you deal 5H 5S JD 6C 4H KD (exact expected values)")
    for opt in analyse_discards(cards.parse_many("5H 5S JD 6C 4H KD"), is_dealer=True)[:3]:
        print(f"  throw {cards.to_str_many(opt.throw)}  keep {cards.to_str_many(opt.keep)}: "
              f"hand {opt.hand_ev:.2f} + crib {opt.crib_ev:.2f} = {opt.expected:.2f}")

    _section("3. A game: expert (seat 0) against greedy (seat 1)")
    result = play_game([make_agent("expert", seed=1), make_agent("greedy", seed=2)],
                       Rules(), seed=seed)
    names = ["expert", "greedy"]
    for seat in (0, 1):
        print(f"  {names[seat]:<7} {result.scores[seat]:>3} points: pegging "
              f"{result.pegging[seat]}, hands {result.hand[seat]}, cribs {result.crib[seat]}")
    print(f"  {names[result.winner]} wins after {result.hands} hands "
          f"({result.game_points} game point(s))")
    return 3


def _scratch(number: int, out: Path, sizes: dict) -> Path | None:
    """Self-play PPO from scratch, evaluated against greedy on the way; its learning curve."""
    run_dir = out / "selfplay"
    steps = sizes["scratch_steps"]
    try:
        from train.demo import (
            eval_rows,
            plot_demo_curve,
            selfplay_config,
            train_from_scratch,
            trained_steps,
            warm_up_engine,
        )
    except ImportError as exc:
        _section(f"{number}. Self-play PPO from scratch")
        print(f"  skipped: training needs the 'train' extra ({exc})")
        return None
    done = trained_steps(run_dir)
    if done == 0 and run_dir.exists():
        shutil.rmtree(run_dir)   # stopped before its first checkpoint: start it again
    where = f"run folder {run_dir}"
    if done >= steps:
        where += f"; already trained: {done:,} steps"
    elif done:
        where += f"; resumed at step {done:,}"
    _section(f"{number}. Self-play PPO from scratch: {steps:,} learner steps ({where})")
    print("  The network starts from random weights and learns by playing itself (and\n"
          "  snapshots of itself) on the batched engine; about every "
          f"{steps // sizes['evals']:,} steps it plays\n"
          f"  {sizes['eval_games']} duplicate games against greedy (the bar shows the latest "
          "win rate).")
    print("  preparing the batched engine (compiled on the first run after an install, 15-60 "
          "s;\n  loaded from numba's cache after) ...", end=" ", flush=True)
    print(f"ready in {warm_up_engine(sizes['seed']):.0f} s")
    config = selfplay_config(steps, sizes["evals"], sizes["eval_games"], sizes["seed"])
    policy = train_from_scratch(run_dir, config, resume=done > 0, log=lambda s: print(" ", s))
    rows = eval_rows(run_dir)
    for row in rows:
        print(f"  after {int(row['step']):>9,} steps: "
              f"{100 * float(row['greedy_win_rate']):5.1f}% of games against greedy "
              f"[{100 * float(row['greedy_win_lo']):.1f}, "
              f"{100 * float(row['greedy_win_hi']):.1f}], "
              f"{float(row['greedy_net_points']):+.2f} net points a game")
    if rows:
        print(f"  learning curve: {plot_demo_curve(rows, out / 'learning_curve.png')}")
    return policy


def _sb3(number: int, out: Path, sizes: dict, args: argparse.Namespace) -> Path | None:
    """Optional: the shipped agent's recipe scaled down (a fit, then SB3 PPO from it)."""
    run_dir = out / "ppo"
    steps = sizes["sb3_steps"]
    try:
        from train.checkpoints import has_checkpoint
        from train.config import TrainConfig
        from train.sb3_trainer import train
    except ImportError as exc:
        _section(f"{number}. The shipped agent's recipe, scaled down")
        print(f"  skipped: training needs the 'train' extra ({exc})")
        return None
    resume = has_checkpoint(run_dir)
    if run_dir.exists() and not resume:
        shutil.rmtree(run_dir)   # stopped before its first checkpoint: start it again
    _section(f"{number}. The shipped agent's recipe, scaled down: SB3 PPO, {steps:,} steps "
             f"(run folder {run_dir}{'; resumed' if resume else ''})")
    from train.demo import shipped_recipe

    settings = shipped_recipe()
    if settings.get("policy", "mlp") == "mlp":
        settings.update(bc_games=sizes["bc_games"], bc_epochs=4)
    elif settings.get("init_policy"):
        init = out / "rollouts.safetensors"
        if not resume:
            print(f"  fitting the card network to {sizes['rollout_games']} games of paired "
                  f"rollouts (cribenv rollouts)")
            from train.rollouts import fit_rollouts

            fit_rollouts(sizes["rollout_games"], init, workers=args.workers,
                         seed=sizes["seed"], log=lambda s: print(" ", s))
        settings["init_policy"] = str(init)
    settings.update(total_steps=steps, threads=args.threads, seed=sizes["seed"], n_games=16,
                    eval_every=max(steps // 2, 1), eval_games=40,
                    snapshot_every=max(steps // 4, 1), checkpoint_every=max(steps // 4, 1))
    policy = train(TrainConfig.from_dict(settings), run_dir, resume=resume)
    print(f"  learning curve: {run_dir / 'learning_curve.png'}")
    return policy


def _tournament(number: int, out: Path, specs: list[str], sizes: dict, workers: int) -> None:
    from cribenv.game import Rules
    from tournament import run_tournament

    pairs = len(specs) * (len(specs) - 1) // 2
    _section(f"{number}. Duplicate tournament: {len(specs)} agents, {sizes['games']} games "
             f"per pair ({pairs * sizes['games']:,} games)")
    report = run_tournament(specs, sizes["games"], workers=workers,
                            db_path=out / "tournament.sqlite", seed=sizes["seed"],
                            rules=Rules())
    print(report.format())
    report.save(out)
