"""What one seat may know: :class:`PlayerView`, the facts a bot decides from and the questions
it asks of them. :meth:`cribenv.game.Game.view` makes one; :mod:`cribenv.game` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cribenv.rules import Phase, seat_side, side_count

__all__ = ["PlayerView"]


@dataclass
class PlayerView:
    """Everything one seat may know at a moment of the current hand (and nothing else).

    The fields are the facts; the properties and methods below answer what a bot asks of them
    (its side, whose crib it is, the scores, the cards it has not seen, the series), so no bot
    re-derives them. A 2-player hand, seat 1 (the pone) to discard, seat 0 deals:

        >>> from cribenv.game import Deal, Game, Rules
        >>> deal = Deal(dealer=0, hands=["5H 5S JD 4C 6C 10S", "AH 2H 3H 7D 8D KS"],
        ...             starter="5D")
        >>> view = Game(Rules(), seed=0, deals=[deal]).view(1)
        >>> view.side, view.is_dealer, view.crib_is_own, view.discards_per_player
        (1, False, False, 2)
        >>> view.own_score, view.other_scores, view.points_to_win
        (0, [0], 121)
        >>> view.unseen_rank_counts()[:3]    # A, 2, 3: seat 1 holds one of each
        [3, 3, 3]
        >>> len(view.unseen_cards())         # 52 minus its 6 cards
        46
    """

    seat: int
    num_players: int
    target: int
    phase: Phase
    dealer: int
    current_player: int | None
    hand: list[int]                      # cards still held (all dealt cards before discarding)
    discards: list[int]                  # this seat's own discards
    starter: int | None
    played: list[tuple[int, int]]        # (seat, card) laid this hand, in order
    series_start: int                    # index into ``played`` where the current series starts
    count: int
    said_go: list[bool]                  # per seat, in the current series
    scores: list[int]                    # per side
    cards_held: list[int]                # number of cards each seat holds
    discards_made: list[int]             # number of cards each seat has laid away this hand
    hand_number: int = 0
    legal: list[int] = field(default_factory=list)

    # ------------------------------------------------------------------ seats and sides
    @property
    def num_sides(self) -> int:
        """Scoring sides: 2 (2 players, or 4 in partnerships) or 3."""
        return side_count(self.num_players)

    def side_of(self, seat: int) -> int:
        """The scoring side of ``seat`` (partners 0 & 2, 1 & 3 in 4-player games)."""
        return seat_side(seat, self.num_players)

    @property
    def side(self) -> int:
        """This seat's own scoring side."""
        return self.side_of(self.seat)

    def next_seat(self, k: int = 1) -> int:
        """The seat ``k`` places to this seat's left (the next to play after it, for k=1)."""
        return (self.seat + k) % self.num_players

    @property
    def is_dealer(self) -> bool:
        """Whether this seat deals this hand."""
        return self.dealer == self.seat

    @property
    def crib_is_own(self) -> bool:
        """Whether the crib scores for this seat's side (it deals, or its partner does)."""
        return self.side_of(self.dealer) == self.side

    @property
    def discards_per_player(self) -> int:
        """Cards each seat lays away to the crib: 2 with 2 players, else 1."""
        return 2 if self.num_players == 2 else 1

    # ------------------------------------------------------------------ scores
    @property
    def own_score(self) -> int:
        """The score of this seat's side."""
        return self.scores[self.side]

    @property
    def other_scores(self) -> list[int]:
        """The scores of the other sides, in side order."""
        me = self.side
        return [s for i, s in enumerate(self.scores) if i != me]

    @property
    def points_to_win(self) -> int:
        """Points this seat's side still needs to reach the target."""
        return self.target - self.scores[self.side]

    # ------------------------------------------------------------------ cards
    @property
    def own_cards(self) -> list[int]:
        """This seat's hand and its discards, sorted: in the discard, the cards it was dealt."""
        return sorted(self.hand + self.discards)

    @property
    def series(self) -> list[tuple[int, int]]:
        """``(seat, card)`` of the current series (the cards since the count last reset)."""
        return self.played[self.series_start:]

    @property
    def series_cards(self) -> list[int]:
        """The cards of the current series, in the order laid."""
        return [c for _, c in self.played[self.series_start:]]

    @property
    def series_ranks(self) -> tuple[int, ...]:
        """The ranks (0 = ace .. 12 = king) of the current series, in the order laid."""
        return tuple(c >> 2 for _, c in self.played[self.series_start:])

    def seen_cards(self) -> list[int]:
        """Every card this seat has seen this hand: its hand, its discards, the starter and the
        cards laid (each once, in that order)."""
        seen = self.hand + self.discards
        if self.starter is not None:
            seen.append(self.starter)
        seen += [c for _, c in self.played]
        return seen

    def unseen_cards(self) -> list[int]:
        """The cards this seat has not seen (other hands, other crib cards, the deck), sorted."""
        seen = set(self.seen_cards())
        return [c for c in range(52) if c not in seen]

    def unseen_rank_counts(self) -> list[int]:
        """How many cards of each rank (index 0 = ace .. 12 = king) this seat has not seen."""
        counts = [4] * 13
        for c in self.seen_cards():
            counts[c >> 2] -= 1
        return counts
