"""Deprecated: the training code now lives in one module per job (see the README's layout).

Kept only so that ``from train.ppo import train`` (``cribenv/commands/demo.py``) still works;
import from :mod:`train.sb3_trainer`, :mod:`train.checkpoints`, :mod:`train.pool`,
:mod:`train.export` and :mod:`train.evaluation` instead.
"""

from train.checkpoints import CheckpointError
from train.sb3_trainer import train

__all__ = ["CheckpointError", "train"]
