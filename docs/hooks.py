"""MkDocs hook: what the site holds besides ``docs/``.

* The figures of ``results/`` and each results folder's ``README.md`` are part of the site, at
  the same relative paths (``results/baselines/tournament.png``,
  ``results/selfplay-scratch/README.md``), so a page links a run's README and figures where
  they live, and the runs' measurements stay in one place.
* ``settings.md``, the training settings reference, is written at build time from the
  settings classes (``docs/settings_page.py``), as ``cribenv train --help`` is.
* ``from-scratch.md`` joins the navigation's *Explanation* section once the page exists.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File
from settings_page import markdown as settings_markdown  # docs/settings_page.py, beside this hook

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (".png", ".svg", ".gif", ".jpg")
#: pages that join the navigation when they exist: (section, title, page)
OPTIONAL_PAGES = [("Explanation", "From the rules alone", "from-scratch.md")]


def on_config(config):
    """Add each of :data:`OPTIONAL_PAGES` that exists (and is not in the navigation yet) at
    the end of its section."""
    listed = {page for entry in _walk(config["nav"] or []) for page in entry.values()
              if isinstance(page, str)}
    for section, title, name in OPTIONAL_PAGES:
        if (Path(config["docs_dir"]) / name).is_file() and name not in listed:
            for entry in config["nav"]:
                if isinstance(entry, dict) and isinstance(entry.get(section), list):
                    entry[section].append({title: name})
    return config


def _walk(nav):
    """Every ``{title: page}`` entry of the navigation, sections included."""
    for entry in nav:
        if isinstance(entry, dict):
            yield entry
            for value in entry.values():
                if isinstance(value, list):
                    yield from _walk(value)


def on_files(files, config):
    """Add every figure and README under ``results/`` at ``results/...``, and the generated
    settings page."""
    for path in sorted((ROOT / "results").rglob("*")):
        if path.is_file() and (path.suffix.lower() in FIGURES or path.name == "README.md"):
            files.append(File(path.relative_to(ROOT).as_posix(), src_dir=str(ROOT),
                              dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    files.append(File.generated(config, "settings.md", content=settings_markdown()))
    return files

