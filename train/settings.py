"""The settings every training backend shares (:class:`RunSettings`) and the one table of their
ranges (:data:`RANGES`), torch-free, so ``cribenv train --help`` stays quick.

Each backend's settings class is a dataclass that adds its own settings to :class:`RunSettings`
(``selfplay``: :class:`train.selfplay_config.SelfPlayConfig`; ``sb3``:
:class:`train.config.TrainConfig`; ``rllib``: :class:`train.rllib_config.RLlibConfig`). A
setting is declared once, with its type, its one line of help and its choices
(:func:`setting`); a backend whose default differs restates the field with its own default
(and, where its meaning differs, its own help or choices). Every value is checked in one place:
its type when read from a file or the command line (:meth:`RunSettings.from_dict`), its range
(:data:`RANGES`) and choices when the settings are made (``__post_init__``).

>>> [s.name for s in described(RunSettings)][:4]
['total_steps', 'seed', 'num_players', 'target']
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import typing
import warnings
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

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
    "engine_threads": (1, 256), "workers": (1, 1024),
    # sizes that set what is allocated: bounded well above any use, so that a typo is a clear
    # error rather than a 900 GB allocation
    "n_games": (1, 65_536), "n_steps": (1, 65_536), "minibatch_size": (1, 2**24),
    "train_batch_size": (1, 2**24), "n_epochs": (1, 10_000), "num_env_runners": (0, 4096),
    "envs_per_env_runner": (1, 4096), "num_cpus": (0, 65_536), "card_dim": (1, MAX_WIDTH),
    "keep_ctx": (1, MAX_WIDTH), "pool_size": (1, 10_000), "eval_games": (0, MAX_GAMES),
    "bc_games": (0, MAX_GAMES),
    "learning_rate": (0, 1), "gamma": (0, 1), "gae_lambda": (0, 1), "clip_range": (0, 10),
    "ent_coef": (0, None), "vf_coef": (0, None), "max_grad_norm": (0, None),
    "target_kl": (0, None), "shaping": (-10, 10), "beta": (0, None),
    "self_play_share": (0, 1), "expert_share": (0, 1), "heuristic_share": (0, 1),
    "pool_priority": (0, None), "time_limit": (0, None), "snapshot_every": (1, None),
    "checkpoint_every": (1, None), "eval_every": (1, None),
    "value_warmup": (0, None), "bc_epochs": (1, 10_000), "bc_lr": (0, 1), "frozen": (0, 1000),
    "value_beta": (0, None), "value_lr": (0, 1), "epsilon": (0, 1),
    # expert iteration (train.expert_iteration.IterationSettings; playouts is bounded by one
    # decision's memory there)
    "rounds": (1, 1000), "games": (1, MAX_GAMES), "playouts": (1, None),
    "temperature": (1e-6, 1), "anchor": (0, 1000), "epochs": (1, 10_000),
    "batch_size": (1, 2**24),
    # cribenv rollouts and cribenv peg-values
    "discard_games": (0, MAX_GAMES), "opponent_games": (0, MAX_GAMES), "hands": (100, 10**9),
    "top_k": (1, 15),
}
OPEN_LOW = {"learning_rate", "clip_range", "max_grad_norm", "bc_lr", "value_beta", "value_lr",
            "beta"}
#: Settings that are lists of layer widths: at least one, each at least 1.
LAYER_LISTS = ("net_arch", "card_arch", "keep_arch", "value_arch")


def check_type(name: str, value: Any, kind: Any) -> Any:
    """``value`` of the setting ``name`` checked against its field type ``kind`` (an int is a
    float where a float is asked for); a ValueError names the setting and the value.

    >>> check_type("total_steps", "100", int)
    Traceback (most recent call last):
    ...
    ValueError: total_steps must be an integer, got '100' (a str)
    """
    shown = f"{value!r} (a {type(value).__name__})"
    if kind is bool:
        if type(value) is not bool:
            raise ValueError(f"{name} must be true or false, got {shown}")
    elif kind is int:
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
    elif typing.get_origin(kind) is list:
        (item,) = typing.get_args(kind)
        if type(value) is not list or not all(type(x) is item for x in value):
            raise ValueError(f"{name} must be a list of {item.__name__}s, got {shown}")
    return value


def check_range(name: str, value: Any, kind: Any = None) -> Any:
    """``value`` of the setting ``name`` checked against its range in :data:`RANGES` (a list of
    layer widths: :data:`LAYER_LISTS`); a ValueError says what is allowed. A real-valued
    setting (``kind`` float) says its range as an interval.

    >>> check_range("gamma", 0.99, float)
    0.99
    >>> check_range("gamma", 1.5, float)
    Traceback (most recent call last):
    ...
    ValueError: gamma must be in [0, 1], got 1.5
    """
    if name in LAYER_LISTS:
        if not 1 <= len(value) <= MAX_LAYERS or not 1 <= min(value) <= max(value) <= MAX_WIDTH:
            raise ValueError(f"{name} must be a list of 1 to {MAX_LAYERS} layer widths, each "
                             f"from 1 to {MAX_WIDTH}, got {value!r}")
        return value
    low, high = RANGES.get(name, (None, None))
    open_low = name in OPEN_LOW
    too_low = low is not None and (value < low or (value == low and open_low))
    too_high = high is not None and value > high
    if not (too_low or too_high):
        return value
    rel = ">" if open_low else ">="
    if kind is float and low is not None and high is not None:
        raise ValueError(f"{name} must be in {'(' if open_low else '['}{low}, {high}], got "
                         f"{value!r}")
    if too_low:
        raise ValueError(f"{name} must be {rel} {low}" + (f" and <= {high}" if high is not None
                                                           else "") + f", got {value!r}")
    raise ValueError(f"{name} must be <= {high}" + (f" and {rel} {low}" if low is not None
                                                    else "") + f", got {value!r}")


def check_setting(name: str, value: Any, kind: Any) -> Any:
    """``value`` of the setting ``name`` checked against its field type ``kind`` and its
    range in :data:`RANGES`; a ValueError names the setting, the value and what is allowed.

    >>> check_setting("gamma", 0.99, float)
    0.99
    """
    return check_range(name, check_type(name, value, kind), kind)


def setting(default: Any, help: str | None = None, choices: tuple | None = None) -> Any:
    """A settings field with its one line of help and, for a setting of a few values, its
    ``choices`` (``cribenv train --help`` reads them from the field's metadata: the help has
    one home, beside the default). A backend restating a shared setting with another default
    leaves out the help and choices it keeps.

    >>> from dataclasses import dataclass, fields
    >>> @dataclass
    ... class Demo:
    ...     steps: int = setting(10, "steps to take")
    >>> fields(Demo)[0].metadata["help"], Demo().steps
    ('steps to take', 10)
    """
    metadata = {"help": help, "choices": choices}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


class Setting(NamedTuple):
    """One setting of a backend, as ``--help`` and the settings reference show it."""

    name: str
    kind: Any            # its type: int, float, bool, str, list[int], list[str]
    default: Any
    help: str
    choices: tuple | None
    shared: bool         # a setting of every backend (declared by RunSettings)


def _declared(kind: type, name: str, key: str) -> Any:
    """The field ``name``'s metadata ``key`` as ``kind`` or the nearest class above it that
    declares the field gives it (a backend restating a default keeps the shared help), else as
    :class:`RunSettings` declares it (expert iteration's ``seed`` and ``learning_rate`` are
    every trainer's)."""
    for cls in (*kind.__mro__, RunSettings):
        declared = getattr(cls, "__dataclass_fields__", {}).get(name)
        if declared is not None and declared.metadata.get(key) is not None:
            return declared.metadata[key]
    return None


@functools.cache
def described(kind: type) -> tuple[Setting, ...]:
    """Every setting of the settings class ``kind``, in its order: those of every backend
    first, then the backend's own."""
    hints = typing.get_type_hints(kind)
    shared = {f.name for f in fields(RunSettings)}
    # a group of settings mixed in (ExpertPriorNetwork) comes after the class's own
    mixed = {f.name for cls in kind.__mro__[1:] if hasattr(cls, "__dataclass_fields__")
             and not issubclass(cls, Settings) for f in fields(cls)}
    return tuple(
        Setting(f.name, hints[f.name],
                f.default_factory() if f.default_factory is not MISSING else f.default,
                _declared(kind, f.name, "help") or "", _declared(kind, f.name, "choices"),
                f.name in shared)
        for f in sorted(fields(kind), key=lambda f: f.name in mixed))


def help_of(kind: type) -> dict[str, str]:
    """Each setting of ``kind`` (a settings dataclass) and its one line of help."""
    return {s.name: s.help for s in described(kind)}


def alternatives(choices: tuple) -> str:
    """``'a', 'b' or 'c'`` (numbers without quotes).

    >>> alternatives(("win", "points")), alternatives((2, 3, 4)), alternatives((2,))
    ("'win' or 'points'", '2, 3 or 4', '2')
    """
    shown = [repr(c) for c in choices]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def accepts_renamed(cls: type) -> type:
    """Let the dataclass ``cls`` be made with the old names of its :attr:`RunSettings.RENAMED`
    settings, each with a ``FutureWarning`` naming the old and the new name (a class
    decorator, above ``@dataclass``)."""
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **type(self).renamed(kwargs, stacklevel=3))

    cls.__init__ = __init__  # type: ignore[method-assign]
    return cls


