"""TEMPORARY stand-in for ``cribenv.vector.VectorGame`` (a list of ``Game``); deleted once the
compiled engine is merged. Same public names: ``to_act``, ``legal_mask()``, ``step``,
``scores``, ``done``, ``winner``, ``game_points``, ``observe()``, plus ``reset_games``."""

from __future__ import annotations

import numpy as np

from cribenv.game import Game, Rules
from cribenv.observation import OBS_SIZE, encode_game


class VectorGame:
    def __init__(self, rules: Rules, seeds) -> None:
        self.rules = rules
        self.games = [Game(rules, seed=int(s)) for s in seeds]

    def reset_games(self, index, seeds) -> None:
        for i, s in zip(np.asarray(index).tolist(), np.asarray(seeds).tolist()):
            self.games[i] = Game(self.rules, seed=int(s))

    @property
    def to_act(self) -> np.ndarray:
        return np.array([-1 if g.current_player is None else g.current_player
                         for g in self.games], np.int64)

    def legal_mask(self) -> np.ndarray:
        mask = np.zeros((len(self.games), 52), bool)
        for i, g in enumerate(self.games):
            if g.current_player is not None:
                mask[i, g.legal_actions()] = True
        return mask

    def step(self, actions) -> None:
        for g, a in zip(self.games, np.asarray(actions).tolist()):
            if g.current_player is not None:
                g.step(int(a))

    @property
    def scores(self) -> np.ndarray:
        return np.array([g.scores for g in self.games], np.int64)

    @property
    def done(self) -> np.ndarray:
        return np.array([g.current_player is None for g in self.games])

    @property
    def winner(self) -> np.ndarray:
        return np.array([-1 if g.winner is None else g.winner for g in self.games], np.int64)

    @property
    def game_points(self) -> np.ndarray:
        return np.array([g.game_points for g in self.games], np.int64)

    def observe(self) -> np.ndarray:
        out = np.zeros((len(self.games), OBS_SIZE), np.float32)
        for i, g in enumerate(self.games):
            if g.current_player is not None:
                encode_game(g, g.current_player, out[i])
        return out
