"""The web table (``cribenv serve``): play Cribbage against the bots in a browser, with an
advisor beside you, and step through recorded games.

* :mod:`agents.web.table`: one person's game (the engine, the bots, the moves, the advice);
* :mod:`agents.web.sessions`: the games held in memory under unguessable ids, with expiry
  (a full server makes room: finished games first, then the idle ones);
* :mod:`agents.web.saved_games`: the games kept in SQLite after every move, so a restart
  loses none;
* :mod:`agents.web.render` and :mod:`agents.web.views`: the HTML (cards, the SVG pegging board,
  the play, the show with every combination, the result);
* :mod:`agents.web.replay`: recorded games and tournament games to step through;
* :mod:`agents.web.app`: the FastAPI routes; :mod:`agents.web.command`: ``cribenv serve``.

It needs the ``web`` extra (fastapi, uvicorn); the page itself is server-rendered HTML with one
small script and one stylesheet, served from the package (nothing is fetched from elsewhere).
"""
