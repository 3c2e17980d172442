"""Cribbage as a PettingZoo AEC environment: discard and pegging as alternating masked actions.

All rules live in :mod:`cribenv.game`; this module only translates between the game and the
PettingZoo API (agents, observations, masks, rewards, rendering).

Env card (``cribbage_v0``)
==========================

==================  ===========================================================================
Import              ``import cribenv; env = cribenv.env()`` (or ``cribenv.raw_env()``; also
                    ``pettingzoo.make("aec", "cribenv/cribbage-v0")`` after ``import cribenv``)
Actions             Discrete
Parallel API        through ``turn_based_aec_to_parallel`` (turn-based; tested)
Agents              ``["player_0", ..., "player_{n-1}"]``, ``num_players`` = 2, 3 or 4
Action shape        ``Discrete(52)``: the card id ``rank * 4 + suit`` (``cribenv.cards``)
Observation         ``{"observation": float32[601] in [0, 2], "action_mask": int8[52]}``
Rules               ``target`` 121 or 61, skunk lines, ``must_peg_out_exactly``
                    (:class:`~cribenv.game.Rules`); docs/rules.md for the rules themselves;
                    ``muggins`` is for human play only: agents never claim, all counts in full
==================  ===========================================================================

**Actions.** One action is one card, in both phases: in the discard the card laid away to the
crib (in 2-player games the same agent acts twice in a row, then the next; with 3 and 4
players each lays away one card, and in 3 players one more is dealt straight to the crib), in
the play the card laid on the count. Forced Go passes are applied by the engine and never
reach an agent; the starter, the show and the crib are scored automatically.

**Observation.** ``observation`` is :func:`cribenv.observation.encode` of the agent's
:class:`~cribenv.game.PlayerView`, seat-relative ("seat +k" sits k places to the agent's left)
and the same layout for 2, 3 and 4 players: its hand, its discards, the starter, the cards each
seat laid this hand and their order, the count and the series, Go calls, cards held, scores,
dealer, the seat to act, partners, phase, the game's size, then derived rank counts; the blocks
and their meaning are ``cribenv.observation.LAYOUT`` (tabulated in docs/observation.md). It
holds only what the seat may know (``decode`` inverts it to the view), so no hidden card leaks.
``observe(agent)`` works for any agent at any time.

**Action mask.** ``action_mask[c] == 1`` exactly for the legal cards of the agent to act; all
zero for the others. An illegal card: ``env()`` ends the game with ``illegal_reward`` (default
-1) for its agent (as PettingZoo's ``TerminateIllegalWrapper`` does: :class:`StandardWrapper`
does the standard wrappers' checks in one layer); ``raw_env()`` raises
:class:`~cribenv.game.IllegalActionError` naming the card and the legal ones.

**Rewards** (zero-sum). ``reward="win"``: at the end +1 to the winning side and -1 shared by
the losing side(s) (4 players: partners share their side's result), times the game points (2
skunk, 3 double skunk) with ``skunks=True``, plus ``shaping`` times the point differential if
asked. ``reward="points"``: the point differential (own side minus the mean of the other sides)
earned since the agent last acted. Points scored on another agent's turn (his heels, a go, the
show) reach every agent through ``_cumulative_rewards``, so an agent's rewards over an episode
with ``reward="points"`` add up to its side's final score difference.

**Episode.** ``episode="game"`` runs to the target (``terminations`` all true, ``infos`` hold
``scores``, ``winner``, ``game_points``, ``hands``); ``episode="hand"`` ends after one deal.
``reset(seed=...)`` seeds the deals (the same seed and actions give the same game, event for
event); ``reset()`` without a seed continues the seeded sequence; ``options={"deals": [Deal,
...], "first_dealer": seat, "game_seed": int}`` fixes them. ``render_mode="ansi"`` returns the
table as text, ``"human"`` prints it, ``"rgb_array"`` draws it (:mod:`cribenv.render_image`).
``obs_type="flat"`` makes the observation the float32 vector alone, with the mask in
``infos[agent]["action_mask"]``.

**Version history.**

* ``cribbage_v0`` (cribenv 0.1.0): the first release. Before it, the observation grew from
  536 to 601 entries (the derived rank features appended at the end).

Usage (one game, each agent laying its first legal card)::

    >>> import numpy as np
    >>> import cribenv
    >>> env = cribenv.env(num_players=2, target=121, reward="win")
    >>> env.reset(seed=42)
    >>> for agent in env.agent_iter():
    ...     obs, reward, termination, truncation, info = env.last()
    ...     if termination or truncation:
    ...         action = None
    ...     else:
    ...         action = int(np.flatnonzero(obs["action_mask"])[0])
    ...     env.step(action)
    >>> info
    {'scores': (113, 134), 'winner': 1, 'game_points': 1, 'hands': 10}
    >>> env.observation_space("player_0")["observation"].shape
    (601,)
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from cribenv import cards as C
from cribenv.checks import card_id, exact_bool, exact_int, real_number
from cribenv.game import Game, GameOver, HandEnd, Phase, Rules
from cribenv.observation import OBS_SIZE, encode_game
from cribenv.registration import AEC_ENV_ID
from cribenv.rules import win_reward
from cribenv.standard_wrapper import StandardWrapper, remove_dead_agent

__all__ = ["env", "raw_env", "CribbageEnv", "StandardWrapper", "ENV_ID"]

ENV_ID = AEC_ENV_ID
_SEED_MAX = 2**63 - 1
_RESET_OPTIONS = frozenset({"deals", "first_dealer", "game_seed"})
_RULE_OPTIONS = frozenset(f.name for f in fields(Rules)) - {"num_players", "target"}


def env(illegal_reward: float = -1.0, **kwargs: Any) -> AECEnv:
    """The Cribbage AEC env with the checks of PettingZoo's standard wrappers.

    An illegal action ends the game with ``illegal_reward`` for the agent that made it (as
    PettingZoo's ``TerminateIllegalWrapper`` does); out-of-range actions assert; the API order
    is enforced (``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``). All three are done by
    one layer, :class:`StandardWrapper`. Keyword arguments go to :class:`CribbageEnv`.
    """
    return StandardWrapper(CribbageEnv(**kwargs), illegal_reward=illegal_reward)


def _check_option_names(options: dict[Any, Any]) -> None:
    """Refuse a misspelt reset option (``"deal"``); other unknown keys are ignored, as
    Gymnasium does and PettingZoo's API test requires (it resets with ``{"options": 1}``)."""
    import difflib

    for key in options:
        if key in _RESET_OPTIONS:
            continue
        known = ", ".join(map(repr, sorted(_RESET_OPTIONS)))
        close = difflib.get_close_matches(str(key), _RESET_OPTIONS, n=1, cutoff=0.6)
        if close:
            raise ValueError(f"unknown reset option {key!r}: did you mean {close[0]!r}? "
                             f"(the options are {known})")


RENDER_MODES = ("human", "ansi", "rgb_array")


def check_render_mode(render_mode: str | None) -> None:
    """Raise a ValueError naming ``render_mode`` unless it is None or one of RENDER_MODES."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None, 'human', 'ansi' or 'rgb_array', got "
                         f"{render_mode!r}")


def render_table(render_mode: str | None, table: Any, image: Any, hint: str
                 ) -> str | np.ndarray | None:
    """What ``render()`` does: the text of ``table()`` (``"ansi"``), printed (``"human"``,
    returning ``None``), the picture ``image()`` (``"rgb_array"``: see
    :mod:`cribenv.render_image`), or a warning ending in ``hint`` when there is no render
    mode."""
    if render_mode is None:
        import gymnasium

        gymnasium.logger.warn(f"render() called without a render_mode; {hint}")
        return None
    if render_mode == "rgb_array":
        return image()
    text = table()
    if render_mode == "human":
        print(text)
        return None
    return text


class _CardSpace(spaces.Discrete):
    """``Discrete(52)`` whose ``contains`` answers a plain ``int`` without numpy (the bounds
    check of :class:`StandardWrapper` asks it every step); other values take Gymnasium's
    path."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < 52
        if isinstance(x, bool):   # Gymnasium counts True as the int 1
            return False
        return super().contains(x)


class CribbageEnv(AECEnv):
    """Cribbage for 2, 3 or 4 players as a PettingZoo AEC environment.

    Args:
        num_players: 2, 3 or 4 (4 = two partnerships: player_0 & player_2 against 1 & 3).
        target: 121 or 61.
        reward: ``"win"``: at the end +1 to the winning side and -1 shared by the losing
            side(s) (zero-sum; multiplied by the game points 2 / 3 for skunks when ``skunks``);
            ``"points"``: the zero-sum point differential (own side's points minus the mean of
            the other sides') scored since the agent last acted.
        episode: ``"game"`` (to the target) or ``"hand"`` (one deal per episode; pair it with
            ``reward="points"``).
        skunks: scale the win reward by the game points.
        shaping: with ``reward="win"``, add ``shaping`` x the point differential each step.
        render_mode: None, ``"ansi"`` (``render()`` returns the table as text), ``"human"``
            (prints it) or ``"rgb_array"`` (an image of the table, ``uint8`` (576, 960, 3);
            needs Pillow: :mod:`cribenv.render_image`).
        obs_type: ``"dict"`` (``{"observation", "action_mask"}``) or ``"flat"``: the
            observation is the float32 vector alone (a ``Box``, so observation wrappers such as
            SuperSuit's ``flatten_v0`` / ``dtype_v0`` / ``frame_stack_v1`` apply) and each
            agent's mask is ``infos[agent]["action_mask"]`` (also ``action_mask(agent)`` and
            ``action_masks()``).
        rules: extra :class:`~cribenv.game.Rules` fields (``skunk_line``,
            ``double_skunk_line``, ``must_peg_out_exactly``).

    ``reset(seed=..., options={"deals": [Deal, ...], "first_dealer": seat})`` fixes the deals.
    """

    metadata = {
        "name": "cribbage_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, num_players: int = 2, target: int = 121, reward: str = "win",
                 episode: str = "game", skunks: bool = False, shaping: float = 0.0,
                 render_mode: str | None = None, obs_type: str = "dict", **rules: Any) -> None:
        super().__init__()
        if reward not in ("win", "points"):
            raise ValueError(f"reward must be 'win' or 'points', got {reward!r}")
        if episode not in ("game", "hand"):
            raise ValueError(f"episode must be 'game' or 'hand', got {episode!r}")
        if exact_int(target, "target") not in (61, 121):
            raise ValueError(f"target must be 121 or 61, got {target!r}")
        check_render_mode(render_mode)
        if obs_type not in ("dict", "flat"):
            raise ValueError(f"obs_type must be 'dict' or 'flat', got {obs_type!r}")
        unknown = sorted(set(rules) - _RULE_OPTIONS)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(map(repr, unknown))}; the env takes "
                            f"num_players, target, reward, episode, skunks, shaping, render_mode, "
                            f"obs_type and the Rules fields {', '.join(sorted(_RULE_OPTIONS))}")
        self.rules = Rules(num_players=num_players, target=target, **rules)
        num_players, target = self.rules.num_players, self.rules.target
        self.reward_mode = reward
        self.episode = episode
        self.skunks = exact_bool(skunks, "skunks")
        self.shaping = real_number(shaping, "shaping")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.obs_type = obs_type
        self._flat = obs_type == "flat"
        vector = spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32)
        obs_space = vector if self._flat else spaces.Dict({
            "observation": vector,
            "action_mask": spaces.Box(0, 1, (52,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: _CardSpace(52) for a in self.possible_agents}
        self._side = [self.rules.side_of(s) for s in range(num_players)]
        self._num_sides = self.rules.num_sides
        self._num_players = num_players
        self._target = target
        self._seed_rng = np.random.default_rng()
        self.game: Game | None = None
        self._rewards_paid = False   # some entry of self.rewards may be non-zero
        self._resume_agent: str | None = None   # selected again once the dead agents stepped

    # ---------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict, got {options!r}")
        options = options or {}
        if not _RESET_OPTIONS.issuperset(options):
            _check_option_names(options)
        if seed is not None:
            seed = exact_int(seed, "seed")
            if seed < 0:
                raise ValueError(f"seed must be >= 0, got {seed}")
        game_seed = options.get("game_seed")
        if game_seed is not None:
            game_seed = exact_int(game_seed, "game_seed")
        rng = self._seed_rng if seed is None else np.random.default_rng(seed)
        before = rng.bit_generator.state
        if game_seed is None:
            game_seed = int(rng.integers(_SEED_MAX))
        try:  # the Game checks the deals and first_dealer
            self.game = Game(self.rules, seed=game_seed, deals=options.get("deals"),
                             first_dealer=options.get("first_dealer"),
                             max_hands=1 if self.episode == "hand" else None)
        except (TypeError, ValueError):
            rng.bit_generator.state = before   # a refused reset changes nothing
            raise
        self._seed_rng = rng
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._scores = list(self.game.scores)
        self._resume_agent = None
        self._apply_points()  # nothing scored yet; keeps one code path
        self.agent_selection = self.agents[self.game.current_player]
        if self._flat:
            self._masks_to_infos()

    def step(self, action: int) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped its final None: "
                               "call reset() to start another")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._resume_agent = remove_dead_agent(self, action, self._resume_agent)
            return
        if type(action) is not int:
            action = card_id(action)   # numpy ints pass; floats, strings, bools, None do not
        self._cumulative_rewards[agent] = 0.0
        events = game.step(action)   # IllegalActionError (clear message) if illegal
        # most steps score nothing and follow a step that paid nothing: rewards stay all zero
        if self._rewards_paid or game.scores != self._scores:
            self._apply_points()
        if game.current_player is None:
            self._finish(events)
            self._add_rewards()
        else:
            self.agent_selection = self.agents[game.current_player]
            if self._rewards_paid:
                self._add_rewards()
        if self._flat:
            self._masks_to_infos()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray] | np.ndarray:
        """The agent's observation and action mask (its vector alone with ``obs_type="flat"``):
        new arrays on every call, the caller's to change (nothing is cached, so nothing written
        to them reaches the env)."""
        obs = self._observe(agent)
        return obs["observation"] if self._flat else obs

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before observe()")
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; the agents are {self.possible_agents}")
        return {"observation": encode_game(game, seat), "action_mask": self._mask(game, seat)}

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The mask of ``agent`` (default: the agent to act), a new array, without encoding the
        observation."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before action_mask()")
        agent = agent or self.agent_selection
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; the agents are {self.possible_agents}")
        return self._mask(game, seat)

    @staticmethod
    def _mask(game: Game, seat: int) -> np.ndarray:
        mask = bytearray(52)
        if game.current_player == seat:
            for c in game.legal_actions():
                mask[c] = 1
        return np.frombuffer(mask, np.int8)

    def action_masks(self) -> np.ndarray:
        """The legal cards of the agent to act as a bool array of 52 (the name SB3's
        ``MaskablePPO`` and SuperSuit-wrapped code look for)."""
        return self.action_mask().astype(bool)

    def _masks_to_infos(self) -> None:
        """``obs_type="flat"``: every agent's mask in its info (PettingZoo's place for it when
        the observation is not a dict)."""
        game = self.game
        assert game is not None
        to_act = game.current_player
        legal = game.legal_actions()
        for agent in self.agents:
            mask = np.zeros(52, np.int8)
            if self.agent_name_mapping[agent] == to_act:
                mask[legal] = 1
            self.infos[agent]["action_mask"] = mask

    # ---------------------------------------------------------------- rewards
    def _add_rewards(self) -> None:
        """Add ``self.rewards`` to ``self._cumulative_rewards``."""
        cumulative = self._cumulative_rewards
        for agent, reward in self.rewards.items():
            cumulative[agent] += reward

    def _apply_points(self) -> None:
        """Set ``self.rewards`` from the points scored since the last call."""
        game = self.game
        assert game is not None
        new = game.scores
        gained = [b - a for a, b in zip(self._scores, new)]
        self._scores = list(new)
        weight = 1.0 if self.reward_mode == "points" else self.shaping
        sides = self._num_sides
        total = sum(gained)
        rewards = self.rewards
        paid = False
        for agent, seat in self.agent_name_mapping.items():
            if agent not in rewards:
                continue
            if weight and total:
                own = gained[self._side[seat]]
                rewards[agent] = r = weight * (own - (total - own) / (sides - 1))
                paid = paid or r != 0.0
            else:
                rewards[agent] = 0.0
        self._rewards_paid = paid

    def _finish(self, events: list) -> None:
        game = self.game
        assert game is not None
        over = next((e for e in reversed(events) if isinstance(e, GameOver)), None)
        if self.reward_mode == "win" and over is not None:
            scale = float(over.game_points) if self.skunks else 1.0
            sides = self._num_sides
            for agent, seat in self.agent_name_mapping.items():
                self.rewards[agent] += win_reward(self._side[seat] == over.winner, scale, sides)
        for agent in self.agents:
            self.terminations[agent] = True
            self.infos[agent] = {
                "scores": tuple(game.scores),
                "winner": None if game.winner is None else game.winner,
                "game_points": game.game_points,
                "hands": game.hand_number + (0 if any(isinstance(e, HandEnd)
                                                      for e in events) else 1),
            }

    # ---------------------------------------------------------------- rendering
    def render(self) -> str | np.ndarray | None:
        return render_table(self.render_mode, self._table, self._image,
                            "pass render_mode 'ansi', 'human' or 'rgb_array' to cribenv.env().")

    def _image(self, learner: int | None = None) -> np.ndarray:
        from cribenv.render_image import blank_image, table_image

        return blank_image() if self.game is None else table_image(self.game, learner)

    def _table(self) -> str:
        game = self.game
        if game is None:
            return "(not reset)"
        n = self.rules.num_players
        lines = [f"Cribbage: {n} players to {self.rules.target}, hand {game.hand_number + 1}, "
                 f"dealer {self.possible_agents[game.dealer]}, phase {game.phase.name}"]
        score_parts = []
        for side in range(self._num_sides):
            members = [a for a, s in self.agent_name_mapping.items() if self._side[s] == side]
            score_parts.append(f"{'+'.join(members)} {game.scores[side]}")
        lines.append("scores   " + " | ".join(score_parts))
        lines.append("starter  " + (C.to_str(game.starter) if game.starter is not None else "--"))
        series = game.played[game.series_start:] if game.phase is Phase.PLAY else []
        lines.append(f"count    {game.count:>2}   series: "
                     + (" ".join(f"{C.to_str(c)}(p{s})" for s, c in series) or "--"))
        lines.append(f"crib     {len(game.crib)} cards ({self.possible_agents[game.dealer]})")
        for seat in range(n):
            agent = self.possible_agents[seat]
            played = [C.to_str(c) for s, c in game.played if s == seat]
            mark = ">" if game.current_player == seat else " "
            held = (C.to_str_many(sorted(game.hands[seat])) if game.current_player == seat
                    else f"{len(game.hands[seat])} cards")
            lines.append(f"{mark} {agent:<9} hand: {held:<20} played: {' '.join(played) or '--'}")
        if game.phase is Phase.GAME_OVER:
            result = ("no winner (episode ended)" if game.winner is None else
                      f"side {game.winner} wins ({game.game_points} game point(s))")
            lines.append("game over: " + result)
        return "\n".join(lines)

    def close(self) -> None:
        pass


raw_env = CribbageEnv
