"""Search: decisions/s of ``search:ppo:shipped`` at several budgets and the playouts/s behind
them, beside its base ``ppo:shipped`` and the batched engine's random play, in the same run.

The decisions are those of seeded 2-player games of ``ppo:shipped`` against ``expert`` (every
decision with a choice, discard and play alike), asked of each agent in turn.
"""

from __future__ import annotations

import time
from typing import Any

from train.benchmarks._timing import fmt_rate, fmt_ratio

ORDER = 40
BUDGETS = (60, 240, 600, 2400)     # playouts a decision


def _positions(games: int = 3) -> list[tuple[Any, list[int]]]:
    from agents import make_agent
    from cribenv.game import Game

    out = []
    for seed in range(games):
        bots = [make_agent("ppo:shipped"), make_agent("expert")]
        game = Game(seed=seed)
        while game.current_player is not None:
            seat = game.current_player
            view, legal = game.view(seat), game.legal_actions()
            if len(legal) > 1:
                out.append((view, legal))
            game.step(bots[seat].choose(view, legal))
    return out


def _rate(agent: Any, positions: list, seconds: float) -> tuple[float, float]:
    """(decisions/s, playouts/s) of ``agent`` over ``positions``, repeated for ``seconds``."""
    decisions = playouts = 0
    start = time.perf_counter()
    while True:
        for view, legal in positions:
            agent.choose(view, legal)
            decisions += 1
            playouts += getattr(agent, "last", {}).get("rows", 0)
            if time.perf_counter() - start >= seconds:
                elapsed = time.perf_counter() - start
                return decisions / elapsed, playouts / elapsed


def run(seconds: float, progress: Any) -> dict[str, Any]:
    from agents import make_agent
    from train.benchmarks.vector_engine import VectorRandomPlay

    progress("search: positions")
    positions = _positions()
    base = make_agent("ppo:shipped")
    progress("search: the base")
    result: dict[str, Any] = {"positions": len(positions)}
    result["base"] = _rate(base, positions, seconds)[0]
    for budget in BUDGETS:
        progress(f"search: {budget} playouts a decision")
        agent = make_agent(f"search:ppo:shipped?playouts={budget}", seed=0)
        for view, legal in positions:         # compile on a cold cache: a searched play
            if view.phase.name == "PLAY":
                agent.choose(view, legal)
                break
        rate, rows = _rate(agent, positions, seconds)
        result[f"playouts={budget}"] = {"decisions": rate, "playouts": rows,
                                        "ms": 1000.0 / rate}
    progress("search: the engine")
    engine = VectorRandomPlay(2, observe=False)
    engine.run(seconds)
    result["engine"] = engine.rate()
    return result


def report(res: dict[str, Any]) -> None:
    print(f"Search (search:ppo:shipped, {res['positions']} decisions of seeded games; one "
          f"core)")
    print(f"  {'agent':<34}{'decisions/s':>12}{'ms a decision':>15}{'playouts/s':>12}"
          f"{'x base time':>12}")
    print(f"  {'ppo:shipped (the base)':<34}{fmt_rate(res['base']):>12}"
          f"{1000 / res['base']:>15.2f}{'':>12}{'1.00x':>12}")
    for budget in BUDGETS:
        r = res[f"playouts={budget}"]
        print(f"  {f'search:ppo:shipped?playouts={budget}':<34}{fmt_rate(r['decisions']):>12}"
              f"{r['ms']:>15.1f}{fmt_rate(r['playouts']):>12}"
              f"{fmt_ratio(res['base'] / r['decisions']):>12}")
    print(f"  batched engine, random play: {fmt_rate(res['engine'])} decisions/s")
