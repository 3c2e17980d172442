"""``cribenv serve``: the web table on this machine (``configure(parser)``, ``run(args)``)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from cribenv.checks import int_arg, int_range_arg

__all__ = ["configure", "parse_bots", "run"]

MAX_TTL_MINUTES = 525_600   # a year
MAX_THINK_S = 600


def _positive(text: str, unit: str, most: float, most_words: str) -> float:
    """``text`` as a number of ``unit``, more than 0 and at most ``most`` (argparse's usage
    error otherwise, naming the bound as ``most_words``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= most:   # NaN fails it too
        raise argparse.ArgumentTypeError(f"expected {unit}, more than 0 and at most "
                                         f"{most_words}, got {text!r}")
    return value


def ttl_minutes(text: str) -> float:
    """``--ttl``: minutes, more than 0 and at most a year (argparse's usage error otherwise).

    >>> ttl_minutes("90")
    90.0
    >>> ttl_minutes("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected minutes, more than 0 and at most 525600 (a year), got 'inf'
    """
    return _positive(text, "minutes", MAX_TTL_MINUTES, f"{MAX_TTL_MINUTES} (a year)")


def think_seconds(text: str) -> float:
    """``--think-time``: seconds, more than 0 and at most 600 (argparse's usage error
    otherwise).

    >>> think_seconds("0.5")
    0.5
    >>> think_seconds("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected seconds, more than 0 and at most 600, got '0'
    """
    return _positive(text, "seconds", MAX_THINK_S, str(MAX_THINK_S))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Play Cribbage against the bots in a browser, with advice, and step through recorded "
        "games. The server binds to 127.0.0.1: only this machine can reach it.")
    parser.epilog = ("Example: cribenv serve --port 8000, then open http://127.0.0.1:8000/; "
                     "cribenv serve --bot mine=ppo:runs/a.safetensors --replay game.json")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default %(default)s; another address exposes "
                             "the table to the network)")
    parser.add_argument("--port", type=int_range_arg(0, 65535), default=8000,
                        help="port, 0 to 65535 (default %(default)s)")
    parser.add_argument("--bot", action="append", default=[], metavar="[NAME=]SPEC",
                        help="add a bot the page may choose, e.g. mine=ppo:runs/a.safetensors, "
                             "or just a spec (search:ppo:shipped?playouts=50: named by it), as "
                             "tournament reads its agents (the built-in expert, greedy, random, "
                             "ppo:scratch, ppo:scratch-exit, ppo:shipped and, with the "
                             "batched engine installed, search:ppo:shipped are always there); "
                             "the only policy files the server ever loads")
    parser.add_argument("--replay", action="append", default=[], metavar="FILE",
                        help="a recorded game (Game.to_json()) to list in the lobby")
    parser.add_argument("--tournament-db", metavar="DB",
                        help="a tournament database whose games the lobby lists")
    parser.add_argument("--open", type=int, metavar="N",
                        help="with --tournament-db: print the address of its game N (0 = the "
                             "first, in the order the lobby lists them) to open")
    parser.add_argument("--ttl", type=ttl_minutes, default=360, metavar="MINUTES",
                        help="a game without a move for this long is dropped (default 360, "
                             "at most a year)")
    parser.add_argument("--max-games", type=int_arg(1), default=1000,
                        help="games held at once (default %(default)s); when full, finished "
                             "games and then those idle longest make room for a new one")
    parser.add_argument("--think-time", type=think_seconds, default=0.75, metavar="SECONDS",
                        help="a searching bot plays its best card so far this many seconds "
                             "after your move reached the server, its wait for a free thread "
                             "included (default 0.75; more: stronger but slower under load)")
    parser.add_argument("--bot-threads", type=int_range_arg(1, 256), default=None,
                        metavar="N", help="bots thinking at once, 1 to 256 (default: one a "
                                          "CPU); other moves wait their turn, so memory stays "
                                          "bounded however many play")
    parser.add_argument("--db", metavar="PATH",
                        help="the SQLite file that keeps the games in progress, so a restart "
                             "loses none (default: ~/.local/state/cribenv/web-games.sqlite, "
                             "under $XDG_STATE_HOME if set; ':memory:' keeps them in memory "
                             "only)")


