"""The table as an RGB image: what ``render_mode="rgb_array"`` returns (needs Pillow).

A spectator's picture of a :class:`~cribenv.game.Game`, readable at a glance: a pegging board
with each side's score, every seat's cards (held ones bright, the ones laid this hand dimmed;
all face up: a render is for people watching or replaying, never an observation), the dealer
and the seat to act, the starter, the count with the cards of the current series, the crib and
the last things that happened. The frame is always :data:`SIZE` (divisible by 16, as video
encoders like), so a video recorder can stack frames of any game::

    >>> from cribenv.game import Game, Rules
    >>> frame = table_image(Game(Rules(), seed=0))
    >>> frame.shape, frame.dtype.name
    ((576, 960, 3), 'uint8')

Pillow is an optional extra (``pip install "cribenv[render]"``); without it, rendering an image
raises an ImportError that says so (the env itself never needs it).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from cribenv import cards as C
from cribenv.game import (
    Game,
    GameOver,
    Go,
    Phase,
    Played,
    SeriesEnd,
    ShowScored,
    StarterTurned,
)

__all__ = ["table_image", "blank_image", "SIZE"]

SIZE = (960, 576)
"""Width and height of every frame, in pixels."""

FELT, FELT_DARK, WOOD, WOOD_DARK = "#1d5c3f", "#123d2a", "#c08a4e", "#8a5a2b"
INK, CREAM, MUTED = "#1b1b1b", "#f4efe1", "#a9c3b4"
RED, HIGHLIGHT = "#c62828", "#ffd54a"
SIDE_COLOURS = ("#3f8efc", "#ef5350", "#ffb300")
CARD_W, CARD_H = 46, 64
PHASE_NAMES = {Phase.DISCARD: "the discard", Phase.PLAY: "the play",
               Phase.GAME_OVER: "game over"}


def _pillow() -> Any:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ImportError(
            "render_mode='rgb_array' draws the table with Pillow, which is not installed: "
            'pip install "cribenv[render]" (or pip install pillow), or use render_mode="ansi"'
        ) from None
    return Image, ImageDraw, ImageFont


@cache
def _font(size: int) -> Any:
    _, _, ImageFont = _pillow()
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # an old Pillow, or one without FreeType
        return ImageFont.load_default()


def table_image(game: Game, learner: int | None = None) -> np.ndarray:
    """The table of ``game`` as a ``uint8`` array of shape ``(576, 960, 3)``.

    Seats are named ``player_0`` ... as in the env; ``learner`` (a seat) is marked as such.
    """
    Image, ImageDraw, _ = _pillow()
    n = game.rules.num_players
    if learner is not None and learner not in range(n):
        raise ValueError(f"learner must be None or a seat 0..{n - 1}, got {learner!r}")
    labels = [f"player_{s}" for s in range(n)]
    image = Image.new("RGB", SIZE, FELT)
    draw = ImageDraw.Draw(image)
    _header(draw, game, labels)
    _board(draw, game, labels)
    _seats(draw, game, labels, learner)
    _centre(draw, game, labels)
    return np.asarray(image, dtype=np.uint8).copy()


def blank_image() -> np.ndarray:
    """The empty table (what an env renders before its first ``reset()``)."""
    Image, ImageDraw, _ = _pillow()
    image = Image.new("RGB", SIZE, FELT)
    ImageDraw.Draw(image).text((SIZE[0] // 2, SIZE[1] // 2), "no game yet: call reset()",
                               font=_font(24), fill=MUTED, anchor="mm")
    return np.asarray(image, dtype=np.uint8).copy()


# ------------------------------------------------------------------------------ the parts

def _header(draw: Any, game: Game, labels: Sequence[str]) -> None:
    rules = game.rules
    draw.rectangle((0, 0, SIZE[0], 40), fill=FELT_DARK)
    partners = " (partners 0+2 v 1+3)" if rules.num_players == 4 else ""
    draw.text((16, 9), f"Cribbage: {rules.num_players} players{partners}, to {rules.target}",
              font=_font(20), fill=CREAM)
    hand = f"hand {game.hand_number + 1}, {PHASE_NAMES[game.phase]}"
    if game.phase is Phase.GAME_OVER:
        hand += (": no winner" if game.winner is None else
                 f": {_side_members(game, labels, game.winner)} wins")
    draw.text((SIZE[0] - 16, 9), hand, font=_font(20), anchor="ra",
              fill=HIGHLIGHT if game.phase is Phase.GAME_OVER else CREAM)


def _side_members(game: Game, labels: Sequence[str], side: int) -> str:
    return " + ".join(labels[s] for s in range(game.rules.num_players) if game.side_of(s) == side)


BOARD_TOP, TRACK_H, HOLES_X0, HOLES_X1 = 50, 30, 250, SIZE[0] - 30


def peg_position(score: int, side: int, target: int) -> tuple[float, float]:
    """Where a side's peg stands on the board for ``score`` (0: the start, left of hole 1);
    the holes go in groups of five.

    >>> peg_position(0, 0, 121), peg_position(1, 1, 121)
    ((236, 71), (250.0, 101))
    """
    y = BOARD_TOP + 6 + TRACK_H * side + TRACK_H // 2
    if score <= 0:
        return HOLES_X0 - 14, y
    points = min(score, target)
    groups = (target + 4) // 5
    pitch = (HOLES_X1 - HOLES_X0) / (target + 0.8 * (groups - 1))
    return HOLES_X0 + (points - 1) * pitch + 0.8 * pitch * ((points - 1) // 5), y


def _board(draw: Any, game: Game, labels: Sequence[str]) -> None:
    """One peg track per side: holes 1..target in fives, filled up to the score, the peg, the
    score in figures and the skunk line."""
    rules = game.rules
    sides = rules.num_sides
    top, track_h = BOARD_TOP, TRACK_H
    draw.rounded_rectangle((12, top, SIZE[0] - 12, top + 12 + track_h * sides), radius=10,
                           fill=WOOD, outline=WOOD_DARK, width=2)

    def hole_x(points: int) -> float:   # points 1..target
        return peg_position(points, 0, rules.target)[0]

    skunk = getattr(rules, "skunk_line", None)
    for side in range(sides):
        y = peg_position(0, side, rules.target)[1]
        colour = SIDE_COLOURS[side]
        score = game.scores[side]
        draw.text((26, y), f"{score:>3}", font=_font(22), fill=INK, anchor="lm")
        draw.text((72, y), _side_members(game, labels, side), font=_font(15), fill=INK,
                  anchor="lm")
        for p in range(1, rules.target + 1):
            x = hole_x(p)
            if p <= score:
                draw.ellipse((x - 2.2, y - 2.2, x + 2.2, y + 2.2), fill=colour)
            else:
                draw.ellipse((x - 1.6, y - 1.6, x + 1.6, y + 1.6), fill=WOOD_DARK)
        x = peg_position(score, side, rules.target)[0]
        draw.ellipse((x - 6, y - 6, x + 6, y + 6), fill=colour, outline=INK, width=2)
    if skunk and 0 < skunk < rules.target:
        x = (hole_x(skunk) + hole_x(skunk + 1)) / 2
        draw.line((x, top + 4, x, top + 8 + track_h * sides), fill=WOOD_DARK, width=1)
        draw.text((x + 3, top + 2), "S", font=_font(11), fill=WOOD_DARK)


def _seats(draw: Any, game: Game, labels: Sequence[str], learner: int | None) -> None:
    """A row per seat: name, dealer and turn markers, held cards, then the cards laid."""
    n = game.rules.num_players
    top = 50 + 12 + 30 * game.rules.num_sides + 14
    row_h = min(100, (SIZE[1] - top - 10) // n)
    played: dict[int, list[int]] = {s: [] for s in range(n)}
    for seat, card in getattr(game, "played", []):
        played[seat].append(card)
    for seat in range(n):
        y = top + seat * row_h
        to_act = game.current_player == seat
        if to_act:
            draw.rounded_rectangle((10, y - 2, 602, y + row_h - 6), radius=8, fill=FELT_DARK,
                                   outline=HIGHLIGHT, width=3)
        colour = SIDE_COLOURS[game.side_of(seat)]
        draw.rectangle((18, y + 8, 24, y + 30), fill=colour)
        draw.text((32, y + 6), labels[seat], font=_font(18), fill=CREAM)
        tags = []
        if seat == learner:
            tags.append("learner")
        if seat == game.dealer:
            tags.append("dealer")
        if to_act:
            tags.append("to act")
        draw.text((32, y + 30), ", ".join(tags), font=_font(15),
                  fill=HIGHLIGHT if to_act else MUTED)
        held = sorted(game.hands[seat])
        x = 180
        cy = y + (row_h - 6 - CARD_H) // 2
        for card in held:
            _card(draw, x, cy, card)
            x += CARD_W + 6
        if played[seat]:
            x += 14
            for card in played[seat]:
                _card(draw, x, cy, card, dim=True)
                x += CARD_W + 6


def _centre(draw: Any, game: Game, labels: Sequence[str]) -> None:
    """Starter, count, series, crib and the last events, in the right-hand panel."""
    x0 = 622
    top = 50 + 12 + 30 * game.rules.num_sides + 14
    label = _font(15)
    draw.text((x0, top), "starter", font=label, fill=MUTED)
    if game.starter is not None:
        _card(draw, x0, top + 20, game.starter)
    else:
        _card_back(draw, x0, top + 20)
    crib_x = x0 + 80
    draw.text((crib_x, top), "crib", font=label, fill=MUTED)
    for i in range(len(game.crib)):
        _card_back(draw, crib_x + i * 14, top + 20)
    count_x = x0 + 230
    draw.text((count_x, top), "count", font=label, fill=MUTED)
    count = game.count if game.phase is Phase.PLAY else 0
    draw.text((count_x, top + 16), f"{count}", font=_font(52), fill=CREAM)

    y = top + 100
    draw.text((x0, y), "series", font=label, fill=MUTED)
    series = game.played[game.series_start:] if game.phase is Phase.PLAY else []
    if series:
        step = min(CARD_W + 6, (SIZE[0] - 20 - x0 - CARD_W) // max(1, len(series) - 1))
        for i, (_, card) in enumerate(series):
            _card(draw, x0 + i * step, y + 20, card)
    else:
        draw.text((x0, y + 30), "-", font=_font(20), fill=MUTED)

    y += 100
    draw.text((x0, y), "last", font=label, fill=MUTED)
    room = (SIZE[1] - 12 - (y + 20)) // 19
    lines = [_describe(e, game, labels) for e in game.events[-6 * room:]]
    lines = [t for t in lines if t][-room:]
    for i, text in enumerate(lines):
        winner = text.startswith("game over")
        draw.text((x0, y + 20 + 19 * i), text, font=_font(15),
                  fill=HIGHLIGHT if winner else CREAM)


def _describe(event: Any, game: Game, labels: Sequence[str]) -> str | None:
    """A short line for the events worth showing (``None`` for the others)."""
    if isinstance(event, Played):
        pts = f", {event.points} pts" if event.points else ""
        return f"{labels[event.seat]} plays {C.to_str(event.card)} (count {event.count}{pts})"
    if isinstance(event, Go):
        return f"{labels[event.seat]}: go"
    if isinstance(event, SeriesEnd) and event.points:
        return f"{labels[event.seat]}: {event.points} for the {event.reason}"
    if isinstance(event, StarterTurned) and event.heels:
        return f"{labels[event.dealer]}: 2 for his heels"
    if isinstance(event, ShowScored):
        what = "crib" if event.is_crib else "hand"
        return f"{labels[event.seat]}: {what} {C.to_str_many(event.cards)} = {event.points}"
    if isinstance(event, GameOver):
        return (f"game over: {_side_members(game, labels, event.winner)} wins "
                + "-".join(map(str, event.scores)))
    return None


# ------------------------------------------------------------------------------ cards

def _card(draw: Any, x: float, y: float, card: int, dim: bool = False) -> None:
    face = "#b8c4bd" if dim else "#fdfdfb"
    draw.rounded_rectangle((x, y, x + CARD_W, y + CARD_H), radius=5, fill=face,
                           outline="#6b6b6b", width=1)
    suit = C.suit(card)
    colour = RED if suit in (1, 2) else INK
    if dim:
        colour = "#9a5a5a" if suit in (1, 2) else "#4d5652"
    rank = C.RANKS[C.rank(card)]
    if rank == "T":
        draw.text((x + 3, y + 4), "10", font=_font(17), fill=colour)
    else:
        draw.text((x + 5, y + 3), rank, font=_font(19), fill=colour)
    _suit(draw, x + CARD_W - 11, y + 14, suit, 6.5, colour)
    _suit(draw, x + CARD_W / 2, y + CARD_H * 0.64, suit, 11, colour)


def _card_back(draw: Any, x: float, y: float) -> None:
    draw.rounded_rectangle((x, y, x + CARD_W, y + CARD_H), radius=5, fill="#3d5a98",
                           outline=CREAM, width=2)
    draw.rounded_rectangle((x + 5, y + 5, x + CARD_W - 5, y + CARD_H - 5), radius=3,
                           outline="#9fb6e6", width=1)


def _suit(draw: Any, cx: float, cy: float, suit: int, s: float, colour: str) -> None:
    """A suit drawn from shapes (no font needs the glyphs): C, D, H, S = 0..3; ``s`` is about
    half the symbol's height."""
    r = s * 0.52
    if suit == 1:        # diamond
        draw.polygon([(cx, cy - s), (cx + 0.72 * s, cy), (cx, cy + s), (cx - 0.72 * s, cy)],
                     fill=colour)
    elif suit == 2:      # heart
        for dx in (-r, r):
            draw.ellipse((cx + dx - r, cy - 0.45 * s - r, cx + dx + r, cy - 0.45 * s + r),
                         fill=colour)
        draw.polygon([(cx - 2 * r + 0.1, cy - 0.3 * s), (cx + 2 * r - 0.1, cy - 0.3 * s),
                      (cx, cy + s)], fill=colour)
    elif suit == 3:      # spade
        for dx in (-r, r):
            draw.ellipse((cx + dx - r, cy + 0.2 * s - r, cx + dx + r, cy + 0.2 * s + r),
                         fill=colour)
        draw.polygon([(cx - 2 * r + 0.1, cy + 0.1 * s), (cx + 2 * r - 0.1, cy + 0.1 * s),
                      (cx, cy - s)], fill=colour)
        draw.polygon([(cx, cy + 0.2 * s), (cx - 0.45 * s, cy + s), (cx + 0.45 * s, cy + s)],
                     fill=colour)
    else:                # club
        c = r * 0.95
        for dx, dy in ((0, -0.45 * s), (-0.9 * c, 0.15 * s), (0.9 * c, 0.15 * s)):
            draw.ellipse((cx + dx - c, cy + dy - c, cx + dx + c, cy + dy + c), fill=colour)
        draw.polygon([(cx, cy), (cx - 0.45 * s, cy + s), (cx + 0.45 * s, cy + s)],
                     fill=colour)
