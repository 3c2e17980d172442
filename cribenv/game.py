"""The rules of Cribbage as a pure state machine.

This module and :mod:`cribenv.rules` (the table's rules, the deals) are the single source of
truth for the rules (the reference is ``docs/rules.md``); :mod:`cribenv.view` is what a seat may
know, and :mod:`cribenv.events` what happens. It knows nothing of PettingZoo, observation
layouts or agents; every name of those three modules is importable from here as well. A
:class:`Game` asks a seat for a card whenever that seat has a decision (a discard, or a card to
lay in the play); everything else (the cut, the starter, forced Go passes, go and last-card
points, the show, the next deal) resolves by itself.

    >>> game = Game(Rules(num_players=2), seed=0)
    >>> while game.phase is not Phase.GAME_OVER:
    ...     events = game.step(game.legal_actions()[0])
    >>> game.winner in (0, 1)
    True
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from typing import Any

from cribenv import cards as C
from cribenv.checks import exact_bool, exact_int
from cribenv.events import (
    Cut,
    Dealt,
    Discarded,
    Event,
    GameOver,
    Go,
    HandEnd,
    Muggins,
    Played,
    SeriesEnd,
    ShowScored,
    StarterTurned,
    event_to_dict,
)
from cribenv.rules import (
    Deal,
    Phase,
    Rules,
    as_deal,
    deal_order,
    legal_cards,
    seat_side,
    side_count,
)
from cribenv.scoring import RANK_POINTS_BYTES, peg_points_last, show_points
from cribenv.view import PlayerView

__all__ = [
    "Rules", "Deal", "Game", "Phase", "PlayerView", "IllegalActionError", "Event",
    "Cut", "Dealt", "Discarded", "StarterTurned", "Played", "Go", "SeriesEnd", "ShowScored",
    "Muggins", "HandEnd", "GameOver", "legal_cards", "seat_side", "side_count", "event_to_dict",
]

_VALUE = C.CARD_VALUES
_RANK = tuple(C.rank(c) for c in range(52))
_JACK_RANK = C.JACK
_new = tuple.__new__   # NamedTuple(...) without its Python-level __new__: same object, faster
_BIT_LENGTH = tuple(n.bit_length() for n in range(53))
# _shuffle() below repeats random.Random.shuffle call for call, so it is used only when Random
# draws with getrandbits (as CPython does); otherwise the stdlib shuffle runs
_SHUFFLE_INLINE = (random.Random._randbelow  # type: ignore[attr-defined]
                   is random.Random._randbelow_with_getrandbits)  # type: ignore[attr-defined]


def _shuffle(rng: random.Random, deck: list[int]) -> None:
    """``rng.shuffle(deck)``, inlined: the same ``getrandbits`` calls give the same order
    (2.5x faster than ``random.shuffle``, which took a fifth of the engine's time)."""
    if not _SHUFFLE_INLINE or type(rng) is not random.Random:
        rng.shuffle(deck)
        return
    getrandbits = rng.getrandbits
    bits = _BIT_LENGTH
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        k = bits[n]
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]


class IllegalActionError(ValueError):
    """Raised by :meth:`Game.step` for a card that is not a legal action; the game is unchanged."""


