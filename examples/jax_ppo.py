"""Self-play PPO for Cribbage in pure JAX, in one file: the engine inside the compiled update.

Top to bottom: the arguments, the environment (:class:`cribenv.jax.Cribbage`, Pgx's API), the
network (two plain MLPs in a params dict: an actor giving 52 logits and a critic), the rollout
(a ``lax.scan`` over steps of a ``vmap`` over games, finished games restarted at once), the
per-seat credit and GAE, the clipped PPO update with optax, all in one ``jax.jit``; then the
loop in plain sight and the export of the actor as a ``ppo:PATH`` policy file (the ``mlp``
network of :mod:`agents.policy_file`) that ``cribenv tournament`` plays. It needs jax, optax
and ``cribenv`` (the ``jax`` extra); PureJaxRL, CleanRL's ``ppo.py`` and Pgx's examples are the
models.

**Self-play and credit.** One policy plays every seat of every game, so each step of each game
is one decision, by the seat to act (``state.current_player``); the observation is that seat's
view. A seat's trajectory is its own chain of decisions inside one game. The engine pays
``rewards`` per seat (``--reward win``: the result, paid by the step that ends the game;
``--reward points``: each step's zero-sum point differential, own side minus the mean of the
others, as the AEC env's ``reward="points"``); everything paid to a seat after one of its
decisions and up to its next decision (or the game's end) is credited to that decision. The
advantages are GAE along each seat's chain, computed by one backward ``lax.scan`` whose carry
holds, per game and seat, the rewards owed, the value and the advantage of that seat's next
decision: a step that ended a game clears the carry (the decisions after it belong to the next
game), a decision takes what its seat is owed and becomes the seat's "next decision" for the
ones before it. A chain cut by the end of the rollout is bootstrapped with the critic's value
of the seat's view at that moment (``env.observe(state, seat)``). We chose GAE per seat chain
over plain Monte-Carlo returns because a rollout of a few dozen steps cuts most games (a game
to 121 is about 100 decisions); with ``--gae-lambda 1 --gamma 1`` and whole games it is the
Monte-Carlo return of each seat.

    python examples/jax_ppo.py --seconds 300 --save runs/jax_ppo.safetensors
    cribenv tournament --agents jax=ppo:runs/jax_ppo.safetensors random greedy --games 400
    python examples/jax_ppo.py --num-games 64 --num-steps 16 --updates 2   # a smoke run
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from cribenv.jax import Cribbage
from cribenv.observation import OBS_SIZE

NEG = -1e9     # the logit of an illegal card (finite, so 0 * log p stays 0 in the entropy)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--updates", type=int, default=None,
                   help="PPO updates (one rollout each); default: as many as --seconds allows")
    p.add_argument("--seconds", type=float, default=300.0, help="wall-clock budget")
    p.add_argument("--num-games", type=int, default=512, help="games stepped together (vmap)")
    p.add_argument("--num-steps", type=int, default=32, help="engine steps per rollout (scan)")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--target", type=int, default=121, choices=(61, 121))
    p.add_argument("--reward", default="points", choices=("points", "win"),
                   help="points: each step's point differential; win: the game's result")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=8)
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.02)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", default=None, help="write the actor here as a ppo:PATH policy file")
    args = p.parse_args(argv)
    if min(args.num_games, args.num_steps, args.epochs, args.minibatches) < 1:
        p.error("--num-games, --num-steps, --epochs and --minibatches must be at least 1")
    if (args.num_games * args.num_steps) % args.minibatches:
        p.error("--minibatches must divide --num-games x --num-steps")
    return args


# ------------------------------------------------------------------------------ the network
def init_params(key: jax.Array, hidden: int) -> dict:
    """Separate actor and critic MLPs (601 -> hidden -> hidden -> out, tanh), orthogonal
    weights as CleanRL's; each layer is ``{"w": (in, out), "b": (out,)}``."""
    def mlp(key: jax.Array, out: int, gain: float) -> list[dict]:
        sizes = [OBS_SIZE, hidden, hidden, out]
        keys = jax.random.split(key, 3)
        gains = [np.sqrt(2), np.sqrt(2), gain]
        return [{"w": jax.nn.initializers.orthogonal(g)(k, (i, o), jnp.float32),
                 "b": jnp.zeros(o, jnp.float32)}
                for k, g, i, o in zip(keys, gains, sizes[:-1], sizes[1:])]

    k_actor, k_critic = jax.random.split(key)
    return {"actor": mlp(k_actor, 52, 0.01), "critic": mlp(k_critic, 1, 1.0)}


def forward(layers: list[dict], x: jax.Array) -> jax.Array:
    """``x`` through the layers, tanh between them and none after the last."""
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def masked_logits(params: dict, obs: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, forward(params["actor"], obs), NEG)


