"""Training (needs the ``train`` extra): one module per job.

``config`` (settings), ``cli`` (``cribenv train``), ``sb3_trainer`` (the MaskablePPO loop),
``pool`` (opponents), ``checkpoints`` (atomic save / resume), ``export`` (learner -> policy
file), ``evaluation`` (one tournament pair against each bot), ``learning_curve`` (its plot),
``prior_policy`` (the expert-prior network for SB3), ``imitation`` and ``rollouts`` (warm
starts), and the pegging-value fit.
"""
