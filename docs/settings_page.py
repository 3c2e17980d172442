"""The training settings reference (``settings.md`` of the site), written from the settings
classes themselves: each backend's :func:`train.command.settings_class`, read through
:func:`train.settings.described` (name, type, default, help, choices), with the ranges of
:data:`train.settings.RANGES` and each class's ``RESUMABLE``, ``RENAMED`` and ``REMOVED``.
``cribenv train --backend X --help`` is made from the same definitions, so the two cannot
disagree. ``python docs/settings_page.py`` writes it to ``docs/settings.md`` (a file, so its
links work on a checkout and a forge too); ``tests/test_docs.py`` checks that file is what this
writes, and the page against the command's own flags.

>>> "| `total_steps` |" in markdown()
True
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from train.command import BACKENDS, settings_class
from train.expert_iteration import IterationSettings
from train.settings import (
    LAYER_LISTS,
    MAX_LAYERS,
    MAX_WIDTH,
    OPEN_LOW,
    RANGES,
    RunSettings,
    Setting,
    alternatives,
    described,
)

TITLE = "Training settings"
INTRO = """\
Every setting of `cribenv train`, for each backend (`--backend selfplay`, the default; `sb3`;
`rllib`). This page is written when the site is built, from the settings classes that
`cribenv train --backend X --help` also reads (`train.settings.RunSettings` for the settings
every backend has, then `SelfPlayConfig`, `TrainConfig` and `RLlibConfig`), so its defaults,
choices and help are the command's.

