"""Positions of a real game continued in the batched engine, for search: a seat's view with the
cards it has not seen dealt anew (:func:`cribenv.positions.sample_hidden`) becomes one batched
game a deal (:func:`from_view`), played to the end of the hand in compiled code
(:func:`playout`); :func:`play_likelihood` and :func:`discard_likelihood` weigh the deals by
how likely each makes what the other seats did, and :func:`greedy_actions` is the greedy bot
compiled.

They are built on the engine's public interface alone: :meth:`cribenv.vector.VectorGame.from_state`
makes the games from rows in the layout of :mod:`cribenv.vector_kernels`, and the kernels
(:mod:`agents.search.kernels`) read and step those rows. ``tests/test_positions.py`` steps every
row beside the ``Game`` holding the same filled-in position.

>>> from cribenv.game import Game
>>> from cribenv.positions import sample_hidden
>>> g = Game(seed=5)
>>> view = g.view(g.current_player)
>>> vg = from_view(view, sample_hidden(view, np.random.default_rng(0), 3), seeds=[1, 2, 3])
>>> vg.hands(view.seat) == [view.hand] * 3, vg.scores.tolist()
(True, [[0, 0], [0, 0], [0, 0]])
>>> playout(vg)
>>> vg.hand_number.tolist(), bool((vg.scores.sum(1) > 0).all())
([1, 1, 1], True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.search import kernels as P
from cribenv import vector_kernels as K
from cribenv.game import Phase, PlayerView, Rules
from cribenv.positions import Hidden
from cribenv.vector import VectorGame

__all__ = ["discard_likelihood", "from_view", "greedy_actions", "network_playout",
           "own_discard_likelihood", "play_likelihood", "playout", "random_playout"]


def from_view(view: PlayerView, hidden: Hidden, seeds: Sequence[int] | np.ndarray | None,
              rules: Rules | None = None, **kwargs) -> VectorGame:
    """Games that continue ``view``'s position, one a row, with the cards its seat cannot
    see dealt as ``hidden`` (:func:`cribenv.positions.sample_hidden`) and each row's
    generator seeded as ``random.Random(seeds[i])`` (the cut, if still to come, and the
    hands after this one; ``None`` leaves them unseeded, for reading the positions
    alone, e.g. :func:`discard_likelihood`). ``rules`` default to
    ``Rules(num_players, target)`` of the view; other keyword arguments are the
    :class:`~cribenv.vector.VectorGame` constructor's. Row ``i`` plays exactly as the
    ``Game`` holding that position (``tests/test_positions.py``).
    """
    rules = rules if rules is not None else Rules(num_players=view.num_players,
                                                  target=view.target)
    if rules.num_players != view.num_players or rules.target != view.target:
        raise ValueError(f"the rules ({rules.num_players} players, target {rules.target}) "
                         f"are not the view's ({view.num_players}, {view.target})")
    if view.phase is Phase.GAME_OVER or view.current_player is None:
        raise ValueError("the view's game is over: there is nothing to continue")
    num = len(hidden.hands) if seeds is None else len(seeds)
    if hidden.hands.shape != (num, view.num_players):
        raise ValueError(f"hidden holds {hidden.hands.shape[0]} deals for {num} seeds")
    st = np.zeros((num, K.NCOL), np.int64)
    n = view.num_players
    st[:, K.TO_ACT] = view.current_player
    st[:, K.PHASE] = int(view.phase)
    st[:, K.DEALER] = view.dealer
    st[:, K.NEXT_DEALER] = (view.dealer + 1) % n
    st[:, K.HAND_NO] = view.hand_number
    st[:, K.COUNT] = view.count
    st[:, K.SERIES_START] = view.series_start
    st[:, K.N_PLAYED] = len(view.played)
    st[:, K.LAST] = view.played[-1][0] if view.played else -1
    st[:, K.STARTER] = -1 if view.starter is None else view.starter
    st[:, K.WINNER] = -1
    st[:, K.SCORES:K.SCORES + len(view.scores)] = view.scores
    for k, (seat, card) in enumerate(view.played):
        st[:, K.PLAYED_CARD + k] = card
        st[:, K.PLAYED_BY + k] = seat
    crib = hidden.crib_card.copy()
    for q in range(n):
        st[:, K.HAND + q] = hidden.hands[:, q]
        st[:, K.DISC + q] = hidden.discards[:, q]
        crib |= hidden.discards[:, q]
        st[:, K.HELD + q] = view.cards_held[q]
        st[:, K.NDISC + q] = view.discards_made[q]
        st[:, K.GO + q] = int(view.said_go[q])
        if view.phase is Phase.PLAY:
            laid = sum(1 << c for s, c in view.played if s == q)
            st[:, K.KEPT + q] = hidden.hands[:, q] | laid
    st[:, K.CRIB] = crib
    first = rules.hand_size * n
    st[:, K.DECK + first:K.DECK + first + hidden.deck.shape[1]] = hidden.deck
    return VectorGame.from_state(rules, st, seeds, first_dealer=0, **kwargs)


def greedy_actions(vg: VectorGame) -> np.ndarray:
    """``(N,)`` the card :class:`agents.greedy.GreedyAgent` lays in each game of ``vg`` (-1
    once over), computed in compiled code."""
    out = np.empty(vg.num_games, np.int64)
    st, cfg = vg.state, vg.config
    vg.map_rows(lambda a, b: P.greedy_cards(st[a:b], cfg, P.HAND4, P.TWO, out[a:b]))
    return out


def playout(vg: VectorGame, rows: np.ndarray | None = None) -> None:
    """Play each game of ``vg`` (or the games ``rows``) to the end of the hand it is in: until
    that hand's show is counted and the next hand dealt, or the game ends. Every seat discards
    as :class:`agents.greedy.GreedyAgent` and plays the card that pegs the most points less
    the expected best reply of the next seat (the expert's main term, from what the seat may
    know). Rewards are not computed."""
    sel = slice(None) if rows is None else np.asarray(rows, np.int64)
    st, mt, cfg = vg.state[sel], vg.generators[sel], vg.config
    vg.map_rows(lambda a, b: P.playout_rows(mt[a:b], st[a:b], cfg, K.RANK_POINTS, P.HAND4,
                                            P.TWO), len(st))
    if rows is not None:
        vg.state[sel], vg.generators[sel] = st, mt


def random_playout(vg: VectorGame) -> None:
    """Play every game of ``vg`` to its end, every seat laying a uniformly random legal card
    drawn by the game's own generator (the cut and the deals too): the random rollouts of
    OpenSpiel's ``RandomRolloutEvaluator``, in compiled code (:mod:`agents.openspiel`)."""
    st, mt, cfg = vg.state, vg.generators, vg.config
    vg.map_rows(lambda a, b: P.random_playout_rows(mt[a:b], st[a:b], cfg, K.RANK_POINTS))


