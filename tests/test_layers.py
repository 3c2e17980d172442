"""Imports point down: ``cribenv`` never imports the layers above it (``agents``,
``tournament``, ``webtable``, ``train`` with ``train.benchmarks``) nor torch, and no module
imports itself back through another (no circles); the
command line's table (``cribenv/cli.py``'s ``COMMANDS``) names the commands' modules of the
layers above, loaded when one runs, and is the one place the core names them. The env core
installs and runs with numpy, gymnasium and pettingzoo alone."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "cribenv"
# the packages in the order they build on each other: each imports only those before it
LAYERS = ("cribenv", "agents", "tournament", "webtable", "train")
ABOVE = (*LAYERS[1:], "torch")
# adapters to RL libraries built on torch: each is imported only by whoever uses it (never by
# `import cribenv`, which test_importing_the_env_core_loads_no_extra checks), so torch is
# allowed there; the layers above stay forbidden
INTEGRATIONS = CORE / "integrations"
# what `import cribenv; cribenv.env()` must not load (extras and the layers above)
NOT_IN_CORE = (*ABOVE, "matplotlib", "scipy", "choix", "tqdm",
               "safetensors", "stable_baselines3", "sb3_contrib", "PIL", "supersuit",
               "tianshou", "torchrl", "tensordict", "ray", "pyspiel", "open_spiel")


def imported_modules(source: str) -> list[tuple[int, str]]:
    """Every module a source imports, anywhere (lazy imports in functions included, and
    ``importlib.import_module`` / ``__import__`` of a literal name): (line, dotted name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0]
            if name in ("import_module", "__import__") and isinstance(arg, ast.Constant) \
                    and isinstance(arg.value, str):
                found.append((node.lineno, arg.value))
    return found


def forbidden(path: Path) -> tuple[str, ...]:
    """What a module of the core may not import (the integrations may import torch)."""
    return tuple(m for m in ABOVE if m != "torch") if INTEGRATIONS in path.parents else ABOVE


def upward_imports(path: Path) -> list[str]:
    above = forbidden(path)
    return [f"{path.relative_to(ROOT)}:{line}: {name}"
            for line, name in imported_modules(path.read_text(encoding="utf-8"))
            if name.split(".")[0] in above]


def core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_the_scanner_finds_every_form_of_import():
    source = ("import numpy\nimport torch.nn as nn\nfrom agents.base import make_agent\n"
              "def f():\n    from train import ppo\n    importlib.import_module('agents.x')\n"
              "from . import cards\n")
    assert [name for _, name in imported_modules(source)] == [
        "numpy", "torch.nn", "agents.base", "train", "agents.x"]


def test_the_core_never_imports_the_layers_above_it():
    modules = core_modules()
    assert CORE / "wrappers.py" in modules and CORE / "aec.py" in modules
    assert CORE / "cli.py" in modules and CORE / "commands" / "score.py" in modules
    bad = [hit for path in modules for hit in upward_imports(path)]
    assert not bad, "cribenv imports a layer above it:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", LAYERS[1:-1])
def test_the_layers_above_the_core_import_downward_too(package):
    """The bots never import the tournament or the web table; the tournament and the ladder
    never the web table or the trainers; ... (the command line reaches a layer above by the
    command's name: ``tournament --open`` runs ``serve``)."""
    above = LAYERS[LAYERS.index(package) + 1:]
    bad = [f"{path.relative_to(ROOT)}:{line}: {name}"
           for path in sorted((ROOT / package).rglob("*.py"))
           for line, name in imported_modules(path.read_text(encoding="utf-8"))
           if name.split(".")[0] in above]
    assert not bad, f"{package} imports a layer above it:\n" + "\n".join(bad)


def test_the_command_table_is_the_one_place_the_core_names_a_layer_above():
    """``cribenv/cli.py`` imports no command; its ``COMMANDS`` table names each command's
    module (those of the layers above live there: ``agents.terminal``, ``train.demo_command``,
    ``train.benchmarks.command``, ...), and no other string of the core names a module above."""
    from cribenv.cli import COMMANDS

    table = {module for module, _ in COMMANDS.values()}
    assert {m.split(".")[0] for m in table} == set(LAYERS)
    for module in table:
        path = ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), module
    named = []
    for path in core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip: set[int] = set()
        if path == CORE / "cli.py":
            found = [n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                     and getattr(n.target, "id", None) == "COMMANDS"]
            assert len(found) == 1
            skip = {id(n) for n in ast.walk(found[0])}
        named += [f"{path.relative_to(ROOT)}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and id(n) not in skip and n.value.split(".")[0] in LAYERS[1:]
                  and "." in n.value and n.value.replace(".", "").replace("_", "").isalnum()]
    assert not named, "a module above named outside the command table:\n" + "\n".join(named)