def parse_bots(items: list[str]) -> dict[str, str]:
    """The bots of the command line (``NAME=SPEC`` or ``SPEC``, read as ``cribenv tournament``
    reads its agents: :func:`agents.spec.parse_spec`), after the built-in ones;
    each is built once here so a bad spec or policy file fails now, with its reason.

    >>> [b for b in sorted(parse_bots(["mine=greedy"])) if not b.startswith("search")]
    ['expert', 'greedy', 'mine', 'ppo:scratch', 'ppo:scratch-exit', 'ppo:shipped', 'random']
    >>> parse_bots(["cmd[move=2]:python bot.py"])["cmd[move=2]:python bot.py"]
    'cmd[move=2]:python bot.py'
    """
    from agents.base import make_agent
    from agents.spec import parse_spec
    from webtable.app import BUILT_IN_BOTS

    bots = dict(BUILT_IN_BOTS)
    given = []
    for item in items:
        try:
            entrant = parse_spec(item)
        except ValueError as exc:
            raise ValueError(f"--bot {item!r}: {exc}") from None
        bots[entrant.label] = entrant.spec
        given.append(entrant.spec)
    for spec in bots.values():
        try:
            make_agent(spec, seed=0)   # a bad spec or policy file fails now, with its reason
        except ValueError as exc:
            raise ValueError(f"--bot {spec}: {exc}" if spec in given else str(exc)) from None
    return bots


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from webtable.app import create_app
    from webtable.replay import MAX_RECORD_BYTES, Replay
    from webtable.saved_games import default_db_path

    bots = parse_bots(args.bot)
    replays = []
    for path in args.replay:
        try:
            if not Path(path).is_file() and Path(path).exists():   # a FIFO would block
                raise ValueError(f"--replay {path}: not a regular file (a game record is)")
            size = Path(path).stat().st_size
            if size > MAX_RECORD_BYTES:
                raise ValueError(f"--replay {path}: the record is {size:,} bytes; a replay may "
                                 f"be at most {MAX_RECORD_BYTES:,} bytes")
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"--replay {path}: {exc.strerror}") from None
        try:
            replays.append(Replay.from_record(text, title=Path(path).name))
        except ValueError as exc:
            raise ValueError(f"--replay {path}: {exc}") from None
    path = "/"
    if args.open is not None:
        if not args.tournament_db:
            raise ValueError("--open N needs --tournament-db DB (the database of game N)")
        path = tournament_game_path(args.tournament_db, args.open)
    local = args.host in ("127.0.0.1", "localhost", "::1")
    db = args.db or default_db_path()
    app = create_app(bots, ttl_s=args.ttl * 60, max_games=args.max_games, replays=replays,
                     tournament_db=args.tournament_db, db=db,
                     allowed_hosts=["127.0.0.1", "localhost", "[::1]"] if local else None,
                     think_s=args.think_time, bot_threads=args.bot_threads)
    if str(db) != ":memory:":
        print(f"cribenv serve: games kept in {db} ({len(app.state.saved)} from before)",
              file=sys.stderr)
    print(f"cribenv serve: open http://{args.host}:{args.port}{path} (Ctrl-C stops)",
          file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def tournament_game_path(db: str, index: int) -> str:
    """The page of game ``index`` of a tournament database (``ValueError`` if there is none)."""
    from webtable.replay import tournament_games

    games = tournament_games(db)
    if not 0 <= index < len(games):
        raise ValueError(f"{db} holds games 0..{len(games) - 1}, not {index}")
    return f"/tournament/{index}"

