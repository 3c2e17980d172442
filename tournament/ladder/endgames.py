"""Endgame positions with a proven answer: cards that win for certain, and cards that do not.

A position is a moment of the play near the end of a 2-player game (both sides 101 or more,
the other seat holding one or two cards, the seat to act two or three, a choice to make).
What the seat cannot see is the other seat's cards: every holding consistent with the play so
far (the cards it has not seen, of the value its Gos allow) is dealt in turn. A card **wins for
certain** when the seat has a way to go on (choosing each later card from what it has seen
only) that wins the game in this hand's play or in the count of the two hands, whatever the
other seat holds and whatever it lays: an AND-OR search over those holdings
(:func:`certain_win`), exact on the engine (:class:`cribenv.game.Game`). A line that reaches
the crib or the next hand does not count as a win (the crib holds the other seat's discards,
never seen).

The suite keeps the positions where some legal cards win for certain and others do not; a
bot's score is the share where it lays a winning card. ``python -m tournament.ladder.endgames``
finds and proves them again (the file ``tournament/ladder/data/endgames-v1.json`` lists each as its
deal and the moves that lead to it, with the proven cards).
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

from cribenv import cards as C
from cribenv.game import Game, Phase, ShowScored
from cribenv.positions import go_floors

__all__ = ["ENDGAMES_FILE", "certain_win", "endgame_score", "holdings", "winning_cards"]

ENDGAMES_FILE = Path(__file__).resolve().parent / "data" / "endgames-v1.json"
_VALUE = [min(10, (c >> 2) + 1) for c in range(52)]


def holdings(game: Game, seat: int) -> list[Game]:
    """One copy of ``game`` for each holding of the other seat that ``seat`` cannot rule out
    (2 players, in the play): its cards replaced, the crib's unseen cards filled in."""
    view = game.view(seat)
    other = 1 - seat
    floor = go_floors(view)[other]
    unseen = [c for c in view.unseen_cards() if _VALUE[c] >= floor]
    filler = [c for c in view.unseen_cards()]
    laid = [c for s, c in view.played if s == other]
    out = []
    for held in itertools.combinations(unseen, view.cards_held[other]):
        g = game.clone()
        g.hands[other] = list(held)
        g.kept[other] = laid + list(held)
        spare = [c for c in filler if c not in held][:len(g.discards[other])]
        g.discards[other] = spare
        g.crib = list(g.discards[seat]) + spare
        out.append(g)
    return out


def _stepped(games: list[Game], card: int) -> list[Game]:
    """Copies of ``games``, each with ``card`` laid."""
    out = []
    for g in games:
        g2 = g.clone()
        g2.step(card)
        out.append(g2)
    return out


def _lost(game: Game, seat: int, start: int) -> bool | None:
    """True: not a certain win from here (the other side won, the crib was reached, the hand
    ended); False: won; None: the play goes on."""
    if any(isinstance(e, ShowScored) and e.is_crib for e in game.events[start:]):
        return True
    if game.winner is not None:
        return game.winner != seat
    if game.phase is not Phase.PLAY:
        return True
    return None


def certain_win(games: list[Game], seat: int, start: int) -> bool:
    """Whether ``seat`` wins for certain from ``games`` (the same position seen by ``seat``,
    one game per holding of the other seat); ``start``: the index of the position's first
    event (earlier events are history)."""
    live = []
    for g in games:
        lost = _lost(g, seat, start)
        if lost:
            return False
        if lost is None:
            live.append(g)
    if not live:
        return True
    mine = [g for g in live if g.current_player == seat]
    if len(mine) == len(live):                       # the seat to choose: one card for all
        return any(certain_win(_stepped(live, card), seat, start)
                   for card in live[0].legal_actions())
    # the other seat to lay a card, or (where it cannot) a Go the seat sees: every branch
    branches: dict[Any, list[Game]] = {"go": mine} if mine else {}
    for g in live:
        if g.current_player == seat:
            continue
        for card in g.legal_actions():
            branches.setdefault(card, []).extend(_stepped([g], card))
    return all(certain_win(b, seat, start) for b in branches.values())


