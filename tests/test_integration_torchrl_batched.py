"""TorchRL on the batched engine (cribenv.integrations.torchrl_batched): specs that check, legal
cards from a masked policy, rewards that add up to each game's result, done rows kept until
``"_reset"``, a short PPO run in both forms, and the speed against the AEC route."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="the 'integrations' extra (torchrl) is not installed")
pytest.importorskip("numba", reason="the 'vector' extra (numba) is not installed")
torch = pytest.importorskip("torch")

from tensordict import TensorDict  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torchrl.envs import StepCounter, TransformedEnv  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor  # noqa: E402
from torchrl.objectives import ClipPPOLoss, ValueEstimators  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

from cribenv.integrations.torchrl import make_env, masked_policy  # noqa: E402
from cribenv.integrations.torchrl_batched import (  # noqa: E402
    GROUP,
    BatchedCribbageEnv,
    SelfPlayCribbageEnv,
)
from cribenv.observation import OBS_SIZE  # noqa: E402

with warnings.catch_warnings():   # torchrl 0.14's collectors warn about their own classes
    warnings.simplefilter("ignore", DeprecationWarning)
    from torchrl.collectors import Collector

pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested")


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def random_logits_policy(group: str | None = None) -> ProbabilisticActor:
    """A ``MaskedCategorical`` over the ``action_mask`` (of ``group``) with random normal
    logits."""
    prefix = () if group is None else (group,)
    logits, mask = (*prefix, "logits"), (*prefix, "action_mask")
    module = TensorDictModule(lambda m: torch.randn(m.shape), in_keys=[mask], out_keys=[logits])
    return ProbabilisticActor(module, in_keys={"logits": logits, "mask": mask},
                              out_keys=[(*prefix, "action")],
                              distribution_class=MaskedCategorical)


def side_of(seat: int, players: int) -> int:
    return seat % 2 if players == 4 else seat


def expected_points(scores: torch.Tensor, side: int) -> float:
    """The ``reward="points"`` total of a side: its score less the mean of the others'."""
    own = float(scores[side])
    return own - (float(scores.sum()) - own) / (len(scores) - 1)


# ------------------------------------------------------------------------------ specs
@pytest.mark.parametrize("players", [2, 3, 4])
def test_check_env_specs_passes_for_both_forms(players):
    single = BatchedCribbageEnv(num_envs=3, num_players=players, target=61, seed=0)
    check_env_specs(single, break_when_any_done="both")
    selfplay = SelfPlayCribbageEnv(num_envs=3, num_players=players, target=61, seed=0)
    check_env_specs(selfplay, break_when_any_done="both")
    assert single.batch_size == selfplay.batch_size == torch.Size([3])
    assert single.observation_spec["observation"].shape == (3, OBS_SIZE)
    assert single.action_spec.mask.shape == (3, 52)     # Categorical(52, mask=...)
    assert selfplay.action_key == (GROUP, "action")
    assert selfplay.observation_spec[GROUP].shape == (3, players)
    assert (GROUP, "done") in selfplay.done_keys and "done" in selfplay.done_keys


def test_a_bot_opponent_and_bad_arguments():
    env = BatchedCribbageEnv(num_envs=3, opponent="greedy", target=61, reward="points", seed=0)
    check_env_specs(env)
    data = env.rollout(30, random_logits_policy(), break_when_any_done=False)
    assert data["action_mask"].gather(-1, data["action"].unsqueeze(-1)).all()
    env.close()
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="num_envs"):
            BatchedCribbageEnv(num_envs=bad)
        with pytest.raises(ValueError, match="num_envs"):
            SelfPlayCribbageEnv(num_envs=bad)
    with pytest.raises(ValueError, match="reward"):
        SelfPlayCribbageEnv(num_envs=2, reward="score")


def test_rand_action_follows_the_mask():
    """The action spec's mask is the env's ``action_mask`` after every reset and step, so a
    random rollout (``rand_action``) lays only legal cards (the engine raises otherwise)."""
    for env in (BatchedCribbageEnv(num_envs=8, target=61, seed=1),
                SelfPlayCribbageEnv(num_envs=8, target=61, seed=1)):
        data = env.rollout(60, break_when_any_done=False)
        key = env.action_key
        mask_key = "action_mask" if key == "action" else (GROUP, "action_mask")
        assert data[mask_key].gather(-1, data[key].unsqueeze(-1)).all()


