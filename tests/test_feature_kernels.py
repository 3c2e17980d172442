"""The compiled ``expert-prior`` features (:func:`agents.features.legal_features`, the kernels of
:mod:`agents._feature_kernels`) against the Python path they replace
(:func:`agents.features.legal_features_reference`: each row decoded to a view and given to the
expert bot), on rows of real games: random and expert play, 2, 3 and 4 players, 121 and 61
points, scores near the target (the expert's endgame and peg-out terms), and a property test.

The ids are equal and the floats equal to 1e-5 (float32 features). One thing is compared with a
rule rather than bit for bit: when two throws are worth *exactly* the same to the expert (a Jack
kept or thrown to the seat's own crib: its nobs counts either way), the Python ranking decides
between them by rounding noise (numpy's BLAS sums identical rows of the crib table to results a
few ulps apart, by their place in the matrix), while the kernels apply the expert's documented
tie-break (the higher kept-hand mean, then the lower cards thrown). The oracle here is therefore
the Python path with that tie-break applied to its own numbers (:func:`_tie_ruled`);
:func:`test_exact_ties_follow_the_documented_tie_break` shows such a tie.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import _feature_kernels, features
from agents.expert import ExpertAgent
from agents.features import PRIOR_CLIP, legal_features, legal_features_reference
from cribenv.game import Deal, Game, Phase, Rules
from cribenv.observation import decode, encode
from cribenv.vector import VectorGame

TIE = _feature_kernels.TIE


def _tie_ruled_best_throws(view):
    """:func:`agents.features.best_throws` with the expert's tie-break applied exactly: among
    the throws that lay a card away, those whose values differ by rounding only (``TIE``) are
    one value, and the higher ``hand_ev``, then the lower cards thrown, win."""
    done = set(view.discards)
    ranked = features._expert().rank_throws(view)
    best = {}
    for c in view.hand:
        options = [o for o in ranked if done <= set(o[2]) and c in o[2]]
        top = max(o[0] for o in options)
        best[c] = min((o for o in options if top - o[0] <= TIE), key=lambda o: (-o[1], o[2]))
    return best


def _tie_ruled(obs, masks):
    """:func:`legal_features_reference` with :func:`_tie_ruled_best_throws`."""
    plain = features.best_throws
    features.best_throws = _tie_ruled_best_throws
    try:
        return legal_features_reference(obs, masks)
    finally:
        features.best_throws = plain


def _compare(obs: np.ndarray, masks: np.ndarray) -> int:
    """Assert the compiled features equal the oracle's on every row; return how many rows the
    plain Python path resolved an exact tie the other way (each a discard row)."""
    ids, prior, feats = legal_features(obs, masks)
    want_ids, want_prior, want_feats = _tie_ruled(obs, masks)
    assert ids.dtype == want_ids.dtype and prior.dtype == want_prior.dtype
    assert feats.dtype == want_feats.dtype and feats.shape == want_feats.shape
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(prior, want_prior, rtol=0, atol=1e-5)
    np.testing.assert_allclose(feats, want_feats, rtol=0, atol=1e-5)
    _, plain_prior, plain_feats = legal_features_reference(obs, masks)
    np.testing.assert_allclose(prior, plain_prior, rtol=0, atol=1e-5)   # tied values
    differ = np.flatnonzero(np.abs(feats - plain_feats).max(axis=(1, 2)) > 1e-5)
    for i in differ:
        assert decode(obs[i]).phase is Phase.DISCARD
    return len(differ)


def _random_rows(players: int, target: int, games: int = 32, steps: int = 120):
    """Observation rows and masks of the seats to act in random batched play (auto-reset:
    every phase, early and late in games)."""
    vg = VectorGame(Rules(num_players=players, target=target), seeds=np.arange(games),
                    auto_reset=True, seed_stream=players * 1000 + target)
    obs, masks = [], []
    for t in range(steps):
        obs.append(vg.observe().copy())
        masks.append(vg.legal_mask().copy())
        vg.step(vg.random_actions(np.random.default_rng(t)))
    return np.concatenate(obs), np.concatenate(masks)


def _expert_rows(players: int, target: int, games: int):
    """Every decision of expert-against-expert games (the prior's expert in seat 0)."""
    obs, masks = [], []
    for seed in range(games):
        game = Game(Rules(num_players=players, target=target), seed=seed)
        bots = [ExpertAgent(peg_weight=1.0)] + [ExpertAgent() for _ in range(players - 1)]
        while not game.is_over:
            seat = game.current_player
            view, legal = game.view(seat), game.legal_actions()
            mask = np.zeros(52, bool)
            mask[legal] = True
            obs.append(encode(view))
            masks.append(mask)
            game.step(bots[seat].choose(view, legal))
    return np.stack(obs), np.stack(masks)


def _near_the_target(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The rows with every side's score set a few points short of the target (the expert's
    count-out discard, its defence, cards that peg out)."""
    out = np.empty_like(obs)
    for i, row in enumerate(obs):
        view = decode(row)
        scores = [max(0, view.target - int(rng.integers(1, 24))) for _ in view.scores]
        out[i] = encode(dataclasses.replace(view, scores=scores))
    return out


@pytest.mark.parametrize("target", [121, 61])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_play_rows(players, target):
    obs, masks = _random_rows(players, target)
    assert masks.any(axis=1).all()
    ties = _compare(obs, masks)
    assert ties <= len(obs) // 200       # exact ties are rare


@pytest.mark.parametrize("players", [2, 3, 4])
def test_expert_play_rows(players):
    obs, masks = _expert_rows(players, 121, games=3 if players == 2 else 2)
    obs61, masks61 = _expert_rows(players, 61, games=2)
    _compare(np.concatenate([obs, obs61]), np.concatenate([masks, masks61]))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_rows_near_the_target(players):
    """Scores a few points short of 121 or 61: the count-out term of the discard (the seat
    counts first), replies that win for an opponent, cards that peg out (clipped priors)."""
    rng = np.random.default_rng(players)
    clipped = 0
    for target in (121, 61):
        obs, masks = _random_rows(players, target, games=16, steps=60)
        obs = _near_the_target(obs, rng)
        _compare(obs, masks)
        _, prior, _ = legal_features(obs, masks)
        clipped += int((np.abs(prior) >= PRIOR_CLIP - 1).sum())
    assert clipped > 0          # some card pegs out: its value (1000 + points) is clipped


def test_exact_ties_follow_the_documented_tie_break():
    """The dealer holds 2C 2D 3C JD JS QC: keeping either Jack is worth exactly the same (its
    nobs counts in the hand or in the crib, both the dealer's). The kernels throw the other
    Jack with the Queen so that the hand keeps the higher mean (the Jack of the suit with more
    unseen cards), as the expert's docstring says; whatever the Python path ranks first there
    is decided by rounding."""
    deal = Deal(dealer=0, hands=["2C 2D 3C JD JS QC", "AH 4H 6D 7S 9H KD"], starter="5D")
    view = Game(Rules(), seed=0, deals=[deal]).view(0)
    ranked = features._expert().rank_throws(view)
    by_throw = {o[2]: o for o in ranked}
    jd_qc, js_qc = by_throw[(41, 44)], by_throw[(43, 44)]     # throws JD QC, JS QC
    assert abs(jd_qc[0] - js_qc[0]) <= TIE and jd_qc[1] > js_qc[1]
    mask = np.zeros(52, bool)
    mask[view.hand] = True
    ids, prior, feats = legal_features(encode(view)[None], mask[None])
    q = ids[0].tolist().index(44)                              # the Queen: thrown with JD
    assert feats[0, q, 1] == pytest.approx(jd_qc[1] / 10, abs=1e-6)
    _compare(encode(view)[None], mask[None])


def test_knobs_and_tables_come_from_the_prior_expert():
    knobs, peg_table, cols, clip = features._kernel_args()[:4]
    expert = ExpertAgent(peg_weight=1.0)
    k = expert.knobs
    assert knobs.tolist() == [k.counter_weight, k.defend_weight, k.partner_weight,
                              k.endgame_need, k.endgame_weight, k.peg_allowance,
                              k.crib_weight_3p, k.reply_weight_multi, k.low_keep_weight,
                              k.peg_weight]
    assert k.peg_weight == 1.0 and clip == PRIOR_CLIP
    assert cols.tolist() == [features._SCALARS, features._RANK, features._KEPT,
                             features._OTHER, features._BIAS]
    pv = expert._peg_values
    for keep in ([0, 16, 17, 40], [4, 9, 30, 51], [48, 49, 50, 51]):
        key = 0
        for c in sorted(keep):
            key = key * 13 + (c >> 2)
        for dealer in (False, True):
            assert peg_table[int(dealer), key] == pv.value(keep, dealer)


def test_bad_rows_are_refused():
    obs, masks = _random_rows(2, 121, games=2, steps=4)
    with pytest.raises(ValueError, match="row 0 has 6 legal cards, more than 4 slots"):
        legal_features(obs[:1], masks[:1], slots=4)
    with pytest.raises(ValueError, match="observation rows of shape"):
        legal_features(obs[:, :-1], masks)
    wrong = masks.copy()
    wrong[0] = False
    wrong[0, [c for c in range(52) if c not in decode(obs[0]).hand][0]] = True
    with pytest.raises(ValueError, match="row 0: a legal card is not in the hand"):
        legal_features(obs, wrong)
    with pytest.raises(ValueError, match="row 1: not an observation vector"):
        legal_features(np.concatenate([obs[:1], np.zeros_like(obs[:1])]), masks[:2])
    ids, prior, feats = legal_features(obs, np.zeros_like(masks))        # nothing legal
    assert (ids == -1).all() and not prior.any() and not feats.any()
    empty = legal_features(obs[:0], masks[:0])
    assert [x.shape for x in empty] == [(0, 6), (0, 6), (0, 6, features.NUM_FEATURES)]


def test_importing_the_features_compiles_nothing():
    code = ("import sys, agents.features; "
            "assert 'agents._feature_kernels' not in sys.modules; "
            "assert 'torch' not in sys.modules; "
            "assert agents.features._kernel_args.cache_info().currsize == 0")
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4]),
                  target=st.sampled_from([121, 61]), moves=st.integers(0, 60),
                  short=st.lists(st.integers(0, 40), min_size=3, max_size=3))
def test_any_position(seed, players, target, moves, short):
    """A random position of a seeded game (``moves`` random legal moves in), with each side's
    score ``short`` points short of the target or as played."""
    game = Game(Rules(num_players=players, target=target), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))
    if game.is_over:
        return
    view = game.view(game.current_player)
    scores = [max(s, target - d) if d else s for s, d in zip(view.scores, short)]
    scores = [min(s, target - 1) for s in scores]
    view = dataclasses.replace(view, scores=scores)
    mask = np.zeros(52, bool)
    mask[game.legal_actions()] = True
    _compare(encode(view)[None], mask[None])
