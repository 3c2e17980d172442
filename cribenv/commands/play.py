"""``cribenv play``: a game against bots in the terminal."""

from __future__ import annotations

import argparse
import sys

from cribenv import cards
from cribenv.game import (
    Event,
    Game,
    GameOver,
    Go,
    Phase,
    Played,
    PlayerView,
    Rules,
    SeriesEnd,
    ShowScored,
    StarterTurned,
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Play Cribbage against bots in the terminal. Type a card (e.g. 5H, "
                          "10d, J♠) when asked; 'hint' ranks your discards, 'q' quits.")
    parser.add_argument("--bot", default="expert",
                        help="opponent spec: random, greedy, expert or ppo:PATH (expert)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4),
                        help="number of players; bots take the other seats (2)")
    parser.add_argument("--target", type=int, default=121, choices=(121, 61),
                        help="points to win (121)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (0)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the deals")


def _name(seat: int, human: int) -> str:
    return "You" if seat == human else f"Bot{seat}"


def describe(event: Event, human: int) -> str | None:
    """One line for the log, or None for events the table already shows."""
    who = (lambda s: _name(s, human))
    if isinstance(event, StarterTurned):
        line = f"Starter: {cards.to_str(event.card)}"
        return line + (f" (his heels: {who(event.dealer)} score 2)" if event.heels else "")
    if isinstance(event, Played):
        pts = f"  +{event.points}" if event.points else ""
        return f"{who(event.seat)} lay {cards.to_str(event.card)}  (count {event.count}){pts}"
    if isinstance(event, Go):
        return f"{who(event.seat)}: Go"
    if isinstance(event, SeriesEnd) and event.points:
        return f"{who(event.seat)} +{event.points} for {event.reason}"
    if isinstance(event, ShowScored):
        what = "crib" if event.is_crib else "hand"
        bd = event.breakdown
        parts = ", ".join(line for line in bd.describe() if not line.startswith("total"))
        return (f"{who(event.seat)} {what}: {cards.to_str_many(event.cards)} + "
                f"{cards.to_str(event.starter)} = {event.points}" + (f"  ({parts})" if parts
                                                                      else ""))
    if isinstance(event, GameOver):
        return f"Game over: side {event.winner} wins, scores {list(event.scores)}, " \
               f"{event.game_points} game point(s)"
    return None


class _Quit(Exception):
    """The player left the table (``q`` or end of input); the message is the goodbye."""


class Human:
    """The player at the terminal, a bot of :mod:`agents.base`: ``choose`` shows the log and
    the table, then reads a card (``hint`` ranks the discards, ``q`` quits). Forced moves are
    asked too: the player lays every card."""

    name = "you"
    asks_forced = True

    def __init__(self, game: Game, seat: int, input_fn, out) -> None:
        self.game, self.seat, self.input_fn, self.out = game, seat, input_fn, out
        self.seen = 0

    def flush_log(self) -> None:
        """Print the events logged since the last call."""
        for event in self.game.events[self.seen:]:
            line = describe(event, self.seat)
            if line:
                print("  " + line, file=self.out)
        self.seen = len(self.game.events)

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        while True:
            self.flush_log()
            scores = " | ".join(f"side {i}: {s}" for i, s in enumerate(view.scores))
            hand = cards.to_str_many(view.hand)
            if view.phase is Phase.DISCARD:
                crib_owner = "your" if view.is_dealer else f"Bot{view.dealer}'s"
                prompt = f"[{scores}] Discard to {crib_owner} crib from {hand}: "
            else:
                prompt = f"[{scores}] count {view.count}, your hand {hand}: "
            try:
                text = self.input_fn(prompt).strip()
            except EOFError:
                raise _Quit("\nbye") from None
            if text.lower() in ("q", "quit", "exit"):
                raise _Quit("bye")
            if text.lower() == "hint":
                _hint(self.game, self.seat, self.out)
                continue
            try:
                card = cards.parse(text)
                if card not in legal:   # the engine's own message says why
                    self.game.clone().step(card)
            except ValueError as exc:   # IllegalActionError is a ValueError
                print(f"  {exc}", file=self.out)
                continue
            return card


def run(args: argparse.Namespace, input_fn=input, out=sys.stdout) -> int:
    from agents import make_agent
    from agents.arena import run_game

    rules = Rules(num_players=args.players, target=args.target)
    if not 0 <= args.seat < rules.num_players:
        raise ValueError(f"--seat must be 0..{rules.num_players - 1}")
    human = args.seat
    game = Game(rules, seed=args.seed)
    you = Human(game, human, input_fn, out)
    players = [you if s == human else
               make_agent(args.bot, seed=None if args.seed is None else args.seed + s)
               for s in range(rules.num_players)]
    print(f"Cribbage to {rules.target}: you are seat {human} against {args.bot}.", file=out)
    try:
        run_game(game, players)
    except _Quit as bye:
        print(str(bye), file=out)
        return 0
    you.flush_log()
    return 0


def _hint(game: Game, human: int, out) -> None:
    if game.phase is not Phase.DISCARD or game.num_players != 2 or len(game.hands[human]) != 6:
        print(f"  legal: {cards.to_str_many(game.legal_actions())}", file=out)
        return
    from cribenv.discard import analyse_discards

    for opt in analyse_discards(game.hands[human], is_dealer=game.dealer == human)[:3]:
        print(f"  throw {cards.to_str_many(opt.throw)}: expected {opt.expected:.2f}", file=out)