# ------------------------------------------------------------------------------ masks
def test_masked_categorical_rollout_lays_legal_cards():
    env = BatchedCribbageEnv(num_envs=16, target=61, reward="points", seed=2)
    torch.manual_seed(0)
    data = env.rollout(80, random_logits_policy(), break_when_any_done=False)
    assert data["action_mask"].gather(-1, data["action"].unsqueeze(-1)).all()
    assert data["action_mask"].any(-1).all()
    done = data["next", "done"].squeeze(-1)
    assert done.any()
    assert data["next", "action_mask"][done].all()          # finished: all ones, ignored
    live = data["action_mask"][~data["done"].squeeze(-1)]
    assert (live.sum(-1) <= 6).all()                        # the learner's own cards

    sp = SelfPlayCribbageEnv(num_envs=16, target=61, reward="points", seed=2)
    data = sp.rollout(80, random_logits_policy(GROUP), break_when_any_done=False)
    turn = data[GROUP, "mask"]
    alive = ~data["done"].squeeze(-1)
    assert (turn.sum(-1) == alive.long()).all()             # one seat acts in each game
    acted = data[GROUP][turn]
    assert acted["action_mask"].gather(-1, acted["action"].unsqueeze(-1)).all()
    assert (acted["action_mask"].sum(-1) <= 6).all()
    assert data[GROUP, "action_mask"][~turn].all()          # the seats that wait: all ones


# ------------------------------------------------------------------------------ rewards
def learner_games(data):
    """Per finished game of a single-agent rollout ``[N, T]``: (rewards summed, the learner's
    side's final scores row, the learner's seat)."""
    reward = data["next", "reward"].squeeze(-1)
    done = data["next", "done"].squeeze(-1)
    games = []
    for row in range(reward.shape[0]):
        start = 0
        for t in torch.nonzero(done[row]).flatten().tolist():
            games.append((float(reward[row, start:t + 1].sum()), data["next", "scores"][row, t],
                          int(data["next", "learner_seat"][row, t])))
            start = t + 1
    return games


@pytest.mark.parametrize("players", [2, 3])
def test_points_add_up_to_the_learners_score_difference(players):
    env = BatchedCribbageEnv(num_envs=16, num_players=players, target=61, reward="points",
                             seed=3)
    torch.manual_seed(3)
    data = env.rollout(120, random_logits_policy(), break_when_any_done=False)
    games = learner_games(data)
    assert len(games) >= 16
    for total, scores, seat in games:
        assert max(scores.tolist()) >= 61
        assert total == pytest.approx(expected_points(scores, side_of(seat, players)))


def test_win_rewards_are_plus_or_minus_one_at_the_end():
    env = BatchedCribbageEnv(num_envs=16, target=61, reward="win", seed=4)
    torch.manual_seed(4)
    data = env.rollout(100, random_logits_policy(), break_when_any_done=False)
    reward = data["next", "reward"].squeeze(-1)
    done = data["next", "done"].squeeze(-1)
    assert (reward[~done] == 0).all()                       # paid only at the end
    games = learner_games(data)
    assert len(games) >= 16
    for total, scores, seat in games:
        won = int(scores.argmax()) == seat
        assert total == (1.0 if won else -1.0)


@pytest.mark.parametrize("reward", ["points", "win"])
def test_selfplay_credits_each_seat_its_own_rewards(reward):
    env = SelfPlayCribbageEnv(num_envs=12, target=61, reward=reward, seed=5)
    torch.manual_seed(5)
    data = env.rollout(200, random_logits_policy(GROUP), break_when_any_done=False)
    rewards = data["next", GROUP, "reward"].squeeze(-1)      # [N, T, seats]
    done = data["next", "done"].squeeze(-1)
    assert (data["next", GROUP, "done"].squeeze(-1) == done.unsqueeze(-1)).all()
    # points reach the seat that waits too (its opponent's Go, the show): credited to it
    assert ((rewards != 0) & ~data[GROUP, "mask"] & ~done.unsqueeze(-1)).any() \
        or reward == "win"
    finished = 0
    for row in range(done.shape[0]):
        start = 0
        for t in torch.nonzero(done[row]).flatten().tolist():
            totals = rewards[row, start:t + 1].sum(0)
            scores = data["next", "scores"][row, t]
            for seat in range(2):
                want = expected_points(scores, seat) if reward == "points" else \
                    (1.0 if int(scores.argmax()) == seat else -1.0)
                assert float(totals[seat]) == pytest.approx(want)
            finished += 1
            start = t + 1
    assert finished >= 12


