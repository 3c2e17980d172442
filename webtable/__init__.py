"""The web table (``cribenv serve``): play Cribbage against the bots in a browser, with an
advisor beside you, and step through recorded games.

* :mod:`webtable.table`: one person's game (the engine, the bots, the moves, the advice of
  :mod:`agents.advice`); :mod:`webtable.opponents`: the bots as the lobby names them;
* :mod:`webtable.sessions`: the games held in memory under unguessable ids, with expiry
  (a full server makes room: finished games first, then the idle ones);
* :mod:`webtable.saved_games`: the games kept in SQLite after every move, so a restart
  loses none;
* :mod:`webtable.render` and :mod:`webtable.views`: the HTML (cards, the SVG pegging board,
  the play, the show with every combination, the result; the seats' names and the words of
  every score from :mod:`agents.words`);
* :mod:`webtable.replay`: recorded games and tournament games to step through;
* :mod:`webtable.routes`: the FastAPI routes, one module per part of the address, over
  :mod:`webtable.server` (what they share); :mod:`webtable.app`: ``create_app``, the routes
  put together; :mod:`webtable.command`: ``cribenv serve``.

It needs the ``web`` extra (fastapi, uvicorn); the page itself is server-rendered HTML with one
small script and one stylesheet, served from the package (nothing is fetched from elsewhere).
"""
