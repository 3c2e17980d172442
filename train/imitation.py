"""Behaviour cloning warm start: teach the PPO policy the expert's moves before self-play.

Cribbage rewards are noisy (a game is won or lost over ~75 decisions of mostly card luck), so a
policy learning from scratch spends millions of steps discovering what the expert bot already
computes exactly (discard expected values, safe pegging). With ``bc_games > 0`` the learner's
actor is first fitted to the expert's choices (masked cross-entropy) and its critic to Monte
Carlo returns of the same games; self-play PPO then improves on that start. The expert remains
an opponent and the evaluation baseline, so the result is judged against its own teacher.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from agents import make_agent
from agents.arena import run_game
from cribenv.game import Game, Rules
from cribenv.observation import encode_game


@dataclass
class Demonstrations:
    """Decisions of a teacher: observations, masks, chosen cards and returns."""

    obs: np.ndarray        # (N, OBS_SIZE) float16
    masks: np.ndarray      # (N, 52) bool
    actions: np.ndarray    # (N,) int64
    returns: np.ndarray    # (N,) float32: the env reward the decision's seat went on to earn

    def __len__(self) -> int:
        return len(self.actions)


def collect(games: int, teacher: str = "expert", seed: int = 0, target: int = 121,
            shaping: float = 0.0, gamma: float = 1.0,
            progress: Callable[[int], None] | None = None) -> Demonstrations:
    """Play ``games`` teacher-vs-teacher games and record every decision with a choice.

    The return of a decision is what the env's ``reward="win"`` (plus ``shaping`` x point
    differential) pays its seat from then on: ``gamma ** (decisions left) * (+1 | -1)`` plus
    ``shaping`` x the point differential still to come.
    """
    rules = Rules(num_players=2, target=target)
    obs_rows: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    for g in range(games):
        game = Game(rules, seed=seed + g, first_dealer=g % 2)
        bots = [make_agent(teacher, seed=(seed + g) * 2 + s) for s in (0, 1)]
        for bot in bots:
            getattr(bot, "reset", lambda: None)()
        records = _play_recorded(game, bots, obs_rows, masks, actions)
        returns += [0.0] * len(records)
        final = [game.scores[0] - game.scores[1], game.scores[1] - game.scores[0]]
        left = [0, 0]
        for seat, i, diff in reversed(records):
            win = 1.0 if game.winner == seat else -1.0
            returns[i] = gamma ** left[seat] * win + shaping * (final[seat] - diff)
            left[seat] += 1
        if progress is not None:
            progress(1)
    return Demonstrations(np.stack(obs_rows), np.stack(masks), np.asarray(actions, np.int64),
                          np.asarray(returns, np.float32))


def _play_recorded(game: Game, bots: list, obs_rows: list[np.ndarray],
                   masks: list[np.ndarray], actions: list[int]) -> list[tuple[int, int, int]]:
    """Play ``game`` out with ``bots``, appending every decision with a choice to the lists;
    returns ``(seat, sample index, point differential at the decision)`` of each."""
    records: list[tuple[int, int, int]] = []

    def record(seat: int, legal: list[int], card: int) -> None:
        if len(legal) > 1:   # forced moves carry no information
            records.append((seat, len(actions), game.scores[seat] - game.scores[1 - seat]))
            mask = np.zeros(52, bool)
            mask[legal] = True
            obs_rows.append(encode_game(game, seat).astype(np.float16))
            masks.append(mask)
            actions.append(card)

    run_game(game, bots, on_decision=record)
    return records


def pretrain(model, data: Demonstrations, epochs: int = 4, batch_size: int = 512,
             lr: float = 1e-3, seed: int = 0, log: Callable[[str], None] = print) -> dict:
    """Fit an SB3 MaskablePPO policy's actor to ``data.actions`` and its critic to returns."""
    policy = model.policy
    policy.set_training_mode(True)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    n = len(data)
    gen = np.random.default_rng(seed)
    obs_all = torch.from_numpy(data.obs)
    masks_all = torch.from_numpy(data.masks)
    actions_all = torch.from_numpy(data.actions)
    returns_all = torch.from_numpy(data.returns)
    stats = {}
    for epoch in range(epochs):
        order = torch.from_numpy(gen.permutation(n))
        total_ce = total_v = correct = 0.0
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            obs = obs_all[idx].float()
            features = policy.extract_features(obs, policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi)
            logits = logits.masked_fill(~masks_all[idx], -1e8)
            ce = F.cross_entropy(logits, actions_all[idx])
            values = policy.value_net(latent_vf).squeeze(-1)
            v_loss = F.mse_loss(values, returns_all[idx])
            loss = ce + 0.5 * v_loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            total_ce += ce.item() * len(idx)
            total_v += v_loss.item() * len(idx)
            correct += (logits.argmax(-1) == actions_all[idx]).sum().item()
        stats = {"epoch": epoch + 1, "cross_entropy": total_ce / n, "value_mse": total_v / n,
                 "accuracy": correct / n}
        log(f"  imitation epoch {epoch + 1}/{epochs}: accuracy {stats['accuracy']:.3f}, "
            f"cross-entropy {stats['cross_entropy']:.3f}, value MSE {stats['value_mse']:.3f}")
    policy.set_training_mode(False)
    return stats

