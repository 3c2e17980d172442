"""What a table says to a person, in one place for the web table and the terminal game: the
seats by name, and every score in a player's words.

**The seats.** :func:`seat_names` names each seat as the person sees it: "You", and the bots
by a label, told apart by their place when there are several ("Expert 3", "Expert (partner)"
at the web table; "expert (seat 2)" in the terminal, whose ``--seat`` counts from 0);
:func:`side_names` names the scoring sides from them.

    >>> seat_names(4, 1, "Expert")
    ['Expert 1', 'You', 'Expert 3', 'Expert (partner)']
    >>> names = seat_names(4, 0, bot_name("expert"), seat_numbers=True)
    >>> names
    ['You', 'expert (seat 1)', 'expert (seat 2)', 'expert (seat 3)']
    >>> side_names(names)
    ['You & expert (seat 2)', 'expert (seat 1) & expert (seat 3)']

**The scores.** :func:`score_words` is the one place a pegging score is put into words (the
log, the play panel, the advice); it reads the engine's own parts of the score
(:attr:`Played.breakdown <cribenv.game.Played.breakdown>`, :class:`~cribenv.game.SeriesEnd`,
:attr:`StarterTurned.heels <cribenv.game.StarterTurned>`); :func:`show_rows` and
:func:`peg_rows` list a show's and a card's combinations:

    >>> from cribenv import cards as C
    >>> from cribenv.game import SeriesEnd
    >>> from cribenv.scoring import peg_breakdown
    >>> score_words(peg_breakdown(C.parse_many("7C 8D")))
    'fifteen for 2'
    >>> score_words(peg_breakdown(C.parse_many("3C 6D 6S")))
    'fifteen for 2 and a pair for 2'
    >>> score_words(peg_breakdown(C.parse_many("KC 9D 4H 3S 5C")), SeriesEnd(0, 0, "31"))
    '31 for 2 and a run of three for 3'
    >>> score_words(peg_breakdown(C.parse_many("8D 8S")), SeriesEnd(1, 1, "last card"))
    'pair for 2 and last card for 1'
    >>> score_words(peg_breakdown(C.parse_many("2C")))   # nothing scored
    ''
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from cribenv import cards as C
from cribenv.game import Played, SeriesEnd, StarterTurned, seat_side, side_count
from cribenv.scoring import Breakdown, PegBreakdown, peg_breakdown

__all__ = ["YOU", "bot_name", "pair_words", "peg_rows", "possessive", "run_words",
           "score_parts", "score_words", "seat_names", "show_rows", "side_names"]

# ------------------------------------------------------------------------------ the seats

YOU = "You"


def bot_name(spec: str) -> str:
    """What the terminal game calls a bot: its spec when that is a word (``"expert"``), else
    ``"the bot"`` (``ppo:runs/quick/policy.safetensors`` would read "Ppo:runs/quick/...'s
    hand").

    >>> bot_name("expert"), bot_name("ppo:runs/quick/policy.safetensors")
    ('expert', 'the bot')
    """
    return spec if re.fullmatch(r"[A-Za-z][\w-]*", spec) else "the bot"


def seat_names(num_players: int, human: int | None, labels: str | Sequence[str], *,
               seat_numbers: bool = False) -> list[str]:
    """Each seat as the person in seat ``human`` sees it: "You", and the bots by their
    ``labels`` (one for all, or one a seat). Where there are several bots each is told apart:
    by its place at the table ("Expert 3", 1-based; "Expert (partner)" for a 4-player
    partner) or, with ``seat_numbers``, by its seat as ``cribenv play --seat`` counts them
    ("expert (seat 2)"). With no person (``human=None``, a replay) the labels stand alone.

    >>> seat_names(3, 0, "Expert"), seat_names(3, 0, "expert", seat_numbers=True)
    (['You', 'Expert 2', 'Expert 3'], ['You', 'expert (seat 1)', 'expert (seat 2)'])
    >>> seat_names(2, None, ["expert", "greedy"])
    ['expert', 'greedy']
    """
    labels = [labels] * num_players if isinstance(labels, str) else list(labels)
    names = []
    for seat, label in enumerate(labels[:num_players]):
        if seat == human:
            names.append(YOU)
        elif human is None or num_players == 2:
            names.append(label)
        elif seat_numbers:
            names.append(f"{label} (seat {seat})")
        elif num_players == 4 and seat % 2 == human % 2:
            names.append(f"{label} (partner)")
        else:
            names.append(f"{label} {seat + 1}")
    return names


def side_names(names: Sequence[str]) -> list[str]:
    """The scoring sides by the seats' ``names`` (:func:`seat_names`): the seat's name, or
    both partners' joined with "&" in 4 players.

    >>> side_names(["You", "Expert 2", "Expert (partner)", "Expert 4"])
    ['You & Expert (partner)', 'Expert 2 & Expert 4']
    """
    n = len(names)
    return [" & ".join(name for seat, name in enumerate(names) if seat_side(seat, n) == side)
            for side in range(side_count(n))]


def possessive(name: str) -> str:
    """``"Your"`` for the person, ``"expert's"`` otherwise."""
    return "Your" if name == YOU else f"{name}'s"


# ------------------------------------------------------------------------------ the scores

NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
PAIR_WORDS = {2: "pair", 3: "pair royal", 4: "double pair royal"}
NOUNS = ("pair", "pair royal", "double pair royal", "run")   # "and a pair for 2"


def pair_words(cards: int) -> str:
    """``"pair"``, ``"pair royal"`` or ``"double pair royal"`` for 2, 3 or 4 of a rank."""
    return PAIR_WORDS[cards]


def run_words(length: int) -> str:
    """``"run of three"`` .. ``"run of seven"`` (the longest run the play allows)."""
    return f"run of {NUMBER_WORDS.get(length, str(length))}"


def score_parts(score: Any) -> list[tuple[str, int]]:
    """The parts of one score as ``(words, points)``: ``score`` is a
    :class:`~cribenv.scoring.PegBreakdown` or a :class:`~cribenv.game.Played` (what a card
    pegs: fifteen, 31, pairs, runs), a :class:`~cribenv.game.SeriesEnd` (the go or the last
    card; the 31's points are the card's) or a :class:`~cribenv.game.StarterTurned` (his
    heels). Nothing scored: ``[]``."""
    if type(score) is Played:
        score = score.breakdown
    if isinstance(score, PegBreakdown):
        parts = []
        if score.fifteen:
            parts.append(("fifteen", score.fifteen))
        if score.thirty_one:
            parts.append(("31", score.thirty_one))
        if score.pair:
            parts.append((pair_words(score.pair_count), score.pair))
        if score.run:
            parts.append((run_words(score.run_length), score.run))
        return parts
    if type(score) is SeriesEnd:
        return [(score.reason, score.points)] if score.points else []
    if type(score) is StarterTurned:
        return [("his heels", score.heels)] if score.heels else []
    raise TypeError(f"not a score: {score!r}")


def score_words(*scores: Any) -> str:
    """Every part of ``scores`` (see :func:`score_parts`; a card and the go or last card it
    earned, say) in a player's words: ``"fifteen for 2"``, ``"pair for 2"``, ``"pair royal for
    6"``, ``"double pair royal for 12"``, ``"run of three for 3"``, ``"31 for 2"``, ``"go for
    1"``, ``"last card for 1"``, ``"his heels for 2"``; several are joined with commas and
    "and", a pair or a run after the first with "a" (``"fifteen for 2 and a pair for 2"``).
    ``""`` when nothing scored."""
    parts = [part for score in scores for part in score_parts(score)]
    said = []
    for i, (what, points) in enumerate(parts):
        article = "a " if i and what.split(" of ")[0] in NOUNS else ""
        said.append(f"{article}{what} for {points}")
    if len(said) <= 1:
        return "".join(said)
    return ", ".join(said[:-1]) + " and " + said[-1]


def peg_rows(series: Sequence[int]) -> list[tuple[str, str, int]]:
    """``(kind, cards, points)`` of everything the last card of ``series`` pegs, like
    :func:`show_rows` (the go and the last card come later, as
    :class:`~cribenv.game.SeriesEnd` events).

    >>> peg_rows(C.parse_many("4C 6C 5C"))
    [('fifteen', '4C+6C+5C', 2), ('run of three', '4C 6C 5C', 3)]
    """
    series = list(series)
    bd = peg_breakdown(series)
    count = "+".join(C.to_str(c) for c in series)
    rows = []
    if bd.fifteen:
        rows.append(("fifteen", count, bd.fifteen))
    if bd.thirty_one:
        rows.append(("31", count, bd.thirty_one))
    if bd.pair:
        rows.append((pair_words(bd.pair_count), C.to_str_many(series[-bd.pair_count:]),
                     bd.pair))
    if bd.run:
        rows.append((run_words(bd.run_length), C.to_str_many(series[-bd.run_length:]),
                     bd.run))
    return rows


def show_rows(bd: Breakdown) -> list[tuple[str, str, int]]:
    """``(kind, cards, points)`` of every scoring combination of a show, in the order the web
    table and the terminal game list them.

    >>> from cribenv.scoring import score_hand_breakdown
    >>> show_rows(score_hand_breakdown("5H 5S JD 4C", "6D"))[-2:]
    [('run of 3', '4C 5S 6D', 3), ('nobs', 'JD', 1)]
    """
    rows = [("fifteen", "+".join(C.to_str(c) for c in combo), 2) for combo in bd.fifteens]
    rows += [("pair", C.to_str_many(pair), 2) for pair in bd.pairs]
    rows += [(f"run of {len(run)}", C.to_str_many(run), len(run)) for run in bd.runs]
    if bd.flush:
        rows.append((f"flush of {len(bd.flush)}", C.to_str_many(bd.flush), len(bd.flush)))
    if bd.nobs is not None:
        rows.append(("nobs", C.to_str(bd.nobs), 1))
    return rows