def value(params: dict, obs: jax.Array) -> jax.Array:
    return forward(params["critic"], obs)[..., 0]


# ------------------------------------------------------------------------------ the credit
def advantages(batch: dict, bootstrap: jax.Array, gamma: float, lam: float) -> jax.Array:
    """GAE along each seat's chain of decisions (see the module's docstring). ``batch`` holds
    (T, N) arrays ``seat``, ``value``, ``done`` and (T, N, players) ``reward``; ``bootstrap``
    (N, players) is the value of each seat's view at the rollout's end. Returns (T, N)."""
    games = jnp.arange(bootstrap.shape[0])

    def back(carry, t):
        owed, v_next, a_next = carry                              # each (N, players)
        keep = ~t["done"][:, None]                                # the step ended a game:
        owed, v_next, a_next = owed * keep, v_next * keep, a_next * keep   # a new chain
        owed = owed + t["reward"]
        s = t["seat"]
        delta = owed[games, s] + gamma * v_next[games, s] - t["value"]
        adv = delta + gamma * lam * a_next[games, s]
        owed = owed.at[games, s].set(0.0)
        v_next = v_next.at[games, s].set(t["value"])
        a_next = a_next.at[games, s].set(adv)
        return (owed, v_next, a_next), adv

    zeros = jnp.zeros_like(bootstrap)
    inputs = {k: batch[k] for k in ("seat", "value", "done", "reward")}
    return jax.lax.scan(back, (zeros, bootstrap, zeros), inputs, reverse=True)[1]


