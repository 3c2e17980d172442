"""The expert heuristic bot: exact discard expectations and a one-reply pegging look-ahead.

It reads only its own observation (decoded to a :class:`~cribenv.game.PlayerView`); the cards
it cannot see ("unseen": the other hands, the other crib cards, the undealt deck) are treated
as uniformly random.

**Discard.** For every way to lay away the cards the rules ask for (2 of 6 with 2 players,
1 of 5 with 3 or 4) it computes, exactly, by enumeration over the unseen cards
(:func:`cribenv.discard.discard_evs`):

* the mean show score of the kept 4 over every possible starter;
* the mean score of the crib over every way the other crib cards (the opponent's throw; the
  other players' throws and the dealt crib card with 3 or 4 players) and the starter can fall
  among the unseen cards (with 2 players, the numbers of
  :func:`cribenv.discard.analyse_discards`).

The value of an option is ``hand + crib`` when the crib belongs to its side (it deals, or its
partner deals with 4 players), ``hand - crib`` when an opponent deals (``hand - crib / 2`` with
3 players, where the crib goes to one of two opponents). Ties: the higher kept-hand mean, then
the lower card ids thrown. End of game: when its side counts first in the show (the pone, or
any non-dealer side that counts before the crib) and needs at most ``endgame_need`` points, it
adds ``endgame_weight`` x the probability that the kept hand alone reaches the points still
needed (minus ``peg_allowance`` expected pegging points), so it keeps the hand most likely to
count out rather than the best average. With 2 players the seat is asked twice; the second
call recomputes the same ranking (restricted to throws containing the card already laid away)
and throws the other card of the chosen pair (a one-entry memo skips the recomputation).

**Play.** Each legal card is valued as

``now - E[reply] + counter_weight * E[counter] + go - defend_weight * P(reply wins)``

* ``now``: the pegging points it makes (fifteen, 31, pair, run);
* ``E[reply]``: the expected best points the next player to act can make in reply, their
  cards being a uniformly random set of the unseen cards of the size they hold (exact
  hypergeometric probabilities per rank: ``P(best reply >= t)`` is the chance they hold at least
  one card that scores ``>= t``). This is what keeps it from leaving the count at 5 or 21 with
  ten-cards unseen, from pairing into a likely pair royal, or from offering a run. With 3 or 4
  players each later seat replies in turn when the ones before it cannot (holding nothing that
  fits); a partner's reply (4 players) counts for it, at ``partner_weight``;
* ``E[counter]`` (2 players): the best points (fifteens, 31s, pairs) it can answer with from
  the cards it keeps, averaged over the playable unseen cards the opponent might reply with;
  this rewards leading from a pair (the pair royal) and fifteen traps;
* ``go``: when nobody else can reply (they said Go, have no cards, or likely hold nothing that
  fits) the points it makes laying the rest of its cards alone, then the go / last card;
* ``P(reply wins)``: the probability that the reply takes the opponent to the target; with
  ``defend_weight`` large this makes it defend (minimise the reply) when the opponent is close
  to winning, and costs nothing otherwise.

With 3 or 4 players, laying a low card (A-4) while holding others costs ``low_keep_weight``
per pip under 5: low cards win the go and the 31 later, which matters more with more players.
A card that takes its side to the target is laid at once (pegging out wins, whatever the
risk). Ties: the higher card first (low cards are kept for the go), then the lower card id.

The bot is deterministic; the seed is accepted for the common interface and unused.
Cost on one core: ~0.15 ms a discard decision, ~0.1 ms a play decision (decoding included);
2-player expert-vs-expert games run at ~70 games/s through the raw env.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from agents.base import ViewAgent, register_agent
from cribenv.cards import RANK_VALUES as VALUE
from cribenv.discard import discard_evs
from cribenv.game import Phase, PlayerView
from cribenv.scoring import PEG_COUNT_POINTS, PEG_PAIR_POINTS, peg_add, peg_all, score_hands

__all__ = ["ExpertAgent", "ExpertKnobs"]


@cache  # a few thousand (n, m, h) triples at most, asked again and again
def _p_none(n: int, m: int, h: int) -> float:
    """Probability that ``h`` cards drawn from ``n`` include none of ``m`` marked ones."""
    if m <= 0:
        return 1.0
    p = 1.0
    for i in range(h):
        if n - i <= 0:
            return 0.0
        p *= (n - m - i) / (n - i)
        if p <= 0.0:
            return 0.0
    return p


def _solo(ranks: list[int], count: int, rest: list[int]) -> int:
    """Points from laying ``rest`` (ranks) alone on the series (nobody else can play): the best
    order, then the go / last card point (none after a 31)."""
    best = -1
    for i, r in enumerate(rest):
        v = VALUE[r]
        if count + v > 31:
            continue
        pts = peg_add(ranks, count, r)
        if count + v == 31:
            total = pts
        else:
            total = pts + _solo(ranks + [r], count + v, rest[:i] + rest[i + 1:])
        if total > best:
            best = total
    return 1 if best < 0 else best


@dataclass(frozen=True)
class ExpertKnobs:
    """The expert's tuning knobs; the defaults are the benchmark bot (see :class:`ExpertAgent`).

        >>> ExpertKnobs(defend_weight=10.0).defend_weight
        10.0
    """

    counter_weight: float = 0.5
    defend_weight: float = 25.0
    partner_weight: float = 0.5
    endgame_need: int = 16
    endgame_weight: float = 8.0
    peg_allowance: int = 2
    crib_weight_3p: float = 0.5
    reply_weight_multi: float = 1.0
    prefer_high: bool = True
    low_keep_weight: float = 0.2
    peg_weight: float = 0.0


class ExpertAgent(ViewAgent):
    """Exact-expectation discards and look-ahead pegging (see the module docstring).

    The keyword arguments are the tuning knobs of :class:`ExpertKnobs` (kept as ``knobs``;
    the defaults are the benchmark bot):
    ``counter_weight`` (2 players: weight of its own answer to the reply), ``defend_weight``
    (points a sure opponent peg-out in reply is worth avoiding), ``partner_weight`` (4 players:
    weight of a partner's reply), ``endgame_need`` / ``endgame_weight`` / ``peg_allowance``
    (the count-out discard), ``crib_weight_3p`` (3 players: how much an opponent's crib
    counts against), ``reply_weight_multi`` (3/4 players: weight of an opponent's reply),
    ``prefer_high`` (ties: lay the higher card), ``low_keep_weight`` (3/4 players: cost per pip
    under 5 of laying a low card that could still take a go or a 31 later), ``peg_weight``
    (2 players: weight of the learned pegging value of the kept hand,
    :mod:`agents.peg_values`, added to each throw's value; 0, the benchmark bot, ignores it).
    """

    name = "expert"

    def __init__(self, seed: int | None = None, **knobs: Any) -> None:
        super().__init__(seed)
        self.knobs = ExpertKnobs(**knobs)
        self._peg_values = None
        if self.knobs.peg_weight:
            from agents.peg_values import shipped

            self._peg_values = shipped()
        self._memo_key: tuple | None = None
        self._memo_throw: tuple[int, ...] = ()

    def reset(self) -> None:
        self._memo_key = None


    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if view.phase is Phase.DISCARD:
            return self.discard(view)
        return self.play(view, legal)

    # ------------------------------------------------------------------------------ discard
    def discard(self, view: PlayerView) -> int:
        """The card to lay away now."""
        done = view.discards
        key = (view.seat, view.dealer, view.num_players, view.hand_number,
               tuple(view.own_cards), tuple(view.scores))
        if key != self._memo_key or any(d not in self._memo_throw for d in done):
            self._memo_throw = self.best_throw(view)
            self._memo_key = key
        return min(c for c in self._memo_throw if c not in done)

    def rank_throws(self, view: PlayerView
                    ) -> list[tuple[float, float, tuple[int, ...], tuple[int, ...]]]:
        """Every throw of the cards dealt (``view.own_cards``) as ``(value, hand_ev, throw,
        keep)``, best first."""
        n = view.num_players
        keeps, throws, hand_ev, crib_ev = discard_evs(view.own_cards, None,
                                                      view.discards_per_player)
        if view.crib_is_own:
            sign = 1.0
        else:
            sign = -self.knobs.crib_weight_3p if n == 3 else -1.0
        values = [h + sign * c for h, c in zip(hand_ev, crib_ev)]
        if self._peg_values is not None and n == 2:
            dealer = view.is_dealer
            values = [v + self.knobs.peg_weight * self._peg_values.value(keep, dealer)
                      for v, keep in zip(values, keeps)]
        need = view.points_to_win
        if need <= self.knobs.endgame_need and not view.crib_is_own:
            # Counting before the dealer: value the chance the hand alone counts out.
            short = need - self.knobs.peg_allowance
            arr = np.array(view.unseen_cards(), dtype=np.int32)
            hands = np.repeat(np.array(keeps, dtype=np.int32), arr.size, axis=0)
            starters = np.tile(arr, len(keeps))
            scores = score_hands(hands, starters, validate=False).reshape(len(keeps), arr.size)
            p_out = (scores >= short).mean(axis=1).tolist()
            values = [v + self.knobs.endgame_weight * p for v, p in zip(values, p_out)]
        ranked = sorted(zip(values, hand_ev, throws, keeps),
                        key=lambda o: (-o[0], -o[1], o[2]))
        return ranked

    def best_throw(self, view: PlayerView) -> tuple[int, ...]:
        """The best-ranked throw that contains the cards already laid away."""
        done = view.discards
        for _, _, throw, _ in self.rank_throws(view):
            if all(d in throw for d in done):
                return throw
        raise AssertionError("no throw contains the cards already laid away")

    # ------------------------------------------------------------------------------ play
    def play(self, view: PlayerView, legal: list[int]) -> int:
        """The card to lay in the play."""
        sign = 1 if self.knobs.prefer_high else -1
        values = self.play_values(view, legal)
        # the best value; ties: the higher (or lower) rank, then the lower card id
        return max((value, sign * (c >> 2), -c, c) for c, (value, _) in zip(legal, values))[-1]

    def play_values(self, view: PlayerView, legal: list[int]) -> list[tuple[float, int]]:
        """``(value, points now)`` of laying each card of ``legal`` (the module docstring's
        formula; 1000 + points for a card that pegs out)."""
        n = view.num_players
        me = view.side
        target = view.target
        my_need = view.points_to_win
        series = view.series_ranks
        count = view.count
        nr = view.unseen_rank_counts()
        n_unseen = sum(nr)

        # The seats that may reply, in turn order: those after this one holding cards and not
        # having said Go (with 2 players: the opponent, unless it said Go).
        repliers = []
        for i in range(1, n):
            q = view.next_seat(i)
            if view.cards_held[q] and not view.said_go[q]:
                side = view.side_of(q)
                repliers.append((view.cards_held[q], side == me, target - view.scores[side]))
        two = n == 2

        hand_ranks = [c >> 2 for c in view.hand]
        now_all = peg_all(series, count)
        out: list[tuple[float, int]] = []
        for c in legal:
            r = c >> 2
            k1 = count + VALUE[r]
            now = now_all[r]
            rest = list(hand_ranks)
            rest.remove(r)
            if now >= my_need:
                value = 1000.0 + now
            elif k1 == 31:
                value = float(now)
            elif not repliers:
                value = float(now + _solo([*series, r], k1, rest))
            else:
                value = now + self._reply_value(series + (r,), k1, rest, nr, n_unseen,
                                                repliers, two)
            if not two and VALUE[r] <= 4 and rest:
                value -= self.knobs.low_keep_weight * (5 - VALUE[r])
            out.append((value, now))
        return out

    def _reply_value(self, s1: tuple[int, ...], k1: int, rest: list[int], nr: list[int],
                     n_unseen: int, repliers: list[tuple[int, bool, int]],
                     two: bool) -> float:
        """Everything after laying a card that leaves ``s1`` at count ``k1`` (see the module
        docstring): minus the expected replies, plus counter and go terms, minus the risk.

        ``repliers`` are (cards held, is a partner, points its side needs) of the seats that may
        answer, in turn order; each answers only when the ones before could not (independence
        is assumed)."""
        room = 31 - k1
        by_points: dict[int, int] = {}
        playable = 0
        counter = 0.0
        cw = self.knobs.counter_weight if two else 0.0
        reply = peg_all(s1, k1)
        last = s1[-1]
        tail = 1  # how many cards of rank ``last`` end the series
        while tail < len(s1) and s1[-1 - tail] == last:
            tail += 1
        for x in range(13):
            cnt = nr[x]
            if cnt <= 0:
                continue
            vx = VALUE[x]
            if vx > room:
                break  # values only grow with the rank
            playable += cnt
            q = reply[x]
            if q:
                by_points[q] = by_points.get(q, 0) + cnt
            if cw and rest and k1 + vx < 31:
                # Its answer to x: fifteens, 31s and pairs (runs are left out: rare, costly).
                k2 = k1 + vx
                same = tail + 1 if x == last else 1  # cards of rank x ending the series
                best = 0
                for m in rest:
                    k3 = k2 + VALUE[m]
                    if k3 > 31:
                        continue
                    p = PEG_COUNT_POINTS[k3]
                    if m == x:
                        p += PEG_PAIR_POINTS[same + 1]
                    if p > best:
                        best = p
                counter += cnt * best
        levels = sorted(by_points, reverse=True)
        value = 0.0
        reach = 1.0  # probability that the seats before this one could not reply
        for held, partner, need in repliers:
            # E[best reply] = sum over the score levels q_1 > q_2 > ... of
            # P(best >= q_j) * (q_j - q_{j+1}); P(best >= q) = P(holding a card scoring >= q).
            e_reply = 0.0
            p_win = 0.0
            at_least = 0
            for j, q in enumerate(levels):
                at_least += by_points[q]
                p_ge = 1.0 - _p_none(n_unseen, at_least, held)
                e_reply += p_ge * (q - (levels[j + 1] if j + 1 < len(levels) else 0))
                if q >= need:
                    p_win = p_ge
            if partner:
                value += reach * self.knobs.partner_weight * e_reply
            else:
                value -= reach * ((1.0 if two else self.knobs.reply_weight_multi) * e_reply
                                  + self.knobs.defend_weight * p_win)
            p_none = _p_none(n_unseen, playable, held)
            if cw and playable:
                value += cw * reach * (1.0 - p_none) * counter / playable
            reach *= p_none
            if reach <= 0.0:
                break
        if reach > 0.0:
            value += reach * _solo(list(s1), k1, rest)
        return value


register_agent("expert", ExpertAgent)
