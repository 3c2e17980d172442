"""RLlib (new API stack): the Cribbage env, a masking RLModule, self-play with frozen copies, and
one learner against bots on the batched engine.

Needs the ``rllib`` extra (``pip install -e '.[rllib]'``: ray, with torch from ``train``).
Everything below is plain RLlib API; :func:`ppo_config` (self-play) and
:func:`single_agent_ppo_config` (a learner against a bot) wire it into a ``PPOConfig``::

    from cribenv.integrations import rllib
    algo = rllib.ppo_config(num_env_runners=2).build_algo()
    print(algo.train()["env_runners"]["episode_return_mean"])
    algo = rllib.single_agent_ppo_config(env_config={"opponent": "greedy"}).build_algo()

**RLlib's default module cannot play Cribbage**: the legal cards change every turn and its
default (catalog) modules neither read a mask nor encode a dict observation.
``PettingZooEnv(cribenv.env())`` with the default module stops with RLlib's ``ValueError: No
default encoder config for obs space=Dict(...)``, and with RLlib's example
``ActionMaskingTorchRLModule`` with ``KeyError: 'observations'`` (it reads RLlib's key; the AEC
env's is ``"observation"``). Give the config :class:`MaskedActorCritic` (its ``RLModuleSpec``),
which reads either key: ``PettingZooEnv(cribenv.env())`` then trains (RLlib's wrapper hands each
agent its accumulated reward when it is next to act, so each game's rewards add up to its
result), or use the envs below. Built on any other observation space, ``MaskedActorCritic``
stops at once with a ``ValueError`` naming them.

The pieces, each usable on its own:

:class:`CribbageMultiAgentEnv` (``env_creator(env_config)``; :func:`register_envs` on import
registers ``"cribenv"`` for the Ray session of that moment, so :func:`ppo_config` passes the
class itself)
    the AEC game as an RLlib ``MultiAgentEnv``. Only the agent to act gets an observation,
    ``{"observations": float32[601], "action_mask": float32[52]}`` (the keys RLlib's masking
    modules read); every step returns every agent's reward (the raw env's per-step
    ``rewards``), and RLlib adds a reward that reaches an agent while it waits to that
    agent's last action, so points scored on the opponent's turn, the show and the final
    result are credited to the right decision. The game's end terminates every agent. An
    illegal card (a masking module never plays one; RLlib's env check plays random cards)
    ends the game with -1 for the agent that laid it, as in ``cribenv.env()``.
:func:`single_agent_env_creator` (the class :class:`SingleAgentEnvCreator` for
``config.environment``; registered as ``"cribenv/SingleAgentCribbage-v0"`` too)
    one learner against bots for RLlib's single-agent env runner, the mask in the
    observation as above: with ``gym_env_vectorize_mode="vector_entry_point"`` the batched
    engine, converted from same-step to the **next-step** autoreset RLlib's runner expects
    (:class:`NextStepCribbageVectorEnv`); with ``"sync"`` copies of the single env
    (:class:`MaskInObservation`).
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
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from cribenv.aec import env as aec_env
from cribenv.game import seat_side
from cribenv.observation import OBS_SIZE
from cribenv.registration import GYM_ENV_ID

if TYPE_CHECKING:  # pragma: no cover
    from cribenv.vector_env import CribbageVectorEnv

ENV_NAME = "cribenv"
LEARNER = "learner"
#: the env settings :func:`env_creator` accepts (keyword arguments of :class:`CribbageEnv`)
ENV_SETTINGS = ("num_players", "target", "reward", "episode", "skunks", "shaping")


#: the hidden layers of :class:`MaskedActorCritic` when none are given (both helpers' default)
DEFAULT_HIDDEN = [128, 128]
#: Seconds an env runner may take to return its samples (RLlib's default, 60, is too short on a
#: busy machine while a fresh runner compiles or loads the batched engine: the iteration then
#: comes back empty).
SAMPLE_TIMEOUT_S = 600.0
#: the PPO settings of :func:`ppo_config` and :func:`single_agent_ppo_config` unless given:
#: sized so that an iteration takes seconds on a 2-core laptop (2-5 s measured; RLlib's own
#: defaults, 4,000 steps and 30 epochs of minibatches of 128, took 15-55 s there)
PPO_DEFAULTS: dict[str, Any] = {"lr": 3e-4, "train_batch_size_per_learner": 2048,
                                "minibatch_size": 256, "num_epochs": 4, "entropy_coeff": 0.01}


def masked_observation_space() -> gym.spaces.Dict:
    """The observation space of every env here: ``{"observations": float32[601],
    "action_mask": float32[52]}`` (RLlib's keys)."""
    return gym.spaces.Dict({
        "observations": gym.spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32),
        "action_mask": gym.spaces.Box(0.0, 1.0, (52,), np.float32),
    })


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
        space = masked_observation_space()
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


