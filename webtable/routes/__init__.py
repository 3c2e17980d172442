"""The routes of the web table, one module per part of the site, found by its address:

==========================================  ===============================================
``GET /``, ``GET /favicon.ico``             :mod:`~webtable.routes.lobby`
``POST /api/games``, ``GET /api/games/ID``,  :mod:`~webtable.routes.api` (JSON: a new game,
``POST /api/games/ID/move``                 its state, a move)
``GET /game/ID``, ``/game/ID/record``,      :mod:`~webtable.routes.game_pages` (a game's
``/game/ID/replay``, ``/game/ID/review``    page; once over, its record, replay and review)
``POST /replays``, ``GET /replay/ID``,      :mod:`~webtable.routes.replay_pages` (recorded
``GET /tournament/N``                       games and the tournament's, step by step)
==========================================  ===============================================

Each module holds a FastAPI ``router``; :func:`webtable.app.create_app` includes them all,
and each route reads the app's :class:`~webtable.server.Server` from the request.
"""