@dataclass
class Settings:
    """What the settings of every command that trains share: a dataclass of :func:`setting`
    fields, each checked when made (type, range in :data:`RANGES`, choices), saved as JSON in
    the run folder, whose ``RESUMABLE`` fields may change when a run is resumed and whose
    other fields are hashed into its fingerprint; :mod:`train.flags` makes a flag of each.
    ``KIND`` names the settings in messages. :class:`RunSettings` (``cribenv train``'s
    backends) and :class:`train.expert_iteration.IterationSettings` build on it."""

    RESUMABLE: typing.ClassVar[tuple[str, ...]] = ()
    KIND: typing.ClassVar[str] = "training"
    #: settings renamed since runs were made with them: ``{old: new}``; an old name is read
    #: with a ``FutureWarning`` and hashed into the fingerprint under its old name, so that the
    #: checkpoints of those runs still resume
    RENAMED: typing.ClassVar[dict[str, str]] = {}
    #: settings of earlier versions, still found in older runs' config.json: ``{name: why}``,
    #: accepted with a note and ignored (each was resumable, so no fingerprint holds it)
    REMOVED: typing.ClassVar[dict[str, str]] = {}

    def __post_init__(self) -> None:
        """The type (an int is a float where a float is asked for), the range and the choices
        of every setting (:func:`check_setting`)."""
        for s in described(type(self)):
            value = check_type(s.name, getattr(self, s.name), s.kind)
            setattr(self, s.name, value)
            if s.choices is not None and value not in s.choices:
                raise ValueError(f"{s.name} must be {alternatives(s.choices)}, got {value!r}")
            if s.name in RANGES or s.name in LAYER_LISTS:
                check_range(s.name, value, s.kind)
        # duplicate evaluation plays each deal from both seats
        if getattr(self, "eval_games", 0) % 2:
            raise ValueError(f"eval_games must be an even number >= 0, got {self.eval_games}")

    @classmethod
    def renamed(cls, data: dict[str, Any], stacklevel: int = 3) -> dict[str, Any]:
        """``data`` with the old names of :attr:`RENAMED` settings replaced by the new ones
        (a ``FutureWarning`` names each; given both, the later one wins, as in a dict updated
        in code) and the settings of :attr:`REMOVED` dropped (one names each).

        >>> from train.config import TrainConfig
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as said:
        ...     warnings.simplefilter("always")
        ...     TrainConfig.renamed({"n_envs": 4, "seed": 1})
        {'n_games': 4, 'seed': 1}
        >>> print(said[0].message)
        the training setting 'n_envs' is now called 'n_games'; it was read as n_games
        """
        out = {}
        for name, value in data.items():
            if name in cls.REMOVED:
                warnings.warn(f"ignoring the {cls.KIND} setting {name!r} (removed: "
                              f"{cls.REMOVED[name]}); delete it from the config file",
                              FutureWarning, stacklevel=stacklevel)
                continue
            new = cls.RENAMED.get(name)
            if new is not None:
                also = (f" (both are given: the later one, {name if new in out else new}, is "
                        f"used)") if new in data else ""
                warnings.warn(f"the {cls.KIND} setting {name!r} is now called {new!r}; it "
                              f"was read as {new}{also}", FutureWarning, stacklevel=stacklevel)
                name = new
            out[name] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def fixed_settings(self) -> dict[str, Any]:
        """The settings a resumed run must keep."""
        return {k: v for k, v in self.to_dict().items() if k not in self.RESUMABLE}

    def fingerprint(self) -> str:
        """A hash of the settings that must not change when a run is resumed (a renamed
        setting under its old name)."""
        old = {new: name for name, new in self.RENAMED.items()}
        fixed = {old.get(k, k): v for k, v in self.fixed_settings().items()}
        return hashlib.sha256(json.dumps(fixed, sort_keys=True).encode()).hexdigest()[:16]

    def save(self, path: str | Path) -> None:
        write_text(path, json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """The settings of ``data`` (old names read as the new ones, with a warning), each
        checked against its field's type (:func:`check_type`) before anything is built, then
        against its range and choices."""
        data = cls.renamed(data, stacklevel=3)
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown {cls.KIND} settings: {', '.join(unknown)}")
        hints = typing.get_type_hints(cls)
        return cls(**{k: check_type(k, v, hints[k]) for k, v in data.items()})

    @classmethod
    def load(cls, path: str | Path):
        return cls.from_dict(cls.renamed(read_settings(path, "the settings file")))


@dataclass
class ExpertPriorNetwork:
    """The settings of the ``expert-prior`` network (per-card features: logits ``beta`` x the
    expert's value of each legal card + a card MLP), declared once for every command that
    makes one: the trainers' ``policy="expert-prior"`` and ``cribenv rollouts``."""

    card_arch: list[int] = setting(
        [64, 64],
        "expert-prior: hidden layer sizes of the per-card network")
    beta: float = setting(
        3.0,
        "expert-prior: initial weight of the expert's card values in the logits")


@dataclass
class ExpertPriorStart(ExpertPriorNetwork):
    """:class:`ExpertPriorNetwork` and the policy file a trainer's network starts from."""

    init_policy: str = setting(
        "",
        "expert-prior: start from this policy file's card network and beta ('shipped': the "
        "shipped agent; or one fitted by cribenv rollouts)")


@dataclass
class RunSettings(Settings):
    """The settings every ``cribenv train`` backend has, one name per idea.

    The defaults are the usual PPO values; a backend restates the ones it changes."""

    # length
    total_steps: int = setting(1_000_000, "learner decisions (env steps) to train on")
    seed: int = setting(0, "seed of everything")
    # game
    num_players: int = setting(2, "players at the table", (2, 3, 4))
    target: int = setting(121, "points to win: 121 or 61")
    reward: str = setting(
        "win",
        "'win' (+1/-1 at the end; +-game points with skunks) or 'points' (point differential "
        "per decision)", ("win", "points"))
    shaping: float = setting(0.0, "with reward 'win': + shaping x point differential per step")
    skunks: bool = setting(False, "the win reward counts game points (2 or 3 for skunks)")
    # PPO
    learning_rate: float = setting(3e-4, "Adam learning rate")
    n_epochs: int = setting(4, "PPO epochs per update")
    minibatch_size: int = setting(256, "PPO minibatch size (decisions)")
    gamma: float = setting(0.99, "discount factor")
    gae_lambda: float = setting(0.95, "GAE lambda")
    clip_range: float = setting(0.2, "PPO clip range")
    ent_coef: float = setting(0.01, "entropy bonus")
    vf_coef: float = setting(0.5, "value loss weight")
    net_arch: list[int] = setting([256, 256], "hidden layer sizes (actor and critic)")
    # opponents and bookkeeping
    snapshot_every: int = setting(
        20_000,
        "learner steps between frozen copies of the learner added to the pool")
    checkpoint_every: int = setting(20_000, "steps between checkpoints")
    eval_games: int = setting(
        200,
        "evaluation games per heuristic (duplicate deals), 0 disables")
    heuristics: list[str] = setting(["greedy", "expert"], "heuristic bots of the evaluation")

    def check_rollout_size(self, games: str, steps: str) -> None:
        """The rollout buffer (``games`` x ``steps`` decisions, each a 601-entry observation)
        holds at most :data:`MAX_ROLLOUT` decisions (~5 GB)."""
        size = getattr(self, games) * getattr(self, steps)
        if size > MAX_ROLLOUT:
            raise ValueError(f"{games} x {steps} must be <= {MAX_ROLLOUT:,} decisions per "
                             f"rollout (~5 GB of observations), got {getattr(self, games)} x "
                             f"{getattr(self, steps)} = {size:,}")

    def policy_fields(self) -> dict[str, Any]:
        """What the policy files of this backend say about their network (``arch``,
        ``activation``, ...); :func:`train.export.policy_meta` adds the rest."""
        raise NotImplementedError
