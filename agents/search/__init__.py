"""``search:BASE`` agents: a base agent's plays checked by playouts on the batched engine.

The package: this module is the agent; :mod:`agents.search.playouts` continues a seat's
position in the batched engine (the deals, the playouts, the likelihoods), on its compiled
kernels (:mod:`agents.search.kernels`), both built on the engine's public interface
(:mod:`cribenv.vector_kernels`).

In the play, at each decision with a choice, the agent values every legal card by paired
playouts:

1. deal what the seat has not seen ``8 D`` times (:func:`cribenv.positions.sample_hidden`,
   consistent with the card counts and every Go), ``D = playouts // legal cards``; weigh each
   deal by how likely it makes the other seat's throw
   (:func:`agents.search.playouts.discard_likelihood`: the softmax, at half a point, of
   each throw's average hand and crib points) and the cards the other seats laid in this
   hand's play
   (:func:`~agents.search.playouts.play_likelihood`: the softmax of the expert's pegging
   term), each mixed with a uniform choice; keep ``D`` of them, a systematic resample by
   those weights;
2. start every card from every deal, with the same generator (the same next hands) for all
   cards: the comparison is paired;
3. play each to the end of the hand in compiled code (:func:`~agents.search.playouts.playout`:
   every seat pegs by the points it makes less the expected best reply);
4. value the end by the chance to win: exact where the game ended, else the win-probability
   table at the scores and the next dealer (:mod:`agents.winprob`; with 3 or 4 players the
   2-player table at the side's score against the best other side's, an approximation).

It plays the base agent's card unless the best card beats the base's by more than ``margin``
standard errors of their paired difference (default 0: the best card). The discard is
the base's: valuing the throws by playouts made the shipped agent weaker (``results/search``).
Decisions are deterministic under the seed.

Spelling: ``search:BASE`` with an optional ``?`` query, ``search:ppo:shipped?playouts=600&margin=1``
(any :func:`~agents.base.make_agent` spec as BASE; ``playouts`` from 1 to 200,000, checked
when the spec is read: a decision takes up to 10 KB of memory a playout, 2 GB at the most;
``models=own`` for the base network's own models (a ``mlp`` or ``keeps`` network: the
playouts read its observations); ``table=FILE`` a win-probability table of
:mod:`agents.winprob` to value the ends by, e.g. one solved from your own network's hands).

>>> from agents import make_agent
>>> from cribenv.game import Game
>>> bot = make_agent("search:expert?playouts=60", seed=0)
>>> g = Game(seed=1)
>>> while g.phase.name == "DISCARD":
...     _ = g.step(bot.choose(g.view(g.current_player), g.legal_actions()))
>>> card = bot.choose(g.view(g.current_player), g.legal_actions())
>>> card in g.legal_actions(), bot.name, bot.last["rows"] > 0
(True, 'search:expert?playouts=60', True)
"""

from __future__ import annotations

from pathlib import Path
from time import monotonic
from typing import Any

import numpy as np

from agents.base import ViewAgent
from agents.spec import NUMBER, TEXT, WHOLE, BotSpec, Settings, build, parse, register_agent
from agents.winprob import SCRATCH_TABLE_FILE, TABLE_FILE, TARGETS, seat_wins
from cribenv.game import Phase, PlayerView, Rules
from cribenv.positions import Hidden, sample_hidden

__all__ = ["DECISION_MEMORY", "DEFAULT_MARGIN", "DEFAULT_PLAYOUTS", "MAX_PLAYOUTS", "MODELS",
           "PLAYOUT_MEMORY", "SETTINGS", "SearchAgent", "check_table", "parse_spec"]