# ------------------------------------------------------------------------------ resets
def test_done_rows_stay_done_until_reset_and_reset_starts_a_new_game():
    env = BatchedCribbageEnv(num_envs=4, target=61, reward="points", seed=6)
    td = env.reset()
    while not td["done"].any():
        td = env.step(env.rand_action(td))["next"]
    ended = td["done"].squeeze(-1)
    final_obs = td["observation"][ended].clone()
    again = env.step(env.rand_action(td))["next"]            # stepped without a reset
    assert again["done"][ended].all() and (again["reward"][ended] == 0).all()
    assert torch.equal(again["observation"][ended], final_obs)
    fresh = env.reset(TensorDict({"_reset": ended.unsqueeze(-1), **td.select(
        "done", "terminated", "truncated").to_dict()}, batch_size=[4]))
    assert not fresh["done"].any()
    assert (fresh["scores"][ended] == 0).all()


def test_step_counter_truncation_restarts_live_games():
    """``StepCounter`` truncates live games: the ``"_reset"`` of a game still playing starts a
    new one in its row."""
    env = TransformedEnv(SelfPlayCribbageEnv(num_envs=4, target=61, seed=7),
                         StepCounter(max_steps=10))
    data = env.rollout(35, random_logits_policy(GROUP), break_when_any_done=False)
    truncated = data["next", "truncated"].squeeze(-1)
    assert truncated[:, 9].all() and truncated[:, 19].all()
    assert (data["scores"][:, 10] == 0).all() and (data["step_count"][:, 10] == 0).all()


def test_rollout_until_all_done_steps_only_the_live_games():
    """``break_when_all_done``: partial steps (``"_step"``) leave the finished games alone."""
    env = BatchedCribbageEnv(num_envs=4, target=61, reward="points", seed=8)
    data = env.rollout(400, random_logits_policy(), break_when_any_done=False,
                       break_when_all_done=True)
    done = data["next", "done"].squeeze(-1)
    assert done[:, -1].all() and data.shape[1] < 400
    reward = data["next", "reward"].squeeze(-1)
    for row in range(4):
        end = int(torch.nonzero(done[row])[0])                 # the row's one game
        scores = data["next", "scores"][row, end]
        seat = int(data["next", "learner_seat"][row, end])
        assert float(reward[row, :end + 1].sum()) == pytest.approx(
            expected_points(scores, seat))


def test_set_seed_replays_the_same_games():
    env = SelfPlayCribbageEnv(num_envs=4, target=61, seed=0)
    env.set_seed(11)
    first = env.reset()[GROUP, "observation"].clone()
    env.set_seed(11)
    assert torch.equal(env.reset()[GROUP, "observation"], first)
    single = BatchedCribbageEnv(num_envs=4, target=61)
    single.set_seed(11)
    a = single.reset().clone()
    single.set_seed(11)
    b = single.reset()
    assert torch.equal(a["observation"], b["observation"])
    assert torch.equal(a["learner_seat"], b["learner_seat"])


# ------------------------------------------------------------------------------ training
def critic(in_key, out_key) -> TensorDictModule:
    net = torch.nn.Sequential(torch.nn.Linear(OBS_SIZE, 64), torch.nn.Tanh(),
                              torch.nn.Linear(64, 1))
    return TensorDictModule(net, in_keys=[in_key], out_keys=[out_key])


