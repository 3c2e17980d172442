"""OpenSpiel's own tools on ``python_cribenv``, as an OpenSpiel user first tries them:
``evaluate_bots`` with information-set MCTS, ``generate_playthrough`` and the observers it
asks for, chance nodes that always end the game, and serialisation that never unpickles.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the 'openspiel' extra (open_spiel)")

from open_spiel.python.algorithms import evaluate_bots, mcts  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

from cribenv.integrations import openspiel as osp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- evaluate_bots
@pytest.mark.parametrize("spec", ["python_cribenv(target=61)",
                                  "python_cribenv(players=3,target=61)"])
def test_evaluate_bots_plays_a_whole_game_with_the_shipped_ismcts_bot(spec):
    """OpenSpiel's ISMCTSBot has no restart_at, so evaluate_bots stopped at its first line;
    ours plays the game to the end from both of OpenSpiel's evaluate_bots, its search seeing
    only its seat's information state."""
    game = pyspiel.load_game(spec)
    n = game.num_players()
    rng = np.random.RandomState(0)
    bot = osp.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 3, random_state=rng)
    others = [UniformRandomBot(p, rng) for p in range(1, n)]
    state = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, [bot, *others], rng)
    assert state.is_terminal() and returns == state.returns()
    assert sum(returns) == pytest.approx(0) and any(returns)
    returns = pyspiel.evaluate_bots(game.new_initial_state(), [bot, *others], 1)
    assert sum(returns) == pytest.approx(0) and any(returns)
    bot.restart_at(state)                   # and it starts a new game afresh
    assert bot._nodes == {} and bot._root_samples == []


def test_the_docs_ismcts_game_is_ten_lines_and_runs(capsys):
    """docs/openspiel.md's first example: as many lines as its heading says, and it prints
    zero-sum returns."""
    text = (ROOT / "docs" / "openspiel.md").read_text()
    heading, rest = text.split("## An ISMCTS game in ", 1)[1].split("\n", 1)
    code = rest.split("```python\n", 1)[1].split("```", 1)[0]
    assert heading == "ten lines" and len(code.splitlines()) == 10
    exec(compile(code, "docs/openspiel.md", "exec"), {})
    returns = [float(x) for x in capsys.readouterr().out.strip().strip("[]").split(",")]
    assert len(returns) == 2 and sum(returns) == 0 and returns[0] != 0