# ------------------------------------------------------------------------------------------
# One learner against bots (RLlib's single-agent env runner)
# ------------------------------------------------------------------------------------------

class MaskInObservation(gym.Wrapper):
    """:class:`cribenv.wrappers.SingleAgentCribbageEnv` with its legal cards in the
    observation, ``{"observations": float32[601], "action_mask": float32[52]}``, where
    :class:`MaskedActorCritic` reads them (they leave ``info``). The last step's mask is all ones
    (the wrapped env's ``END_MASK``: a proper distribution for the action RLlib draws from the
    final observation, which the next-step autoreset of Gymnasium's ``SyncVectorEnv`` ignores).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = masked_observation_space()

    @staticmethod
    def _masked(obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        return {"observations": obs, "action_mask": info.pop("action_mask").astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._masked(obs, info), info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._masked(obs, info), reward, terminated, truncated, info


class NextStepCribbageVectorEnv(VectorEnv):
    """The batched engine's :class:`~cribenv.vector_env.CribbageVectorEnv` as RLlib's
    ``SingleAgentEnvRunner`` steps it: **next-step** autoreset and the legal cards in the
    observation.

    RLlib's runner expects Gymnasium's next-step mode: the observation of a ``terminated`` row
    is that episode's last one, and the next ``step`` (its action ignored) returns the first
    observation of a new episode, which the runner records as that episode's reset. The
    wrapped env resets in the same step, so fed to RLlib directly every game's first decision
    would be played but never recorded (nor its reward) and each game's last observation would
    be the next game's first. Here a game that ends stays over in the engine for one step (its
    row's ``terminated`` is True, the observation is the final position, the mask all ones:
    no decision is pending, and a masked categorical of it stays proper); the next step skips
    it (the engine ignores the actions of finished games), starts its new game, played up to the
    learner's first decision, and returns that with reward 0 and ``terminated`` False. The other
    rows are stepped as usual, so every row's rewards add up to its game's result.

    ``info`` holds ``learner_seat`` (the seat behind each row's observation) and, in the rows
    of a game's end, its result: ``scores``, ``winner``, ``won`` (the learner's side won) and
    ``game_points`` (each with Gymnasium's ``_key`` mask). Needs ``illegal_action="raise"``
    (masking modules lay no illegal card).

    >>> from cribenv.vector_env import make_vector_env
    >>> env = NextStepCribbageVectorEnv(make_vector_env(4, reward="win", seed=0))
    >>> obs, info = env.reset(seed=0)
    >>> sorted(obs), obs["observations"].shape, env.metadata["autoreset_mode"].name
    (['action_mask', 'observations'], (4, 601), 'NEXT_STEP')
    >>> rng = np.random.default_rng(0)
    >>> returns, over, results = np.zeros(4), np.zeros(4, bool), []
    >>> while len(results) < 6:
    ...     acts = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
    ...     obs, reward, terminated, _, info = env.step(acts)
    ...     assert not (reward[over].any() or terminated[over].any())   # the restarted rows
    ...     returns += reward
    ...     results += [(returns[i], info["won"][i]) for i in np.flatnonzero(terminated)]
    ...     returns[terminated], over = 0.0, terminated
    >>> all(ret == (1.0 if won else -1.0) for ret, won in results)   # each game's return
    True
    >>> env.close()
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, env: CribbageVectorEnv) -> None:
        if env.illegal_action != "raise":
            raise ValueError("the RLlib route masks illegal cards (MaskedActorCritic): "
                             f"illegal_action must be 'raise', got {env.illegal_action!r}")
        self.env = env
        self.num_envs = env.num_envs
        self.single_observation_space = masked_observation_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = env.single_action_space
        self.action_space = env.action_space
        self._over = np.zeros(self.num_envs, bool)   # games that ended in the last step

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.env.reset(seed=seed, options=options)
        self._over[:] = False
        return self._observe(self._over), self._info()

    def step(self, actions: Any):
        env = self.env
        game = env.game
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, got shape {acts.shape}")
        restart = np.flatnonzero(self._over)
        game.step(acts.astype(np.int64))   # the games over since the last step ignore theirs
        env.play_opponents()
        rows = np.arange(self.num_envs)
        seat = env.learner_seat
        reward = game.cumulative_rewards[rows, seat].astype(np.float32)
        reward[restart] = 0.0
        terminated = game.done.copy()
        terminated[restart] = False
        info: dict[str, Any] = {}
        if terminated.any():
            sides = np.array([seat_side(int(s), env.num_players) for s in seat])
            winner = game.winner.copy()
            results = {"scores": game.scores.copy(), "winner": winner,
                       "won": winner == sides, "game_points": game.game_points.copy()}
            for key, value in results.items():
                info[key], info[f"_{key}"] = value, terminated.copy()
        if len(restart):
            env.new_games(restart)   # played up to the learner's first decision
        self._over = terminated
        info.update(self._info())
        return (self._observe(terminated), reward, terminated,
                np.zeros(self.num_envs, bool), info)

    def _observe(self, over: np.ndarray) -> dict[str, np.ndarray]:
        obs = self.env.observe_learners()   # the learner's views; updates the env's legal cards
        mask = self.env.action_masks().astype(np.float32)
        mask[over] = 1.0            # no decision pending: any card, ignored by the next step
        return {"observations": obs, "action_mask": mask}

    def _info(self) -> dict[str, Any]:
        return {"learner_seat": self.env.learner_seat.copy(),
                "_learner_seat": np.ones(self.num_envs, bool)}

    def close_extras(self, **kwargs: Any) -> None:
        self.env.close()


