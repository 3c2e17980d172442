"""``cribenv play``: a game against bots in the terminal.

The person is a bot like the others (:class:`Human`, whose ``choose`` reads the terminal) in
the one game loop (:func:`agents.arena.run_game`); the log names the seats and says the scores
as the web table does (:mod:`agents.words`), and ``--advice`` is the web table's advisor
(:mod:`agents.advice`)."""

from __future__ import annotations

import argparse
import sys

from agents.advice import Decision, advice_summary, discard_advice, play_advice, throw_key
from agents.arena import run_game
from agents.base import make_agent
from agents.expert import ExpertAgent
from agents.ppo import shipped_specs
from agents.words import YOU, bot_name, possessive, seat_names, show_rows, side_names
from cribenv import cards
from cribenv.game import (
    Cut,
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
                          "10d, J♠) when asked, or both cards of a throw on one line (8D 3H); "
                          "'hint' ranks your options with the expert's reasoning, 'q' quits.")
    parser.add_argument("--bot", default="expert",
                        help="opponent spec: random, greedy, expert, "
                             f"{', '.join(shipped_specs())} (the shipped networks), ppo:PATH "
                             "or search:BASE, e.g. search:ppo:shipped (expert)")
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


def _says(seat: int, names, you: str, bot: str) -> str:
    """``"You score"`` / ``"expert scores"``: the name and the verb that agrees with it."""
    return f"{names[seat]} {you if names[seat] == YOU else bot}"


def _possessive(seat: int, names) -> str:
    return "your" if names[seat] == YOU else possessive(names[seat])


def _scores(scores, names) -> str:
    return " | ".join(f"{side} {s}" for side, s in zip(side_names(names), scores))


def describe(event: Event, names) -> str | None:
    """One line for the log, in a card player's words (``names``: the seats'
    :func:`~agents.words.seat_names`, with their seat numbers), or None
    for events the table already shows."""
    if isinstance(event, Cut):
        rounds = "; a tie, cut again: ".join(
            ", ".join(f"{names[s]} {cards.to_str(c)}" for s, c in enumerate(cut) if c is not None)
            for cut in event.rounds)
        return f"Cut for deal: {rounds}; {_says(event.dealer, names, 'deal', 'deals')} first"
    if isinstance(event, StarterTurned):
        line = f"Starter: {cards.to_str(event.card)}"
        return line + (f" ({_says(event.dealer, names, 'score', 'scores')} 2 for his heels)"
                       if event.heels else "")
    if isinstance(event, Played):
        pts = f", {event.points} for {_peg_reason(event)}" if event.points else ""
        return (f"{_says(event.seat, names, 'play', 'plays')} {cards.to_str(event.card)}"
                f"  (count {event.count}){pts}")
    if isinstance(event, Go):
        return f"{_says(event.seat, names, 'say', 'says')} go"
    if isinstance(event, SeriesEnd) and event.points:
        return f"{_says(event.seat, names, 'score', 'scores')} {event.points} for {event.reason}"
    if isinstance(event, ShowScored):   # every combination listed, as the web table does
        what = "crib" if event.is_crib else "hand"
        whose = _possessive(event.seat, names)
        rows = show_rows(event.breakdown) or [("nothing", "(a nineteen)", 0)]
        return "\n".join([f"{whose[0].upper() + whose[1:]} {what}: "
                          f"{cards.to_str_many(event.cards)} + {cards.to_str(event.starter)} = "
                          f"{event.points}"]
                         + [f"    {kind:<11} {combo:<16} {pts}" for kind, combo, pts in rows])
    if isinstance(event, GameOver):
        if event.winner is None:
            return f"Game over: {_scores(event.scores, names)}"
        who = side_names(names)[event.winner]
        verb = "win" if who == YOU or " & " in who else "wins"
        skunk = {2: ", a skunk (2 game points)", 3: ", a double skunk (3 game points)"}
        return (f"Game over: {who} {verb}, {_scores(event.scores, names)}"
                f"{skunk.get(event.game_points, '')}")
    return None


def _peg_reason(event: Played) -> str:
    """What a laid card scored: ``fifteen``, ``a pair``, ``a run of 3``, ``31``, ..."""
    bd = event.breakdown
    parts = []
    if bd.fifteen:
        parts.append("fifteen")
    if bd.thirty_one:
        parts.append("31")
    if bd.pair_count:
        parts.append({2: "a pair", 3: "a pair royal", 4: "a double pair royal"}[bd.pair_count])
    if bd.run_length:
        parts.append(f"a run of {bd.run_length}")
    return " and ".join(parts) or "pegging"


