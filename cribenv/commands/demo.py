"""``cribenv demo``: the README's main job, end to end.

1. score a hand with its breakdown; 2. rank the discards of a deal; 3. a bot game (expert vs
greedy); 4. self-play PPO from scratch on the batched engine (``train/selfplay.py``), its win
rate against greedy printed as it rises; 5. the shipped agent's recipe, scaled down: a
paired-rollout fit of the expert-prior card network, then a short SB3 PPO run from it (resumed
if the run folder already holds one); 6. a duplicate tournament of those agents and the
shipped one against the heuristic baselines.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from cribenv import cards


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("A quick tour: scoring, discard advice, a bot game, a short self-play "
                          "PPO training run and a duplicate tournament against the baselines.")
    parser.add_argument("--out", default="runs/demo", help="output folder (runs/demo)")
    parser.add_argument("--scratch-steps", type=int, default=400_000,
                        help="self-play PPO steps from scratch on the batched engine (400000, "
                             "about 2 minutes; 0 skips it)")
    parser.add_argument("--train-steps", type=int, default=40_000,
                        help="SB3 PPO steps for the rollout-fitted agent (40000; 0 skips it)")
    parser.add_argument("--rollout-games", type=int, default=400,
                        help="with an 'expert-prior' recipe: games of paired rollouts fitted "
                             "before PPO (400)")
    parser.add_argument("--bc-games", type=int, default=300,
                        help="with an 'mlp' recipe: expert games imitated before PPO (300; 0: "
                             "PPO from scratch)")
    parser.add_argument("--games", type=int, default=400,
                        help="tournament games per pair, even (400)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="tournament processes (all cores)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads for training (all cores)")
    parser.add_argument("--seed", type=int, default=0, help="seed (0)")


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def run(args: argparse.Namespace) -> int:
    from agents import make_agent
    from agents.arena import play_game
    from cribenv.discard import analyse_discards
    from cribenv.game import Rules
    from cribenv.scoring import score_hand_breakdown

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    _section("1. Scoring: 5C 5D 5S JH with the 5H turned (the 29 hand)")
    print(score_hand_breakdown(cards.parse_many("5C 5D 5S JH"), cards.parse("5H")))

    _section("2. Discards: you deal 5H 5S JD 6C 4H KD (exact expected values)")
    for opt in analyse_discards(cards.parse_many("5H 5S JD 6C 4H KD"), is_dealer=True)[:3]:
        print(f"  throw {cards.to_str_many(opt.throw)}  keep {cards.to_str_many(opt.keep)}: "
              f"hand {opt.hand_ev:.2f} + crib {opt.crib_ev:.2f} = {opt.expected:.2f}")

    _section("3. A game: expert (seat 0) against greedy (seat 1)")
    result = play_game([make_agent("expert", seed=1), make_agent("greedy", seed=2)],
                       Rules(), seed=args.seed)
    names = ["expert", "greedy"]
    for seat in (0, 1):
        print(f"  {names[seat]:<7} {result.scores[seat]:>3} points: pegging "
              f"{result.pegging[seat]}, hands {result.hand[seat]}, cribs {result.crib[seat]}")
    print(f"  {names[result.winner]} wins after {result.hands} hands "
          f"({result.game_points} game point(s))")

    specs = []
    if args.scratch_steps > 0:
        scratch = _scratch_run(args, out)
        if scratch is not None:
            specs.append(f"scratch=ppo:{scratch}")
    if args.train_steps > 0:
        _section(f"5. Rollout fit + SB3 PPO: {args.train_steps:,} steps (run folder "
                 f"{out / 'ppo'})")
        try:
            from train.config import TrainConfig
            from train.sb3_trainer import train
        except ImportError as exc:
            print(f"  skipped: training needs the 'train' extra ({exc})")
        else:
            run_dir = out / "ppo"
            # the rollout + PPO recipe (train/configs/rollout-ppo.json), scaled down
            recipe = Path(__file__).resolve().parents[2] / "train" / "configs" / "rollout-ppo.json"
            settings = json.loads(recipe.read_text()) if recipe.is_file() else {}
            if settings.get("policy", "mlp") == "mlp":
                settings.update(bc_games=args.bc_games, bc_epochs=4)
            elif settings.get("init_policy"):
                init = out / "rollouts.safetensors"
                if not (run_dir / "checkpoints" / "LATEST").exists():
                    print(f"  fitting the card network to {args.rollout_games} games of paired "
                          f"rollouts (cribenv rollouts)")
                    from train.rollouts import fit_rollouts

                    fit_rollouts(args.rollout_games, init, workers=args.workers, seed=args.seed,
                                 log=lambda s: print(" ", s))
                settings["init_policy"] = str(init)
            settings.update(total_steps=args.train_steps, threads=args.threads, seed=args.seed,
                            n_envs=16,
                            eval_every=max(args.train_steps // 2, 1), eval_games=40,
                            snapshot_every=max(args.train_steps // 4, 1),
                            checkpoint_every=max(args.train_steps // 4, 1))
            config = TrainConfig.from_dict(settings)
            resume = (run_dir / "checkpoints" / "LATEST").exists()
            policy = train(config, run_dir, resume=resume)
            specs.append(f"demo=ppo:{policy}")
            print(f"  learning curve: {run_dir / 'learning_curve.png'}")
    from agents.ppo import SHIPPED_POLICY

    if SHIPPED_POLICY.is_file():
        specs.append("shipped=ppo:shipped")
    specs += ["random", "greedy", "expert"]

    _section(f"6. Duplicate tournament: {args.games} games per pair")
    from agents.tournament import run_tournament

    db = out / "tournament.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)   # the demo agent may have changed
    report = run_tournament(specs, args.games, workers=args.workers, db_path=db,
                            seed=args.seed, rules=Rules())
    print(report.format())
    for path in report.save(out):
        print(f"  wrote {path}")
    print(f"\ndemo finished in {time.perf_counter() - started:.0f} s")
    return 0


def _scratch_run(args: argparse.Namespace, out: Path) -> Path | None:
    """Step 4: self-play PPO from scratch, evaluated against greedy four times on the way."""
    run_dir = out / "selfplay"
    _section(f"4. Self-play PPO from scratch: {args.scratch_steps:,} steps (run folder {run_dir})")
    try:
        from train.selfplay import SelfPlayConfig, train
    except ImportError as exc:
        print(f"  skipped: training needs the 'train' extra ({exc})")
        return None
    every = max(args.scratch_steps // 4, 1)
    config = SelfPlayConfig(total_steps=args.scratch_steps, seed=args.seed,
                            threads=1, eval_every=every, eval_games=100,
                            heuristics=["greedy"], snapshot_every=every, checkpoint_every=every)
    resume = (run_dir / "checkpoints" / "LATEST").exists()
    print("  (the batched engine compiles on its first use, about half a minute, then is cached)")
    policy = train(config, run_dir, resume=resume, progress=False, log=lambda s: print(" ", s))
    import csv

    with (run_dir / "eval.csv").open() as f:
        for row in csv.DictReader(f):
            print(f"  after {int(row['step']):>9,} steps: "
                  f"{100 * float(row['greedy_win_rate']):5.1f}% of games against greedy "
                  f"[{100 * float(row['greedy_win_lo']):.1f}, "
                  f"{100 * float(row['greedy_win_hi']):.1f}]")
    print(f"  learning curve: {run_dir / 'learning_curve.png'}")
    return policy
