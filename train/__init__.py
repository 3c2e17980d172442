"""Training (needs the ``train`` extra): one module per job.

* Settings, torch-free (``cribenv train --help`` stays quick): ``config`` (the shared checks
  and the SB3 backend's ``TrainConfig``), ``selfplay_config``, ``rllib_config``; ``command``
  is ``cribenv train``.
* The self-play trainer on the batched engine: ``selfplay`` (the loop), ``networks``
  (the networks and their tensors for a policy file), ``selfplay_rollout`` (seats as rows,
  the pool's snapshots as torch actors, the batch of games).
* The other backends: ``sb3_trainer`` (MaskablePPO on the single-agent wrapper, with
  ``prior_policy``) and ``rllib_trainer`` (RLlib on Ray).
* Shared: ``pool`` (the opponent pool of the sb3 and self-play trainers, its two sampling
  rules), ``export`` (a learner as a policy file, every trainer), ``checkpoints`` (atomic
  save / resume), ``evaluation`` (one tournament pair against each bot), ``learning_curve``
  (its plots), ``demo`` (the demo's training step).
* Warm starts and fits: ``imitation``, ``rollouts`` (the expert-prior card network fit to
  paired rollouts) and ``fit_peg_values`` (the pegging value of kept hands).
"""
