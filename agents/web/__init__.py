"""The web table (``cribenv serve``): play Cribbage against the bots in a browser, with an
advisor beside you, and step through recorded games.

* :mod:`agents.web.table`: one person's game (the engine, the bots, the moves, the advice of
  :mod:`agents.advice`); :mod:`agents.web.opponents`: the bots as the lobby names them;
* :mod:`agents.web.sessions`: the games held in memory under unguessable ids, with expiry
  (a full server makes room: finished games first, then the idle ones);
* :mod:`agents.web.saved_games`: the games kept in SQLite after every move, so a restart
  loses none;
* :mod:`agents.web.render` and :mod:`agents.web.views`: the HTML (cards, the SVG pegging board,
  the play, the show with every combination, the result; the seats' names and the words of
  every score from :mod:`agents.words`);
* :mod:`agents.web.replay`: recorded games and tournament games to step through;
* :mod:`agents.web.routes`: the FastAPI routes, one module per part of the address, over
  :mod:`agents.web.server` (what they share); :mod:`agents.web.app`: ``create_app``, the routes
  put together; :mod:`agents.web.command`: ``cribenv serve``.

It needs the ``web`` extra (fastapi, uvicorn); the page itself is server-rendered HTML with one
small script and one stylesheet, served from the package (nothing is fetched from elsewhere).
"""
