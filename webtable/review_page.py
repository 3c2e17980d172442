"""The review page of a finished game (:func:`webtable.review.review_game`): the worst
three decisions at the top, then every decision with its position, the person's choice, the
strongest agent's, what it cost and every option."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from cribenv import cards as C
from webtable.render import card_html, cards_html
from webtable.review import Review, Reviewed
from webtable.views import throw_table

__all__ = ["review_html"]


def _cost_words(d: Reviewed) -> str:
    """``"11.61 points (about 22.2% of the chance to win)"`` or ``"3.9% of the chance to
    win"``: what a decision gave up."""
    if d.kind == "discard":
        return (f"{d.cost:.2f} expected point{'' if round(d.cost, 2) == 1 else 's'} (about "
                f"{d.win_cost:.1f}% of the chance to win)")
    return f"{d.cost:.1f}% of the chance to win"


def _verdict(d: Reviewed) -> str:
    """One sentence: the person's choice, the strongest agent's, and the cost."""
    if d.kind == "discard":
        values = {o["throw"]: o["value"] for o in d.options}
        if d.matched:
            return f"You threw {d.chosen}: the best throw ({values[d.chosen]:+.2f} points)."
        return (f"You threw {d.chosen} ({values[d.chosen]:+.2f} points); the best throw was "
                f"{d.best} ({values[d.best]:+.2f}): {_cost_words(d)} given up.")
    values = {o["card"]: o["value"] for o in d.options}
    if d.matched:
        return (f"You laid {d.chosen}: as good as the strongest agent's card "
                f"({values[d.chosen]:.1f}% to win).")
    return (f"You laid {d.chosen} ({values[d.chosen]:.1f}% to win); the strongest agent "
            f"lays {d.best} ({values[d.best]:.1f}%): {_cost_words(d)} given up.")


def _options_html(d: Reviewed) -> str:
    if d.kind == "discard":
        table = throw_table(d.options, d.best, d.chosen)
        what = f"all {len(d.options)} throws (expected points; pegging ignored)"
    else:
        head = "<tr><th>card</th><th>chance to win</th></tr>"
        rows = "".join(
            f'<tr class="{"best" if o["card"] == d.best else ""}'
            f'{" chosen" if o["card"] == d.chosen else ""}" data-card-option="{o["card"]}">'
            f'<td>{o["card"]}</td><td>{o["value"]:.1f}%</td></tr>' for o in d.options)
        table = f"<table>{head}{rows}</table>"
        what = f"the {len(d.options)} cards you could lay (the search's estimates)"
    return f'<details class="options"><summary>{what}</summary>{table}</details>'


def _position_html(d: Reviewed) -> str:
    chosen = set(C.parse_many(d.chosen))
    hand = "".join(card_html(c, small=True, chosen=c in chosen) for c in d.hand)
    parts = [f'<div class="pile"><h5>Your cards</h5><div class="cards">{hand}</div></div>']
    if d.kind == "play":
        starter = card_html(d.starter, small=True) if d.starter is not None else ""
        series = cards_html(d.series, small=True) or "<span>a new series</span>"
        parts.append(f'<div class="pile"><h5>Starter</h5>{starter}</div>'
                     f'<div class="pile"><h5>The play · count <b class="count">{d.count}'
                     f'</b></h5><div class="cards">{series}</div></div>')
    return f'<div class="position">{"".join(parts)}</div>'


