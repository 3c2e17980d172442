"""The throw values of the ``keeps`` network (train/throw_values.py): their targets are what the
rules score (checked against the plain reference scorer and the engine's own show), the fit
learns them, and a run with them trains, exports and resumes exactly."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.ppo import load_policy  # noqa: E402
from cribenv.game import Rules  # noqa: E402
from cribenv.reference_scoring import ref_score_hand  # noqa: E402
from cribenv.vector import VectorGame  # noqa: E402
from train import selfplay, throw_values  # noqa: E402
from train.selfplay import SelfPlayConfig, train  # noqa: E402
from train.throw_values import (  # noqa: E402
    ThrowValueNet,
    fit_throw_values,
    throw_targets,
    throw_value_loss,
    turned_samples,
)


def test_doctests():
    assert doctest.testmod(throw_values).failed == 0


def _turned(players: int, seeds: range) -> tuple[VectorGame, list[dict]]:
    """Random games stepped until every one has turned its first starter; the samples of each
    game at its turn, with the engine's own show of that hand (``hidden``'s last entries)."""
    vg = VectorGame(Rules(num_players=players), np.array(seeds))
    rng = np.random.default_rng(0)
    out: list[dict] = [{} for _ in seeds]
    while any(not o for o in out):
        before = vg.phase == 0
        vg.step(vg.random_actions(rng))
        for g in np.flatnonzero(before & (vg.phase != 0)):
            if not out[g]:
                sample = turned_samples(vg, np.array([g]))
                shown = vg.show_cards(np.array([g]))
                seats = [(int(vg.dealer[g]) + 1 + k) % players for k in range(players)]
                out[g] = {"sample": sample, "shown": shown, "dealer": int(vg.dealer[g]),
                          "hidden": [vg.hidden(np.array([s] * len(seeds)))[g] for s in seats],
                          "seats": seats}
    return vg, out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_throws_targets_are_the_reference_scores(players):
    """Each way a seat could have thrown, scored by the plain reference scorer with the starter
    turned and the others' cards in the crib; the way it did throw is the engine's own show."""
    _, turned = _turned(players, range(12))
    for t in turned:
        s, shown = t["sample"], t["shown"]
        starter = int(shown["starter"][0])
        crib = shown["crib"][0].tolist()
        for seat in range(players):
            cards = s["cards"][seat].tolist()
            laid = shown["laid"][0, seat].tolist()
            assert sorted(cards) == sorted(shown["kept"][0, seat].tolist() + laid)
            others = [c for c in crib if c not in laid]
            k = len(laid)
            ways = list(itertools.combinations(range(len(cards)), k))
            assert s["hand"].shape[1] == len(ways)
            for w, thrown in enumerate(ways):
                keep = [c for j, c in enumerate(cards) if j not in thrown]
                made = [cards[j] for j in thrown] + others
                assert s["hand"][seat, w] == ref_score_hand(keep, starter)
                assert s["crib"][seat, w] == ref_score_hand(made, starter, is_crib=True)
            side = Rules(num_players=players).side_of
            assert s["own_crib"][seat] == (side(seat) == side(t["dealer"]))
            # the throw it made: the engine's show (hidden(): points / 29 of the kept hand)
            real = ways.index(tuple(j for j, c in enumerate(cards) if c in laid))
            h = t["hidden"][t["seats"].index(seat)]
            assert round(float(h[-5]) * 29) == s["hand"][seat, real]
            assert round(float(h[-1]) * 29) == s["crib"][seat, real]


def test_targets_hand_computed():
    """Dealt 5H 5S 5C JD 2C 3C, the other seat laid away 9H KS, the starter 5D."""
    from cribenv.cards import parse_many as p

    cards, hand, crib = throw_targets(np.array([p("5H 5S 5C JD")]), np.array([p("2C 3C")]),
                                      np.array([p("2C 3C 9H KS")]), np.array(p("5D")))
    order = cards[0].tolist()
    ways = list(itertools.combinations(range(6), 2))

    def way(a: str, b: str) -> int:
        return ways.index(tuple(sorted((order.index(p(a)[0]), order.index(p(b)[0])))))

    # thrown 2C 3C: the hand 5 5 5 J + 5D is 29; the crib 2C 3C 9H KS + 5D: 2+3+K, 5+K: 4
    assert (hand[0, way("2C", "3C")], crib[0, way("2C", "3C")]) == (29, 4)
    # thrown 5H 5S: the hand 5C JD 2C 3C + 5D: fifteens 5C+J, 5D+J, J+2+3, 5+5+2+3 (8), the
    # pair of fives (2), nobs (JD, starter a diamond): 11; the crib 5H 5S 9H KS + 5D:
    # fifteens 5+K three times and 5+5+5 (8), three fives (6): 14
    assert (hand[0, way("5H", "5S")], crib[0, way("5H", "5S")]) == (11, 14)


def test_fit_learns_the_expected_points():
    """The fit on random games' turns: its loss falls well below that of the best constant
    (the targets' variance), on samples it has not seen."""
    vg = VectorGame(Rules(), np.arange(128))
    rng = np.random.default_rng(1)
    samples = []
    for _ in range(400):
        before = vg.phase == 0
        vg.step(vg.random_actions(rng))
        turned = np.flatnonzero(before & (vg.phase != 0))
        if turned.size:
            samples.append(turned_samples(vg, turned))
        done = np.flatnonzero(vg.done)
        if done.size:
            vg.reset_games(done, rng.integers(0, 2**62, done.size))
    data = {k: np.concatenate([s[k] for s in samples]) for k in samples[0]}
    n = len(data["cards"])
    assert n > 3000
    train_part = {k: v[: n * 3 // 4] for k, v in data.items()}
    test_part = {k: v[n * 3 // 4:] for k, v in data.items()}
    torch.manual_seed(0)
    net = ThrowValueNet([64, 64])
    opt = torch.optim.Adam(net.value_parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(0)
    fit_throw_values(net, opt, train_part, epochs=8, batch=128, gen=gen, device="cpu")
    held_out = throw_value_loss(net, test_part)
    target = np.stack([test_part["hand"], test_part["crib"]], -1).astype(float)
    constant = float(((target - target.mean((0, 1))) ** 2).mean())
    assert held_out < 0.8 * constant, (held_out, constant)


def test_config_and_files():
    with pytest.raises(ValueError, match="throw_values needs policy 'keeps'"):
        SelfPlayConfig(policy="cards", throw_values=True)
    with pytest.raises(ValueError, match="value_arch"):
        SelfPlayConfig(policy="keeps", throw_values=True, value_arch=[])
    # runs made before the throw values keep their fingerprint: the settings are inert
    assert SelfPlayConfig(value_arch=[7]).fingerprint() == SelfPlayConfig().fingerprint()
    assert (SelfPlayConfig(policy="keeps", throw_values=True).fingerprint()
            != SelfPlayConfig(policy="keeps").fingerprint())


class Killed(Exception):
    """Stands for kill -9 right after a checkpoint is written."""


def test_a_run_with_throw_values_trains_exports_and_resumes_exactly(tmp_path, monkeypatch):
    tiny = dict(n_games=8, n_steps=16, minibatch_size=64, n_epochs=1, net_arch=[16],
                card_dim=4, threads=1, heuristics=["random"], eval_games=0,
                snapshot_every=128, checkpoint_every=256, eval_every=512, pool_size=3,
                policy="keeps", throw_values=True, value_arch=[16], total_steps=1024)
    straight = train(SelfPlayConfig(**tiny), tmp_path / "a", progress=False, log=lambda s: None)
    real, written = selfplay._checkpoint, []

    def dying(*args, **kwargs):
        written.append(real(*args, **kwargs))
        if len(written) == 2:
            raise Killed
        return written[-1]

    monkeypatch.setattr(selfplay, "_checkpoint", dying)
    with pytest.raises(Killed):
        train(SelfPlayConfig(**tiny), tmp_path / "b", progress=False, log=lambda s: None)
    monkeypatch.setattr(selfplay, "_checkpoint", real)
    resumed = train(SelfPlayConfig(**tiny), tmp_path / "b", resume=True, progress=False,
                    log=lambda s: None)
    a, b = load_policy(straight), load_policy(resumed)
    assert a.value_layers and len(a.value_layers) == 2
    for (wa, ba), (wb, bb) in zip(a.value_layers + a.layers, b.value_layers + b.layers):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)
    assert a.value_beta == b.value_beta
    rows = (tmp_path / "a" / "logs" / "progress.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert "throw_value_loss" in header and "throw_value_samples" in header
    samples = [float(r.split(",")[header.index("throw_value_samples")]) for r in rows[1:]]
    assert sum(samples) > 0


def test_the_scratch_agent_ships_and_is_the_recipes_run():
    """``ppo:scratch`` is the policy that ``train/configs/selfplay-from-rules.json`` trained
    (results/from-rules/100min-recipe): the same weights, its settings the config's, a keeps
    network with throw values; it reads the observation alone (no expert feature)."""
    from pathlib import Path

    from agents import make_agent
    from agents.ppo import SCRATCH_POLICY
    from agents.winprob import SCRATCH_TABLE_FILE, table_meta

    root = Path(__file__).resolve().parents[1]
    run = root / "results" / "from-rules" / "100min-recipe"
    assert SCRATCH_POLICY.read_bytes() == (run / "policy.safetensors").read_bytes()
    config = SelfPlayConfig.load(root / "train" / "configs" / "selfplay-from-rules.json")
    # the same settings; the table its search reads, solved after the run (which predates
    # search_table_hands), from as many hands as the config solves
    shipped = {**SelfPlayConfig.load(run / "config.json").to_dict(),
               "search_table_hands": config.search_table_hands}
    assert shipped == config.to_dict()
    assert table_meta(SCRATCH_TABLE_FILE)["hands"] == config.search_table_hands
    # no expert features, no start from the shipped agent, no game against the expert bot
    assert config.policy == "keeps" and config.throw_values and not config.init_policy
    assert config.expert_share == 0 and not config.privileged_critic
    agent = make_agent("ppo:scratch")
    assert agent.name == "ppo:scratch" and agent.policy.value_layers
    assert agent.policy.arch == "keeps"


@pytest.mark.parametrize("players", [2, 3])
def test_crib_targets_only_from_cribs_the_game_shows(players):
    """The throw values' crib target is trained only where the game counted the crib: a hand
    whose game ends first (in the play, or on a hand's count) gives its hand targets alone
    (``crib_known`` False). Checked against :class:`cribenv.game.Game` replaying every game
    with the same seed and cards: ``crib_known`` is whether its events show the crib."""
    from cribenv.events import Dealt, Discarded, ShowScored, StarterTurned
    from cribenv.game import Game
    from train.selfplay_rollout import Games, SeatRollout, selfplay_pool

    cfg = SelfPlayConfig(policy="keeps", throw_values=True, n_games=6, target=61,
                         num_players=players, seed=5, eval_games=0)
    games = Games(cfg, selfplay_pool(cfg), np.random.default_rng(0), first_game=0)
    rollout = SeatRollout(cfg.n_games * players)
    seeds = [int(s) for s in cfg.seed * 1_000_000_007 + np.arange(cfg.n_games)]
    played: list[list[int]] = [[] for _ in range(cfg.n_games)]
    finished: list[tuple[int, list[int]]] = []
    reset = games.vg.reset_games

    def record_reset(rows, new_seeds):
        for r, s in zip(np.asarray(rows).tolist(), np.asarray(new_seeds).tolist()):
            finished.append((seeds[r], played[r]))
            seeds[r], played[r] = int(s), []
        return reset(rows, new_seeds)

    games.vg.reset_games = record_reset
    rng = np.random.default_rng(2)
    for _ in range(600):
        actions = games.vg.random_actions(rng)
        for r, a in enumerate(actions.tolist()):
            played[r].append(a)
        games.step(actions, rollout)
    samples = games.take_samples()
    assert len(finished) >= 10
    # the oracle: each finished game's hands, by the first seat's six (or five) cards
    shown_by_hand: dict[tuple[int, ...], bool] = {}
    for seed, actions in finished:
        g = Game(Rules(num_players=players, target=61), seed=seed)
        hands: list[list] = []

        def see(events, g=g, hands=hands):
            for e in events:
                if isinstance(e, Dealt):
                    hands.append([[], None, False])
                elif isinstance(e, Discarded) and e.seat == 0:
                    hands[-1][0].append(e.card)
                elif isinstance(e, StarterTurned):     # read as the starter is turned
                    hands[-1][1] = tuple(sorted(hands[-1][0] + list(g.kept[0])))
                elif isinstance(e, ShowScored) and e.is_crib:
                    hands[-1][2] = True

        see(g.events)
        for a in actions:
            see(g.step(a))
        assert g.winner is not None
        for _, cards, crib in hands:
            if cards is not None:
                shown_by_hand[cards] = crib
    first_seat = np.arange(0, len(samples["cards"]), players)
    checked = {False: 0, True: 0}
    for row in first_seat.tolist():
        key = tuple(int(c) for c in samples["cards"][row])
        if key in shown_by_hand:      # a hand of a game that finished in the test
            assert bool(samples["crib_known"][row]) == shown_by_hand[key], key
            checked[shown_by_hand[key]] += 1
    assert checked[False] >= 3 and checked[True] >= 10, checked
    # the fit: a crib never shown weighs nothing
    net = ThrowValueNet([8])
    unknown = {k: v[~samples["crib_known"]] for k, v in samples.items()}
    wrong = {**unknown, "crib": unknown["crib"] + 1000}
    assert throw_value_loss(net, wrong) == pytest.approx(throw_value_loss(net, unknown))
