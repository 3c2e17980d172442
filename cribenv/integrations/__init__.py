"""Adapters that make the Cribbage env train in other RL libraries, one small module each.

Each module imports its library only when it is imported itself (``import cribenv`` never loads
one), and each is an optional extra (``pip install "cribenv[integrations]"``):

* :mod:`cribenv.integrations.tianshou`: Tianshou 2 (``tianshou.env.PettingZooEnv`` with every
  agent credited its own rewards, the final results included);
  :mod:`cribenv.integrations.tianshou_batched`: a Tianshou vector env on the batched engine.
* :mod:`cribenv.integrations.torchrl`: TorchRL (``PettingZooWrapper(..., use_mask=True)``, a
  valid mask for the seats that wait, and a masked categorical policy);
  :mod:`cribenv.integrations.torchrl_batched`: TorchRL ``EnvBase`` s on the batched engine (a
  learner against a batched opponent; pure self-play, every seat a row of a group).
* :mod:`cribenv.integrations.sb3`: Stable-Baselines3 (a ``VecEnv`` on the batched engine for
  ``PPO`` and ``MaskablePPO``; the ``train`` extra).
* :mod:`cribenv.integrations.rllib`: RLlib's new API stack (a ``MultiAgentEnv`` with the keys
  RLlib reads, a masking ``RLModule``, self-play against frozen copies); the ``rllib`` extra.
* :mod:`cribenv.integrations.openspiel`: an OpenSpiel game, ``python_cribenv``, on the engine
  with explicit chance nodes (OpenSpiel's ISMCTS, MCTS and learners play it); the
  ``openspiel`` extra.

The "RL libraries" table (docs/libraries.md) lists, for each, the version tested, the entry
point, what its example under ``examples/`` trains and the test that proves it.
"""
