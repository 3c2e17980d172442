"""MkDocs hook: the figures of ``results/`` are part of the site, so a page links them by the
same relative path as the README (``results/baselines/tournament.png``) and they stay in one
place."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]


def on_files(files, config):
    """Add every image under ``results/`` to the site at ``results/...``."""
    for path in sorted((ROOT / "results").rglob("*")):
        if path.suffix.lower() in (".png", ".svg", ".gif", ".jpg") and path.is_file():
            files.append(File(path.relative_to(ROOT).as_posix(), src_dir=str(ROOT),
                              dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    return files
