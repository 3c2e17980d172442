"""Where a bot loses points: its discards measured against their exact expected value.

The positions are the first hands of the ladder's deals, each seen from both seats (the dealer
and the pone), at 0-0: the agent lays away its two cards, and the throw's **regret** is the
exact expected points of the best throw less those of its own (hand + crib for the dealer,
hand - crib for the pone, over every starter and every throw of the other seat:
:func:`cribenv.discard.analyse_discards`). A bot that also weighs the play (the pegging its
kept cards make) gives up some of these points on purpose; the regret says how many.

>>> from agents import make_agent
>>> q = discard_quality(make_agent("greedy"), deals=3)
>>> q["dealer"]["hands"], q["pone"]["hands"], q["dealer"]["regret"] >= 0
(3, 3, True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cribenv.discard import analyse_discards
from cribenv.game import Game, Phase
from cribenv.observation import encode_game
from tournament.ladder.deals import DealSet, load

__all__ = ["discard_quality"]


def ask_card(agent: Any, game: Game, seat: int) -> int:
    """The card ``agent`` (a bot or a policy) lays for ``seat`` in ``game``; one it may not lay
    raises :class:`agents.arena.IllegalAgentActionError` (a game would forfeit it)."""
    from agents.arena import IllegalAgentActionError, agent_name

    legal = game.legal_actions()
    if callable(getattr(agent, "choose", None)):
        choice = agent.choose(game.view(seat), legal)
    else:
        mask = np.zeros(52, np.int8)
        mask[legal] = 1
        choice = agent.act({"observation": encode_game(game, seat), "action_mask": mask})
    try:
        card = int(choice)
    except (TypeError, ValueError):
        card = -1
    if card not in legal or card != choice:     # as agents.arena.run_game checks it
        name = agent_name(agent)
        raise IllegalAgentActionError(f"{name!r} chose {choice!r}, not a card it may lay",
                                      name, seat, choice)
    return card


def _throw(agent: Any, game_seed: int, first_dealer: int, seat: int) -> tuple[list[int],
                                                                             tuple[int, ...]]:
    """The 6 cards ``seat`` is dealt in the deal's first hand and the 2 the agent lays away."""
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset()
    game = Game(seed=game_seed, first_dealer=first_dealer)
    dealt = sorted(game.hands[seat])
    while game.phase is Phase.DISCARD:
        mover = game.current_player
        game.step(ask_card(agent, game, seat) if mover == seat else game.legal_actions()[0])
    return dealt, tuple(sorted(game.discards[seat]))


def _summary(regrets: list[float], best: list[bool]) -> dict[str, Any]:
    n = len(regrets)
    mean = sum(regrets) / n
    var = sum((r - mean) ** 2 for r in regrets) / (n - 1) if n > 1 else math.nan
    half = 1.959963984540054 * math.sqrt(var / n) if n > 1 else math.nan
    return {"hands": n, "regret": round(mean, 4), "regret_low": round(mean - half, 4),
            "regret_high": round(mean + half, 4), "best_share": round(sum(best) / n, 4)}


def discard_quality(agent: Any, deals: int = 500, deal_set: DealSet | None = None
                    ) -> dict[str, dict[str, Any]]:
    """The agent's discard regret (mean points given up, 95% interval) and share of best
    throws, as the dealer and as the pone, over the first hands of ``deals`` deals."""
    deal_set = deal_set or load()
    out = {}
    for role in ("dealer", "pone"):
        regrets: list[float] = []
        best: list[bool] = []
        for d, game_seed in enumerate(deal_set.game_seeds[:deals]):
            first_dealer = d % 2
            seat = first_dealer if role == "dealer" else 1 - first_dealer
            dealt, thrown = _throw(agent, game_seed, first_dealer, seat)
            options = analyse_discards(dealt, is_dealer=role == "dealer")
            chosen = next(o for o in options if tuple(sorted(o.throw)) == thrown)
            regrets.append(options[0].expected - chosen.expected)
            best.append(chosen.expected == options[0].expected)
        out[role] = _summary(regrets, best)
    return out
