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
    parser.add_argument("--advice", action="store_true",
                        help="the advisor, as in the web table: the exact value of every throw, "
                             "the expert's card and reason in the play, and at the end the "
                             "points given up against the advice")


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
    if isinstance(event, ShowScored):   # every combination listed, as the web table does
        from agents.web.render import show_rows

        what = "crib" if event.is_crib else "hand"
        rows = show_rows(event.breakdown) or [("nothing", "(a nineteen)", 0)]
        return "\n".join([f"{who(event.seat)} {what}: {cards.to_str_many(event.cards)} + "
                          f"{cards.to_str(event.starter)} = {event.points}"]
                         + [f"    {kind:<11} {combo:<16} {pts}" for kind, combo, pts in rows])
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

    def __init__(self, game: Game, seat: int, input_fn, out, advice: bool = False) -> None:
        self.game, self.seat, self.input_fn, self.out = game, seat, input_fn, out
        self.seen = 0
        self.advice = advice
        self.decisions: list = []     # agents.web.table.Decision, with advice on
        self._throw: tuple | None = None   # the discard's advice and the cards laid so far

    def flush_log(self) -> None:
        """Print the events logged since the last call."""
        for event in self.game.events[self.seen:]:
            line = describe(event, self.seat)
            if line:
                print("  " + line, file=self.out)
        self.seen = len(self.game.events)

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        advice = self._advise(view, legal) if self.advice else None
        card = self._ask(view, legal)
        if advice is not None:
            self._note(advice, view, card)
        return card

    def _advise(self, view: PlayerView, legal: list[int]):
        """Print the advisor's word on this decision (once per throw in the discard)."""
        from agents.web.table import discard_advice, play_advice

        self.flush_log()
        if view.phase is Phase.DISCARD:
            if view.discards and self._throw is not None:
                return self._throw[0]
            advice = discard_advice(view)
            self._throw = (advice, [])
            lines = [f"{o['throw']:<6} keep {o['keep']:<12} hand {o['hand']:5.2f}  crib "
                     f"{o['crib']:5.2f}  value {o['value']:+6.2f}" for o in advice.options[:5]]
        else:
            advice = play_advice(view, legal)
            lines = [f"{o['card']}: pegs {o['now']}{' (' + o['how'] + ')' if o['how'] else ''}"
                     f", value {o['value']:+.2f}" for o in advice.options]
        print(f"  advice: {advice.reason}", file=self.out)
        for line in lines:
            print("    " + line, file=self.out)
        return advice

    def _note(self, advice, view: PlayerView, card: int) -> None:
        from agents.web.table import Decision, throw_key

        if advice.kind == "play":
            self.decisions.append(Decision(view.hand_number, "play", cards.to_str(card), advice))
            return
        assert self._throw is not None
        laid = self._throw[1]
        laid.append(card)
        if len(laid) == view.discards_per_player:
            self.decisions.append(Decision(view.hand_number, "discard",
                                           throw_key(advice, laid), advice))
            self._throw = None

    def summary(self) -> str:
        """The points given up against the advice, as the web table's result lists them."""
        from agents.web.table import advice_summary

        s = advice_summary(self.decisions)
        return (f"Advice: {s['followed']} of {s['decisions']} decisions followed it; expected "
                f"points given up: {s['discard']:.2f} in the discard, {s['play']:.2f} in the "
                f"play, {s['total']:.2f} in all.")

    def _ask(self, view: PlayerView, legal: list[int]) -> int:
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
    you = Human(game, human, input_fn, out, advice=getattr(args, "advice", False))
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
    if you.advice:
        print(you.summary(), file=out)
    return 0


def _hint(game: Game, human: int, out) -> None:
    if game.phase is not Phase.DISCARD or game.num_players != 2 or len(game.hands[human]) != 6:
        print(f"  legal: {cards.to_str_many(game.legal_actions())}", file=out)
        return
    from cribenv.discard import analyse_discards

    for opt in analyse_discards(game.hands[human], is_dealer=game.dealer == human)[:3]:
        print(f"  throw {cards.to_str_many(opt.throw)}: expected {opt.expected:.2f}", file=out)