A setting is given as a flag, its name with hyphens (`--total-steps 300000`), or as a key of a
JSON `--config` file, its name as written here (`"total_steps": 300000`); a flag wins over the
file. A list takes several values (`--net-arch 128 128`, `"net_arch": [128, 128]`); a true or
false setting takes `true` or `false`. The run's `config.json` holds every setting it ran
with. The defaults are shown as a `--config` file writes them. The command's other flags are
`--run-dir DIR` (the run's folder, required), `--config FILE`, `--backend NAME`, `--resume`
(see [resume a run](resume.md)), `--no-progress` and, for `rllib`, `--address ADDRESS` (see
[train on Ray](ray.md)).
"""

KINDS = {int: "integer", float: "number", bool: "true or false", str: "text",
         list[int]: "list of integers", list[str]: "list of names"}


def shown(value: Any) -> str:
    """A default as a ``--config`` file writes it, in backticks.

    >>> shown([128, 128]), shown(True), shown("cards"), shown(0.0003)
    ('`[128, 128]`', '`true`', '`"cards"`', '`0.0003`')
    """
    return f"`{json.dumps(value)}`"


def number(value: float) -> str:
    """``65536`` as ``65,536``; ``0.5`` as is."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def allowed(s: Setting) -> str:
    """What the setting ``s`` accepts: its choices, its range (:data:`RANGES`, an interval
    for a number) or its type.

    >>> from train.selfplay_config import SelfPlayConfig
    >>> by_name = {s.name: s for s in described(SelfPlayConfig)}
    >>> [allowed(by_name[n]) for n in ("reward", "gamma", "learning_rate", "n_games")]
    ["'win', 'points' or 'mix'", '[0, 1]', '(0, 1]', '1 to 65,536']
    >>> allowed(by_name["net_arch"]), allowed(by_name["time_limit"]), allowed(by_name["device"])
    ('1 to 16 widths, each 1 to 8,192', '>= 0', 'text')
    """
    if s.choices is not None:
        return alternatives(s.choices)
    if s.name in LAYER_LISTS:
        return f"1 to {MAX_LAYERS} widths, each 1 to {number(MAX_WIDTH)}"
    if s.name not in RANGES:
        return KINDS.get(s.kind, str(s.kind))
    low, high = RANGES[s.name]
    open_low = s.name in OPEN_LOW
    if s.kind is float and low is not None and high is not None:
        return f"{'(' if open_low else '['}{number(low)}, {number(high)}]"
    if low is not None and high is not None:
        return f"{number(low)} to {number(high)}"
    if low is not None:
        return f"{'>' if open_low else '>='} {number(low)}"
    return f"<= {number(high)}"


def cell(text: str) -> str:
    """``text`` safe in a Markdown table cell (no ``|``, no emphasis)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def name_cell(name: str) -> str:
    return f"`{name}`"


def shared_rows() -> list[str]:
    """The table of the settings every backend has (:class:`train.settings.RunSettings`): a
    default per backend; where a backend says something else about a setting (its help or
    its choices), a line for it."""
    by_backend = {b: {s.name: s for s in described(settings_class(b))} for b in BACKENDS}
    rows = [f"| setting | {' | '.join(BACKENDS)} | allowed | what it does |",
            "|---|" + "---|" * len(BACKENDS) + "---|---|"]
    for s in described(RunSettings):
        mine = {b: by_backend[b][s.name] for b in BACKENDS}
        ok = [cell(allowed(s))] + [f"*{b}*: {cell(allowed(m))}" for b, m in mine.items()
                                   if allowed(m) != allowed(s)]
        what = [cell(s.help)] + [f"*{b}*: {cell(m.help)}" for b, m in mine.items()
                                 if m.help != s.help]
        rows.append(f"| {name_cell(s.name)} | "
                    + " | ".join(shown(m.default) for m in mine.values())
                    + f" | {'<br>'.join(ok)} | {'<br>'.join(what)} |")
    return rows


def own_rows(backend: str | type) -> list[str]:
    """The table of the settings of ``backend`` alone (or of a settings class, every one)."""
    kind = backend if isinstance(backend, type) else settings_class(backend)
    rows = ["| setting | default | allowed | what it does |", "|---|---|---|---|"]
    for s in described(kind):
        if not s.shared or isinstance(backend, type):
            rows.append(f"| {name_cell(s.name)} | {shown(s.default)} | {cell(allowed(s))} | "
                        f"{cell(s.help)} |")
    return rows


def names(items) -> str:
    return ", ".join(f"`{n}`" for n in items)


def markdown() -> str:
    """The whole page."""
    out = [f"# {TITLE}", "", INTRO, "## Settings every backend has", "",
           "The default of each backend, then what each accepts; a backend that says something "
           "else about a setting has its own line.", "", *shared_rows(), ""]
    for backend in BACKENDS:
        out += [f"## The {backend} backend's own", "", *own_rows(backend), ""]
    out += ["## Expert iteration", "",
            "`cribenv expert-iteration`'s settings (`IterationSettings`, saved as its run "
            "folder's `settings.json`), on the same base: checked the same way, their flags made "
            "from them.", "", *own_rows(IterationSettings), ""]
    out += ["## On resume", "",
            "`cribenv train --run-dir DIR --resume` keeps the run's own settings. A flag given "
            "changes one only if it is resumable; another setting given with a different value "
            "is refused, naming it.", ""]
    out += [f"* **{b}**: {names(settings_class(b).RESUMABLE)}." for b in BACKENDS]
    out += [f"* **expert-iteration** (the same run folder again): "
            f"{names(IterationSettings.RESUMABLE)}."]
    out += ["", "## Old names", "",
            "A renamed setting is still read from an old `config.json` or flag, with a "
            "`FutureWarning` naming the old and the new name; a removed one is ignored, with a "
            "warning saying why.", ""]
    for b in BACKENDS:
        kind = settings_class(b)
        out += [f"* **{b}**: `{old}` is `{new}`." for old, new in kind.RENAMED.items()]
        out += [f"* **{b}**: `{old}` is gone ({cell(why)})." for old, why in kind.REMOVED.items()]
    return "\n".join(out) + "\n"


PAGE = Path(__file__).resolve().parent / "settings.md"

if __name__ == "__main__":   # python docs/settings_page.py: write docs/settings.md anew
    PAGE.write_text(markdown(), encoding="utf-8")
    print(f"wrote {PAGE}")
