"""The JAX engine: :class:`cribenv.jax.Cribbage` as Pgx users run it (``jit`` of ``vmap``ped
``step``, a random legal card from the mask, automatic reset) beside the numba
:class:`cribenv.vector.VectorGame` (``observe`` + ``legal_mask`` + ``random_actions`` +
``step``, one thread), both with observations and masks, 2 players to 121, in the same run at
batch sizes 1k to 64k.

One decision is one card chosen by one seat. A JAX call runs ``SCAN`` steps in a
``lax.scan`` (each: a categorical draw over the mask, ``step`` with a key per game, which
computes the next observation and mask, and ``init`` for the games that ended); finished games
restart at once, so every game decides every step. Needs the ``jax`` extra: without jax the
section prints one line saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from train.benchmarks._timing import ROUNDS, fmt_rate, fmt_ratio, timed

ORDER = 27
DEFAULT = False          # needs the 'jax' extra, compiles for a while: cribenv bench --only jax
BATCHES = (1024, 4096, 16384, 65536)
SCAN = 8                 # steps a jitted call
GOAL_RATIO = 1 / 3       # issue 55: on CPU within 3x of numba


class JaxRandomPlay:
    """``batch`` games of 2 players played at random with automatic reset, ``SCAN`` steps a
    call."""

    def __init__(self, batch: int, seed: int = 0) -> None:
        import jax
        import jax.numpy as jnp

        from cribenv.jax import Cribbage

        env = Cribbage(num_players=2, target=121)
        init, step = jax.vmap(env.init), jax.vmap(env.step)

        def one(carry: tuple, _: None) -> tuple:
            state, key = carry
            key, k_act, k_deal, k_new = jax.random.split(key, 4)
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(k_act, logits)
            state = step(state, action, jax.random.split(k_deal, batch))
            fresh = init(jax.random.split(k_new, batch))
            done = state.terminated

            def pick(new: jax.Array, old: jax.Array) -> jax.Array:
                return jnp.where(done.reshape(done.shape + (1,) * (new.ndim - 1)), new, old)

            return (jax.tree_util.tree_map(pick, fresh, state), key), None

        @jax.jit
        def run(state: Any, key: jax.Array) -> tuple:
            return jax.lax.scan(one, (state, key), None, length=SCAN)[0]

        key = jax.random.PRNGKey(seed)
        self.carry = (jax.jit(init)(jax.random.split(key, batch)), key)
        self.fn = run
        self.batch = batch
        self.elapsed = 0.0
        self.decisions = 0
        self.step()              # compile
        self.step()

    def step(self) -> int:
        self.carry = self.fn(*self.carry)
        self.carry[0].observation.block_until_ready()
        return self.batch * SCAN

    def run(self, seconds: float) -> None:
        elapsed, decisions = timed(self.step, seconds)
        self.elapsed += elapsed
        self.decisions += decisions


def run(seconds: float, progress: Callable[[str], None]) -> dict[str, Any]:
    try:
        import jax
    except ImportError:
        return {"skipped": "jax is not installed (pip install -e '.[jax]')"}
    from train.benchmarks.vector_engine import VectorRandomPlay

    rows = []
    for batch in BATCHES:
        progress(f"jax: compiling for {batch:,} games, building VectorGame's batch")
        runners = {"jax": JaxRandomPlay(batch), "vector": VectorRandomPlay(2, True, 1, batch)}
        for r in range(ROUNDS):          # interleaved slices: load changes hit both alike
            progress(f"jax: {batch:,} games, round {r + 1}/{ROUNDS}")
            for runner in runners.values():
                runner.run(seconds / ROUNDS)
        rates = {k: v.decisions / v.elapsed for k, v in runners.items()}
        rows.append({"batch": batch, **rates, "ratio": rates["jax"] / rates["vector"]})
        del runners
    device = jax.devices()[0]
    return {"jax": jax.__version__, "device": f"{device.platform} ({device.device_kind})",
            "scan": SCAN, "rows": rows}


def report(res: dict[str, Any]) -> None:
    if "skipped" in res:
        print(f"jax engine: skipped: {res['skipped']}")
        return
    print(f"jax engine: cribenv.jax.Cribbage (jax {res['jax']} on {res['device']}; jit(vmap("
          f"step)), {res['scan']} steps a call, auto reset) beside VectorGame (one thread), "
          "2 players, random legal play with observations and masks")
    print(f"  {'games at once':>14}{'JAX decisions/s':>18}{'VectorGame':>14}{'JAX / numba':>13}")
    for row in res["rows"]:
        print(f"  {row['batch']:>14,}{fmt_rate(row['jax']):>18}{fmt_rate(row['vector']):>14}"
              f"{fmt_ratio(row['ratio']):>13}")
    best = max(row["ratio"] for row in res["rows"])
    print(f"  goal on CPU: within 3x of numba (>= {GOAL_RATIO:.2f}x): "
          f"{'met' if best >= GOAL_RATIO else 'NOT met'} (best {fmt_ratio(best)})")
