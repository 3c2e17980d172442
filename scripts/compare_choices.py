"""How often two agents choose differently, on the decisions of games the first one plays.

Games of 2 players are played by agent A on every seat. At each decision where it matters,
agent B is asked too:

* at a seat's first discard decision, both choose a whole throw (each asked again on a copy of
  the game for the second card), and the throws are compared as sets;
* in the play, with more than one legal card, the ranks of the cards are compared (suits do
  not matter in the play).

It prints the share of the decisions that differ::

    python scripts/compare_choices.py --a ppo:shipped \\
        --b ppo:results/selfplay-from-shipped/policy.safetensors --games 20
"""

from __future__ import annotations

import argparse
import sys

from agents import make_agent
from cribenv.game import Game, Phase, Rules


def _throw(agent, game: Game) -> frozenset[int]:
    """The cards ``agent`` lays away from the seat to act's hand (on a copy of ``game``)."""
    game = game.clone()
    seat, out = game.current_player, []
    while len(out) < game.view(seat).discards_per_player:   # the seat acts again at once
        card = agent.choose(game.view(seat), game.legal_actions())
        out.append(card)
        game.step(card)
    return frozenset(out)


def compare(a, b, games: int, seed: int = 0) -> dict[str, int]:
    """Decisions compared and differing: ``throws``, ``throws_differ``, ``plays``,
    ``plays_differ`` (see the module docstring).

    >>> from agents import make_agent
    >>> r = compare(make_agent("expert"), make_agent("expert"), games=1)
    >>> r["throws"] > 0 and r["throws_differ"] == 0 and r["plays_differ"] == 0
    True
    """
    out = {"throws": 0, "throws_differ": 0, "plays": 0, "plays_differ": 0}
    for s in range(seed, seed + games):
        game = Game(Rules(), seed=s)
        while not game.is_over:
            view, legal = game.view(game.current_player), game.legal_actions()
            if view.phase is Phase.DISCARD and not view.discards:
                out["throws"] += 1
                out["throws_differ"] += _throw(a, game) != _throw(b, game)
            elif view.phase is Phase.PLAY and len(legal) > 1:
                out["plays"] += 1
                out["plays_differ"] += (a.choose(view, legal) >> 2) != (
                    b.choose(view, legal) >> 2)
            game.step(a.choose(view, legal))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="agent spec that plays the games")
    parser.add_argument("--b", required=True, help="agent spec asked at the same decisions")
    parser.add_argument("--games", type=int, default=20, help="games (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="first game seed (default 0)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    try:
        a, b = make_agent(args.a, seed=0), make_agent(args.b, seed=0)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    r = compare(a, b, args.games, args.seed)
    print(f"throws differ at {r['throws_differ']} of {r['throws']} hands "
          f"({r['throws_differ'] / r['throws']:.1%}); play ranks differ at "
          f"{r['plays_differ']} of {r['plays']} decisions with a choice "
          f"({r['plays_differ'] / max(1, r['plays']):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
