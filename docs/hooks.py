"""MkDocs hook: the README's links to its own sections lead to the pages that hold them."""

from __future__ import annotations

from mkdocs.utils import get_relative_url

#: README anchors (GitHub's) that included README text links to -> the page (and its anchor)
#: that holds that section on the site
README_ANCHORS = {
    "rl-libraries": "libraries.md",
    "notebooks-and-docs": "notebooks.md",
    "on-a-ray-cluster": "tournaments.md#on-a-ray-cluster",
    "rllib-cribenv-train---backend-rllib": "training.md#rllib-cribenv-train-backend-rllib",
}


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
