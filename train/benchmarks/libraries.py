"""Every RL library through its per-env route and through its route on the batched engine, in
one run: steps (a learner's decisions; TorchRL: frames) a second, and the ratio.

* **Gymnasium**: ``SyncVectorEnv`` of 16 ``SingleAgentCribbageEnv`` against
  ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` with 256 games; random
  legal cards (no policy).
* **SB3**: ``MaskablePPO``'s rollout collection, the policy included: ``DummyVecEnv`` of 16
  envs against ``BatchedVecEnv`` of 256 games (the ``sb3`` section's measurement).
* **TorchRL**: ``env.rollout`` with the same masked MLP policy (64 units): the PettingZoo route
  (:func:`cribenv.integrations.torchrl.make_env`, one game) against ``BatchedCribbageEnv``
  of 256 games.
* **Tianshou**: ``Collector`` with Tianshou's masked random policy: ``DummyVectorEnv`` of 64
  envs against ``BatchedTianshouVectorEnv`` of 256 games.
* **RLlib**: the env runner's sampling (``EnvRunner.sample``, the masking module included) of
  :func:`cribenv.integrations.rllib.single_agent_ppo_config`, 64 envs, ``"sync"`` (single envs)
  against ``"vector_entry_point"`` (the batched engine), in this process (Ray's start-up not
  counted).

One torch thread, a random opponent, 2 players to 121. A library that is not installed is
skipped with a note. The issue's goal is 10 times the per-env route through every library.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from train.benchmarks._timing import fmt_rate, fmt_ratio

ORDER = 65
DEFAULT = False   # the 'integrations' and 'rllib' extras: cribenv bench --only libraries
GOAL_RATIO = 10.0


def _timed(step: Any, seconds: float) -> float:
    """Units a second of ``step()`` (which returns the units it did), after one warm-up call."""
    step()
    units = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        units += step()
    return units / (time.perf_counter() - start)


def _gymnasium(seconds: float) -> tuple[float, float]:
    import gymnasium

    import cribenv  # noqa: F401  (registers the ids)

    rng = np.random.default_rng(0)

    def stepper(envs: Any, masks_of: Any) -> Any:
        _, info = envs.reset(seed=0)
        state = {"info": info}

        def step() -> int:
            masks = masks_of(state["info"])
            actions = np.argmax(np.where(masks, rng.random(masks.shape), -1.0), axis=1)
            _, _, _, _, state["info"] = envs.step(actions)
            return envs.num_envs
        return step

    per_env = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("cribenv/SingleAgentCribbage-v0", opponent="random",
                                disable_env_checker=True) for _ in range(16)])
    slow = _timed(stepper(per_env, lambda info: info["action_mask"]), seconds)
    per_env.close()
    batched = gymnasium.make_vec("cribenv/SingleAgentCribbage-v0", num_envs=256,
                                 vectorization_mode="vector_entry_point", opponent="random")
    fast = _timed(stepper(batched, lambda info: info["action_mask"]), seconds)
    batched.close()
    return slow, fast


def _sb3(seconds: float) -> tuple[float, float]:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cribenv.integrations.sb3 import BatchedVecEnv
    from cribenv.wrappers import SingleAgentCribbageEnv
    from train.benchmarks.sb3 import _collect_rate

    dummy = DummyVecEnv([lambda i=i: SingleAgentCribbageEnv(opponent="random", seed=i)
                         for i in range(16)])
    slow = _collect_rate(dummy, seconds)[0]
    dummy.close()
    batched = BatchedVecEnv(num_envs=256, opponent="random", seed=0)
    fast = _collect_rate(batched, seconds)[0]
    batched.close()
    return slow, fast


def _torchrl(seconds: float) -> tuple[float, float]:
    from cribenv.integrations.torchrl import make_env, masked_policy
    from cribenv.integrations.torchrl_batched import BatchedCribbageEnv

    def frames(env: Any, steps: int) -> Any:
        policy = masked_policy(env, hidden=64)
        return lambda: env.rollout(steps, policy, break_when_any_done=False).numel()

    slow = _timed(frames(make_env(), 50), seconds)
    fast = _timed(frames(BatchedCribbageEnv(num_envs=256, seed=0, opponent="random"), 10),
                  seconds)
    return slow, fast


def _tianshou(seconds: float) -> tuple[float, float]:
    from gymnasium import spaces
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    from cribenv.integrations.tianshou_batched import BatchedTianshouVectorEnv, MaskInObs
    from cribenv.wrappers import SingleAgentCribbageEnv

    policy = MARLRandomDiscreteMaskedOffPolicyAlgorithm(spaces.Discrete(52)).policy

    def collect(envs: Any) -> Any:
        n = len(envs)
        collector = Collector(policy, envs, VectorReplayBuffer(n * 64, n))
        collector.reset()
        return lambda: collector.collect(n_step=n * 8).n_collected_steps

    slow = _timed(collect(DummyVectorEnv([lambda: MaskInObs(SingleAgentCribbageEnv(
        opponent="random")) for _ in range(64)])), seconds)
    fast = _timed(collect(BatchedTianshouVectorEnv(num_envs=256, seed=0, opponent="random")),
                  seconds)
    return slow, fast


def _rllib(seconds: float) -> tuple[float, float]:
    import ray

    from cribenv.integrations import rllib

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        rates = []
        for mode in ("sync", "vector_entry_point"):
            algo = rllib.single_agent_ppo_config(
                env_config={"opponent": "random"}, num_envs_per_env_runner=64,
                vectorize=mode).build_algo()
            runner = algo.env_runner

            def sample(runner: Any = runner) -> int:
                episodes = runner.sample(num_timesteps=64 * 16, random_actions=False)
                return sum(len(e) for e in episodes)

            rates.append(_timed(sample, seconds))
            algo.stop()
        return rates[0], rates[1]
    finally:
        ray.shutdown()


LIBRARIES = {"Gymnasium": _gymnasium, "SB3 MaskablePPO": _sb3, "TorchRL": _torchrl,
             "Tianshou": _tianshou, "RLlib": _rllib}


def run(seconds: float, progress: Any) -> dict[str, Any]:
    try:
        import torch
    except ModuleNotFoundError:   # pragma: no cover - the extra is missing
        return {"skipped": "needs torch (the 'train' extra)"}
    torch.set_num_threads(1)
    result: dict[str, Any] = {}
    for name, measure in LIBRARIES.items():
        progress(f"libraries: {name}")
        try:
            result[name] = measure(seconds)
        except ModuleNotFoundError as exc:
            result[name] = {"skipped": f"needs {exc.name}"}
    return result


def report(res: dict[str, Any]) -> None:
    print("RL libraries: steps/s through the per-env route and through the batched engine "
          "(one torch thread; TorchRL: frames/s)")
    if "skipped" in res:
        print(f"  skipped: {res['skipped']}")
        return
    for name, got in res.items():
        if isinstance(got, dict):
            print(f"  {name:<18}skipped: {got['skipped']}")
            continue
        slow, fast = got
        verdict = "meets" if fast >= GOAL_RATIO * slow else "misses"
        print(f"  {name:<18}per-env {fmt_rate(slow):>9}   batched {fmt_rate(fast):>10}"
              f"   {fmt_ratio(fast / slow):>8} ({verdict} {GOAL_RATIO:.0f}x)")