def play_likelihood(vg: VectorGame, seat: int, temperature: float = 1.0,
                    floor: float = 0.1) -> np.ndarray:
    """``(N,)`` the log-chance of the cards the other seats laid so far in each game's play,
    had they chosen by the softmax (at ``temperature`` points) of the pegging points less the
    expected best reply, mixed with ``floor`` of a uniform choice: how likely each deal of
    :func:`from_view` makes what ``seat`` saw."""
    out = np.empty(vg.num_games, np.float64)
    st, cfg = vg.state, vg.config
    vg.map_rows(lambda a, b: P.play_log_likelihood(st[a:b], cfg, K.RANK_POINTS, seat,
                                                   temperature, floor, out[a:b]))
    return out


def discard_likelihood(vg: VectorGame, seat: int, temperature: float = 1.0,
                       floor: float = 0.1, model: str = "greedy") -> np.ndarray:
    """``(N,)`` for 2 players: the log-chance of the throws the other seat made in each game,
    had it thrown by the softmax (at ``temperature`` points) of a value of each way to lay
    away its six cards, mixed with ``floor`` of a uniform choice: how likely each deal of
    :func:`from_view` makes its throw (0 before it has thrown). The value, with
    ``model="greedy"``, is the greedy bot's (the kept cards' points alone, plus or minus the
    thrown pair's); with ``"ev"``, the kept cards' average show over a starter plus or minus
    the thrown ranks' average crib (:func:`cribenv.discard.average_tables`), and a 4-card
    flush's 4 points in both."""
    if model not in ("greedy", "ev"):
        raise ValueError(f"model must be 'greedy' or 'ev', got {model!r}")
    out = np.empty(vg.num_games, np.float64)
    st, cfg = vg.state, vg.config
    if model == "greedy":
        hand, crib = P.HAND4_F, P.TWO_F
    else:
        from cribenv.discard import average_tables
        hand, crib = average_tables()
    vg.map_rows(lambda a, b: P.discard_log_likelihood(st[a:b], cfg, seat, temperature, floor,
                                                      hand, crib, out[a:b]))
    return out


