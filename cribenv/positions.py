"""What a seat cannot see, dealt anew: determinizations of a position for search.

A seat's :class:`~cribenv.game.PlayerView` hides the other seats' hands, their discards (and,
with 3 players, the crib's dealt card) and the deck the starter is cut from. :func:`sample_hidden`
deals those unseen cards at random, ``num`` times, consistently with everything the seat has
seen: the number of cards each seat holds and has laid away, every Go, and that a seat to act
in the play can lay a card. A seat that could not
lay a card at count ``c`` held no card worth ``31 - c`` or less then, so every card it still
holds is worth more (:func:`go_floors` reads these from the play, including the turns the play
skipped in earlier series). The OpenSpiel game's ``resample_from_infostate``
(:mod:`cribenv.integrations.openspiel`) deals with it, and the search agent (``agents.search``)
continues its samples in the batched engine.

>>> from cribenv.game import Game
>>> g = Game(seed=3)
>>> view = g.view(g.current_player)
>>> h = sample_hidden(view, np.random.default_rng(0), 4)
>>> h.hands.shape, [bin(int(x)).count("1") for x in h.hands[0]]
((4, 2), [6, 6])
>>> bool((h.hands[:, view.seat] == sum(1 << c for c in view.hand)).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cribenv.cards import RANK_VALUES
from cribenv.game import Phase, PlayerView

__all__ = ["Hidden", "actual_hidden", "go_floors", "sample_hidden"]

_VALUE = [RANK_VALUES[c >> 2] for c in range(52)]


@dataclass(frozen=True)
class Hidden:
    """``num`` deals of the unseen cards. Card sets are 52-bit ints (bit ``c`` = card ``c``).

    Attributes:
        hands: ``(num, players)`` the cards each seat holds now (the viewer's own as seen).
        discards: ``(num, players)`` the cards each seat has laid away to the crib.
        crib_card: ``(num,)`` the crib's dealt card with 3 players (a set of one), else 0.
        deck: ``(num, L)`` the cards past the hands in deck order (the starter is cut from
            them), in the play the cards neither held, laid away, laid nor the starter.
    """

    hands: np.ndarray
    discards: np.ndarray
    crib_card: np.ndarray
    deck: np.ndarray

    def take(self, rows: np.ndarray) -> Hidden:
        """The deals ``rows`` (repeats allowed), in that order."""
        return Hidden(self.hands[rows], self.discards[rows], self.crib_card[rows],
                      self.deck[rows])


def _card_sets(cards: np.ndarray) -> np.ndarray:
    """``(num,)`` the 52-bit sets of the rows of card ids ``cards`` ``(num, k)``."""
    return np.bitwise_or.reduce(np.left_shift(np.int64(1), cards), axis=1)


def _series_breaks(played: list[tuple[int, int]]) -> list[int]:
    """Indices into ``played`` where a series starts (0 first): after 31, or before a card that
    would pass 31 (the series before it ended on a Go)."""
    starts = [0]
    count = 0
    for k, (_, c) in enumerate(played):
        if k and (count == 31 or count + _VALUE[c] > 31):
            starts.append(k)
            count = 0
        count += _VALUE[c]
    return starts


def go_floors(view: PlayerView) -> list[int]:
    """For each seat, the least value (1 ace .. 10) a card it still holds may have, from the
    Gos of this hand's play: 1 where nothing is known.

    >>> from cribenv.game import Game
    >>> from cribenv.cards import parse
    >>> g = Game(deals=[{"dealer": 0, "hands": ["KH QH JH 10H 5S 5D", "9C 9D 8C 8D 7C 7D"],
    ...                  "starter": "AS"}])
    >>> for c in ["7C", "7D", "5S", "5D", "9C", "KH", "9D"]: _ = g.step(parse(c))
    >>> g.count, g.current_player        # 28: neither can go on; seat 0 leads the next series
    (0, 0)
    >>> go_floors(g.view(1))             # every card either still holds is worth 4 or more
    [4, 4]
    """
    n = view.num_players
    floors = [1] * n
    played = view.played
    held_now = list(view.cards_held)
    played_after = [0] * n   # cards each seat lays from index k on
    later = [[0] * n for _ in range(len(played) + 1)]
    for k in range(len(played) - 1, -1, -1):
        played_after[played[k][0]] += 1
        later[k] = list(played_after)
    starts = _series_breaks(played) + [len(played)]
    for si in range(len(starts) - 1):
        a, b = starts[si], starts[si + 1]
        count = 0
        for k in range(a, b):
            seat, card = played[k]
            count += _VALUE[card]
            closed = k + 1 == b
            if not closed:
                nxt = played[k + 1][0]
                gap = [(seat + j) % n for j in range(1, (nxt - seat) % n or n)]
            elif b < len(played) or view.phase is not Phase.PLAY or count == 31 \
                    or view.series_start == len(played):
                # a series that ended: everyone holding cards could not go on (unless 31)
                gap = [] if count == 31 else [(seat + j) % n for j in range(1, n + 1)]
            else:   # the current series: the turns skipped since the last card
                to_act = view.current_player
                gap = [] if to_act is None else \
                    [(seat + j) % n for j in range(1, (to_act - seat) % n or n)]
            for q in gap:
                if held_now[q] + later[k + 1][q] > 0:
                    floors[q] = max(floors[q], 32 - count)
    for q in range(n):
        if view.said_go[q]:
            floors[q] = max(floors[q], 32 - view.count)
    return [min(f, 11) for f in floors]


def sample_hidden(view: PlayerView, rng: np.random.Generator, num: int) -> Hidden:
    """``num`` deals of the cards ``view``'s seat has not seen, consistent with what it has
    (see the module docstring). Seats with a Go floor are dealt first, each uniformly among
    the unseen cards above its floor; in the play, another seat to act is dealt again until
    it holds a card it can lay. All ``num`` deals are drawn together (numpy)."""
    n = view.num_players
    me = view.seat
    unseen = np.array(view.unseen_cards(), np.int64)
    floors = go_floors(view)
    values = np.array([_VALUE[c] for c in unseen], np.int64)
    three = n == 3
    others = [q for q in range(n) if q != me]
    order = sorted(others, key=lambda q: -floors[q])
    hands = np.zeros((num, n), np.int64)
    discards = np.zeros((num, n), np.int64)
    hands[:, me] = sum(1 << c for c in view.hand)
    discards[:, me] = sum(1 << c for c in view.discards)
    crib_card = np.zeros(num, np.int64)
    deck_size = len(unseen) - sum(view.cards_held[q] + view.discards_made[q] for q in others) \
        - three
    if deck_size < 0:
        raise ValueError("the view's card counts do not add up to a deck")
    to_act = view.current_player if view.phase is Phase.PLAY else None
    room = 31 - view.count
    free = np.ones((num, len(unseen)), bool)
    for q in order:
        need = view.cards_held[q]
        if not need:
            continue
        eligible = values >= floors[q]
        if eligible.sum() < need:
            raise ValueError(f"no deal of the unseen cards gives seat {q} {need} cards worth "
                             f"{floors[q]} or more (its Gos)")
        pick = np.zeros((num, need), np.int64)
        todo = np.arange(num)
        for _ in range(1000):
            keys = rng.random((len(todo), len(unseen)))
            keys[~free[todo]] = np.inf
            keys[:, ~eligible] += 2.0           # the eligible cards first, in random order
            pick[todo] = np.argpartition(keys, need - 1, axis=1)[:, :need]
            if q != to_act:
                break
            todo = todo[values[pick[todo]].min(1) > room]   # the seat to act can lay a card
            if not len(todo):
                break
        else:
            raise ValueError(f"no deal found that gives seat {q}, to act, a card it can lay "
                             f"at count {view.count}")
        free[np.arange(num)[:, None], pick] = False
        hands[:, q] = _card_sets(unseen[pick])
    keys = np.where(free, rng.random(free.shape), np.inf)
    rest = np.argsort(keys, axis=1, kind="stable")[:, :int(free[0].sum())]
    at = 0
    for q in others:
        k = view.discards_made[q]
        if k:
            discards[:, q] = _card_sets(unseen[rest[:, at:at + k]])
            at += k
    if three:
        crib_card[:] = _card_sets(unseen[rest[:, at:at + 1]])
        at += 1
    deck = unseen[rest[:, at:]]
    return Hidden(hands, discards, crib_card, deck)


def actual_hidden(game, seat: int) -> Hidden:
    """The real deal of the cards ``seat`` cannot see in ``game`` (a :class:`~cribenv.game.Game`)
    as one row of :class:`Hidden`: what a perfect-information oracle would know (tests and
    the search's limits, ``scripts/search_limits.py``).

    >>> from cribenv.game import Game
    >>> g = Game(seed=3)
    >>> h = actual_hidden(g, 0)
    >>> [bin(int(x)).count("1") for x in h.hands[0]], h.deck.shape
    ([6, 6], (1, 40))
    """
    def cset(cards) -> int:
        return sum(1 << c for c in cards)

    laid = {c for d in game.discards for c in d}
    hands = np.array([[cset(h) for h in game.hands]], np.int64)
    discards = np.array([[cset(d) for d in game.discards]], np.int64)
    crib_card = np.array([cset(c for c in game.crib if c not in laid)], np.int64)
    held = {c for h in game.hands for c in h} | set(game.crib)
    deck = np.array([[c for c in game.deck if c not in held]], np.int64)
    return Hidden(hands, discards, crib_card, deck)
