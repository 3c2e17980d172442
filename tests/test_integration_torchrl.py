"""TorchRL (cribenv.integrations.torchrl): a mask every seat can sample from, rewards paid on a
seat's own rows (and the final row), and a masked categorical policy that trains."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="the 'integrations' extra (torchrl) is not installed")
torch = pytest.importorskip("torch")

from pettingzoo.utils.conversions import turn_based_aec_to_parallel  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import cribenv  # noqa: E402
from cribenv.integrations.torchrl import GROUP, TurnMaskWrapper, make_env, masked_policy  # noqa: E402,E501

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested")


def rollout_games(rewards: str, seed: int = 0, steps: int = 170):
    """About two games to 61 (TorchRL steps one agent at a time, some 10 ms a step)."""
    env = make_env(target=61, reward="points", rewards=rewards)
    env.set_seed(seed)
    torch.manual_seed(seed)
    with torch.no_grad():
        data = env.rollout(steps, masked_policy(env), break_when_any_done=False)
    return data


@pytest.fixture(scope="module")
def on_turn():
    return rollout_games("on_turn")


def test_specs_check_and_every_row_has_a_valid_mask(on_turn):
    check_env_specs(make_env(target=61))
    per_agent = make_env(target=61, shared=False)        # TorchRL's default: a group per agent
    check_env_specs(per_agent)
    assert set(per_agent.group_map) == {"player_0", "player_1"}
    data = on_turn
    for key in [(GROUP, "action_mask"), ("next", GROUP, "action_mask")]:
        assert data[key].any(-1).all(), key    # no all-zero mask anywhere, the end included
    acting = data[GROUP, "mask"]
    assert (acting.sum(-1) == 1).all()         # one seat acts per row (AEC)
    assert data["next", "done"].sum() >= 1     # the rollout crossed a game's end


def test_on_turn_rewards_sit_on_own_rows_or_the_final_row_and_add_up(on_turn):
    data = on_turn
    reward = data["next", GROUP, "reward"].squeeze(-1)
    acting = data[GROUP, "mask"]
    done = data["next", "done"].squeeze(-1)
    waiting_paid = (reward != 0) & ~acting & ~done[:, None]
    assert not waiting_paid.any()
    # per game the seats' rewards are zero-sum, and the final row pays both seats
    ends = torch.nonzero(done).flatten().tolist()
    start = 0
    for end in ends:
        totals = reward[start:end + 1].sum(0)
        assert totals.sum().item() == pytest.approx(0.0) and totals[0].item() != 0.0
        assert (reward[end] != 0).all()
        start = end + 1
    assert ends


def test_as_scored_rewards_arrive_while_masked_out():
    """What the on_turn timing fixes: with the env's own timing a seat is paid on rows where
    it is masked out (the opponent's cards, the show), which a masked loss would drop."""
    data = rollout_games("as_scored", steps=60)
    reward = data["next", GROUP, "reward"].squeeze(-1)
    acting = data[GROUP, "mask"]
    done = data["next", "done"].squeeze(-1)
    assert ((reward != 0) & ~acting & ~done[:, None]).sum() >= 10


def test_turn_based_parallel_masks_are_never_empty():
    """The path of the issue: through turn_based_aec_to_parallel every seat's mask is used."""
    par = turn_based_aec_to_parallel(TurnMaskWrapper(cribenv.env(target=61)))
    bare = turn_based_aec_to_parallel(cribenv.env(target=61))
    obs, _ = par.reset(seed=0)
    bare_obs, _ = bare.reset(seed=0)
    assert not all(o["action_mask"].any() for o in bare_obs.values())   # the problem
    assert all(o["action_mask"].any() for o in obs.values())             # fixed
    logits = torch.zeros(52)
    for _ in range(40):
        actions = {}
        for agent, o in obs.items():
            mask = torch.as_tensor(o["action_mask"], dtype=torch.bool)
            dist = torch.distributions.Categorical(
                logits=logits.masked_fill(~mask, float("-inf")), validate_args=True)
            actions[agent] = int(dist.sample())
        obs, *_ = par.step(actions)
        if not obs:
            break


def test_the_wrapper_is_the_core_one():
    """TurnMaskWrapper lives in the torch-free core (tests/test_turn_mask.py tests it there,
    its options included); this module re-exports it."""
    import cribenv.turn_mask

    assert TurnMaskWrapper is cribenv.turn_mask.TurnMaskWrapper
    env = make_env(target=61, idle_mask="zeros", rewards="as_scored")
    aec = env._env
    assert isinstance(aec, TurnMaskWrapper)
    assert (aec.idle_mask, aec.reward_timing) == ("zeros", "as_scored")


@pytest.mark.slow
def test_the_example_trains_a_masked_policy():
    spec = importlib.util.spec_from_file_location("torchrl_selfplay", ROOT / "examples" /
                                                  "torchrl_selfplay.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["torchrl_selfplay"] = module
    spec.loader.exec_module(module)
    out = module.main(["--iterations", "2", "--steps", "128", "--games", "2"])
    assert np.isfinite(out["policy_loss"]) and np.isfinite(out["value_loss"])
    assert out["entropy"] > 0 and 0 <= out["win_rate"] <= 1


def test_returns_to_go_by_hand():
    spec = importlib.util.spec_from_file_location("torchrl_selfplay", ROOT / "examples" /
                                                  "torchrl_selfplay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reward = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, -1.0], [5.0, 0.0]])
    done = torch.tensor([False, False, True, False])
    ret = module.returns_to_go(reward, done)
    assert ret.tolist() == [[4.0, 1.0], [3.0, 1.0], [3.0, -1.0], [5.0, 0.0]]
