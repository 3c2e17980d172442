"""The arena (one game, point accounting) and the tournament runner (duplicate deals,
intervals, ratings, SQLite storage and resume, command line)."""

from __future__ import annotations

import csv
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.arena import GameResult, IllegalAgentActionError, play_game
from agents.base import ViewAgent, available_agents, make_agent, register_agent
from cribenv.cli import main as cli_main
from cribenv.game import Phase, PlayerView, Rules
from cribenv.scoring import peg_points_ids, score_hand_ids
from tournament import (
    COLUMNS,
    load_report,
    parse_spec,
    proportion_estimate,
    ratio_estimate,
    run_tournament,
    schedule,
    wilson_interval,
)

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------------
# Local test agents
# --------------------------------------------------------------------------------------------

class PegGreedy(ViewAgent):
    """Keeps the 4 cards with the best mean hand over the starters; pegs greedily."""

    name = "test-peg-greedy"

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if view.phase is Phase.DISCARD:
            seen = set(view.hand) | set(view.discards)
            unseen = [c for c in range(52) if c not in seen]
            best = max(itertools.combinations(view.hand, 4),
                       key=lambda keep: sum(score_hand_ids(list(keep), s) for s in unseen))
            return next(c for c in legal if c not in best)
        series = [c for _, c in view.series]
        return max(legal, key=lambda c: (peg_points_ids(series + [c]), -c))


class PegOnly(ViewAgent):
    """Random discards; pegs greedily (a little stronger than random)."""

    name = "test-peg-only"

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if view.phase is Phase.DISCARD:
            return legal[int(self.rng.integers(len(legal)))]
        series = [c for _, c in view.series]
        return max(legal, key=lambda c: (peg_points_ids(series + [c]), -c))


register_agent("test-peg-greedy", PegGreedy)
register_agent("test-peg-only", PegOnly)


