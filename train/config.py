"""Training settings: one dataclass, saved as JSON with every run."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from cribenv.files import write_text


def read_settings(path: str | Path, what: str) -> dict:
    """The JSON object of settings in ``path`` (ValueError naming ``what`` and the file
    otherwise)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{what} {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{what} {str(path)!r} is not a readable JSON file: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} {str(path)!r} must hold a JSON object of settings, got "
                         f"{type(data).__name__}")
    return data


#: The allowed range of every numeric setting of any backend, by name: ``(low, high)`` with
#: ``low`` or ``high`` None for no bound, and a name in ``OPEN_LOW`` excluding its low end.
#: One table for every trainer (the settings' types come from their dataclass fields).
MAX_WIDTH = 8192          # a layer (or an embedding) wider than this is a typo, not a network
MAX_LAYERS = 16
MAX_GAMES = 10_000_000    # evaluation games: more would take weeks
MAX_ROLLOUT = 2**21       # decisions held by one rollout

RANGES: dict[str, tuple[float | None, float | None]] = {
    "total_steps": (1, None), "seed": (0, 2**63 - 1), "threads": (1, 256),
    "engine_threads": (1, 256),
    # sizes that set what is allocated: bounded well above any use, so that a typo is a clear
    # error rather than a 900 GB allocation
    "n_envs": (1, 4096), "n_games": (1, 65_536), "n_steps": (1, 65_536),
    "batch_size": (1, 2**24), "minibatch_size": (1, 2**24), "train_batch_size": (1, 2**24),
    "n_epochs": (1, 10_000), "num_env_runners": (0, 4096), "envs_per_env_runner": (1, 4096),
    "num_cpus": (0, 65_536), "card_dim": (1, MAX_WIDTH), "keep_ctx": (1, MAX_WIDTH),
    "pool_size": (1, 10_000), "eval_games": (0, MAX_GAMES), "bc_games": (0, MAX_GAMES),
    "learning_rate": (0, 1), "gamma": (0, 1), "gae_lambda": (0, 1), "clip_range": (0, 10),
    "ent_coef": (0, None), "vf_coef": (0, None), "max_grad_norm": (0, None),
    "target_kl": (0, None), "shaping": (-10, 10), "beta": (0, None),
    "self_play_share": (0, 1), "expert_share": (0, 1), "heuristic_share": (0, 1),
    "pool_priority": (0, None), "time_limit": (0, None), "snapshot_every": (1, None),
    "checkpoint_every": (1, None), "eval_every": (1, None),
    "value_warmup": (0, None), "bc_epochs": (1, 10_000), "bc_lr": (0, 1), "frozen": (0, 1000),
    "num_players": (2, 4), "value_beta": (0, None), "value_lr": (0, 1),
}
OPEN_LOW = {"learning_rate", "clip_range", "max_grad_norm", "bc_lr", "value_beta", "value_lr"}
#: Settings that are lists of layer widths: at least one, each at least 1.
LAYER_LISTS = ("net_arch", "card_arch", "keep_arch", "value_arch")


def check_setting(name: str, value: Any, kind: Any) -> Any:
    """``value`` of the setting ``name`` checked against its field type ``kind`` and its
    range in :data:`RANGES`; a ValueError names the setting, the value and what is allowed.

    >>> check_setting("gamma", 0.99, float)
    0.99
    >>> check_setting("total_steps", "100", int)
    Traceback (most recent call last):
    ...
    ValueError: total_steps must be an integer, got '100' (a str)
    """
    import math
    import typing

    shown = f"{value!r} (a {type(value).__name__})"
    if kind is bool:
        if type(value) is not bool:
            raise ValueError(f"{name} must be true or false, got {shown}")
        return value
    if kind is int:
        if type(value) is not int:
            raise ValueError(f"{name} must be an integer, got {shown}")
    elif kind is float:
        if type(value) not in (int, float):
            raise ValueError(f"{name} must be a number, got {shown}")
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        value = float(value)
    elif kind is str:
        if type(value) is not str:
            raise ValueError(f"{name} must be a string, got {shown}")
        return value
    elif typing.get_origin(kind) is list:
        (item,) = typing.get_args(kind)
        if type(value) is not list or not all(type(x) is item for x in value):
            raise ValueError(f"{name} must be a list of {item.__name__}s, got {shown}")
        if name in LAYER_LISTS and (not 1 <= len(value) <= MAX_LAYERS
                                    or not 1 <= min(value) <= max(value) <= MAX_WIDTH):
            raise ValueError(f"{name} must list 1 to {MAX_LAYERS} layer widths, each from 1 to "
                             f"{MAX_WIDTH}, got {value!r}")
        return value
    low, high = RANGES.get(name, (None, None))
    if low is not None and (value < low or (value == low and name in OPEN_LOW)):
        rel = ">" if name in OPEN_LOW else ">="
        raise ValueError(f"{name} must be {rel} {low}" + (f" and <= {high}" if high is not None
                                                           else "") + f", got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}" + (f" and >= {low}" if low is not None
                                                        else "") + f", got {value!r}")
    return value


