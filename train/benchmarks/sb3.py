"""SB3: ``MaskablePPO``'s rollout collection (env steps/s, the policy's forward passes
included) on the batched engine's ``VecEnv`` (:class:`cribenv.integrations.sb3.BatchedVecEnv`)
against the per-env route (``DummyVecEnv`` of the single-agent env), the same policy network, in
the same run; one PPO update over the collected batch is timed apart. One torch thread, a
random opponent, 2 players to 121.
"""

from __future__ import annotations

import time
from typing import Any

from train.benchmarks._timing import fmt_rate, fmt_ratio

ORDER = 60
DEFAULT = False          # needs the 'train' extra; run it with cribenv bench --only sb3
GOAL = 50_000            # env steps/s of collection through the batched route
N_STEPS = 32


def _model(env: Any) -> Any:
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=N_STEPS, batch_size=512, n_epochs=1, seed=0,
                       device="cpu", verbose=0)


def _collect_rate(env: Any, seconds: float) -> tuple[float, float]:
    """(env steps/s of collection, seconds of one update over a rollout)."""
    from stable_baselines3.common.callbacks import CallbackList

    model = _model(env)
    _, callback = model._setup_learn(10**9, CallbackList([]))
    callback.on_training_start(locals(), globals())
    model.collect_rollouts(env, callback, model.rollout_buffer, N_STEPS)   # warm up
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        model.collect_rollouts(env, callback, model.rollout_buffer, N_STEPS)
        steps += N_STEPS * env.num_envs
    rate = steps / (time.perf_counter() - start)
    t0 = time.perf_counter()
    model.train()
    return rate, time.perf_counter() - t0


def run(seconds: float, progress: Any) -> dict[str, Any]:
    try:
        import torch
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ModuleNotFoundError as exc:   # pragma: no cover - the extra is missing
        return {"skipped": f"needs {exc.name} (the 'train' extra)"}
    from cribenv.integrations.sb3 import BatchedVecEnv
    from cribenv.wrappers import SingleAgentCribbageEnv

    torch.set_num_threads(1)
    result: dict[str, Any] = {}
    progress("sb3: the per-env route (DummyVecEnv, 16 envs)")
    dummy = DummyVecEnv([lambda i=i: SingleAgentCribbageEnv(opponent="random", seed=i)
                         for i in range(16)])
    result["dummy16"] = _collect_rate(dummy, seconds)
    dummy.close()
    for n in (16, 256):
        progress(f"sb3: the batched route ({n} games)")
        env = BatchedVecEnv(num_envs=n, opponent="random", seed=0)
        result[f"batched{n}"] = _collect_rate(env, seconds)
        env.close()
    return result


def report(res: dict[str, Any]) -> None:
    print("SB3 MaskablePPO: rollout collection, env steps/s (policy included; one torch thread)")
    if "skipped" in res:
        print(f"  skipped: {res['skipped']}")
        return
    base = res["dummy16"][0]
    rows = [("DummyVecEnv, 16 single envs", "dummy16"),
            ("BatchedVecEnv, 16 games", "batched16"), ("BatchedVecEnv, 256 games", "batched256")]
    for label, key in rows:
        rate, update = res[key]
        print(f"  {label:<30}{fmt_rate(rate):>10} steps/s {fmt_ratio(rate / base):>8}"
              f"   update over {N_STEPS} steps: {update:.2f} s")
    best = res["batched256"][0]
    print(f"  the batched route at 256 games: {fmt_rate(best)} steps/s "
          f"({'meets' if best >= GOAL else 'misses'} the goal of {GOAL:,})")