def review_html(review: Review, key: str, names: Sequence[str]) -> str:
    """The review of a finished game (:func:`webtable.review.review_game`): the worst three
    decisions at the top, each linked to its step of the replay, then every decision with the
    position, the person's choice, the strongest agent's, what it cost and every option.
    ``names``: the seats as the person saw them ("You", the bot's name)."""
    k = escape(key)
    replay = f"/game/{k}/replay"
    header = (f'<header><h1>Review</h1><a href="/">new game</a><a href="/game/{k}">back to '
              f'the game</a><a href="{replay}">replay</a><a href="/game/{k}/record" download>'
              "download the record</a></header>")
    note = f'<p class="note">{escape(review.note)}</p>' if review.note else ""
    if review.num_players != 2:
        return (f'{header}<div id="review" class="review" data-decisions="0">{note}'
                "</div>")
    opponent = ", ".join(n for s, n in enumerate(names) if s != review.human)
    worst = review.worst
    worst_ids = {d.move for d in worst}

    def where(d: Reviewed) -> str:
        return f"hand {d.hand_number + 1}, {'the discard' if d.kind == 'discard' else 'the play'}"

    items = "".join(
        f'<li class="worst-item" data-move="{d.move}" data-kind="{d.kind}" data-cost='
        f'"{d.cost:.4f}" data-win-cost="{d.win_cost:.4f}"><a rel="step" href="{replay}?step='
        f'{d.move}">{where(d).capitalize()}</a>: {escape(_verdict(d))} '
        f'<a class="more" href="#move-{d.move}">details</a></li>' for d in worst)
    many = {1: "", 2: "two ", 3: "three "}.get(len(worst), f"{len(worst)} ")
    top = (f'<section class="worst-three"><h2>Your {many}costliest decision'
           f'{"s" if len(worst) > 1 else ""}</h2><ol>{items}</ol>'
           '<p class="how">Ranked by the chance to win they gave up: a throw\'s expected '
           "points are converted at the scores of its hand (the win-probability table: a "
           "point counts for more in a close race near the end); a card of the play is "
           "valued by the search agent's playouts. The links open the replay at the "
           "decision.</p></section>"
           if worst else '<section class="worst-three"><h2>No costly decisions</h2><p>Every '
           "decision was as good as the strongest agent's.</p></section>")
    t = review.totals()
    plays = (f"; {t['play_win']:.1f} percentage points of the chance to win in the play"
             if review.plays_reviewed else "")
    totals = (f'<p class="totals" data-matched="{t["matched"]}">{t["decisions"]} decisions '
              f'({t["discards"]} discard{"s" if t["discards"] != 1 else ""}, {t["plays"]} '
              f'card{"s" if t["plays"] != 1 else ""} of the play with a choice); '
              f'{t["matched"]} as good as the strongest agent\'s. Given up: '
              f'{t["discard_points"]:.2f} expected points in the discard{plays}.</p>')
    rows = []
    for d in review.decisions:
        scores = ", ".join(f"{escape(n)} {s}" for n, s in zip(names, d.scores))
        deals = "you deal" if d.dealer else f"{escape(opponent)} deals"
        cls = f"decision {d.kind}{' worst' if d.move in worst_ids else ''}" \
              f"{' matched' if d.matched else ''}"
        rows.append(
            f'<li class="{cls}" id="move-{d.move}" data-move="{d.move}" data-kind="{d.kind}" '
            f'data-chosen="{d.chosen}" data-best="{d.best}" data-cost="{d.cost:.4f}">'
            f'<h3>{where(d).capitalize()} · {deals} · {scores} <a rel="step" href="{replay}'
            f'?step={d.move}">see it in the replay</a></h3>{_position_html(d)}'
            f'<p class="verdict">{escape(_verdict(d))}</p>{_options_html(d)}</li>')
    about = (f'<p class="about">Every decision you made against {escape(opponent)}, beside '
             "the strongest agent's choice. A throw is valued by its exact expected points "
             "(your hand, plus your crib or minus your opponent's, over every starter; "
             "pegging ignored); a card of the play by its chance to win, estimated by the "
             "search agent (the Champion's engine) over 200 playouts. Cards you had to lay "
             "are left out.</p>")
    return (f'{header}<div id="review" class="review" data-decisions="{len(review.decisions)}">'
            f'{about}{note}{top}{totals}<ol class="decisions">{"".join(rows)}</ol></div>')
