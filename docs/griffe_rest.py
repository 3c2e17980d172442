"""A griffe extension for the API pages: the docstrings' few reST habits, read as Markdown.

The docstrings are written for ``help()`` and doctest, with some reST: roles
(``:class:`~cribenv.game.Rules```), ``::`` before a literal block, simple tables framed by
``===`` rules, and doctest lines flush with the text. Markdown would show the roles verbatim,
turn a table's rules into headings and run the examples into paragraphs; this rewrites them
for the page only (the source is untouched):

>>> to_markdown("see :class:`~cribenv.game.Rules` and :func:`cribenv.env`::")
'see `Rules` and `cribenv.env`:'
>>> print(to_markdown("=====  =====\\nA      one\\nB      two\\n       more\\n=====  ====="))
| | |
|---|---|
| A | one |
| B | two more |
>>> print(to_markdown(":class:`Env`\\n    the env.\\n\\nArgs:\\n    x: a number."))
* `Env`
<BLANKLINE>
    the env.
<BLANKLINE>
Args:
    x: a number.
"""

from __future__ import annotations

import re

from griffe import Extension

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")
RULE = re.compile(r"^ *=+( +=+)+ *$")
PROMPT = re.compile(r"^ *>>> ")
SECTION = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")       # Google sections (Args:, Returns:, ...)


def _role(m: re.Match) -> str:
    short, target = m.group(1), m.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def _table(lines: list[str]) -> list[str]:
    """A reST simple table (its rule lines included) as a Markdown table."""
    rule = lines[0]
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", rule)]
    starts = [s for s, _ in spans]
    rules = [i for i, line in enumerate(lines) if RULE.match(line)]
    header: list[str] = [""] * len(spans)
    rows: list[list[str]] = []
    for i, line in enumerate(lines):
        if i in rules:
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)])]
        if rows and not cells[0]:              # a continuation line of the row above
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    if len(rules) == 3 and rows:               # a header row above the middle rule
        header, rows = rows[0], rows[1:]
    out = ["| " + " | ".join(header) + " |" if any(header) else "|" + " |" * len(spans),
           "|" + "---|" * len(spans)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def to_markdown(text: str) -> str:
    """The docstring ``text`` with its reST habits in Markdown (see the module docstring)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if RULE.match(line):                   # a simple table: rule, rows, rule (, rows, rule)
            rules, j = [i], i + 1
            while j < len(lines) and lines[j].strip():
                if RULE.match(lines[j]):
                    rules.append(j)
                    if len(rules) == 3 or j + 1 == len(lines) or not lines[j + 1].strip():
                        break
                j += 1
            if len(rules) >= 2:
                out += _table(lines[i:rules[-1] + 1])
                i = rules[-1] + 1
                continue
        if PROMPT.match(line) and not line.startswith("    "):   # a doctest flush with the text
            indent = len(line) - len(line.lstrip())
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:])
                i += 1
            out += ["```pycon", *block, "```"]
            continue
        term = _term(lines, i)
        if term:                               # a definition list item: term, indented body
            if out and out[-1].strip():        # items written without a blank between
                out.append("")
            out += ["* " + " ".join(t.strip() for t in lines[i:term]), ""]
            i = term
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                if not lines[i].strip() and not (i + 1 < len(lines)
                                                 and lines[i + 1].startswith("    ")):
                    break
                out.append(lines[i])
                i += 1
            continue
        out.append(line)
        i += 1
    text = "\n".join(out)
    text = ROLE.sub(_role, text)
    return re.sub(r"(?<=\S)::$", ":", text, flags=re.M)


def _term(lines: list[str], i: int) -> int:
    """Where the body of a reST definition starting at line ``i`` begins (0: not one).

    A term is one or more flush lines after a blank line (or right after the body of the
    previous definition), its body the indented lines right below it (not a literal block
    after ``::``, not a Google section such as ``Args:``).
    """
    if i and lines[i - 1].strip() and not lines[i - 1].startswith("    "):
        return 0
    j = i
    while j < len(lines) and lines[j].strip() and not lines[j].startswith(" "):
        if PROMPT.match(lines[j]) or SECTION.match(lines[j]) or lines[j].rstrip().endswith("::"):
            return 0
        j += 1
    if j == i or j >= len(lines) or not lines[j].startswith("    ") or not lines[j].strip():
        return 0
    return j


class RestToMarkdown(Extension):
    """Rewrite every docstring with :func:`to_markdown` once the API is loaded."""

    def on_object(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
