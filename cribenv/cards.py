"""Cards as small integers.

A card is an ``int`` in ``0..51``: ``card = rank * 4 + suit`` with ranks ``A 2 .. 9 T J Q K``
(0..12) and suits ``C D H S`` (0..3). Strings appear only at the edges (CLI, logs, docs).
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}
NUM_CARDS = 52
JACK = 10  # rank index of the Jack

Card = int


def rank(card: Card) -> int:
    """Rank index 0..12 (A=0, K=12)."""
    return card >> 2


def suit(card: Card) -> int:
    """Suit index 0..3 (C, D, H, S)."""
    return card & 3


def value(card: Card) -> int:
    """Counting value: A=1, 2..9 face value, T J Q K = 10 (a kernel: numba compiles it).

    >>> value(parse("5H")), value(parse("KS"))
    (5, 10)
    """
    return min((card >> 2) + 1, 10)


CARD_VALUES: tuple[int, ...] = tuple(value(c) for c in range(NUM_CARDS))
"""Counting value of each card id (:func:`value`, tabulated for Python hot paths)."""
RANK_VALUES: tuple[int, ...] = tuple(value(r * 4) for r in range(13))
"""Counting value of each rank index 0..12."""


def make(rank_index: int, suit_index: int) -> Card:
    """Card id from a rank index 0..12 and a suit index 0..3."""
    if not 0 <= rank_index < 13:
        raise ValueError(f"rank index {rank_index!r} is out of range: expected 0..12")
    if not 0 <= suit_index < 4:
        raise ValueError(f"suit index {suit_index!r} is out of range: expected 0..3")
    return rank_index * 4 + suit_index


def parse(text: str | int) -> Card:
    """Parse ``"5H"``, ``"10h"``, ``"T♥"`` (or an int id) into a card id 0..51.

    Raises ``ValueError`` naming the bad input and what was expected.
    """
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a card: expected a string like '5H' or an id 0..51")
    if isinstance(text, int):
        if 0 <= text < NUM_CARDS:
            return text
        raise ValueError(f"{text!r} is not a card: card ids are 0..51")
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a card: expected a string like '5H' or an id 0..51")
    s = text.strip()
    if len(s) < 2:
        raise ValueError(
            f"{text!r} is not a card: expected rank then suit, like '5H' "
            f"(rank one of {RANKS} or 10, suit one of {SUITS} or ♣♦♥♠)"
        )
    rank_text, suit_text = s[:-1].upper(), s[-1]
    suit_text = SUIT_SYMBOLS.get(suit_text, suit_text.upper())
    if rank_text == "10":
        rank_text = "T"
    if len(rank_text) != 1 or rank_text not in RANKS:
        raise ValueError(
            f"{text!r} is not a card: rank must be one of {RANKS} (or 10), got {s[:-1]!r}"
        )
    if suit_text not in SUITS:
        raise ValueError(
            f"{text!r} is not a card: suit must be one of {SUITS} (or ♣♦♥♠), got {s[-1]!r}"
        )
    return RANKS.index(rank_text) * 4 + SUITS.index(suit_text)


def parse_many(text: str | Iterable[str | int]) -> list[Card]:
    """Parse several cards: ``"5H 5S JD"`` (space or comma separated) or an iterable."""
    if isinstance(text, str):
        items: Iterable[str | int] = text.replace(",", " ").split()
    else:
        items = text
    return [parse(item) for item in items]


def parse_distinct(text: str | Iterable[str | int], count: int | None = None) -> list[Card]:
    """Like :func:`parse_many`, but also checks for duplicates and, if given, the count."""
    cards = parse_many(text)
    seen: set[int] = set()
    for card in cards:
        if card in seen:
            raise ValueError(f"duplicate card {to_str(card)}: each card can appear only once")
        seen.add(card)
    if count is not None and len(cards) != count:
        raise ValueError(f"expected {count} cards, got {len(cards)}: {to_str_many(cards)}")
    return cards


def to_str(card: Card) -> str:
    """Format a card id as ``"5H"``."""
    if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"{card!r} is not a card id: expected an int 0..51")
    return RANKS[card >> 2] + SUITS[card & 3]


def to_str_many(cards: Iterable[Card]) -> str:
    """Format several cards as ``"5H 5S JD"``."""
    return " ".join(to_str(c) for c in cards)


def as_cards(cards: Iterable[str | int]) -> list[Card]:
    """Accept ids or strings, return ids (used at API edges)."""
    return [parse(c) for c in cards]


ALL_CARDS: tuple[Card, ...] = tuple(range(NUM_CARDS))
