"""Experiment (not shipped): fit a base on chunk folders with chosen fit settings, as
``cribenv expert-iteration --replay`` now does; run from the checkout's root."""
import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from train.expert_iteration import IterationSettings, _file_hash, fit
from train.iteration_games import read_chunk

p = argparse.ArgumentParser()
p.add_argument("--base", required=True)
p.add_argument("--games", nargs="+", required=True, help="chunk folders")
p.add_argument("--out", required=True)
p.add_argument("--epochs", type=int, default=10)
p.add_argument("--temperature", type=float, default=0.005)
p.add_argument("--lr", type=float, default=3e-4)
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
torch.set_num_threads(1)
parts = [read_chunk(f, None, "own") for d in a.games for f in sorted(Path(d).glob("chunk-*.npz"))]
data = {k: np.concatenate([q[k] for q in parts]) for k in parts[0]}
s = replace(IterationSettings(), base=a.base, models="own", epochs=a.epochs,
            temperature=a.temperature, learning_rate=a.lr, seed=a.seed)
nets, stats = fit(data, a.base, s)
out = Path(a.out)
out.mkdir(parents=True, exist_ok=True)
(out / "fit.json").write_text(json.dumps({**stats, **vars(a)}, indent=2))
nets.save(out / "policy.safetensors", {"expert_iteration_round": 1, "base": Path(a.base).name,
                                       "base_sha256": _file_hash(Path(a.base))})
print(stats)
