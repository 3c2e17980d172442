"""Fit the expert-prior card network to paired rollouts: a low-variance policy-improvement step.

PPO's signal in Cribbage is faint: a game is ~75 decisions for one +-1, and the per-update
KL of a policy that starts at the expert stays around 1e-6 (see docs/training.md). This module gives
the card network a cleaner target. In games of the expert (with the learned pegging value of
:mod:`agents.peg_values` in its discards) against itself, at sampled play decisions it tries
*every* legal card on a copy of the game (:meth:`cribenv.game.Game.clone`) and plays the rest of
the hand's play out, expert against expert, recording the seat's pegging differential from then
on. The hidden cards are the real ones and the same for every card tried, so the differences
between cards are measured with little noise (paired), and averaging over many deals turns them
into expected values given what the seat can see. The card network (the same shape as the
expert-prior policy's) is then fitted so that ``prior + mlp(features)`` matches those values up
to a constant per decision, i.e. the advantages; discard decisions are kept at the prior. The
fitted network is written as an ``expert-prior`` policy file (``beta`` scales the logits), which
``ppo:PATH`` plays and ``cribenv train --init-policy`` continues with self-play PPO.

    cribenv rollouts --games 6000 --workers 2 --out runs/rollout/policy.safetensors
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from agents.arena import run_game
from agents.expert import ExpertAgent
from agents.features import PRIOR_CLIP, best_throws, card_features
from agents.ppo import ExpertPriorActor, PPOAgent
from cribenv.checks import int_arg, real_number, writable_file
from cribenv.game import Game, Phase, Played, PlayerView, Rules, SeriesEnd
from train.flags import add_flag, settings_from_flags
from train.settings import ExpertPriorNetwork, Settings, described, setting

ENDGAME = 100   # no samples once a side has this many points (pegging out dominates there)


def _policy_bot(path: str | Path) -> PPOAgent:
    """The bot that plays the expert-prior policy file ``path`` (its most likely card)."""
    bot = PPOAgent(path)
    if not isinstance(bot.policy, ExpertPriorActor):
        raise ValueError(f"{path} is not an expert-prior policy")
    return bot


def _play_out(game: Game, players: list, seat: int) -> int:
    """Play the rest of the hand's play (``players[s]`` for seat ``s``); ``seat``'s pegging
    differential from now on."""
    start = len(game.events)
    run_game(game, players, until=lambda g: g.phase is not Phase.PLAY)
    side = game.side_of(seat)
    diff = 0
    for e in game.events[start:]:   # the play's points come before the show's
        if isinstance(e, Played | SeriesEnd) and e.points:
            diff += e.points if game.side_of(e.seat) == side else -e.points
    return diff


class _Throw:
    """Lays away the cards of ``throw``."""

    name = "throw"

    def __init__(self, throw: tuple[int, ...]) -> None:
        self.throw = throw

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        return next(c for c in self.throw if c in view.hand)


class _ByPhase:
    """One seat played by ``discard`` in the discard and by ``play`` in the play."""

    name = "by-phase"

    def __init__(self, discard, play) -> None:
        self.discard, self.play = discard, play

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        bot = self.discard if view.phase is Phase.DISCARD else self.play
        return bot.choose(view, legal)


def _hand_out(game: Game, throw: tuple[int, ...], seat: int, bots: list, players: list
              ) -> int:
    """Lay away ``throw`` for ``seat`` (the other seats discard with ``bots``), play the hand
    out with ``players`` and return ``seat``'s point differential over the rest of the hand."""
    before = list(game.scores)
    hand = game.hand_number
    seats = [_ByPhase(_Throw(throw) if s == seat else bots[s], players[s])
             for s in range(game.num_players)]
    run_game(game, seats, until=lambda g: g.hand_number != hand)
    me = game.side_of(seat)
    return (game.scores[me] - before[me]) - (game.scores[1 - me] - before[1 - me])


@dataclass
class _Rows:
    """The rows :func:`simulate` collects, and how it samples decisions for them."""

    rng: np.random.Generator
    sample_prob: float
    discard_prob: float
    discard_rollouts: bool
    ids: list[int] = field(default_factory=list)
    priors: list[np.ndarray] = field(default_factory=list)
    feats: list[np.ndarray] = field(default_factory=list)
    targets: list[np.ndarray] = field(default_factory=list)
    decisions: int = 0

    def add(self, prior: np.ndarray, features: np.ndarray, target: np.ndarray) -> None:
        """One decision: the legal cards' priors, feature rows and targets."""
        self.ids += [self.decisions] * len(target)
        self.priors.append(prior)
        self.feats.append(features)
        self.targets.append(target)
        self.decisions += 1


