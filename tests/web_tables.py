"""Playing a web-table game to its end in the tests (``tests/test_web_store.py``,
``tests/test_web_record.py``, ``tests/test_web_review.py``)."""

from __future__ import annotations


def finish(table) -> None:
    """Play ``table`` (an :class:`agents.web.table.Table`) to the end: the first legal cards,
    every cut and show acknowledged."""
    while table.stage != "over":
        if table.stage in ("cut", "show"):
            table.act(table.seq, action="next")
        else:
            need = (table.need - len(table.game.discards[table.human])
                    if table.stage == "discard" else 1)
            table.act(table.seq, cards=table.game.legal_actions()[:need])