#: Playouts a decision by default (shared by the legal cards): about 15 ms here.
DEFAULT_PLAYOUTS = 600
#: The memory one decision may take (bytes), and what it takes a playout at most: measured
#: at a play with two legal cards (the most deals drawn a playout), 8.6 KB with the heuristic
#: models and 5.8 KB with ``models=own`` (the network reads :data:`~agents.search.playouts.
#: NETWORK_ROWS` rows at a time), rounded up.
DECISION_MEMORY, PLAYOUT_MEMORY = 2 * 10**9, 10_000
#: The most playouts a decision, checked when the spec is read: those that keep one
#: decision's memory within :data:`DECISION_MEMORY` (2 GB at 200,000).
MAX_PLAYOUTS = DECISION_MEMORY // PLAYOUT_MEMORY
#: Standard errors of the paired difference a card needs to overrule the base.
DEFAULT_MARGIN = 0.0
#: Deals drawn for each one kept: the kept ones are resampled from them by their likelihood.
DRAWS = 8
#: With a time limit, a decision's deals are searched in this many batches, the limit checked
#: before each (:meth:`SearchAgent.choose`).
DEADLINE_BATCHES = 8
#: The throws' model: the softmax of each throw's average hand and crib points at this
#: temperature (points).
DISCARD_TEMPERATURE = 0.5
_SEED_MAX = 2**63 - 1
#: What the search reads besides the rules: ``heuristic`` (the module docstring's models) or
#: ``own`` (the base network's alone; see :class:`SearchAgent`).
MODELS = ("heuristic", "own")
#: The networks ``models=own`` plays (:mod:`agents.ppo`): those that read the observation alone.
OWN_NETWORKS = ("mlp", "keeps")


def check_table(table: str | Path) -> None:
    """A ValueError naming ``table`` unless it is a table file of :mod:`agents.winprob` (its
    ``w121`` and ``w61`` chances, of shapes (121, 121) and (61, 61), within [0, 1])."""
    if Path(table).exists() and not Path(table).is_file():   # a FIFO would block the read
        raise ValueError(f"search table {str(table)!r} is not a regular file (a FIFO, a "
                         f"device or a folder): give a table file")
    try:
        data = np.load(table)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("not an .npz archive")
        with data:
            chances = [data[f"w{t}"] for t in TARGETS]
        ok = all(w.shape == (t, t) and np.issubdtype(w.dtype, np.floating)
                 and ((w >= 0) & (w <= 1)).all() for w, t in zip(chances, TARGETS))
    except (OSError, ValueError, KeyError, EOFError, TypeError) as exc:
        raise ValueError(f"search table {str(table)!r} is not a win-probability table "
                         f"(python -m agents.winprob --agent ppo:PATH --out FILE makes one): "
                         f"{exc}") from None
    if not ok:
        raise ValueError(f"search table {str(table)!r} does not hold chances w121 (121 x 121) "
                         f"and w61 (61 x 61), floats within [0, 1]")


def parse_spec(arg: str) -> tuple[str, dict[str, Any]]:
    """``"BASE?k=v&..."`` -> ``(BASE, {"playouts": int, "margin": float, "models": str,
    "table": str})``: :func:`agents.spec.parse` of ``search:{arg}`` (the base read too), the
    settings given.

    >>> parse_spec("ppo:shipped?playouts=200&margin=0.5")
    ('ppo:shipped', {'playouts': 200, 'margin': 0.5})
    >>> parse_spec("ppo:scratch?models=own")
    ('ppo:scratch', {'models': 'own'})
    >>> parse_spec("expert")
    ('expert', {})
    """
    spec = parse(f"search:{arg}")
    return spec.arg, spec.options


def check_options(playouts: int = DEFAULT_PLAYOUTS, margin: float = DEFAULT_MARGIN,
                  models: str = "heuristic", table: str | Path | None = None) -> None:
    """A ValueError naming ``playouts`` (a whole number from 1 to :data:`MAX_PLAYOUTS`),
    ``margin`` (a finite number >= 0), ``models`` (one of :data:`MODELS`) or ``table`` (a
    table file of :mod:`agents.winprob`) when out of range or unreadable.

    >>> check_options(playouts=10**9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: search playouts must be a whole number from 1 to 200,000 (...), got 1000000000
    """
    if isinstance(playouts, bool) or not isinstance(playouts, (int, np.integer)) \
            or not 1 <= playouts <= MAX_PLAYOUTS:
        raise ValueError(f"search playouts must be a whole number from 1 to {MAX_PLAYOUTS:,} "
                         f"(a decision takes up to {PLAYOUT_MEMORY // 1000} KB of memory a "
                         f"playout: {MAX_PLAYOUTS:,} keep it within "
                         f"{DECISION_MEMORY / 1e9:g} GB), got {playouts!r}")
    if not isinstance(margin, (int, float, np.number)) or not np.isfinite(margin) \
            or margin < 0:
        raise ValueError(f"search margin must be a finite number >= 0, got {margin!r}")
    if models not in MODELS:
        raise ValueError(f"search models must be one of {', '.join(MODELS)}, got {models!r}")
    if table is not None:
        check_table(table)


