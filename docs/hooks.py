"""MkDocs hook: what the site holds besides ``docs/``.

* The figures of ``results/`` and each results folder's ``README.md`` are part of the site, at
  ``results/...`` beside the pages (``results/baselines/tournament.png``,
  ``results/selfplay-scratch/README.md``), so a page links a run's README and figures where
  they live, and the runs' measurements stay in one place.
* ``CHANGELOG.md``, at the repository's root, is a page of the site too (``CHANGELOG/``).
* A page links them as the tree has them, ``../results/...`` and ``../CHANGELOG.md`` from
  ``docs/`` (so the link works on a checkout and on a forge); :func:`on_page_markdown` drops
  that one ``../`` for the site.
* ``settings.md``, the training settings reference, is a file of ``docs/`` written from the
  settings classes (``python docs/settings_page.py``; ``tests/test_docs.py`` checks it is
  current), as ``cribenv train --help`` is.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (".png", ".svg", ".gif", ".jpg")


def on_files(files, config):
    """Add every figure and README under ``results/`` at ``results/...``, and the changelog."""
    kept = [path for path in sorted((ROOT / "results").rglob("*")) if path.is_file()
            and (path.suffix.lower() in FIGURES or path.name == "README.md")]
    for path in [*kept, ROOT / "CHANGELOG.md"]:
        if path.is_file():
            files.append(File(path.relative_to(ROOT).as_posix(), src_dir=str(ROOT),
                              dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    return files


def site_links(markdown: str, src_uri: str) -> str:
    """The links of the page ``src_uri`` (relative to ``docs/``) to ``results/`` and to the
    changelog as the tree has them (one ``../`` more than the site: ``docs/`` is the site's
    root), made the site's.

    >>> site_links("[run](../results/a/README.md), ![f](../results/a/f.png)", "search.md")
    '[run](results/a/README.md), ![f](results/a/f.png)'
    >>> site_links("[run](../../results/a/README.md) [x](results/b.md)", "api/agents.md")
    '[run](../results/a/README.md) [x](results/b.md)'
    >>> site_links("[up](../README.md)", "results/a/README.md")
    '[up](../README.md)'
    >>> site_links("[changes](../CHANGELOG.md), [readme](../README.md)", "development.md")
    '[changes](CHANGELOG.md), [readme](../README.md)'
    """
    if src_uri.startswith("results/"):   # the results' own READMEs: the tree's places
        return markdown
    up = "../" * src_uri.count("/")
    return re.sub(rf"(\]\(\s*|^\[[^\]]+\]:\s*){re.escape(up)}\.\./(results/|CHANGELOG\.md)",
                  lambda m: f"{m.group(1)}{up}{m.group(2)}", markdown, flags=re.M)


def on_page_markdown(markdown, page, config, files):
    return site_links(markdown, page.file.src_uri)