def winning_cards(game: Game) -> tuple[list[int], int]:
    """The legal cards of the seat to act that win for certain, and the number of holdings."""
    seat = game.current_player
    worlds = holdings(game, seat)
    start = len(game.events)
    wins = [card for card in game.legal_actions()
            if certain_win(_stepped(worlds, card), seat, start)]
    return wins, len(worlds)


def _candidate(game: Game) -> bool:
    seat = game.current_player
    if seat is None or game.phase is not Phase.PLAY or len(game.legal_actions()) < 2:
        return False
    view = game.view(seat)
    return (min(view.scores) >= view.target - 20 and 1 <= view.cards_held[1 - seat] <= 2
            and len(view.hand) <= 3)


def find_positions(deals: int, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Play ``pairs`` of agents on the ladder's first ``deals`` deals (both seatings) and keep
    the candidate positions with a proven split between winning and other cards."""
    from agents import make_agent
    from tournament.ladder.deals import load

    deal_set = load()
    found: dict[tuple, dict[str, Any]] = {}
    for a, b in pairs:
        for d, seed in enumerate(deal_set.game_seeds[:deals]):
            for seating in (0, 1):
                bots = [make_agent(a), make_agent(b)][::1 if seating == 0 else -1]
                game = Game(seed=seed, first_dealer=d % 2)
                while game.current_player is not None:
                    seat = game.current_player
                    if _candidate(game):
                        key = (seed, d % 2, tuple(game.actions))
                        if key not in found:
                            wins, worlds = winning_cards(game)
                            legal = game.legal_actions()
                            if 0 < len(wins) < len(legal):
                                found[key] = {
                                    "seed": seed, "first_dealer": d % 2,
                                    "moves": [C.to_str(x) for x in game.actions],
                                    "seat": seat, "legal": [C.to_str(x) for x in legal],
                                    "winning": [C.to_str(x) for x in wins],
                                    "holdings": worlds}
                    game.step(bots[seat].choose(game.view(seat), game.legal_actions()))
    return [found[k] for k in sorted(found)]


def position_game(position: dict[str, Any]) -> Game:
    """The game of a stored position, at the position."""
    game = Game(seed=position["seed"], first_dealer=position["first_dealer"])
    for move in position["moves"]:
        game.step(C.parse(move))
    return game


def load_positions(path: str | Path = ENDGAMES_FILE) -> list[dict[str, Any]]:
    return json.loads(Path(path).read_text(encoding="utf-8"))["positions"]


def endgame_score(agent: Any, positions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The share of the suite's positions where ``agent`` lays a card that wins for certain.

    >>> from agents import make_agent
    >>> score = endgame_score(make_agent("expert"))
    >>> score["positions"] > 0 and 0 <= score["won"] <= score["positions"]
    True
    """
    from tournament.ladder.quality import ask_card

    positions = load_positions() if positions is None else positions
    won = 0
    for position in positions:
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset()
        game = position_game(position)
        won += C.to_str(ask_card(agent, game, position["seat"])) in position["winning"]
    return {"positions": len(positions), "won": won,
            "share": round(won / len(positions), 4) if positions else None}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tournament.ladder.endgames",
        description="find the endgame positions on the ladder's deals and prove their cards")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--out", default=str(ENDGAMES_FILE))
    args = parser.parse_args(argv)
    pairs = [("expert", "greedy"), ("expert", "expert")]
    positions = find_positions(args.deals, pairs)
    from cribenv.files import write_text

    write_text(args.out, json.dumps({
        "name": "cribenv-endgames-v1", "deals": args.deals, "pairs": pairs,
        "rule": "both sides 101 or more; the other seat holds 1-2 cards; the seat to act 2-3 "
                "and a choice; some legal cards win for certain, others do not",
        "positions": positions}, indent=1) + "\n")
    print(f"{len(positions)} positions written to {args.out}")


if __name__ == "__main__":
    main()
