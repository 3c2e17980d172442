"""The pegging value of a kept hand, learned from self-play: ``E[pegging differential | keep]``.

The expert's discard counts the show exactly (hand and crib over every starter) but not the
play. How a kept hand pegs (low cards for the go, pairs for pair royals, fives as the pone...)
is worth a few tenths of a point a hand between throws. :mod:`train.fit_peg_values` measures it:
it plays many hands expert against expert, lets one seat keep a random one of its best throws,
records the pegging points of both seats, and fits a ridge regression per role (dealer, pone)
of the seat's pegging differential on the kept ranks (13 rank counts and the 91 + 13 unordered
rank pairs). The fitted coefficients ship in ``agents/trained/peg_values.json``; this module
evaluates them with numpy.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["PEG_VALUES_FILE", "PegValues", "keep_features", "NUM_KEEP_FEATURES"]

PEG_VALUES_FILE = Path(__file__).resolve().parent / "trained" / "peg_values.json"
_PAIRS = {pair: 13 + i for i, pair in
          enumerate(itertools.combinations_with_replacement(range(13), 2))}
NUM_KEEP_FEATURES = 13 + len(_PAIRS) + 1   # rank counts, rank pairs, intercept


def keep_features(ranks: Sequence[int]) -> np.ndarray:
    """The regression inputs of a kept hand given by its card ranks (0..12)."""
    x = np.zeros(NUM_KEEP_FEATURES, np.float64)
    for r in ranks:
        x[r] += 1.0
    for a, b in itertools.combinations(sorted(ranks), 2):
        x[_PAIRS[(a, b)]] += 1.0
    x[-1] = 1.0
    return x


class PegValues:
    """Expected pegging differential of a kept hand, per role (0: pone, 1: dealer)."""

    def __init__(self, coef: np.ndarray, meta: dict | None = None) -> None:
        coef = np.asarray(coef, np.float64)
        if coef.shape != (2, NUM_KEEP_FEATURES):
            raise ValueError(f"peg value coefficients must have shape (2, {NUM_KEEP_FEATURES}), "
                             f"got {coef.shape}")
        self.coef = coef
        self.meta = dict(meta or {})
        self._cached = lru_cache(maxsize=20_000)(self._value)
        self._table: np.ndarray | None = None

    @classmethod
    def load(cls, path: str | Path = PEG_VALUES_FILE) -> PegValues:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
            return cls(np.array(data["coef"]), data.get("meta"))
        except FileNotFoundError:
            raise ValueError(f"no peg value table at {path} (train one with "
                             f"cribenv peg-values)") from None
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a peg value table: {exc}") from None

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"coef": self.coef.round(5).tolist(), "meta": self.meta},
                                  indent=1) + "\n")
        tmp.replace(path)
        return path

    def _value(self, ranks: tuple[int, ...], dealer: bool) -> float:
        return float(keep_features(ranks) @ self.coef[int(dealer)])

    def value(self, keep: Sequence[int], dealer: bool) -> float:
        """Expected pegging points minus the opponent's for the kept cards (card ids)."""
        return self._cached(tuple(sorted(c >> 2 for c in keep)), bool(dealer))

    def table(self) -> np.ndarray:
        """:meth:`value` of every kept hand as an array (the compiled features' input,
        :mod:`agents._feature_kernels`): float64 ``(2, 13**4)``, ``[dealer, ((r0 * 13 + r1) * 13
        + r2) * 13 + r3]`` for the sorted ranks ``r0 <= r1 <= r2 <= r3`` of the kept cards (the
        other entries 0). Each entry is the very float :meth:`value` gives; built once (~0.05 s).

            >>> pv, key = shipped(), ((0 * 13 + 4) * 13 + 4) * 13 + 10   # A 5 5 J
            >>> float(pv.table()[1, key]) == pv.value([0, 16, 17, 40], dealer=True)
            True
        """
        if self._table is None:
            out = np.zeros((2, 13**4), np.float64)
            for ranks in itertools.combinations_with_replacement(range(13), 4):
                key = ((ranks[0] * 13 + ranks[1]) * 13 + ranks[2]) * 13 + ranks[3]
                for dealer in (0, 1):
                    out[dealer, key] = self._value(ranks, bool(dealer))
            out.setflags(write=False)
            self._table = out
        return self._table


@lru_cache(maxsize=1)
def shipped() -> PegValues:
    """The table in ``agents/trained/peg_values.json``."""
    return PegValues.load(PEG_VALUES_FILE)
