"""A bot that breaks the Cribbage Bot Protocol in the way its first argument names, after
playing legally for a few decisions (tests/test_external_bot.py).

hang: stops answering; crash: exits; garbage: prints a line that is not JSON; illegal: plays a
card it does not hold; flood: writes megabytes without a newline; stderr: writes megabytes to
stderr and plays on (legal); extra: answers twice; slow: sleeps 0.2 s a decision; version:
greets with version 2; silent: never greets; ok: plays legally.
"""

import json
import sys
import time


def main() -> None:
    mode = sys.argv[1]
    decisions = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            if mode == "silent":
                time.sleep(60)
            print(json.dumps({"type": "hello", "name": f"broken-{mode}",
                              "version": 2 if mode == "version" else 1}), flush=True)
        elif msg["type"] == "decide":
            decisions += 1
            card = msg["legal"][0]
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
                elif mode == "extra":   # two answers in one write: they arrive together
                    answer = json.dumps({"type": "play", "card": card})
                    sys.stdout.write(answer + "\n" + answer + "\n")
                    sys.stdout.flush()
                    continue
            print(json.dumps({"type": "play", "card": card}), flush=True)
        elif msg["type"] == "quit":
            break


if __name__ == "__main__":
    main()
