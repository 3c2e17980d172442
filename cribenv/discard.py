"""Exact discard analysis for the 2-player game (6 cards dealt, 2 thrown to the crib).

For each of the 15 ways to throw 2 of the 6 cards:

* ``hand_ev``: the exact mean show score of the kept 4 over the 46 unseen starters;
* ``crib_ev``: the exact mean crib score over every pair the opponent might throw and every
  starter from the 44 cards left. **Assumption**: the opponent's throw is a uniformly random
  pair of the 46 unseen cards (C(46, 2) = 1035 pairs, x 44 starters = 45,540 cribs per
  option). Real opponents throw better (or worse) than random, so treat this as a baseline.
* ``expected = hand_ev + crib_ev`` for the dealer (the crib is theirs), ``hand_ev - crib_ev``
  for the pone.

Pegging is ignored. All 15 options take a few tens of milliseconds (numpy via
:func:`cribenv.scoring.score_hands`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cribenv.cards import Card, parse_distinct, to_str_many
from cribenv.scoring import score_hands

__all__ = ["DiscardOption", "analyse_discards", "crib_ev", "hand_stats"]


@dataclass(frozen=True)
class DiscardOption:
    """One way to discard: the kept 4, the thrown 2, and their expected values."""

    keep: tuple[int, int, int, int]
    throw: tuple[int, int]
    hand_ev: float  # mean show score of ``keep`` over the unseen starters
    crib_ev: float  # mean crib score given ``throw`` (random opponent throw, random starter)
    expected: float  # hand_ev + crib_ev (dealer) or hand_ev - crib_ev (pone)
    hand_min: int  # worst show score of ``keep`` over the starters
    hand_max: int  # best show score of ``keep`` over the starters

    def __str__(self) -> str:
        return (
            f"keep {to_str_many(self.keep)}  throw {to_str_many(self.throw)}  "
            f"hand {self.hand_ev:6.3f} ({self.hand_min}-{self.hand_max})  "
            f"crib {self.crib_ev:6.3f}  expected {self.expected:+7.3f}"
        )


@lru_cache(maxsize=4)
def _crib_index(n_unseen: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions into the unseen cards for every (opponent pair, starter) combination:
    arrays a, b, s of length C(n, 2) * (n - 2), with a < b and s not in {a, b}."""
    a, b = np.triu_indices(n_unseen, k=1)
    idx = np.broadcast_to(np.arange(n_unseen), (a.size, n_unseen))
    keep = (idx != a[:, None]) & (idx != b[:, None])
    s = idx[keep].reshape(a.size, n_unseen - 2)
    reps = n_unseen - 2
    out = (np.repeat(a, reps), np.repeat(b, reps), s.ravel())
    for arr in out:
        arr.setflags(write=False)
    return out


def _unseen(known: Iterable[int]) -> np.ndarray:
    known_set = set(known)
    return np.array([c for c in range(52) if c not in known_set], dtype=np.int32)


def hand_stats(keep: Iterable[int], unseen: np.ndarray) -> tuple[float, int, int]:
    """(mean, min, max) show score of the 4 trusted card ids ``keep`` over the ``unseen``
    starters."""
    keep_arr = np.asarray(list(keep), dtype=np.int32)
    scores = score_hands(np.tile(keep_arr, (unseen.size, 1)), unseen, validate=False)
    return float(scores.sum() / scores.size), int(scores.min()), int(scores.max())


def crib_ev(throw: Iterable[int], unseen: np.ndarray) -> float:
    """Exact mean crib score for the 2 trusted card ids ``throw``, the opponent throwing a
    uniformly random pair of ``unseen`` and the starter uniform over the rest of ``unseen``."""
    t = np.asarray(list(throw), dtype=np.int32)
    a, b, s = _crib_index(unseen.size)
    cribs = np.empty((a.size, 4), dtype=np.int32)
    cribs[:, 0] = t[0]
    cribs[:, 1] = t[1]
    cribs[:, 2] = unseen[a]
    cribs[:, 3] = unseen[b]
    scores = score_hands(cribs, unseen[s], is_crib=True, validate=False)
    return float(scores.sum() / scores.size)


def analyse_discards(six_cards: str | Iterable[str | int], is_dealer: bool) -> list[DiscardOption]:
    """All 15 discards of a 2-player 6-card hand (ids or strings), best ``expected`` first.

    Raises ``ValueError`` unless given exactly 6 distinct valid cards.
    """
    if not isinstance(six_cards, str):
        six_cards = [int(c) if isinstance(c, np.integer) else c for c in six_cards]
    cards: list[Card] = parse_distinct(six_cards, count=6)
    unseen = _unseen(cards)
    options = []
    for throw in itertools.combinations(cards, 2):
        keep = tuple(c for c in cards if c not in throw)
        hand_ev, hand_min, hand_max = hand_stats(keep, unseen)
        c_ev = crib_ev(throw, unseen)
        expected = hand_ev + c_ev if is_dealer else hand_ev - c_ev
        options.append(
            DiscardOption(
                keep=keep,  # type: ignore[arg-type]
                throw=throw,  # type: ignore[arg-type]
                hand_ev=hand_ev,
                crib_ev=c_ev,
                expected=expected,
                hand_min=hand_min,
                hand_max=hand_max,
            )
        )
    options.sort(key=lambda o: (-o.expected, -o.hand_ev, o.throw))
    return options