class _SampledSeat:
    """A seat whose decisions are sampled: at some of them it records the rollout value of
    every legal card (on copies of ``game``) in ``rows``, then it lays ``bot``'s card."""

    name = "sampled"

    def __init__(self, rows: _Rows, game: Game, bot, bots: list, players: list) -> None:
        self.rows, self.game, self.bot, self.bots, self.players = rows, game, bot, bots, players

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        rows, game, seat = self.rows, self.game, view.seat
        far = max(game.scores) < ENDGAME
        if view.phase is Phase.DISCARD:
            if far and rows.rng.random() < rows.discard_prob:
                prior, f = card_features(view, legal)
                if np.abs(prior[legal]).max() < PRIOR_CLIP - 10:
                    if rows.discard_rollouts and not view.discards:
                        # each card's best throw, played out to the end of the hand
                        best = best_throws(view)
                        outcome = {t: _hand_out(game.clone(), t, seat, self.bots, self.players)
                                   for t in {best[c][2] for c in legal}}
                        target = np.asarray([outcome[best[c][2]] for c in legal], np.float32)
                    else:
                        target = prior[legal]   # keep the prior
                    rows.add(prior[legal], f[legal], target)
        elif far and rows.rng.random() < rows.sample_prob:
            prior, f = card_features(view, legal)
            if np.abs(prior[legal]).max() < PRIOR_CLIP - 10:
                values = []
                for c in legal:
                    copy = game.clone()
                    now = sum(e.points for e in copy.step(c)
                              if isinstance(e, Played | SeriesEnd))
                    values.append(now + (_play_out(copy, self.players, seat)
                                         if copy.phase is Phase.PLAY else 0))
                rows.add(prior[legal], f[legal], np.asarray(values, np.float32))
        return self.bot.choose(view, legal)


