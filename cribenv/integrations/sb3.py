"""Stable-Baselines3: a ``VecEnv`` on the batched engine, for ``PPO`` and sb3-contrib's
``MaskablePPO``.

:class:`BatchedVecEnv` is :class:`cribenv.vector_env.CribbageVectorEnv` (N games in compiled
code, a learner in one seat of each, the opponents played inside ``step``) behind SB3's
``VecEnv`` interface: observations ``(N, 601)``, a card id an action, ``dones`` where a game
ended (the next game's first decision is already in the observation, the last one in
``infos[i]["terminal_observation"]``, and the game's result in ``infos[i]["scores"]``,
``"won"``, ``"game_points"``, ``"learner_seat"``, ``"illegal_action"``), and the legal cards
through ``env_method("action_masks")``, which is how ``MaskablePPO`` reads them. Wrap it in
SB3's ``VecMonitor`` for episode statistics.

    >>> from sb3_contrib import MaskablePPO
    >>> from stable_baselines3.common.vec_env import VecMonitor
    >>> env = VecMonitor(BatchedVecEnv(num_envs=16, opponent="random", seed=0))
    >>> model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=128, seed=0)
    >>> _ = model.learn(256)
    >>> env.close()

Any keyword argument of :func:`cribenv.vector_env.make_vector_env` (the single env's:
``opponent``, ``reward``, ``target``, ``num_players``, ...) is taken; ``opponent="random"`` is
batched, other bots are asked row by row. Plain ``PPO`` cannot mask: give it
``illegal_action="penalty"`` (an illegal card ends that game with ``illegal_reward``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from cribenv.vector_env import CribbageVectorEnv, make_vector_env

__all__ = ["BatchedVecEnv"]


class BatchedVecEnv(VecEnv):
    """SB3's ``VecEnv`` on the batched engine (see the module docstring)."""

    def __init__(self, num_envs: int = 8, seed: int | None = None, **env_kwargs: Any) -> None:
        self.venv: CribbageVectorEnv = make_vector_env(num_envs, seed=seed, **env_kwargs)
        super().__init__(num_envs, self.venv.single_observation_space,
                         self.venv.single_action_space)
        self._seed = seed
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ the VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else self._seed
        self._seed = None           # later resets go on with the env's own generator
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_info"]
            illegal = info.get("illegal_action", np.zeros(self.num_envs, bool))
            for i in np.flatnonzero(dones):
                infos[i] = {"terminal_observation": info["final_obs"][i],
                            "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                            "scores": final["scores"][i].tolist(), "won": bool(final["won"][i]),
                            "game_points": int(final["game_points"][i]),
                            "learner_seat": int(final["learner_seat"][i]),
                            "illegal_action": bool(illegal[i])}
        return obs, reward, dones, infos

    def action_masks(self) -> np.ndarray:
        """``(N, 52)`` bool: each game's legal cards for the learner."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        target = self if attr_name == "action_masks" else self.venv
        value = getattr(target, attr_name)   # AttributeError if it has none: has_attr says no
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        if attr_name not in ("opponent",):
            raise AttributeError(f"BatchedVecEnv cannot set {attr_name!r} per env")
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        method = getattr(self.venv, method_name)
        result = method(*method_args, **method_kwargs)
        return [result] * len(rows)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)
