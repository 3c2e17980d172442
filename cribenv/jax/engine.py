"""Cribbage in pure JAX, in Pgx's ``Env`` API: the third twin of :class:`cribenv.game.Game`.

One game is a :class:`State` (a pytree of fixed-shape arrays); :meth:`Cribbage.init` deals it
from a key, :meth:`Cribbage.step` lays a card and resolves everything that follows by itself
(the starter, his heels, Go passes, go and last-card points, the show, the next deal) up to the
next decision, and :meth:`Cribbage.observe` is ``cribenv.observation.encode(game.view(seat))``.
Nothing inside is batched: ``jax.vmap`` over games, ``jax.jit`` the result, as with Pgx.

    >>> import jax
    >>> env = Cribbage(num_players=2, target=121)
    >>> state = env.init(jax.random.PRNGKey(0))
    >>> state.observation.shape, int(state.legal_action_mask.sum())   # 6 cards to throw from
    ((601,), 6)

Deals: each hand is dealt from a deck order (a permutation of the 52 cards): card ``i`` of the
deck goes to seat ``(dealer + 1 + i) % n`` for ``i < n * hand_size``, the next card is the
starter and, with 3 players, the last card of the deck goes to the crib. :meth:`init` and
:meth:`step` draw the deck from their key (``step`` uses it only when a hand ends);
:meth:`init_with_deck` and :meth:`step_with_deck` take the deck itself (the differential test
gives :class:`~cribenv.game.Game` the same deals through ``deals=``).

Conventions of Pgx: a step on a finished game changes nothing and pays zero rewards; an
illegal action ends the game with -1 to the acting seat's side and +1 shared by the others;
at a terminal state every entry of ``legal_action_mask`` is True, and ``current_player`` is the
seat that made the last action (its observation's "to act" slot says nobody).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from cribenv.cards import CARD_VALUES
from cribenv.observation import MAX_CARDS_PER_HAND, MAX_HAND_NUMBER, OBS_SIZE, OFFSETS
from cribenv.rules import Rules
from cribenv.scoring import RANK_POINTS

__all__ = ["Cribbage", "State", "peg_points", "show_points"]

DISCARD, PLAY, GAME_OVER = 0, 1, 2   # cribenv.rules.Phase
MAX_PLAYED = 16                      # cards laid in one hand (4 players x 4)

_VALUES = np.asarray(CARD_VALUES, np.int32)
_RANK_POINTS = np.asarray(RANK_POINTS, np.uint8)
_CARDS = np.arange(52, dtype=np.int32)
# the observation's divisions, made as encode makes them (a float64 quotient to float32)
_HELD = np.asarray([k / 6 for k in range(7)], np.float32)
_DMADE = np.asarray([k / 2 for k in range(3)], np.float32)
_ORDER = np.asarray([k / MAX_CARDS_PER_HAND for k in range(MAX_PLAYED + 1)], np.float32)
_HANDNO = np.asarray([k / MAX_HAND_NUMBER for k in range(1024)], np.float32)
_I32 = jnp.int32


@dataclasses.dataclass(frozen=True)
class State:
    """One game (Pgx's fields first, then the table; add a leading axis for a batch)."""

    current_player: jax.Array          # int32: the seat to act (at the end: the last to act)
    observation: jax.Array             # float32 (601,): encode(view(current_player))
    rewards: jax.Array                 # float32 (num_players,): paid by the last step
    terminated: jax.Array              # bool
    truncated: jax.Array               # bool: always False (no step limit)
    legal_action_mask: jax.Array       # bool (52,): the cards the seat to act may lay
    _step_count: jax.Array             # int32
    hands: jax.Array                   # bool (n, 52): cards each seat holds
    discards: jax.Array                # bool (n, 52): cards each seat laid away this hand
    crib_card: jax.Array               # int32: the card dealt to the crib (3 players), else -1
    starter: jax.Array                 # int32: the starter once turned, else -1
    next_starter: jax.Array            # int32: the starter of this hand (hidden until turned)
    played_card: jax.Array             # int32 (16,): cards laid this hand, in order
    played_seat: jax.Array             # int32 (16,): and who laid them
    num_played: jax.Array              # int32
    series_start: jax.Array            # int32: index in played_* where the series starts
    count: jax.Array                   # int32: the running count
    said_go: jax.Array                 # bool (n,): in the current series
    last_player: jax.Array             # int32: the seat that laid the last card (-1: none)
    scores: jax.Array                  # int32 (sides,)
    dealer: jax.Array                  # int32
    hand_number: jax.Array             # int32: hands dealt before this one
    phase: jax.Array                   # int32: 0 discard, 1 play, 2 game over
    winner: jax.Array                  # int32: the winning side, -1 while playing
    game_points: jax.Array             # int32: 1, 2 (skunk) or 3 (double skunk) once won

    def replace(self, **changes: Any) -> State:
        """A copy with ``changes`` (as flax.struct's ``replace``)."""
        return dataclasses.replace(self, **changes)


jax.tree_util.register_dataclass(
    State, data_fields=[f.name for f in dataclasses.fields(State)], meta_fields=[])


def _select(flag: jax.Array, new: State, old: State) -> State:
    """``new`` where ``flag`` else ``old``, field by field."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(flag, a, b), new, old)


def show_points(cards: jax.Array, starter: jax.Array, is_crib: jax.Array) -> jax.Array:
    """Show score of 4 card ids ``cards`` with ``starter`` (:func:`cribenv.scoring.show_points`:
    fifteens, pairs and runs from the rank table, then flush and nobs).

        >>> int(show_points(jnp.array([16, 17, 18, 43]), 19, False))   # 5C 5D 5H JS + 5S
        29
    """
    r = cards >> 2
    key = ((((r[0] * 13 + r[1]) * 13 + r[2]) * 13 + r[3]) * 13 + (starter >> 2))
    pts = jnp.asarray(_RANK_POINTS)[key].astype(_I32)
    suits = cards & 3
    flush = jnp.all(suits == suits[0])
    pts += jnp.where(flush, jnp.where((starter & 3) == suits[0], 5,
                                      jnp.where(is_crib, 0, 4)), 0)
    nobs = jnp.any(cards == 40 + (starter & 3))    # the Jack of the starter's suit
    return pts + nobs.astype(_I32)


def peg_points(series: jax.Array, length: jax.Array, count: jax.Array) -> jax.Array:
    """Points of the last card of ``series[:length]`` (card ids of the current series, 16
    slots) with the running ``count`` (:func:`cribenv.scoring.peg_points_last`: fifteen or 31,
    pairs, the longest run of the last k >= 3 cards; not the go or the last card).

        >>> int(peg_points(jnp.array([12, 20, 16] + [0] * 13), 3, 15))   # 4C 6C 5C: 2 + 3
        5
    """
    j = jnp.arange(MAX_PLAYED)
    valid = j < length
    rev = jnp.where(valid, series[jnp.clip(length - 1 - j, 0, MAX_PLAYED - 1)] >> 2, -1)
    pts = jnp.where((count == 15) | (count == 31), 2, 0)
    same = jnp.sum(jnp.cumprod((rev == rev[0]) & valid))
    held = jnp.cumsum((rev[:, None] == jnp.arange(13)) & valid[:, None], axis=0)
    distinct = jnp.all(held <= 1, axis=1)
    lo = jax.lax.cummin(jnp.where(valid, rev, 99))
    hi = jax.lax.cummax(rev)
    k = j + 1
    run = jnp.max(jnp.where(valid & distinct & (k >= 3) & (hi - lo == k - 1), k, 0))
    return pts + jnp.where(same > 1, same * (same - 1), run)


class Cribbage:
    """Cribbage for ``num_players`` (2, 3 or 4: two partnerships) to ``target`` (121 or 61),
    skunk lines as :class:`~cribenv.game.Rules`' defaults, in Pgx's ``Env`` API.

    ``rewards`` are the AEC env's ``reward="win"``: at the end +1 to each seat of the winning
    side and -1 shared by the losing sides (zero-sum), times the game points (2 for a skunk, 3
    for a double skunk) with ``skunks=True``.
    """

    def __init__(self, num_players: int = 2, target: int = 121, skunks: bool = False) -> None:
        if target not in (61, 121):
            raise ValueError(f"target must be 121 or 61, got {target!r}")
        rules = Rules(num_players=num_players, target=target)
        self.rules = rules
        self.n = n = rules.num_players
        self.sides = rules.num_sides
        self.target = target
        self.skunks = bool(skunks)
        self.hand_size = rules.hand_size
        self.need = rules.discards_per_player
        self.side = np.asarray([rules.side_of(s) for s in range(n)], np.int32)
        self.score_obs = np.asarray([s / target for s in range(256)], np.float32)

    # ---------------------------------------------------------------- Pgx's API
    @property
    def id(self) -> str:
        return "cribbage"

    @property
    def version(self) -> str:
        return "v0"

    @property
    def num_players(self) -> int:
        return self.n

    @property
    def num_actions(self) -> int:
        return 52

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (OBS_SIZE,)

    def init(self, key: jax.Array) -> State:
        """A new game: the first dealer (as the cut: each seat alike) and the deal from ``key``."""
        k1, k2 = jax.random.split(key)
        dealer = jax.random.randint(k1, (), 0, self.n, dtype=_I32)
        return self.init_with_deck(jax.random.permutation(k2, 52).astype(_I32), dealer)

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """The seat to act lays ``action`` (a card id); a hand that ends deals the next from
        ``key`` (required: the deal is random)."""
        if key is None:
            raise ValueError("Cribbage.step needs a key: the next hand is dealt from it")
        return self.step_with_deck(state, action, jax.random.permutation(key, 52).astype(_I32))

    def observe(self, state: State, player_id: jax.Array) -> jax.Array:
        """``cribenv.observation.encode(game.view(player_id))`` (601 float32)."""
        return self._observe(state, jnp.asarray(player_id, _I32))

    # ---------------------------------------------------------------- given deals
    def init_with_deck(self, deck: jax.Array, first_dealer: jax.Array) -> State:
        """A new game whose first hand is dealt from ``deck`` (52 card ids) by ``first_dealer``
        (as ``Game(deals=[...], first_dealer=...)``)."""
        n = self.n
        z = jnp.zeros((), _I32)
        st = State(
            current_player=z, observation=jnp.zeros(OBS_SIZE, jnp.float32),
            rewards=jnp.zeros(n, jnp.float32), terminated=jnp.zeros((), bool),
            truncated=jnp.zeros((), bool), legal_action_mask=jnp.zeros(52, bool),
            _step_count=z, hands=jnp.zeros((n, 52), bool), discards=jnp.zeros((n, 52), bool),
            crib_card=z - 1, starter=z - 1, next_starter=z - 1,
            played_card=jnp.zeros(MAX_PLAYED, _I32), played_seat=jnp.zeros(MAX_PLAYED, _I32),
            num_played=z, series_start=z, count=z, said_go=jnp.zeros(n, bool),
            last_player=z - 1, scores=jnp.zeros(self.sides, _I32),
            dealer=jnp.asarray(first_dealer, _I32), hand_number=z, phase=z, winner=z - 1,
            game_points=z)
        return self._finish(self._deal(st, jnp.asarray(deck, _I32)))

    def step_with_deck(self, state: State, action: jax.Array, deck: jax.Array) -> State:
        """:meth:`step` with the next hand (if this step deals one) dealt from ``deck``."""
        action = jnp.asarray(action, _I32)
        done = state.terminated | state.truncated
        legal = (action >= 0) & (action < 52) & state.legal_action_mask[action]
        played = self._advance(state.replace(rewards=jnp.zeros(self.n, jnp.float32)), action,
                               jnp.asarray(deck, _I32))
        won = played.winner >= 0
        win = (jnp.asarray(self.side) == played.winner).astype(jnp.float32)
        scale = played.game_points.astype(jnp.float32) if self.skunks else 1.0
        rewards = jnp.where(won, scale * (win - (1 - win) / (self.sides - 1)), 0.0)
        played = played.replace(rewards=rewards, terminated=won,
                                _step_count=state._step_count + 1)
        side = jnp.asarray(self.side)
        lost = (side == side[state.current_player]).astype(jnp.float32)
        illegal = state.replace(rewards=-lost + (1 - lost) / (self.sides - 1),
                                terminated=jnp.ones((), bool),
                                _step_count=state._step_count + 1)
        after = _select(legal, played, illegal)
        after = _select(done, state.replace(rewards=jnp.zeros(self.n, jnp.float32)), after)
        return self._finish(after)

    # ---------------------------------------------------------------- internals
    def _finish(self, st: State) -> State:
        """Set the mask (all True at the end, as Pgx) and the observation of the seat to act."""
        hand = st.hands[st.current_player]
        legal = jnp.where(st.phase == DISCARD, hand,
                          hand & (jnp.asarray(_VALUES) <= 31 - st.count))
        st = st.replace(legal_action_mask=jnp.where(st.terminated, True, legal))
        return st.replace(observation=self._observe(st, st.current_player))

    def _deal(self, st: State, deck: jax.Array) -> State:
        """Deal the hand ``st.dealer`` deals from ``deck``; the seat on its left throws first."""
        n, size = self.n, self.n * self.hand_size
        seats = (st.dealer + 1 + jnp.arange(size)) % n
        hands = jnp.zeros((n, 52), bool).at[seats, deck[:size]].set(True)
        return st.replace(
            hands=hands, discards=jnp.zeros((n, 52), bool),
            crib_card=deck[51] if n == 3 else jnp.asarray(-1, _I32),
            starter=jnp.asarray(-1, _I32), next_starter=deck[size],
            played_card=jnp.zeros(MAX_PLAYED, _I32), played_seat=jnp.zeros(MAX_PLAYED, _I32),
            num_played=jnp.asarray(0, _I32), series_start=jnp.asarray(0, _I32),
            count=jnp.asarray(0, _I32), said_go=jnp.zeros(n, bool),
            last_player=jnp.asarray(-1, _I32), phase=jnp.asarray(DISCARD, _I32),
            current_player=(st.dealer + 1) % n)

    def _score(self, st: State, side: jax.Array, pts: jax.Array, active: jax.Array) -> State:
        """Add ``pts`` to ``side`` where ``active`` and the game is not over; a side reaching
        the target wins, with 1, 2 or 3 game points by the best losing score."""
        add = active & (st.winner < 0)
        scores = st.scores.at[side].add(jnp.where(add, pts, 0))
        won = add & (scores[side] >= self.target)
        best = jnp.max(jnp.where(jnp.arange(self.sides) == side, -1, scores))
        rules = self.rules
        gp = jnp.where(best < rules.double_skunk_line, 3,
                       jnp.where(best < rules.skunk_line, 2, 1))
        return st.replace(scores=scores, winner=jnp.where(won, side, st.winner),
                          game_points=jnp.where(won, gp, st.game_points),
                          phase=jnp.where(won, GAME_OVER, st.phase))

    def _continue(self, st: State, seat: jax.Array, active: jax.Array
                  ) -> tuple[State, jax.Array]:
        """Where ``active``: the first seat from ``seat`` on that can lay a card acts; those
        before it holding cards it cannot lay say Go. Returns the state and whether nobody
        can lay a card."""
        n = self.n
        i = jnp.arange(n)
        q = (seat + i) % n
        held = st.hands[q]
        has = held.any(axis=1)
        can = (held & (jnp.asarray(_VALUES) <= 31 - st.count)).any(axis=1)
        found = can.any()
        first = jnp.argmax(can)
        go = has & ~can & (i < jnp.where(found, first, n)) & active
        said_go = st.said_go.at[q].set(st.said_go[q] | go)
        current = jnp.where(active & found, q[first], st.current_player)
        return st.replace(said_go=said_go, current_player=current), active & ~found

    def _kept(self, st: State) -> jax.Array:
        """bool (n, 52): the cards each seat laid in this hand's play."""
        valid = jnp.arange(MAX_PLAYED) < st.num_played
        return jnp.zeros((self.n, 52), bool).at[st.played_seat, st.played_card].max(valid)

    def _advance(self, st: State, a: jax.Array, deck: jax.Array) -> State:
        """Lay the legal card ``a`` and resolve the game up to the next decision."""
        n, side = self.n, jnp.asarray(self.side)
        p = st.current_player
        card = jnp.arange(52) == a
        discard = st.phase == DISCARD
        hands = st.hands.at[p].set(st.hands[p] & ~card)
        # -- a discard: the same seat again, the next seat short of its discards, or the starter
        discards = st.discards.at[p].set(st.discards[p] | (card & discard))
        made = discards.sum(axis=1)
        i = jnp.arange(1, n + 1)
        q = (p + i) % n
        short = made[q] < self.need
        next_seat = jnp.where(made[p] < self.need, p, q[jnp.argmax(short)])
        turn = discard & ~short.any()
        st = st.replace(hands=hands, discards=discards,
                        current_player=jnp.where(discard, next_seat, p))
        heels = jnp.where((st.next_starter >> 2) == 10, 2, 0)
        st = st.replace(starter=jnp.where(turn, st.next_starter, st.starter),
                        phase=jnp.where(turn, PLAY, st.phase))
        st = self._score(st, side[st.dealer], heels, turn)
        # -- a card laid in the play: it pegs; 31 ends the series
        play = ~discard
        slot = jnp.minimum(st.num_played, MAX_PLAYED - 1)
        played_card = jnp.where(play, st.played_card.at[slot].set(a), st.played_card)
        series = jnp.roll(played_card, -st.series_start)
        count = jnp.where(play, st.count + jnp.asarray(_VALUES)[a], st.count)
        num_played = st.num_played + play.astype(_I32)
        pts = peg_points(series, num_played - st.series_start, count)
        st = st.replace(played_card=played_card,
                        played_seat=jnp.where(play, st.played_seat.at[slot].set(p),
                                              st.played_seat),
                        count=count, num_played=num_played,
                        last_player=jnp.where(play, p, st.last_player))
        st = self._score(st, side[p], pts, play)
        going = st.winner < 0
        end31 = play & going & (st.count == 31)
        # -- the next seat that can lay a card; nobody: the series ends with a go
        seat = jnp.where(turn, st.dealer + 1, p + 1) % n
        st, stuck = self._continue(st, seat, (turn | play) & going & ~end31)
        ends = end31 | stuck
        finished = ~st.hands.any()
        st = self._score(st, side[st.last_player], jnp.where(stuck, 1, 0), ends)
        going = st.winner < 0
        reset = ends & going & ~finished
        st = st.replace(count=jnp.where(reset, 0, st.count),
                        series_start=jnp.where(reset, st.num_played, st.series_start),
                        said_go=st.said_go & ~reset)
        st, _ = self._continue(st, (st.last_player + 1) % n, reset)
        # -- the show: each hand from the dealer's left, then the crib; then the next deal
        show = ends & going & finished
        kept = self._kept(st)
        for k in range(1, n + 1):
            seat = (st.dealer + k) % n
            cards = jnp.nonzero(kept[seat], size=4)[0].astype(_I32)
            st = self._score(st, side[seat], show_points(cards, st.starter, False), show)
        crib = st.discards.any(axis=0) | (jnp.arange(52) == st.crib_card)
        cards = jnp.nonzero(crib, size=4)[0].astype(_I32)
        st = self._score(st, side[st.dealer], show_points(cards, st.starter, True), show)
        new = show & (st.winner < 0)
        dealt = self._deal(st.replace(dealer=(st.dealer + 1) % n,
                                      hand_number=st.hand_number + 1), deck)
        st = _select(new, dealt, st)
        # the game over: the last seat to act stays current_player
        return st.replace(current_player=jnp.where(st.winner >= 0, p, st.current_player))

    def _observe(self, st: State, me: jax.Array) -> jax.Array:
        """The 601 values of :func:`cribenv.observation.encode` for seat ``me``."""
        n, sides = self.n, self.sides
        f32 = jnp.float32
        k4 = jnp.arange(4)
        inside = k4 < n
        seats = (me + k4) % n
        side = jnp.asarray(self.side)
        cards = jnp.arange(52)
        hand, disc = st.hands[me], st.discards[me]
        starter = cards == st.starter
        kept = self._kept(st)
        valid = jnp.arange(MAX_PLAYED) < st.num_played
        in_series = valid & (jnp.arange(MAX_PLAYED) >= st.series_start)
        series = jnp.zeros(52, bool).at[st.played_card].max(in_series)
        order = jnp.zeros(52, f32).at[st.played_card].max(
            jnp.where(valid, jnp.asarray(_ORDER)[jnp.arange(1, MAX_PLAYED + 1)], 0.0))
        played_by = jnp.where(inside[:, None], kept[seats], False).reshape(-1)
        tail = []
        for j in range(3):
            idx = jnp.clip(st.num_played - 1 - j, 0, MAX_PLAYED - 1)
            on = j < st.num_played - st.series_start
            tail.append((jnp.arange(13) == (st.played_card[idx] >> 2)) & on)
        my_side = side[me]
        scores = jnp.zeros(3, f32).at[:sides].set(jnp.asarray(self.score_obs)[
            jnp.clip(st.scores[(my_side + jnp.arange(sides)) % sides], 0, 255)])
        over = st.winner >= 0
        to_act = jnp.arange(5) == jnp.where(over, 4, (st.current_player - me) % n)
        seen = hand | disc | starter | kept.any(axis=0)
        ranks = hand.reshape(13, 4).sum(axis=1)
        unseen = 4 - seen.reshape(13, 4).sum(axis=1)
        parts = [
            hand, disc, starter, played_by, series, order, jnp.arange(32) == st.count,
            jnp.where(inside, st.said_go[seats], False),
            jnp.where(inside, jnp.asarray(_HELD)[st.hands[seats].sum(axis=1)], 0.0),
            jnp.where(inside, jnp.asarray(_DMADE)[st.discards[seats].sum(axis=1)], 0.0),
            scores, k4 == (st.dealer - me) % n, to_act,
            inside & (side[seats] == my_side),
            jnp.arange(3) == st.phase, jnp.arange(3) == n - 2,
            jnp.full(1, self.target == 61),
            jnp.asarray(_HANDNO)[jnp.clip(st.hand_number, 0, 1023)][None],
            ranks * 0.25, unseen * 0.25, *tail,
        ]
        obs = jnp.concatenate([jnp.asarray(x, f32).reshape(-1) for x in parts])
        assert obs.shape == (OBS_SIZE,) and OFFSETS["series_tail"].stop == OBS_SIZE
        return obs