def module_imports(package: str) -> dict[str, set[str]]:
    """The project's modules of ``package`` (dotted names) and the project modules each one
    imports anywhere (lazy imports too): ``from a import b`` counts as ``a.b`` when that is
    a module, else as ``a``."""
    files = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [name for _, name in imported_modules(path.read_text(encoding="utf-8"))]
        for node in ast.walk(tree):   # `from a import b`: the module a.b, not the package a
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                if all(sub in files for sub in subs):
                    names.remove(node.module)
                names += [sub for sub in subs if sub in files]
        graph[module] = {m for m in map(known, names) if m is not None and m != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_lazy_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", LAYERS)
def test_no_module_imports_itself_back(package):
    """A circle between two files means a third file is missing: none, lazy imports
    included (webtable.table <-> views and tournament.report <-> plots were two)."""
    graph = module_imports(package)
    assert len(graph) > 3
    assert not circles(graph), f"import circles in {package}: {circles(graph)}"


def test_only_the_integrations_may_import_torch():
    """The exemption is narrow: an integration module importing `agents` is still caught, and
    the integrations package itself imports no library (its modules are loaded one by one)."""
    assert forbidden(INTEGRATIONS / "torchrl.py") == LAYERS[1:]
    assert forbidden(CORE / "aec.py") == ABOVE and forbidden(INTEGRATIONS) == ABOVE
    assert not imported_modules((INTEGRATIONS / "__init__.py").read_text(encoding="utf-8"))
    assert any("torch" in name for p in INTEGRATIONS.glob("*.py")
               for _, name in imported_modules(p.read_text(encoding="utf-8")))


def test_importing_the_env_core_loads_no_extra():
    code = ("import sys, cribenv, cribenv.wrappers, cribenv.opponents\n"
            "e = cribenv.env(); e.reset(seed=0)\n"
            "r = cribenv.raw_env(num_players=4); r.reset(seed=1)\n"
            "r.step(int(r.action_mask().argmax()))\n"
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {NOT_IN_CORE!r})\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_core_depends_on_numpy_gymnasium_and_pettingzoo_only():
    project = pyproject()["project"]
    names = sorted(d.split(">")[0].split("=")[0].split("[")[0] for d in project["dependencies"])
    assert names == ["gymnasium", "numpy", "pettingzoo"]
    extras = project["optional-dependencies"]
    everything = " ".join(" ".join(v) for v in extras.values())
    for package in ("matplotlib", "scipy", "choix", "tqdm", "safetensors", "torch", "numba"):
        assert package in everything, package
    assert any(d.startswith("numba>=0.60") for d in extras["vector"])
    assert "cribenv[tournament,vector]" in extras["train"]


def test_agents_declare_their_maker_and_the_install_has_it():
    declared = pyproject()["project"]["entry-points"]["cribenv.opponents"]
    assert declared == {"agents": "agents:make_agent"}
    installed = {ep.name: ep.value for ep in metadata.entry_points(group="cribenv.opponents")}
    assert installed.get("agents") == "agents:make_agent", (
        "the installed metadata predates the 'cribenv.opponents' entry point: reinstall the "
        "project (pip install --no-deps -e .)")


def test_data_files_ship_inside_the_package_that_reads_them():
    """The demo reads the shipped recipe as the ``train`` package's data (importlib.resources),
    never through ``__file__.parents[...]`` into another layer."""
    data = pyproject()["tool"]["setuptools"]["package-data"]
    assert "configs/*.json" in data["train"]
    for path in CORE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "parents[" in text and path != CORE / "cli.py":   # the command line finds its checkout
            raise AssertionError(f"{path} climbs out of its package with parents[...]")


@pytest.mark.parametrize("package", LAYERS)
def test_every_package_is_shipped_and_doctested(package):
    config = pyproject()["tool"]
    include = config["setuptools"]["packages"]["find"]["include"]
    assert package in include and f"{package}.*" in include
    assert package in config["pytest"]["ini_options"]["testpaths"]
    assert "--doctest-modules" in config["pytest"]["ini_options"]["addopts"]


def layout_paths() -> list[str]:
    """The paths in the first column of the layout table (docs/development.md)."""
    page = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    section = page.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [p for row in rows for p in row.split("|")[1].replace("`", "").replace(",", " ")
            .split()]


def test_the_readme_layout_table_matches_the_tree():
    paths = layout_paths()
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, (f"the layout table (docs/development.md) names paths that do not "
                         f"exist: {missing}")
    listed = {p.rstrip("/") for p in paths}
    packages = [d.name for d in ROOT.iterdir() if (d / "__init__.py").is_file()]
    modules = [f"cribenv/{p.name}" for p in CORE.glob("*.py") if p.name != "__init__.py"]
    absent = [p for p in packages + modules
              if p not in listed and not any(x.startswith(p + "/") for x in listed)]
    assert not absent, f"add these to the layout table (docs/development.md): {absent}"


def test_agents_holds_the_bots_and_the_old_names_still_import():
    """The tournament, the ladder and the web table left ``agents/`` for packages of their own;
    their old names give the new modules, with a deprecation warning naming the new home."""
    assert not any((ROOT / "agents" / p).exists() for p in ("tournament", "ladder", "web"))
    code = ("import warnings, importlib\n"
            "import tournament.ladder.deals, webtable.table, tournament.storage\n"
            "for old, new in [('agents.ladder.deals', tournament.ladder.deals),\n"
            "                 ('agents.web.table', webtable.table),\n"
            "                 ('agents.tournament.storage', tournament.storage)]:\n"
            "    with warnings.catch_warnings(record=True) as caught:\n"
            "        warnings.simplefilter('always')\n"
            "        assert importlib.import_module(old) is new, old\n"
            "    said = [str(w.message) for w in caught if w.category is DeprecationWarning]\n"
            "    assert f'{old} moved to {new.__name__}' in ' '.join(said), said\n"
            "from agents.ladder.deals import LADDER_FILE\n"
            "assert LADDER_FILE is tournament.ladder.deals.LADDER_FILE\n"
            "import agents.tournament\n"
            "assert agents.tournament.__spec__.name == 'tournament'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
