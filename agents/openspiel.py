"""``openspiel:ALGO`` agents: OpenSpiel's own search, playing from a seat's view on the
``python_cribenv`` game (:mod:`cribenv.integrations.openspiel`).

* ``openspiel:ismcts``: information-set MCTS (``open_spiel.python.algorithms.ismcts``,
  Cowling, Powley and Whitehouse 2011): every simulation deals the unseen cards anew
  (``resample_from_infostate``) and one tree is grown over the seat's information sets.
* ``openspiel:mcts``: OpenSpiel's MCTS (``open_spiel.python.algorithms.mcts``), a
  perfect-information search, run on ``worlds`` deals of the unseen cards (the simulations
  shared among them) with the visits of each card added up: determinized MCTS.

Both evaluate a leaf by random rollouts to the end of the game: OpenSpiel's
``RandomRolloutEvaluator`` with the rollouts played in compiled code
(:func:`rollout_evaluator`: the same uniformly random legal cards and uniform chance; an
ISMCTS decision about 6 times faster than stepping the Python state; ``tests/test_openspiel.py``
compares the two evaluators' returns on the same positions). A bot sees only its
:class:`~cribenv.game.PlayerView`, so each
decision starts from :func:`cribenv.integrations.openspiel.position_state`: the hand replayed
from its deal with the cards the seat has not seen dealt at random, from the scores the hand
began with; the search never sees the real hidden cards. It searches the standard rules for
the view's players and target (121 or 61; skunks count).

Spelling: ``openspiel:ALGO`` with an optional ``?`` query of the settings below, e.g.
``openspiel:ismcts?simulations=1000&uct_c=2&seed=7``. Settings (their bounds are checked when
the spec is read, a ValueError naming the value):

``simulations`` (2..100,000, default 100) the search's iterations a decision; ``uct_c``
(above 0, at most 100, default 2) the exploration constant; ``rollouts`` (1..100, default 1)
random rollouts a leaf; ``seed`` (overrides ``make_agent``'s seed). ISMCTS: ``world_samples``
(-1 for a new deal every simulation, the default, or 1..100,000 deals reused) and
``final_policy`` (``max_visit_count``, the default, ``normalized_visit_count`` or
``max_value``). MCTS: ``worlds`` (1..1,000 and at most half of ``simulations``: each
world's search needs 2; default 1) and ``solve`` (true, the default, or false:
MCTS-Solver's proven values).

    >>> from cribenv.game import Game
    >>> game = Game(seed=3)
    >>> bot = make_agent("openspiel:ismcts?simulations=8", seed=0)
    >>> bot.choose(game.view(game.current_player), game.legal_actions()) in game.legal_actions()
    True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.base import ViewAgent
from agents.spec import (  # noqa: F401 (make_agent: the doctest)
    FLAG,
    NUMBER,
    TEXT,
    WHOLE,
    BotSpec,
    Settings,
    make_agent,
    parse,
    register_agent,
)
from cribenv.game import PlayerView

__all__ = ["ALGORITHMS", "MAX_SIMULATIONS", "MIN_SIMULATIONS", "OpenSpielAgent", "SETTINGS",
           "parse_spec",
           "rollout_evaluator"]

ALGORITHMS = ("ismcts", "mcts")
MAX_SIMULATIONS = 100_000
#: The fewest simulations a search (and each of ``mcts``'s worlds) needs: OpenSpiel's first
#: simulation only evaluates the root, the second is the first to try a card.
MIN_SIMULATIONS = 2
_WHY_TWO = "the first simulation only evaluates the root; a card is first tried by the second"
#: ``final_policy`` -> the name of OpenSpiel's ``ISMCTSFinalPolicyType`` (it spells one
#: ``NORMALIZED_VISITED_COUNT``)
FINAL_POLICIES = {"max_visit_count": "MAX_VISIT_COUNT",
                  "normalized_visit_count": "NORMALIZED_VISITED_COUNT", "max_value": "MAX_VALUE"}
_COMMON = {"simulations": 100, "uct_c": 2.0, "rollouts": 1, "seed": None}
DEFAULTS = {"ismcts": {**_COMMON, "world_samples": -1, "final_policy": "max_visit_count"},
            "mcts": {**_COMMON, "worlds": 1, "solve": True}}
_SEED_MAX = 2**63 - 1


def _whole(key: str, value: Any, low: int, high: int, also: tuple[int, ...] = (),
           why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not (low <= value <= high or value in also):
        extra = "".join(f" or {a}" for a in also) + (f" ({why})" if why else "")
        raise ValueError(f"openspiel {key} must be a whole number from {low:,} to {high:,}"
                         f"{extra}, got {value!r}")
    return int(value)


def check_options(algorithm: str, **options: Any) -> dict[str, Any]:
    """The settings of ``algorithm`` with their defaults, each checked against its bounds (a
    ValueError naming the setting and the value).

    >>> check_options("ismcts", simulations=10**6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: openspiel simulations must be a whole number from 2 to 100,000 (...), got 1000000
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"openspiel algorithm must be one of {', '.join(ALGORITHMS)}, got "
                         f"{algorithm!r} (e.g. openspiel:ismcts?simulations=100)")
    unknown = sorted(set(options) - set(DEFAULTS[algorithm]))
    if unknown:
        raise ValueError(f"openspiel:{algorithm} has no setting {unknown[0]!r}; its settings "
                         f"are {', '.join(DEFAULTS[algorithm])}")
    out = {**DEFAULTS[algorithm], **options}
    out["simulations"] = _whole("simulations", out["simulations"], MIN_SIMULATIONS,
                                MAX_SIMULATIONS, why=_WHY_TWO)
    uct_c = out["uct_c"]
    if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float, np.number)) \
            or not math.isfinite(uct_c) or not 0 < uct_c <= 100:
        raise ValueError(f"openspiel uct_c must be a number above 0 and at most 100, got "
                         f"{uct_c!r}")
    out["uct_c"] = float(uct_c)
    out["rollouts"] = _whole("rollouts", out["rollouts"], 1, 100)
    if out["seed"] is not None:
        out["seed"] = _whole("seed", out["seed"], 0, _SEED_MAX)
    if algorithm == "ismcts":
        out["world_samples"] = _whole("world_samples", out["world_samples"], 1,
                                      MAX_SIMULATIONS, also=(-1,))
        if not isinstance(out["final_policy"], str) or out["final_policy"] not in FINAL_POLICIES:
            raise ValueError(f"openspiel final_policy must be one of "
                             f"{', '.join(FINAL_POLICIES)}, got {out['final_policy']!r}")
    else:
        out["worlds"] = _whole("worlds", out["worlds"], 1,
                               min(1000, out["simulations"] // MIN_SIMULATIONS),
                               why=f"each world's search needs {MIN_SIMULATIONS} of the "
                                   f"{out['simulations']:,} simulations")
        if not isinstance(out["solve"], bool):
            raise ValueError(f"openspiel solve must be true or false, got {out['solve']!r}")
    return out


#: OpenSpiel's settings (``openspiel:ismcts?simulations=1000&uct_c=2``), read by
#: :mod:`agents.spec` and checked by :func:`check_options` (a key of neither algorithm is
#: handed to it as text, and named there).
SETTINGS = Settings(
    kind="openspiel", noun="openspiel setting",
    read={"simulations": WHOLE, "uct_c": NUMBER, "rollouts": WHOLE, "seed": WHOLE,
          "world_samples": WHOLE, "final_policy": TEXT, "worlds": WHOLE, "solve": FLAG},
    check=lambda algorithm, given: check_options(algorithm, **given),
    malformed="openspiel setting {part!r}: expected key=value (as in "
              "openspiel:ismcts?simulations=100&uct_c=2)",
    needs="'openspiel:ALGO' needs an algorithm: openspiel:ismcts or openspiel:mcts (e.g. "
          "openspiel:ismcts?simulations=100)",
    strict=False, lower_head=True)


def parse_spec(arg: str) -> tuple[str, dict[str, Any]]:
    """``"ALGO?k=v&..."`` -> ``(ALGO, settings)``, checked (:func:`check_options`):
    :func:`agents.spec.parse` of ``openspiel:{arg}``.

    >>> parse_spec("ismcts?simulations=1000&uct_c=1.5")[1]["simulations"]
    1000
    >>> parse_spec("mcts?simulations=10&worlds=6")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: openspiel worlds must be a whole number from 1 to 5 (each world's ...), got 6
    """
    spec = parse(f"openspiel:{arg}")
    return spec.arg, spec.options


class OpenSpielAgent(ViewAgent):
    """An OpenSpiel search playing from a seat's view (see the module docstring)."""

    asks_forced = False

    def __init__(self, algorithm: str, seed: int | None = None, name: str | None = None,
                 **options: Any) -> None:
        settings = check_options(algorithm, **options)
        super().__init__(seed)
        try:
            import pyspiel  # noqa: F401

            import cribenv.integrations.openspiel  # noqa: F401
        except ImportError as exc:
            raise ImportError(f"openspiel:{algorithm} needs OpenSpiel: pip install "
                              f"'cribenv[openspiel]' ({exc})") from exc
        self.algorithm = algorithm
        self.settings = settings
        self.name = name or f"openspiel:{algorithm}"
        self._random_state = np.random.RandomState(int(self.rng.integers(2**31)))

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        from cribenv.integrations.openspiel import position_state

        state = position_state(view, self.rng)
        evaluator = rollout_evaluator(self.settings["rollouts"], self._random_state)
        card = self._ismcts_card(state, evaluator) if self.algorithm == "ismcts" \
            else self._mcts_card(state, evaluator, view.seat)
        if card not in legal:      # pragma: no cover - the search plays the state's own actions
            raise RuntimeError(f"{self.name} chose {card}, not among the legal cards {legal}")
        return card

    def _ismcts_card(self, state: Any, evaluator: Any) -> int:
        from open_spiel.python.algorithms import ismcts

        s = self.settings
        policy = getattr(ismcts.ISMCTSFinalPolicyType, FINAL_POLICIES[s["final_policy"]])
        bot = ismcts.ISMCTSBot(
            state.get_game(), evaluator, s["uct_c"], s["simulations"],
            max_world_samples=s["world_samples"], random_state=self._random_state,
            final_policy_type=policy)
        bot.set_resampler(lambda st, player: st.resample_from_infostate(player, self.rng))
        return int(bot.step(state))

    def _mcts_card(self, state: Any, evaluator: Any, seat: int) -> int:
        from open_spiel.python.algorithms import mcts

        s = self.settings
        worlds = s["worlds"]
        visits: dict[int, int] = {}
        for w in range(worlds):
            world = state if w == 0 else state.resample_from_infostate(seat, self.rng)
            bot = mcts.MCTSBot(
                state.get_game(), s["uct_c"], s["simulations"] // worlds
                + (w < s["simulations"] % worlds), evaluator, solve=s["solve"],
                random_state=self._random_state)
            for child in bot.mcts_search(world).children:
                visits[child.action] = visits.get(child.action, 0) + child.explore_count
        best = max(visits.values())
        return int(min(a for a, v in visits.items() if v == best))


def rollout_evaluator(n_rollouts: int, random_state: np.random.RandomState) -> Any:
    """OpenSpiel's ``RandomRolloutEvaluator`` (``n_rollouts`` random games from a leaf, their
    mean returns; the prior uniform) with the rollouts played by the batched engine: each
    rollout makes the chance draws due at the leaf at random until a seat is to act, then is a
    row of :func:`agents.search.playouts.from_view` holding the whole position (no card
    hidden), seeded from ``random_state`` and played out by
    :func:`agents.search.playouts.random_playout`.

    >>> import pyspiel, cribenv.integrations.openspiel
    >>> state = pyspiel.load_game("python_cribenv(target=61)").new_initial_state()
    >>> [float(v) for v in rollout_evaluator(50, np.random.RandomState(0)).evaluate(state)]
    [-0.16, 0.16]
    """
    from open_spiel.python.algorithms import mcts

    class _Rollouts(mcts.RandomRolloutEvaluator):
        def evaluate(self, state: Any) -> np.ndarray:
            return _rollout_returns(state, self.n_rollouts, self._random_state)

    return _Rollouts(n_rollouts, random_state)


def _rollout_returns(state: Any, n_rollouts: int, random_state: np.random.RandomState
                     ) -> np.ndarray:
    """The mean returns of ``n_rollouts`` random games from ``state``: at a chance node each
    rollout makes its own draws (in Python) up to the next decision, then plays on compiled."""
    if state.is_terminal():
        return np.array(state.returns())
    if not state.is_chance_node():
        return _played_out(state, n_rollouts, random_state)
    total = np.zeros(state.num_players())
    for _ in range(n_rollouts):
        world = state.clone()
        while world.is_chance_node():
            outcomes = world.chance_outcomes()
            world.apply_action(outcomes[random_state.randint(len(outcomes))][0])
        total += np.array(world.returns()) if world.is_terminal() \
            else _played_out(world, 1, random_state)
    return total / n_rollouts


def _played_out(state: Any, n_rollouts: int, random_state: np.random.RandomState
                ) -> np.ndarray:
    """The mean returns of ``n_rollouts`` random games from ``state``, a seat to act: rows of
    the batched engine holding the whole position, each seeded from ``random_state``."""
    from agents.search.playouts import from_view, random_playout
    from cribenv.positions import actual_hidden
    from cribenv.rules import win_reward

    game = state.game
    seat = game.current_player
    hidden = actual_hidden(game, seat).take(np.zeros(n_rollouts, np.int64))
    seeds = random_state.randint(0, 2**62, size=n_rollouts, dtype=np.int64)
    vg = from_view(game.view(seat), hidden, seeds, rules=game.rules)
    random_playout(vg)
    n, sides = game.num_players, game.rules.num_sides
    points = vg.game_points if state.get_game().skunks else np.ones(n_rollouts)
    return np.array([np.mean([win_reward(game.side_of(s) == w, p, sides)
                              for w, p in zip(vg.winner, points)]) for s in range(n)])


def _make_openspiel(spec: BotSpec, seed: int | None = None, **kwargs: Any) -> OpenSpielAgent:
    options = spec.options
    spec_seed = options.pop("seed")
    return OpenSpielAgent(spec.arg, seed=seed if spec_seed is None else spec_seed,
                          name=f"openspiel:{spec.rest}", **{**options, **kwargs})


register_agent("openspiel", _make_openspiel, read=SETTINGS)
