"""The pages of the web table: the table of a game in progress, the lobby and a replay.

Each function works out what a page shows from a :class:`Table` (or a replayed
:class:`~cribenv.game.Game`) and hands it to its template (``webtable/templates/``:
``table.html``, ``lobby.html``, ``replay.html``); the table's root element carries the game's
id, its move number and its stage (``data-game``, ``data-seq``, ``data-stage``), which the
page's script sends back with every move.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from markupsafe import Markup

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
    board_svg,
    describe_event,
    log_lines,
    muggins_words,
    peg_call,
    peg_history,
    played_line,
    show_hands,
)
from webtable.table import Table, hand_events
from webtable.templating import macro, render

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
          crib: Sequence[int] | None = None) -> dict[str, Any]:
    """What the felt shows (its template: ``felt.html``): the other seats, the starter and the
    crib, the cards laid, the person's hand.

    ``hands`` (seat -> cards) are shown face up; other seats' cards face down."""
    n = game.num_players
    st = _hand_state(events)
    dealer = st["dealer"]
    seats = []
    for seat in range(n):
        if seat == human:
            continue
        held = hands.get(seat) if hands else None
        backs = game.view(seat).cards_held[seat] if current and held is None else 0
        seats.append({"seat": seat, "name": name(seat), "held": held, "backs": backs,
                      "dealer": seat == dealer, "go": seat in st["go"],
                      "turn": current and game.current_player == seat})
    last = len(st["series"]) - 1
    laid_order = [sc for series in st["series"] for sc in series]
    mine_at = max((i for i, (s, _) in enumerate(laid_order) if s == human), default=-1)
    fresh = {sc: k for k, sc in enumerate(laid_order[mine_at + 1:])} if current else {}
    final = laid_order[-1] if laid_order and current else None
    series = [{"current": i == last,
               "laid": [{"card": c, "name": name(s), "fresh": fresh.get((s, c)),
                         "last": (s, c) == final} for s, c in laid]}
              for i, laid in enumerate(st["series"]) if laid]
    thrown = sum(len(v) for v in st["discards"].values())
    you = None
    if human is not None:
        you = {"seat": human, "held": (hands or {}).get(human, []), "playable": list(playable),
               "dealer": human == dealer, "go": human in st["go"]}
    return {"seats": seats, "series": series, "count": st["count"], "starter": st["starter"],
            "crib_owner": f"{possessive(name(dealer))} crib" if dealer is not None else "crib",
            "crib": crib, "crib_backs": thrown + (n == 3), "you": you}


def _boards(game: Game, sides: Sequence[str]) -> list[Markup]:
    """The board twice: one long row (wide screens) and folded in rows of 30 holes (phones);
    the stylesheet shows one."""
    pegs = peg_history(game)
    return [board_svg(game.rules, pegs, sides), board_svg(game.rules, pegs, sides, per_row=30)]


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


def throw_table(options: list[dict[str, Any]], best: str, chosen: str | None = None,
                champion: str | None = None) -> Markup:
    """A throws table (the advice's, a review's): the best throw marked, the one ``chosen``
    and the ``champion``'s (the strongest agent's) if given; a play column where the options
    count the play."""
    return macro("parts.html", "throw_table")(options, best, chosen=chosen, champion=champion)


def _summary(table: Table) -> dict[str, Any] | None:
    """How far the person's decisions fell short of the advice (with the advice on)."""
    if not table.advice_on:
        return None
    s = table.summary()
    return {**s, "worst": [d for d in s["worst"] if d.loss > 1e-9]}


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


def _result(game: Game, sides: Sequence[str], name: Callable[[int], str]
            ) -> dict[str, Any] | None:
    """Who won the game and how (its template: ``parts.html``'s ``result``); None if it
    stopped without a winner."""
    over = next((e for e in reversed(game.events) if type(e) is GameOver), None)
    if over is None:
        return None
    words, cards = how_it_ended(game, name)
    return {"winner": over.winner, "game_points": over.game_points,
            "side": sides[over.winner],
            "verb": "win" if sides[over.winner].startswith("You") else "wins",
            "scores": " to ".join(str(s) for s in sorted(over.scores, reverse=True)),
            "kind": GAME_POINTS[over.game_points], "words": words, "cards": cards}