def single_agent_env_creator(env_config: dict[str, Any] | None = None) -> gym.Env | VectorEnv:
    """RLlib's env creator of one learner against bots, from the keyword arguments of
    :class:`cribenv.wrappers.SingleAgentCribbageEnv` (``opponent``, ``reward``, ``target``,
    ``num_players``, ...).

    RLlib's ``SingleAgentEnvRunner`` builds its envs with ``gymnasium.make_vec``: with
    ``gym_env_vectorize_mode="vector_entry_point"`` it calls this with ``num_envs`` added, and
    gets the batched engine (:func:`cribenv.vector_env.make_vector_env`, whole games, one
    opponent for every other seat) as a :class:`NextStepCribbageVectorEnv`; with ``"sync"``
    (RLlib's default) it calls this once per env and gets the single env as a
    :class:`MaskInObservation`. Either way observations are ``{"observations",
    "action_mask"}`` and autoreset is next-step.
    """
    settings = dict(env_config or {})
    num_envs = settings.pop("num_envs", None)
    if num_envs is None:
        from cribenv.wrappers import SingleAgentCribbageEnv
        return MaskInObservation(SingleAgentCribbageEnv(**settings))
    from cribenv.vector_env import make_vector_env
    return NextStepCribbageVectorEnv(make_vector_env(int(num_envs), **settings))


class SingleAgentEnvCreator:
    """:func:`single_agent_env_creator` as a class, for ``config.environment(...)``: RLlib's
    ``Algorithm`` takes an env as a class or a registered name, not a function (and a name
    lives in one Ray session). ``SingleAgentEnvCreator(env_config)`` returns
    ``single_agent_env_creator(env_config)``, not an instance of this class."""

    def __new__(cls, env_config: dict[str, Any] | None = None) -> Any:
        return single_agent_env_creator(env_config)


def register_envs() -> None:
    """Register the env names with Tune: ``"cribenv"`` (:func:`env_creator`) and
    ``"cribenv/SingleAgentCribbage-v0"`` (:func:`single_agent_env_creator`, which RLlib then
    finds before Gymnasium's id of that name, whose vector env autoresets in the same step and
    keeps the mask in ``info``).

    Done on import. Tune's registry lives in the Ray session current at the call (or the next
    one started), so a process that starts another session later calls it again; passing the
    creator itself, as :func:`ppo_config` and :func:`single_agent_ppo_config` do, needs no
    registry."""
    register_env(ENV_NAME, env_creator)
    register_env(GYM_ENV_ID, single_agent_env_creator)


register_envs()


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


#: what to use instead, named by :class:`MaskedActorCritic`'s error
_ROUTES = ("for self-play, cribenv.integrations.rllib.ppo_config() (CribbageMultiAgentEnv) or "
           "PettingZooEnv(cribenv.env()); for one learner against a bot, "
           "single_agent_ppo_config() or config.environment(cribenv.integrations.rllib."
           "SingleAgentEnvCreator) (Gymnasium's 'cribenv/SingleAgentCribbage-v0' gives the bare "
           "float32[601], the mask in info, unless cribenv.integrations.rllib.register_envs() "
           "ran in this Ray session)")


