"""The advisor, one home for the web table and the terminal game: every option of a decision
valued, the option it recommends and why, and afterwards what the person's choices gave up.

* :func:`discard_advice`: every throw valued exactly (hand and crib over every starter and
  crib, plus the kept cards' learned pegging with 2 players);
* :func:`play_advice`: the expert's card in the play and the value of each legal card;
* the strongest agent's word (the Champion: :data:`PLAY_SPEC`, a search over the shipped
  network, 2 players with the batched engine): :func:`strongest_throw`,
  :func:`search_values` and :func:`strongest_play_advice`;
* :func:`advise`: the web table's advice on a decision (the Champion's where it can run, the
  expert's otherwise, and the expert's should the search fail);
* :class:`Decision` and :func:`advice_summary`: what the person chose against the advice.

    >>> from cribenv.game import Deal, Game, Rules
    >>> deal = Deal(0, ["5S 4S 2S 8D 6H 8C", "AH 2H 3H 7D 9D KS"], "5D")
    >>> advice = discard_advice(Game(Rules(), seed=0, deals=[deal]).view(0))
    >>> advice.kind, advice.best, advice.reason.split(":")[0]
    ('discard', '8C 8D', 'keep 2S 4S 5S 6H')
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.expert import ExpertAgent
from agents.words import score_words
from cribenv import cards as C
from cribenv.discard import analyse_discards, discard_evs
from cribenv.game import Game, Phase, PlayerView
from cribenv.scoring import peg_breakdown

__all__ = ["PLAY_SPEC", "Advice", "Decision", "advice_summary", "advise", "describe_peg",
           "discard_advice", "play_advice", "search_values", "strongest_agent",
           "strongest_play_advice", "strongest_throw", "throw_key"]

#: The strongest agent, asked about each card of the play (about 10 ms a decision).
PLAY_SPEC = "search:ppo:shipped?playouts=200"
_searcher: Any = None
_searcher_lock = threading.RLock()   # one search agent for every review and advice
log = logging.getLogger(__name__)


@dataclass
class Advice:
    """The advisor's word on one decision: the options with their values (best first), the
    card(s) it recommends and a one-line reason. ``values`` maps an option key (the thrown or
    laid cards as a string, e.g. ``"5H 5S"``) to its value in ``unit``: ``"points"``
    (expected points) or ``"win"`` (the chance to win, in percent)."""

    kind: str                     # "discard" or "play"
    best: str
    reason: str
    options: list[dict[str, Any]]
    values: dict[str, float] = field(default_factory=dict)
    unit: str = "points"
    champion: str | None = None   # the discard: the strongest agent's throw (it counts the play)


def discard_advice(view: PlayerView) -> Advice:
    """Every throw of the cards dealt to ``view``'s seat valued: the exact expected points of
    the hand and the crib (the ``discard`` analysis; 3/4 players:
    :func:`cribenv.discard.discard_evs` for one card) and, with 2 players, the play: the
    expected pegging differential of the kept cards (:mod:`agents.peg_values`, learned from
    self-play, as the expert counts it). ``value`` is their sum.

    >>> from cribenv.game import Deal, Rules
    >>> deal = Deal(0, ["5S 4S 2S 8D 6H 8C", "AH 2H 3H 7D 9D KS"], "5D")
    >>> advice = discard_advice(Game(Rules(), seed=0, deals=[deal]).view(0))
    >>> best = advice.options[0]
    >>> advice.best, round(best["hand"], 3), round(best["play"], 2)   # the dealer throws 88
    ('8C 8D', 8.5, 1.99)
    """
    own = view.own_cards
    crib_sign = 1.0 if view.crib_is_own else -1.0
    options = []
    if view.num_players == 2:
        from agents.peg_values import shipped

        pegging = shipped()
        for opt in analyse_discards(own, is_dealer=view.crib_is_own):
            play = pegging.value(opt.keep, view.crib_is_own)
            options.append({"throw": C.to_str_many(opt.throw), "keep": C.to_str_many(opt.keep),
                            "hand": opt.hand_ev, "crib": opt.crib_ev, "play": play,
                            "value": opt.expected + play})
    else:
        keeps, throws, hand_ev, crib_ev = discard_evs(own, None, view.discards_per_player)
        for keep, throw, h, c in zip(keeps, throws, hand_ev, crib_ev):
            options.append({"throw": C.to_str_many(throw), "keep": C.to_str_many(keep),
                            "hand": h, "crib": c, "value": h + crib_sign * c})
    options.sort(key=lambda o: (-o["value"], -o["hand"], o["throw"]))
    best = options[0]
    whose = "your" if view.crib_is_own else "the opponent's"
    play = (f", {best['play']:+.2f} in the play (the kept cards' learned pegging)"
            if "play" in best else "")
    reason = (f"keep {best['keep']}: {best['hand']:.2f} expected in hand, "
              f"{'+' if view.crib_is_own else '-'}{best['crib']:.2f} in {whose} crib{play} "
              "(the show exact over every starter and random crib cards)")
    return Advice("discard", best["throw"], reason, options,
                  {o["throw"]: o["value"] for o in options})


def play_advice(view: PlayerView, legal: list[int]) -> Advice:
    """The expert bot's choice in the play and why: each legal card with the points it pegs now
    and the expert's value of it (points now, minus the expected reply, plus what follows)."""
    expert = ExpertAgent()
    values = expert.play_values(view, legal)
    choice = expert.play(view, legal)
    series = view.series_cards
    options = []
    for card, (value, now) in zip(legal, values):
        options.append({"card": C.to_str(card), "now": now, "value": value,
                        "how": describe_peg([*series, card]) if now else ""})
    options.sort(key=lambda o: -o["value"])
    best = next(o for o in options if o["card"] == C.to_str(choice))
    if best["value"] >= 1000:
        reason = f"{best['card']} pegs out"
    elif best["now"]:
        reason = f"{best['card']} pegs {best['now']} now ({best['how']})"
    else:
        reason = f"{best['card']} pegs nothing now but risks the least against the reply"
    reason += f"; value {best['value']:+.2f} expected points"
    return Advice("play", best["card"], reason, options,
                  {o["card"]: o["value"] for o in options})


