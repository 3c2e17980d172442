"""MkDocs hooks: the rules page is RULES.md itself, read at build time (never a copy kept here),
and the README's links to its own sections lead to the pages that hold them.

RULES.md lives in the project's ``shared/`` folder, which sits beside the repository (or inside
it); the hook looks in ``shared/`` of the repository and of each folder above it, or at the
file named by ``CRIBENV_RULES``, and stops the build with the places it looked if none has it.
"""

from __future__ import annotations

import os
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

PAGE = "rules.md"

#: README anchors (GitHub's) that included README text links to -> the page (and its anchor)
#: that holds that section on the site
README_ANCHORS = {
    "rl-libraries": "libraries.md",
    "notebooks-and-docs": "notebooks.md",
    "on-a-ray-cluster": "tournaments.md#on-a-ray-cluster",
    "rllib-cribenv-train---backend-rllib": "training.md#rllib-cribenv-train-backend-rllib",
}


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


def on_page_content(html, page, config, files):
    """Point ``href="#anchor"`` links of included README text at the page holding the section
    (unless this page has that anchor itself)."""
    for anchor, target in README_ANCHORS.items():
        if f'href="#{anchor}"' not in html or f'id="{anchor}"' in html:
            continue
        path, _, fragment = target.partition("#")
        url = get_relative_url(files.get_file_from_path(path).url, page.url)
        html = html.replace(f'href="#{anchor}"',
                            f'href="{url}{"#" + fragment if fragment else ""}"')
    return html
