"""The pages of the web table: the table of a game in progress, the lobby and a replay.

Each function returns HTML built by :mod:`webtable.render` from a :class:`Table` (or a replayed
:class:`~cribenv.game.Game`); the table's root element carries the game's id, its move number
and its stage (``data-game``, ``data-seq``, ``data-stage``), which the page's script sends back
with every move.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from agents.advice import Advice
from agents.words import possessive, score_words, seat_names, side_names
from cribenv import cards as C
from cribenv.game import (
    Cut,
    Dealt,
    Discarded,
    Game,
    GameOver,
    Go,
    Muggins,
    Played,
    SeriesEnd,
    ShowScored,
    StarterTurned,
)
from webtable.opponents import forfeit_words
from webtable.render import (
    back_html,
    board_svg,
    card_html,
    cards_html,
    describe_event,
    log_lines,
    muggins_words,
    peg_call_html,
    peg_history,
    played_line,
    show_html,
    with_suits,
)
from webtable.table import Table, hand_events

__all__ = ["how_it_ended", "lobby_html", "replay_html", "said_since_your_card", "table_html",
           "throw_table"]

GAME_POINTS = {1: "a win", 2: "a skunk", 3: "a double skunk"}


def _hand_state(events: Sequence[Any]) -> dict[str, Any]:
    """What the felt shows of one hand, from its events: dealer, starter, the series laid,
    the count, who said Go, the thrown cards."""
    state: dict[str, Any] = {"dealer": None, "starter": None, "series": [[]], "count": 0,
                             "go": set(), "discards": {}}
    for ev in events:
        kind = type(ev)
        if kind is Dealt:
            state["dealer"] = ev.dealer
        elif kind is Discarded:
            state["discards"].setdefault(ev.seat, []).append(ev.card)
        elif kind is StarterTurned:
            state["starter"] = ev.card
        elif kind is Played:
            state["series"][-1].append((ev.seat, ev.card))
            state["count"] = ev.count
        elif kind is Go:
            state["go"].add(ev.seat)
        elif kind is SeriesEnd:
            state["series"].append([])
            state["count"] = 0
            state["go"] = set()
    return state


def _felt(game: Game, events: Sequence[Any], name: Callable[[int], str], human: int | None,
          hands: dict[int, list[int]] | None, playable: Sequence[int], current: bool,
          crib: Sequence[int] | None = None, under_hand: str = "", over_hand: str = "") -> str:
    """The felt: the other seats, the starter and the crib, the cards laid, the person's hand
    (``over_hand`` above it: what the bots just scored; ``under_hand`` below it: the throw
    button or the Muggins claim).

    ``hands`` (seat -> cards) are shown face up; other seats' cards face down."""
    n = game.num_players
    st = _hand_state(events)
    dealer = st["dealer"]
    seats = []
    for seat in range(n):
        if seat == human:
            continue
        held = hands.get(seat) if hands else None
        if held is None:
            count = game.view(seat).cards_held[seat] if current else 0
            shown = "".join(back_html(small=True) for _ in range(count))
        else:
            shown = cards_html(held, small=True)
        badges = ""
        if seat == dealer:
            badges += '<span class="badge dealer" title="the dealer">dealer</span>'
        if seat in st["go"]:
            badges += '<span class="badge go">Go</span>'
        if current and game.current_player == seat:
            badges += '<span class="badge turn">to play</span>'
        seats.append(f'<div class="seat" data-seat="{seat}"><h4>{escape(name(seat))}{badges}'
                     f'</h4><div class="cards">{shown or "&nbsp;"}</div></div>')
    series_html = []
    last = len(st["series"]) - 1
    laid_order = [sc for series in st["series"] for sc in series]
    mine_at = max((i for i, (s, _) in enumerate(laid_order) if s == human), default=-1)
    fresh = {sc: k for k, sc in enumerate(laid_order[mine_at + 1:])} if current else {}
    final = laid_order[-1] if laid_order and current else None
    for i, series in enumerate(st["series"]):
        if not series:
            continue
        laid = "".join(card_html(c, small=True, label=name(s), fresh=fresh.get((s, c)),
                                 last=(s, c) == final) for s, c in series)
        cls = "series current" if i == last else "series done"
        series_html.append(f'<div class="{cls}">{laid}</div>')
    starter = st["starter"]
    starter_html = card_html(starter) if starter is not None else back_html()
    crib_owner = f"{possessive(name(dealer))} crib" if dealer is not None else "crib"
    if crib is not None:
        crib_cards = cards_html(crib, small=True)
    else:
        thrown = sum(len(v) for v in st["discards"].values())
        crib_cards = "".join(back_html(small=True) for _ in range(thrown + (n == 3)))
    mine = ""
    if human is not None:
        held = (hands or {}).get(human, [])
        dealer_badge = ('<span class="badge dealer">dealer</span>' if human == dealer else "")
        go_badge = '<span class="badge go">Go</span>' if human in st["go"] else ""
        mine = (f'<div class="you" data-seat="{human}">{over_hand}<h4>Your hand{dealer_badge}'
                f'{go_badge}</h4><div class="cards hand" id="hand">'
                + "".join(card_html(c, playable=c in playable,
                                    dim=bool(playable) and c not in playable) for c in held)
                + f"</div>{under_hand}</div>")
    return (f'<div class="felt"><div class="opponents">{"".join(seats)}</div>'
            f'<div class="middle"><div class="pile"><h5>Starter</h5>{starter_html}</div>'
            f'<div class="pile crib"><h5>{escape(crib_owner)}</h5><div class="cards">'
            f'{crib_cards}</div></div>'
            f'<div class="play"><h5>The play · count <b class="count" data-count="'
            f'{st["count"]}">{st["count"]}</b></h5>{"".join(series_html)}</div></div>'
            f'{mine}</div>')


