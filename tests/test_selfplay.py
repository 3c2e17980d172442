"""Self-play masked PPO (train/selfplay.py): credit assignment by hand, export round trip, a
short run that plays, SIGKILL and an exact resume."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from killed_run import kill_after_checkpoint, train_command  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.ppo import load_policy  # noqa: E402
from cribenv.game import Game, Rules  # noqa: E402
from cribenv.observation import OBS_SIZE, OFFSETS, encode  # noqa: E402
from cribenv.vector import HIDDEN_SIZE  # noqa: E402
from train import networks, pool, selfplay, selfplay_config, selfplay_rollout  # noqa: E402
from train.checkpoints import CheckpointError  # noqa: E402
from train.export import export_policy  # noqa: E402
from train.networks import export_arrays, make_network  # noqa: E402
from train.selfplay import SelfPlayConfig, train  # noqa: E402
from train.selfplay_rollout import SeatRollout  # noqa: E402

TINY = dict(n_games=8, n_steps=16, minibatch_size=64, n_epochs=1, net_arch=[16], card_dim=4,
            threads=1, heuristics=["random"], eval_games=0, snapshot_every=128,
            checkpoint_every=256, eval_every=512, pool_size=3)


def tiny(**kw) -> SelfPlayConfig:
    return SelfPlayConfig(**{**TINY, "total_steps": 512, **kw})


@pytest.mark.parametrize("module", [selfplay, selfplay_config, networks,
                                    selfplay_rollout, pool])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def _decide(r: SeatRollout, row: int, value: float, action: int = 0):
    return r.decide(np.array([row]), np.full((1, 1), row, np.float32),
                    np.ones((1, 52), bool), np.array([action]), np.array([-0.5]),
                    np.array([value]))


def _script(r: SeatRollout) -> None:
    """Game of 2 seats (rows 0, 1): decisions and points in between, worked out by hand."""
    _decide(r, 0, 1.0)                      # idx 0
    r.earn(np.array([0, 1]), np.array([1.0, -1.0]))   # before seat 1's first decision: dropped
    _decide(r, 1, 0.5)                      # idx 1
    r.earn(np.array([0, 1]), np.array([2.0, -2.0]))
    _decide(r, 0, 2.0)                      # idx 2: closes idx 0 with 1 + 2 = 3
    r.earn(np.array([0, 1]), np.array([0.5, -0.5]))
    _decide(r, 1, -1.0)                     # idx 3: closes idx 1 with -2 - 0.5 = -2.5
    r.earn(np.array([0, 1]), np.array([4.0, -4.0]))


def test_credit_and_gae_per_seat_by_hand():
    r = SeatRollout(rows=2, obs_size=1)
    _script(r)
    r.end(np.array([0, 1]))          # closes idx 2 (0.5 + 4) and idx 3 (-4), terminal
    b = r.take(gamma=0.9, lam=0.8)
    # delta0 = 3 + .9*2 - 1 = 3.8, delta2 = 4.5 - 2 = 2.5 -> adv0 = 3.8 + .72*2.5 = 5.6
    # delta1 = -2.5 + .9*(-1) - .5 = -3.9, delta3 = -4 + 1 = -3 -> adv1 = -3.9 - .72*3 = -6.06
    assert b["row"].tolist() == [0, 1, 0, 1]
    np.testing.assert_allclose(b["advantages"], [5.6, -6.06, 2.5, -3.0])
    np.testing.assert_allclose(b["returns"], [6.6, -5.56, 4.5, -4.0])
    assert r.carried() == 0


def test_open_decisions_carry_into_the_next_rollout():
    r = SeatRollout(rows=2, obs_size=1)
    _script(r)
    first = r.take(gamma=0.9, lam=0.8)     # idx 2 and 3 are still open: no reward known
    np.testing.assert_allclose(first["advantages"], [3.8, -3.9])   # truncated: bootstrap only
    assert r.carried() == 2
    r.end(np.array([0, 1]))                # the points earned before the cut still count
    second = r.take(gamma=0.9, lam=0.8)
    np.testing.assert_allclose(second["advantages"], [2.5, -3.0])
    assert second["obs"][:, 0].tolist() == [0.0, 1.0] and second["logprob"].tolist() == [-.5, -.5]


@pytest.mark.parametrize("players,reward", [(2, "points"), (2, "win"), (3, "points"),
                                            (4, "win"), (4, "points")])
def test_each_seat_is_credited_its_sides_result(players, reward):
    """Random games through Games.step: with gamma = lambda = 1 and zero values, the return
    of a seat's first decision is everything credited to it until the end of the game: its
    side's final point differential (points) or +/- the game points (win, skunks)."""
    cfg = SelfPlayConfig(num_players=players, n_games=6, reward=reward, skunks=True,
                         self_play_share=1.0)
    snapshots = selfplay_rollout.selfplay_pool(cfg)
    games = selfplay_rollout.Games(cfg, snapshots, np.random.default_rng(0), 0)
    finals: dict[int, tuple] = {}
    restart = games.vg.reset_games

    def capture(rows, seeds):
        for i in np.asarray(rows).tolist():
            vg = games.vg
            finals.setdefault(i, (vg.scores[i].copy(), int(vg.winner[i]),
                                  int(vg.game_points[i])))
        restart(rows, seeds)

    games.vg.reset_games = capture
    rollout = SeatRollout(cfg.n_games * players)
    rng = np.random.default_rng(1)
    while len(finals) < cfg.n_games:
        vg = games.vg
        rows = np.arange(cfg.n_games) * players + vg.to_act
        actions = vg.random_actions(rng)
        n = cfg.n_games
        rollout.decide(rows, vg.observe(), vg.legal_mask(), actions, np.zeros(n), np.zeros(n))
        games.step(actions, rollout)
    batch = rollout.take(gamma=1.0, lam=1.0)
    first = {}
    for row, ret in zip(batch["row"].tolist(), batch["returns"].tolist()):
        first.setdefault(row, ret)
    sides = games.sides
    for g, (scores, winner, points) in finals.items():
        for seat in range(players):
            own = scores[sides[seat]]
            if reward == "points":
                expected = own - (scores.sum() - own) / (len(scores) - 1)
            else:
                expected = points if sides[seat] == winner else -points / (len(scores) - 1)
            assert first[g * players + seat] == pytest.approx(expected, abs=1e-4)


