"""A bot that breaks the Cribbage Bot Protocol in the way its first argument names, after
playing legally for a few decisions (tests/test_external_bot.py).

hang: stops answering; crash: exits; garbage: prints a line that is not JSON; illegal: plays a
card it does not hold; flood: writes megabytes without a newline; stderr: writes megabytes to
stderr and plays on (legal); extra: answers twice; slow: sleeps 0.2 s a decision; version:
greets with version 2; silent: never greets; ok: plays legally.

orphan PIDFILE: starts a child that holds its output (its pid written to PIDFILE), then exits;
quit_orphan PIDFILE: the same when told to quit; answer_exit: answers, then exits; ack: writes
a line of its own after each new_game and events (never asked for); stale: after each events
message, a play of a card it holds (a stale answer); ack_over: writes a line after game_over;
nested: answers with brackets nested 30,000 deep; close_stdout: closes its output and lives
on; tail: writes 5,000 numbered characters to stderr, then exits.
"""

import json
import os
import subprocess
import sys
import time


def orphan(pidfile: str) -> None:
    """Start a child that keeps this program's pipes open, and note its pid."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(pidfile, "w") as f:
        f.write(str(child.pid))


def main() -> None:
    mode = sys.argv[1]
    decisions = 0
    held: list[str] = []
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] in ("new_game", "events") and mode == "ack":
            print(json.dumps({"type": "ok"}), flush=True)
        elif msg["type"] == "events" and mode == "stale" and held:
            print(json.dumps({"type": "play", "card": held[-1]}), flush=True)
        elif msg["type"] == "game_over" and mode == "ack_over":
            print(json.dumps({"type": "thanks"}), flush=True)
        if msg["type"] == "hello":
            if mode == "silent":
                time.sleep(60)
            print(json.dumps({"type": "hello", "name": f"broken-{mode}",
                              "version": 2 if mode == "version" else 1}), flush=True)
        elif msg["type"] == "decide":
            decisions += 1
            card = msg["legal"][0]
            held = [c for c in msg["hand"] if c != card]
            if mode == "stderr":
                sys.stderr.write("x" * 1_000_000 + "\n")
                sys.stderr.flush()
            if mode == "slow":
                time.sleep(0.2)
            if decisions >= 3:
                if mode == "hang":
                    time.sleep(60)
                elif mode == "crash":
                    sys.exit(3)
                elif mode == "garbage":
                    print("I think I'll play the five", flush=True)
                    continue
                elif mode == "illegal":
                    held = set(msg["hand"]) | {c for _, c in msg["played"]}
                    card = next(r + s for r in "A23456789TJQK" for s in "CDHS"
                                if r + s not in held)
                elif mode == "flood":
                    sys.stdout.write("y" * 3_000_000)
                    sys.stdout.flush()
                    time.sleep(60)
                elif mode == "orphan":
                    orphan(sys.argv[2])
                    sys.exit(3)
                elif mode == "answer_exit":
                    print(json.dumps({"type": "play", "card": card}), flush=True)
                    sys.exit(0)
                elif mode == "nested":
                    print("[" * 30000 + "]" * 30000, flush=True)
                    continue
                elif mode == "close_stdout":
                    os.close(1)
                    time.sleep(60)
                elif mode == "tail":
                    sys.stderr.write("".join(f"{k % 10}" for k in range(5000)) + "END")
                    sys.stderr.flush()
                    sys.exit(4)
                elif mode == "extra":   # two answers in one write: they arrive together
                    answer = json.dumps({"type": "play", "card": card})
                    sys.stdout.write(answer + "\n" + answer + "\n")
                    sys.stdout.flush()
                    continue
            print(json.dumps({"type": "play", "card": card}), flush=True)
        elif msg["type"] == "quit":
            if mode == "quit_orphan":
                orphan(sys.argv[2])
            break


if __name__ == "__main__":
    main()