# ------------------------------------------------------------------------------ the training
def make_train(args: argparse.Namespace):
    """``(init_fn, update_fn)``: ``init_fn(key)`` gives the runner state (params, optimizer
    state, the games, a key); ``update_fn(runner)`` runs one rollout and one PPO update, all
    compiled (the rollout: a ``lax.scan`` of ``env_step`` over a ``vmap`` over games), and
    gives the new runner and its metrics."""
    env = Cribbage(num_players=args.players, target=args.target)
    n, sides = args.players, env.sides
    side = jnp.asarray(env.side)                               # (players,): each seat's side
    N, T = args.num_games, args.num_steps
    v_init, v_step = jax.vmap(env.init), jax.vmap(env.step)
    v_observe_all = jax.vmap(jax.vmap(env.observe, in_axes=(None, 0)), in_axes=(0, None))
    optimizer = optax.chain(optax.clip_by_global_norm(args.max_grad_norm),
                            optax.adam(args.lr, eps=1e-5))

    def paid(before, after) -> jax.Array:
        """(N, players): what each seat was paid by the step from ``before`` to ``after``."""
        if args.reward == "win":
            return after.rewards
        gained = (after.scores - before.scores).astype(jnp.float32)        # (N, sides)
        own = gained[:, side]                                              # (N, players)
        others = (gained.sum(-1, keepdims=True) - own) / (sides - 1)
        return own - others

    def env_step(carry, _):
        params, state, key = carry
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        obs, mask, seat = state.observation, state.legal_action_mask, state.current_player
        logits = masked_logits(params, obs, mask)
        action = jax.random.categorical(k_act, logits)
        logp = jax.nn.log_softmax(logits)[jnp.arange(N), action]
        after = v_step(state, action, jax.random.split(k_step, N))
        reward, done = paid(state, after), after.terminated
        fresh = v_init(jax.random.split(k_reset, N))               # auto reset, as Pgx's
        state = jax.tree_util.tree_map(
            lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b),
            fresh, after)
        step = {"obs": obs, "mask": mask, "action": action, "logp": logp, "seat": seat,
                "value": value(params, obs), "reward": reward, "done": done}
        return (params, state, key), step

    def loss_fn(params, mb):
        logits = masked_logits(params, mb["obs"], mb["mask"])
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, mb["action"][:, None], axis=-1)[:, 0]
        ratio = jnp.exp(logp - mb["logp"])
        adv = (mb["adv"] - mb["adv"].mean()) / (mb["adv"].std() + 1e-8)
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - args.clip, 1 + args.clip) * adv)
        v_loss = 0.5 * jnp.square(value(params, mb["obs"]) - mb["ret"])
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1)
        loss = pg.mean() + args.vf_coef * v_loss.mean() - args.ent_coef * entropy.mean()
        return loss, {"loss": loss, "pg_loss": pg.mean(), "v_loss": v_loss.mean(),
                      "entropy": entropy.mean(),
                      "clip_frac": (jnp.abs(ratio - 1) > args.clip).mean()}

    def sgd_step(carry, mb):
        params, opt_state = carry
        grads, metrics = jax.grad(loss_fn, has_aux=True)(params, mb)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), metrics

    def epoch(carry, key):
        params, opt_state, flat = carry
        size = N * T
        perm = jax.random.permutation(key, size)
        mbs = jax.tree_util.tree_map(
            lambda x: x[perm].reshape((args.minibatches, size // args.minibatches)
                                      + x.shape[1:]), flat)
        (params, opt_state), metrics = jax.lax.scan(sgd_step, (params, opt_state), mbs)
        return (params, opt_state, flat), metrics

    @jax.jit
    def update_fn(runner):
        params, opt_state, state, key = runner
        (params, state, key), batch = jax.lax.scan(env_step, (params, state, key), None,
                                                  length=T)
        seats_obs = v_observe_all(state, jnp.arange(n))          # (N, players, 601)
        adv = advantages(batch, value(params, seats_obs), args.gamma, args.gae_lambda)
        batch = {**batch, "adv": adv, "ret": adv + batch["value"]}
        flat = {k: batch[k].reshape((N * T,) + batch[k].shape[2:])
                for k in ("obs", "mask", "action", "logp", "adv", "ret")}
        key, k_epochs = jax.random.split(key)
        (params, opt_state, _), metrics = jax.lax.scan(
            epoch, (params, opt_state, flat), jax.random.split(k_epochs, args.epochs))
        metrics = jax.tree_util.tree_map(jnp.mean, metrics)
        metrics["games_ended"] = batch["done"].sum()
        metrics["mean_reward"] = batch["reward"].sum() / jnp.maximum(batch["done"].sum(), 1)
        return (params, opt_state, state, key), metrics

    def init_fn(key):
        k_params, k_games, key = jax.random.split(key, 3)
        params = init_params(k_params, args.hidden)
        return (params, optimizer.init(params), jax.jit(v_init)(jax.random.split(k_games, N)),
                key)

    return init_fn, update_fn


# ------------------------------------------------------------------------------ the export
def export_tensors(params: dict) -> dict[str, np.ndarray]:
    """The actor as the tensors of an ``mlp`` policy file: ``pi.{i}.weight`` (out, in) and
    ``pi.{i}.bias`` for the hidden layers, ``action.*`` for the 52 logits."""
    layers = params["actor"]
    out = {}
    for i, layer in enumerate(layers[:-1]):
        out[f"pi.{i}.weight"] = np.asarray(layer["w"]).T
        out[f"pi.{i}.bias"] = np.asarray(layer["b"])
    out["action.weight"] = np.asarray(layers[-1]["w"]).T
    out["action.bias"] = np.asarray(layers[-1]["b"])
    return out


def save_policy(path: str, params: dict, args: argparse.Namespace, steps: int) -> None:
    """Write the actor as a ``ppo:PATH`` policy file (``agents.policy_file``'s format)."""
    from agents.policy_file import policy_config, save_tensors

    network = {"arch": "mlp", "activation": "tanh", "net_arch": [args.hidden, args.hidden],
               "trainer": "examples/jax_ppo.py"}
    config = policy_config(network, steps, args.players, args.target, vars(args))
    save_tensors(path, export_tensors(params), config)


# ------------------------------------------------------------------------------ the loop
def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    init_fn, update_fn = make_train(args)
    runner = init_fn(jax.random.PRNGKey(args.seed))
    per_update = args.num_games * args.num_steps
    start = time.perf_counter()
    runner, metrics = update_fn(runner)                        # compiles
    jax.block_until_ready(metrics)
    compiled = time.perf_counter()
    print(f"compiled and ran the first update in {compiled - start:.1f} s "
          f"({per_update:,} decisions an update)")
    updates, history = 1, [jax.device_get(metrics)]
    while (updates < args.updates if args.updates is not None
           else time.perf_counter() - start < args.seconds):
        runner, metrics = update_fn(runner)
        updates += 1
        if updates % 10 == 0 or updates == args.updates:
            m = jax.device_get(metrics)
            rate = (updates - 1) * per_update / (time.perf_counter() - compiled)
            print(f"update {updates:5d}  decisions {updates * per_update:>11,}  "
                  f"loss {m['loss']:+.3f}  entropy {m['entropy']:.3f}  "
                  f"games ended {int(m['games_ended']):5d}  {rate:,.0f} decisions/s")
        history.append(metrics)
    history = [jax.device_get(m) for m in history]
    elapsed = time.perf_counter() - compiled
    result = {"updates": updates, "decisions": updates * per_update,
              "loss": float(history[-1]["loss"]), "entropy": float(history[-1]["entropy"]),
              "decisions_per_s": (updates - 1) * per_update / elapsed if updates > 1 else None,
              "compile_s": compiled - start, "params": runner[0]}
    if args.save:
        save_policy(args.save, runner[0], args, result["decisions"])
        print(f"wrote {args.save}: play it with ppo:{args.save}")
    return result


if __name__ == "__main__":
    main()
