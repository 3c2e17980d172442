"""The web table under load: ``--players`` people at once against one bot, on a server this
script starts on 127.0.0.1 (and stops), for ``--seconds``.

Each player starts a game, lays the first legal card(s) whenever it is their turn, moves on
from the cut and the show, and starts another game when one is over, waiting ``--think``
seconds before each move (a quick person). Every request is timed from sending to the answer;
the server's memory (resident set, its child processes included) is read every half second.
Prints the median, 90th and 99th percentile and the longest wait a card (the moves that lay
cards), the moves and games made, and the memory at the start, at its peak and at the end::

    python scripts/web_load.py --players 30 --bot Prodigy --seconds 75

Bounded: at most 200 players and 600 seconds; only this machine's loopback is ever reached.
``--json FILE`` writes the figures as JSON too. Extra ``cribenv serve`` options follow ``--``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MAX_PLAYERS = 200
MAX_SECONDS = 600


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float:
    """The resident memory of ``pid`` and its children, in MB (Linux ``/proc``)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines()
                          if line.startswith("VmRSS:"))
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except (OSError, StopIteration):
            continue
        todo += [int(c) for c in children]
    return total / 1024


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


class Player(threading.Thread):
    """One person at the table: plays games until ``stop`` is set."""

    def __init__(self, port: int, bot: str, think: float, seed: int,
                 stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.bot, self.think, self.stop = port, bot, think, stop
        self.rng = random.Random(seed)
        self.card_waits: list[float] = []    # seconds, the moves that lay cards
        self.other_waits: list[float] = []   # new games, moving on from the cut and the show
        self.games = self.errors = 0
        self.messages: list[str] = []

    def post(self, conn: http.client.HTTPConnection, path: str, body: dict) -> dict:
        conn.request("POST", path, json.dumps(body),
                     {"Content-Type": "application/json", "Host": f"127.0.0.1:{self.port}"})
        response = conn.getresponse()
        data = json.loads(response.read() or b"{}")
        if response.status >= 400:
            raise RuntimeError(f"{path}: {response.status} {data.get('error', '')[:120]}")
        return data

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=MAX_SECONDS)
        state = None
        while not self.stop.is_set():
            try:
                if state is None or state["stage"] == "over":
                    if state is not None:
                        self.games += 1
                    start = time.monotonic()
                    state = self.post(conn, "/api/games", {"bot": self.bot})
                    self.other_waits.append(time.monotonic() - start)
                    continue
                self.stop.wait(self.think * self.rng.uniform(0.5, 1.5))
                if self.stop.is_set():
                    break
                stage = state["stage"]
                body: dict = {"seq": state["seq"]}
                if stage in ("discard", "play"):
                    body["cards"] = state["legal"][:state["need"] if stage == "discard" else 1]
                else:
                    body["action"] = "next"
                start = time.monotonic()
                state = self.post(conn, f"/api/games/{state['id']}/move", body)
                waits = self.card_waits if "cards" in body else self.other_waits
                waits.append(time.monotonic() - start)
            except (OSError, RuntimeError, ValueError, http.client.HTTPException) as exc:
                self.errors += 1
                if len(self.messages) < 3:
                    self.messages.append(str(exc)[:200])
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=MAX_SECONDS)
                state = None
                self.stop.wait(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=30)
    parser.add_argument("--bot", default="Prodigy", help="the opponent's name or label")
    parser.add_argument("--seconds", type=float, default=75)
    parser.add_argument("--think", type=float, default=1.0,
                        help="a player's average pause before each move (seconds)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON too")
    parser.add_argument("serve", nargs="*", help="options for cribenv serve (after --)")
    args = parser.parse_args(argv)
    if not 1 <= args.players <= MAX_PLAYERS:
        parser.error(f"--players must be 1..{MAX_PLAYERS}, got {args.players}")
    if not 1 <= args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds must be 1..{MAX_SECONDS}, got {args.seconds}")
    if not 0 <= args.think <= 60:
        parser.error(f"--think must be 0..60 seconds, got {args.think}")

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "cribenv.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--db", str(Path(tmp) / "games.sqlite"), *args.serve]
        server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        try:
            return measure(args, port, server)
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def measure(args: argparse.Namespace, port: int, server: subprocess.Popen) -> int:
    deadline = time.monotonic() + 120
    while True:   # the server is up when it answers
        if server.poll() is not None:
            print(f"the server stopped: {server.stderr.read()[-2000:]}", file=sys.stderr)
            return 1
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
            conn.getresponse().read()
            break
        except OSError:
            if time.monotonic() > deadline:
                print("the server did not answer in 120 s", file=sys.stderr)
                return 1
            time.sleep(0.25)
    memory = [rss_mb(server.pid)]
    stop = threading.Event()
    players = [Player(port, args.bot, args.think, seed, stop) for seed in range(args.players)]
    start = time.monotonic()
    for p in players:
        p.start()
    while time.monotonic() - start < args.seconds:
        time.sleep(0.5)
        memory.append(rss_mb(server.pid))
    stop.set()
    for p in players:
        p.join(MAX_SECONDS)
    elapsed = time.monotonic() - start
    cards = [w for p in players for w in p.card_waits]
    others = [w for p in players for w in p.other_waits]
    figures = {
        "players": args.players, "bot": args.bot, "seconds": round(elapsed, 1),
        "think_s": args.think, "cpus": len(os.sched_getaffinity(0)),
        "card_moves": len(cards), "other_moves": len(others),
        "games_finished": sum(p.games for p in players),
        "errors": sum(p.errors for p in players),
        "error_examples": [m for p in players for m in p.messages][:5],
        **({f"card_{name}_s": round(fn(cards), 3) for name, fn in (
            ("median", statistics.median), ("p90", lambda v: percentile(v, 90)),
            ("p99", lambda v: percentile(v, 99)), ("max", max))} if cards else {}),
        **({"other_p99_s": round(percentile(others, 99), 3)} if others else {}),
        "rss_start_mb": round(memory[0]), "rss_peak_mb": round(max(memory)),
        "rss_end_mb": round(memory[-1]),
    }
    for key, value in figures.items():
        print(f"{key:>16}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