GROUP_KEYS = dict(reward=(GROUP, "reward"), done=(GROUP, "done"),
                  terminated=(GROUP, "terminated"), value=(GROUP, "state_value"),
                  advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"))


def test_gae_with_the_group_keys_runs_along_each_seats_row():
    """With gamma = lambda = 1, GAE on the group's keys is each seat's own return to the end
    of its game (or the value of its view where the rollout cuts the game) less its value."""
    torch.manual_seed(0)
    env = SelfPlayCribbageEnv(num_envs=3, target=61, reward="points", seed=0)
    value = critic((GROUP, "observation"), (GROUP, "state_value"))
    with torch.no_grad():
        data = env.rollout(150, masked_policy(env, hidden=16), break_when_any_done=False)
        gae = GAE(gamma=1.0, lmbda=1.0, value_network=value)
        gae.set_keys(**GROUP_KEYS)
        gae(data)
    reward = data["next", GROUP, "reward"].squeeze(-1)      # [N, T, seats]
    done = data["next", "done"].squeeze(-1)
    assert done.any()
    v, v_next = (data[key].squeeze(-1) for key in [(GROUP, "state_value"),
                                                    ("next", GROUP, "state_value")])
    returns = torch.zeros_like(reward)
    running = v_next[:, -1] * ~done[:, -1, None]
    for t in reversed(range(reward.shape[1])):
        running = reward[:, t] + running * ~done[:, t, None]
        returns[:, t] = running
    torch.testing.assert_close(data[GROUP, "advantage"].squeeze(-1), returns - v,
                               atol=1e-4, rtol=0)


def train_ppo(env, policy, loss, select, frames: int = 512) -> list[dict[str, float]]:
    """A few iterations of ClipPPOLoss with GAE on a ``Collector``; ``select`` picks
    the rows of a batch the loss trains on."""
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-4)
    collector = Collector(env, policy, frames_per_batch=256, total_frames=frames,
                          auto_register_policy_transforms=False)
    stats = []
    for data in collector:
        with torch.no_grad():
            loss.value_estimator(data)
        for _ in range(2):
            out = loss(select(data))
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optim.zero_grad()
            total.backward()
            optim.step()
        stats.append({k: float(v.detach()) for k, v in out.items() if v.numel() == 1})
    collector.shutdown()
    return stats


def test_ppo_trains_on_the_single_agent_env():
    torch.manual_seed(0)
    env = BatchedCribbageEnv(num_envs=16, target=61, reward="points", seed=9)
    policy = masked_policy(env, hidden=64)      # no group: the root keys
    loss = ClipPPOLoss(policy, critic("observation", "state_value"), entropy_coeff=0.01)
    stats = train_ppo(env, policy, loss, select=lambda data: data.reshape(-1))
    assert len(stats) == 2
    assert all(np.isfinite(s["loss_objective"]) and np.isfinite(s["loss_critic"])
               for s in stats)


def test_ppo_trains_one_shared_policy_by_selfplay():
    """TorchRL's multi-agent recipe: GAE with the group's keys over every row of each seat,
    then the PPO loss on the rows where a seat acted."""
    torch.manual_seed(0)
    env = SelfPlayCribbageEnv(num_envs=16, target=61, reward="points", seed=10)
    policy = masked_policy(env, hidden=64)
    loss = ClipPPOLoss(policy, critic((GROUP, "observation"), (GROUP, "state_value")),
                       entropy_coeff=0.01)
    loss.set_keys(action=(GROUP, "action"), sample_log_prob=(GROUP, "log_prob"), **GROUP_KEYS)

    def acted(data):
        rows = data[GROUP][data[GROUP, "mask"]]
        return TensorDict({GROUP: rows}, batch_size=rows.batch_size)

    stats = train_ppo(env, policy, loss, select=acted)
    assert len(stats) == 2
    assert all(np.isfinite(s["loss_objective"]) and np.isfinite(s["loss_critic"])
               and s["entropy"] > 0 for s in stats)


# ------------------------------------------------------------------------------ speed
def frames_per_second(env, steps: int) -> float:
    """Frames (one step of one game: a decision) per second of a random-logits rollout."""
    policy = random_logits_policy(None if env.action_key == "action" else GROUP)
    env.rollout(2, policy, break_when_any_done=False)                     # warm up
    start = time.perf_counter()
    data = env.rollout(steps, policy, break_when_any_done=False)
    return data.numel() / (time.perf_counter() - start)


def test_the_batched_env_is_faster_than_the_pettingzoo_route():
    aec_rate = frames_per_second(make_env(target=61), 100)
    batched_rate = frames_per_second(BatchedCribbageEnv(num_envs=256, target=61, seed=0), 20)
    selfplay_rate = frames_per_second(SelfPlayCribbageEnv(num_envs=256, target=61, seed=0), 20)
    print(f"\nframes/s: make_env() {aec_rate:,.0f}, BatchedCribbageEnv(256) "
          f"{batched_rate:,.0f}, SelfPlayCribbageEnv(256) {selfplay_rate:,.0f}")
    assert batched_rate > aec_rate and selfplay_rate > aec_rate