def simulate(games: int, seed: int, sample_prob: float = 0.5, discard_prob: float = 0.1,
             policy: str | None = None, discard_rollouts: bool = False,
             opponent: str | None = None) -> dict[str, np.ndarray]:
    """Rows of (decision id, prior, features, target) from ``games`` games of the expert (or of
    the expert-prior ``policy`` file, for a further policy-iteration round) against itself, or
    against the bot ``opponent`` (then only the expert's seat is sampled, and the opponent
    plays its own cards in the rollouts)."""
    rows = _Rows(np.random.default_rng(seed), sample_prob, discard_prob, discard_rollouts)
    if policy:
        bot = expert = _policy_bot(policy)
    else:
        bot = ExpertAgent(peg_weight=1.0)
        expert = ExpertAgent()
    other = make_agent(opponent, seed=seed) if opponent else None
    for g in range(games):
        game = Game(Rules(), seed=seed * 1_000_003 + g, first_dealer=g % 2)
        bot.reset()
        bots, players = [bot, bot], [expert, expert]
        sampled = {0, 1}
        if other is not None:
            me = (g // 2) % 2            # both seats, both first dealers
            bots[1 - me] = players[1 - me] = other
            sampled = {me}
        seats = [_SampledSeat(rows, game, bot, bots, players) if s in sampled else other
                 for s in (0, 1)]
        run_game(game, seats)
    return {"ids": np.asarray(rows.ids, np.int64), "prior": np.concatenate(rows.priors),
            "features": np.concatenate(rows.feats), "target": np.concatenate(rows.targets)}


def _work(args: tuple[int, int, str | None]) -> dict[str, np.ndarray]:
    games, seed, policy = args
    return simulate(games, seed, policy=policy)


def _work_versus(args: tuple[int, int, str | None, str]) -> dict[str, np.ndarray]:
    games, seed, policy, opponent = args
    return simulate(games, seed, policy=policy, opponent=opponent)


def _work_discards(args: tuple[int, int, str | None]) -> dict[str, np.ndarray]:
    games, seed, policy = args
    return simulate(games, seed, sample_prob=0.0, discard_prob=1.0, policy=policy,
                    discard_rollouts=True)


def fit(data: dict[str, np.ndarray], card_hidden: list[int], epochs: int = 30,
        lr: float = 1e-3, batch_decisions: int = 4096, seed: int = 0,
        log=print) -> tuple[Any, dict[str, float]]:
    """Fit ``prior + mlp(features)`` to the targets up to a constant per decision."""
    import torch

    from train.prior_policy import ExpertPriorModule

    torch.manual_seed(seed)
    nets = ExpertPriorModule(card_hidden, [8], "relu", beta=1.0)
    ids = torch.as_tensor(data["ids"])
    prior = torch.as_tensor(data["prior"], dtype=torch.float32)
    x = torch.as_tensor(data["features"], dtype=torch.float32)
    y = torch.as_tensor(data["target"], dtype=torch.float32)
    n_dec = int(ids.max()) + 1

    def centred(v: torch.Tensor, sel_ids: torch.Tensor, n: int) -> torch.Tensor:
        sums = torch.zeros(n).index_add_(0, sel_ids, v)
        cnt = torch.zeros(n).index_add_(0, sel_ids, torch.ones_like(v))
        return v - (sums / cnt.clamp(min=1))[sel_ids]

    perm_rng = np.random.default_rng(seed)
    decisions = perm_rng.permutation(n_dec)
    test_dec = set(decisions[: n_dec // 10].tolist())
    is_test = torch.as_tensor(np.fromiter((i in test_dec for i in data["ids"].tolist()), bool))
    test_rows = torch.nonzero(is_test).squeeze(1)
    # the rows of a decision are contiguous (ids ascend): a decision is a slice of rows
    ids_np = data["ids"]
    starts = np.searchsorted(ids_np, np.arange(n_dec + 1))
    train_decs = np.array(sorted(set(range(n_dec)) - test_dec))

    def rows_of(decs: np.ndarray) -> torch.Tensor:
        lo, hi = starts[decs], starts[decs + 1]
        lengths = hi - lo
        offsets = np.repeat(lo - np.cumsum(lengths) + lengths, lengths)
        return torch.as_tensor(offsets + np.arange(lengths.sum()))

    params = list(nets.card.net.parameters()) + list(nets.card.out.parameters())
    opt = torch.optim.Adam(params, lr=lr)

    def loss_on(rows: torch.Tensor) -> torch.Tensor:
        sel = ids[rows]
        _, local = torch.unique(sel, return_inverse=True)
        n = int(local.max()) + 1
        pred = prior[rows] + nets.card.scores(x[rows])
        err = centred(pred, local, n) - centred(y[rows], local, n)
        return (err ** 2).mean()

    with torch.no_grad():
        zero = ((centred(prior[test_rows], ids[test_rows], n_dec)
                 - centred(y[test_rows], ids[test_rows], n_dec)) ** 2).mean().item()
        base = (centred(y[test_rows], ids[test_rows], n_dec) ** 2).mean().item()
    log(f"  held-out decisions: {len(test_dec):,}; advantage variance {base:.3f}; "
        f"expert prior's error {zero:.3f}")
    for epoch in range(epochs):
        perm_rng.shuffle(train_decs)
        for s in range(0, len(train_decs), batch_decisions):
            rows = rows_of(train_decs[s:s + batch_decisions])
            opt.zero_grad()
            loss = loss_on(rows)
            loss.backward()
            opt.step()
        if epoch % 5 == 4 or epoch == epochs - 1:
            with torch.no_grad():
                test = loss_on(test_rows).item()
            log(f"  epoch {epoch + 1}: train {loss.item():.3f}, held-out {test:.3f}")
    return nets, {"advantage_var": base, "prior_error": zero, "fitted_error": test}


def export(nets, path: str | Path, beta: float, card_hidden: list[int],
           meta: dict) -> Path:
    """Write the fitted network as an expert-prior policy file with logits ``beta * Q``."""
    import torch

    with torch.no_grad():
        nets.card.out.weight.mul_(beta)
        nets.card.out.bias.mul_(beta)
        nets.card.log_beta.fill_(float(np.log(beta)))
    return nets.card.save(path, {"card_arch": card_hidden, **meta})


@dataclass
class RolloutSettings(Settings, ExpertPriorNetwork):
    """What ``cribenv rollouts`` fits (on the settings base of every command that trains:
    each declared once, with its default, range and help; the flags are made from them)."""

    games: int = setting(6000, "games to sample from")
    epochs: int = setting(30, "fitting epochs")
    seed: int = setting(0)
    discard_games: int = setting(
        0,
        "games whose first discards are rolled out to the end of the hand (0: discards stay "
        "at the prior)")
    opponent: str = setting("", "a bot (e.g. greedy) for --opponent-games more games of the "
                                "expert against it")
    opponent_games: int = setting(
        0,
        "games against --opponent whose expert decisions are rolled out")
    policy: str = setting(
        "",
        "an expert-prior policy file to play and roll out with instead of the expert (a "
        "further improvement round)")
    data: str = setting("", "npz cache of the rollouts (written, or read if it exists)")

    KIND = "rollouts"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Fit the expert-prior card network to paired rollouts of every legal "
                          "card (a policy-improvement step on the expert) and write an "
                          "expert-prior policy file.")
    for s in described(RolloutSettings):
        add_flag(parser, s)
    parser.add_argument("--workers", type=int_arg(1), default=2, help="processes (2)")
    parser.add_argument("--out", required=True, help="policy file to write")


def _simulate_parallel(worker, games: int, seed_base: int, policy: str | None, workers: int,
                       progress: bool, desc: str, *extra: str) -> dict[str, np.ndarray]:
    from tqdm import tqdm

    chunk = 100
    jobs = [(min(chunk, games - s), seed_base + s // chunk, policy, *extra)
            for s in range(0, games, chunk)]
    parts = []
    with cf.ProcessPoolExecutor(max(1, workers)) as ex, \
            tqdm(total=games, unit="game", desc=desc, disable=not progress) as bar:
        for job, part in zip(jobs, ex.map(worker, jobs)):
            parts.append(part)
            bar.update(job[0])
    return _concat(parts)


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Join row sets, renumbering the decisions."""
    offset = 0
    out = []
    for p in parts:
        if not len(p["ids"]):
            continue
        out.append(dict(p, ids=p["ids"] + offset))
        offset += int(p["ids"].max()) + 1
    return {k: np.concatenate([p[k] for p in out]) for k in out[0]}


def _cached(path: Path | None, games: int, make) -> dict[str, np.ndarray]:
    """The rows of ``games`` games: read from ``path`` if it holds them, else made and saved."""
    if path is not None and path.is_file():
        data = dict(np.load(path))
        held = int(data.pop("games", -1))
        if held != games:
            raise ValueError(f"{path} holds the rollouts of {held} games, not {games}: delete "
                             f"it or pass another --data")
        return data
    data = make()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, games=np.int64(games), **data)
    return data


def fit_rollouts(games: int, out: str | Path, workers: int = 2, seed: int = 0,
                 card_arch: list[int] | None = None, epochs: int = 30, beta: float = 3.0,
                 policy: str | None = None, data_path: str | Path | None = None,
                 discard_games: int = 0, opponent: str | None = None,
                 opponent_games: int = 0, progress: bool = True, log=print) -> Path:
    """Simulate (or read the cache ``data_path``), fit and write the policy file ``out``.

    ``games`` give the play decisions; with ``discard_games`` the first discard of each seat
    in that many more games is rolled out too (each card's best throw, to the end of the hand)
    and replaces the discard rows kept at the prior; with ``opponent_games``, that many games
    of the expert against the bot ``opponent`` add the expert's play decisions against it."""
    card_arch = list(card_arch or [64, 64])
    writable_file(out, "the policy file")          # every output, before the simulation
    if data_path and not Path(data_path).is_file():
        writable_file(data_path, "the rollout cache")
    if opponent_games and not opponent:
        raise ValueError("opponent_games needs an opponent (--opponent BOT)")
    if opponent:
        make_agent(opponent, seed=0)
    if not real_number(beta, "beta") > 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    if policy:
        from agents.ppo import load_policy

        load_policy(policy)
    started = time.perf_counter()
    cache = Path(data_path) if data_path else None
    data = _cached(cache, games, lambda: _simulate_parallel(_work, games, seed * 100_000, policy,
                                                     workers, progress, "rollouts"))
    if discard_games:
        dcache = cache.with_name(f"{cache.stem}-discards.npz") if cache else None
        discards = _cached(dcache, discard_games, lambda: _simulate_parallel(
            _work_discards, discard_games, seed * 100_000 + 50_000, policy, workers, progress,
            "discard rollouts"))
        keep = data["features"][:, 6] == 0     # the play rows
        data = _concat([{k: v[keep] for k, v in data.items()}, discards])
    if opponent_games and opponent:
        ocache = cache.with_name(f"{cache.stem}-vs-{opponent}.npz") if cache else None
        versus = _cached(ocache, opponent_games, lambda: _simulate_parallel(
            _work_versus, opponent_games, seed * 100_000 + 70_000, policy, workers, progress,
            f"rollouts vs {opponent}", opponent))
        data = _concat([data, versus])
    log(f"{int(data['ids'].max()) + 1:,} decisions, {len(data['ids']):,} cards "
        f"({time.perf_counter() - started:.0f} s)")
    nets, stats = fit(data, card_arch, epochs=epochs, seed=seed, log=log)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    path = export(nets, out, beta, card_arch,
                  {"rollout_games": games, "discard_games": discard_games, "seed": seed,
                   "opponent": opponent or "", "opponent_games": opponent_games,
                   "steps": 0, "rollout_policy": Path(policy).name if policy else "expert",
                   **{k: round(v, 4) for k, v in stats.items()}})
    log(f"wrote {path} ({time.perf_counter() - started:.0f} s)")
    return path


def run(args: argparse.Namespace) -> int:
    settings = settings_from_flags(RolloutSettings, args)
    fit_rollouts(settings.games, args.out, workers=args.workers, seed=settings.seed,
                 card_arch=settings.card_arch, epochs=settings.epochs, beta=settings.beta,
                 policy=settings.policy or None, data_path=settings.data or None,
                 discard_games=settings.discard_games, opponent=settings.opponent or None,
                 opponent_games=settings.opponent_games)
    return 0


if __name__ == "__main__":   # the same as ``cribenv rollouts``
    import sys

    from cribenv.cli import main

    raise SystemExit(main(["rollouts", *sys.argv[1:]]))
