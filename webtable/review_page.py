"""The review page of a finished game (:func:`webtable.review.review_game`): the worst
three decisions at the top, then every decision with its position, the person's choice, the
strongest agent's, what it cost and every option (its template: ``review.html``)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from cribenv import cards as C
from webtable.review import Review, Reviewed
from webtable.templating import render

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


def review_html(review: Review, key: str, names: Sequence[str]) -> Markup:
    """The review of a finished game (:func:`webtable.review.review_game`): the worst three
    decisions at the top, each linked to its step of the replay, then every decision with the
    position, the person's choice, the strongest agent's, what it cost and every option.
    ``names``: the seats as the person saw them ("You", the bot's name)."""
    two = review.num_players == 2
    worst = review.worst if two else []
    decisions = review.decisions if two else []
    return render(
        "review.html", key=key, note=review.note, two_players=two, decisions=decisions,
        opponent=", ".join(n for s, n in enumerate(names) if s != review.human),
        worst=worst, worst_moves={d.move for d in worst},
        many={1: "", 2: "two ", 3: "three "}.get(len(worst), f"{len(worst)} "),
        t=review.totals() if two else {}, plays_reviewed=review.plays_reviewed,
        verdicts={d.move: _verdict(d) for d in decisions},
        chosen_cards={d.move: set(C.parse_many(d.chosen)) for d in decisions},
        scores={d.move: ", ".join(f"{n} {s}" for n, s in zip(names, d.scores))
                for d in decisions})