def _forfeit(table: Table, sides: Sequence[str]) -> dict[str, Any]:
    """The result of a game a bot forfeited: the person wins, and why, in words."""
    forfeit = table.forfeit
    assert forfeit is not None
    winner = table.winner
    assert winner is not None
    return {"winner": winner, "kind": str(forfeit.get("kind")), "side": sides[winner],
            "verb": "win" if sides[winner].startswith("You") else "wins",
            "why": forfeit_words(table.bot_name, str(forfeit.get("kind"))),
            "scores": ", ".join(f"{side} {score}"
                                for side, score in zip(sides, table.game.scores)),
            "detail": str(forfeit.get("detail", ""))}


CLAIM_SECONDS = 10   # with Muggins, a laid card not claimed in this time claims nothing


def table_html(table: Table, key: str) -> Markup:
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
    due = table.claims_due
    count_rows = []
    if due and due != ["play"]:   # at the count, the person's hand (and crib), each counted
        assert game.starter is not None
        count_rows = [(what, game.kept[table.human] if what == "hand" else game.crib,
                       game.starter) for what in due]
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
    cut = None
    if stage == "cut":
        ev = next(e for e in game.events if type(e) is Cut)
        cut = {"rounds": [[(c, name(s)) for s, c in enumerate(r) if c is not None]
                          for r in ev.rounds],
               "dealer": name(ev.dealer), "you_deal": ev.dealer == table.human}
    over = stage == "over"
    return render(
        "table.html", key=key, seq=table.seq, stage=stage, need=need, sides=sides,
        points=game.scores, target=rules.target, board=_boards(game, sides),
        felt_data=_felt(game, events, name, table.human, hands, playable, current, crib=crib),
        # the bots' points since your card (the log has them too)
        said=said_since_your_card(events, table.human, name) if stage == "play" else "",
        whose=whose, claims_due=due, count_rows=count_rows, claim_seconds=CLAIM_SECONDS,
        prompt=prompt, current=current,
        peg=peg_call(events, table.human, name) if rules.muggins else None,
        bot_name=table.bot_name, advice_on=table.advice_on, advice=table.advice(),
        log_lines=log_lines(events, name), cut=cut, shown_hand=shown_hand,
        forfeited=_forfeit(table, sides) if over and table.forfeit else None,
        ended=_result(game, sides, name) if over and not table.forfeit else None,
        summary_data=_summary(table) if over else None,
        shows=show_hands(events, name) if not current else [],
        two_players=rules.num_players == 2)


def lobby_html(bots: Sequence[str], settings: dict[str, Any] | None = None,
               replays: Sequence[tuple[str, str]] = (), names: Mapping[str, str] | None = None,
               about: Mapping[str, str] | None = None, open_about: bool = False) -> Markup:
    """The new-game form (and the replays the server was given). ``bots`` are the labels a
    page may choose (the form's values), in the order listed; ``names`` what the person sees
    of each (the label by default) and ``about`` one line each on how it plays, listed under
    the form (open with ``open_about``: the lobby itself)."""
    names = names or {}
    about = about or {}
    s = {"bot": bots[0], "players": 2, "target": 121, "advice": False, "muggins": False,
         **(settings or {})}
    return render("lobby.html", bots=[{"label": b, "name": names.get(b, b), "about": about.get(b),
                                       "selected": b == s["bot"]} for b in bots],
                  players=s["players"], target=s["target"], advice=s["advice"],
                  muggins=s["muggins"], replays=list(replays), open_about=open_about)


def replay_html(game: Game, step: int, total: int, labels: Sequence[str], key: str,
                hand_starts: Sequence[int] = (), base: str | None = None,
                links: Sequence[tuple[str, str, bool]] = ()) -> Markup:
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
    return render(
        "replay.html", step=step, total=total, base=base, links=list(links), hand=hand,
        prev_hand=max([m for m in hand_starts if m < step], default=0),
        next_hand=min([m for m in hand_starts if m > step], default=total),
        sides=sides, points=game.scores, target=rules.target, board=_boards(game, sides),
        felt_data=_felt(game, events, name, None, hands, [], True, crib=crib),
        over=game.is_over, ended=_result(game, sides, name) if game.is_over else None,
        shows=show_hands(last_show, name), log_lines=log_lines(events, name))
