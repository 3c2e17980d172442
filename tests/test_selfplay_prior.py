"""The self-play trainer's ``expert-prior`` network: it starts as the policy file it is given
(the shipped agent), its update path equals the dense network, its features are the ones the
``ppo:PATH`` agent computes, its expert opponent plays the expert's cards, and bad settings
are refused with clear errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.expert import ExpertAgent  # noqa: E402
from agents.features import (  # noqa: E402
    PRIOR_CLIP,
    legal_features,
    legal_features_reference,
)
from agents.ppo import (  # noqa: E402
    SHIPPED_POLICY,
    ExpertPriorActor,
    PolicyFileError,
    PPOAgent,
    load_policy,
    save_tensors,
)
from cribenv.cli import main  # noqa: E402
from cribenv.game import Game, Phase, Rules  # noqa: E402
from cribenv.observation import encode  # noqa: E402
from cribenv.vector import HIDDEN_SIZE  # noqa: E402
from train import networks, selfplay_rollout  # noqa: E402
from train.export import export_policy  # noqa: E402
from train.networks import CardNetwork, CardRows, export_arrays, make_network  # noqa: E402
from train.selfplay import SelfPlayConfig, train  # noqa: E402

PRIOR = dict(policy="expert-prior", net_arch=[16], n_games=8, n_steps=16, minibatch_size=64,
             n_epochs=1, threads=1, heuristics=["random"], eval_games=0, snapshot_every=128,
             checkpoint_every=256, eval_every=512, pool_size=3)


def _decisions(players: int, games: int = 4, per_game: int = 30):
    """(views, observations, masks) of the seats to act in random games, every phase."""
    views, obs, masks = [], [], []
    for seed in range(games):
        game, rng = Game(Rules(num_players=players), seed=seed), np.random.default_rng(seed)
        while not game.is_over and len(obs) < per_game * (seed + 1):
            view = game.view(game.current_player)
            mask = np.zeros(52, bool)
            mask[game.legal_actions()] = True
            views.append(view)
            obs.append(encode(view))
            masks.append(mask)
            game.step(int(rng.choice(game.legal_actions())))
    return views, np.stack(obs), np.stack(masks)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_starts_as_the_shipped_agent_and_exports_it_back(tmp_path, players):
    """From ``init_policy='shipped'`` the network's logits of the legal cards are the numpy
    agent's (``PPOAgent('shipped')``), and the exported file holds the same network."""
    cfg = SelfPlayConfig(**{**PRIOR, "num_players": players, "init_policy": "shipped"})
    net = make_network(cfg)
    net.load_policy_file(cfg.init_policy)
    views, obs, masks = _decisions(players)
    assert any(v.phase is Phase.DISCARD for v in views) and any(
        v.phase is Phase.PLAY for v in views)
    cards = CardRows.of(obs, masks)
    with torch.no_grad():
        logits = net.logits(torch.from_numpy(obs), cards=cards.to_torch("cpu")).numpy()
    shipped = PPOAgent(SHIPPED_POLICY).policy
    for i, (view, mask) in enumerate(zip(views, masks)):
        legal = np.flatnonzero(mask).tolist()
        np.testing.assert_allclose(logits[i, legal], shipped.legal_logits(view, legal),
                                   rtol=1e-5, atol=1e-4)
    path = export_policy(export_arrays(net), tmp_path / "p.safetensors", cfg, steps=3)
    exported = load_policy(path)
    assert isinstance(exported, ExpertPriorActor) and exported.beta == pytest.approx(
        shipped.beta)
    for (w, b), (w0, b0) in zip(exported._forward, shipped._forward):
        np.testing.assert_allclose(w, w0, rtol=1e-6)
        np.testing.assert_allclose(b, b0, rtol=1e-6)
    frozen = selfplay_rollout.frozen_actor(path)(obs, cards)
    np.testing.assert_allclose(np.where(masks, frozen, 0), np.where(masks, logits, 0),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("players", [2, 4])
def test_the_card_network_reads_and_writes_policy_files(tmp_path, players):
    """The torch :class:`CardNetwork` of every trainer read from the shipped file gives the
    numpy agent's logits (``ExpertPriorActor.card_logits``) on real positions, with its own
    beta or the file's; written back and read again, it is the same network exactly."""
    shipped = load_policy(SHIPPED_POLICY)
    card = CardNetwork.from_policy_file(SHIPPED_POLICY)
    _, obs, masks = _decisions(players)
    cards = CardRows.of(obs, masks)
    legal = cards.ids >= 0
    want = shipped.card_logits(cards.prior, cards.feats)
    with torch.no_grad():
        t = cards.to_torch("cpu")
        for beta in (None, shipped.beta):
            got = card(t.prior, t.feats, beta).numpy()
            np.testing.assert_allclose(got[legal], want[legal], rtol=1e-5, atol=1e-4)
    path = save_tensors(tmp_path / "card.safetensors", card.arrays(),
                        {"arch": "expert-prior", **shipped.config})
    again = CardNetwork.from_policy_file(path)
    for (name, a), b in zip(card.state_dict().items(), again.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)
    for (w, b), (w0, b0) in zip(load_policy(path)._forward, shipped._forward):
        np.testing.assert_array_equal(w, w0)
        np.testing.assert_array_equal(b, b0)


def test_checkpoints_with_the_card_networks_old_names_load():
    """Self-play checkpoints written before :class:`CardNetwork` (``card_net.0.*`` for the
    hidden layers, ``card_net.1.*`` for the last, ``log_beta``) load into the network."""
    cfg = SelfPlayConfig(**{**PRIOR, "card_arch": [8, 8]})
    torch.manual_seed(1)
    old = {k.replace("card.net.", "card_net.0.").replace("card.out.", "card_net.1.")
           .replace("card.log_beta", "log_beta"): v
           for k, v in make_network(cfg).state_dict().items()}
    assert "card_net.1.weight" in old and "log_beta" in old
    net = make_network(cfg)
    net.load_state_dict(old)
    for a, b in zip(old.values(), net.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("privileged", [False, True])
def test_update_path_equals_the_dense_network(privileged):
    """``logits_and_value`` on sparse rows: the same logits, values and gradients as
    ``logits`` and ``value`` on the dense observations (with ``privileged_critic``, the
    critic's rows carry hidden cards after the observation)."""
    cfg = SelfPlayConfig(**{**PRIOR, "card_arch": [8, 8], "privileged_critic": privileged})
    torch.manual_seed(0)
    net = make_network(cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn_like(p))
    _, obs, masks = _decisions(2)
    cards = CardRows.of(obs, masks).to_torch("cpu")
    x = torch.from_numpy(obs)
    if privileged:
        x = torch.cat([x, (torch.rand(len(x), HIDDEN_SIZE) < 0.05).float()], 1)
    weights = torch.randn(len(x), 52)

    def grads(loss):
        net.zero_grad()
        loss.backward()
        return [p.grad.clone() for p in net.parameters()]

    logits, value = net.logits_and_value(networks.sparse_rows(x), cards)
    sparse = grads((logits * weights).sum() + value.square().sum())
    dense_logits, dense_value = net.logits(x, cards=cards), net.value(x)
    dense = grads((dense_logits * weights).sum() + dense_value.square().sum())
    torch.testing.assert_close(logits, dense_logits)
    torch.testing.assert_close(value, dense_value, rtol=1e-5, atol=1e-4)
    for (name, _), g, h in zip(net.named_parameters(), sparse, dense):
        torch.testing.assert_close(g, h, rtol=1e-4, atol=1e-3, msg=name)
    # cards outside a row's legal ones get logit 0 and no gradient; masks remove them
    assert (dense_logits.detach()[~torch.from_numpy(masks)] == 0).all()


def test_legal_features_are_the_agents_features_in_slots():
    """The batch of the Python path is :func:`card_features` (the ``ppo:PATH`` agent's) in
    slots, bit for bit; the compiled batch (tests/test_feature_kernels.py) equals it."""
    from agents.features import card_features

    views, obs, masks = _decisions(2)
    ids, prior, feats = legal_features_reference(obs, masks)
    for i, (view, mask) in enumerate(zip(views, masks)):
        legal = np.flatnonzero(mask).tolist()
        p, f = card_features(view, legal)
        assert ids[i, :len(legal)].tolist() == legal and (ids[i, len(legal):] == -1).all()
        np.testing.assert_array_equal(prior[i, :len(legal)], p[legal])
        np.testing.assert_array_equal(feats[i, :len(legal)], f[legal])
        assert not feats[i, len(legal):].any()
    fast = legal_features(obs, masks)
    np.testing.assert_array_equal(fast[0], ids)
    np.testing.assert_allclose(fast[1], prior, rtol=0, atol=1e-5)
    np.testing.assert_allclose(fast[2], feats, rtol=0, atol=1e-5)
    for batch in (legal_features, legal_features_reference):
        with pytest.raises(ValueError, match="row 0 has 6 legal cards, more than 4 slots"):
            batch(obs[:1], masks[:1], slots=4)


def test_card_rows_are_the_compiled_features():
    """The trainer's :class:`CardRows` are :func:`legal_features` (compiled), in one call."""
    _, obs, masks = _decisions(3, games=2)
    rows = CardRows.of(obs, masks)
    for a, b in zip(rows.columns().values(), legal_features(obs, masks)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_expert_opponent_plays_the_prior_experts_cards(players):
    """``expert_cards`` is the expert of the features (``ExpertAgent(peg_weight=1.0)``): the
    same card in the play (where no value reaches the prior's clip), and in the discard a card
    of a throw the expert values as highly as its own best."""
    expert = ExpertAgent(peg_weight=1.0)
    views, obs, masks = _decisions(players, games=5)
    cards = CardRows.of(obs, masks)
    chosen = selfplay_rollout.expert_cards(cards)
    compared = 0
    for i, view in enumerate(views):
        legal = np.flatnonzero(masks[i]).tolist()
        if view.phase is Phase.PLAY:
            values = [v for v, _ in expert.play_values(view, legal)]
            if max(abs(v) for v in values) < PRIOR_CLIP:
                assert chosen[i] == expert.choose(view, legal)
                compared += 1
        else:
            ranked = expert.rank_throws(view)
            best = next(v for v, _, throw, _ in ranked if set(view.discards) <= set(throw))
            mine = max(v for v, _, throw, _ in ranked
                       if chosen[i] in throw and set(view.discards) <= set(throw))
            assert mine == pytest.approx(best)
            compared += 1
    assert compared >= len(views) - 3


def test_value_warmup_trains_the_critic_only(tmp_path):
    """During ``value_warmup`` the policy stays exactly the file it started from."""
    policy = train(SelfPlayConfig(**{**PRIOR, "init_policy": "shipped", "value_warmup": 10**6,
                                     "total_steps": 256}),
                   tmp_path / "run", progress=False, log=lambda s: None)
    start, end = load_policy(SHIPPED_POLICY), load_policy(policy)
    assert end.beta == start.beta
    for (w, b), (w0, b0) in zip(end._forward, start._forward):
        np.testing.assert_array_equal(w, w0)
        np.testing.assert_array_equal(b, b0)
    rows = (tmp_path / "run" / "logs" / "progress.csv").read_text().splitlines()[1:]
    assert rows and all(float(r.split(",")[3]) == 0.0 for r in rows)   # approx_kl


@pytest.mark.parametrize("players", [2, 4])
def test_tiny_run_against_the_expert_trains_and_plays(tmp_path, players):
    run = tmp_path / "run"
    policy = train(SelfPlayConfig(**{**PRIOR, "num_players": players, "expert_share": 1.0,
                                     "self_play_share": 0.0, "total_steps": 512, "target": 61,
                                     "learning_rate": 1e-2, "eval_games": 2}),
                   run, progress=False, log=lambda s: None)
    import csv

    with (run / "logs" / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sum(int(float(r["games_vs_expert"])) for r in rows) > 0
    assert all(int(float(r["games_vs_pool"])) == 0 for r in rows)
    assert max(float(r["approx_kl"]) for r in rows) > 0      # the policy moved
    loaded = load_policy(policy)
    assert isinstance(loaded, ExpertPriorActor) and loaded.config["trainer"] == "selfplay"
    agent = PPOAgent(policy)
    game = Game(Rules(num_players=players, target=61), seed=2)
    while not game.is_over:
        game.step(agent.choose(game.view(game.current_player), game.legal_actions()))


def test_bad_settings_are_refused_naming_them(tmp_path, capsys):
    with pytest.raises(ValueError, match="init_policy needs policy 'expert-prior'"):
        SelfPlayConfig(init_policy="shipped")
    with pytest.raises(ValueError, match="expert_share needs policy 'expert-prior'"):
        SelfPlayConfig(policy="keeps", expert_share=0.5)
    with pytest.raises(ValueError, match="beta must be > 0, got -1"):
        SelfPlayConfig(policy="expert-prior", beta=-1.0)
    with pytest.raises(ValueError, match=r"card_arch must be .* got \[\]"):
        SelfPlayConfig(policy="expert-prior", card_arch=[])
    with pytest.raises(ValueError, match="expert_share must be in"):
        SelfPlayConfig(policy="expert-prior", expert_share=1.5)
    net = make_network(SelfPlayConfig(policy="expert-prior", card_arch=[32]))
    with pytest.raises(PolicyFileError, match=r"card layers .* do not match card_arch \[32\]"):
        net.load_policy_file("shipped")
    mlp = export_policy(export_arrays(make_network(SelfPlayConfig(policy="mlp", net_arch=[8]))),
                        tmp_path / "mlp.safetensors", SelfPlayConfig(policy="mlp"), 0)
    with pytest.raises(PolicyFileError, match="is not an expert-prior policy file"):
        make_network(SelfPlayConfig(policy="expert-prior")).load_policy_file(mlp)
    status = main(["train", "--run-dir", str(tmp_path / "r"), "--policy", "keeps",
                   "--init-policy", "shipped", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "init_policy needs policy 'expert-prior'" in err
    assert "Traceback" not in err and not (tmp_path / "r" / "config.json").exists()
