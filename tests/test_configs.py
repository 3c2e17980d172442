"""Every shipped config file loads with the settings class of its trainer (a misspelt key or a
bad value fails here, not an hour into a run); the settings every backend shares are declared
once; old names and old runs' settings still load, with the fingerprints their checkpoints
hold."""

import typing
import warnings
from dataclasses import fields
from pathlib import Path

import pytest

pytest.importorskip("torch")

from train.config import TrainConfig  # noqa: E402
from train.rllib_config import RLlibConfig  # noqa: E402
from train.selfplay_config import SelfPlayConfig  # noqa: E402
from train.settings import RunSettings, described  # noqa: E402

BACKENDS = (SelfPlayConfig, TrainConfig, RLlibConfig)

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "train" / "configs").glob("*.json"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_file_loads(path):
    cls = SelfPlayConfig if path.name.startswith("selfplay") else TrainConfig
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)   # written with today's names
        config = cls.load(path)
    assert config.total_steps >= 1


RESULTS = Path(__file__).resolve().parents[1] / "results"


def test_the_keeps_hour_config_made_the_runs_kept_in_results():
    keeps = SelfPlayConfig.load(Path(CONFIGS[0]).parent / "selfplay-keeps-hour.json").to_dict()
    # the two-core hour that reached 50% against greedy is this config exactly
    assert SelfPlayConfig.load(RESULTS / "selfplay-keeps-2cores" / "config.json").to_dict() \
        == keeps
    # the one-core hour before it had one thread and a shorter schedule
    one_core = SelfPlayConfig.load(RESULTS / "selfplay-keeps-hour" / "config.json").to_dict()
    assert {k for k, v in keeps.items() if one_core[k] != v} == {"threads", "total_steps"}


def test_the_from_shipped_config_made_the_run_kept_in_results():
    config = SelfPlayConfig.load(Path(CONFIGS[0]).parent / "selfplay-from-shipped.json")
    kept = SelfPlayConfig.load(RESULTS / "selfplay-from-shipped" / "config.json")
    assert kept.to_dict() == config.to_dict()
    assert config.policy == "expert-prior" and config.init_policy == "shipped"


def test_the_privileged_critic_config_made_the_run_kept_in_results():
    config = SelfPlayConfig.load(Path(CONFIGS[0]).parent / "selfplay-privileged-critic.json")
    kept = SelfPlayConfig.load(RESULTS / "selfplay-privileged-critic" / "config.json")
    assert kept.to_dict() == config.to_dict()
    assert config.privileged_critic and config.init_policy == "shipped"


@pytest.mark.parametrize("kind", BACKENDS, ids=lambda k: k.__name__)
def test_every_backend_has_the_shared_settings_under_one_name_and_type(kind):
    shared = typing.get_type_hints(RunSettings)
    mine = typing.get_type_hints(kind)
    for f in fields(RunSettings):
        assert mine[f.name] == shared[f.name], f.name
    assert all(s.help for s in described(kind))
    # one name per idea: the old names are no setting of any backend
    names = {f.name for k in BACKENDS for f in fields(k)}
    assert not names & {"n_envs", "batch_size"}


def test_a_setting_of_two_backends_has_one_type():
    hints = [typing.get_type_hints(k) for k in BACKENDS]
    for name in set.union(*(set(h) for h in hints)) - set(typing.get_type_hints(RunSettings)):
        assert len({h[name] for h in hints if name in h}) == 1, name


#: fingerprints computed by the code before the settings had a shared base (the checkpoints
#: of runs made then hold these): a resumed run must find them unchanged
FINGERPRINTS = {
    "train/configs/scratch.json": (TrainConfig, "5c5cac41d69823c0"),
    "train/configs/rollout-ppo.json": (TrainConfig, "288e155682319807"),
    "train/configs/heuristic-heavy.json": (TrainConfig, "7d5d1f2b9b121184"),
    "train/configs/selfplay-keeps-hour.json": (SelfPlayConfig, "0996f4ad94735b03"),
    "train/configs/selfplay-from-rules.json": (SelfPlayConfig, "2fa6709cda48f5f4"),
    "results/device-h200/config.json": (SelfPlayConfig, "93c2456c02d60b7f"),
    "results/selfplay-3p/config.json": (SelfPlayConfig, "5dc03e900098ee85"),
    "results/selfplay-privileged-critic/config.json": (SelfPlayConfig, "744c33963881d531"),
    "results/selfplay-scratch/variants/mix-lr4e-4-mlp-head/config.json": (SelfPlayConfig,
                                                                          "647d706c73321417"),
}


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_old_runs_keep_their_fingerprints(name):
    kind, fingerprint = FINGERPRINTS[name]
    assert kind.load(RESULTS.parent / name).fingerprint() == fingerprint


def test_the_defaults_keep_their_fingerprints():
    assert [k().fingerprint() for k in BACKENDS] == [
        "73a6d5bcfa0a2ade", "2415b4ac9ff2817c", "fa686b59237040d6"]
    assert TrainConfig(policy="expert-prior").fingerprint() == "41162421fe7b8680"
    assert SelfPlayConfig(policy="keeps", throw_values=True).fingerprint() == "2d21945d2c21433f"


def test_a_renamed_setting_is_read_with_a_warning_naming_both(tmp_path):
    """A config written before ``n_envs`` became ``n_games`` (and ``batch_size``
    ``minibatch_size``) loads as the same settings, with the same fingerprint."""
    old = tmp_path / "old.json"
    old.write_text('{"n_envs": 4, "batch_size": 64, "seed": 3}')
    with pytest.warns(FutureWarning) as said:
        config = TrainConfig.load(old)
    assert [str(w.message).split(";")[0] for w in said] == [
        "the training setting 'n_envs' is now called 'n_games'",
        "the training setting 'batch_size' is now called 'minibatch_size'"]
    assert config == TrainConfig(n_games=4, minibatch_size=64, seed=3)
    assert config.to_dict()["n_games"] == 4 and "n_envs" not in config.to_dict()
    with pytest.warns(FutureWarning, match="'batch_size' is now called 'minibatch_size'"):
        made = TrainConfig(batch_size=64, seed=3, n_games=4)   # in code, too
    assert made == config
    with pytest.warns(FutureWarning, match="the later one, n_envs, is used"):
        assert TrainConfig.from_dict({"n_games": 8, "n_envs": 16}).n_games == 16


def test_a_removed_setting_is_ignored_with_a_warning():
    with pytest.warns(FutureWarning, match="ignoring the self-play setting 'feature_workers'"):
        assert SelfPlayConfig.from_dict({"feature_workers": 2}) == SelfPlayConfig()


@pytest.mark.parametrize("kind,settings,words", [
    (SelfPlayConfig, {"n_games": 0}, "n_games must be >= 1 and <= 65536, got 0"),
    (TrainConfig, {"n_games": 0}, "n_games must be >= 1 and <= 65536, got 0"),
    (RLlibConfig, {"self_play_share": 2.0}, "self_play_share must be in [0, 1], got 2.0"),
    (TrainConfig, {"reward": "mix"}, "reward must be 'win' or 'points', got 'mix'"),
    (TrainConfig, {"num_players": 3}, "num_players must be 2, got 3"),
    (RLlibConfig, {"num_players": 5}, "num_players must be 2, 3 or 4, got 5"),
])
def test_one_range_check_for_every_backend_made_in_code_or_read(kind, settings, words):
    with pytest.raises(ValueError) as made:
        kind(**settings)
    with pytest.raises(ValueError) as read:
        kind.from_dict(settings)
    assert str(made.value) == str(read.value) == words