def _board(game: Game, sides: Sequence[str]) -> str:
    """The board twice: one long row (wide screens) and folded in rows of 30 holes (phones);
    the stylesheet shows one."""
    pegs = peg_history(game)
    return (f'<div class="board-wrap">{board_svg(game.rules, pegs, sides)}'
            f'{board_svg(game.rules, pegs, sides, per_row=30)}</div>')


def said_since_your_card(events: Sequence[Any], human: int, name: Callable[[int], str]
                         ) -> str:
    """What the other seats scored in the play since the person's last card, as the log says
    it ("Expert lays 8D: 16, pair for 2"), for the felt; empty when they scored nothing.

    >>> from cribenv.game import Deal, Rules
    >>> deal = Deal(0, ["5C 5D 5H JS 2C 3C", "AH 2H 3H TD 8D KS"], "5S")
    >>> game = Game(Rules(), seed=0, deals=[deal])
    >>> for card in "8D KS 2C 3C TD 5C".split():   # You lay TD, the Expert 5C
    ...     _ = game.step(card)
    >>> said_since_your_card(game.events, 1, {0: "Expert", 1: "You"}.get)
    'Expert lays 5C: 15, fifteen for 2'
    """
    last = max((i for i, e in enumerate(events) if type(e) is Played and e.seat == human),
               default=-1)
    lines = []
    for i in range(last + 1, len(events)):
        ev, prev = events[i], events[i - 1] if i else None
        nxt = events[i + 1] if i + 1 < len(events) else None
        if type(ev) is Played and ev.seat != human:
            goes = type(nxt) is SeriesEnd and nxt.points > 0 and nxt.seat == ev.seat
            if ev.points or goes:   # the card, and the go or last card it earned at once
                lines.append(played_line(ev, name, nxt if goes else None))
        elif (type(ev) is SeriesEnd and ev.points and ev.seat != human
              and not (type(prev) is Played and prev.seat == ev.seat)):
            lines.append(describe_event(ev, name) or "")
    return "; ".join(lines)


def _scores(game: Game, sides: Sequence[str]) -> str:
    items = "".join(
        f'<li class="side-{i}" data-side="{i}" data-score="{s}"><span>{escape(sides[i])}</span>'
        f'<b>{s}</b></li>' for i, s in enumerate(game.scores))
    return f'<ul class="scores">{items}</ul>'


def _log(events: Sequence[Any], name: Callable[[int], str]) -> str:
    items = "".join(f"<li>{escape(line)}</li>" for line in log_lines(events, name))
    return f'<ol class="log" aria-label="what happened">{items}</ol>'



