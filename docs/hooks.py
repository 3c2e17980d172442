"""MkDocs hook: what the site holds besides ``docs/``.

* The figures of ``results/`` and each results folder's ``README.md`` are part of the site, at
  the same relative paths (``results/baselines/tournament.png``,
  ``results/selfplay-scratch/README.md``), so a page links a run's README and figures where
  they live, and the runs' measurements stay in one place.
* ``settings.md``, the training settings reference, is written at build time from the
  settings classes (``docs/settings_page.py``), as ``cribenv train --help`` is.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File
from settings_page import markdown as settings_markdown  # docs/settings_page.py, beside this hook

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (".png", ".svg", ".gif", ".jpg")


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

