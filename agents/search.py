"""``search:BASE`` agents: a base agent improved by playouts on the batched engine.

At each decision with a choice, the agent values every candidate (in the play each legal card;
in the discard each way to lay away the cards, with those already laid away) by paired
playouts:

1. deal what the seat has not seen ``D`` times (:func:`cribenv.positions.sample_hidden`,
   consistent with the card counts and every Go), ``D = playouts // candidates``;
2. start every candidate from every deal, the same deal and the same generator (so the same
   starter and the same next hands) for all candidates: the comparison is paired;
3. play each to the end of the hand, every seat greedy, in compiled code
   (:meth:`cribenv.vector.VectorGame.playout`);
4. value the end by the chance to win: exact where the game ended, else the win-probability
   table at the scores and the next dealer (:mod:`agents.winprob`; with 3 or 4 players the
   2-player table at the side's score against the best other side's, an approximation).

It plays the base agent's card unless the best candidate beats the base's by more than
``margin`` standard errors of their paired difference (in the discard, the best throw that holds
the base's card stands for the base). Decisions are deterministic under the seed.

Spelling: ``search:BASE`` with an optional ``?`` query, e.g.
``search:ppo:shipped?playouts=600&margin=1`` (any ``make_agent`` spec as BASE).

>>> from agents import make_agent
>>> from cribenv.game import Game
>>> bot = make_agent("search:expert?playouts=60", seed=0)
>>> g = Game(seed=1)
>>> card = bot.choose(g.view(g.current_player), g.legal_actions())
>>> card in g.legal_actions(), bot.name
(True, 'search:expert?playouts=60')
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from agents.base import ViewAgent, make_agent, register_agent
from agents.winprob import TARGETS, seat_wins
from cribenv.game import Phase, PlayerView, Rules
from cribenv.positions import sample_hidden

__all__ = ["DEFAULT_MARGIN", "DEFAULT_PLAYOUTS", "SearchAgent", "parse_spec"]

#: Playouts a decision by default (shared by the candidates): about 20-40 ms here.
DEFAULT_PLAYOUTS = 600
#: Standard errors of the paired difference a candidate needs to overrule the base.
DEFAULT_MARGIN = 1.0
_SEED_MAX = 2**63 - 1


def parse_spec(arg: str) -> tuple[str, dict[str, Any]]:
    """``"BASE?k=v&..."`` -> ``(BASE, {"playouts": int, "margin": float})``.

    >>> parse_spec("ppo:shipped?playouts=200&margin=0.5")
    ('ppo:shipped', {'playouts': 200, 'margin': 0.5})
    >>> parse_spec("expert")
    ('expert', {})
    """
    base, _, query = arg.partition("?")
    if not base:
        raise ValueError("'search:BASE' needs a base agent, e.g. search:ppo:shipped or "
                         "search:expert")
    options: dict[str, Any] = {}
    for part in filter(None, query.split("&")):
        key, eq, value = part.partition("=")
        if not eq or key not in ("playouts", "margin", "rollout", "phases", "play", "top",
                                 "weigh", "endgame"):
            raise ValueError(f"search option {part!r}: expected playouts=N or margin=X "
                             f"(as in search:{base}?playouts=600&margin=1)")
        try:
            options[key] = int(value) if key in ("playouts", "top", "weigh", "endgame") else \
                value if key in ("rollout", "phases", "play") else float(value)
        except ValueError:
            raise ValueError(f"search option {key}={value!r} is not a number") from None
    if options.get("playouts", 1) < 1:
        raise ValueError(f"search playouts must be at least 1, got {options['playouts']}")
    margin = options.get("margin", 0.0)
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"search margin must be a finite number >= 0, got {margin}")
    return base, options


class SearchAgent(ViewAgent):
    """A base agent whose choices are checked by paired playouts (see the module docstring)."""

    asks_forced = False

    def __init__(self, base: str, seed: int | None = None,
                 playouts: int = DEFAULT_PLAYOUTS, margin: float = DEFAULT_MARGIN,
                 rollout: str = "reply", phases: str = "both", play: str = "solve",
                 top: int = 0, weigh: int = 0, endgame: int = 0,
                 name: str | None = None) -> None:
        super().__init__(seed)
        self.base = make_agent(base, seed=seed)
        self.playouts = int(playouts)
        self.margin = float(margin)
        self.rollout = rollout
        self.phases = phases
        self.play = play
        self.top = top
        self.weigh = weigh
        self.endgame = endgame
        self.name = name or f"search:{base}"
        self.last: dict[str, Any] = {}   # the last decision's candidates and values

    def reset(self) -> None:
        reset = getattr(self.base, "reset", None)
        if reset is not None:
            reset()

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        base_card = int(self.base.choose(view, legal))
        if view.target not in TARGETS or len(legal) < 2:
            return base_card
        self.last = {"rows": 0}
        if max(view.scores) < self.endgame:
            return base_card
        if (self.phases == "play" and view.phase is Phase.DISCARD) or \
                (self.phases == "discard" and view.phase is Phase.PLAY):
            return base_card
        if view.phase is Phase.DISCARD:
            need = view.discards_per_player - len(view.discards)
            candidates = [list(t) for t in itertools.combinations(legal, need)]
            if self.top:
                candidates = self._top_throws(view, candidates, base_card)
        else:
            candidates = [[c] for c in legal]
        values, w = self._values(view, candidates)            # (C, D), (D,) summing to 1
        mean = values @ w
        best = int(np.argmax(mean))
        holds_base = [i for i, c in enumerate(candidates) if base_card in c]
        ref = max(holds_base, key=lambda i: mean[i])
        diff = values[best] - values[ref]
        se = np.sqrt(np.sum(w ** 2 * (diff - diff @ w) ** 2) * len(w) / max(len(w) - 1, 1))
        diff = diff @ w
        chosen = ref if best == ref or diff <= self.margin * se else best
        card = base_card if chosen == ref else min(candidates[chosen])
        self.last = {"candidates": candidates, "values": mean, "base": base_card,
                     "card": card, "deals": values.shape[1], "rows": values.size}
        return card

    def _top_throws(self, view: PlayerView, candidates: list[list[int]],
                    base_card: int) -> list[list[int]]:
        """The ``top`` candidates the expert ranks best, and the best that holds the base's
        card."""
        from agents.expert import ExpertAgent

        done = set(view.discards)
        order = []
        for _, _, throw, _ in ExpertAgent(peg_weight=1.0).rank_throws(view):
            if done.issubset(throw):
                rest = sorted(set(throw) - done)
                if rest not in order:
                    order.append(rest)
        keep = order[:self.top]
        if not any(base_card in c for c in keep):
            keep.append(next(c for c in order if base_card in c))
        return keep

    def _values(self, view: PlayerView, candidates: list[list[int]]
                ) -> tuple[np.ndarray, np.ndarray]:
        """``(candidates, D)`` chances to win after each candidate, on ``D`` paired deals, and
        the deals' weights ``(D,)`` (summing to 1)."""
        from cribenv.vector import VectorGame

        n_cand = len(candidates)
        deals = max(2, self.playouts // n_cand)
        hidden = sample_hidden(view, self.rng, deals)
        seeds = self.rng.integers(_SEED_MAX, size=deals)
        rules = Rules(num_players=view.num_players, target=view.target)
        root = VectorGame.from_view(view, hidden, seeds, rules=rules)
        vg = root.copy_rows(np.tile(np.arange(deals), n_cand))   # candidate-major
        steps = np.array(candidates, np.int64)                   # (C, k) cards to lay
        for j in range(steps.shape[1]):
            vg.step(np.repeat(steps[:, j], deals))
        side = rules.side_of(view.seat)
        w = np.full(deals, 1.0 / deals)
        if self.weigh and view.phase is Phase.PLAY and view.played:
            ll = root.play_likelihood(view.seat)
            w = np.exp(ll - ll.max())
            w /= w.sum()
        if view.phase is Phase.PLAY and view.num_players == 2 and self.play == "solve":
            from agents.winprob import _table
            hand = np.full(vg.num_games, view.hand_number)
            return vg.solve_play(side, hand, _table(view.target)).reshape(n_cand, deals), w
        vg.playout(policy=self.rollout)
        sides = np.array([rules.side_of(s) for s in range(view.num_players)])
        scores = vg.scores
        own = scores[:, side]
        other = np.delete(scores, side, axis=1).max(1)
        value = seat_wins(own, other, sides[vg.dealer] == side, view.target)
        over = vg.done
        value = np.where(over, (vg.winner == side).astype(np.float64), value)
        return value.reshape(n_cand, deals), w


def _make_search(arg: str, seed: int | None = None, **kwargs: Any) -> SearchAgent:
    base, options = parse_spec(arg)
    return SearchAgent(base, seed=seed, name=f"search:{arg}", **options, **kwargs)


register_agent("search", _make_search)