def throw_table(options: list[dict[str, Any]], best: str, chosen: str | None = None,
                 champion: str | None = None) -> str:
    """A throws table (the advice's, a review's): the best throw marked, the one ``chosen``
    and the ``champion``'s (the strongest agent's) if given; a play column where the options
    count the play."""
    play = "play" in options[0]
    head = ("<tr><th>throw</th><th>keep</th><th>hand</th><th>crib</th>"
            + ("<th>play</th>" if play else "") + "<th>value</th></tr>")
    rows = "".join(
        f'<tr class="{"best" if o["throw"] == best else ""}'
        f'{" chosen" if o["throw"] == chosen else ""}'
        f'{" champion" if o["throw"] == champion else ""}" data-throw="{o["throw"]}">'
        f'<td>{with_suits(o["throw"])}</td><td>{with_suits(o["keep"])}</td>'
        f'<td>{o["hand"]:.2f}</td><td>{o["crib"]:.2f}</td>'
        + (f'<td>{o["play"]:+.2f}</td>' if play else "")
        + f'<td>{o["value"]:+.2f}</td></tr>' for o in options)
    return f"<table>{head}{rows}</table>"


def _advice_value(value: float, win: bool) -> str:
    """An option's value as the advice shows it: a chance to win, or expected points."""
    return f"{value:.1f}%" if win else f"{value:+.2f}"


def _advice_html(advice: Advice | None) -> str:
    if advice is None:
        return ""
    if advice.kind == "discard":
        table = throw_table(advice.options, advice.best, champion=advice.champion)
    else:
        win = advice.unit == "win"
        head = (f"<tr><th>card</th><th>pegs now</th><th>{'to win' if win else 'value'}</th>"
                "</tr>")
        rows = "".join(
            f'<tr class="{"best" if o["card"] == advice.best else ""}" data-card-option='
            f'"{o["card"]}"><td>{with_suits(o["card"])}</td><td>{o["now"]}'
            f'{(" · " + escape(o["how"])) if o["how"] else ""}</td>'
            f'<td>{_advice_value(o["value"], win)}</td></tr>' for o in advice.options)
        table = f"<table>{head}{rows}</table>"
    return (f'<section class="advice" data-best="{advice.best}"><h3>Advice</h3>'
            f'<p>{escape(with_suits(advice.reason))}</p>{table}</section>')


def _summary_html(table: Table) -> str:
    if not table.advice_on:
        return ""
    s = table.summary()
    worst = "".join(
        f"<li>hand {d.hand_number + 1}, {d.kind}: you chose {d.chosen}, the advice was "
        f"{d.advice.best} (-{d.loss:.2f})</li>" for d in s["worst"] if d.loss > 1e-9)
    return (f'<section class="summary" data-lost="{s["total"]:.3f}"><h3>Against the advice'
            f'</h3><p>{s["followed"]} of {s["decisions"]} decisions followed the advice. '
            + (f'Given up: {s["discard"]:.2f} expected points in the discard, '
               f'{s["play_win"]:.1f} percentage points of the chance to win in the play '
               "(the review ranks them on one scale)."
               if s["play_win"] else
               f'Expected points given up: {s["discard"]:.2f} in the discard, {s["play"]:.2f} '
               f'in the play, {s["total"]:.2f} in all.') + "</p>"
            + (f"<ul>{worst}</ul>" if worst else "") + "</section>")


