"""The arithmetic floor of the self-play trainer's update on this machine: the layers of the
from-rules recipe's network alone (the same shapes, random numbers, no bookkeeping), forward,
backward and Adam step, for one round of the recipe (4 epochs over 16,384 decisions in
minibatches of 2,048; 40% of them discard decisions, 15 ways to throw each) and for the throw
values' fit of that round (4 epochs over 3,072 hands of 15 throws, 256 hands a minibatch).

What the trainer spends beyond this per round is overhead it could still lose; this is what
it cannot lose without changing what it learns (fewer epochs, a smaller network, fewer
throws scored). Compare it with a round's ``update_s`` in ``logs/progress.csv`` or with
``scripts/trainer_side_by_side.py``.

    python scripts/trainer_floor.py --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
from torch import nn

DECISIONS, MINIBATCH, EPOCHS = 16_384, 2_048, 4
DISCARD_SHARE, THROWS, NONZERO = 0.4, 15, 45       # an observation: ~45 entries of 601 set
HANDS, HAND_BATCH = 3_072, 256


def _update_layers() -> tuple[list[nn.Module], callable]:
    torch.manual_seed(0)
    first = nn.EmbeddingBag(601, 256, mode="sum")          # actor's and critic's first layers
    actor, critic = nn.Linear(128, 128), nn.Sequential(nn.Linear(128, 128), nn.ReLU(),
                                                         nn.Linear(128, 1))
    head = nn.Linear(128, 52)
    ctx, per_row = nn.Linear(128, 32), nn.Linear(32, 64)
    feats_in, hidden, out = nn.Linear(34, 64), nn.Linear(64, 64), nn.Linear(64, 1)
    modules = [first, actor, critic, head, ctx, per_row, feats_in, hidden, out]
    idx = torch.randint(0, 601, (MINIBATCH, NONZERO))
    val = torch.rand(MINIBATCH, NONZERO)
    rows = int(DISCARD_SHARE * MINIBATCH)
    feats = torch.rand(rows, THROWS, 34)

    def loss() -> torch.Tensor:
        z = torch.relu(first(idx, per_sample_weights=val))
        h = torch.relu(actor(z[:, :128]))
        v = critic(z[:, 128:]).squeeze(-1)
        logits = head(h)
        s = out(torch.relu(hidden(torch.relu(feats_in(feats)
                                             + per_row(ctx(h[:rows]))[:, None, :]))))
        return logits.sum() + s.sum() + v.square().sum()

    return modules, loss


def _fit_layers() -> tuple[list[nn.Module], callable]:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(35, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                        nn.Linear(128, 2))
    x = torch.rand(HAND_BATCH, THROWS, 35)
    return [net], lambda: net(x).square().mean()


def _time(modules: list[nn.Module], loss, steps: int) -> float:
    params = [p for m in modules for p in m.parameters()]
    opt = torch.optim.Adam(params, lr=1e-4)
    for _ in range(2):   # warm up
        opt.zero_grad()
        loss().backward()
        opt.step()
    start = time.process_time()
    for _ in range(steps):
        opt.zero_grad()
        loss().backward()
        opt.step()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timings of each (the least kept)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    update = min(_time(*_update_layers(), EPOCHS * DECISIONS // MINIBATCH)
                 for _ in range(args.repeats))
    fit = min(_time(*_fit_layers(), EPOCHS * HANDS // HAND_BATCH) for _ in range(args.repeats))
    total = update + fit
    print(f"one round of the from-rules recipe ({DECISIONS:,} decisions), CPU seconds on one "
          f"core, layers alone:")
    print(f"  PPO update   {update:6.3f} s")
    print(f"  throw values {fit:6.3f} s")
    print(f"  together     {total:6.3f} s: at most {DECISIONS / total:,.0f} decisions learnt a "
          f"CPU-second with the collection free")
    return 0


if __name__ == "__main__":
    sys.exit(main())
