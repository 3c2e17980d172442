"""The table's words: what a card, a go or the starter scores, said as a player says it, and
the bots by the names the person sees.

:func:`score_words` is the one place the web table puts a pegging score into words (the log,
the play panel, the advice); it reads the engine's own parts of the score
(:attr:`Played.breakdown <cribenv.game.Played.breakdown>`, :class:`~cribenv.game.SeriesEnd`,
:attr:`StarterTurned.heels <cribenv.game.StarterTurned>`):

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

:data:`OPPONENTS` are the built-in bots as the lobby offers them, weakest first;
:func:`opponent_name` names a bot offered under a label.

    >>> [o.name for o in OPPONENTS]
    ['Beginner', 'Greedy', 'Expert', 'Master', 'Champion']
    >>> opponent_name("ppo:shipped"), opponent_name("mine")
    ('Master', 'mine')

:func:`forfeit_words` says why a bot forfeited a game (:class:`agents.arena.BotFailure`'s kind).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cribenv.game import Played, SeriesEnd, StarterTurned
from cribenv.scoring import PegBreakdown

__all__ = ["OPPONENTS", "Opponent", "opponent_name", "pair_words", "run_words",
           "score_parts", "score_words"]

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


# ------------------------------------------------------------------------------ the bots

@dataclass(frozen=True)
class Opponent:
    """A built-in bot as the person meets it: its ``name``, its engine ``spec`` (the lobby's
    value, what the API takes) and one line on how it plays (``about``, said after the name:
    "Greedy takes the most points...")."""

    name: str
    spec: str
    about: str


OPPONENTS: tuple[Opponent, ...] = (
    Opponent("Beginner", "random", "lays any card it may and throws at random: for a first "
             "game"),
    Opponent("Greedy", "greedy", "takes the most points it can see now, in the throw and in "
             "the play, and never looks further"),
    Opponent("Expert", "expert", "throws by the exact expected value of hand and crib, and "
             "pegs with your best reply in mind"),
    Opponent("Master", "ppo:shipped", "is a neural network trained by playing against itself; "
             "it beats the Expert more often than not"),
    Opponent("Champion", "search:ppo:shipped", "is the strongest: the Master's cards checked "
             "by playouts of the rest of the hand on the batched engine; it thinks about 10-20 "
             "ms a card"),
)
BY_SPEC = {o.spec: o for o in OPPONENTS}


def opponent_name(label: str, spec: str | None = None) -> str:
    """The name the person sees for the bot offered as ``label`` (whose engine spec is
    ``spec``, if known): a built-in bot's name, or the label a bot was given on the command
    line (``cribenv serve --bot mine=...``)."""
    known = BY_SPEC.get(label)
    if known is not None and (spec is None or spec == known.spec):
        return known.name
    return label


def opponent_names(bots: Mapping[str, str]) -> dict[str, str]:
    """``label -> name`` for the bots offered (``label -> spec``); two bots that would share a
    name (``--bot Expert=greedy``) are told apart by their labels.

    >>> opponent_names({"expert": "expert", "Expert": "greedy"})
    {'expert': 'Expert (expert)', 'Expert': 'Expert (Expert)'}
    """
    names = {label: opponent_name(label, spec) for label, spec in bots.items()}
    seen: dict[str, int] = {}
    for name in names.values():
        seen[name.casefold()] = seen.get(name.casefold(), 0) + 1
    return {label: name if seen[name.casefold()] == 1 else f"{name} ({label})"
            for label, name in names.items()}


def opponent_about(label: str, spec: str) -> str:
    """The one line on how the bot offered as ``label`` plays."""
    known = BY_SPEC.get(label)
    if known is not None and spec == known.spec:
        return known.about
    return f"was given when the server started ({spec})"


def lobby_order(labels: Iterable[str]) -> list[str]:
    """The built-in bots weakest first, then the others as given.

    >>> lobby_order(["expert", "mine", "random"])
    ['random', 'expert', 'mine']
    """
    labels = list(labels)
    rank = {o.spec: i for i, o in enumerate(OPPONENTS)}
    return sorted(labels, key=lambda b: (rank.get(b, len(rank)), labels.index(b)))


FORFEIT_WORDS = {
    "timeout": "did not answer in time",
    "crash": "stopped running",
    "start": "could not be started",
    "illegal": "chose a card it may not play",
    "malformed": "broke the bot protocol",
    "output": "broke the bot protocol",
    "version": "speaks another version of the bot protocol",
    "error": "failed with an error",
}


def forfeit_words(name: str, kind: str) -> str:
    """Why the bot ``name`` forfeited, in words (``kind``: :class:`agents.arena.BotFailure`'s).

    >>> forfeit_words("Expert", "crash")
    'Expert stopped running'
    """
    return f"{name} {FORFEIT_WORDS.get(kind, 'could not go on')}"
