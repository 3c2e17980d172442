"""The batched engine's compiled interface: its state layout and the functions that step a row,
for compiled code built on :class:`cribenv.vector.VectorGame` (the search agent's playouts
and likelihoods, ``agents/search/kernels.py``, are built on it alone).

A ``VectorGame`` holds its N games in three arrays, given by
:attr:`~cribenv.vector.VectorGame.state` (``st``), :attr:`~cribenv.vector.VectorGame.generators`
(``mt``) and :attr:`~cribenv.vector.VectorGame.config` (``cfg``);
:meth:`~cribenv.vector.VectorGame.from_state` makes games from rows of ``st`` and
:meth:`~cribenv.vector.VectorGame.map_rows` runs a kernel on blocks of rows on the engine's
threads.

* ``st``, ``int64 (N, NCOL)``: one row a game. Hands, discards, kept hands and the crib are
  52-bit card sets (bit ``c`` = card ``c``); seats are 0..3 and sides 0..2 (a block of 4 or 3
  columns, those past the table's seats or sides zero).

  ============================  =============================================================
  column                        holds
  ============================  =============================================================
  ``TO_ACT``                    the seat to act, -1 once the game is over
  ``PHASE``                     :class:`~cribenv.game.Phase`: 0 discard, 1 play, 2 over
  ``DEALER``, ``NEXT_DEALER``   this hand's dealer, the next hand's
  ``HAND_NO``                   ``hand_number`` (0 for the first hand)
  ``COUNT``                     the running count of the play
  ``SERIES_START``              index into the cards laid where the current series starts
  ``N_PLAYED``                  the cards laid this hand
  ``LAST``                      the seat that laid the last card (-1 none)
  ``STARTER``                   the starter, -1 before it is turned
  ``WINNER``, ``GAME_POINTS``   the winning side (-1 while playing) and 1, 2 or 3 (0 before)
  ``CRIB``                      the crib's card set
  ``MTI``                       the position of the row's generator in ``mt``
  ``SCORES + side``             each side's score
  ``HAND + seat``               the cards each seat holds now
  ``DISC + seat``               the cards each seat has laid away to the crib
  ``KEPT + seat``               the four cards each seat keeps for the show (set at the turn)
  ``HELD + seat``               how many cards each seat holds
  ``NDISC + seat``              how many cards each seat has laid away
  ``GO + seat``                 1 where the seat said Go in this series
  ``PLAYED_CARD + k``           the ``k``-th card laid this hand (16 columns)
  ``PLAYED_BY + k``             the seat that laid it (16 columns)
  ``DECK + k``                  this hand's shuffled deck (52 columns): the hands are dealt
                                from its front, the starter is cut from the rest
  ``CRIB_SHOWN``                1 once this hand's crib has been counted in the show (a game
                                that ends on a hand's count never shows its crib)
  ============================  =============================================================

* ``mt``, ``uint32 (N, 624)``: each game's generator, CPython's ``random.Random`` (MT19937):
  the cut, the shuffles and the starters of game ``i`` are its draws.
* ``cfg``, ``int64 (NCFG,)``: the rules (``C_PLAYERS``, ``C_TARGET``, ``C_SKUNK``,
  ``C_DOUBLE_SKUNK``, ``C_EXACT`` (must peg out exactly), ``C_MAX_HANDS`` (0: no limit),
  ``C_HAND_SIZE``, ``C_NEED`` (cards each seat lays away), ``C_SIDES``, ``C_FIRST_DEALER``
  (-1: cut for deal), ``C_REWARD``, ``C_SKUNKS``).

The functions are compiled with numba (:data:`jit`, cached on disk) and are called from
functions compiled with :data:`jit` too, on row ``i`` of the arrays:

* :func:`step_game` ``(mt, st, cfg, rank_points, i, card)``: ``Game.step(card)`` for a legal
  card, the forced Go passes, the cut, the show and the next deal included
  (``rank_points`` is :data:`RANK_POINTS`); rewards are the caller's;
* :func:`is_legal` ``(st, i, card)`` and :func:`playable` ``(hand, count)`` (the cards of a set
  that do not pass 31);
* :func:`seed_generator` ``(mt, st, i, key, keylen)``: seed the row's generator as
  ``random.Random(seed)`` from the seed's 32-bit words (:func:`cribenv.vector.seed_words`);
  :func:`randbelow` ``(mt, st, i, n)``: its ``randrange(n)``, the next draw of the row's
  generator (a kernel's own random choices, e.g. random playouts);
* :func:`card_value`, :func:`side_of` and :func:`peg_points_last`: the core's
  ``cards.value``, ``game.seat_side`` and ``scoring.peg_points_last``, compiled.

>>> from cribenv.game import Rules
>>> from cribenv.vector import VectorGame
>>> vg = VectorGame(Rules(), seeds=[0])
>>> st = vg.state
>>> int(st[0, TO_ACT]), int(st[0, HELD]), bin(int(st[0, HAND])).count("1"), st.shape[1] == NCOL
(1, 6, 6, True)
"""

from __future__ import annotations

from cribenv._vector_kernels import (
    C_DOUBLE_SKUNK,
    C_EXACT,
    C_FIRST_DEALER,
    C_HAND_SIZE,
    C_MAX_HANDS,
    C_NEED,
    C_PLAYERS,
    C_REWARD,
    C_SIDES,
    C_SKUNK,
    C_SKUNKS,
    C_TARGET,
    COUNT,
    CRIB,
    CRIB_SHOWN,
    DEALER,
    DECK,
    DISC,
    GAME_POINTS,
    GO,
    HAND,
    HAND_NO,
    HELD,
    KEPT,
    LAST,
    MTI,
    N_PLAYED,
    NCFG,
    NCOL,
    NDISC,
    NEXT_DEALER,
    PHASE,
    PLAYED_BY,
    PLAYED_CARD,
    SCORES,
    SERIES_START,
    STARTER,
    TO_ACT,
    WINNER,
    card_value,
    is_legal,
    jit,
    peg_points_last,
    playable,
    randbelow,
    seed_generator,
    side_of,
    step_game,
)
from cribenv.scoring import RANK_POINTS

__all__ = [
    "C_DOUBLE_SKUNK", "C_EXACT", "C_FIRST_DEALER", "C_HAND_SIZE", "C_MAX_HANDS", "C_NEED",
    "C_PLAYERS", "C_REWARD", "C_SIDES", "C_SKUNK", "C_SKUNKS", "C_TARGET", "COUNT", "CRIB",
    "CRIB_SHOWN",
    "DEALER", "DECK", "DISC", "GAME_POINTS", "GO", "HAND", "HAND_NO", "HELD", "KEPT", "LAST",
    "MTI", "N_PLAYED", "NCFG", "NCOL", "NDISC", "NEXT_DEALER", "PHASE", "PLAYED_BY",
    "PLAYED_CARD", "RANK_POINTS", "SCORES", "SERIES_START", "STARTER", "TO_ACT", "WINNER",
    "card_value", "is_legal", "jit", "peg_points_last", "playable", "randbelow",
    "seed_generator", "side_of", "step_game",
]