def strongest_play_advice(view: PlayerView, legal: list[int], seed: int, move: int
                          ) -> Advice | None:
    """The strongest agent's choice in the play (the Champion's search,
    :func:`search_values`, 2 players): each legal card with the points it
    pegs now and its chance to win over the search's playouts, in percent. None where the
    search cannot run (3 or 4 players, or no batched engine): :func:`play_advice` then."""
    if view.num_players != 2:
        return None
    got = search_values(view, legal, seed, move)
    if got is None:
        return None
    choice, win = got
    series = view.series_cards
    options = []
    for card in legal:
        now = peg_breakdown([*series, card]).total
        options.append({"card": C.to_str(card), "now": now, "value": 100.0 * win[card],
                        "how": describe_peg([*series, card]) if now else ""})
    options.sort(key=lambda o: (-o["value"], o["card"] != C.to_str(choice)))
    best = next(o for o in options if o["card"] == C.to_str(choice))
    reason = (f"the Champion lays {best['card']}: {best['value']:.1f}% to win over its playouts"
              + (f"; it pegs {best['now']} now ({best['how']})" if best["now"] else ""))
    return Advice("play", best["card"], reason, options,
                  {o["card"]: o["value"] for o in options}, unit="win")


def describe_peg(series: Sequence[int]) -> str:
    """What the last card of ``series`` pegs, in a player's words (go and last card excluded;
    :func:`agents.words.score_words`).

    >>> describe_peg(C.parse_many("4C 6C 5C"))
    'fifteen for 2 and a run of three for 3'
    """
    return score_words(peg_breakdown(list(series)))


@dataclass
class Decision:
    """One decision of the person: what they chose and what the advisor said."""

    hand_number: int
    kind: str
    chosen: str
    advice: Advice

    @property
    def loss(self) -> float:
        """Expected points given up against the advice (0 when the advice was followed)."""
        values = self.advice.values
        return max(0.0, values[self.advice.best] - values.get(self.chosen, values[
            self.advice.best]))