def how_it_ended(game: Game, name: Callable[[int], str]) -> tuple[str, list[int]]:
    """The score that won ``game`` in a player's words, with the cards it was made with (the
    series for a card of the play, the hand and the starter for a show); ``("", [])`` while
    the game is not over.

    >>> from cribenv.game import Deal, Rules
    >>> deal = Deal(0, ["5C 5D 5H JS 2C 3C", "AH 2H 3H TD 8D KS"], "5S")
    >>> game = Game(Rules(target=2), seed=0, deals=[deal])
    >>> for card in "8D KS 2C 3C TD 5C".split():
    ...     _ = game.step(card)
    >>> words, cards = how_it_ended(game, {0: "You", 1: "Expert"}.get)
    >>> words, C.to_str_many(cards)
    ('You pegged out with fifteen for 2 (5C, count 15)', 'TD 5C')
    """
    events = game.events
    if not events or type(events[-1]) is not GameOver:
        return "", []
    winner = events[-1].winner
    for i in range(len(events) - 2, -1, -1):
        ev = events[i]
        kind = type(ev)
        if kind is Muggins and game.side_of(ev.caller) == winner:
            return f"{name(ev.caller)} went out on a Muggins call ({muggins_words(ev, name)})", []
        if kind is Played and ev.points:
            return (f"{name(ev.seat)} pegged out with {score_words(ev)} ({C.to_str(ev.card)}, "
                    f"count {ev.count})", list(ev.series))
        if kind is SeriesEnd and ev.points:
            return f"{name(ev.seat)} pegged out with {score_words(ev)}", []
        if kind is ShowScored and ev.points:
            what = "crib" if ev.is_crib else "hand"
            return (f"{name(ev.seat)} counted out with {ev.points} in "
                    f"{possessive(name(ev.seat))} {what}", [*ev.cards, ev.starter])
        if kind is StarterTurned and ev.heels:
            return f"{name(ev.dealer)} pegged out with his heels for 2", [ev.card]
    return "", []


def _result_html(game: Game, sides: Sequence[str], name: Callable[[int], str]) -> str:
    over = next((e for e in reversed(game.events) if type(e) is GameOver), None)
    if over is None:
        return "<p>The game stopped without a winner.</p>"
    scores = " to ".join(str(s) for s in sorted(over.scores, reverse=True))
    kind = GAME_POINTS[over.game_points]
    verb = "win" if sides[over.winner].startswith("You") else "wins"
    words, cards = how_it_ended(game, name)
    ending = (f'<p class="ending">{escape(words)}.</p>'
              f'{"<div class=cards>" + cards_html(cards, small=True) + "</div>" if cards else ""}'
              if words else "")
    return (f'<div class="result" data-winner="{over.winner}" data-game-points='
            f'"{over.game_points}"><p><b>{escape(sides[over.winner])} {verb}</b> {scores}: '
            f'{kind}, {over.game_points} match point{"s" if over.game_points > 1 else ""}.</p>'
            f'{ending}</div>')


def _forfeit_html(table: Table, sides: Sequence[str]) -> str:
    """The result of a game a bot forfeited: the person wins, and why, in words."""
    forfeit = table.forfeit
    assert forfeit is not None
    winner = table.winner
    assert winner is not None
    scores = ", ".join(f"{side} {score}" for side, score in zip(sides, table.game.scores))
    verb = "win" if sides[winner].startswith("You") else "wins"
    why = forfeit_words(table.bot_name, str(forfeit.get("kind")))
    return (f'<div class="result forfeit" data-winner="{winner}" data-forfeit='
            f'"{escape(str(forfeit.get("kind")))}"><p><b>{escape(sides[winner])} {verb}</b>: '
            f'{escape(why)}, so it forfeits the game (as in a tournament). The score stood: '
            f'{escape(scores)}.</p><p class="detail">{escape(str(forfeit.get("detail", "")))}'
            '</p></div>')


CLAIM_SECONDS = 10   # with Muggins, a laid card not claimed in this time claims nothing


