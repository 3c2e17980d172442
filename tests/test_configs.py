"""Every shipped config file loads with the settings class of its trainer (a misspelt key or a
bad value fails here, not an hour into a run)."""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from train.config import TrainConfig  # noqa: E402
from train.selfplay_config import SelfPlayConfig  # noqa: E402

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "train" / "configs").glob("*.json"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_file_loads(path):
    cls = SelfPlayConfig if path.name.startswith("selfplay") else TrainConfig
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
