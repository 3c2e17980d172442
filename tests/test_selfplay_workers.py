"""Self-play on several processes (``workers``, :mod:`train.selfplay_team`): the same results
for the same number of processes, a killed run resumed exactly, the team's minibatch gradient
equal to one process's gradient of the whole minibatch, and clear refusals."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from killed_run import kill_after_checkpoint, train_command  # noqa: E402

from agents.ppo import load_policy  # noqa: E402
from train import selfplay  # noqa: E402
from train.selfplay import train  # noqa: E402
from train.selfplay_config import SelfPlayConfig  # noqa: E402
from train.selfplay_team import Solo, check_same_weights, team  # noqa: E402

TINY = dict(n_games=8, n_steps=16, minibatch_size=64, n_epochs=2, net_arch=[16], card_dim=4,
            keep_arch=[8], keep_ctx=4, value_arch=[8], policy="keeps", throw_values=True,
            threads=1, heuristics=["random"], eval_games=0, snapshot_every=128,
            checkpoint_every=256, eval_every=512, pool_size=3, workers=2)


def tiny(**kw) -> SelfPlayConfig:
    return SelfPlayConfig(**{**TINY, "total_steps": 1024, **kw})


def _weights(policy: Path) -> list[np.ndarray]:
    p = load_policy(policy)
    return [w for layer in p.layers + [p.action] for w in layer]


def _progress(run: Path) -> str:
    lines = (run / "logs" / "progress.csv").read_text().splitlines()
    header = lines[0].split(",")
    keep = [i for i, name in enumerate(header) if name not in
            {"steps_per_s", "collect_s", "update_s", "cpu_s", "wall_s"}]
    return "\n".join(",".join(row.split(",")[i] for i in keep) for row in lines)


def test_two_workers_give_the_same_run_twice_and_a_run_of_their_own(tmp_path):
    quiet = dict(progress=False, log=lambda s: None)
    a = train(tiny(), tmp_path / "a", **quiet)
    b = train(tiny(), tmp_path / "b", **quiet)
    one = train(tiny(workers=1), tmp_path / "one", **quiet)
    assert all(np.array_equal(x, y) for x, y in zip(_weights(a), _weights(b)))
    assert _progress(tmp_path / "a") == _progress(tmp_path / "b")
    # two processes learn from the same number of decisions, from other games
    assert not all(np.array_equal(x, y) for x, y in zip(_weights(a), _weights(one)))
    rows = (tmp_path / "a" / "logs" / "progress.csv").read_text().splitlines()
    assert int(float(rows[-1].split(",")[rows[0].split(",").index("step")])) >= 1024


def test_a_killed_two_worker_run_resumes_exactly(tmp_path):
    total = 2048
    straight = tmp_path / "straight"
    train(tiny(total_steps=total), straight, progress=False, log=lambda s: None)

    run = tmp_path / "killed"   # SIGKILL to the leader only: its follower must end by itself
    killed_at = kill_after_checkpoint(train_command(run, total, TINY), run,
                                      tmp_path / "output.txt", 512)
    assert 0 < killed_at < total, "the run must be killed mid-way"

    logs: list[str] = []
    policy = train(tiny(total_steps=total), run, resume=True, progress=False, log=logs.append)
    assert any(f"at step {killed_at:,}" in line for line in logs), logs
    assert _progress(run) == _progress(straight)
    assert all(np.array_equal(x, y)
               for x, y in zip(_weights(policy), _weights(straight / "policy.safetensors")))


class _Pair(Solo):
    """Two processes' parts of a minibatch, run one after the other in this process: the
    collectives add what the two parts gave (a gradient is summed the same way)."""

    size = 2

    def __init__(self, sums: list[list[float]]) -> None:
        self.sums = iter(sums)

    def sum(self, values: list[float]) -> list[float]:
        return next(self.sums)


def test_a_team_minibatch_has_the_gradient_of_the_whole_minibatch():
    """The team's loss of each part, its gradients added, is the loss of the whole minibatch:
    its advantages normalised over all its rows, its means over all its rows."""
    torch.manual_seed(0)
    a = torch.randn(10, dtype=torch.float64) * 3 + 1
    w = torch.randn(10, dtype=torch.float64, requires_grad=True)

    def loss(whole, rows):
        adv = whole.normalized(a[rows])
        return whole.mean(adv * w[rows] ** 2)

    solo = selfplay._Whole(True)
    expected = torch.autograd.grad(loss(solo, slice(0, 10)), w)[0]
    parts = [slice(0, 4), slice(4, 10)]
    stats = [[float(len(a[p])), float(a[p].sum()), float((a[p] ** 2).sum())] for p in parts]
    total = [sum(x) for x in zip(*stats)]
    summed = torch.zeros(10, dtype=torch.float64)
    for p in parts:
        (whole,) = selfplay._Whole.epoch(_Pair([total]), [({"advantages": a[p]}, None)])
        summed += torch.autograd.grad(loss(whole, p), w)[0]
    assert torch.allclose(summed, expected, rtol=1e-12, atol=1e-12)


def test_workers_settings_are_checked_and_leave_one_process_runs_alone():
    assert "workers" not in SelfPlayConfig().fixed_settings()   # old runs keep their prints
    assert SelfPlayConfig(workers=2).fingerprint() != SelfPlayConfig().fingerprint()
    with pytest.raises(ValueError, match="n_games must be at least workers"):
        SelfPlayConfig(workers=4, n_games=2)
    with pytest.raises(ValueError, match="algorithm 'ppo' only"):
        SelfPlayConfig(workers=2, algorithm="dmc")
    with pytest.raises(ValueError, match="workers"):
        SelfPlayConfig(workers=0)
    with pytest.raises(RuntimeError, match="weights differ"):
        check_same_weights(["ab", "ab", "cd"])
    share = selfplay.games_share(SelfPlayConfig(n_games=7, workers=2), _Pair([]))
    assert share.n_games == 4   # rank 0 of 2 plays the odd game


def test_a_follower_that_fails_ends_the_run_with_a_message_naming_it():
    """A follower that dies (here: a start it cannot read) ends the leader's wait at once."""
    started = time.time()
    with pytest.raises(RuntimeError, match=r"worker 1 \(exit code 1\) failed"):
        with team(2, selfplay.follow) as crew:
            crew.share({"config": None})
            crew.sum([1.0])
    assert time.time() - started < 300