class _Quit(Exception):
    """The player left the table (``q``, status 0, or end of input, status 1); the message is
    the goodbye."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class Human:
    """The player at the terminal, a bot of :mod:`agents.base`: ``choose`` shows the log and
    the table, then reads a card, or both cards of a 2-player throw on one line (``hint``
    ranks the options, ``q`` quits). Forced moves are asked too: the player lays every card."""

    name = "you"
    asks_forced = True

    def __init__(self, game: Game, seat: int, input_fn, out, advice: bool = False,
                 bot: str = "bot") -> None:
        self.game, self.seat, self.input_fn, self.out = game, seat, input_fn, out
        self.names = seat_names(game.num_players, seat, bot_name(bot), seat_numbers=True)
        self.seen = 0
        self.pending: list[int] = []   # the rest of a throw typed on one line
        self.advice = advice
        self.decisions: list[Decision] = []     # with advice on
        self._throw: tuple | None = None   # the discard's advice and the cards laid so far

    def flush_log(self) -> None:
        """Print the events logged since the last call."""
        for event in self.game.events[self.seen:]:
            line = describe(event, self.names)
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
        s = advice_summary(self.decisions)
        return (f"Advice: {s['followed']} of {s['decisions']} decisions followed it; expected "
                f"points given up: {s['discard']:.2f} in the discard, {s['play']:.2f} in the "
                f"play, {s['total']:.2f} in all.")

    def _ask(self, view: PlayerView, legal: list[int]) -> int:
        if self.pending:
            card = self.pending.pop(0)
            if view.phase is Phase.DISCARD and card in legal:
                return card
            self.pending = []
        while True:
            self.flush_log()
            scores = _scores(view.scores, self.names)
            hand = cards.to_str_many(view.hand)
            if view.phase is Phase.DISCARD:
                left = view.discards_per_player - len(view.discards)
                crib_owner = _possessive(view.dealer, self.names)
                many = f"{left} cards" if left > 1 else ("1 more card" if view.discards
                                                         else "1 card")
                prompt = f"[{scores}] Discard to {crib_owner} crib ({many}) from {hand}: "
            else:
                prompt = f"[{scores}] count {view.count}, your hand {hand}: "
            try:
                text = self.input_fn(prompt).strip()
            except EOFError:
                raise _Quit("\ncribenv play: end of input before the game ended (type q to "
                            "quit)", status=1) from None
            if text.lower() in ("q", "quit", "exit"):
                raise _Quit("bye")
            if text.lower() == "hint":
                _hint(view, legal, self.out)
                continue
            try:
                chosen = self._read(text, view, legal)
            except ValueError as exc:
                print(f"  {exc}", file=self.out)
                continue
            if not chosen:
                continue
            self.pending = chosen[1:]
            return chosen[0]

    def _read(self, text: str, view: PlayerView, legal: list[int]) -> list[int]:
        """The cards typed, checked against the hand and the count; ValueError says why not,
        in a player's words."""
        typed = cards.parse_many(text)
        if len(set(typed)) != len(typed):
            raise ValueError(f"you typed {cards.to_str_many(typed)}: each card once, please")
        hand = cards.to_str_many(view.hand)
        for card in typed:
            if card not in view.hand:
                raise ValueError(f"you don't hold {cards.to_str(card)} (your hand: {hand})")
        if view.phase is Phase.DISCARD:
            left = view.discards_per_player - len(view.discards)
            if len(typed) > left:
                raise ValueError(f"throw {left} card{'s' if left > 1 else ''} to the crib, "
                                 f"not {len(typed)}")
            return typed
        if len(typed) > 1:
            raise ValueError("play one card at a time")
        if typed and typed[0] not in legal:
            card = cards.to_str(typed[0])
            raise ValueError(f"{card} would take the count past 31 (the count is {view.count}); "
                             f"you can play {cards.to_str_many(legal)}")
        return typed


def run(args: argparse.Namespace, input_fn=input, out=sys.stdout) -> int:
    rules = Rules(num_players=args.players, target=args.target)
    if not 0 <= args.seat < rules.num_players:
        raise ValueError(f"--seat must be 0..{rules.num_players - 1}")
    human = args.seat
    game = Game(rules, seed=args.seed)
    you = Human(game, human, input_fn, out, advice=getattr(args, "advice", False), bot=args.bot)
    players = [you if s == human else
               make_agent(args.bot, seed=None if args.seed is None else args.seed + s)
               for s in range(rules.num_players)]
    called = "" if bot_name(args.bot) == args.bot else f" (called {bot_name(args.bot)} below)"
    print(f"Cribbage to {rules.target}: you are seat {human} against {args.bot}{called}.",
          file=out)
    if rules.num_players == 4:
        partner = (human + 2) % 4
        others = [s for s in range(4) if rules.side_of(s) != rules.side_of(human)]
        print(f"You and {you.names[partner]} are partners, across the table, against "
              f"{' and '.join(you.names[s] for s in others)}.", file=out)
    print("Type a card like 5H or 10d (both cards of a throw on one line: 8D 3H), 'hint' for "
          "the expert's advice, 'q' to quit.", file=out)
    try:
        run_game(game, players)
    except _Quit as bye:
        print(str(bye), file=out if bye.status == 0 else sys.stderr)
        return bye.status
    you.flush_log()
    if you.advice:
        print(you.summary(), file=out)
    return 0


def _hint(view: PlayerView, legal: list[int], out) -> None:
    """The expert's ranking of the options: the throws by expected points (hand and crib),
    or the cards to play by the points they make now and what the replies likely cost."""
    expert = ExpertAgent()
    if view.phase is Phase.DISCARD:
        crib = "+ your crib" if view.crib_is_own else "- their crib"
        shown = 0
        for value, hand_ev, throw, _keep in expert.rank_throws(view):
            if not all(d in throw for d in view.discards):
                continue
            print(f"  throw {cards.to_str_many(throw)}: expected {value:.2f} (hand "
                  f"{hand_ev:.2f} {crib} {abs(value - hand_ev):.2f})", file=out)
            shown += 1
            if shown == 3:
                break
        return
    ranked = sorted(zip(expert.play_values(view, legal), legal), key=lambda x: -x[0][0])
    for (value, now), card in ranked:
        if value >= 1000:
            why = f"scores {now} now and pegs out: you win"
        else:
            after = value - now
            why = (f"scores {now} now, {after:+.2f} expected from the replies and the rest of "
                   f"the play")
        print(f"  play {cards.to_str(card)}: {why}", file=out)