class Recorder:
    """Records the 6 cards it is dealt each hand (and the starter), playing the lowest card."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dealt: dict[int, list[int]] = {}
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1
        self.dealt = {}

    def act(self, observation: dict) -> int:
        from cribenv.observation import decode

        view = decode(observation["observation"])
        if view.phase is Phase.DISCARD and view.hand_number not in self.dealt:
            self.dealt[view.hand_number] = sorted(view.hand + view.discards)
        return int(np.flatnonzero(observation["action_mask"])[0])


# --------------------------------------------------------------------------------------------
# Intervals
# --------------------------------------------------------------------------------------------

def test_wilson_covers_a_fair_coin_about_95_percent() -> None:
    rng = np.random.default_rng(2024)
    n, reps = 100, 1000
    heads = rng.binomial(n, 0.5, size=reps)
    covered = sum(lo <= 0.5 <= hi for lo, hi in (wilson_interval(int(k), n) for k in heads))
    assert 0.92 <= covered / reps <= 0.98


def test_paired_proportion_covers_a_fair_coin_about_95_percent() -> None:
    # 50 duplicate units of 2 coin flips each: independent, and negatively correlated (as
    # duplicate deals make them); the unit-based interval must keep ~95% coverage in both.
    rng = np.random.default_rng(7)
    units, reps = 50, 1000
    for correlated in (False, True):
        covered = 0
        widths = []
        for _ in range(reps):
            first = rng.random(units) < 0.5
            second = rng.random(units) < 0.5
            if correlated:
                second = np.where(rng.random(units) < 0.6, ~first, second)
            est = proportion_estimate(first.astype(int) + second, np.full(units, 2))
            covered += est.low <= 0.5 <= est.high
            widths.append(est.high - est.low)
        assert 0.92 <= covered / reps <= 0.98, (correlated, covered)
        if correlated:
            # the pairing is used: narrower than the unpaired interval over 100 games
            lo, hi = wilson_interval(50, 100)
            assert np.mean(widths) < 0.8 * (hi - lo)


def test_ratio_estimate_covers_the_true_rate() -> None:
    rng = np.random.default_rng(11)
    covered = 0
    reps = 1000
    for _ in range(reps):
        hands = rng.integers(16, 30, size=40)           # hands per unit
        points = rng.poisson(9.0 * hands)               # true rate 9 points per hand
        est = ratio_estimate(points, hands)
        covered += est.low <= 9.0 <= est.high
    assert 0.92 <= covered / reps <= 0.98


def test_degenerate_intervals() -> None:
    assert proportion_estimate([2, 2, 2], [2, 2, 2]).low < 1.0   # all wins: Wilson, not [1, 1]
    assert proportion_estimate([2, 2, 2], [2, 2, 2]).high == 1.0
    one = ratio_estimate([5.0], [2.0])
    assert one.value == 2.5 and np.isnan(one.low)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0.2 < hi < 0.35


# --------------------------------------------------------------------------------------------
# The arena
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rules", [
    Rules(), Rules(target=61), Rules(must_peg_out_exactly=True),
    Rules(num_players=3), Rules(num_players=4),
], ids=["121", "61", "exact", "3p", "4p"])
def test_point_splits_sum_to_the_scores(rules: Rules) -> None:
    n = rules.num_players
    for seed in range(25):
        bots = [make_agent("random", seed=100 * seed + s) for s in range(n)]
        res = play_game(bots, rules, seed=seed, first_dealer=seed % n)
        for side in range(rules.num_sides):
            seats = [s for s in range(n) if rules.side_of(s) == side]
            assert sum(res.points(s) for s in seats) == res.scores[side]
        assert res.winner is not None and res.scores[res.winner] >= rules.target
        if rules.must_peg_out_exactly:
            assert res.scores[res.winner] == rules.target
        assert max(s for i, s in enumerate(res.scores) if i != res.winner) < rules.target
        assert res.first_dealer == seed % n
        assert sum(res.hands_as_dealer) == res.hands and res.hands_dealt == [res.hands] * n
        assert res.game_points in (1, 2, 3)
        assert GameResult.from_dict(json.loads(res.to_json())) == res


def test_play_game_resets_agents_and_is_deterministic() -> None:
    a, b = Recorder("a"), Recorder("b")
    first = play_game([a, b], Rules(), seed=3, first_dealer=1)
    assert a.resets == b.resets == 1
    second = play_game([a, b], Rules(), seed=3, first_dealer=1)
    assert a.resets == 2 and first == second
    assert first.agents == ["a", "b"] and first.seed == 3


def test_illegal_card_names_the_agent() -> None:
    class Cheat:
        name = "cheater"

        def act(self, observation: dict) -> int:
            legal = set(np.flatnonzero(observation["action_mask"]).tolist())
            return next(c for c in range(52) if c not in legal)

    with pytest.raises(IllegalAgentActionError, match="cheater.*seat 1") as info:
        play_game([make_agent("random", seed=0), Cheat()], Rules(), seed=0, first_dealer=0)
    assert info.value.agent == "cheater" and info.value.seat == 1
    with pytest.raises(ValueError, match="needs 2 agents"):
        play_game([Cheat()], Rules(), seed=0)


# --------------------------------------------------------------------------------------------
# Duplicate deals
# --------------------------------------------------------------------------------------------

def test_schedule_is_a_duplicate_round_robin() -> None:
    tasks = schedule(["a=random", "b=random", "c=random"], 8, seed=5)
    assert len(tasks) == 3 * 8
    assert len({t.key for t in tasks}) == len(tasks)
    units: dict[tuple, list] = {}
    for t in tasks:
        units.setdefault((t.agent_a.label, t.agent_b.label, t.deal), []).append(t)
    for (a, b, deal), (s0, s1) in units.items():
        assert (s0.seating, s1.seating) == (0, 1)
        assert s0.game_seed == s1.game_seed and s0.first_dealer == s1.first_dealer == deal % 2
        assert [x.label for x in s0.seats] == [a, b] and [x.label for x in s1.seats] == [b, a]
        # each agent deals first in exactly one of the two games of the unit
        assert s0.seats[s0.first_dealer] != s1.seats[s1.first_dealer]
    # the same deals for every pair (common random numbers), different deals across deals
    seeds = {(t.deal, t.game_seed) for t in tasks}
    assert len(seeds) == 4 and len({s for _, s in seeds}) == 4


def test_both_seatings_deal_each_agent_the_same_cards() -> None:
    for task0, task1 in zip(*[iter(schedule(["a=random", "b=random"], 6, seed=1))] * 2):
        assert task0.deal == task1.deal
        played = {}
        for task in (task0, task1):
            recs = [Recorder(s.label) for s in task.seats]
            res = play_game(recs, Rules(), seed=task.game_seed, first_dealer=task.first_dealer,
                            names=[s.label for s in task.seats])
            played[task.seating] = ({r.name: r.dealt for r in recs}, res)
        (deals0, res0), (deals1, res1) = played[0], played[1]
        common = min(res0.hands, res1.hands)
        assert common >= 5
        for hand in range(common):
            # the seat of A in seating 0 is the seat of B in seating 1: same cards, same role
            assert deals0["a"][hand] == deals1["b"][hand]
            assert deals0["b"][hand] == deals1["a"][hand]
            assert deals0["a"][hand] != deals0["b"][hand]


# --------------------------------------------------------------------------------------------
# The runner, the database and resume
# --------------------------------------------------------------------------------------------

def _rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT {', '.join(COLUMNS)} FROM games "
                            "ORDER BY agent_a, agent_b, deal, seating").fetchall()
    finally:
        conn.close()


def _count(db: Path) -> int:
    try:
        conn = sqlite3.connect(db, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _comparable(report) -> dict:
    d = report.to_dict()
    for key in ("db_path", "games_this_run", "elapsed_s", "games_per_s", "think_ms_per_decision"):
        d.pop(key)
    return d


def test_resume_after_kill_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "killed.sqlite"
    agents = ["random", "r2=random"]
    games = 400
    cmd = [sys.executable, "-m", "cribenv.cli", "tournament", "--agents", *agents,
           "--games", str(games), "--workers", "2", "--db", str(db), "--no-progress",
           "--bootstrap", "0"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while _count(db) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)   # the run and its workers, mid-game
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    partial = _count(db)
    assert 40 <= partial < games

    resumed = run_tournament(agents, games, workers=2, db_path=db, progress=False,
                             bootstrap=50)
    assert resumed.games_this_run == games - partial
    rows = _rows(db)
    keys = [r[:4] for r in rows]
    expected = {("random", "r2", d, s) for d in range(games // 2) for s in (0, 1)}
    assert len(keys) == len(set(keys)) == games and set(keys) == expected

    clean_db = tmp_path / "clean.sqlite"
    clean = run_tournament(agents, games, workers=1, db_path=clean_db, progress=False,
                           bootstrap=50)
    assert _rows(clean_db) == rows                      # identical games, any scheduling
    assert _comparable(clean) == _comparable(resumed)
    again = run_tournament(agents, games, workers=2, db_path=db, progress=False, bootstrap=50)
    assert again.games_this_run == 0 and len(_rows(db)) == games


def test_resume_with_other_settings_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    run_tournament(["random", "r2=random"], 2, workers=1, db_path=db, seed=3, progress=False,
                   bootstrap=0)
    with pytest.raises(ValueError, match="different settings.*games_per_pair: stored 2"):
        run_tournament(["random", "r2=random"], 4, workers=1, db_path=db, seed=3,
                       progress=False)
    with pytest.raises(ValueError, match="seed: stored 3, requested 4"):
        run_tournament(["random", "r2=random"], 2, workers=1, db_path=db, seed=4,
                       progress=False)
    with pytest.raises(ValueError, match="rules"):
        run_tournament(["random", "r2=random"], 2, workers=1, db_path=db, seed=3,
                       rules=Rules(target=61), progress=False)
    assert len(_rows(db)) == 2


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "x.sqlite"
    with pytest.raises(ValueError, match="even"):
        run_tournament(["random", "r2=random"], 3, db_path=db, progress=False)
    with pytest.raises(ValueError, match="entered twice"):
        run_tournament(["random", "random"], 2, db_path=db, progress=False)
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        run_tournament(["random", "nope"], 2, db_path=db, progress=False)
    with pytest.raises(ValueError, match="at least 2"):
        run_tournament(["random"], 2, db_path=db, progress=False)
    assert parse_spec("best=ppo:runs/a.pt").label == "best"
    assert parse_spec("ppo:runs/a=b.pt").label == "ppo:runs/a=b.pt"


def test_ratings_order_stronger_agents_above_random(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    rep = run_tournament(["random", "peg=test-peg-only", "greedy=test-peg-greedy"], 40,
                         workers=1, db_path=db, progress=False, bootstrap=200)
    assert rep.complete and rep.games == 120 and not rep.notes
    pair = rep.pair("random", "greedy")
    assert pair.games == 40 and pair.units == 20 and pair.wins_a + pair.wins_b == 40
    assert pair.win_rate_a.high < 0.5 and pair.net_points_a.high < 0
    greedy, peg, rnd = rep.rating("greedy"), rep.rating("peg"), rep.rating("random")
    assert rnd.rating == rnd.low == rnd.high == 0.0 and rep.anchor == "random = 0"
    assert greedy.rating > peg.rating > rnd.rating
    assert greedy.low > 0 and greedy.low <= greedy.rating <= greedy.high < float("inf")
    assert pair.per_hand["greedy"]["hand"].low > pair.per_hand["random"]["hand"].high
    for who in ("random", "greedy"):
        d = pair.per_hand[who]
        assert d["pegging"].value + d["hand"].value + d["crib"].value == pytest.approx(
            d["total"].value)
    # the mean anchor
    again = load_report(db, bootstrap=0, anchor="mean")
    assert np.mean([r.rating for r in again.ratings]) == pytest.approx(1500)
    assert again.rating("greedy").rating - again.rating("random").rating == pytest.approx(
        greedy.rating)


def test_a_perfect_record_leaves_the_rating_open(tmp_path: Path) -> None:
    rep = run_tournament(["random", "greedy=test-peg-greedy"], 20, workers=1,
                         db_path=tmp_path / "p.sqlite", progress=False, bootstrap=50)
    assert rep.pair("random", "greedy").wins_a == 0
    assert rep.rating("greedy").high == float("inf") and rep.rating("greedy").rating > 0
    assert rep.notes and "greedy won all 20 games against random" in rep.notes[0]
    assert rep.to_dict()["ratings"][1]["high"] == "inf"
    assert "+inf" in rep.format()
    rep.plot(tmp_path / "p.png")
    assert wilson_interval(400, 400)[1] == 1.0 and wilson_interval(0, 400)[0] == 0.0
    # the winner listed first: a win rate of exactly 1 (its interval's top may round below it)
    won = run_tournament(["greedy=test-peg-greedy", "random"], 20, workers=1,
                         db_path=tmp_path / "w.sqlite", progress=False, bootstrap=0)
    assert won.pair("greedy", "random").win_rate_a.value == 1.0
    won.plot(tmp_path / "w.png")
    assert (tmp_path / "w.png").stat().st_size > 0


@pytest.mark.skipif("greedy" not in available_agents(), reason="agents.greedy not registered")
def test_greedy_beats_random(tmp_path: Path) -> None:
    rep = run_tournament(["random", "greedy"], 20, workers=1, db_path=tmp_path / "g.sqlite",
                         progress=False, bootstrap=100)
    assert rep.rating("greedy").rating > 0
    assert rep.pair("random", "greedy").win_rate_a.value < 0.5


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def test_cli_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main(["tournament", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--agents", "--games", "--workers", "--db", "--seed", "--target", "--out"):
        assert option in out


def test_cli_tiny_run_writes_plot_json_csv(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = ["tournament", "--agents", "random", "peg=test-peg-greedy", "r3=random",
            "--games", "4", "--workers", "1", "--db", str(tmp_path / "c.sqlite"),
            "--target", "61", "--out", str(out), "--no-progress", "--bootstrap", "20"]
    assert cli_main(argv) == 0
    text = capsys.readouterr().out
    assert "random vs peg" in text and "Ratings" in text
    assert (out / "tournament.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "tournament.json").read_text())
    assert data["agents"] == ["random", "peg", "r3"] and len(data["pairs"]) == 3
    assert data["rules"]["target"] == 61 and data["games"] == 12
    with open(out / "tournament.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["agent_a"], r["agent_b"]) for r in rows] == [
        ("random", "peg"), ("random", "r3"), ("peg", "r3")]
    assert all(r["games"] == "4" for r in rows)
    # an odd game count is a clear command-line error
    assert cli_main(["tournament", "--agents", "random", "r2=random", "--games", "3",
                     "--db", str(tmp_path / "d.sqlite"), "--no-progress"]) == 2
    assert "even" in capsys.readouterr().err


def test_cli_default_db_is_named_from_the_tournament(tmp_path: Path, monkeypatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    tiny = ["--games", "2", "--workers", "1", "--no-progress", "--bootstrap", "0"]
    assert cli_main(["tournament", "--agents", "random", "greedy", *tiny]) == 0
    first = capsys.readouterr()
    # another tournament in the same folder gets its own file: no "resuming", no refusal
    assert cli_main(["tournament", "--agents", "random", "expert", *tiny]) == 0
    second = capsys.readouterr()
    assert "resuming" not in first.err + second.err
    dbs = sorted(p.name for p in (tmp_path / "tournaments").glob("*.sqlite"))
    assert len(dbs) == 2 and dbs[0].startswith("random_expert-2g-") and \
        dbs[1].startswith("random_greedy-2g-")
    # without --out, the plot, JSON and CSV are written next to the database, named like it
    for name in dbs:
        stem = tmp_path / "tournaments" / name[: -len(".sqlite")]
        for suffix in (".png", ".json", ".csv"):
            assert stem.with_suffix(suffix).is_file(), suffix
            assert str(stem.relative_to(tmp_path).with_suffix(suffix)) in \
                first.out + second.out
    # the same tournament again resumes from its own file; a new seed is a new file
    assert cli_main(["tournament", "--agents", "random", "greedy", *tiny]) == 0
    again = capsys.readouterr()
    assert "all 2 games were already in tournaments/random_greedy-2g-" in again.out
    assert cli_main(["tournament", "--agents", "random", "greedy", "--seed", "1", *tiny]) == 0
    assert len(list((tmp_path / "tournaments").glob("*.sqlite"))) == 3


def test_cli_named_db_keeps_resume_and_writes_its_report_next_to_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "mine.sqlite"
    tiny = ["--games", "2", "--workers", "1", "--no-progress", "--bootstrap", "0"]
    assert cli_main(["tournament", "--agents", "random", "greedy", "--db", str(db), *tiny]) == 0
    assert all((tmp_path / f"mine{s}").is_file() for s in (".png", ".json", ".csv"))
    capsys.readouterr()
    assert cli_main(["tournament", "--agents", "random", "expert", "--db", str(db), *tiny]) == 2
    err = capsys.readouterr().err
    assert "different settings" in err and "resuming" not in err


def test_cli_ppo_spec_hints_name_a_safetensors_policy(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        cli_main(["tournament", "--help"])
    text = capsys.readouterr().out
    assert "ppo:runs/mine/policy.safetensors" in text and ".pt " not in text
    assert cli_main(["tournament", "--agents", "ppo", "greedy",
                     "--db", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert ".safetensors" in err and ".pt" not in err.replace(".safetensors", "")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_exit_when_the_tournament_is_killed(tmp_path):
    """``kill -9`` of the tournament once left both pool workers alive forever."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def children(pid):
        out = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(stat.parent.name))
        return out

    cli = str(Path(sys.executable).parent / "cribenv")
    proc = subprocess.Popen([cli, "tournament", "--agents", "expert", "greedy", "--games",
                             "2000", "--workers", "2", "--db", str(tmp_path / "t.sqlite"),
                             "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = children(proc.pid)
        assert len(workers) >= 2, "the pool did not start"
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        alive = workers
        while time.monotonic() < deadline and alive:
            time.sleep(0.2)
            alive = [w for w in alive if Path(f"/proc/{w}").exists()
                     and "Z" not in Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1][:3]]
        assert not alive, f"workers {alive} outlived the tournament"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_time_each_agent_takes_to_decide_is_recorded_beside_the_games(tmp_path):
    """Every game's think times (seconds and decisions asked, per seat) go to their own table,
    so the games stay machine-independent; the report gives ms per decision asked. A database
    written before the table existed still reports, with no times."""
    import sqlite3

    from tournament import load_report, run_tournament

    db = tmp_path / "t.sqlite"
    report = run_tournament(["random", "expert"], 4, db_path=db, progress=False, bootstrap=0)
    assert set(report.think_ms) == {"random", "expert"}
    assert all(ms > 0 for ms in report.think_ms.values())
    assert "Time to decide, ms per decision asked" in report.format()
    with sqlite3.connect(db) as conn:
        times = conn.execute("SELECT asked0, asked1, seconds0, seconds1 FROM think_times"
                             ).fetchall()
        decisions = conn.execute("SELECT decisions FROM games ORDER BY deal, seating").fetchall()
    assert len(times) == 4 and all(a0 > 0 and a1 > 0 and s0 > 0 and s1 > 0
                                   for a0, a1, s0, s1 in times)
    assert sum(a0 + a1 for a0, a1, _, _ in times) <= sum(d for (d,) in decisions)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE think_times")
    old = load_report(db, bootstrap=0)
    assert old.think_ms == {} and old.games == 4
    assert old.to_dict()["pairs"] == report.to_dict()["pairs"]


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_each_worker_runs_blas_on_one_thread():
    """Workers share the cores: a BLAS pool of each one's own would fight the others."""
    import concurrent.futures as cf

    from threadpoolctl import threadpool_limits

    from tournament.workers import init_worker

    with threadpool_limits(2), cf.ProcessPoolExecutor(1, initializer=init_worker) as pool:
        threads = pool.submit(_blas_threads).result()
    assert threads and set(threads) == {1}, threads