def setting(default: Any, help: str) -> Any:
    """A settings field with its one line of help (``cribenv train --help`` reads it from the
    field's metadata: the help has one home, beside the default).

    >>> from dataclasses import dataclass, fields
    >>> @dataclass
    ... class Demo:
    ...     steps: int = setting(10, "steps to take")
    >>> fields(Demo)[0].metadata["help"], Demo().steps
    ('steps to take', 10)
    """
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


def help_of(kind: type) -> dict[str, str]:
    """Each setting of ``kind`` (a settings dataclass) and its one line of help."""
    return {f.name: f.metadata.get("help", "") for f in fields(kind)}


class RunSettings:
    """What the settings of every backend share (``TrainConfig``, ``SelfPlayConfig``,
    ``RLlibConfig``): a dataclass saved as ``config.json`` in the run folder, whose
    ``RESUMABLE`` fields may change when a run is resumed and whose other fields are hashed
    into the checkpoints' fingerprint. ``KIND`` names the backend in messages."""

    RESUMABLE: tuple[str, ...] = ()
    KIND = "training"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    def check_at_least(self, low: int, *names: str) -> None:
        """Raise a ValueError naming the first setting of ``names`` below ``low``."""
        for name in names:
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")

    def check_rollout_size(self, games: str, steps: str) -> None:
        """The rollout buffer (``games`` x ``steps`` decisions, each a 601-entry observation)
        holds at most :data:`MAX_ROLLOUT` decisions (~5 GB)."""
        size = getattr(self, games) * getattr(self, steps)
        if size > MAX_ROLLOUT:
            raise ValueError(f"{games} x {steps} must be <= {MAX_ROLLOUT:,} decisions per "
                             f"rollout (~5 GB of observations), got {getattr(self, games)} x "
                             f"{getattr(self, steps)} = {size:,}")

    def check_eval_games(self) -> None:
        """Duplicate evaluation plays each deal from both seats: an even number of games."""
        games = self.eval_games  # type: ignore[attr-defined]
        if games < 0 or games % 2:
            raise ValueError(f"eval_games must be an even number >= 0, got {games}")

    def policy_fields(self) -> dict[str, Any]:
        """What the policy files of this backend say about their network (``arch``,
        ``activation``, ...); :func:`train.export.policy_meta` adds the rest."""
        raise NotImplementedError

    def fixed_settings(self) -> dict[str, Any]:
        """The settings a resumed run must keep."""
        return {k: v for k, v in self.to_dict().items() if k not in self.RESUMABLE}

    def fingerprint(self) -> str:
        """A hash of the settings that must not change when a run is resumed."""
        fixed = json.dumps(self.fixed_settings(), sort_keys=True)
        return hashlib.sha256(fixed.encode()).hexdigest()[:16]

    def save(self, path: str | Path) -> None:
        write_text(path, json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """The settings of ``data``, each checked against its field's type and its range
        (:func:`check_setting`) before anything is built."""
        import typing

        unknown = sorted(set(data) - {f.name for f in fields(cls)})  # type: ignore[arg-type]
        if unknown:
            raise ValueError(f"unknown {cls.KIND} settings: {', '.join(unknown)}")
        hints = typing.get_type_hints(cls)
        checked = {k: check_setting(k, v, hints[k]) for k, v in data.items()}
        return cls(**checked)

    @classmethod
    def load(cls, path: str | Path):
        return cls.from_dict(read_settings(path, "the settings file"))


@dataclass
class TrainConfig(RunSettings):
    """Everything that defines a self-play PPO run (saved as ``config.json`` in the run dir)."""

    # length and hardware
    total_steps: int = setting(200_000, "learner decisions (env steps) to train for")
    n_envs: int = setting(8, "parallel games per rollout")
    threads: int = setting(1, "torch threads (cores) for the network")
    seed: int = setting(0, "seed of everything")
    # game
    num_players: int = setting(2, "players (2)")
    target: int = setting(121, "points to win: 121 or 61")
    reward: str = setting("win", "'win' (+1/-1 at the end) or 'points'")
    shaping: float = setting(0.01, "with reward 'win': + shaping x point differential per step")
    skunks: bool = setting(False, "scale the win reward by game points")
    # PPO
    learning_rate: float = setting(3e-4, "Adam learning rate")
    n_steps: int = setting(256, "steps per env per rollout")
    batch_size: int = setting(512, "PPO minibatch size")
    n_epochs: int = setting(4, "PPO epochs per update")
    gamma: float = setting(0.995, "discount factor")
    gae_lambda: float = setting(0.95, "GAE lambda")
    clip_range: float = setting(0.2, "PPO clip range")
    ent_coef: float = setting(0.01, "entropy bonus")
    target_kl: float = setting(
        0.0,
        "stop a PPO update early once the policy moved this far (KL; 0: no limit)")
    vf_coef: float = setting(0.5, "value loss weight")
    net_arch: list[int] = setting(
        [256, 256],
        "hidden layer sizes (policy and value nets; expert-prior: the value net)")
    activation: str = setting("relu", "'relu' or 'tanh'")
    # network: "mlp" (observation -> 52 logits) or "expert-prior" (per-card features,
    # logits = beta * expert value + card MLP; see train/prior_policy.py)
    policy: str = setting(
        "mlp",
        "network: 'mlp' (observation to 52 logits) or 'expert-prior' (per-card features)")
    card_arch: list[int] = setting(
        [64, 64],
        "expert-prior: hidden layer sizes of the per-card network")
    beta: float = setting(
        2.0,
        "expert-prior: initial weight of the expert's card values in the logits")
    init_policy: str = setting(
        "",
        "expert-prior: start from this policy file's card network and beta (e.g. one fitted by "
        "cribenv rollouts)")
    # behaviour-cloning warm start (0 disables): expert games imitated before PPO
    bc_games: int = setting(
        0,
        "expert-vs-expert games whose decisions the policy imitates before PPO (0: none)")
    bc_epochs: int = setting(4, "passes over the imitation data")
    bc_lr: float = setting(1e-3, "learning rate of the imitation phase")
    bc_teacher: str = setting("expert", "the bot imitated")
    # opponent pool
    heuristic_share: float = setting(0.3, "share of episodes against the heuristic bots")
    heuristics: list[str] = setting(
        ["greedy", "expert"],
        "heuristic bots in the pool and in the evaluation")
    snapshot_every: int = setting(
        50_000,
        "steps between frozen copies of the learner added to the pool")
    pool_size: int = setting(10, "most recent snapshots kept")
    # bookkeeping
    checkpoint_every: int = setting(20_000, "steps between checkpoints")
    eval_every: int = setting(50_000, "steps between evaluations")
    eval_games: int = setting(200, "evaluation games per heuristic (duplicate pairs), 0 disables")

    #: settings that may change when a run is resumed
    RESUMABLE = ("total_steps", "threads", "checkpoint_every", "eval_every", "eval_games")

    def __post_init__(self) -> None:
        if self.reward not in ("win", "points"):
            raise ValueError(f"reward must be 'win' or 'points', got {self.reward!r}")
        if self.activation not in ("relu", "tanh"):
            raise ValueError(f"activation must be 'relu' or 'tanh', got {self.activation!r}")
        if self.policy not in ("mlp", "expert-prior"):
            raise ValueError(f"policy must be 'mlp' or 'expert-prior', got {self.policy!r}")
        if self.policy == "expert-prior" and self.bc_games:
            raise ValueError("the expert-prior policy starts as the expert already: set "
                             "bc_games to 0")
        if self.init_policy and self.policy != "expert-prior":
            raise ValueError("init_policy needs policy 'expert-prior'")
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")
        if not 0.0 <= self.heuristic_share <= 1.0:
            raise ValueError(f"heuristic_share must be in [0, 1], got {self.heuristic_share}")
        if self.num_players != 2:
            raise ValueError("self-play training supports 2 players for now")
        self.check_at_least(1, "total_steps", "n_envs", "threads", "n_steps", "batch_size",
                            "n_epochs", "snapshot_every", "pool_size", "checkpoint_every",
                            "eval_every", "bc_epochs")
        self.check_at_least(0, "bc_games")
        self.check_rollout_size("n_envs", "n_steps")
        self.check_eval_games()

    @property
    def rollout_steps(self) -> int:
        return self.n_steps * self.n_envs

    def policy_fields(self) -> dict[str, Any]:
        """SB3's actor: ``arch`` is the policy (the MLP's ``net_arch`` with it)."""
        fields: dict[str, Any] = {"arch": self.policy, "activation": self.activation}
        if self.policy != "expert-prior":
            fields["net_arch"] = self.net_arch
        return fields

    def fixed_settings(self) -> dict[str, Any]:
        fixed = super().fixed_settings()
        if fixed["policy"] == "mlp":  # runs made before the expert-prior network existed
            for name in ("policy", "card_arch", "beta", "init_policy"):
                fixed.pop(name)
        return fixed