class Game:
    """One game of Cribbage to ``rules.target``.

    ``seed`` fixes every random choice (the cut for first deal, every shuffle and every starter);
    the deal sequence depends on the seed alone, never on the actions, so the same seed with the
    seats swapped gives a duplicate game. ``deals`` are used for successive hands first.
    ``first_dealer`` skips the cut. ``max_hands`` stops the game after that many complete hands
    (phase ``GAME_OVER`` with ``winner`` None unless a side reached the target): one-hand
    episodes and puzzles.

    ``explicit_chance``: the game draws nothing itself; it waits (:attr:`chance_due`) for
    each card of the cut for first deal, of every deal and every starter to be given with
    :meth:`draw` (OpenSpiel's chance nodes, :mod:`cribenv.integrations.openspiel`).
    """

    def __init__(self, rules: Rules | None = None, seed: int | None = None,
                 deals: Iterable[Deal] | None = None, first_dealer: int | None = None,
                 max_hands: int | None = None, explicit_chance: bool = False) -> None:
        if rules is not None and not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {rules!r}")
        self.rules = rules if rules is not None else Rules()
        n = self.rules.num_players
        self.seed = seed if seed is None else exact_int(seed, "seed")
        self._rng = random.Random(self.seed)
        if deals is not None and (isinstance(deals, Deal | dict | str | bytes)
                                  or not isinstance(deals, Iterable)):
            raise ValueError(f"deals must be a list of Deal (one per hand, in order), got "
                             f"{deals!r}")
        self._given_deals = [as_deal(d).normalised(self.rules) for d in (deals or [])]
        if first_dealer is not None:
            first_dealer = exact_int(first_dealer, "first_dealer")
            if not 0 <= first_dealer < n:
                raise ValueError(f"first_dealer must be a seat 0..{n - 1}, got {first_dealer!r}")
        self._first_dealer_arg = first_dealer
        if max_hands is not None and exact_int(max_hands, "max_hands") < 1:
            raise ValueError(f"max_hands must be None or at least 1, got {max_hands!r}")
        self.max_hands = max_hands
        self.actions: list[int] = []
        self.events: list[Event] = []
        self.claims: list[tuple[int, int, bool, int]] = []   # Muggins: (move, seat, crib, points)
        self.peg_claims: list[tuple[int, int]] = []   # Muggins in the play: (move, points)
        self.scores: list[int] = [0] * self.rules.num_sides
        #: Muggins at a table: the show waits after the play (``show_due``) for the seats to
        #: count with the crib turned, until :meth:`count_show` (the web table sets it).
        self.hold_show = False
        self.show_due = False
        self.winner: int | None = None
        self.game_points = 0
        self.phase = Phase.DISCARD
        self.current_player: int | None = None
        self.hand_number = -1
        self.dealer = 0
        self._side = tuple(self.rules.side_of(s) for s in range(n))
        self.explicit_chance = exact_bool(explicit_chance, "explicit_chance")
        #: With ``explicit_chance``: what the game waits for, ``"cut"``, ``"deal"`` or
        #: ``"starter"`` (a card to :meth:`draw`, ``current_player`` None), else None.
        self.chance_due: str | None = None
        self._cut_seats: list[int] = []     # explicit cut: the seats cutting in this round
        self._cut_picks: list[int] = []     # and the cards they have cut so far
        self._cut_rounds: list[tuple[int | None, ...]] = []
        self._start_game()

    # ---------------------------------------------------------------- public queries
    @property
    def num_players(self) -> int:
        return self.rules.num_players

    def legal_actions(self) -> list[int]:
        """Cards the seat to act may choose (sorted card ids); empty when the game is over."""
        p = self.current_player
        if p is None:
            return []
        return legal_cards(self.phase, self.hands[p], self.count)

    def chance_cards(self) -> list[int]:
        """The cards :meth:`draw` may be given now, each equally likely (sorted; empty when no
        draw is due): a cut from a full deck, a deal from the cards not yet dealt this hand, the
        starter from the rest of the deck."""
        due = self.chance_due
        if due == "starter":
            return sorted(self.deck)
        if due == "cut":
            taken = set(self._cut_picks)
        elif due == "deal":
            taken = {c for h in self.hands for c in h} | set(self.crib)
        else:
            return []
        return [c for c in range(52) if c not in taken]

    def draw(self, card: int | str) -> list[Event]:
        """Explicit chance: ``card`` is the next draw :attr:`chance_due` waits for. A cut is
        made by the seats in order (ties among the lowest cut again); a deal goes one card at a
        time from the dealer's left (:func:`~cribenv.rules.deal_order`), then with 3 players
        one card to the crib; the starter is turned once the discards are made. Returns the
        events it caused; raises :class:`IllegalActionError` (the game unchanged) for a card
        not in :meth:`chance_cards`.

            >>> game = Game(Rules(num_players=2), explicit_chance=True)
            >>> game.chance_due, len(game.chance_cards())
            ('cut', 52)
            >>> _ = game.draw("5H"), game.draw("KS")   # seat 0 cuts low: it deals
            >>> game.dealer, game.chance_due
            (0, 'deal')
        """
        due = self.chance_due
        if due is None:
            raise IllegalActionError("no chance draw is due (explicit_chance games wait for "
                                     "one where chance_due is set)")
        if type(card) is not int:
            try:
                card = C.parse(card)
            except ValueError as exc:
                raise IllegalActionError(str(exc)) from None
        if not self._drawable(due, card):
            what = C.to_str(card) if 0 <= card < 52 else repr(card)
            raise IllegalActionError(f"{what} cannot be drawn for the {due}: it is not among "
                                     f"the cards left ({len(self.chance_cards())})")
        start = len(self.events)
        self.chance_due = None
        if due == "cut":
            self._cut_picks.append(card)
            if len(self._cut_picks) < len(self._cut_seats):
                self.chance_due = "cut"
            else:
                picks, self._cut_picks = self._cut_picks, []
                self._cut_seats = self._cut_round(self._cut_seats, picks, self._cut_rounds)
                if len(self._cut_seats) > 1:
                    self.chance_due = "cut"
                else:
                    self._next_dealer = self._cut_seats[0]
                    self._new_hand()
        elif due == "deal":
            order = deal_order(self.dealer, self.rules.num_players, self.rules.hand_size)
            dealt = sum(map(len, self.hands))
            if dealt < len(order):
                self.hands[order[dealt]].append(card)
            else:
                self.crib.append(card)          # 3 players: the card after the hands
            if dealt + 1 < len(order) + (self.rules.num_players == 3):
                self.chance_due = "deal"
            else:
                used = {c for h in self.hands for c in h} | set(self.crib)
                self.deck = [c for c in range(52) if c not in used]
                self._hand_dealt()
        else:
            self.deck.remove(card)
            self._starter_turned(card)
        return self.events[start:]

    def _drawable(self, due: str, card: int) -> bool:
        """Whether ``card`` is among :meth:`chance_cards` (without listing them)."""
        if due == "starter":
            return card in self.deck
        if not 0 <= card < 52:
            return False
        if due == "cut":
            return card not in self._cut_picks
        return card not in self.crib and not any(card in h for h in self.hands)

    def _wait_for(self, due: str) -> None:
        """Explicit chance: nobody acts until :meth:`draw` gives the card ``due`` needs."""
        self.chance_due = due
        self.current_player = None

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.GAME_OVER

    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may know now: its own cards, public plays, counts and scores."""
        n = self.rules.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
        return PlayerView(
            seat=seat, num_players=n, target=self.rules.target, phase=self.phase,
            dealer=self.dealer, current_player=self.current_player,
            hand=sorted(self.hands[seat]), discards=sorted(self.discards[seat]),
            starter=self.starter, played=list(self.played), series_start=self.series_start,
            count=self.count, said_go=list(self.said_go), scores=list(self.scores),
            cards_held=[len(h) for h in self.hands],
            discards_made=[len(d) for d in self.discards], hand_number=self.hand_number,
            legal=self.legal_actions() if self.current_player == seat else [],
        )

    def side_of(self, seat: int) -> int:
        return self._side[seat]

    # ---------------------------------------------------------------- acting
    def step(self, card: int | str, claim: int | None = None) -> list[Event]:
        """The seat to act lays ``card`` (a discard or a play). Returns the events it caused.

        Raises :class:`IllegalActionError` (the game unchanged) for an illegal card, or a
        wrong ``claim``.

        ``claim`` (Muggins, :attr:`Rules.muggins`; human play only): in the play, the points
        the seat counts for ``card`` (fifteen, 31, pairs, runs; the go and the last card,
        which hang on the other hands, are pegged as they fall due). It scores what it
        claimed, and the next seat's side calls Muggins and takes what it overlooked; a claim
        above what the card pegs scores the true count and gives the excess to the next side
        (a false count). None (agents): the card counts in full.

            >>> deal = Deal(0, ["5C 5D 5H JS 2C 3C", "TH 2H 3H 7D 8D KS"], "5S")
            >>> game = Game(Rules(muggins=True), seed=0, deals=[deal])
            >>> for card in "8D KS 2C 3C TH".split():
            ...     _ = game.step(card)
            >>> [e for e in game.step("5C", claim=0) if type(e) is Muggins]   # fifteen 2
            [Muggins(seat=0, is_crib=False, claimed=0, points=2, caller=1, card=16)]
            >>> game.scores
            [0, 2]
        """
        p = self.current_player
        if p is None:
            if self.chance_due is not None:
                raise IllegalActionError(f"the game waits for a chance draw (the "
                                         f"{self.chance_due}): draw(card)")
            if self.show_due:
                raise IllegalActionError("the play is over and the show waits for the count "
                                         "(claim(), then count_show())")
            raise IllegalActionError("the game is over: no action is legal")
        if type(card) is not int:
            try:
                card = C.parse(card)
            except ValueError as exc:
                raise IllegalActionError(str(exc)) from None
        hand = self.hands[p]
        if card not in hand:
            held = C.to_str_many(sorted(hand))
            what = C.to_str(card) if 0 <= card < 52 else repr(card)
            raise IllegalActionError(
                f"seat {p} cannot lay {what}: it is not in its hand ({held})")
        start = len(self.events)
        if self.phase is Phase.DISCARD:
            if claim is not None:
                raise IllegalActionError(f"seat {p} cannot claim points for a discard: a "
                                         "Muggins claim goes with a card laid in the play")
            self.actions.append(card)
            self._discard(p, card)
        else:
            if _VALUE[card] + self.count > 31:
                raise IllegalActionError(
                    f"seat {p} cannot lay {C.to_str(card)}: the count is {self.count} and "
                    f"{C.to_str(card)} would take it past 31 (legal: "
                    f"{C.to_str_many(self.legal_actions())})")
            if claim is not None:
                self._check_peg_claim(p, card, claim)
                self.peg_claims.append((len(self.actions), claim))
            self.actions.append(card)
            self._play(p, card, claim)
        return self.events[start:]

    def _check_peg_claim(self, p: int, card: int, claim: Any) -> None:
        """Refuse (game unchanged) a Muggins claim of ``claim`` points for ``card``: one
        without :attr:`Rules.muggins`, or not a whole number 0..29. Its value is never checked
        against the card (a refusal would tell the seat the count)."""
        if not self.rules.muggins:
            raise IllegalActionError("claims are for Muggins games: Rules(muggins=True)")
        if type(claim) is not int or not 0 <= claim <= 29:
            raise IllegalActionError(f"seat {p} claims {claim!r} for {C.to_str(card)}: a "
                                     "claim is the points the card pegs, a whole number 0..29")

    # ---------------------------------------------------------------- internals: setup
    def _start_game(self) -> None:
        if self._first_dealer_arg is not None:
            dealer = self._first_dealer_arg
        elif self._given_deals and self._given_deals[0].dealer is not None:
            dealer = self._given_deals[0].dealer
        elif self.explicit_chance:
            self.hands: list[list[int]] = [[] for _ in range(self.rules.num_players)]
            self.crib = []
            self.deck: list[int] = []
            self._clear_table(None)
            self._cut_seats = list(range(self.rules.num_players))
            self._wait_for("cut")
            return
        else:
            dealer = self._cut_for_deal()
        self._next_dealer = dealer
        self._new_hand()

    def _cut_for_deal(self) -> int:
        """Each player cuts; the lowest rank deals, ties among the lowest re-cut."""
        contenders = list(range(self.rules.num_players))
        rounds: list[tuple[int | None, ...]] = []
        while len(contenders) > 1:
            deck = list(range(52))
            contenders = self._cut_round(contenders, self._rng.sample(deck, len(contenders)),
                                         rounds)
        return contenders[0]

    def _cut_round(self, contenders: list[int], picks: list[int],
                   rounds: list[tuple[int | None, ...]]) -> list[int]:
        """One round of the cut: ``contenders`` cut ``picks``; the round joins ``rounds``.
        Returns the seats that cut the lowest rank (they cut again if more than one; one is
        the first dealer, and the ``Cut`` event is logged)."""
        cut: list[int | None] = [None] * self.rules.num_players
        for seat, c in zip(contenders, picks):
            cut[seat] = c
        rounds.append(tuple(cut))
        low = min(_RANK[c] for c in picks)
        contenders = [s for s, c in zip(contenders, picks) if _RANK[c] == low]
        if len(contenders) == 1:
            self.events.append(Cut(tuple(rounds), contenders[0]))
        return contenders

    def _new_hand(self) -> None:
        rules = self.rules
        n = rules.num_players
        self.hand_number += 1
        given = self._given_deals[self.hand_number] if self.hand_number < len(
            self._given_deals) else None
        wait = given is None and self.explicit_chance
        # The shuffle for this hand always comes from the seeded stream, so the deal sequence
        # is fixed by the seed even when some hands use given deals.
        deck = list(range(52))
        if not wait:
            _shuffle(self._rng, deck)
        dealer = self._next_dealer
        if given is not None and given.dealer is not None:
            dealer = given.dealer
        self.dealer = dealer
        self._next_dealer = (dealer + 1) % n
        if given is not None:
            self.hands = [list(h) for h in given.hands]
            crib = [given.crib_card] if given.crib_card is not None else []
            starter = given.starter
            used = {c for h in self.hands for c in h} | set(crib) | {starter}
            self.deck = [c for c in deck if c not in used]
            # the starter is cut from the rest of the deck: put it back at a seeded position
            self.deck.insert(self._rng.randrange(len(self.deck) + 1), starter)
        elif wait:
            self.hands = [[] for _ in range(n)]     # dealt by draw()
            crib = []
            self.deck = []
        else:
            order = deal_order(dealer, n, rules.hand_size)
            self.hands = [[] for _ in range(n)]
            for seat, card in zip(order, deck):
                self.hands[seat].append(card)
            rest = deck[len(order):]
            crib = [rest.pop()] if n == 3 else []
            self.deck = rest
        self.crib: list[int] = crib
        self._clear_table(given.starter if given is not None else None)
        if wait:
            self._wait_for("deal")
            return
        self._hand_dealt()

    def _clear_table(self, given_starter: int | None) -> None:
        """Nothing laid away, turned or played yet (a new hand, or the table at the cut)."""
        n = self.rules.num_players
        self.kept: list[list[int]] = [[] for _ in range(n)]
        self.discards: list[list[int]] = [[] for _ in range(n)]
        self.starter: int | None = None
        self._given_starter = given_starter
        self.played: list[tuple[int, int]] = []
        self.series: list[int] = []
        self.series_start = 0
        self.count = 0
        self.said_go = [False] * n
        self._claimed: dict[tuple[int, bool], int] = {}
        self._last_player: int | None = None
        self.phase = Phase.DISCARD

    def _hand_dealt(self) -> None:
        """The cards are dealt: the seat on the dealer's left discards first."""
        self.current_player = (self.dealer + 1) % self.rules.num_players
        self.events.append(Dealt(self.hand_number, self.dealer))

    # ---------------------------------------------------------------- internals: discard
    def _discard(self, p: int, card: int) -> None:
        self.hands[p].remove(card)
        self.discards[p].append(card)
        self.crib.append(card)
        self.events.append(_new(Discarded, (p, card)))
        need = self.rules.discards_per_player
        if len(self.discards[p]) < need:
            return  # the same seat throws again
        n = self.rules.num_players
        for i in range(1, n + 1):
            q = (p + i) % n
            if len(self.discards[q]) < need:
                self.current_player = q
                return
        self._turn_starter()

    def _turn_starter(self) -> None:
        for s in range(self.rules.num_players):
            self.kept[s] = list(self.hands[s])
        if self._given_starter is not None:
            starter = self._given_starter
            self.deck.remove(starter)
        elif self.explicit_chance:
            self._wait_for("starter")
            return
        else:
            starter = self.deck.pop(self._rng.randrange(len(self.deck)))
        self._starter_turned(starter)

    def _starter_turned(self, starter: int) -> None:
        """The starter is cut (2 for his heels to the dealer); the play begins."""
        self.starter = starter
        heels = 2 if _RANK[starter] == _JACK_RANK else 0
        self.events.append(StarterTurned(starter, self.dealer, heels))
        self.phase = Phase.PLAY
        if heels and self._score(self._side[self.dealer], heels):
            return
        self._continue_play((self.dealer + 1) % self.rules.num_players)

    # ---------------------------------------------------------------- internals: the play
    def _play(self, p: int, card: int, claim: int | None = None) -> None:
        self.hands[p].remove(card)
        self.count += _VALUE[card]
        self.series.append(card)
        self.played.append((p, card))
        self._last_player = p
        pts = peg_points_last(self.series, len(self.series), self.count)
        self.events.append(_new(Played, (p, card, self.count, pts, tuple(self.series))))
        if (pts or claim) and (self._score(self._side[p], pts) if claim is None
                               else self._count_claimed(p, pts, claim, card=card)):
            return
        n = self.rules.num_players
        if self.count == 31:
            self._end_series("31")
            return
        self._continue_play((p + 1) % n)

    def _continue_play(self, seat: int) -> None:
        """Find the next seat, from ``seat`` on, that can lay a card; apply Go passes."""
        n = self.rules.num_players
        room = 31 - self.count
        hands = self.hands
        for i in range(n):
            q = (seat + i) % n
            hand = hands[q]
            if not hand:
                continue
            for c in hand:
                if _VALUE[c] <= room:
                    self.current_player = q
                    return
            if not self.said_go[q]:
                self.said_go[q] = True
                self.events.append(_new(Go, (q, self.count)))
        # nobody can lay a card
        if self._last_player is None:   # cannot happen: the series starts with a card
            raise AssertionError("no card laid and nobody can play")
        self._end_series("go")

    def _end_series(self, reason: str) -> None:
        last = self._last_player
        assert last is not None
        finished = not any(self.hands)
        if reason == "go":
            pts = 1
            if finished:
                reason = "last card"
        else:
            pts = 0  # the 2 for 31 were scored with the card
        self.events.append(_new(SeriesEnd, (last, pts, reason)))
        if pts and self._score(self._side[last], pts):
            return
        if finished:
            if self.hold_show:
                self.show_due = True   # the seats count with every card turned: count_show()
                self.current_player = None
                return
            self._show()
            return
        self.count = 0
        self.series = []
        self.series_start = len(self.played)
        self.said_go = [False] * self.rules.num_players
        self._continue_play((last + 1) % self.rules.num_players)

    # ---------------------------------------------------------------- internals: the show
    def _show(self) -> None:
        n = self.rules.num_players
        starter = self.starter
        assert starter is not None
        self.current_player = None
        for i in range(1, n + 1):
            seat = (self.dealer + i) % n
            hand = self.kept[seat]
            pts = show_points(hand[0], hand[1], hand[2], hand[3], starter, False,
                              RANK_POINTS_BYTES)
            self.events.append(ShowScored(seat, False, tuple(hand), starter, pts))
            claimed = self._claimed.get((seat, False))
            if (pts or claimed) and self._count_claimed(seat, pts, claimed):
                return
        crib = self.crib
        pts = show_points(crib[0], crib[1], crib[2], crib[3], starter, True, RANK_POINTS_BYTES)
        self.events.append(ShowScored(self.dealer, True, tuple(self.crib), starter, pts))
        claimed = self._claimed.get((self.dealer, True))
        if (pts or claimed) and self._count_claimed(self.dealer, pts, claimed, is_crib=True):
            return
        self.events.append(HandEnd(self.hand_number))
        if self.max_hands is not None and self.hand_number + 1 >= self.max_hands:
            self.phase = Phase.GAME_OVER   # cut short: no winner
            return
        self._new_hand()

    def _count_claimed(self, seat: int, pts: int, claimed: int | None, is_crib: bool = False,
                       card: int | None = None) -> bool:
        """Score ``pts`` (a show, or in the play ``card``) for ``seat``: in full when nothing
        was claimed or the claim is right, else (Muggins) the claim up to the true count for
        the seat, then the difference (overlooked, or a false count's excess) to the next
        seat's side, which calls Muggins. True if it ends the game."""
        if claimed is None or claimed == pts:
            return self._score(self._side[seat], pts)
        caller = (seat + 1) % self.rules.num_players
        call = Muggins(seat, is_crib, claimed, pts, caller, card)
        self.events.append(call)
        if call.scored and self._score(self._side[seat], call.scored):
            return True
        return self._score(self._side[caller], call.taken)

    def claim(self, seat: int, points: int, crib: bool = False) -> None:
        """Muggins (:attr:`Rules.muggins`, human play only): ``seat`` counts its hand (or, for
        the dealer, the crib) of this hand as ``points``. At the show it scores what it claimed
        (at most the true count) and the next seat's side takes the difference (what it
        overlooked, or a false count's excess). With :attr:`hold_show` the seat counts after
        the play, with the crib turned (:attr:`show_due`), then :meth:`count_show` scores it.

            >>> deal = Deal(0, ["5C 5D 5H JS 2C 3C", "AH 2H 3H 7D 8D KS"], "5S")
            >>> game = Game(Rules(muggins=True), seed=0, deals=[deal])
            >>> game.claim(0, 28)       # a 29 hand counted as 28
            >>> for card in "8D KS 2C 3C AH 5C 2H 5D 3H 5H 7D JS".split():
            ...     _ = game.step(card)
            >>> [e for e in game.events if type(e) is Muggins]
            [Muggins(seat=0, is_crib=False, claimed=28, points=29, caller=1, card=None)]

        What a card pegs in the play is claimed with the card: ``step(card, claim=points)``.
        """
        if not self.rules.muggins:
            raise ValueError("claims are for Muggins games: Rules(muggins=True)")
        n = self.rules.num_players
        if type(seat) is not int or not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
        if crib and seat != self.dealer:
            raise ValueError(f"seat {seat} does not deal this hand: the crib is seat "
                             f"{self.dealer}'s")
        if type(points) is not int or not 0 <= points <= 29:
            raise ValueError(f"a show claim is 0..29 points, got {points!r}")
        if self.phase is Phase.GAME_OVER:
            raise ValueError("the game is over: nothing to claim")
        self._claimed[(seat, bool(crib))] = points
        self.claims.append((len(self.actions), seat, bool(crib), points))

    def count_show(self) -> None:
        """With :attr:`hold_show`, score the show that waits after the play (:attr:`show_due`),
        with the claims made; then the next hand is dealt (or the game ends).

            >>> deal = Deal(0, ["5C 5D 5H JS 2C 3C", "AH 2H 3H 7D 8D KS"], "5S")
            >>> game = Game(Rules(muggins=True), seed=0, deals=[deal])
            >>> game.hold_show = True
            >>> for card in "8D KS 2C 3C AH 5C 2H 5D 3H 5H 7D JS".split():
            ...     _ = game.step(card)
            >>> game.show_due, game.current_player, C.to_str_many(game.crib)   # turned
            (True, None, '8D KS 2C 3C')
            >>> game.claim(0, 30 - 1)   # seat 0 counts its 29 hand
            >>> game.count_show()
            >>> game.show_due, game.hand_number
            (False, 1)
        """
        if not self.show_due:
            raise ValueError("no show waits to be counted (it waits after the play when "
                             "hold_show is set)")
        self.show_due = False
        self._show()

    # ---------------------------------------------------------------- internals: scoring
    def _score(self, side: int, pts: int) -> bool:
        """Add a scoring unit; return True if it ends the game."""
        rules = self.rules
        target = rules.target
        new = self.scores[side] + pts
        if not rules.unit_scores(self.scores[side], pts):
            return False
        self.scores[side] = new
        if new < target:
            return False
        self.winner = side
        losers = [s for i, s in enumerate(self.scores) if i != side]
        best_loser = max(losers)
        if best_loser < rules.double_skunk_line:
            self.game_points = 3
        elif best_loser < rules.skunk_line:
            self.game_points = 2
        else:
            self.game_points = 1
        self.phase = Phase.GAME_OVER
        self.current_player = None
        self.events.append(HandEnd(self.hand_number))
        self.events.append(GameOver(side, tuple(self.scores), self.game_points))
        return True

    # ---------------------------------------------------------------- copying and records
    def clone(self) -> Game:
        """An independent copy (for search): state, RNG and logs are copied."""
        new = Game.__new__(Game)
        d = self.__dict__.copy()
        rng = random.Random()
        rng.setstate(self._rng.getstate())
        d["_rng"] = rng
        for key in ("actions", "events", "scores", "deck", "crib", "played", "series",
                    "said_go", "_given_deals", "_cut_seats", "_cut_picks", "_cut_rounds"):
            d[key] = list(d[key])
        for key in ("hands", "kept", "discards"):
            d[key] = [list(x) for x in d[key]]
        d["claims"] = list(self.claims)
        d["peg_claims"] = list(self.peg_claims)
        d["_claimed"] = dict(self._claimed)
        new.__dict__.update(d)
        return new

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready record from which :meth:`from_record` replays the identical game."""
        if self.explicit_chance:
            raise TypeError("a game with explicit chance is recorded by its draws and actions "
                            "together (its owner's history), not by a seed")
        if self.seed is not None and not isinstance(self.seed, int):
            raise TypeError("only games with an int (or None) seed can be recorded")
        return {
            "format": "cribenv-game/1",
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "first_dealer": self._first_dealer_arg,
            "max_hands": self.max_hands,
            "deals": [d.to_dict() for d in self._given_deals],
            "actions": [C.to_str(c) for c in self.actions],
            "scores": list(self.scores),
            "winner": self.winner,
            **({"claims": [list(c) for c in self.claims]} if self.claims else {}),
            **({"peg_claims": [list(c) for c in self.peg_claims]} if self.peg_claims else {}),
            **({"hold_show": True} if self.hold_show else {}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_record())

    @classmethod
    def from_record(cls, record: dict[str, Any], moves: int | None = None) -> Game:
        """Replay a record made by :meth:`to_record` (its Muggins claims too); checks the
        result matches. ``moves``: stop after the first ``moves`` actions (no check then)."""
        game = cls._unplayed(record)
        for _ in game._replay(record, moves):
            pass
        if moves is None and list(game.scores) != list(record.get("scores", game.scores)):
            raise ValueError(f"replayed scores {game.scores} differ from the record's "
                             f"{record['scores']}")
        return game

    @classmethod
    def replay_record(cls, record: dict[str, Any]) -> Iterator[tuple[int, Game]]:
        """Every position of a recorded game in turn: ``(i, game)`` before move ``i``, as
        ``from_record(record, moves=i)`` has it (one game, stepped on after each yield).

            >>> game = Game(seed=3, max_hands=1)
            >>> while not game.is_over:
            ...     _ = game.step(game.legal_actions()[0])
            >>> [i for i, g in Game.replay_record(game.to_record()) if g.phase is Phase.DISCARD]
            [0, 1, 2, 3]
        """
        game = cls._unplayed(record)
        for i in game._replay(record, None):
            yield i, game

    @classmethod
    def _unplayed(cls, record: dict[str, Any]) -> Game:
        if record.get("format") != "cribenv-game/1":
            raise ValueError(f"not a cribenv game record (format {record.get('format')!r})")
        if record.get("seed") is None:
            raise ValueError("this record has no seed, so its random deals cannot be replayed")
        game = cls(Rules(**record["rules"]), seed=record["seed"],
                   deals=[Deal.from_dict(d) for d in record.get("deals", [])],
                   first_dealer=record.get("first_dealer"), max_hands=record.get("max_hands"))
        game.hold_show = bool(record.get("hold_show", False))
        return game

    def _replay(self, record: dict[str, Any], moves: int | None) -> Iterator[int]:
        """Step this unplayed game through the record's first ``moves`` actions (all: None),
        each claim made before the move it was made before, a waiting show counted; yields
        each move number before it is made."""
        claims = sorted(record.get("claims", []))
        peg_claims = {move: points for move, points in record.get("peg_claims", [])}
        actions = record["actions"]

        def count_up_to(i: int) -> None:   # the claims made before move i; a waiting show
            while claims and claims[0][0] <= i:
                _, seat, crib, points = claims.pop(0)
                self.claim(seat, points, crib=crib)
            if self.show_due:
                self.count_show()

        stop = len(actions) if moves is None else min(moves, len(actions))
        for i, action in enumerate(actions[:stop]):
            count_up_to(i)
            yield i
            try:
                self.step(action, claim=peg_claims.get(i))
            except IllegalActionError as exc:
                raise ValueError(f"record action {i} ({action}) is illegal: {exc}") from None
        count_up_to(stop)

    @classmethod
    def from_json(cls, text: str) -> Game:
        return cls.from_record(json.loads(text))

    # ---------------------------------------------------------------- display
    def __repr__(self) -> str:
        return (f"Game(players={self.rules.num_players}, hand={self.hand_number}, "
                f"phase={self.phase.name}, scores={self.scores}, to_act={self.current_player})")
