"""The ladder's frozen deal set and anchors (``tournament/ladder/data/cribenv-ladder-v1.json``).

A deal set is a tournament seed and a number of duplicate deals: deal ``d`` is the game seed
:func:`tournament.schedule.deal_seed` ``(seed, d)`` with seat ``d % 2`` dealing first,
played twice with the seats swapped, exactly as ``cribenv tournament --seed SEED`` plays it.
The file lists the game seeds and a SHA-256 fingerprint of the cards they deal
(:func:`fingerprint`), so a change to the seeds or to the engine's shuffle is caught before a
game is played: the numbers of a deal set mean the same on every machine and every version
that accepts it.

The anchors are fixed agents with fixed ratings: an entrant's rating is the one that best
explains its results against them (:mod:`tournament.ladder.rating`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cribenv.game import Game, Phase
from tournament.schedule import deal_seed

__all__ = ["Anchor", "DealSet", "LADDER_FILE", "fingerprint", "load"]

LADDER_FILE = Path(__file__).resolve().parent / "data" / "cribenv-ladder-v1.json"
#: Hands of each deal that the fingerprint covers.
FINGERPRINT_HANDS = 6


@dataclass(frozen=True)
class Anchor:
    """A fixed opponent of the ladder: ``label``, its agent ``spec`` and its fixed ``rating``."""

    label: str
    spec: str
    rating: float


@dataclass(frozen=True)
class DealSet:
    """A frozen deal set with its anchors (:func:`load`)."""

    name: str
    seed: int
    game_seeds: tuple[int, ...]
    sha256: str
    anchors: tuple[Anchor, ...]
    scale: str

    @property
    def deals(self) -> int:
        return len(self.game_seeds)

    def check(self, deals: int) -> None:
        """Raise ``ValueError`` unless the first ``deals`` deals are those the file promises:
        the seeds derive from the tournament seed and the cards match the fingerprint."""
        if not isinstance(deals, int) or not 1 <= deals <= self.deals:
            raise ValueError(f"{self.name} has {self.deals} deals; --deals must be from 1 to "
                             f"{self.deals}, got {deals!r}")
        derived = tuple(deal_seed(self.seed, d) for d in range(self.deals))
        if derived != self.game_seeds:
            raise ValueError(f"{self.name}: the game seeds no longer derive from seed "
                             f"{self.seed} (numpy's SeedSequence changed?); this cribenv "
                             "cannot play the ladder's deals")
        if fingerprint(self.game_seeds) != self.sha256:
            raise ValueError(f"{self.name}: the engine deals other cards from these seeds than "
                             "when the set was frozen; its numbers would not compare")


def _deal_cards(game_seed: int, first_dealer: int) -> list[Any]:
    """The cards of a deal's first :data:`FINGERPRINT_HANDS` hands (each seat's 6, the
    starter), in a game where every seat lays its first legal card (the cards do not depend on
    the play)."""
    game = Game(seed=game_seed, first_dealer=first_dealer, max_hands=FINGERPRINT_HANDS)
    out: list[Any] = []
    hand = -1
    while game.current_player is not None:
        if game.phase is Phase.DISCARD and game.hand_number != hand:
            hand = game.hand_number
            out.append([game.dealer, [sorted(h) for h in game.hands]])
        if game.phase is Phase.PLAY and len(out[-1]) == 2:
            out[-1].append(game.starter)
        game.step(game.legal_actions()[0])
    return out


def fingerprint(game_seeds: tuple[int, ...] | list[int]) -> str:
    """SHA-256 of the cards the deals deal (:func:`_deal_cards` of each, seat ``d % 2``
    dealing first in deal ``d``)."""
    digest = hashlib.sha256()
    for d, seed in enumerate(game_seeds):
        digest.update(json.dumps([seed, _deal_cards(seed, d % 2)]).encode())
    return digest.hexdigest()


@cache
def load(path: str | Path = LADDER_FILE) -> DealSet:
    """The deal set and anchors of a ladder file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    here = Path(path).resolve().parent
    anchors = tuple(Anchor(a["label"], a["spec"].replace("{here}", str(here)), a["rating"])
                    for a in data["anchors"])
    return DealSet(data["name"], data["seed"], tuple(data["game_seeds"]), data["sha256"],
                   anchors, data["scale"])