def advice_summary(decisions: Sequence[Decision]) -> dict[str, Any]:
    """How many ``decisions`` followed the advice, the expected points given up in the discard,
    in the play and in all (``play_win``: the chance to win given up in the play, in
    percentage points, where the strongest agent advised), and the three costliest decisions
    by points (``worst``)."""
    by_kind = {"discard": 0.0, "play": 0.0, "play_win": 0.0}
    followed = 0
    for d in decisions:
        by_kind[d.kind if d.advice.unit == "points" else f"{d.kind}_win"] += d.loss
        followed += d.loss < 1e-9
    in_points = [d for d in decisions if d.advice.unit == "points"]
    return {"decisions": len(decisions), "followed": followed,
            "discard": by_kind["discard"], "play": by_kind["play"],
            "play_win": by_kind["play_win"], "total": by_kind["discard"] + by_kind["play"],
            "worst": sorted(in_points, key=lambda d: -d.loss)[:3]}


def throw_key(advice: Advice, ids: Sequence[int]) -> str:
    """The advice's key for the throw ``ids`` (the options list cards in dealt order)."""
    want = set(ids)
    for key in advice.values:
        if set(C.parse_many(key)) == want:
            return key
    return C.to_str_many(ids)


# ------------------------------------------------------------------------ the strongest agent

def strongest_agent() -> Any:
    """The search agent, made once (its policy loaded once); ``None`` where it cannot run
    (no batched engine: the ``vector`` extra)."""
    global _searcher
    with _searcher_lock:
        if _searcher is None:
            if importlib.util.find_spec("numba") is None:
                return None
            from agents.base import make_agent

            _searcher = make_agent(PLAY_SPEC, seed=0)
        return _searcher


def search_values(view: Any, legal: list[int], seed: int, move: int
                  ) -> tuple[int, dict[int, float]] | None:
    """The strongest agent's word on a card of the play (:data:`PLAY_SPEC`, seeded by
    ``[seed, move]`` so the same position gets the same answer): its card and each legal
    card's mean chance to win (0..1); None where the search does not run (no batched engine,
    a target other than 121 or 61, or a single legal card)."""
    with _searcher_lock:   # one agent for every review and advice: seeded afresh each time
        bot = strongest_agent()
        if bot is None:
            return None
        bot.rng = np.random.default_rng([seed, move])
        card = int(bot.choose(view, legal))
        if "cards" not in bot.last:
            return None
        cards, values = list(bot.last["cards"]), [float(v) for v in bot.last["values"]]
    return card, dict(zip(cards, values))


def strongest_throw(game: Game) -> list[int] | None:
    """The cards the strongest agent throws from the hand dealt to the seat to act (its
    network's discard, which weighs the play as well as the show); None without the search
    (no batched engine)."""
    with _searcher_lock:
        bot = strongest_agent()
        if bot is None:
            return None
        trial = game.clone()
        seat = trial.current_player
        thrown = []
        while trial.current_player == seat and trial.phase is Phase.DISCARD:
            card = int(bot.base.choose(trial.view(seat), trial.legal_actions()))
            thrown.append(card)
            trial.step(card)
    return thrown


def advise(game: Game, seat: int, seed: int = 0) -> Advice | None:
    """The web table's advice on ``seat``'s decision in ``game`` (``seed``: the game's, which
    seeds the search): in the discard every throw valued (:func:`discard_advice`), with the
    Champion's throw beside it (2 players); in the play the Champion's chances to win
    (:func:`strongest_play_advice`), or the expert's values (:func:`play_advice`) where the
    search does not run. None in the discard once its first card is laid (3 or 4 players lay
    one card: the advice was for the dealt hand). The Champion failing (its engine, its
    memory) is logged, and the expert's word stands: the game goes on."""
    view = game.view(seat)
    if view.phase is Phase.DISCARD:
        if view.discards:
            return None
        advice = discard_advice(view)
        if view.num_players == 2:
            thrown = _champion(strongest_throw, game)
            if thrown is not None:
                advice.champion = throw_key(advice, thrown)
                advice.reason += (f". The Champion throws {advice.champion}: its network "
                                  "weighs the play as well as the show")
        return advice
    legal = game.legal_actions()
    return (_champion(strongest_play_advice, view, legal, seed, len(game.actions))
            or play_advice(view, legal))


def _champion(ask: Any, *args: Any) -> Any:
    """The strongest agent's word, ``None`` should it fail (logged, not a 500)."""
    try:
        return ask(*args)
    except Exception:   # the search (its engine, its memory)
        log.exception("cribenv serve: the Champion's advice failed")
        return None
