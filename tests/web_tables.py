"""Playing a web-table game to its end in the tests (``tests/test_web_store.py``,
``tests/test_web_record.py``, ``tests/test_web_review.py``)."""

from __future__ import annotations


def finish(table) -> None:
    """Play ``table`` (an :class:`webtable.table.Table`) to the end: the first legal cards,
    every cut and show acknowledged; with Muggins, every claim 0 (the bot takes it all)."""
    while table.stage != "over":
        if table.stage in ("cut", "show"):
            table.act(table.seq, action="next")
        elif table.stage == "count":
            table.act(table.seq, action="count", claims={w: 0 for w in table.claims_due})
        else:
            need = (table.need - len(table.game.discards[table.human])
                    if table.stage == "discard" else 1)
            table.act(table.seq, cards=table.game.legal_actions()[:need],
                      claims={w: 0 for w in table.claims_due})


def finished_game(c, **settings):
    """A game made through the API of the test client ``c`` (greedy, seed 7, to 61, and
    ``settings``) and played to its end: ``(its state as the API gives it, its table)``."""
    r = c.post("/api/games", json={"bot": "greedy", "seed": 7, "target": 61, **settings})
    assert r.status_code == 201, r.text
    table = c.app.state.games.get(r.json()["id"])
    finish(table)
    return c.get(f"/api/games/{r.json()['id']}").json(), table
