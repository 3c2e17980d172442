"""Experiment (not shipped): the parameter average of policy files of one architecture.

    python average.py OUT.safetensors A.safetensors B.safetensors ...
"""
import sys

from safetensors import safe_open
from safetensors.numpy import save_file

out, files = sys.argv[1], sys.argv[2:]
opened = [safe_open(f, "np") for f in files]
avg = {k: sum(o.get_tensor(k) for o in opened) / len(opened) for k in opened[0].keys()}
save_file({k: v.astype("float32") for k, v in avg.items()}, out,
          metadata=opened[0].metadata())
