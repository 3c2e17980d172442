"""The expert-prior network: its features, its torch policy, its policy files and a tiny run."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.features import INPUT_SIZE, NUM_FEATURES, augment, card_features  # noqa: E402
from agents.ppo import (  # noqa: E402
    ExpertPriorActor,
    MlpActor,
    PolicyFileError,
    load_policy,
    save_tensors,
)
from cribenv.game import Game, Phase, Rules  # noqa: E402
from cribenv.observation import OBS_SIZE, decode, encode_game  # noqa: E402
from train.config import TrainConfig  # noqa: E402
from train.sb3_trainer import train  # noqa: E402


def decisions(games: int, seed: int = 0, num_players: int = 2):
    """(observation, mask, card) at every decision with a choice, of the expert with the
    learned pegging value in its discards (the bot whose values are the prior)."""
    expert = make_agent("expert", peg_weight=1.0)
    for g in range(games):
        game = Game(Rules(num_players=num_players, target=61), seed=seed + g)
        expert.reset()
        while not game.is_over:
            seat = game.current_player
            legal = game.legal_actions()
            mask = np.zeros(52, np.int8)
            mask[legal] = 1
            obs = encode_game(game, seat)
            card = expert.act({"observation": obs, "action_mask": mask})
            if len(legal) > 1:
                yield obs, mask, card
            game.step(card)


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_prior_ranks_the_bots_card_first(num_players):
    agree = total = 0
    for obs, mask, card in decisions(12, seed=5, num_players=num_players):
        x = augment(obs, mask)
        assert x.shape == (INPUT_SIZE,)
        prior = x[OBS_SIZE:OBS_SIZE + 52]
        feats = x[OBS_SIZE + 52:].reshape(52, NUM_FEATURES)
        illegal = mask == 0
        assert not prior[illegal].any() and not feats[illegal].any()
        legal = np.flatnonzero(mask)
        # the card's own rank is one-hot in every legal row, and the bias column is set
        assert (feats[legal, 16 + (legal >> 2)] == 1).all() and (feats[legal, -1] == 1).all()
        total += 1
        agree += legal[np.argmax(prior[legal])] == card
    assert total > 200
    assert agree / total > 0.995   # ties below a thousandth of a point may break differently


def test_discard_prior_is_the_best_throw_containing_the_card():
    """hand + crib (signed) + the learned pegging value of the keep, best over the throws."""
    game = Game(Rules(), seed=3)
    view = game.view(game.current_player)
    assert view.phase is Phase.DISCARD
    prior, feats = card_features(view, view.legal)
    from agents.peg_values import shipped
    from cribenv.discard import discard_evs

    cards = sorted(view.hand)
    keeps, throws, hand_ev, crib_ev = discard_evs(cards, None, 2)
    dealer = view.dealer == view.seat
    sign = 1.0 if dealer else -1.0
    peg = [shipped().value(k, dealer) for k in keeps]
    for c in cards:
        best = max(h + sign * k + p
                   for t, h, k, p in zip(throws, hand_ev, crib_ev, peg) if c in t)
        assert prior[c] == pytest.approx(best, abs=1e-4)
        assert feats[c, 0] == pytest.approx(best / 10, abs=1e-5)


def test_features_are_a_function_of_the_observation():
    rows = list(decisions(2, seed=11))
    obs, mask, _ = rows[7]
    np.testing.assert_array_equal(augment(obs, mask), augment(obs.copy(), mask.copy()))
    view = decode(obs)
    prior, feats = card_features(view, np.flatnonzero(mask).tolist())
    np.testing.assert_array_equal(feats.ravel(), augment(obs, mask)[OBS_SIZE + 52:])


def _model(beta: float = 3.0, card_arch_override: list[int] | None = None, **kw):
    from train.pool import sb3_pool
    from train.sb3_trainer import make_vec_env, new_model

    config = TrainConfig(policy="expert-prior", n_envs=1, n_steps=32, batch_size=32,
                         heuristics=["random"], eval_games=0, threads=1, beta=beta,
                         card_arch=card_arch_override or [8], net_arch=[16], **kw)
    env = make_vec_env(config, sb3_pool(config, seed=0), seed=0)
    return config, new_model(config, env)


def test_untrained_torch_policy_plays_the_experts_card():
    _, model = _model()
    agree = total = 0
    for obs, mask, card in decisions(4, seed=21):
        x = augment(obs, mask)
        action, _ = model.predict(x, deterministic=True, action_masks=mask.astype(bool))
        total += 1
        agree += int(action) == card
    assert agree / total > 0.99


def test_exported_file_matches_the_torch_logits(tmp_path):
    from train.export import export_policy, policy_tensors

    config, model = _model(beta=1.5)
    with torch.no_grad():   # make the card network non-trivial
        for p in model.policy.mlp_extractor.parameters():
            p.add_(0.3 * torch.randn_like(p))
    path = export_policy(policy_tensors(model, config), tmp_path / "p.safetensors", config,
                         steps=0)
    policy = load_policy(path)
    assert isinstance(policy, ExpertPriorActor)
    agent = make_agent(f"ppo:{path}")
    rows = list(decisions(2, seed=31))[:40]
    x = np.stack([augment(o, m) for o, m, _ in rows])
    with torch.no_grad():
        logits_torch = model.policy.mlp_extractor.forward_actor(torch.as_tensor(x)).numpy()
    np.testing.assert_allclose(policy.logits(x), logits_torch, rtol=1e-4, atol=1e-4)
    for (obs, mask, _), row in zip(rows, logits_torch):
        legal = np.flatnonzero(mask)
        np.testing.assert_allclose(policy.legal_logits(decode(obs), legal.tolist()), row[legal],
                                   rtol=1e-4, atol=1e-4)
        assert agent.act({"observation": obs, "action_mask": mask}) == legal[np.argmax(
            row[legal])]
    with pytest.raises(PolicyFileError, match="not an 'mlp' one"):
        MlpActor.load(path)


def test_bad_prior_files_give_clear_errors(tmp_path):
    layers = {"card.0.weight": np.zeros((4, NUM_FEATURES)), "card.0.bias": np.zeros(4),
              "card.1.weight": np.zeros((1, 4)), "card.1.bias": np.zeros(1),
              "beta": np.ones(1)}
    good = save_tensors(tmp_path / "good.safetensors", layers, {"arch": "expert-prior"})
    assert isinstance(load_policy(good), ExpertPriorActor)
    old = save_tensors(tmp_path / "old.safetensors", layers,
                       {"arch": "expert-prior", "features_version": 0})
    with pytest.raises(PolicyFileError, match="features version 0"):
        load_policy(old)
    wide = dict(layers, **{"card.0.weight": np.zeros((4, NUM_FEATURES + 1))})
    with pytest.raises(PolicyFileError, match="card layer 0"):
        load_policy(save_tensors(tmp_path / "wide.safetensors", wide, {"arch": "expert-prior"}))
    nobeta = {k: v for k, v in layers.items() if k != "beta"}
    with pytest.raises(PolicyFileError, match="no beta"):
        load_policy(save_tensors(tmp_path / "nb.safetensors", nobeta, {"arch": "expert-prior"}))
    with pytest.raises(PolicyFileError, match="unknown network 'cnn'"):
        load_policy(save_tensors(tmp_path / "cnn.safetensors", layers, {"arch": "cnn"}))


def test_config_checks_and_old_fingerprints_are_unchanged():
    with pytest.raises(ValueError, match="bc_games to 0"):
        TrainConfig(policy="expert-prior", bc_games=10)
    with pytest.raises(ValueError, match="policy must be"):
        TrainConfig(policy="transformer")
    with pytest.raises(ValueError, match="beta must be"):
        TrainConfig(policy="expert-prior", beta=0.0)
    # an mlp run's fingerprint ignores the expert-prior settings (runs made before they existed
    # still resume); an expert-prior run's depends on them
    assert TrainConfig(beta=5.0).fingerprint() == TrainConfig().fingerprint()
    a = TrainConfig(policy="expert-prior")
    assert a.fingerprint() != TrainConfig(policy="expert-prior", beta=5.0).fingerprint()


def test_tiny_expert_prior_run_resumes_and_plays(tmp_path):
    run = tmp_path / "run"
    kw = dict(policy="expert-prior", card_arch=[8], net_arch=[16], n_envs=2, n_steps=32,
              batch_size=64, n_epochs=1, threads=1, heuristics=["greedy"], eval_games=2,
              eval_every=64, snapshot_every=64, checkpoint_every=64, pool_size=2)
    train(TrainConfig(total_steps=128, **kw), run, progress=False, log=lambda s: None)
    policy = train(TrainConfig(total_steps=192, **kw), run, resume=True, progress=False,
                   log=lambda s: None)
    meta = load_policy(policy).config
    assert meta["arch"] == "expert-prior" and meta["steps"] == 192
    assert json.loads((run / "config.json").read_text())["policy"] == "expert-prior"
    agent = make_agent(f"ppo:{policy}")
    game = Game(Rules(target=61), seed=2)
    while not game.is_over:
        mask = np.zeros(52, np.int8)
        mask[game.legal_actions()] = 1
        game.step(agent.act({"observation": encode_game(game, game.current_player),
                             "action_mask": mask}))


def test_init_policy_copies_the_card_network(tmp_path):
    from train.export import export_policy, policy_tensors

    config, model = _model(beta=1.5)
    with torch.no_grad():
        for p in model.policy.mlp_extractor.parameters():
            p.add_(0.3 * torch.randn_like(p))
    path = export_policy(policy_tensors(model, config), tmp_path / "p.safetensors", config,
                         steps=0)
    config2, model2 = _model(beta=2.5, init_policy=str(path))
    x = torch.as_tensor(np.stack([augment(o, m) for o, m, _ in list(decisions(1, seed=41))[:20]]))
    with torch.no_grad():
        a = model.policy.mlp_extractor.forward_actor(x)
        b = model2.policy.mlp_extractor.forward_actor(x)
    torch.testing.assert_close(a, b)
    with pytest.raises(PolicyFileError, match="do not match card_arch"):
        _model(init_policy=str(path), card_arch_override=[4])


def test_init_policy_needs_the_expert_prior_network():
    with pytest.raises(ValueError, match="init_policy needs"):
        TrainConfig(init_policy="x.safetensors")
