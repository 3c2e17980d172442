"""The bots as the person at the web table meets them: their names, a line on how each
plays, the lobby's order, and why one forfeited.

:data:`OPPONENTS` are the built-in bots as the lobby offers them, weakest first;
:func:`opponent_name` names a bot offered under a label.

    >>> [o.name for o in OPPONENTS]
    ['Beginner', 'Greedy', 'Self-taught', 'Expert', 'Graduate', 'Prodigy', 'Master', 'Champion']
    >>> opponent_name("ppo:shipped"), opponent_name("mine")
    ('Master', 'mine')

:func:`forfeit_words` says why a bot forfeited a game (:class:`agents.arena.BotFailure`'s kind).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["FORFEIT_WORDS", "OPPONENTS", "PRODIGY", "Opponent", "forfeit_words", "lobby_order",
           "opponent_about", "opponent_name", "opponent_names"]


#: The search over the Self-taught network with nothing but its own models (no bot inside):
#: 53.7% [53.1, 54.3] of 10,000 duplicate games against expert (``results/from-rules``).
PRODIGY = "search:ppo:scratch?models=own&playouts=300"


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
    Opponent("Self-taught", "ppo:scratch", "is a neural network that learnt the game from the "
             "rules alone, playing against itself; it beats Greedy and nearly matches the "
             "Expert"),
    Opponent("Expert", "expert", "throws by the exact expected value of hand and crib, and "
             "pegs with your best reply in mind"),
    Opponent("Graduate", "ppo:scratch-exit", "is the Self-taught network after it studied "
             "games of its own search: it learnt everything from the rules and plays the "
             "Expert's equal"),
    Opponent("Prodigy", PRODIGY, "is the Self-taught network checking its cards by playouts of "
             "its own play to the end of the hand: it learnt everything from the rules and "
             "beats the Expert; it thinks about 45 ms a card"),
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
