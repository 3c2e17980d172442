"""The Cribbage Bot Protocol (CBP), version 1: the messages between cribenv and a bot program.

A bot is any program that reads one JSON object a line on its standard input and writes one a
line on its standard output (``docs/protocol.md`` has the whole protocol and an example
session). This module builds what cribenv sends and checks what the bot answers; the process
that carries them is :mod:`agents.external`.

Cards are strings, rank then suit: ``"AC"``, ``"TD"`` (ten), ``"KS"``; a bot may answer in
lower case, ``"10D"``, with a suit symbol (``"5♥"``) or a card id 0..51 (rank index x 4 + suit
index, suits C D H S) too. Seats count from 0, sides too (with 4 players seats 0 and 2 are side
0).

>>> from cribenv.game import Game
>>> game = Game(seed=3)
>>> seat = game.current_player
>>> msg = decide(game.view(seat), game.legal_actions(), time_left=10.0)
>>> msg["type"], msg["phase"], len(msg["hand"]), msg["legal"] == msg["hand"]
('decide', 'discard', 6, True)
>>> card = read_card('{"type": "play", "card": "%s"}' % msg["legal"][0], game.legal_actions())
>>> card == game.legal_actions()[0]
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from cribenv import cards as C
from cribenv.game import Discarded, Event, PlayerView, Rules, event_to_dict

__all__ = ["NAME", "VERSION", "ProtocolError", "clip", "decide", "game_over", "hello",
           "new_game", "read_card", "read_hello", "seat_events"]

NAME = "cribbage-bot-protocol"
VERSION = 1


class ProtocolError(ValueError):
    """A line from a bot that the protocol does not allow; the message says what was wrong and
    ``kind`` what kind of fault it is: ``"malformed"``, ``"illegal"`` (a card that may not be
    laid) or ``"version"`` (another version of the protocol)."""

    def __init__(self, message: str, kind: str = "malformed") -> None:
        super().__init__(message)
        self.kind = kind


def hello() -> dict[str, Any]:
    """The first line cribenv sends: the protocol's name and version."""
    return {"type": "hello", "protocol": NAME, "version": VERSION}


def new_game(seat: int, rules: Rules, seed: int | None, game: int) -> dict[str, Any]:
    """A game starts: the bot's seat, the rules (``players``, ``target``, ...), a seed the bot
    may use for its own random numbers, and the game's number for this process (from 1)."""
    return {"type": "new_game", "game": game, "seat": seat, "players": rules.num_players,
            "target": rules.target, "rules": rules.to_dict(), "seed": seed}


_NAMES = [C.to_str(c) for c in range(C.NUM_CARDS)]


def _cards(cards: Iterable[int]) -> list[str]:
    return [_NAMES[c] for c in cards]


def decide(view: PlayerView, legal: list[int], time_left: float) -> dict[str, Any]:
    """A decision: everything the seat may know of the hand, the legal cards, the seconds left
    on the bot's clock for this game. The bot answers ``{"type": "play", "card": CARD}``."""
    return {
        "type": "decide", "phase": view.phase.name.lower(), "seat": view.seat,
        "players": view.num_players, "target": view.target, "hand_number": view.hand_number,
        "dealer": view.dealer, "crib_is_own": view.crib_is_own,
        "hand": _cards(view.hand), "discards": _cards(view.discards),
        "starter": None if view.starter is None else _NAMES[view.starter],
        "played": [[seat, _NAMES[card]] for seat, card in view.played],
        "series": [[seat, _NAMES[card]] for seat, card in view.series],
        "count": view.count, "said_go": list(view.said_go), "scores": list(view.scores),
        "cards_held": list(view.cards_held), "discards_made": list(view.discards_made),
        "legal": _cards(legal), "time_left": round(time_left, 3),
    }


def seat_events(events: Iterable[Event], seat: int) -> list[dict[str, Any]]:
    """The events ``seat`` may see, as JSON objects (another seat's discard without its card)."""
    out = []
    for event in events:
        data = event_to_dict(event)
        if isinstance(event, Discarded) and event.seat != seat:
            data["card"] = None
        out.append(data)
    return out


def game_over(scores: list[int], winner: int | None, forfeit: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """The game ended: the scores by side, the winning side and, where a bot forfeited, which
    seat and why."""
    return {"type": "game_over", "scores": list(scores), "winner": winner, "forfeit": forfeit}


def _object(line: str) -> dict[str, Any]:
    text = line.strip()   # spaces, a CR before the newline
    if text.startswith("\ufeff"):
        raise ProtocolError(f"the line starts with a byte-order mark (BOM): write plain UTF-8 "
                            f"without one, got {clip(text)!r}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):   # RecursionError: brackets nested thousands deep
        raise ProtocolError(f"not a JSON object: {clip(text)!r}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"not a JSON object: {clip(text)!r}")
    return data


def clip(text: str, size: int = 80) -> str:
    """``text``, cut to ``size`` characters with ``...`` (for messages)."""
    return text if len(text) <= size else text[:size] + "..."


def read_hello(line: str) -> str:
    """The bot's name from its answer to :func:`hello`,
    ``{"type": "hello", "name": NAME, "version": 1}``: ``version`` the integer 1, ``NAME`` a
    string of 1 to 100 characters, none of them a control character (spaces around it are
    dropped); other keys are ignored.

    >>> read_hello('{"type": "hello", "name": "my-bot", "version": 1}')
    'my-bot'
    """
    data = _object(line)
    if data.get("type") != "hello":
        raise ProtocolError(f'expected the hello answer {{"type": "hello", "name": ..., '
                            f'"version": {VERSION}}}, got {clip(line.strip())!r}')
    version = data.get("version")
    if type(version) is not int:   # 1.0 and true are not the integer 1
        raise ProtocolError(f"the hello answer's version must be the integer {VERSION}, got "
                            f"{clip(repr(version))}")
    if version != VERSION:
        raise ProtocolError(f"the bot speaks version {version!r} of the protocol; "
                            f"this cribenv speaks version {VERSION}", "version")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100 \
            or any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in name.strip()):
        raise ProtocolError(f"the bot's name must be a string of 1 to 100 characters with no "
                            f"control characters, got {clip(repr(name))}")
    return name.strip()


def read_card(line: str, legal: list[int]) -> int:
    """The card of a ``{"type": "play", "card": CARD}`` answer, checked against ``legal``.

    >>> read_card('{"type": "play", "card": "QS"}', [1, 2])
    Traceback (most recent call last):
    ...
    agents.protocol.ProtocolError: illegal card 'QS': legal are AD AH
    """
    data = _object(line)
    if data.get("type") != "play" or "card" not in data:
        raise ProtocolError(f'expected {{"type": "play", "card": CARD}}, got '
                            f"{clip(line.strip())!r}")
    try:
        card = C.parse(data["card"])
    except ValueError as err:
        raise ProtocolError(str(err)) from None
    if card not in legal:
        raise ProtocolError(f"illegal card {data['card']!r}: legal are {C.to_str_many(legal)}",
                            "illegal")
    return card
