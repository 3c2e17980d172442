"""ppo:PATH agents: weights-only policy files, loading errors, legal play."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.ppo import POLICY_FORMAT, MlpActor, PolicyFileError, PPOAgent, load_policy, save_policy
from cribenv.game import Game, Rules
from cribenv.observation import OBS_SIZE, encode


def random_policy(tmp_path, seed=0, hidden=(32, 16), activation="relu"):
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, *hidden]
    layers = [(rng.normal(size=(o, i)).astype(np.float32) * 0.1, rng.normal(size=o) * 0.1)
              for i, o in zip(sizes[:-1], sizes[1:])]
    head = (rng.normal(size=(52, sizes[-1])).astype(np.float32), rng.normal(size=52))
    path = save_policy(tmp_path / "p.safetensors", layers, head, {"activation": activation})
    return path, layers, head


def obs_of(game: Game) -> dict[str, np.ndarray]:
    seat = game.current_player
    mask = np.zeros(52, np.int8)
    mask[game.legal_actions()] = 1
    return {"observation": encode(game.view(seat)), "action_mask": mask}


def test_roundtrip_and_forward_matches_manual(tmp_path):
    path, layers, head = random_policy(tmp_path)
    policy = MlpActor.load(path)
    x = np.random.default_rng(1).random(OBS_SIZE).astype(np.float32)
    h = x
    for w, b in layers:
        h = np.maximum(w @ h + b, 0)
    expected = head[0] @ h + head[1]
    np.testing.assert_allclose(policy.logits(x), expected, rtol=1e-5, atol=1e-5)
    assert policy.config["activation"] == "relu"


def test_ppo_agent_plays_only_legal_cards_to_the_end(tmp_path):
    path, _, _ = random_policy(tmp_path)
    for sample in (False, True):
        agent = make_agent(f"ppo:{path}", seed=3, sample=sample)
        assert isinstance(agent, PPOAgent)
        game = Game(Rules(target=61), seed=4)
        while not game.is_over:
            obs = obs_of(game)
            card = agent.act(obs)
            assert obs["action_mask"][card] == 1
            game.step(card)


def test_deterministic_agent_picks_the_best_legal_logit(tmp_path):
    path, _, _ = random_policy(tmp_path)
    agent = PPOAgent(path)
    game = Game(Rules(), seed=5)
    obs = obs_of(game)
    logits = agent.policy.logits(obs["observation"])
    legal = np.flatnonzero(obs["action_mask"])
    assert agent.act(obs) == legal[np.argmax(logits[legal])]


def test_bad_files_give_clear_errors(tmp_path):
    with pytest.raises(PolicyFileError, match="no policy file"):
        PPOAgent(tmp_path / "missing.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x00\x01not a safetensors file at all")
    with pytest.raises(PolicyFileError, match="not a readable safetensors"):
        PPOAgent(junk)
    path, _, _ = random_policy(tmp_path)
    truncated = tmp_path / "trunc.safetensors"
    truncated.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(PolicyFileError):
        PPOAgent(truncated)
    from safetensors.numpy import save_file

    other = tmp_path / "other.safetensors"
    save_file({"w": np.zeros(3, np.float32)}, str(other), metadata={"format": "x"})
    with pytest.raises(PolicyFileError, match="not a cribenv policy"):
        PPOAgent(other)
    wrong = tmp_path / "wrong.safetensors"
    save_file({"pi.0.weight": np.zeros((8, 10), np.float32), "pi.0.bias": np.zeros(8, np.float32),
               "action.weight": np.zeros((52, 8), np.float32),
               "action.bias": np.zeros(52, np.float32)},
              str(wrong), metadata={"format": POLICY_FORMAT, "config": "{}"})
    with pytest.raises(PolicyFileError, match="expected input size"):
        PPOAgent(wrong)
    with pytest.raises(ValueError, match="needs the path"):
        make_agent("ppo:")


def test_shipped_agent_loads_and_beats_random_in_a_few_games():
    from agents.arena import play_game
    from agents.ppo import SHIPPED_POLICY

    assert SHIPPED_POLICY.is_file(), "the trained agent ships with the project"
    agent = make_agent("ppo:shipped")
    assert agent.name == "ppo:shipped" and agent.policy.config["num_players"] == 2
    wins = 0
    for seed in range(6):
        result = play_game([agent, make_agent("random", seed=seed)], Rules(target=61), seed=seed)
        wins += result.winner == 0
    assert wins >= 5


class _ActOnly:
    """The agent seen as a policy only (the run loop hands it observation dicts)."""

    def __init__(self, agent: PPOAgent) -> None:
        self.agent, self.name = agent, agent.name

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation):
        return self.agent.act(observation)


@pytest.mark.parametrize("sample", [False, True])
@pytest.mark.parametrize("network", ["mlp", "shipped"])
def test_choose_from_views_makes_the_same_games_as_act(tmp_path, network, sample):
    from agents.arena import play_game

    spec = "ppo:shipped" if network == "shipped" else f"ppo:{random_policy(tmp_path)[0]}"
    for players in (2, 4):
        rules = Rules(num_players=players)
        games = []
        for as_policy in (False, True):
            agent = make_agent(spec, seed=3, sample=sample)
            assert agent.asks_forced is sample
            first = _ActOnly(agent) if as_policy else agent
            others = [make_agent("greedy", seed=s) for s in range(players - 1)]
            games.append([play_game([first, *others], rules, seed=g).to_dict()
                          for g in range(3)])
        assert games[0] == games[1]


def test_weights_beyond_float32_are_refused(tmp_path):
    """A float64 file holding 1e300 once loaded (finiteness was checked before the cast to
    float32, where it becomes inf)."""
    import json

    from safetensors.numpy import save_file

    path, layers, head = random_policy(tmp_path)
    tensors = {f"pi.{i}.weight": w.astype(np.float64) for i, (w, _) in enumerate(layers)}
    tensors.update({f"pi.{i}.bias": np.asarray(b, np.float64) for i, (_, b) in enumerate(layers)})
    tensors["action.weight"] = head[0].astype(np.float64)
    tensors["action.bias"] = np.asarray(head[1], np.float64)
    tensors["pi.0.weight"][0, 0] = 1e300
    bad = tmp_path / "big.safetensors"
    save_file(tensors, str(bad), metadata={"format": POLICY_FORMAT,
                                           "config": json.dumps({"activation": "relu"})})
    with pytest.raises(PolicyFileError, match="pi.0.weight"):
        load_policy(bad)


def test_a_policy_file_is_the_same_bytes_whoever_writes_it(tmp_path):
    """The same arrays and config make the same file, in this process and in others
    (safetensors alone writes its header's metadata in no fixed order)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from agents.ppo import save_tensors; "
            "save_tensors(sys.argv[1], {'b': np.ones(3), 'a': np.arange(4.0)}, "
            "{'arch': 'mlp', 'z': 1, 'a': [2, 3]})")
    paths = [tmp_path / f"p{i}.safetensors" for i in range(4)]
    for p in paths:
        subprocess.run([sys.executable, "-c", code, str(p)], check=True, timeout=120)
    assert len({p.read_bytes() for p in paths}) == 1
    assert paths[0].read_bytes()[8:].startswith(b'{"__metadata__":{"config":')