def _checked(base: str, given: dict[str, Any]) -> dict[str, Any]:
    check_options(**given)
    return given


#: The search's settings (``search:BASE?playouts=600&margin=1``), read by :mod:`agents.spec`.
SETTINGS = Settings(
    kind="search", noun="search option",
    read={"playouts": WHOLE, "margin": NUMBER, "models": TEXT, "table": TEXT},
    check=_checked, nested=True,
    malformed="search option {part!r}: expected playouts=N, margin=X, models=heuristic|own or "
              "table=FILE (as in search:{head}?playouts=600&margin=1)",
    needs="'search:BASE' needs a base agent, e.g. search:ppo:shipped or search:expert")


class SearchAgent(ViewAgent):
    """A base agent whose plays are checked by paired playouts (see the module docstring).

    ``last`` describes the last decision: ``rows`` (playouts run, 0 where the base decided
    alone), and where it searched ``cards``, ``values`` (the mean chances to win), ``base``
    and ``card``.

    A time limit, for an interactive table alone (``cribenv serve``): ``time_budget_s``
    (seconds a decision) and :attr:`deadline` (a :func:`time.monotonic` instant the caller
    sets, e.g. the web table for the bots' whole turn) stop the search at whichever comes
    first: the deals are then searched in :data:`DEADLINE_BATCHES` batches, the time checked
    before each, and it plays the best card of the batches done (the base's card, with
    ``last["late"]``, when none could start). A limit makes a decision depend on the
    machine's speed and load; tournaments, training and a seeded game to be played again
    use none: without both, the search is the same as ever, deterministic under the seed.
    """

    asks_forced = False

    def __init__(self, base: str | BotSpec, seed: int | None = None,
                 playouts: int = DEFAULT_PLAYOUTS, margin: float = DEFAULT_MARGIN,
                 models: str = "heuristic", table: str | Path | None = None,
                 name: str | None = None, time_budget_s: float | None = None) -> None:
        super().__init__(seed)
        check_options(playouts, margin, models, table)
        if time_budget_s is not None and not (isinstance(time_budget_s, (int, float))
                                              and 0 < time_budget_s < float("inf")):
            raise ValueError(f"search time_budget_s must be a number of seconds > 0, got "
                             f"{time_budget_s!r}")
        self.time_budget_s = time_budget_s
        #: a time.monotonic() instant by which a decision stops searching (None: no limit)
        self.deadline: float | None = None
        #: the win-probability table the ends are valued by
        self.table = Path(table) if table is not None else \
            SCRATCH_TABLE_FILE if models == "own" else TABLE_FILE
        self.base = build(base, seed=seed)     # the one builder; a read base is not read again
        if isinstance(base, BotSpec):
            base = base.text
        self.models = models
        self.actor = getattr(self.base, "policy", None)
        if models == "own" and not hasattr(self.actor, "logits"):
            raise ValueError(f"search models=own plays the base network in the playouts: the "
                             f"base must be a ppo:PATH agent, got {base!r}")
        if models == "own" and getattr(self.actor, "arch", None) not in OWN_NETWORKS:
            raise ValueError(f"search models=own plays the base network on the playouts' "
                             f"observations: {base!r} is an {self.actor.arch!r} network (its "
                             f"input is the expert bot's values, not a model of its own); use "
                             f"an {' or '.join(map(repr, OWN_NETWORKS))} network, e.g. "
                             f"search:ppo:scratch?models=own, or models=heuristic")
        self.playouts = int(playouts)
        self.margin = float(margin)
        self.name = name or f"search:{base}"
        self.last: dict[str, Any] = {"rows": 0}

    def reset(self) -> None:
        reset = getattr(self.base, "reset", None)
        if reset is not None:
            reset()

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        limit = self._limit()
        base_card = int(self.base.choose(view, legal))
        self.last = {"rows": 0}
        if view.phase is not Phase.PLAY or view.target not in TARGETS or len(legal) < 2:
            return base_card
        if limit is None:
            values = self._values(view, legal)            # (cards, D)
        else:
            values = self._values_until(view, legal, limit)
            if values is None:   # no time for a batch: the base's card
                self.last = {"rows": 0, "late": True}
                return base_card
        mean = values.mean(1)
        best = int(np.argmax(mean))
        ref = legal.index(base_card)
        diff = values[best] - values[ref]
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        card = base_card if best == ref or diff.mean() <= self.margin * se else legal[best]
        self.last = {"rows": values.size, "cards": list(legal), "values": mean,
                     "base": base_card, "card": card}
        return card

    def _deals(self, view: PlayerView, num: int) -> Hidden:
        """``num`` deals of what the seat has not seen (an oracle would override this)."""
        return sample_hidden(view, self.rng, num)

    def _limit(self) -> float | None:
        """The instant this decision stops searching (None: no time limit)."""
        ends = [t for t in (self.deadline, None if self.time_budget_s is None
                            else monotonic() + self.time_budget_s) if t is not None]
        return min(ends) if ends else None

    def _values_until(self, view: PlayerView, legal: list[int],
                      limit: float) -> np.ndarray | None:
        """:meth:`_values` in :data:`DEADLINE_BATCHES` batches of deals while
        ``monotonic()`` is before ``limit``: the batches done (None if none)."""
        deals = max(2, self.playouts // len(legal))
        sizes = [len(b) for b in np.array_split(np.arange(deals),
                                                max(1, min(DEADLINE_BATCHES, deals // 2)))]
        done = []
        for size in sizes:
            if monotonic() >= limit:
                break
            done.append(self._values(view, legal, size))
        return np.concatenate(done, axis=1) if done else None

    def _values(self, view: PlayerView, legal: list[int],
                deals: int | None = None) -> np.ndarray:
        """``(cards, D)`` chances to win after each legal card, on ``D`` paired deals (drawn
        by their likelihood, so each counts alike; ``D = deals``, by default the playouts
        shared by the cards)."""
        from agents.search.playouts import (
            NETWORK_ROWS,
            discard_likelihood,
            from_view,
            network_playout,
            own_discard_likelihood,
            play_likelihood,
            playout,
        )

        n_cards = len(legal)
        if deals is None:
            deals = max(2, self.playouts // n_cards)
        drawn = deals * DRAWS
        hidden = self._deals(view, drawn)
        rules = Rules(num_players=view.num_players, target=view.target)
        if self.models == "own":
            ll = np.zeros(drawn)
            if view.num_players == 2 and hasattr(self.actor, "throw_log_probs"):
                ll = own_discard_likelihood(view, hidden, self.actor)
        else:
            ll = np.zeros(drawn)
            for a in range(0, drawn, NETWORK_ROWS):     # a part at a time: less memory
                rows = np.arange(a, min(a + NETWORK_ROWS, drawn))
                part = from_view(view, hidden.take(rows), None, rules=rules)
                if view.played:
                    ll[rows] += play_likelihood(part, view.seat)
                if view.num_players == 2:
                    ll[rows] += discard_likelihood(part, view.seat, DISCARD_TEMPERATURE,
                                                   model="ev")
        w = np.exp(ll - ll.max())
        w /= w.sum()
        # the deals kept: a systematic resample of the drawn ones by their weights
        picks = np.searchsorted(np.cumsum(w), (self.rng.random() + np.arange(deals)) / deals)
        picks = np.minimum(picks, drawn - 1)
        seeds = self.rng.integers(_SEED_MAX, size=deals)
        root = from_view(view, hidden.take(picks), seeds, rules=rules)
        vg = root.copy_rows(np.tile(np.arange(deals), n_cards))   # card-major
        vg.step(np.repeat(np.asarray(legal, np.int64), deals))
        if self.models == "own":
            network_playout(vg, self.actor)
        else:
            playout(vg)
        side = rules.side_of(view.seat)
        sides = np.array([rules.side_of(s) for s in range(view.num_players)])
        scores = vg.scores
        own = scores[:, side]
        other = np.delete(scores, side, axis=1).max(1)
        value = seat_wins(own, other, sides[vg.dealer] == side, view.target, self.table)
        value = np.where(vg.done, (vg.winner == side).astype(np.float64), value)
        return value.reshape(n_cards, deals)


def _make_search(spec: BotSpec, seed: int | None = None, **kwargs: Any) -> SearchAgent:
    return SearchAgent(spec.base, seed=seed, name=f"search:{spec.rest}", **spec.options,
                       **kwargs)


register_agent("search", _make_search, read=SETTINGS)
