"""RLlib (new API stack): the Cribbage env, a masking RLModule and self-play with frozen copies.

Needs the ``rllib`` extra (``pip install -e '.[rllib]'``: ray, with torch from ``train``).
Everything below is plain RLlib API; :func:`ppo_config` wires it into a ``PPOConfig``::

    from cribenv.integrations import rllib
    algo = rllib.ppo_config(num_env_runners=2).build_algo()
    print(algo.train()["env_runners"]["episode_return_mean"])

The pieces, each usable on its own:

:class:`CribbageMultiAgentEnv` (``env_creator(env_config)``; ``register_env("cribenv", ...)`` on
import holds for the Ray session of that moment, so :func:`ppo_config` passes the class itself)
    the AEC game as an RLlib ``MultiAgentEnv``. Only the agent to act gets an observation,
    ``{"observations": float32[601], "action_mask": float32[52]}`` (the keys RLlib's masking
    modules read); every step returns every agent's reward (the raw env's per-step
    ``rewards``), and RLlib adds a reward that reaches an agent while it waits to that
    agent's last action, so points scored on the opponent's turn, the show and the final
    result are credited to the right decision. The game's end terminates every agent. An
    illegal card (a masking module never plays one; RLlib's env check plays random cards)
    ends the game with -1 for the agent that laid it, as in ``cribenv.env()``.
:class:`MaskedActorCritic`
    a ``TorchRLModule`` with RLlib's ``ValueFunctionAPI``: an actor MLP giving 52 logits, the
    illegal cards' logits set to the float minimum (probability 0, finite entropy and KL),
    and a separate critic MLP. :meth:`MaskedActorCritic.actor_arrays` exports the actor as the
    tensors of an ``agents.ppo`` ``mlp`` policy file (``ppo:PATH`` plays it with numpy).
:class:`SelfPlayMapping` (the ``policy_mapping_fn``)
    self-play through one shared trained module, ``"learner"``, and ``frozen`` copies of it,
    ``"frozen_0"`` .. (never trained: ``policies_to_train=["learner"]``). Each episode draws
    its matchup from its own id: with probability ``self_play_share`` the learner plays every
    seat (both sides train it); otherwise one random side is the learner and the other seats
    one random frozen copy (the learner's seats alone are trained).
:func:`refresh_frozen` (an ``on_train_result`` callback)
    every ``snapshot_every`` env steps the learner's weights are copied into the next frozen
    slot (round robin, so the slots hold the last ``frozen`` snapshots);
    :func:`copy_learner_to_frozen` fills every slot at the start. The copies are part of the
    algorithm's state, so RLlib's checkpoints restore them.

The env without RLlib around it: one agent observes at a time, every agent is paid every
step, so with ``reward="points"`` an agent's rewards add up to its final score difference::

    >>> env = CribbageMultiAgentEnv({"reward": "points"})
    >>> obs, infos = env.reset(seed=0)
    >>> [(agent, first)] = obs.items()
    >>> sorted(first), int(first["action_mask"].sum())   # six cards to choose a discard from
    (['action_mask', 'observations'], 6)
    >>> paid = {a: 0.0 for a in env.possible_agents}
    >>> done = False
    >>> while not done:
    ...     [(agent, o)] = obs.items()
    ...     obs, rewards, terminateds, _, infos = env.step({agent: int(o["action_mask"].argmax())})
    ...     paid = {a: paid[a] + rewards[a] for a in paid}
    ...     done = terminateds["__all__"]
    >>> scores = infos["player_0"]["scores"]
    >>> paid["player_0"] == scores[0] - scores[1] == -paid["player_1"]
    True
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from cribenv.aec import env as aec_env
from cribenv.observation import OBS_SIZE

ENV_NAME = "cribenv"
LEARNER = "learner"
#: the env settings :func:`env_creator` accepts (keyword arguments of :class:`CribbageEnv`)
ENV_SETTINGS = ("num_players", "target", "reward", "episode", "skunks", "shaping")


def frozen_ids(frozen: int) -> list[str]:
    """The module ids of ``frozen`` frozen copies: ``["frozen_0", ...]``."""
    return [f"frozen_{k}" for k in range(frozen)]


# ------------------------------------------------------------------------------------------
# The env
# ------------------------------------------------------------------------------------------

class CribbageMultiAgentEnv(MultiAgentEnv):
    """Cribbage as an RLlib ``MultiAgentEnv`` (turn-based: one agent acts per step).

    ``env_config`` holds :class:`~cribenv.aec.CribbageEnv` settings (:data:`ENV_SETTINGS`);
    anything else is refused with a ``ValueError`` naming it. The game is ``cribenv.env()``
    (PettingZoo's wrappers: an illegal card ends the game with -1 for its agent).
    """

    def __init__(self, env_config: dict[str, Any] | None = None) -> None:
        super().__init__()
        settings = dict(env_config or {})
        unknown = sorted(set(settings) - set(ENV_SETTINGS))
        if unknown:
            raise ValueError(f"unknown cribenv env settings {unknown}; expected some of "
                             f"{list(ENV_SETTINGS)}")
        self.game_env = aec_env(**settings)
        self.possible_agents = list(self.game_env.possible_agents)
        self.agents = list(self.possible_agents)
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (52,), np.float32),
        })
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(52) for a in self.possible_agents}

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        agent = self.game_env.agent_selection
        obs = self.game_env.observe(agent)
        return {agent: {"observations": obs["observation"],
                        "action_mask": obs["action_mask"].astype(np.float32)}}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.game_env.reset(seed=seed, options=options)
        return self._observe(), {}

    def step(self, action_dict: dict[str, int]):
        env = self.game_env
        agent = env.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"it is {agent}'s turn, got actions for {sorted(action_dict)}")
        env.step(int(action_dict[agent]))
        rewards = {a: float(env.rewards[a]) for a in self.possible_agents}
        if all(env.terminations.values()):
            done = {a: True for a in self.possible_agents}
            infos = {a: dict(env.infos[a]) for a in self.possible_agents}
            return {}, rewards, {**done, "__all__": True}, {"__all__": False}, infos
        return self._observe(), rewards, {"__all__": False}, {"__all__": False}, {}


def env_creator(env_config: dict[str, Any] | None = None) -> CribbageMultiAgentEnv:
    """RLlib's env creator: ``config.environment("cribenv", env_config={...})``."""
    return CribbageMultiAgentEnv(dict(env_config or {}))


register_env(ENV_NAME, env_creator)


# ------------------------------------------------------------------------------------------
# The masking module
# ------------------------------------------------------------------------------------------

def _mlp(sizes: list[int]) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Actor and critic MLPs on ``observations``; illegal cards masked out of the logits.

    ``model_config={"hidden": [256, 256]}`` sets the hidden layers (ReLU) of both.
    """

    def setup(self) -> None:
        hidden = list(self.model_config.get("hidden", [256, 256]))
        n_obs = self.observation_space["observations"].shape[0]
        self.actor = _mlp([n_obs, *hidden, self.action_space.n])
        if not self.inference_only:
            self.critic = _mlp([n_obs, *hidden, 1])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.actor(obs["observations"])
        illegal = obs["action_mask"] <= 0
        logits = logits.masked_fill(illegal, torch.finfo(logits.dtype).min)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.critic(batch[Columns.OBS]["observations"]).squeeze(-1)

    def actor_arrays(self) -> dict[str, np.ndarray]:
        """The actor as ``agents.ppo`` ``mlp`` policy tensors (``pi.{i}``, then ``action``)."""
        linears = [m for m in self.actor if isinstance(m, torch.nn.Linear)]
        out: dict[str, np.ndarray] = {}
        with torch.no_grad():
            for i, m in enumerate(linears):
                name = "action" if i == len(linears) - 1 else f"pi.{i}"
                out[f"{name}.weight"] = m.weight.detach().cpu().numpy().copy()
                out[f"{name}.bias"] = m.bias.detach().cpu().numpy().copy()
        return out


# ------------------------------------------------------------------------------------------
# Self-play: the mapping and the frozen copies
# ------------------------------------------------------------------------------------------

class SelfPlayMapping:
    """``policy_mapping_fn``: the learner against itself or against one frozen copy.

    The matchup is a function of the episode id (the same for every agent of an episode) and
    of the seat's side (4 players: seats 0 and 2 are one side). ``frozen=0`` means pure
    self-play.

    >>> from types import SimpleNamespace
    >>> mapping = SelfPlayMapping(self_play_share=0.0, frozen=2)
    >>> episode = SimpleNamespace(id_="0123abcd")
    >>> sorted(mapping(a, episode) for a in ("player_0", "player_1"))
    ['frozen_1', 'learner']
    >>> {SelfPlayMapping(1.0, 2)(a, episode) for a in ("player_0", "player_1")}
    {'learner'}
    """

    def __init__(self, self_play_share: float = 0.5, frozen: int = 2,
                 num_players: int = 2) -> None:
        if not 0.0 <= self_play_share <= 1.0:
            raise ValueError(f"self_play_share must be in [0, 1], got {self_play_share}")
        if frozen < 0:
            raise ValueError(f"frozen must be >= 0, got {frozen}")
        self.self_play_share = float(self_play_share)
        self.frozen = frozen_ids(frozen)
        self.sides = 2 if num_players == 4 else num_players

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        rng = np.random.default_rng(zlib.crc32(str(episode.id_).encode()))
        if not self.frozen or rng.random() < self.self_play_share:
            return LEARNER
        learner_side = int(rng.integers(self.sides))
        opponent = self.frozen[int(rng.integers(len(self.frozen)))]
        seat = int(str(agent_id).rsplit("_", 1)[1])
        return LEARNER if seat % self.sides == learner_side else opponent


def _set_modules(algorithm: Any, states: dict[str, Any]) -> None:
    # the learner group's modules, then (Algorithm.set_state does it) every env runner's
    algorithm.set_state({"learner_group": {"learner": {"rl_module": states}}})


def copy_learner_to_frozen(*, algorithm: Any, **kwargs: Any) -> None:
    """``on_algorithm_init``: every frozen slot starts as a copy of the learner."""
    slots = [m for m in algorithm.config.policies if m != LEARNER]
    if slots:
        state = algorithm.get_module(LEARNER).get_state()
        _set_modules(algorithm, {m: state for m in slots})


def refresh_frozen(*, algorithm: Any, result: dict, snapshot_every: int,
                   **kwargs: Any) -> None:
    """``on_train_result``: each time the env steps sampled cross a multiple of
    ``snapshot_every``, the learner's weights replace the oldest frozen copy (slot
    ``(steps // snapshot_every - 1) % frozen``)."""
    slots = sorted(m for m in algorithm.config.policies if m != LEARNER)
    runners = result.get("env_runners", {})
    total = int(runners.get("num_env_steps_sampled_lifetime", 0))
    before = total - int(runners.get("num_env_steps_sampled", 0))
    k = total // snapshot_every
    if slots and k > before // snapshot_every:
        slot = slots[(k - 1) % len(slots)]
        _set_modules(algorithm, {slot: algorithm.get_module(LEARNER).get_state()})


def log_result_vs_frozen(*, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
    """``on_episode_end``: in a game of the learner against a frozen copy, log
    ``learner_win_vs_frozen`` (1 or 0; the learner's seats' return is positive exactly when
    its side won, with any reward setting) in the ``env_runners`` results (mean of the last
    100 such games)."""
    modules = {aid: episode.module_for(aid) for aid in episode.agent_episodes}
    if metrics_logger is None or set(modules.values()) == {LEARNER} \
            or LEARNER not in modules.values():
        return   # pure self-play (or no decision yet): no frozen copy to beat
    ret = sum(e.get_return() for aid, e in episode.agent_episodes.items()
              if modules[aid] == LEARNER)
    metrics_logger.log_value("learner_win_vs_frozen", float(ret > 0), reduce="mean",
                             window=100)


def ppo_config(*, env_config: dict[str, Any] | None = None, num_env_runners: int = 2,
               envs_per_env_runner: int = 1, frozen: int = 2, self_play_share: float = 0.5,
               snapshot_every: int = 20_000, hidden: list[int] | None = None, seed: int = 0,
               **training: Any):
    """A ``PPOConfig`` for self-play Cribbage on the new API stack.

    ``training`` goes to ``PPOConfig.training`` (``lr``, ``train_batch_size_per_learner``,
    ``minibatch_size``, ``num_epochs``, ``gamma``, ...). Call ``.build_algo()`` on it, or
    change it further first.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env_config = dict(env_config or {})
    spec = RLModuleSpec(module_class=MaskedActorCritic,
                        model_config={"hidden": list(hidden or [256, 256])})
    modules = [LEARNER, *frozen_ids(frozen)]
    mapping = SelfPlayMapping(self_play_share, frozen, env_config.get("num_players", 2))
    return (
        PPOConfig()
        .environment(CribbageMultiAgentEnv, env_config=env_config)   # no registry lookup
        .env_runners(num_env_runners=num_env_runners,
                     num_envs_per_env_runner=envs_per_env_runner)
        .multi_agent(policies=set(modules), policy_mapping_fn=mapping,
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={m: spec for m in modules}))
        .training(**training)
        .callbacks(on_algorithm_init=copy_learner_to_frozen,
                   on_train_result=functools.partial(refresh_frozen,
                                                     snapshot_every=snapshot_every),
                   on_episode_end=log_result_vs_frozen)
        .debugging(seed=seed)
    )
