"""The batched engine (cribenv.vector) is the rules engine (cribenv.game), game for game.

The differential test plays 10^5 random games over 2/3/4 players, 121/61 points and exact
peg-out on and off against ``Game`` step by step (``scripts/vector_differential.py`` holds the
checker and runs 10^6); the other tests pin the generator, rewards (against the AEC env),
illegal actions, automatic reset and the observation layout.
"""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba", reason="the batched engine needs numba")

from cribenv import _vector_kernels as K  # noqa: E402
from cribenv.aec import CribbageEnv  # noqa: E402
from cribenv.game import Game, IllegalActionError, Phase, Rules  # noqa: E402
from cribenv.observation import OBS_SIZE, OFFSETS, encode  # noqa: E402
from cribenv.scoring import score_hand_ids  # noqa: E402
from cribenv.vector import HIDDEN_SIZE, VectorGame, VectorIllegalActionError, seed_words  # noqa: E402

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "vector_differential.py"
_spec = importlib.util.spec_from_file_location("vector_differential", _SCRIPT)
assert _spec is not None and _spec.loader is not None
differential = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(differential)


# ------------------------------------------------------------------------------------------
# CPython's generator
# ------------------------------------------------------------------------------------------
SEEDS = [0, 1, 2, 7, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 7, 2**63 - 1, 2**64 + 5,
         -1, -5, -(2**40) - 3, 12345678901234567890123456789, -(2**100) + 17]


@pytest.mark.parametrize("seed", SEEDS)
def test_generator_is_cpython_random(seed: int) -> None:
    ks = np.array([1, 6, 32, 17, 3, 31, 2] * 200)     # 1400 words: past one 624-word twist
    rng = random.Random(seed)
    want = [rng.getrandbits(int(k)) for k in ks]
    words, lengths = seed_words([seed])
    assert K.draw_bits(words[0], lengths[0], ks).tolist() == want


def test_generator_many_seeds() -> None:
    ks = np.array([6, 32, 5])
    seeds = np.random.default_rng(1).integers(-(2**63), 2**63 - 1, size=300, dtype=np.int64)
    words, lengths = seed_words(seeds)
    for row, seed in enumerate(seeds.tolist()):
        rng = random.Random(seed)
        assert K.draw_bits(words[row], lengths[row], ks).tolist() == \
            [rng.getrandbits(int(k)) for k in ks]


def test_seed_words_array_matches_ints() -> None:
    seeds = np.array([0, 1, -1, 2**32, -(2**63), 2**63 - 1], np.int64)
    w_arr, l_arr = seed_words(seeds)
    w_int, l_int = seed_words(seeds.tolist())
    assert l_arr.tolist() == l_int.tolist()
    for row in range(len(seeds)):
        assert w_arr[row, :l_arr[row]].tolist() == w_int[row, :l_int[row]].tolist()


def test_seeds_must_be_ints() -> None:
    with pytest.raises(TypeError, match="ints"):
        VectorGame(Rules(), seeds=[1.5])


# ------------------------------------------------------------------------------------------
# Deals and the first positions, worked by hand from Game
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 4])
def test_first_deal_is_games(players: int) -> None:
    rules = Rules(num_players=players)
    seeds = [0, 1, 99, -3, 2**70]
    vg = VectorGame(rules, seeds)
    for seat in range(players):
        hands = vg.hands(seat)
        for i, seed in enumerate(seeds):
            assert hands[i] == sorted(Game(rules, seed=seed).hands[seat])
    games = [Game(rules, seed=s) for s in seeds]
    assert vg.dealer.tolist() == [g.dealer for g in games]
    assert vg.to_act.tolist() == [g.current_player for g in games]
    assert vg.phase.tolist() == [0] * len(seeds)
    assert vg.scores.shape == (len(seeds), rules.num_sides)


def test_first_dealer_skips_the_cut() -> None:
    rules = Rules(num_players=3)
    vg = VectorGame(rules, [5, 6], first_dealer=2)
    assert vg.dealer.tolist() == [2, 2]
    assert vg.to_act.tolist() == [0, 0]
    for i, seed in enumerate([5, 6]):
        assert vg.hands(1)[i] == sorted(Game(rules, seed=seed, first_dealer=2).hands[1])


