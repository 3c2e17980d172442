"""What the web table shows of cards, the pegging board (SVG), the play, the show and the
log, worked out for its templates (``webtable/templates/``: :mod:`webtable.templating`).

Everything the page shows is rendered on the server, from the engine's state and event log;
the page's one script (``static/table.js``) only sends clicks and swaps the HTML in. The
functions here hand the templates data; the templates escape every piece of text.

    >>> from cribenv.game import Rules
    >>> svg = board_svg(Rules(), [(30, 21), (0, 0)], ["You", "expert"])
    >>> svg.count('class="peg'), 'data-front="30"' in svg
    (4, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from markupsafe import Markup

from agents.words import YOU, peg_rows, possessive, score_words, show_rows
from cribenv import cards as C
from cribenv.game import (
    Cut,
    Dealt,
    Discarded,
    Game,
    GameOver,
    Go,
    HandEnd,
    Muggins,
    Played,
    Rules,
    SeriesEnd,
    ShowScored,
    StarterTurned,
)
from webtable.templating import ENV, macro, render

__all__ = ["board_svg", "card_face", "card_html", "card_words", "describe_event", "error_page",
           "lobby_page", "log_lines", "muggins_words", "page", "peg_call", "peg_call_html",
           "peg_history", "played_line", "show_hands", "show_html", "with_suits"]

SUIT_SYMBOL = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SIDE_COLOURS = ("#d62d20", "#0057e7", "#f5b700")


RANK_NAMES = {"A": "ace", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


_CARD_TOKEN = re.compile(r"\b([2-9TJQKA])([CDHS])\b")


def with_suits(text: str) -> str:
    """``text`` with every card written as a player reads it: rank and suit symbol.

    >>> with_suits("keep 5H 5S TD, throw 2S 3C")
    'keep 5♥ 5♠ 10♦, throw 2♠ 3♣'
    """
    return _CARD_TOKEN.sub(lambda m: ("10" if m[1] == "T" else m[1]) + SUIT_SYMBOL[m[2]], text)


def card_words(card: int) -> str:
    """A card as a screen reader says it.

    >>> card_words(C.parse("TH")), card_words(C.parse("AS"))
    ('10 of hearts', 'ace of spades')
    """
    s = C.to_str(card)
    return f"{RANK_NAMES.get(s[0], s[0])} of {SUIT_NAMES[s[1]]}"


def card_face(card: int) -> SimpleNamespace:
    """What a card's face shows (its template: ``cards.html``): ``code`` (``"TH"``), ``rank``
    (``"10"``), ``suit`` (``"♥"``), ``colour`` and the ``words`` a screen reader says.

    >>> card_face(C.parse("TH"))
    namespace(code='TH', rank='10', suit='♥', colour='red', words='10 of hearts')
    """
    s = C.to_str(card)
    return SimpleNamespace(code=s, rank="10" if s[0] == "T" else s[0], suit=SUIT_SYMBOL[s[1]],
                           colour="red" if s[1] in "DH" else "black", words=card_words(card))


ENV.globals["face"] = card_face
ENV.filters["with_suits"] = with_suits


def card_html(card: int, *, playable: bool = False, dim: bool = False, small: bool = False,
              label: str = "", chosen: bool = False, fresh: int | None = None,
              last: bool = False) -> Markup:
    """A card face (a button when ``playable``; outlined when ``chosen``), e.g. ``T♥`` in red.
    ``fresh``: laid since the person's last move, the ``fresh``-th (it is dealt onto the felt
    in turn); ``last``: the card laid last (highlighted).

    >>> str(card_html(C.parse("TH")))  # doctest: +ELLIPSIS
    '<span class="card red" data-card="TH" ...aria-label="10 of hearts"><b>10</b><i>♥</i></span>'
    """
    return macro("cards.html", "card")(card, playable=playable, dim=dim, small=small,
                                       label=label, chosen=chosen, fresh=fresh, last=last)


# ------------------------------------------------------------------------------ the board

def peg_history(game: Game) -> list[tuple[int, int]]:
    """``(front, back)`` peg of each side: its score, and its score before its last unit.

    >>> game = Game(Rules(), seed=1)
    >>> while game.hand_number < 1:
    ...     _ = game.step(game.legal_actions()[0])
    >>> [front for front, _ in peg_history(game)] == list(game.scores)
    True
    """
    rules = game.rules
    pegs = [(0, 0)] * rules.num_sides
    events = game.events
    for i, ev in enumerate(events):
        kind = type(ev)
        if kind is SeriesEnd:
            units = [(ev.seat, ev.points)]
        elif kind is Played or kind is ShowScored:
            nxt = events[i + 1] if i + 1 < len(events) else None
            units = [(ev.seat, ev.points)]
            if type(nxt) is Muggins:   # the seat scores its claim, the caller the rest
                units = [(ev.seat, nxt.scored), (nxt.caller, nxt.taken)]
        elif kind is StarterTurned:
            units = [(ev.dealer, ev.heels)]
        else:
            continue
        for seat, pts in units:
            side = rules.side_of(seat)
            front = pegs[side][0]
            if pts and rules.unit_scores(front, pts):
                pegs[side] = (min(front + pts, rules.target), front)
    return pegs


def board_svg(rules: Rules, pegs: Sequence[tuple[int, int]], names: Sequence[str],
              per_row: int | None = None) -> Markup:
    """The pegging board: a lane of ``target`` holes per side in groups of five, a front and a
    back peg per side, the skunk lines (and double-skunk line) across the lanes. ``per_row``:
    fold the track into rows of that many holes (a phone's board; the side names in a legend
    above it) instead of one long row.

    >>> svg = board_svg(Rules(), [(12, 5), (30, 21)], ["You", "Expert"], per_row=30)
    >>> svg.count('r="1.7"'), svg.count('class="row-start"')   # 2 x 121 holes; 5 rows
    (242, 5)
    """
    target = rules.target
    sides = len(pegs)
    folded = per_row is not None
    row_len = per_row if per_row is not None else target
    step = 7.0 if target > 61 and not folded else 11.0 if folded else 13.0
    gap = 4.0
    lane_h = 22.0 if not folded else 13.0
    left = 24.0 if folded else max(70.0, 30 + 6.2 * max(len(n) for n in names))
    top = 30.0 if folded else 14.0
    rows = -(-target // row_len)
    block = lane_h * sides + (12.0 if folded else 0.0)

    def x(hole: int) -> float:  # hole 0 is the start, before the first group
        if hole <= 0:
            return left - 12
        col = (hole - 1) % row_len
        return left + col * step + (col // 5) * gap

    def y(hole: int, side: int) -> float:
        row = max(hole - 1, 0) // row_len
        return top + block * row + lane_h * side + lane_h / 2 - 2

    width = x(min(row_len, target)) + 30
    height = top + block * rows + (22 if not folded else 6)
    skunks = []
    for line, label in ((rules.skunk_line, "skunk"), (rules.double_skunk_line, "double skunk")):
        if line:
            lx = (x(line) + x(line + 1)) / 2 if line < target and line % row_len else \
                x(line) + step / 2
            y0 = y(line, 0) - lane_h / 2 + 2
            skunks.append({"line": line, "label": label, "x": lx, "y0": y0,
                           "y1": y0 + lane_h * sides - 2})
    legend = []
    lx = 10.0
    for name in names:
        legend.append({"x": lx, "name": name,
                       "colour": SIDE_COLOURS[len(legend) % len(SIDE_COLOURS)]})
        lx += 24 + 5.6 * len(name)
    row_starts = [{"first": row * row_len + 1, "y": y(row * row_len + 1, 0) + lane_h / 2 + 1}
                  for row in range(rows)]
    lanes = []
    for side, ((front, back), name) in enumerate(zip(pegs, names)):
        numbers = [] if folded else [
            {"hole": hole, "x": x(hole), "y": y(hole, side) - 6}
            for hole in range(5, target + 1, 5) if hole % 30 == 0 or hole == target]
        lanes.append({"side": side, "name": name, "name_y": y(1, side) + 4,
                      "colour": SIDE_COLOURS[side % len(SIDE_COLOURS)],
                      "holes": [(x(h), y(h, side)) for h in range(1, target + 1)],
                      "numbers": numbers, "front": front, "back": back,
                      "front_x": x(front), "front_y": y(front, side),
                      "back_x": x(back), "back_y": y(back, side)})
    return render("board.svg", kind="folded" if folded else "wide", folded=folded,
                  width=width, height=height, words=_board_words(pegs, names, target),
                  skunks=skunks, legend=legend, row_starts=row_starts, lanes=lanes,
                  finish_x=x(target) + 8, top=top, target=target)


def _board_words(pegs: Sequence[tuple[int, int]], names: Sequence[str], target: int) -> str:
    return ", ".join(f"{n} on {front}" for n, (front, _) in zip(names, pegs)) + f", to {target}"


# ------------------------------------------------------------------------------ the log

def describe_event(event: Any, name: Any) -> str | None:
    """One line of the log for ``event`` (``name(seat)`` names a seat), or None; every score
    in a player's words (:func:`agents.words.score_words`).

    >>> from cribenv.game import SeriesEnd
    >>> name = {0: "You", 1: "Expert"}.get
    >>> describe_event(Played(1, C.parse("8D"), 16, 2, tuple(C.parse_many("8S 8D"))), name)
    'Expert lays 8D: 16, pair for 2'
    >>> describe_event(SeriesEnd(0, 1, "go"), name)
    'You peg go for 1'
    """
    kind = type(event)
    if kind is Cut:
        cuts = ", ".join(f"{name(s)} {C.to_str(c)}" for s, c in enumerate(event.rounds[-1])
                         if c is not None)
        return f"Cut for deal: {cuts}; {name(event.dealer)} deal{_s(name(event.dealer))}"
    if kind is Dealt:
        return f"Hand {event.hand_number + 1}: {name(event.dealer)} deal{_s(name(event.dealer))}"
    if kind is StarterTurned:
        heels = (f": {score_words(event)} to {_object(name(event.dealer))}"
                 if event.heels else "")
        return f"Starter {C.to_str(event.card)}{heels}"
    if kind is Played:
        return played_line(event, name)
    if kind is Go:
        return f"{name(event.seat)} say{_s(name(event.seat))} Go"
    if kind is SeriesEnd:
        if event.points:
            return f"{name(event.seat)} peg{_s(name(event.seat))} {score_words(event)}"
        return "31: the count starts again" if event.reason == "31" else None
    if kind is ShowScored:
        what = "crib" if event.is_crib else "hand"
        return f"{name(event.seat)} {what}: {event.points}"
    if kind is Muggins:
        where = "" if event.card is None else f" on {C.to_str(event.card)}"
        return f"{muggins_words(event, name)}{where}"
    if kind is GameOver:
        return None
    return None


def played_line(event: Played, name: Any, then: SeriesEnd | None = None) -> str:
    """``"Expert lays 8D: 16, pair for 2"``: the card, the count and what it scored, with the
    go or last card ``then`` earned by it (pegged at once)."""
    who = name(event.seat)
    said = score_words(event, *([then] if then is not None else []))
    return (f"{who} lay{_s(who)} {C.to_str(event.card)}: {event.count}"
            + (f", {said}" if said else ""))


def log_lines(events: Sequence[Any], name: Any) -> list[str]:
    """The log of ``events``: :func:`describe_event` of each, a card and the go or last card
    it earned at once (nobody else could lay a card) said on one line.

    >>> from cribenv.game import SeriesEnd
    >>> laid = Played(0, C.parse("8D"), 23, 2, tuple(C.parse_many("7C 8S 8D")))
    >>> log_lines([laid, SeriesEnd(0, 1, "last card")], {0: "You"}.get)
    ['You lay 8D: 23, pair for 2 and last card for 1']
    """
    lines = []
    skip = False
    for i, ev in enumerate(events):
        if skip:
            skip = False
            continue
        nxt = events[i + 1] if i + 1 < len(events) else None
        if (type(ev) is Played and type(nxt) is SeriesEnd and nxt.points
                and nxt.seat == ev.seat):
            lines.append(played_line(ev, name, nxt))
            skip = True
            continue
        line = describe_event(ev, name)
        if line:
            lines.append(line)
    return lines


def _s(name: str) -> str:
    return "" if name == YOU else "s"


def _object(name: str) -> str:
    """``name`` after a preposition: "you" for the person."""
    return "you" if name == YOU else name


# ------------------------------------------------------------------------------ the play

def muggins_words(call: Muggins, name: Any) -> str:
    """A Muggins call in a player's words: what the seat claimed, and what the caller took.

    >>> muggins_words(Muggins(0, False, 1, 2, 1), lambda s: ["You", "Expert"][s])
    'You claimed 1 of 2: Muggins! Expert takes the 1 overlooked'
    >>> muggins_words(Muggins(0, False, 5, 2, 1), lambda s: ["You", "Expert"][s])
    'You claimed 5 for 2, a false count: Muggins! Expert takes the 3 over'
    """
    who, caller = name(call.seat), name(call.caller)
    if call.claimed > call.points:
        return (f"{who} claimed {call.claimed} for {call.points}, a false count: Muggins! "
                f"{caller} take{_s(caller)} the {call.taken} over")
    return (f"{who} claimed {call.claimed} of {call.points}: Muggins! {caller} "
            f"take{_s(caller)} the {call.taken} overlooked")


def peg_call(events: Sequence[Any], seat: int, name: Any) -> dict[str, Any] | None:
    """With Muggins, the last card ``seat`` laid in ``events`` (one hand's): what it pegged,
    item by item (``rows``), the go or last card that followed it (pegged without a claim),
    and what the seat claimed, with the Muggins call on what it overlooked; None if it laid
    none. Its template: ``parts.html``'s ``peg_call``."""
    at = next((i for i in range(len(events) - 1, -1, -1)
               if type(events[i]) is Played and events[i].seat == seat), None)
    if at is None:
        return None
    laid = events[at]
    rows = peg_rows(laid.series)
    call = None
    then = []
    for ev in events[at + 1:]:
        kind = type(ev)
        if kind is Played:
            break
        if kind is Muggins and ev.card is not None:
            call = ev
        elif kind is SeriesEnd and ev.points and ev.seat == seat:
            rows.append((ev.reason, "no claim needed", ev.points))
            then.append(ev)
    who = name(seat)
    return {"card": C.to_str(laid.card), "points": laid.points, "count": laid.count,
            "claimed": call.claimed if call is not None else laid.points,
            "who": who, "whose": possessive(who), "said": score_words(laid, *then),
            "rows": rows, "muggins": muggins_words(call, name) if call is not None else ""}


def peg_call_html(events: Sequence[Any], seat: int, name: Any) -> Markup:
    """:func:`peg_call` as the page shows it (empty if ``seat`` laid no card)."""
    return macro("parts.html", "peg_call")(peg_call(events, seat, name))


# ------------------------------------------------------------------------------ the show

def show_hands(events: Sequence[Any], name: Any) -> list[dict[str, Any]]:
    """Every hand and the crib of a show, each with its combinations (``rows``), its total and
    the Muggins call on it, if any. Their template: ``parts.html``'s ``show``."""
    hands = []
    for i, ev in enumerate(events):
        if type(ev) is not ShowScored:
            continue
        nxt = events[i + 1] if i + 1 < len(events) else None
        muggins = None
        if type(nxt) is Muggins:
            muggins = {"claimed": nxt.claimed, "words": muggins_words(nxt, name)}
        hands.append({"seat": ev.seat, "crib": ev.is_crib, "points": ev.points,
                      "whose": possessive(name(ev.seat)),
                      "what": "crib" if ev.is_crib else "hand", "cards": ev.cards,
                      "starter": ev.starter, "rows": show_rows(ev.breakdown),
                      "muggins": muggins})
    return hands


def show_html(events: Sequence[Any], name: Any) -> Markup:
    """:func:`show_hands` as the page shows them."""
    return macro("parts.html", "show")(show_hands(events, name))


# ------------------------------------------------------------------------------ the page

def page(title: str, body: Markup) -> Markup:
    """A whole HTML document around ``body`` (a rendered template: a plain string is
    escaped; the stylesheet and the script are local)."""
    return render("page.html", title=title, body=body)


def error_page(title: str, message: str, back: tuple[str, str] | None = None) -> Markup:
    """A page that says what went wrong, with a link ``back`` (``(url, text)``) if given."""
    return page(title, render("error.html", message=message, back=back))


def lobby_page(lobby: Markup, error: str | None = None) -> Markup:
    """The lobby's page: the ``lobby`` (the new-game form), and a welcome or an ``error``."""
    return page("Cribbage", render("lobby_page.html", lobby=lobby, error=error))


def hand_end_index(events: Sequence[Any]) -> int | None:
    """Index of the first :class:`HandEnd` in ``events``, or None."""
    for i, ev in enumerate(events):
        if type(ev) is HandEnd:
            return i
    return None


def discarded_by(events: Sequence[Any], seat: int) -> list[int]:
    return [ev.card for ev in events if type(ev) is Discarded and ev.seat == seat]