# ------------------------------------------------------------------------------------------
# The network's own models (``search:BASE?models=own``): no heuristic, no bot's value
# ------------------------------------------------------------------------------------------

#: Rows the network reads at a time (its activations take ~60 KB a row): larger batches
#: are split, so a decision's memory grows by the games alone.
NETWORK_ROWS = 4096


def network_playout(vg: VectorGame, actor) -> None:
    """Play every game of ``vg`` to the end of the hand it is in (the next hand dealt, or the
    game over), every seat laying the card of highest logit of ``actor`` (an actor of
    :mod:`agents.ppo`, read from each seat's observation: what ``ppo:PATH`` plays)."""
    from agents.ppo import best_cards

    start = vg.hand_number.copy()
    acts = np.zeros(vg.num_games, np.int64)
    while True:
        rows = np.flatnonzero(~vg.done & (vg.hand_number == start))
        if not rows.size:
            return
        for a in range(0, rows.size, NETWORK_ROWS):    # the network's memory stays bounded
            part = rows[a:a + NETWORK_ROWS]
            acts[part] = best_cards(actor.logits(vg.observe(rows=part)),
                                    vg.legal_mask(rows=part))
        vg.step(acts, rows=rows)


def own_discard_likelihood(view: PlayerView, hidden: Hidden, actor,
                           floor: float = 0.1) -> np.ndarray:
    """``(N,)`` for 2 players in the play: the log-chance that ``actor`` (a ``keeps`` actor
    with a throw head) throws what the other seat threw in each deal of ``hidden``, from its
    six cards (the cards it holds, laid in the play and threw), mixed with ``floor`` of a
    uniform choice of the 15 throws: the network's own model of its opponent. Its view at
    the throw is the hand's with the scores of now (the points pegged since are not taken
    off)."""
    from agents.ppo import throw_tables

    other = 1 - view.seat
    laid = sum(1 << c for s, c in view.played if s == other)
    six = hidden.hands[:, other] | hidden.discards[:, other] | laid
    my_six = sorted(view.hand + view.discards + [c for s, c in view.played if s == view.seat])
    num = len(six)
    at_throw = Hidden(hands=np.zeros((num, 2), np.int64), discards=np.zeros((num, 2), np.int64),
                      crib_card=np.zeros(num, np.int64), deck=hidden.deck)
    at_throw.hands[:, other] = six
    at_throw.hands[:, view.seat] = sum(1 << c for c in my_six)
    throw_view = PlayerView(
        seat=view.seat, num_players=2, target=view.target, phase=Phase.DISCARD,
        dealer=view.dealer, current_player=other, hand=my_six, discards=[], starter=None,
        played=[], series_start=0, count=0, said_go=[False, False], scores=list(view.scores),
        cards_held=[6, 6], discards_made=[0, 0], hand_number=view.hand_number)
    vg = from_view(throw_view, at_throw, None)
    cards = np.empty((num, 6), np.int64)
    logp = np.empty((num, 15))
    for a in range(0, num, NETWORK_ROWS):               # the network's memory stays bounded
        rows = np.arange(a, min(a + NETWORK_ROWS, num))
        cards[rows], logp[rows] = actor.throw_log_probs(
            vg.observe(seats=np.full(rows.size, other), rows=rows))
    thrown = throw_tables(6)[0]
    sets = (np.left_shift(np.int64(1), cards[:, thrown[:, 0]])
            | np.left_shift(np.int64(1), cards[:, thrown[:, 1]]))          # (N, 15)
    made = np.argmax(sets == hidden.discards[:, other][:, None], 1)
    p = np.exp(logp[np.arange(num), made])
    return np.log((1 - floor) * p + floor / len(thrown))