def _observation_key(space: Any) -> str:
    """The key of the observation vector in ``space``: ``"observations"`` (RLlib's, this
    module's envs) or ``"observation"`` (``cribenv.env()``, wrapped by RLlib's
    ``PettingZooEnv``); a ``ValueError`` naming what to use for anything else."""
    if isinstance(space, gym.spaces.Dict) and "action_mask" in space.spaces:
        for key in ("observations", "observation"):
            if key in space.spaces:
                return key
    raise ValueError(
        "MaskedActorCritic reads the legal cards from the observation, a dict of "
        "'observations' (or cribenv.env()'s 'observation') and 'action_mask'; this env's "
        f"observation space is {space}. Use, {_ROUTES}.")


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Actor and critic MLPs on the observation vector; illegal cards masked out of the logits.

    The observations are dicts of the vector and ``action_mask``: the vector under
    ``"observations"`` (RLlib's key: every env of this module) or ``"observation"`` (the
    AEC env's, for ``PettingZooEnv(cribenv.env())``). Any other observation space is refused
    when the module is built, with a ``ValueError`` naming the envs to use.
    ``model_config={"hidden": [128, 128]}`` sets the hidden layers (ReLU) of both.
    """

    def setup(self) -> None:
        hidden = list(self.model_config.get("hidden", DEFAULT_HIDDEN))
        self.obs_key = _observation_key(self.observation_space)
        n_obs = self.observation_space[self.obs_key].shape[0]
        self.actor = _mlp([n_obs, *hidden, self.action_space.n])
        if not self.inference_only:
            self.critic = _mlp([n_obs, *hidden, 1])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.actor(obs[self.obs_key])
        illegal = obs["action_mask"] <= 0
        logits = logits.masked_fill(illegal, torch.finfo(logits.dtype).min)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.critic(batch[Columns.OBS][self.obs_key]).squeeze(-1)

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

    ``hidden``: the layers of every module (:data:`DEFAULT_HIDDEN`, 128 x 128, by default).
    ``training`` goes to ``PPOConfig.training`` (``lr``, ``train_batch_size_per_learner``,
    ``minibatch_size``, ``num_epochs``, ``gamma``, ...) over :data:`PPO_DEFAULTS` (2,048 steps
    an update, 4 epochs of minibatches of 256: an iteration takes seconds on 2 cores). Call
    ``.build_algo()`` on it, or change it further first.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env_config = dict(env_config or {})
    spec = RLModuleSpec(module_class=MaskedActorCritic,
                        model_config={"hidden": list(hidden or DEFAULT_HIDDEN)})
    modules = [LEARNER, *frozen_ids(frozen)]
    mapping = SelfPlayMapping(self_play_share, frozen, env_config.get("num_players", 2))
    return (
        PPOConfig()
        .environment(CribbageMultiAgentEnv, env_config=env_config)   # no registry lookup
        .env_runners(num_env_runners=num_env_runners,
                     num_envs_per_env_runner=envs_per_env_runner,
                     sample_timeout_s=SAMPLE_TIMEOUT_S)
        .multi_agent(policies=set(modules), policy_mapping_fn=mapping,
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={m: spec for m in modules}))
        .training(**{**PPO_DEFAULTS, **training})
        .callbacks(on_algorithm_init=copy_learner_to_frozen,
                   on_train_result=functools.partial(refresh_frozen,
                                                     snapshot_every=snapshot_every),
                   on_episode_end=log_result_vs_frozen)
        .debugging(seed=seed)
    )


def single_agent_ppo_config(*, env_config: dict[str, Any] | None = None,
                            num_envs_per_env_runner: int = 64, num_env_runners: int = 0,
                            vectorize: str = "vector_entry_point",
                            hidden: list[int] | None = None, seed: int = 0, **training: Any):
    """A ``PPOConfig`` of one learner (:class:`MaskedActorCritic`) against bots: RLlib's
    single-agent env runner on :func:`single_agent_env_creator`.

    ``env_config`` holds :class:`cribenv.wrappers.SingleAgentCribbageEnv` settings
    (``opponent="greedy"``, ``reward="points"``, ...). ``vectorize``: ``"vector_entry_point"``
    (default) steps ``num_envs_per_env_runner`` games at once on the batched engine
    (:class:`NextStepCribbageVectorEnv`); ``"sync"`` steps as many single envs one by one
    (Gymnasium's ``SyncVectorEnv``; ``episode="hand"`` and rendering need it).
    ``num_env_runners=0`` samples in the learner's process. ``hidden`` and ``training`` as in
    :func:`ppo_config` (:data:`PPO_DEFAULTS`: 2,048 steps an update, 32 per env with 64 envs).
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    spec = RLModuleSpec(module_class=MaskedActorCritic,
                        model_config={"hidden": list(hidden or DEFAULT_HIDDEN)})
    return (
        PPOConfig()
        .environment(SingleAgentEnvCreator, env_config=dict(env_config or {}))
        .env_runners(num_env_runners=num_env_runners,
                     num_envs_per_env_runner=num_envs_per_env_runner,
                     gym_env_vectorize_mode=vectorize, sample_timeout_s=SAMPLE_TIMEOUT_S)
        .rl_module(rl_module_spec=spec)
        .training(**{**PPO_DEFAULTS, **training})
        .debugging(seed=seed)
    )
