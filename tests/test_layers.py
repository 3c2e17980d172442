"""Imports point down: ``cribenv`` never imports the layers above it (``agents``, ``train``,
``benchmarks``) nor torch, except the command-line dispatcher; the env core installs and runs
with numpy, gymnasium and pettingzoo alone."""

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
# the one room that sees every layer: it parses the command line and calls the layer's code
DISPATCHER = (CORE / "cli.py", CORE / "commands")
ABOVE = ("agents", "train", "benchmarks", "torch")
# adapters to RL libraries built on torch: each is imported only by whoever uses it (never by
# `import cribenv`, which test_importing_the_env_core_loads_no_extra checks), so torch is
# allowed there; the layers above stay forbidden
INTEGRATIONS = CORE / "integrations"
# what `import cribenv; cribenv.env()` must not load (extras and the layers above)
NOT_IN_CORE = ("agents", "train", "benchmarks", "torch", "matplotlib", "scipy", "choix", "tqdm",
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
    return sorted(p for p in CORE.rglob("*.py")
                  if not any(p == d or d in p.parents for d in DISPATCHER))


def test_the_scanner_finds_every_form_of_import():
    source = ("import numpy\nimport torch.nn as nn\nfrom agents.base import make_agent\n"
              "def f():\n    from train import ppo\n    importlib.import_module('agents.x')\n"
              "from . import cards\n")
    assert [name for _, name in imported_modules(source)] == [
        "numpy", "torch.nn", "agents.base", "train", "agents.x"]


def test_the_core_never_imports_the_layers_above_it():
    modules = core_modules()
    assert CORE / "wrappers.py" in modules and CORE / "aec.py" in modules
    assert CORE / "cli.py" not in modules
    bad = [hit for path in modules for hit in upward_imports(path)]
    assert not bad, "cribenv imports a layer above it (outside cli.py / commands/):\n" + \
        "\n".join(bad)


@pytest.mark.parametrize("package, above", [("agents", ("train", "benchmarks")),
                                            ("train", ("benchmarks",))])
def test_the_layers_above_the_core_import_downward_too(package, above):
    bad = [f"{path.relative_to(ROOT)}:{line}: {name}"
           for path in sorted((ROOT / package).rglob("*.py"))
           for line, name in imported_modules(path.read_text(encoding="utf-8"))
           if name.split(".")[0] in above]
    assert not bad, f"{package} imports a layer above it:\n" + "\n".join(bad)


def test_only_the_dispatcher_reaches_up():
    """The scan is not vacuous: the dispatcher does import the layers above (and is exempt)."""
    hits = [hit for d in DISPATCHER for p in ([d] if d.is_file() else sorted(d.rglob("*.py")))
            for hit in upward_imports(p)]
    assert any(": agents" in h for h in hits) and any(": benchmarks" in h for h in hits)


def test_only_the_integrations_may_import_torch():
    """The exemption is narrow: an integration module importing `agents` is still caught, and
    the integrations package itself imports no library (its modules are loaded one by one)."""
    assert forbidden(INTEGRATIONS / "torchrl.py") == ("agents", "train", "benchmarks")
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
        if "parents[" in text and path.name != "bench.py":   # bench finds its checkout
            raise AssertionError(f"{path} climbs out of its package with parents[...]")


@pytest.mark.parametrize("package", ["cribenv", "agents", "train", "benchmarks"])
def test_every_package_is_shipped_and_doctested(package):
    config = pyproject()["tool"]
    assert f"{package}*" in config["setuptools"]["packages"]["find"]["include"]
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
