"""A mask every seat can sample from, and rewards paid on a seat's own turn: the Cribbage AEC env
made safe for masked policies that read every agent's mask (PettingZoo's parallel route,
SuperSuit, TorchRL, any library on the parallel API). Torch-free: numpy and PettingZoo only.

An RL library that steps the AEC env through PettingZoo's parallel API
(``pettingzoo.utils.conversions.turn_based_aec_to_parallel``: the parallel env of a turn-based
game, which SuperSuit's vector envs and parallel-API trainers take) hands every agent an
observation on every step, and a masked policy samples a card for each. Two things get in its way:

* **Masks of the seats that wait.** In PettingZoo an agent that is not to act (and every agent
  once the game is over) has an all-zero ``action_mask``; a masked categorical over it has no
  card to pick (all ``-inf`` logits, NaN probabilities) and fails. Through
  ``turn_based_aec_to_parallel(cribenv.env())`` the waiting seat's mask is all zeros on every
  row (TorchRL's AEC path also hands the final state's all-zero mask to the policy).
  :class:`TurnMaskWrapper` (``idle_mask="ones"``, the default) gives such an agent a mask of
  all ones: a valid distribution, and the action is never applied (``"zeros"`` keeps
  PettingZoo's). The agent to act still sees exactly its legal cards.
* **Rewards that arrive while a seat waits.** With ``reward="points"`` the opponent's cards,
  his heels and the show pay a seat on other agents' turns, so about half of its rewards sit on
  rows where it did not act, which a loss over the rows where it acted never sees.
  ``rewards="on_turn"`` (the default) holds an agent's rewards while it waits and pays them on
  its next own step (with what that step scores), and pays every agent all it is owed on the
  game's last step. So an agent's rewards lie only on its own rows and on the final row, and
  add up to its total; ``"as_scored"`` keeps the env's timing (each reward on the step that
  scored it). The timing applies to ``rewards``, which the parallel route and TorchRL read
  after each step; ``last()``'s reward (an AEC loop's) stays the env's own accumulation.

The parallel route with it: every agent's mask has a card on every step, the game's end
included, and each seat's rewards add up to its score difference::

    >>> import numpy as np
    >>> import cribenv
    >>> from pettingzoo.utils.conversions import turn_based_aec_to_parallel
    >>> from cribenv.turn_mask import TurnMaskWrapper
    >>> env = turn_based_aec_to_parallel(TurnMaskWrapper(cribenv.env(target=61, reward="points")))
    >>> obs, infos = env.reset(seed=0)
    >>> rng = np.random.default_rng(0)
    >>> every_mask_has_a_card, totals = True, dict.fromkeys(env.possible_agents, 0.0)
    >>> while env.agents:
    ...     every_mask_has_a_card &= all(o["action_mask"].any() for o in obs.values())
    ...     actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"])))   # a card each;
    ...                for a, o in obs.items()}                    # only the actor's is played
    ...     obs, rewards, terminations, truncations, infos = env.step(actions)
    ...     totals = {a: totals[a] + r for a, r in rewards.items()}
    >>> every_mask_has_a_card and all(o["action_mask"].any() for o in obs.values())
    True
    >>> scores = env.unwrapped.game.scores
    >>> totals == {"player_0": scores[0] - scores[1], "player_1": scores[1] - scores[0]}
    True

``cribenv.integrations.torchrl.make_env`` wraps the env in it for TorchRL's
``PettingZooWrapper``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

__all__ = ["TurnMaskWrapper"]


class TurnMaskWrapper(BaseWrapper):
    """A PettingZoo wrapper of the Cribbage AEC env: an all-ones mask for an agent with no card
    to play, and rewards paid on an agent's own turn (see the module docstring).

    Args:
        env: the AEC env (``cribenv.env(...)``, dict observations: the default ``obs_type``).
        idle_mask: ``"ones"``: an agent with no legal card (not its turn, or the game is over)
            observes an all-ones ``action_mask``; ``"zeros"``: PettingZoo's all-zero mask.
        rewards: ``"on_turn"``: an agent's rewards are paid on its own steps and, at the end,
            on the last step; ``"as_scored"``: on the step that scored them.
    """

    def __init__(self, env: Any, idle_mask: str = "ones", rewards: str = "on_turn") -> None:
        if idle_mask not in ("ones", "zeros"):
            raise ValueError(f"idle_mask must be 'ones' or 'zeros', got {idle_mask!r}")
        if rewards not in ("on_turn", "as_scored"):
            raise ValueError(f"rewards must be 'on_turn' or 'as_scored', got {rewards!r}")
        space = env.observation_space(env.possible_agents[0])
        if not (isinstance(space, spaces.Dict) and "action_mask" in space.spaces):
            raise ValueError("TurnMaskWrapper needs dict observations with an 'action_mask' "
                             f"(cribenv.env()'s default obs_type); got {space}")
        super().__init__(env)
        self.idle_mask = idle_mask
        self.reward_timing = rewards
        self._owed: dict[str, float] = {}
        self._paid: dict[str, float] = {}

    @property
    def rewards(self) -> dict[str, float]:   # what the parallel route and TorchRL read
        return self.env.rewards if self.reward_timing == "as_scored" else self._paid

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._owed = dict.fromkeys(self.possible_agents, 0.0)
        self._paid = dict.fromkeys(self.possible_agents, 0.0)

    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        dead = self.env.terminations[agent] or self.env.truncations[agent]
        super().step(action)
        self._paid = dict.fromkeys(self.possible_agents, 0.0)
        if dead:
            return
        for a, r in self.env.rewards.items():
            self._owed[a] += r
        over = all(self.env.terminations.values()) or all(self.env.truncations.values())
        for a in (self.possible_agents if over else [agent]):
            self._paid[a], self._owed[a] = self._owed[a], 0.0

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = super().observe(agent)
        if self.idle_mask == "ones" and not obs["action_mask"].any():
            obs = {"observation": obs["observation"],
                   "action_mask": np.ones_like(obs["action_mask"])}
        return obs
