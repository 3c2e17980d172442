"""RLlib: the masking module and the self-play mapping (no Ray needed), and two PPO iterations of
``cribenv train --backend rllib --address`` on a local two-node Ray cluster with the env runners
on the worker node, then a resume from RLlib's checkpoint."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("ray", reason="the 'rllib' extra (ray) is not installed")
torch = pytest.importorskip("torch", reason="the 'train' extra (torch) is not installed")

from ray_cluster import head_and_worker  # noqa: E402

from agents.ppo import MlpActor, PPOAgent  # noqa: E402
from cribenv.integrations import rllib  # noqa: E402
from cribenv.observation import OBS_SIZE  # noqa: E402


def make_module(hidden=(8,)):
    env = rllib.CribbageMultiAgentEnv()
    return rllib.MaskedActorCritic(observation_space=env.observation_spaces["player_0"],
                                   action_space=env.action_spaces["player_0"],
                                   model_config={"hidden": list(hidden)})


def test_the_module_gives_illegal_cards_no_probability_and_exports_its_actor():
    from ray.rllib.core.columns import Columns

    torch.manual_seed(0)
    module = make_module()
    obs = torch.rand(3, OBS_SIZE)
    mask = torch.zeros(3, 52)
    mask[0, [5, 9]] = 1
    mask[1, 51] = 1
    mask[2, :] = 1
    out = module.forward_exploration({Columns.OBS: {"observations": obs, "action_mask": mask}})
    logits = out[Columns.ACTION_DIST_INPUTS]
    probs = torch.softmax(logits, -1)
    assert torch.all(probs[mask == 0] == 0)
    assert torch.allclose(probs.sum(-1), torch.ones(3))
    assert probs[1, 51] == 1.0
    dist = module.get_exploration_action_dist_cls().from_logits(logits)
    assert torch.isfinite(dist.entropy()).all()
    for _ in range(20):
        picks = dist.sample()
        assert mask[torch.arange(3), picks].all()
    values = module.compute_values({Columns.OBS: {"observations": obs, "action_mask": mask}})
    assert values.shape == (3,)
    # the exported actor is the module's actor: the same logits in numpy on the legal cards
    actor = MlpActor([(w, b) for w, b in zip(
        [module.actor_arrays()["pi.0.weight"]], [module.actor_arrays()["pi.0.bias"]])],
        (module.actor_arrays()["action.weight"], module.actor_arrays()["action.bias"]), "relu")
    raw = module.actor(obs).detach().numpy()
    np.testing.assert_allclose(actor.logits(obs.numpy()), raw, rtol=1e-5, atol=1e-5)


def test_self_play_mapping_pits_one_side_against_one_frozen_copy():
    mapping = rllib.SelfPlayMapping(self_play_share=0.25, frozen=3)
    seen = {"self": 0, "frozen": 0}
    for k in range(400):
        episode = SimpleNamespace(id_=f"episode-{k}")
        modules = [mapping(f"player_{s}", episode) for s in range(2)]
        assert modules == [mapping(f"player_{s}", episode) for s in range(2)]  # stable
        if modules == ["learner", "learner"]:
            seen["self"] += 1
        else:
            assert sorted(modules)[1] == "learner" and modules.count("learner") == 1
            assert sorted(modules)[0] in ("frozen_0", "frozen_1", "frozen_2")
            seen["frozen"] += 1
    assert 60 <= seen["self"] <= 140       # 25% of 400 = 100, binomial sd ~ 8.7
    # four players: partners share a module
    four = rllib.SelfPlayMapping(self_play_share=0.0, frozen=1, num_players=4)
    modules = [four(f"player_{s}", SimpleNamespace(id_="x")) for s in range(4)]
    assert modules[0] == modules[2] and modules[1] == modules[3] and modules[0] != modules[1]
    with pytest.raises(ValueError, match="self_play_share"):
        rllib.SelfPlayMapping(self_play_share=1.5)


def test_env_refuses_unknown_settings_and_actions_out_of_turn():
    with pytest.raises(ValueError, match="'players'"):
        rllib.CribbageMultiAgentEnv({"players": 2})
    env = rllib.CribbageMultiAgentEnv()
    obs, _ = env.reset(seed=3)
    [agent] = obs
    other = next(a for a in env.possible_agents if a != agent)
    with pytest.raises(ValueError, match=f"it is {agent}'s turn"):
        env.step({other: 0})


@pytest.fixture(scope="module")
def cluster():
    """A head node without CPUs (so no env runner can sit there) and a worker with 2."""
    yield from head_and_worker(2)


@pytest.mark.slow
def test_train_on_a_cluster_puts_the_env_runners_on_the_worker_and_resumes(cluster, tmp_path,
                                                                           monkeypatch):
    from cribenv.cli import main

    c, worker = cluster
    monkeypatch.chdir(tmp_path)
    run = Path("run")     # a relative --run-dir: RLlib's checkpoint paths must be absolute
    flags = ["--backend", "rllib", "--address", c.address, "--run-dir", str(run),
             "--num-env-runners", "2", "--train-batch-size", "128", "--minibatch-size", "64",
             "--n-epochs", "1", "--net-arch", "16", "--checkpoint-every", "128",
             "--eval-games", "2", "--heuristics", "greedy", "--no-progress"]
    assert main(["train", *flags, "--total-steps", "256"]) == 0
    placed = json.loads((run / "cluster.json").read_text())
    assert placed["env_runner_nodes"] == [worker.node_id, worker.node_id]
    assert c.head_node.node_id in placed["nodes"] and worker.node_id in placed["nodes"]
    rows = list(csv.DictReader((run / "logs" / "progress.csv").open()))
    assert [(int(r["iteration"]), int(r["step"])) for r in rows] == [(1, 128), (2, 256)]
    assert (run / "checkpoints" / "LATEST").read_text().strip() == "step-000000256"
    assert PPOAgent(run / "policy.safetensors").act is not None
    assert (run / "eval.csv").is_file()
    # resume (here with the env runners in this process): RLlib's checkpoint restores the
    # weights exactly, then the iteration and step counts go on
    probe = np.ones((1, OBS_SIZE), np.float32)
    before = MlpActor.load(run / "policy.safetensors").logits(probe)
    again = [*flags, "--resume", "--eval-games", "0", "--num-env-runners", "0"]
    assert main(["train", *again, "--total-steps", "256"]) == 0
    np.testing.assert_array_equal(MlpActor.load(run / "policy.safetensors").logits(probe),
                                  before)
    assert main(["train", *again, "--total-steps", "384"]) == 0
    rows = list(csv.DictReader((run / "logs" / "progress.csv").open()))
    assert [(int(r["iteration"]), int(r["step"])) for r in rows] == [(1, 128), (2, 256),
                                                                      (3, 384)]
    assert not np.allclose(MlpActor.load(run / "policy.safetensors").logits(probe), before)


def test_train_refuses_address_with_another_backend(tmp_path, capsys):
    from cribenv.cli import main

    argv = ["train", "--backend", "sb3", "--address", "auto", "--run-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    assert "--address is a setting of the rllib backend, not of sb3" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_the_example_trains_and_plays_a_game(cluster, capsys):
    import importlib.util
    from pathlib import Path

    import ray

    path = Path(__file__).resolve().parents[1] / "examples" / "rllib_selfplay.py"
    spec = importlib.util.spec_from_file_location("rllib_selfplay", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    ray.init(address=cluster[0].address, include_dashboard=False, log_to_driver=False)
    try:
        assert example.main(["--iterations", "1", "--env-runners", "1", "--batch", "128"]) == 0
    finally:
        ray.shutdown()
    out = capsys.readouterr().out
    assert "iteration 1: 128 env steps" in out
    result = ast.literal_eval(out.split("frozen_0: ")[1].strip())   # the game's final infos
    assert max(result["scores"]) >= 121 and result["winner"] in (0, 1)


@pytest.mark.parametrize("flags, message", [
    (["--frozen", "-1"], "frozen must be >= 0 and <= 1000, got -1"),
    (["--eval-games", "3"], "eval_games must be an even number >= 0, got 3"),
    (["--n-games", "8"], "--n-games is not a setting of the rllib backend"),   # selfplay's
    (["--resume"], "nothing to resume"),
    (["--address", "127.0.0.1:1"], "cannot join the Ray cluster at '127.0.0.1:1'"),
])
def test_bad_settings_and_addresses_are_refused_writing_nothing(tmp_path, capsys, flags,
                                                                message):
    import ray

    from cribenv.cli import main

    argv = ["train", "--backend", "rllib", "--run-dir", str(tmp_path / "run"), *flags]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not ray.is_initialized() and not (tmp_path / "run" / "config.json").exists()
