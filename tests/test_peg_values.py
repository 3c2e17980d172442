"""The learned pegging value of kept hands, and the paired-rollout fit of the card network."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.expert import ExpertAgent
from agents.peg_values import NUM_KEEP_FEATURES, PegValues, keep_features, shipped
from cribenv import cards
from cribenv.game import Game, Rules


def test_keep_features_count_ranks_and_rank_pairs():
    x = keep_features([4, 4, 9, 12])         # 5 5 10 K
    assert x.shape == (NUM_KEEP_FEATURES,)
    assert x[4] == 2 and x[9] == 1 and x[12] == 1 and x[:13].sum() == 4
    assert x[13:-1].sum() == 6                # C(4, 2) pairs of cards
    assert x[-1] == 1
    np.testing.assert_array_equal(x, keep_features([12, 9, 4, 4]))   # order does not matter


def test_values_are_the_linear_model_per_role(tmp_path):
    rng = np.random.default_rng(0)
    coef = rng.normal(size=(2, NUM_KEEP_FEATURES))
    table = PegValues(coef, {"hands": 1})
    keep = cards.parse_many("5H 5S TD KC")
    x = keep_features([c >> 2 for c in keep])
    assert table.value(keep, dealer=True) == pytest.approx(x @ coef[1])
    assert table.value(keep, dealer=False) == pytest.approx(x @ coef[0])
    path = table.save(tmp_path / "t.json")
    again = PegValues.load(path)
    assert again.value(keep, True) == pytest.approx(table.value(keep, True), abs=1e-4)
    assert again.meta == {"hands": 1}


def test_bad_tables_give_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="no peg value table"):
        PegValues.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="is not a peg value table"):
        PegValues.load(bad)
    bad.write_text(json.dumps({"coef": [[1.0, 2.0]]}))
    with pytest.raises(ValueError, match="shape"):
        PegValues.load(bad)


def test_shipped_table_knows_the_dealer_pegs_more():
    table = shipped()
    assert table.meta["hands"] >= 100_000
    keep = cards.parse_many("2C 7D 9H QS")
    # the dealer lays second in the play and pegs about 2.4 points a hand more than the pone
    assert table.value(keep, True) - table.value(keep, False) > 1.0


def test_peg_weight_adds_the_table_to_each_throw():
    game = Game(Rules(), seed=4)
    view = game.view(game.current_player)
    plain = {t: v for v, _, t, _ in ExpertAgent().rank_throws(view)}
    aware = ExpertAgent(peg_weight=0.5)
    table = shipped()
    dealer = view.dealer == view.seat
    for v, _, throw, keep in aware.rank_throws(view):
        assert v == pytest.approx(plain[throw] + 0.5 * table.value(keep, dealer))


def test_fit_recovers_a_linear_model():
    from train.fit_peg_values import fit

    rng = np.random.default_rng(1)
    n = 20_000
    ranks = rng.integers(0, 13, size=(n, 4))
    xs = np.stack([keep_features(r) for r in ranks])
    dealer = rng.random(n) < 0.5
    true = np.zeros((2, NUM_KEEP_FEATURES))
    true[0, 4], true[1, 4], true[0, -1], true[1, -1] = -0.5, 0.3, -1.2, 1.1   # fives; roles
    y = np.einsum("ij,ij->i", xs, true[dealer.astype(int)]) + rng.normal(0, 0.5, n)
    coef, resid = fit(xs, dealer, y, ridge=0.1)
    pred = np.einsum("ij,ij->i", xs, coef[dealer.astype(int)])
    assert np.corrcoef(pred, y)[0, 1] > 0.8
    assert resid == pytest.approx([0.5, 0.5], abs=0.05)


def test_simulated_hands_have_plausible_pegging():
    from train.fit_peg_values import simulate

    xs, dealer, diff = simulate(60, seed=3)
    assert xs.shape == (60, NUM_KEEP_FEATURES) and (xs[:, :13].sum(axis=1) == 4).all()
    assert 0 < dealer.sum() < 60
    assert (np.abs(diff) <= 31).all() and diff[dealer].mean() > diff[~dealer].mean() - 3


pytest.importorskip("sb3_contrib")


def test_rollout_rows_and_fit_on_a_planted_signal(tmp_path):
    from agents.ppo import ExpertPriorActor, PPOAgent, load_policy
    from train.rollouts import export, fit, simulate

    data = simulate(3, seed=2)
    ids = data["ids"]
    assert len(ids) == len(data["prior"]) == len(data["target"]) == len(data["features"])
    assert (np.diff(ids) >= 0).all() and np.bincount(ids).min() >= 2   # >= 2 cards a decision
    # plant a signal the prior misses: every card's value is off by 2 x its rank value feature
    planted = dict(data)
    planted["target"] = data["prior"] + 2.0 * data["features"][:, 4]
    nets, stats = fit(planted, [16], epochs=60, lr=3e-3, batch_decisions=64,
                      log=lambda s: None)
    assert stats["fitted_error"] < 0.5 * stats["prior_error"]
    path = export(nets, tmp_path / "p.safetensors", beta=2.0, card_hidden=[16],
                  meta={"steps": 0})
    policy = load_policy(path)
    assert isinstance(policy, ExpertPriorActor) and policy.beta == pytest.approx(2.0)
    bot = PPOAgent(path)
    game = Game(Rules(target=61), seed=5)
    while not game.is_over:
        view = game.view(game.current_player)
        game.step(bot.choose(view, view.legal))


def test_rollouts_against_another_bot_and_cache_checks(tmp_path):
    from train.rollouts import _cached, simulate

    data = simulate(2, seed=4, opponent="greedy")
    # only the expert's seat is sampled: its play decisions, each with every legal card tried
    assert len(data["ids"]) and np.bincount(data["ids"]).min() >= 2
    made = []
    rows = _cached(tmp_path / "c.npz", 2, lambda: made.append(1) or data)
    assert made == [1] and set(rows) == set(data)
    again = _cached(tmp_path / "c.npz", 2, lambda: made.append(2) or data)
    assert made == [1]   # read back, not made again
    np.testing.assert_array_equal(again["target"], data["target"])
    with pytest.raises(ValueError, match="holds the rollouts of 2 games, not 3"):
        _cached(tmp_path / "c.npz", 3, lambda: data)