def _claims_html(table: Table) -> str:
    """With Muggins, the claim under the hand: in the play a panel the page opens once a card
    is laid (what it pegs: a button per count, or a number; nothing claimed when the timer
    runs out); at the count, the person's hand (and crib) with a number each."""
    due = table.claims_due
    if due == ["play"]:
        buttons = "".join(f'<button type="button" data-claim-value="{v}" aria-label="claim '
                          f'{v}">{v}</button>' for v in range(9))
        return (f'<div class="claims claim-play" id="claim-panel" hidden data-seconds='
                f'"{CLAIM_SECONDS}" role="group" aria-label="claim what your card pegs">'
                '<p>You lay <b class="claim-card"></b>. What does it peg? <span class="how">'
                "(fifteen, 31, pairs, runs; the go and the last card are pegged for you; what "
                "you miss, or claim over, the bots take)</span></p>"
                f'<div class="claim-buttons">{buttons}<label>or <input type="number" min="0" '
                'max="29" data-claim="play" aria-label="points claimed"></label><button '
                'type="button" class="primary" data-claim-value="input">Claim</button><button '
                'type="button" data-claim-value="back">Take back</button></div><p class="timer">'
                f'No claim in <b class="seconds">{CLAIM_SECONDS}</b> s claims nothing.</p></div>')
    if not due:
        return ""
    game = table.game
    starter = game.starter
    assert starter is not None
    rows = []
    for what in due:
        cards = game.kept[table.human] if what == "hand" else game.crib
        rows.append(f'<div class="count-row"><div class="cards">{cards_html(cards, small=True)}'
                    f'<span class="plus">+</span>{card_html(starter, small=True)}</div><label>'
                    f'your {what}: <input type="number" min="0" max="29" required data-claim='
                    f'"{what}" name="claim-{what}" aria-label="your {what} counts"></label></div>')
    return ('<div class="claims claim-count" id="claim-panel" role="group" aria-label="count '
            'your show"><p>The play is over: count your '
            f'{" and ".join(due)} (what you miss, or claim over, the bots take).</p>'
            f'{"".join(rows)}<button type="button" class="primary" data-action="count">Count'
            '</button></div>')


def table_html(table: Table, key: str) -> str:
    """The whole table of a game in progress (the part of the page the script replaces)."""
    game = table.game
    rules = table.rules
    names = table.seat_names()
    name = names.__getitem__
    sides = side_names(names)
    stage = table.stage
    shown_hand = table.show_hand if stage in ("show", "over") else game.hand_number
    events = table.hand_events(shown_hand)
    current = stage not in ("show", "over")
    playable: list[int] = []
    crib = None
    if stage == "count":   # every card laid: the hands and the crib are turned to count
        hands = {table.human: list(game.kept[table.human])}
        crib = list(game.crib)
    elif current:
        hands = {table.human: sorted(game.hands[table.human])}
        if stage in ("discard", "play"):
            playable = game.legal_actions()
    else:
        kept = [e for e in events if type(e) is ShowScored and not e.is_crib]
        hands = {e.seat: list(e.cards) for e in kept}
        if table.human not in hands:   # the game ended before the person's hand was counted
            hands[table.human] = (sorted(game.hands[table.human])
                                  if game.hand_number == shown_hand else [])
    need = table.need - len(game.discards[table.human]) if stage == "discard" else 1
    whose = "your" if game.dealer == table.human else f"{name(game.dealer)}'s"
    if rules.num_players == 4 and game.dealer % 2 == table.human % 2 and stage == "discard":
        whose = "your side's"
    under_hand = _claims_html(table)
    if stage == "discard":   # the throw waits for this button: a second look, and an undo
        under_hand = (f'<button type="button" id="send-discard" class="primary send-discard" '
                      f'disabled>Throw to {escape(whose)} crib</button>')
    said = said_since_your_card(events, table.human, name) if stage == "play" else ""
    over_hand = (f'<p class="said" role="status">{escape(with_suits(said))}</p>' if said
                 else "")   # the bots' points since your card (the log has them too)
    felt = _felt(game, events, name, table.human, hands, playable, current, crib=crib,
                 under_hand=under_hand, over_hand=over_hand)
    prompt = {
        "cut": "The cut for first deal: the lowest card deals.",
        "discard": f"Choose {need} card{'s' if need > 1 else ''} for {whose} crib, "
                   "then throw.",
        "play": f"Your turn to lay a card: the count is {game.count}." + (
            " Muggins: lay it, then claim what it pegs." if rules.muggins else ""),
        "count": "Count your show.",
        "show": f"Hand {shown_hand + 1} is counted.",
        "over": f"The game is over: {table.bot_name} forfeited it." if table.forfeit
                else "The game is over.",
    }.get(stage, "")
    peg_call = peg_call_html(events, table.human, name) if rules.muggins else ""
    overlay = ""
    if stage == "cut":
        cut = next(e for e in game.events if type(e) is Cut)
        rounds = "".join(
            "<div class=\"cut-round\">" + "".join(
                f'<figure>{card_html(c)}<figcaption>{escape(name(s))}</figcaption></figure>'
                for s, c in enumerate(r) if c is not None) + "</div>" for r in cut.rounds)
        overlay = (f'<div class="overlay"><div class="panel cut"><h2>Cut for deal</h2>'
                   f'{rounds}<p>{escape(name(cut.dealer))} '
                   f'{"deal" if cut.dealer == table.human else "deals"} first (lowest card; '
                   f'aces are low{", ties cut again" if len(cut.rounds) > 1 else ""}).</p>'
                   '<button type="button" class="primary" data-action="next">Deal</button>'
                   '</div></div>')
    elif stage in ("show", "over"):
        shows = show_html(events, name)
        result = ((_forfeit_html(table, sides) if table.forfeit else
                   _result_html(game, sides, name)) + _summary_html(table)
                  if stage == "over" else "")
        button = ('<div class="actions"><button type="button" class="primary" '
                  'data-action="new">New game</button>'
                  f'<a class="button" href="/game/{escape(key)}/record" download>Download the '
                  f'record</a><a class="button" rel="replay" href="/game/{escape(key)}/replay">'
                  'Replay this game</a>'
                  + (f'<a class="button" rel="review" href="/game/{escape(key)}/review">Review '
                     'this game</a>' if rules.num_players == 2 else "") + '</div>'
                  if stage == "over" else
                  '<button type="button" class="primary" data-action="next">Next hand</button>')
        title = "Game over" if stage == "over" else f"The show, hand {shown_hand + 1}"
        no_show = "" if table.forfeit else "<p>No show: the game ended in the play.</p>"
        overlay = (f'<div class="overlay"><div class="panel show"><h2>{title}</h2>{result}'
                   f'{peg_call}'
                   f'<div class="shows">{shows or no_show}'
                   f'</div>{button}</div></div>')
    return (f'<div id="table" data-game="{escape(key)}" data-seq="{table.seq}" '
            f'data-stage="{stage}" data-need="{need}">'
            f'<div class="topbar">{_scores(game, sides)}<span class="target">to '
            f'{rules.target}</span></div>'
            f'{_board(game, sides)}'
            f'<div class="main"><div class="centre">{felt}'
            f'<p class="prompt" role="status">{escape(prompt)}</p>{peg_call if current else ""}'
            f'<p class="thinking" id="thinking" role="status" hidden>'
            f'{escape(table.bot_name)} is thinking…</p>'
            f'<p class="error" role="alert" id="error"></p></div>'
            f'<aside><details class="drawer" open><summary>'
            f'{"Advice and the log" if table.advice_on else "The log"}</summary>'
            f'{_advice_html(table.advice())}'
            f'<h3>This hand</h3>{_log(events, name)}</details></aside>{overlay}</div></div>')


