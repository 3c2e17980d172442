"""The policies kept in results/ stay playable as ``ppo:PATH`` (weights only, numpy): each
loads and plays a whole game at a table of the size it was trained for."""

from pathlib import Path

import pytest

from agents import make_agent
from agents.arena import play_game
from agents.ppo import load_policy
from cribenv.game import Rules

ROOT = Path(__file__).resolve().parents[1]
POLICIES = sorted(ROOT.glob("results/*/policy.safetensors"))


def test_results_hold_policies():
    assert len(POLICIES) >= 10


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.parent.name)
def test_kept_policy_plays_a_game(path):
    players = int(load_policy(path).config.get("num_players", 2))
    rules = Rules(num_players=players, target=61)
    seats = [make_agent(f"ppo:{path}", seed=0)] + [make_agent("greedy")] * (players - 1)
    result = play_game(seats, rules, seed=3)
    assert result.winner is not None


def test_results_hold_records_not_code():
    """``results/`` keeps records (each README names the command and commit that made its
    numbers); the code that made them lives in ``scripts/``, tested."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    assert [f for f in tracked if f.endswith((".py", ".sh"))] == []