def test_observation_offsets_are_the_layouts() -> None:
    names = {"O_" + k: v.start for k, v in OFFSETS.items()}
    kernel = {
        "hand": K.O_HAND, "own_discards": K.O_DISC, "starter": K.O_STARTER,
        "played_by": K.O_PLAYED, "in_series": K.O_SERIES, "play_order": K.O_ORDER,
        "count": K.O_COUNT, "said_go": K.O_GO, "cards_held": K.O_HELD,
        "discards_made": K.O_DMADE, "scores": K.O_SCORES, "dealer": K.O_DEALER,
        "to_act": K.O_TO_ACT, "teammate": K.O_TEAM, "phase": K.O_PHASE,
        "num_players": K.O_NPLAY, "short_game": K.O_SHORT, "hand_number": K.O_HANDNO,
        "hand_ranks": K.O_HRANK, "unseen_ranks": K.O_UNSEEN, "series_tail": K.O_TAIL,
    }
    assert set(kernel) == set(OFFSETS)
    for name, start in kernel.items():
        assert start == names["O_" + name], name
    assert K.OBS_SIZE == OBS_SIZE


# ------------------------------------------------------------------------------------------
# The differential test: 10^5 random games against Game, step by step
# ------------------------------------------------------------------------------------------
# One item per (players, target, exact peg-out): whole games, then one- and two-hand games
# (max_hands: every deal, the play and the show again, at an eighth of a game's cost), some with
# the cut skipped (first_dealer). 100,200 games, about 3.9 million decisions in all.
DIFF_CONFIGS = [(p, t, e) for p in (2, 3, 4) for t in (121, 61) for e in (False, True)]
WHOLE_GAMES = {121: 1000, 61: 2500}
SHORT_GAMES = {121: 5000, 61: 8200}
assert sum(WHOLE_GAMES[t] + SHORT_GAMES[t] for _, t, _ in DIFF_CONFIGS) >= 100_000