def _random_observations(players: int, games: int = 6, per_game: int = 40) -> np.ndarray:
    """Observations of the seats to act in random games (every phase, discards included)."""
    obs = []
    for seed in range(games):
        game, rng = Game(Rules(num_players=players), seed=seed), np.random.default_rng(seed)
        while not game.is_over and len(obs) < per_game * (seed + 1):
            obs.append(encode(game.view(game.current_player)))
            game.step(int(rng.choice(game.legal_actions())))
    return np.stack(obs)


def _perturbed_network(cfg: SelfPlayConfig):
    torch.manual_seed(0)
    net = make_network(cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return net


def _head(head: str) -> dict:
    """The settings of a network named in a test: ``keeps+values`` is ``keeps`` with the
    throw values (train/throw_values.py)."""
    if head == "keeps+values":
        return {"policy": "keeps", "throw_values": True, "value_arch": [16, 8]}
    return {"policy": head}


@pytest.mark.parametrize("head,players", [("mlp", 2), ("cards", 2), ("keeps", 2),
                                          ("keeps", 3), ("keeps", 4), ("keeps+values", 2),
                                          ("keeps+values", 3), ("keeps+values", 4)])
def test_export_round_trip_torch_equals_numpy(tmp_path, head, players):
    cfg = SelfPlayConfig(**_head(head), net_arch=[32, 16], card_dim=8, keep_arch=[16],
                         keep_ctx=8, num_players=players)
    net = _perturbed_network(cfg)
    path = export_policy(export_arrays(net), tmp_path / "p.safetensors", cfg, steps=7)
    policy = load_policy(path)
    x = _random_observations(players)
    assert (x[:, 528] == 1).sum() >= 20     # discard decisions are among them
    with torch.no_grad():
        expected = net.logits(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(policy.logits(x), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(policy.logits(x[5]), expected[5], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(selfplay_rollout.frozen_actor(path)(x), expected, rtol=1e-5,
                               atol=1e-5)
    assert policy.config["head"] == cfg.policy and policy.config["steps"] == 7
    assert policy.arch == ("keeps" if head.startswith("keeps") else "mlp")
    assert bool(getattr(policy, "value_layers", [])) == (head == "keeps+values")
    if policy.arch == "keeps":   # the throw head as the file holds it, read-only
        arrays = export_arrays(net)
        assert np.array_equal(policy.keep_ctx[0], arrays["keep.ctx.weight"])
        assert np.array_equal(policy.keep_layers[-1][1], arrays[f"keep.{len(cfg.keep_arch)}.bias"])
        assert not policy.keep_ctx[0].flags.writeable


@pytest.mark.parametrize("head,players,privileged", [
    ("mlp", 2, False), ("cards", 2, False), ("keeps", 2, False), ("keeps", 4, False),
    ("mlp", 2, True), ("keeps", 3, True), ("keeps+values", 2, False)])
def test_update_sparse_path_equals_the_dense_network(head, players, privileged):
    """The update computes the first layers from the observations' non-zero entries
    (``sparse_rows`` + ``logits_and_value``, with its own backward): the same logits, values
    and gradients as the dense ``logits`` / ``value``. With ``privileged_critic`` the rows
    carry the hidden cards after the observation: the critic reads them, the actor does not."""
    cfg = SelfPlayConfig(**_head(head), net_arch=[32, 16], card_dim=8, keep_arch=[16],
                         keep_ctx=8, num_players=players, privileged_critic=privileged)
    net = _perturbed_network(cfg)
    obs = torch.from_numpy(_random_observations(players))
    x = obs
    if privileged:
        hidden = (torch.rand(len(obs), HIDDEN_SIZE, generator=torch.Generator().manual_seed(1))
                  < 0.05).float()
        x = torch.cat([obs, hidden], 1)
    assert networks.critic_inputs(cfg) == x.shape[1]
    rows = networks.sparse_rows(x, keep_dense=net.keeps)
    assert rows.idx.shape[1] == int((x != 0).sum(1).max()) < x.shape[1] // 4
    dense_x = torch.zeros_like(x).scatter_add_(1, rows.idx, rows.val)
    assert torch.equal(dense_x, x)                    # the rows hold every entry, once
    weights = torch.randn(len(x), 52)

    def grads(loss):
        net.zero_grad()
        loss.backward()
        return [None if p.grad is None else p.grad.clone() for p in net.parameters()]

    logits, value = net.logits_and_value(rows)
    sparse = grads((logits.clamp(-50, 50) * weights).sum() + value.square().sum())
    dense_logits, dense_value = net.logits(obs), net.value(x)
    dense = grads((dense_logits.clamp(-50, 50) * weights).sum() + dense_value.square().sum())
    torch.testing.assert_close(logits, dense_logits, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(value, dense_value, rtol=1e-5, atol=1e-4)
    for (name, _), g, h in zip(net.named_parameters(), sparse, dense):
        # the throw values learn from their own fit only: the policy's gradient stops at them
        # (beta excepted)
        fitted = name.startswith("throw_values.") and name != "throw_values.log_beta"
        assert (g is None and h is None) if fitted else (g is not None), name
        if g is not None:
            torch.testing.assert_close(g, h, rtol=1e-4, atol=1e-3, msg=name)
    sub = rows[torch.tensor([3, 1])]                 # minibatches index every part
    assert torch.equal(sub.idx, rows.idx[[3, 1]]) and torch.equal(sub.val, rows.val[[3, 1]])


@pytest.mark.parametrize("head,players", [("keeps", 2), ("keeps", 3), ("keeps", 4),
                                          ("keeps+values", 2), ("keeps+values", 4)])
def test_update_throw_inputs_worked_out_once_equal_the_throw_head(head, players):
    """The update works out the throw head's inputs (counts, allowed throws, the throw values'
    show points) once for its batch and takes each minibatch's share (``ThrowInputs.select``):
    the same logits and gradients as the throw head on the minibatch's dense rows."""
    cfg = SelfPlayConfig(**_head(head), net_arch=[32, 16], card_dim=8, keep_arch=[16],
                         keep_ctx=8, num_players=players)
    net = _perturbed_network(cfg)
    obs = torch.from_numpy(_random_observations(players))
    throws = net.throw_inputs(obs)
    assert sum(len(g.rows) for g in throws.groups) > 0       # the batch has discard rows
    picked = torch.randperm(len(obs), generator=torch.Generator().manual_seed(3))[:len(obs) // 2]
    weights = torch.randn(len(picked), 52)

    def grads(loss):
        net.zero_grad()
        loss.backward()
        return [None if p.grad is None else p.grad.clone() for p in net.parameters()]

    logits, value = net.logits_and_value(networks.sparse_rows(obs[picked]), throws.select(picked))
    once = grads((logits.clamp(-50, 50) * weights).sum() + value.square().sum())
    dense_logits, dense_value = net.logits(obs[picked]), net.value(obs[picked])
    dense = grads((dense_logits.clamp(-50, 50) * weights).sum() + dense_value.square().sum())
    torch.testing.assert_close(logits, dense_logits, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(value, dense_value, rtol=1e-5, atol=1e-4)
    for (name, _), g, h in zip(net.named_parameters(), once, dense):
        assert (g is None) == (h is None), name
        if g is not None:
            torch.testing.assert_close(g, h, rtol=1e-4, atol=1e-3, msg=name)


def test_throw_head_is_one_distribution_over_the_ways_to_throw(tmp_path):
    """With 2 players each discard decision scores the 15 pairs of the six cards held (from
    that decision's observation): P(first card c) = sum of softmax(scores) over the pairs
    holding c, / 2; then P(second card c | first d) = P({d, c}) / sum over c' of P({d, c'})."""
    from itertools import combinations

    from agents.ppo import throw_features, throw_tables

    cfg = SelfPlayConfig(policy="keeps", net_arch=[32], keep_arch=[16], keep_ctx=8)
    policy = load_policy(export_policy(export_arrays(_perturbed_network(cfg)),
                                       tmp_path / "p.safetensors", cfg, steps=0))
    game = Game(Rules(), seed=11)
    seat = game.current_player
    cards = sorted(game.hands[seat])
    thrown, kept, _ = throw_tables(6)
    pairs = list(combinations(cards, 2))
    assert pairs == [tuple(cards[j] for j in t) for t in thrown]

    def pair_probabilities(obs: np.ndarray) -> np.ndarray:   # from the file's layers
        h = obs
        for wt, b in policy._forward:
            h = np.maximum(h @ wt + b, 0)
        ctx = h @ policy._ctx[0] + policy._ctx[1]
        z = np.concatenate([throw_features(np.array([cards]), thrown, kept)[0],
                            np.repeat(ctx[None], 15, 0)], 1)
        for i, (wt, b) in enumerate(policy._keep):
            z = z @ wt + b
            z = np.maximum(z, 0) if i < len(policy._keep) - 1 else z
        p = np.exp(z[:, 0] - z[:, 0].max())
        return p / p.sum()

    def softmax(x: np.ndarray) -> np.ndarray:
        p = np.exp(x - x.max())
        return p / p.sum()

    first = encode(game.view(seat))
    p_pair = pair_probabilities(first)
    expected = [sum(p for pair, p in zip(pairs, p_pair) if c in pair) / 2 for c in cards]
    np.testing.assert_allclose(softmax(policy.logits(first)[cards]), expected, rtol=1e-4)
    d = cards[2]
    game.step(d)
    while game.current_player != seat:       # the other seat throws its two cards
        game.step(game.legal_actions()[0])
    second = encode(game.view(seat))
    p_pair = pair_probabilities(second)
    rest = [c for c in cards if c != d]
    joint = np.array([p_pair[pairs.index(tuple(sorted((d, c))))] for c in rest])
    np.testing.assert_allclose(softmax(policy.logits(second)[rest]), joint / joint.sum(),
                               rtol=1e-4)


def test_masked_sampling_never_picks_illegal_cards():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(500, 52)) * 5
    mask = rng.random((500, 52)) < 0.1
    mask[np.arange(500), rng.integers(0, 52, 500)] = True
    picks = selfplay_rollout.sample_masked(logits, mask, rng)
    assert mask[np.arange(500), picks].all()
    logp = networks.masked_log_probs(torch.from_numpy(logits).float(),
                                             torch.from_numpy(mask))
    assert torch.allclose(logp.exp().sum(1), torch.ones(500))
    assert (logp.exp()[~torch.from_numpy(mask)] == 0).all()


@pytest.mark.parametrize("players,head", [(2, "cards"), (3, "cards"), (4, "cards"),
                                          (2, "keeps")])
def test_tiny_run_trains_and_plays(tmp_path, players, head):
    run = tmp_path / "run"
    policy = train(tiny(num_players=players, eval_games=2, total_steps=384, policy=head,
                        snapshot_every=128), run, progress=False, log=lambda s: None)
    assert load_policy(policy).arch == ("keeps" if head == "keeps" else "mlp")
    rows = (run / "logs" / "progress.csv").read_text().splitlines()
    assert rows[0].startswith("policy_loss,value_loss,entropy,approx_kl") and len(rows) >= 3
    evals = _columns(run / "eval.csv")    # evaluated at the table of the run's player count
    assert [int(r["step"]) for r in evals][0] == 0 and "random_win_rate" in evals[0]
    assert ("fair_share" in evals[0]) == (players > 2)
    if players > 2:
        assert float(evals[0]["fair_share"]) == pytest.approx(0.5 if players == 4 else 1 / 3,
                                                              abs=1e-4)
    assert json.loads((run / "config.json").read_text())["num_players"] == players
    agent = make_agent(f"ppo:{policy}")
    game = Game(Rules(num_players=players, target=61), seed=1)
    while not game.is_over:
        mask = np.zeros(52, np.int8)
        mask[game.legal_actions()] = 1
        game.step(agent.act({"observation": encode(game.view(game.current_player)),
                             "action_mask": mask}))
    with pytest.raises(CheckpointError, match="already holds a run"):
        train(tiny(), run, progress=False, log=lambda s: None)


@pytest.mark.parametrize("players", [2, 3])
def test_privileged_critic_reads_the_hidden_cards(tmp_path, players, monkeypatch):
    """With ``privileged_critic`` each decision's critic input is its observation followed by
    ``VectorGame.hidden`` of the same seat (checked against the observation's own counts:
    the next seat's cards held, one starter); the policy file is the actor alone, as
    without it."""
    stored = []
    decide = SeatRollout.decide

    def record(self, rows, obs, *args, **kw):
        stored.append(obs.copy())
        return decide(self, rows, obs, *args, **kw)

    monkeypatch.setattr(SeatRollout, "decide", record)
    policy = train(tiny(num_players=players, policy="mlp", privileged_critic=True,
                        total_steps=256), tmp_path / "run", progress=False, log=lambda s: None)
    x = np.concatenate(stored)
    assert x.shape[1] == OBS_SIZE + HIDDEN_SIZE and len(x) >= 256
    obs, hidden = x[:, :OBS_SIZE], x[:, OBS_SIZE:]
    held_next = np.rint(obs[:, OFFSETS["cards_held"].start + 1] * 6)
    np.testing.assert_array_equal(hidden[:, :52].sum(1), held_next)
    assert (hidden[:, 208:260].sum(1) == 1).all()
    assert not hidden[:, 52 * (players - 1):156].any()
    assert load_policy(policy).arch == "mlp"


def _columns(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open() as f:
        rows = list(csv.DictReader(f))
    timing = ("steps_per_s", "collect_s", "update_s", "cpu_s", "wall_s")
    return [{k: v for k, v in r.items() if k not in timing} for r in rows]


def test_sigkill_then_resume_continues_exactly(tmp_path):
    total = 2048
    straight = tmp_path / "straight"
    train(tiny(total_steps=total), straight, progress=False, log=lambda s: None)

    run = tmp_path / "killed"
    killed_at = kill_after_checkpoint(train_command(run, total, TINY), run,
                                      tmp_path / "output.txt", 512)
    assert 0 < killed_at < total, "the run must be killed mid-way"

    logs: list[str] = []
    policy = train(tiny(total_steps=total), run, resume=True, progress=False, log=logs.append)
    assert any(f"at step {killed_at:,}" in line for line in logs), logs
    # the same numbers, update for update, as the run that was never killed
    assert _columns(run / "logs" / "progress.csv") == _columns(straight / "logs/progress.csv")
    a, b = load_policy(policy), load_policy(straight / "policy.safetensors")
    for (wa, ba), (wb, bb) in zip(a.layers + [a.action], b.layers + [b.action]):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)


def test_bad_resumes_give_clear_errors(tmp_path):
    run = tmp_path / "run"
    with pytest.raises(CheckpointError, match="nothing to resume"):
        train(tiny(), run, resume=True, progress=False)
    train(tiny(total_steps=256), run, progress=False, log=lambda s: None)
    cfg = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**cfg, "learning_rate": 1e-2}))
    with pytest.raises(CheckpointError, match="different settings"):
        train(tiny(total_steps=512), run, resume=True, progress=False)
    (run / "config.json").write_text(json.dumps(cfg))
    name = (run / "checkpoints" / "LATEST").read_text().strip()
    (run / "checkpoints" / name / "model.zip").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        train(tiny(total_steps=512), run, resume=True, progress=False)
    (run / "checkpoints" / name / "state.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="unreadable"):
        train(tiny(total_steps=512), run, resume=True, progress=False)


def test_config_validation():
    with pytest.raises(ValueError, match="reward"):
        SelfPlayConfig(reward="score")
    with pytest.raises(ValueError, match="policy"):
        SelfPlayConfig(policy="transformer")
    with pytest.raises(ValueError, match="unknown self-play settings"):
        SelfPlayConfig.from_dict({"learning_rte": 1})
    assert OBS_SIZE == 601


def test_resume_with_nothing_left_says_so(tmp_path):
    run = tmp_path / "run"
    train(tiny(total_steps=128), run, progress=False, log=lambda s: None)
    lines: list[str] = []
    train(tiny(total_steps=128), run, resume=True, progress=False, log=lines.append)
    assert any(line.startswith("nothing left to train: the run is at step") for line in lines)
    assert not any("learner steps/s" in line for line in lines)


def test_a_run_solves_its_search_table_and_a_resume_writes_a_missing_one(tmp_path):
    """``search_table_hands`` writes ``winprob.npz`` from the final policy's own hands, marked
    with that policy's SHA-256; a run killed while solving it (no table) writes the same table
    when resumed; a table of this policy is kept; the search over its own models reads it."""
    import hashlib

    from agents.search import check_table
    from agents.winprob import table_meta

    run = tmp_path / "run"
    quiet = dict(progress=False, log=lambda s: None)
    policy = train(tiny(search_table_hands=8, policy="keeps"), run, **quiet)
    table = run / "winprob.npz"
    check_table(table)
    meta = table_meta(table)
    assert meta["policy_sha256"] == hashlib.sha256(policy.read_bytes()).hexdigest()
    assert (meta["hands"], meta["agent"]) == (8, f"ppo:{policy}")
    with np.load(table) as data:
        first = {k: data[k] for k in data.files}
    table.unlink()
    lines: list[str] = []
    train(tiny(search_table_hands=8, policy="keeps"), run, resume=True, progress=False,
          log=lines.append)
    assert any(line.startswith("solving the search's win-probability table") for line in lines)
    with np.load(table) as data:
        assert data.files == list(first) and all(np.array_equal(data[k], first[k]) for k in first)
    written = table.stat().st_mtime_ns
    lines.clear()
    train(tiny(search_table_hands=8, policy="keeps"), run, resume=True, progress=False,
          log=lines.append)
    assert table.stat().st_mtime_ns == written
    assert not any("win-probability" in line for line in lines)
    bot = make_agent(f"search:ppo:{policy}?models=own&playouts=8&table={table}", seed=0)
    game, searched = Game(seed=2, max_hands=1), 0
    while not game.is_over:
        game.step(bot.choose(game.view(game.current_player), game.legal_actions()))
        searched += bot.last["rows"] > 0
    assert searched and bot.table == table
    with pytest.raises(ValueError, match="search_table_hands .* got 5"):
        SelfPlayConfig(search_table_hands=5)
    with pytest.raises(ValueError, match="with 3 players"):
        SelfPlayConfig(search_table_hands=100, num_players=3)


def test_the_time_limit_counts_every_session_of_a_run(tmp_path):
    """A resumed run trains only what its ``time_limit`` has left: with the limit at the time
    it has trained already it trains nothing (a clock started again at the resume would train
    as long again); a higher limit trains further."""
    run = tmp_path / "run"
    quiet = dict(progress=False, log=lambda s: None)
    train(tiny(total_steps=512), run, **quiet)
    latest = (run / "checkpoints" / "LATEST").read_text().strip()
    trained_s = json.loads((run / "checkpoints" / latest / "state.json").read_text())["wall_s"]
    assert trained_s > 0           # the time it trained, as its checkpoint keeps it
    lines: list[str] = []
    train(tiny(total_steps=1_000_000, time_limit=trained_s), run, resume=True,
          progress=False, log=lines.append)
    assert any(line.startswith("nothing left to train: it has trained") for line in lines)
    assert int(_columns(run / "logs" / "progress.csv")[-1]["step"]) < 1024
    train(tiny(total_steps=1024, time_limit=3600.0), run, resume=True, **quiet)
    assert int(_columns(run / "logs" / "progress.csv")[-1]["step"]) >= 1024


def test_a_run_stopped_by_its_time_limit_resumes_to_nothing(tmp_path):
    """The checkpoint written as the time limit stops a run keeps all the time it trained
    (the evaluation after the last round included: here most of its time), so a resume with
    the same limit trains nothing and keeps the policy file as it was."""
    run = tmp_path / "run"
    evaluated = dict(total_steps=10_000_000, time_limit=3.0, eval_games=16, eval_every=1)
    train(tiny(**evaluated), run, progress=False, log=lambda s: None)
    log = run / "logs" / "progress.csv"
    rows = len(_columns(log)) if log.exists() else 0      # none: a very slow machine
    policy = (run / "policy.safetensors").read_bytes()
    lines: list[str] = []
    train(tiny(**evaluated), run, resume=True, progress=False, log=lines.append)
    assert any(line.startswith("nothing left to train: it has trained") for line in lines)
    assert (len(_columns(log)) if log.exists() else 0) == rows
    assert (run / "policy.safetensors").read_bytes() == policy


@pytest.mark.parametrize("head", ["mlp", "cards", "keeps"])
def test_rollouts_sample_from_the_policy_the_update_trains(tmp_path, head):
    """With a learning rate of 1e-30 (the smallest allowed is above 0) the policy does not
    move, so the log-probabilities recomputed in the update equal the ones the rollouts drew
    with: every update's KL and clip fraction are 0. (A rollout path that skipped the throw
    head failed this with KL ~0.05.)"""
    train(tiny(policy=head, learning_rate=1e-30, total_steps=512, n_epochs=2), tmp_path / "r",
          progress=False, log=lambda s: None)
    rows = _columns(tmp_path / "r" / "logs" / "progress.csv")
    assert len(rows) >= 3
    assert max(abs(float(r["approx_kl"])) for r in rows) < 1e-6
    assert max(float(r["clipfrac"]) for r in rows) == 0.0


def test_damaged_keeps_policy_files_are_refused_naming_the_part(tmp_path):
    from agents.ppo import PolicyFileError, save_tensors

    cfg = SelfPlayConfig(policy="keeps", net_arch=[16], keep_arch=[8], keep_ctx=4)
    tensors = networks.export_arrays(make_network(cfg))
    meta = {"arch": "keeps", "activation": "relu"}
    no_head = {k: v for k, v in tensors.items() if not k.startswith("keep.ctx")}
    with pytest.raises(PolicyFileError, match="no throw head"):
        load_policy(save_tensors(tmp_path / "a.safetensors", no_head, meta))
    wrong = {**tensors, "keep.0.weight": tensors["keep.0.weight"][:, :-1]}
    with pytest.raises(PolicyFileError, match=r"keep layer 0 has weight \(8, 37\)"):
        load_policy(save_tensors(tmp_path / "b.safetensors", wrong, meta))
    two_outputs = {**tensors, "keep.1.weight": np.zeros((2, 8)), "keep.1.bias": np.zeros(2)}
    with pytest.raises(PolicyFileError, match="one output per throw"):
        load_policy(save_tensors(tmp_path / "c.safetensors", two_outputs, meta))


def test_entropy_and_its_gradient_are_the_legal_cards_categoricals():
    """``entropy`` (illegal entries zeroed before ``exp``) equals torch's Categorical entropy
    over the legal cards alone, gradients included."""
    torch.manual_seed(3)
    logits = torch.randn(200, 52, requires_grad=True)
    mask = torch.rand(200, 52) < 0.12
    mask[:, 7] = True
    ours = networks.entropy(networks.masked_log_probs(logits, mask), mask)
    theirs = torch.stack([torch.distributions.Categorical(logits=row[m]).entropy()
                          for row, m in zip(logits, mask)])
    torch.testing.assert_close(ours, theirs)
    g1, = torch.autograd.grad(ours.sum(), logits)
    g2, = torch.autograd.grad(theirs.sum(), logits)
    torch.testing.assert_close(g1, g2)
    assert (g1[~mask] == 0).all()


def test_every_run_evaluates_its_final_policy(tmp_path):
    """The self-play run too: an evaluation at the step it ends, said with where its files are."""
    run, said = tmp_path / "run", []
    train(tiny(total_steps=300, eval_games=2, eval_every=100_000), run, progress=False,
          log=said.append)
    steps = [int(r["step"]) for r in _columns(run / "eval.csv")]
    assert steps[0] == 0 and steps[-1] >= 300 and len(steps) == 2
    assert any(line.startswith("evaluation at step") for line in said)
    assert any(line.startswith(f"files in {run}") for line in said)


# ------------------------------------------------------------------------------------------
# algorithm="dmc": Deep Monte-Carlo, the value-based method of the reference table
# ------------------------------------------------------------------------------------------

def test_dmc_settings_are_checked_and_leave_ppo_fingerprints_alone():
    with pytest.raises(ValueError, match="algorithm 'dmc' needs policy 'mlp' or 'cards'.*keeps"):
        SelfPlayConfig(algorithm="dmc", policy="keeps")
    with pytest.raises(ValueError, match="privileged_critic"):
        SelfPlayConfig(algorithm="dmc", policy="mlp", privileged_critic=True)
    with pytest.raises(ValueError, match="algorithm"):
        SelfPlayConfig(algorithm="dqn")
    with pytest.raises(ValueError, match="epsilon"):
        SelfPlayConfig(algorithm="dmc", policy="mlp", epsilon=1.5)
    # the new settings are left out of a PPO run's fingerprint (runs made before them resume)
    assert "algorithm" not in SelfPlayConfig().fixed_settings()
    assert SelfPlayConfig(algorithm="dmc", policy="mlp").fixed_settings()["epsilon"] == 0.05


def _q_decisions(epsilon: float, rows: int = 400):
    """The cards the dmc learner picks in ``rows`` positions of a tiny network."""
    config = tiny(algorithm="dmc", policy="cards", epsilon=epsilon)
    torch.manual_seed(0)
    net = make_network(config)
    rng = np.random.default_rng(1)
    obs = rng.random((rows, OBS_SIZE)).astype(np.float32)
    mask = rng.random((rows, 52)) < 0.15
    mask[np.arange(rows), rng.integers(0, 52, rows)] = True
    rollout = SeatRollout(rows, OBS_SIZE)
    picks = selfplay_rollout._learner_q_decides(
        net, None, rollout, np.arange(rows), obs, obs, mask, None,
        torch.Generator().manual_seed(2), torch.device("cpu"), config)
    with torch.no_grad():
        q = net.logits(torch.from_numpy(obs)).numpy()
    return picks, mask, q, rollout


def test_dmc_plays_the_best_legal_q_value_or_explores_uniformly():
    picks, mask, q, rollout = _q_decisions(epsilon=0.0)
    assert mask[np.arange(len(picks)), picks].all()
    best = np.where(mask, q, -np.inf).argmax(1)
    assert (picks == best).all()
    # the value recorded is the chosen card's Q-value (it completes a cut return)
    assert np.allclose(rollout.blocks[0]["value"], q[np.arange(len(picks)), picks])
    picks, mask, q, _ = _q_decisions(epsilon=1.0, rows=2000)
    assert mask[np.arange(len(picks)), picks].all()
    best = np.where(mask, q, -np.inf).argmax(1)
    legal = mask.sum(1)
    # uniform among the legal cards: the best card as often as 1 / legal cards predicts
    expected = (1 / legal).sum()
    assert abs((picks == best).sum() - expected) < 4 * np.sqrt(expected)


def test_dmc_update_moves_the_played_cards_q_to_its_return():
    config = tiny(algorithm="dmc", policy="mlp", n_epochs=20, learning_rate=3e-3)
    torch.manual_seed(0)
    net = make_network(config)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    rng = np.random.default_rng(0)
    n = 256
    obs = (rng.random((n, OBS_SIZE)) < 0.05).astype(np.float32)
    action = rng.integers(0, 52, n)
    returns = np.where(action < 26, 3.0, -2.0)
    batch = {"obs": obs, "action": action, "returns": returns, "value": np.zeros(n)}

    def error():
        with torch.no_grad():
            q = net.logits(torch.from_numpy(obs)).numpy()
        return np.abs(q[np.arange(n), action] - returns).mean()

    before = error()
    stats = selfplay._update_q(net, optimizer, batch, config, torch.Generator().manual_seed(0),
                               torch.device("cpu"))
    after = error()
    assert before > 2.0 and after < 0.5 * before
    assert stats["samples"] == n and np.isfinite(stats["value_loss"])


def test_tiny_dmc_run_trains_exports_and_plays_its_best_q(tmp_path):
    """A dmc run writes its progress (the Q-value loss, no entropy or KL), evaluates, and
    exports a policy file whose ``ppo:`` player plays the legal card of highest Q."""
    run = tmp_path / "run"
    config = tiny(algorithm="dmc", policy="cards", eval_games=2, total_steps=384)
    policy = train(config, run, progress=False, log=lambda s: None)
    header = (run / "logs" / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"value_loss", "q_mean", "return_mean"} <= set(header)
    assert "entropy" not in header and (run / "training.png").exists()
    assert [int(r["step"]) for r in _columns(run / "eval.csv")][0] == 0
    actor = load_policy(policy)
    agent = make_agent(f"ppo:{policy}")
    game = Game(Rules(target=61), seed=3)
    while not game.is_over:
        view, legal = game.view(game.current_player), game.legal_actions()
        obs = encode(view)
        q = actor.logits(obs[None].astype(np.float64))[0]
        card = agent.choose(view, legal)
        assert q[card] == max(q[c] for c in legal)
        game.step(card)
