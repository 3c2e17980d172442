"""Training: learner env steps per second *including the PPO updates*, the self-play trainer
(:mod:`train.selfplay`, torch on the batched engine) against sb3-contrib MaskablePPO on the
single-agent wrapper (:mod:`train.sb3_trainer`), the same network size, in the same run.

Both train a separate actor and critic MLP of ``NET`` hidden units on the 601-entry observation
with one torch thread (the self-play trainer also with two). Both do 4 PPO epochs; the self-play
trainer is also timed with 1 epoch of 2,048-decision minibatches (the update bounds the rate),
and as the from-rules recipe trains (``train/configs/selfplay-from-rules.json``: the ``keeps``
head with throw values, 128x128, 512 games; at least 20 s, so that it holds several updates;
``scripts/trainer_side_by_side.py`` sets it beside an older commit's trainer).
Each rate is the learner decisions trained on divided by the time of collecting them and
updating on them (wall clock), and the same per second of this process's CPU time
(``process_time``), which is steadier on a busy machine. The self-play trainer's first update
(warm-up) is left out; it runs 256 games with 8-step rollouts (2,048 decisions per update, so
that a short measurement holds many updates).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

ORDER = 60
NET = [128, 128]


RECIPE = Path(__file__).resolve().parent.parent / "train" / "configs" / "selfplay-from-rules.json"


def _selfplay(seconds: float, threads: int, policy: str, n_epochs: int = 4,
              minibatch_size: int = 1024, recipe: bool = False, workers: int = 1
              ) -> dict[str, Any]:
    import csv
    import json

    from train.selfplay import SelfPlayConfig, train

    with tempfile.TemporaryDirectory() as tmp:
        if recipe:   # the from-rules recipe as it trains (its network, rollouts and update)
            settings = {**json.loads(RECIPE.read_text()), "threads": threads,
                        "total_steps": 10**9, "eval_games": 0, "search_table_hands": 0,
                        "workers": workers}
        else:
            settings = {"total_steps": 10**9, "threads": threads, "net_arch": NET,
                        "policy": policy, "n_epochs": n_epochs,
                        "minibatch_size": minibatch_size, "n_steps": 8, "eval_games": 0,
                        "snapshot_every": 10**9}
        config = SelfPlayConfig(**{**settings, "time_limit": seconds,
                                   "checkpoint_every": 10**9})
        train(config, Path(tmp) / "run", progress=False, log=lambda s: None)
        with (Path(tmp) / "run" / "logs" / "progress.csv").open() as f:
            rows = list(csv.DictReader(f))
    timed = rows[1:] or rows
    steps = sum(float(r["samples"]) for r in timed)
    wall = sum(float(r["collect_s"]) + float(r["update_s"]) for r in timed)
    cpu = sum(float(r["cpu_s"]) for r in timed)
    # several workers: cpu_s is the leader's alone, so no rate a CPU-second
    return {"steps_per_s": steps / wall, "steps_per_cpu_s": steps / cpu if workers == 1 else None,
            "steps": steps,
            "updates": len(timed),
            "update_share": sum(float(r["update_s"]) for r in timed) / wall}


def _sb3(seconds: float) -> dict[str, Any]:
    import torch

    from train.config import TrainConfig
    from train.pool import sb3_pool
    from train.sb3_trainer import make_vec_env, new_model

    torch.set_num_threads(1)
    config = TrainConfig(net_arch=NET, threads=1, heuristics=["random"], heuristic_share=1.0)
    env = make_vec_env(config, sb3_pool(config, seed=0), seed=0)
    model = new_model(config, env)
    model.learn(config.rollout_steps)           # warm up
    start, cpu, steps = time.perf_counter(), time.process_time(), model.num_timesteps
    while time.perf_counter() - start < seconds:
        model.learn(config.rollout_steps, reset_num_timesteps=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    done = model.num_timesteps - steps
    return {"steps_per_s": done / wall, "steps_per_cpu_s": done / cpu, "steps": done,
            "note": "opponent: the random bot (the cheapest; the pool's snapshots and bots cost "
                    "more)"}


def run(seconds: float, progress) -> dict[str, Any]:
    results: dict[str, Any] = {"net_arch": NET}
    # the self-play runs first: in one measurement they ran several times slower after SB3
    # had trained in the same process (not understood; a fresh process does not show it)
    for threads in (1, 2):
        progress(f"training: self-play PPO, {threads} torch thread(s)")
        results[f"selfplay_{threads}t"] = _selfplay(seconds, threads, "mlp")
    progress("training: self-play PPO, per-card head")
    results["selfplay_cards_1t"] = _selfplay(seconds, 1, "cards")
    progress("training: self-play PPO, the from-rules recipe (keeps head, throw values)")
    results["selfplay_recipe_1t"] = _selfplay(max(seconds, 20.0), 1, "keeps", recipe=True)
    progress("training: self-play PPO, the from-rules recipe on 2 workers (processes)")
    results["selfplay_recipe_2w"] = _selfplay(max(seconds, 20.0), 1, "keeps", recipe=True,
                                              workers=2)
    progress("training: self-play PPO, 1 epoch of 2,048-decision minibatches")
    results["selfplay_1epoch_1t"] = _selfplay(seconds, 1, "mlp", n_epochs=1, minibatch_size=2048)
    try:
        progress("training: sb3-contrib MaskablePPO (reference)")
        results["sb3"] = _sb3(seconds)
    except ImportError as exc:  # sb3-contrib is an extra
        results["sb3"] = {"skipped": f"not installed: {exc}"}
    return results


def report(res: dict[str, Any]) -> None:
    print(f"training: learner env steps/s including PPO updates, actor and critic MLP "
          f"{res['net_arch']}")
    base = res["sb3"].get("steps_per_s")
    base_cpu = res["sb3"].get("steps_per_cpu_s")
    print(f"  {'trainer':<42}{'steps/s':>10}{'x sb3':>8}{'steps/cpu-s':>13}{'x sb3':>8}")
    labels = {"sb3": "sb3-contrib MaskablePPO, 1 thread",
              "selfplay_1t": "self-play (train.selfplay), 1 thread",
              "selfplay_2t": "self-play, 2 threads",
              "selfplay_cards_1t": "self-play, per-card head, 1 thread",
              "selfplay_recipe_1t": "self-play, the from-rules recipe, 1 thread",
              "selfplay_recipe_2w": "self-play, the recipe, 2 workers (processes)",
              "selfplay_1epoch_1t": "self-play, 1 epoch (minibatch 2,048), 1 thread"}
    for key, label in labels.items():
        r = res.get(key, {})
        if "skipped" in r or not r:
            print(f"  {label:<42}{'n/a':>10}  {r.get('skipped', '')}")
            continue
        ratio = f"{r['steps_per_s'] / base:.1f}x" if base else "n/a"
        per_cpu = r["steps_per_cpu_s"]
        ratio_cpu = f"{per_cpu / base_cpu:.1f}x" if base_cpu and per_cpu else "n/a"
        print(f"  {label:<42}{r['steps_per_s']:>10,.0f}{ratio:>8}"
              f"{f'{per_cpu:,.0f}' if per_cpu else 'n/a':>13}{ratio_cpu:>8}")
    one, two = res.get("selfplay_recipe_1t", {}), res.get("selfplay_recipe_2w", {})
    if one.get("steps_per_s") and two.get("steps_per_s"):
        print(f"  the recipe on 2 workers: {two['steps_per_s'] / one['steps_per_s']:.2f}x its "
              f"decisions a second (wall) on 1")