@pytest.mark.slow
@pytest.mark.parametrize("config", DIFF_CONFIGS, ids=lambda c: f"{c[0]}p-{c[1]}-exact{c[2]}")
def test_differential_against_game(config: tuple[int, int, bool]) -> None:
    players, target, exact = config
    rules = Rules(num_players=players, target=target, must_peg_out_exactly=exact)
    runs = []     # (games, first_dealer, max_hands)
    runs += [(2500, None, None)] * (WHOLE_GAMES[target] // 2500)
    if WHOLE_GAMES[target] % 2500:
        runs.append((WHOLE_GAMES[target] % 2500, None, None))
    short = SHORT_GAMES[target]
    runs += [(short // 3, None, 1), (short // 3, players - 1, 1),
             (short - 2 * (short // 3), None, 2)]
    seed = 1_000_003 * (DIFF_CONFIGS.index(config) + 1)
    games = decisions = 0
    for k, (num, first_dealer, max_hands) in enumerate(runs):
        decisions += differential.check_games(
            rules, np.arange(seed, seed + num), first_dealer=first_dealer, max_hands=max_hands,
            obs_rate=0.01, rng_seed=seed + k)
        seed += num
        games += num
    assert games == WHOLE_GAMES[target] + SHORT_GAMES[target]
    assert decisions >= 10 * games


def test_differential_catches_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker is not blind: one wrong point of the show is found."""
    real = Game._show

    def generous_show(self: Game) -> None:
        self.scores[0] += 1
        real(self)

    monkeypatch.setattr(Game, "_show", generous_show)
    with pytest.raises(AssertionError, match="scores"):
        differential.check_games(Rules(), np.arange(20))


# ------------------------------------------------------------------------------------------
# Rewards: the AEC env's, step for step
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("players,reward,skunks,shaping,episode", [
    (2, "win", False, 0.0, "game"),
    (2, "win", True, 0.0, "game"),
    (2, "points", False, 0.0, "game"),
    (3, "points", False, 0.0, "game"),
    (3, "win", True, 0.05, "game"),
    (4, "win", True, 0.0, "game"),
    (4, "points", False, 0.0, "hand"),
    (2, "points", False, 0.0, "hand"),
])
def test_rewards_are_the_aec_envs(players: int, reward: str, skunks: bool, shaping: float,
                                  episode: str) -> None:
    seeds = list(range(40))
    max_hands = 1 if episode == "hand" else None
    vg = VectorGame(Rules(num_players=players), seeds, reward=reward, skunks=skunks,
                    shaping=shaping, max_hands=max_hands)
    envs = []
    for seed in seeds:
        env = CribbageEnv(num_players=players, reward=reward, skunks=skunks, shaping=shaping,
                          episode=episode)
        env.reset(options={"game_seed": seed})
        envs.append(env)
    rng = np.random.default_rng(players)
    paid = 0.0
    last = np.zeros((len(seeds), players))   # each game's last step's rewards
    while not vg.done.all():
        active = np.flatnonzero(~vg.done)
        actions = vg.random_actions(rng)
        rewards = vg.step(actions)
        assert np.array_equal(vg.finished, vg.done & np.isin(np.arange(len(seeds)), active))
        last[vg.finished] = rewards[vg.finished]
        for i in active:
            env = envs[i]
            env.step(int(actions[i]))
            want = [env.rewards[a] for a in env.possible_agents]
            want_cum = [env._cumulative_rewards[a] for a in env.possible_agents]
            assert rewards[i].tolist() == want, (i, want, rewards[i])
            assert vg.cumulative_rewards[i].tolist() == want_cum
            assert all(env.terminations.values()) == bool(vg.done[i])
            paid += float(np.abs(rewards[i]).sum())
    assert paid > 0
    sides = Rules(num_players=players).num_sides
    if reward == "win" and episode == "game":
        side = np.array([Rules(num_players=players).side_of(s) for s in range(players)])
        won = side[None, :] == vg.winner[:, None]
        scale = vg.game_points[:, None] if skunks else 1
        final = np.where(won, scale, -scale / (sides - 1))
        if shaping == 0.0:
            assert np.array_equal(last, final)


def test_finished_games_get_zero_rewards_and_ignore_actions() -> None:
    vg = VectorGame(Rules(target=61), [3, 4], reward="points")
    rng = np.random.default_rng(0)
    while not vg.done[0]:
        vg.step(vg.random_actions(rng))
    scores = vg.scores[0].copy()
    if not vg.done[1]:
        actions = vg.random_actions(rng)
        actions[0] = -7          # ignored: game 0 is over
        rewards = vg.step(actions)
        assert rewards[0].tolist() == [0.0, 0.0]
        assert vg.scores[0].tolist() == scores.tolist()


# ------------------------------------------------------------------------------------------
# Illegal actions
# ------------------------------------------------------------------------------------------
def test_illegal_action_names_the_game_and_changes_nothing() -> None:
    rules = Rules()
    vg = VectorGame(rules, [10, 11, 12])
    mask = vg.legal_mask()
    actions = np.array([np.flatnonzero(m)[0] for m in mask])
    held = set(np.flatnonzero(mask[1]).tolist())
    bad = next(c for c in range(52) if c not in held)
    actions[1] = bad
    before = vg._st.copy()
    with pytest.raises(VectorIllegalActionError, match=r"game 1: seat \d cannot lay") as info:
        vg.step(actions)
    assert isinstance(info.value, IllegalActionError)
    assert (info.value.game, info.value.card) == (1, bad)
    assert np.array_equal(vg._st, before)
    actions[1] = 52
    with pytest.raises(VectorIllegalActionError, match="52"):
        vg.step(actions)
    with pytest.raises(ValueError, match="expected 3 actions"):
        vg.step(actions[:2])


def test_a_card_past_31_is_illegal() -> None:
    vg = VectorGame(Rules(), list(range(50)))
    rng = np.random.default_rng(5)
    found = False
    for _ in range(200):
        mask = vg.legal_mask()
        playing = (vg.phase == 1) & ~vg.done
        for i in np.flatnonzero(playing):
            seat = vg.to_act[i]
            over = [c for c in vg.hands(int(seat))[i] if not mask[i, c]]
            if over:   # held, but would pass 31
                actions = vg.random_actions(rng)
                actions[i] = over[0]
                with pytest.raises(VectorIllegalActionError, match=f"game {i}:"):
                    vg.step(actions)
                found = True
                break
        if found or vg.done.all():
            break
        vg.step(vg.random_actions(rng))
    assert found


# ------------------------------------------------------------------------------------------
# Automatic reset
# ------------------------------------------------------------------------------------------
def test_auto_reset_starts_seeded_games_and_reports_the_ended_ones() -> None:
    rules = Rules(num_players=2, target=61)
    vg = VectorGame(rules, [0, 1, 2, 3], auto_reset=True, seed_stream=123)
    stream = np.random.default_rng(123)
    rng = np.random.default_rng(9)
    shadow = VectorGame(rules, [0, 1, 2, 3])     # the same games without reset
    ended = 0
    for _ in range(400):
        actions = vg.random_actions(rng)
        shadow.step(actions)
        vg.step(actions)
        assert not vg.done.any()
        rows = np.flatnonzero(vg.finished)
        assert np.array_equal(vg.finished, shadow.finished)
        if len(rows):
            assert np.array_equal(vg.final_scores[rows], shadow.scores[rows])
            assert np.array_equal(vg.final_winner[rows], shadow.winner[rows])
            assert np.array_equal(vg.final_game_points[rows], shadow.game_points[rows])
            assert np.array_equal(vg.rewards[rows], shadow.rewards[rows])
            new_seeds = stream.integers(2**63 - 1, size=len(rows))
            fresh = VectorGame(rules, new_seeds)
            assert np.array_equal(vg.observe()[rows], fresh.observe())
            assert np.array_equal(vg.scores[rows], np.zeros((len(rows), 2)))
            shadow.reset_games(rows, new_seeds)
            ended += len(rows)
    assert ended >= 4
    assert vg.games_finished == ended


# ------------------------------------------------------------------------------------------
# Observations and masks
# ------------------------------------------------------------------------------------------
def test_observe_defaults_to_the_seat_to_act_and_seat_0_once_over() -> None:
    rules = Rules(num_players=3, target=61)
    seeds = [21, 22]
    vg = VectorGame(rules, seeds)
    games = [Game(rules, seed=s) for s in seeds]
    rng = np.random.default_rng(2)
    while not vg.done.all():
        obs = vg.observe()
        assert obs.dtype == np.float32 and obs.shape == (2, OBS_SIZE)
        for i, g in enumerate(games):
            seat = 0 if g.current_player is None else g.current_player
            assert np.array_equal(obs[i], encode(g.view(seat)))
        actions = vg.random_actions(rng)
        vg.step(actions)
        for i, g in enumerate(games):
            if g.current_player is not None:
                g.step(int(actions[i]))
    for i, g in enumerate(games):
        assert np.array_equal(vg.observe()[i], encode(g.view(0)))
    with pytest.raises(ValueError, match="seats"):
        vg.observe(np.array([0, 3]))


def test_masks_and_random_actions() -> None:
    vg = VectorGame(Rules(num_players=4), list(range(30)))
    mask = vg.legal_mask()
    assert mask.dtype == bool and mask.shape == (30, 52)
    assert (mask.sum(axis=1) == 5).all()           # 4 players: 5 cards, discard phase
    rng = np.random.default_rng(0)
    picks = np.stack([vg.random_actions(rng, mask) for _ in range(400)])
    assert mask[np.arange(30), picks].all()
    assert all(len(set(picks[:, i])) == 5 for i in range(30))   # every legal card drawn


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_play_the_same_games(threads: int) -> None:
    rules = Rules(num_players=3, target=61)
    one = VectorGame(rules, list(range(50)), auto_reset=True, seed_stream=4, reward="points")
    many = VectorGame(rules, list(range(50)), auto_reset=True, seed_stream=4, reward="points",
                      threads=threads)
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert np.array_equal(one.legal_mask(), many.legal_mask())
        assert np.array_equal(one.observe(), many.observe())
        actions = one.random_actions(rng)
        assert np.array_equal(one.step(actions), many.step(actions))
        assert np.array_equal(one._st, many._st)
        assert np.array_equal(one.finished, many.finished)
    assert one.games_finished == many.games_finished > 50
    many.close()
    with pytest.raises(ValueError, match="threads"):
        VectorGame(rules, [1], threads=0)


def test_games_from_state_rows_play_as_the_originals() -> None:
    """The public layout holds a game: rows copied with ``from_state`` (and their generators)
    play on exactly as the games they came from; bad rows and seeds are refused."""
    rules = Rules(num_players=3)
    vg = VectorGame(rules, list(range(20)))
    rng = np.random.default_rng(1)
    for _ in range(30):
        vg.step(vg.random_actions(rng))
    twin = VectorGame.from_state(rules, vg.state)
    assert twin.state is not vg.state and twin.config.tolist() == vg.config.tolist()
    twin.generators[:] = vg.generators
    for _ in range(300):
        actions = vg.random_actions(rng)
        vg.step(actions)
        twin.step(actions)
        assert np.array_equal(vg.state, twin.state)
    assert vg.done.any()
    seeded = VectorGame.from_state(rules, vg.state[:2], seeds=[5, 6])
    assert seeded.state[:, K.MTI].tolist() == [624, 624]
    with pytest.raises(ValueError, match="columns"):
        VectorGame.from_state(rules, vg.state[:, :10])
    with pytest.raises(ValueError, match="2 rows of state but 3 seeds"):
        VectorGame.from_state(rules, vg.state[:2], seeds=[1, 2, 3])


@pytest.mark.parametrize("threads", [1, 3])
def test_map_rows_covers_every_row_once(threads: int) -> None:
    vg = VectorGame(Rules(), list(range(10)), threads=threads)
    seen = np.zeros(10, int)

    def mark(a: int, b: int) -> None:
        seen[a:b] += 1
    vg.map_rows(mark)
    assert seen.tolist() == [1] * 10
    vg.map_rows(mark, 4)
    assert seen.tolist() == [2] * 4 + [1] * 6
    vg.close()


def test_state_views_are_read_only() -> None:
    vg = VectorGame(Rules(), [1])
    with pytest.raises(ValueError):
        vg.to_act[0] = 1
    with pytest.raises(ValueError):
        vg.scores[0, 0] = 100


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="first_dealer"):
        VectorGame(Rules(), [1], first_dealer=2)
    with pytest.raises(ValueError, match="reward"):
        VectorGame(Rules(), [1], reward="score")
    with pytest.raises(ValueError, match="61- or 121"):
        VectorGame(Rules(target=31), [1])
    with pytest.raises(ValueError, match="at least one"):
        VectorGame(Rules(), [])


def test_core_imports_without_numba() -> None:
    code = ("import sys, cribenv, cribenv.game, cribenv.aec, cribenv.observation, "
            "cribenv.wrappers; assert 'numba' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_docstring_examples() -> None:
    import doctest

    import cribenv.vector

    result = doctest.testmod(cribenv.vector)
    assert result.attempted >= 4 and result.failed == 0


# ------------------------------------------------------------------------------------------
# hidden(): what a seat cannot see (the asymmetric critic's input)
# ------------------------------------------------------------------------------------------
def _hidden_of(game: Game, seat: int) -> np.ndarray:
    """The expected ``hidden`` row from ``Game``: other seats' hands, crib, starter. Before
    the cut, the starter comes from a copy of the game whose seats lay away their first
    legal cards until the cut turns it."""
    row = np.zeros(HIDDEN_SIZE, np.float32)
    n = game.num_players
    for k in range(1, n):
        row[[52 * (k - 1) + c for c in game.hands[(seat + k) % n]]] = 1.0
    row[[156 + c for c in game.crib]] = 1.0
    if game.phase is Phase.DISCARD:
        ahead = game.clone()
        while ahead.phase is Phase.DISCARD:
            ahead.step(ahead.legal_actions()[0])
        starter = ahead.starter
    elif game.phase is Phase.PLAY:
        starter = game.starter
    else:
        return row
    row[208 + starter] = 1.0
    for k in range(n):
        kept = game.kept[(seat + k) % n] if game.phase is Phase.PLAY \
            else game.hands[(seat + k) % n]
        if len(kept) == 4:
            row[260 + k] = np.float32(score_hand_ids(kept, starter) / 29.0)
    if len(game.crib) == 4:
        row[264] = np.float32(score_hand_ids(game.crib, starter, is_crib=True) / 29.0)
    return row


@pytest.mark.parametrize("players", [2, 3, 4])
def test_hidden_is_the_other_hands_the_crib_and_the_starter_to_come(players: int) -> None:
    rules = Rules(num_players=players, target=61)
    seeds = list(range(40, 52))
    vg = VectorGame(rules, seeds)
    games = [Game(rules, seed=s) for s in seeds]
    rng = np.random.default_rng(players)
    checked = 0
    while not vg.done.all() and checked < 3000:
        others = rng.integers(0, players, len(seeds))
        acting, chosen = vg.hidden(), vg.hidden(others)
        for i, g in enumerate(games):
            if g.is_over:
                continue
            assert np.array_equal(acting[i], _hidden_of(g, g.current_player))
            assert np.array_equal(chosen[i], _hidden_of(g, int(others[i])))
            checked += 1
        actions = vg.random_actions(rng)
        vg.step(actions)          # hidden() left the games as they were: still equal to Game's
        for i, g in enumerate(games):
            if not g.is_over:
                g.step(int(actions[i]))
    assert checked > 500
    assert vg.hidden(rows=np.array([1])).shape == (1, HIDDEN_SIZE)
    with pytest.raises(ValueError, match="seats"):
        vg.hidden(np.full(len(seeds), players))


def test_hidden_by_hand() -> None:
    """Two players, the deal fixed by hand: seat 0 sees seat 1's hand, then the crib fills,
    and the starter is known before the cut."""
    rules = Rules()
    vg = VectorGame(rules, [5], first_dealer=1)
    g = Game(rules, seed=5, first_dealer=1)
    h = vg.hidden(np.array([0]))[0]
    assert sorted(np.flatnonzero(h[:52])) == sorted(g.hands[1])
    assert not h[52:208].any()                    # no third or fourth seat, an empty crib
    assert not h[260:].any()                      # nobody has laid away yet
    first = g.legal_actions()[0]
    vg.step([first])
    g.step(first)
    h = vg.hidden(np.array([1]))[0]               # seat 1's view: seat 0's 5 cards, the crib
    assert sorted(np.flatnonzero(h[:52])) == sorted(g.hands[0]) and h[:52].sum() == 5
    assert list(np.flatnonzero(h[156:208])) == [first]
    starter = int(np.flatnonzero(h[208:])[0])
    while g.phase is Phase.DISCARD:
        card = g.legal_actions()[0]
        vg.step([card])
        g.step(card)
    h = vg.hidden(np.array([0]))[0]
    assert g.starter == starter == int(np.flatnonzero(h[208:260])[0])
    assert h[260] * 29 == pytest.approx(score_hand_ids(g.kept[0], starter))
    assert h[261] * 29 == pytest.approx(score_hand_ids(g.kept[1], starter))
    assert h[264] * 29 == pytest.approx(score_hand_ids(g.crib, starter, is_crib=True))
    assert h[260:].any() and not h[262:264].any()


@pytest.mark.parametrize("method, shape, dtype", [("observe", (3, OBS_SIZE), np.float32),
                                                  ("legal_mask", (3, 52), np.bool_),
                                                  ("hidden", (3, HIDDEN_SIZE), np.float32)])
def test_out_buffers_are_checked_before_any_kernel_runs(method, shape, dtype) -> None:
    """A wrong buffer once corrupted the heap or wrote out of bounds: now a ValueError naming
    the shape wanted and given, and the right buffer is filled in place."""
    vg = VectorGame(Rules(), seeds=[1, 2, 3])
    call = getattr(vg, method)
    bad = [np.zeros((2, shape[1]), dtype), np.zeros((3, shape[1] + 1), dtype),
           np.zeros(shape, np.float64 if dtype is np.float32 else np.int8),
           np.zeros((shape[1], 3), dtype).T, [[0] * shape[1]] * 3]
    ro = np.zeros(shape, dtype)
    ro.flags.writeable = False
    for out in bad + [ro]:
        with pytest.raises(ValueError, match=rf"{method}\(out=...\) needs .*{shape[1]}"):
            call(out=out)
    good = np.zeros(shape, dtype)
    assert call(out=good) is good
    np.testing.assert_array_equal(good, call())
