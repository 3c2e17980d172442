"""The web table's templates (``webtable/templates/``): one Jinja2 environment, escaping on
for ``.html`` and ``.svg``, so that everything a player or a file puts in a page (a name, a
bot's label, a saved game's words) is escaped by the engine; Python hands the templates
data only.

The page is sent without the white space between its tags (the tests and the page's script
read it so): a template's line breaks, and the indentation after them, are dropped when it is
read. Break a template's lines between tags, or inside a tag where a space is written before
the break, never inside words that need the space, nor inside a ``{{ }}`` or ``{% %}``.

    >>> str(render_string('<p>\\n  {{ who }}\\n</p>', who="<script>"))
    '<p>&lt;script&gt;</p>'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from jinja2.ext import Extension
from markupsafe import Markup

__all__ = ["ENV", "macro", "render", "render_string"]

_BREAK = re.compile(r"\n[ \t]*")


class _Joined(Extension):
    """Drops every line break of a template, and the indentation after it, as it is read."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return _BREAK.sub("", source)


ENV = Environment(loader=PackageLoader("webtable", "templates"),
                  autoescape=select_autoescape(("html", "svg"), default_for_string=True),
                  undefined=StrictUndefined, extensions=[_Joined], keep_trailing_newline=False)
ENV.filters["f0"] = lambda v: f"{v:.0f}"
ENV.filters["f1"] = lambda v: f"{v:.1f}"
ENV.filters["f2"] = lambda v: f"{v:.2f}"
ENV.filters["signed"] = lambda v: f"{v:+.2f}"


def render(name: str, **context: Any) -> Markup:
    """The template ``name`` filled in with ``context`` (escaped: safe to put in a page)."""
    return Markup(ENV.get_template(name).render(**context))


def macro(name: str, macro_name: str) -> Callable[..., Markup]:
    """The macro ``macro_name`` of the template ``name`` (a piece of a page: a card, a show)."""
    return getattr(ENV.get_template(name).module, macro_name)


def render_string(source: str, **context: Any) -> Markup:
    """A template given as a string (escaping on), filled in."""
    return Markup(ENV.from_string(source).render(**context))
