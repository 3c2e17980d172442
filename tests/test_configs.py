"""Every shipped config file loads with the settings class of its trainer (a misspelt key or a
bad value fails here, not an hour into a run)."""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from train.config import TrainConfig  # noqa: E402
from train.selfplay import SelfPlayConfig  # noqa: E402

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "train" / "configs").glob("*.json"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_file_loads(path):
    cls = SelfPlayConfig if path.name.startswith("selfplay") else TrainConfig
    config = cls.load(path)
    assert config.total_steps >= 1


def test_the_keeps_hour_config_is_the_best_runs_settings_on_two_cores():
    keeps = SelfPlayConfig.load(Path(CONFIGS[0]).parent / "selfplay-keeps-hour.json")
    best = SelfPlayConfig.load(Path(__file__).resolve().parents[1] / "results"
                               / "selfplay-keeps-hour" / "config.json")
    differs = {k for k, v in keeps.to_dict().items() if best.to_dict()[k] != v}
    assert differs == {"threads", "total_steps"}
