"""MkDocs hook: the rules page is RULES.md itself, read at build time (never a copy kept here).

RULES.md lives in the project's ``shared/`` folder, which sits beside the repository (or inside
it); the hook looks in ``shared/`` of the repository and of each folder above it, or at the
file named by ``CRIBENV_RULES``, and stops the build with the places it looked if none has it.
"""

from __future__ import annotations

import os
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

PAGE = "rules.md"


def find_rules(root: Path) -> Path:
    """The RULES.md the rules page is built from (see the module docstring)."""
    named = os.environ.get("CRIBENV_RULES")
    places = [Path(named)] if named else [
        folder / "shared" / "RULES.md" for folder in (root, *root.parents)]
    for place in places:
        if place.is_file():
            return place
    raise PluginError("RULES.md not found for the rules page; looked at: "
                      + ", ".join(str(p) for p in places)
                      + " (set CRIBENV_RULES=/path/to/RULES.md)")


def on_files(files, config):
    root = Path(config.config_file_path).resolve().parent
    text = find_rules(root).read_text(encoding="utf-8")
    files.append(File.generated(config, PAGE, content=text))
    return files
