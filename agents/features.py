"""Per-card decision features for the ``expert-prior`` policy network (numpy only).

The ``expert-prior`` policy (:mod:`train.prior_policy`, played by :mod:`agents.ppo`) scores
each legal card with ``beta * prior + mlp(features)``: ``prior`` is the value the expert bot
gives the card (:meth:`agents.expert.ExpertAgent.play_values` in the play; in the discard, the
value of the best throw that lays this card away together with the cards already laid away),
and the small network learns corrections from the features below. With the network's last
layer at zero the policy plays exactly like the expert, so self-play PPO starts from the
expert's strength and learns where the expert is wrong.

:func:`augment` turns an environment observation into the network's input, the vector

``[observation (OBS_SIZE) | prior (52) | features (52 x NUM_FEATURES)]``

with zeros for illegal cards. Everything is computed from the seat's own observation, so the
features can reveal nothing the observation hides.

Two paths compute the same numbers. :func:`card_features` (what the ``ppo:PATH`` agent plays
with, and :func:`augment`, the SB3 trainer's input) decodes the observation into a
:class:`~cribenv.game.PlayerView` and asks the expert bot: ~0.1 ms a row in Python.
:func:`legal_features`, the batched trainer's input, is compiled (numba,
:mod:`agents._feature_kernels`) and reads the observation rows themselves, 20-40x faster;
:func:`legal_features_reference` is the same batch through :func:`card_features`, the oracle
``tests/test_feature_kernels.py`` compares it with: equal to float rounding (far below
float32), except that of two throws worth *exactly* the same the expert's documented
tie-break chooses, not rounding noise (see :mod:`agents._feature_kernels`). The kernels
compile on the first call (or load from numba's disk cache), so importing this module stays
quick and torch-free.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from agents.expert import ExpertAgent
from cribenv.cards import RANK_VALUES as VALUE
from cribenv.game import Phase, PlayerView
from cribenv.observation import OBS_SIZE, decode

__all__ = ["FEATURES_VERSION", "NUM_FEATURES", "PRIOR_CLIP", "INPUT_SIZE", "augment",
           "best_throws", "card_features", "legal_features", "legal_features_reference"]

FEATURES_VERSION = 2
NUM_FEATURES = 56
PRIOR_CLIP = 50.0   # a card that pegs out is worth 1000+ to the expert; the logits need less
INPUT_SIZE = OBS_SIZE + 52 + 52 * NUM_FEATURES

# column layout of one card's feature row
_SCALARS = 16
_RANK = _SCALARS            # 13: one-hot rank of the card
_KEPT = _RANK + 13          # 13: rank counts / 4 of the cards kept (discard) / left (play)
_OTHER = _KEPT + 13         # 13: discard: rank of the other card thrown; play: last series rank
_BIAS = _OTHER + 13
assert _BIAS + 1 == NUM_FEATURES

@lru_cache(maxsize=1)
def _expert() -> ExpertAgent:
    """The expert whose values are the prior, with the learned pegging value of a keep (built
    on first use: it loads the pegging-value table)."""
    return ExpertAgent(peg_weight=1.0)


def best_throws(view: PlayerView) -> dict[int, tuple[float, float, tuple[int, ...],
                                                       tuple[int, ...]]]:
    """For each card the seat may lay away now: ``(value, hand_ev, throw, keep)`` of the best
    throw (by the prior's value) that lays it away with the cards already laid away."""
    done = set(view.discards)
    best: dict[int, tuple[float, float, tuple[int, ...], tuple[int, ...]]] = {}
    for value, hand_ev, throw, keep in _expert().rank_throws(view):
        if not done.issubset(throw):
            continue
        for c in throw:
            if c not in done and c not in best:
                best[c] = (value, hand_ev, throw, keep)
    return best


def card_features(view: PlayerView, legal: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """``(prior[52], features[52, NUM_FEATURES])`` for the legal cards of ``view``."""
    prior = np.zeros(52, np.float32)
    feats = np.zeros((52, NUM_FEATURES), np.float32)
    opp = view.next_seat()
    target = float(view.target)
    common = np.zeros(_SCALARS, np.float32)
    common[6] = view.phase is Phase.DISCARD
    common[7] = view.phase is Phase.PLAY
    common[8] = view.crib_is_own
    common[9] = view.own_score / target
    common[10] = max(view.other_scores) / target
    common[11] = min(view.points_to_win, 31) / 31.0
    common[12] = view.cards_held[opp] / 6.0
    common[13] = view.said_go[opp]
    common[14] = len(view.discards) / 2.0
    feats[legal, :_SCALARS] = common
    feats[legal, _BIAS] = 1.0
    feats[legal, _RANK + (np.asarray(legal) >> 2)] = 1.0

    if view.phase is Phase.DISCARD:
        best = best_throws(view)
        for c in legal:
            value, hand_ev, throw, keep = best[c]
            row = feats[c]
            prior[c] = value
            row[0] = value / 10.0
            row[1] = hand_ev / 10.0
            row[2] = (value - hand_ev) / 10.0
            row[4] = VALUE[c >> 2] / 10.0
            row[5] = (len(view.hand) - 1) / 6.0
            for k in keep:
                row[_KEPT + (k >> 2)] += 0.25
            for t in throw:
                if t != c:
                    row[_OTHER + (t >> 2)] = 1.0
    else:
        values = _expert().play_values(view, legal)
        left = [c >> 2 for c in view.hand]
        series = view.series_cards
        for c, (value, now) in zip(legal, values):
            row = feats[c]
            value = max(-PRIOR_CLIP, min(PRIOR_CLIP, value))
            # the expert's tie-break (the higher rank, then the lower card id), kept tiny
            prior[c] = value + 1e-3 * (c >> 2) - 1e-5 * c
            after = view.count + VALUE[c >> 2]
            row[0] = value / 10.0
            row[1] = now / 10.0
            row[2] = after / 31.0
            row[3] = after in (15, 31)
            row[4] = VALUE[c >> 2] / 10.0
            row[5] = (len(view.hand) - 1) / 6.0
            for r in left:
                row[_KEPT + r] += 0.25
            row[_KEPT + (c >> 2)] -= 0.25
            if series:
                row[_OTHER + (series[-1] >> 2)] = 1.0
    return prior, feats


def augment(observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The ``expert-prior`` network input for one observation vector and its action mask."""
    out = np.zeros(INPUT_SIZE, np.float32)
    out[:OBS_SIZE] = observation
    legal = np.flatnonzero(mask).tolist()
    if legal:
        view = decode(observation)
        prior, feats = card_features(view, legal)
        out[OBS_SIZE:OBS_SIZE + 52] = prior
        out[OBS_SIZE + 52:] = feats.ravel()
    return out


def _batch(observations: np.ndarray, masks: np.ndarray, slots: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows checked (the legal cards of each fit in ``slots``) and the empty outputs."""
    observations = np.asarray(observations)
    masks = np.asarray(masks)
    if observations.ndim != 2 or observations.shape[1] != OBS_SIZE:
        raise ValueError(f"expected observation rows of shape (n, {OBS_SIZE}), got "
                         f"{observations.shape}")
    if masks.shape != (len(observations), 52):
        raise ValueError(f"expected masks of shape ({len(observations)}, 52), got "
                         f"{masks.shape}")
    masks = masks != 0
    over = np.flatnonzero(masks.sum(axis=1) > slots)
    if over.size:
        i = int(over[0])
        raise ValueError(f"row {i} has {int(masks[i].sum())} legal cards, more than {slots} "
                         f"slots")
    n = len(observations)
    return (observations, masks, np.full((n, slots), -1, np.int64),
            np.zeros((n, slots), np.float32), np.zeros((n, slots, NUM_FEATURES), np.float32))


@lru_cache(maxsize=1)
def _kernel_args() -> tuple:
    """The compiled features' numbers, from their one home: the expert of the prior (its
    knobs and its pegging-value table), this module's feature layout and clip."""
    from agents import _feature_kernels

    expert = _expert()
    table = None if expert._peg_values is None else expert._peg_values.table()
    return _feature_kernels.kernel_args(expert.knobs, table,
                                        (_SCALARS, _RANK, _KEPT, _OTHER, _BIAS), PRIOR_CLIP)


def legal_features(observations: np.ndarray, masks: np.ndarray, slots: int = 6
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`card_features` of the legal cards only, for a batch of observation rows (the
    batched trainer's input): ``(ids (n, slots), prior (n, slots), features (n, slots,
    NUM_FEATURES))``, a row's legal cards in ascending order and the unused slots at id -1 with
    zeros (a seat never has more than 6 legal cards).

    Compiled (:mod:`agents._feature_kernels`, ~4 us a row against ~0.1 ms in Python): the
    arrays of :func:`legal_features_reference`, up to float rounding and exact ties.

    >>> from cribenv.game import Game, Rules
    >>> from cribenv.observation import encode
    >>> view = Game(Rules(), seed=1).view(0)
    >>> mask = np.zeros(52, bool); mask[view.hand] = True
    >>> ids, prior, feats = legal_features(encode(view)[None], mask[None])
    >>> ids[0].tolist() == sorted(view.hand), feats.shape
    (True, (1, 6, 56))
    >>> reference = legal_features_reference(encode(view)[None], mask[None])
    >>> bool(np.allclose(prior, reference[1], rtol=0, atol=1e-5))
    True
    """
    from agents import _feature_kernels

    obs, masks, ids, prior, feats = _batch(observations, masks, slots)
    obs = np.ascontiguousarray(obs, np.float32)
    err = np.zeros(1, np.int64)
    bad = _feature_kernels.legal_rows(obs, np.ascontiguousarray(masks), ids, prior, feats,
                                      *_kernel_args(), err)
    if bad >= 0:
        what = ("not an observation vector" if err[0] == _feature_kernels.E_BAD_ROW
                else "a legal card is not in the hand")
        raise ValueError(f"row {bad}: {what}")
    return ids, prior, feats


def legal_features_reference(observations: np.ndarray, masks: np.ndarray, slots: int = 6
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`legal_features` in Python, row by row: each row decoded to a
    :class:`~cribenv.game.PlayerView` and given to :func:`card_features` (the oracle of the
    compiled path; ~0.1 ms a row)."""
    obs, masks, ids, prior, feats = _batch(observations, masks, slots)
    for i in range(len(obs)):
        legal = np.flatnonzero(masks[i]).tolist()
        if not legal:
            continue
        p, f = card_features(decode(obs[i]), legal)
        k = len(legal)
        ids[i, :k] = legal
        prior[i, :k] = p[legal]
        feats[i, :k] = f[legal]
    return ids, prior, feats