def lobby_html(bots: Sequence[str], settings: dict[str, Any] | None = None,
               replays: Sequence[tuple[str, str]] = (), names: Mapping[str, str] | None = None,
               about: Mapping[str, str] | None = None, open_about: bool = False) -> str:
    """The new-game form (and the replays the server was given). ``bots`` are the labels a
    page may choose (the form's values), in the order listed; ``names`` what the person sees
    of each (the label by default) and ``about`` one line each on how it plays, listed under
    the form (open with ``open_about``: the lobby itself)."""
    names = names or {}
    about = about or {}
    s = {"bot": bots[0], "players": 2, "target": 121, "advice": False, "muggins": False,
         **(settings or {})}
    options = "".join(
        f'<option value="{escape(b)}"{" selected" if b == s["bot"] else ""}'
        + (f' title="{escape(about[b])}"' if b in about else "")
        + f'>{escape(names.get(b, b))}</option>' for b in bots)
    who = "".join(f'<li data-bot="{escape(b)}"><b>{escape(names.get(b, b))}</b> '
                  f'{escape(about[b])}</li>' for b in bots if b in about)
    opponents = (f'<details class="who-plays"{" open" if open_about else ""}><summary>'
                 f'Who plays how</summary><ul>{who}</ul></details>' if who else "")

    def choice(name: str, values: Sequence[int]) -> str:
        return "".join(f'<option value="{v}"{" selected" if v == s[name] else ""}>{v}</option>'
                       for v in values)

    links = "".join(f'<li><a href="{escape(url)}">{escape(label)}</a></li>'
                    for label, url in replays)
    replay_list = f'<section class="replays"><h3>Replays</h3><ul>{links}</ul></section>' \
        if links else ""
    return (
        '<header><h1><a href="/" title="the lobby: every setting">Cribbage</a></h1>'
        '<form id="new-game" class="new-game">'
        f'<label>against <select name="bot">{options}</select></label>'
        f'<label>players <select name="players">{choice("players", (2, 3, 4))}</select></label>'
        f'<label>to <select name="target">{choice("target", (121, 61))}</select></label>'
        f'<label><input type="checkbox" name="advice"{" checked" if s["advice"] else ""}>'
        ' advice</label>'
        f'<label title="count your own show; the bots take what you miss"><input '
        f'type="checkbox" name="muggins"{" checked" if s["muggins"] else ""}> muggins</label>'
        '<button type="submit" class="primary">New game</button></form></header>'
        f'{opponents}{replay_list}'
        '<details class="open-replay"><summary>Open a recorded game</summary>'
        '<form method="post" action="/replays">'
        '<label>paste a <code>Game.to_json()</code> record:'
        '<textarea name="record" rows="3" placeholder=\'{"format": "cribenv-game/1", ...}\'>'
        '</textarea></label><button type="submit">Open replay</button></form></details>')


def replay_html(game: Game, step: int, total: int, labels: Sequence[str], key: str,
                hand_starts: Sequence[int] = (), base: str | None = None,
                links: Sequence[tuple[str, str, bool]] = ()) -> str:
    """A recorded game after ``step`` of its ``total`` moves, every seat's cards face up,
    with links one move (and one hand) forwards and backwards; ``hand_starts`` are the move
    numbers at which the hands begin. ``base`` is the replay's address (``/replay/KEY`` by
    default); ``links`` are ``(text, url, download)`` put in the header beside "new game"
    (``download``: a file to save, not a page)."""
    base = base if base is not None else f"/replay/{key}"
    rules = game.rules
    names = seat_names(rules.num_players, None, labels)
    name = names.__getitem__
    sides = side_names(names)
    hand = game.hand_number
    events = hand_events(game, hand)
    hands = {s: sorted(game.hands[s]) for s in range(rules.num_players)}
    crib = sorted(game.crib)
    last_show = []
    if game.is_over or step == total:
        last_show = events
    elif hand > 0 and not any(type(e) is Played for e in events) and not any(
            type(e) is StarterTurned for e in events):
        last_show = hand_events(game, hand - 1)   # between hands: the show just counted
    felt = _felt(game, events, name, None, hands, [], True, crib=crib)

    def link(to: int, text: str, rel: str) -> str:
        if to < 0 or to > total or to == step:
            return f'<span class="nav off">{text}</span>'
        return f'<a class="nav" rel="{rel}" href="{escape(base)}?step={to}">{text}</a>'

    prev_hand = max([m for m in hand_starts if m < step], default=0)
    next_hand = min([m for m in hand_starts if m > step], default=total)
    nav = (f'<nav class="replay-nav">{link(0, "|◀ start", "first")}'
           f'{link(prev_hand, "◀◀ hand", "prev-hand")}{link(step - 1, "◀ move", "prev")}'
           f'<span class="where">move <b data-step="{step}">{step}</b> of {total} · hand '
           f'{hand + 1}</span>{link(step + 1, "move ▶", "next")}'
           f'{link(next_hand, "hand ▶▶", "next-hand")}{link(total, "end ▶|", "last")}</nav>')
    shows = show_html(last_show, name)
    result = _result_html(game, sides, name) if game.is_over else ""
    extra = "".join(f'<a href="{escape(url)}"{" download" if download else ""}>'
                    f'{escape(text)}</a>' for text, url, download in links)
    return (f'<header><h1>Replay</h1><a href="/">new game</a>{extra}</header>'
            f'<div id="table" class="replay" data-step="{step}">{nav}'
            f'<div class="topbar">{_scores(game, sides)}<span class="target">to '
            f'{rules.target}</span></div>'
            f'{_board(game, sides)}'
            f'<div class="main"><div class="centre">{felt}{result}'
            f'{"<div class=shows>" + shows + "</div>" if shows else ""}</div>'
            f'<aside><h3>This hand</h3>{_log(events, name)}</aside></div></div>')
