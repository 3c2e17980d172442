"""The games of expert iteration (:mod:`train.expert_iteration`): the search agent's decisions
recorded as rows, 20 games a chunk, each chunk its own seed and file, played in a pool of
workers (or as Ray tasks on a cluster) and read back checked.

A row is one decision: ``kind`` (:data:`PLAY` or :data:`DISCARD`), the ``legal`` cards (-1
padding to :data:`SLOTS`), the search's ``values`` (its chance to win after each card; NaN on
discards), the ``card`` laid, and what the network fitted reads: each legal card's ``prior``
and ``features`` (``models="heuristic"``) or the seat's observation ``obs`` (``"own"``).
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from cribenv.files import write_with

#: Legal cards a decision may have (six in the first discard of 2 players).
SLOTS = 6
#: Games in one chunk: the unit of work, of seeding and of resume.
CHUNK_GAMES = 20
PLAY, DISCARD = 1, 0


class _Recorder:
    """A seat played by a search agent whose decisions are written into ``rows``: with
    ``models`` ``heuristic`` each legal card's prior and features, with ``own`` the
    observation."""

    def __init__(self, agent, rows: list[tuple], models: str = "heuristic") -> None:
        self.agent, self.rows, self.models = agent, rows, models
        self.name = agent.name
        self.asks_forced = False

    def reset(self) -> None:
        self.agent.reset()

    def choose(self, view, legal: list[int]) -> int:
        from agents.features import card_features
        from cribenv.game import Phase
        from cribenv.observation import encode

        card = int(self.agent.choose(view, legal))
        last = self.agent.last
        if view.phase is Phase.PLAY and last["rows"]:
            values = np.asarray(last["values"], np.float64)
        elif view.phase is Phase.DISCARD and len(legal) > 1:
            values = np.full(len(legal), np.nan)
        else:
            return card
        kind = PLAY if view.phase is Phase.PLAY else DISCARD
        if self.models == "own":
            self.rows.append((kind, legal, encode(view), values, card))
        else:
            prior, feats = card_features(view, legal)
            self.rows.append((kind, legal, (prior[legal], feats[legal]), values, card))
        return card


def chunk_seed(seed: int, round_no: int, chunk: int) -> int:
    """The seed of chunk ``chunk`` of round ``round_no`` of a run seeded ``seed``."""
    return int(np.random.SeedSequence([seed, round_no, chunk]).generate_state(1, np.uint64)[0]
               >> np.uint64(1))


def play_chunk(base: str, seed: int, games: int, playouts: int, models: str = "heuristic"
               ) -> dict[str, np.ndarray]:
    """The decisions of ``games`` games of ``search:ppo:BASE`` (with ``models``) against
    itself, as padded rows: ``kind`` (1 play, 0 discard), ``legal`` (ids, -1 padding),
    ``values`` (the search's chance to win after each card; NaN on discards), ``card`` (the
    card laid) and what the network reads: ``prior`` and ``features`` of each legal card
    (``heuristic``) or ``obs``, the observation (``own``)."""
    from agents.arena import run_game
    from agents.search import SearchAgent
    from cribenv.game import Game, Rules

    rng = np.random.default_rng(seed)
    rows: list[tuple] = []
    seats = [_Recorder(SearchAgent(f"ppo:{base}", seed=int(rng.integers(2**62)),
                                   playouts=playouts, models=models), rows, models)
             for _ in range(2)]
    for g in range(games):
        game = Game(Rules(), seed=int(rng.integers(2**62)), first_dealer=g % 2)
        for s in seats:
            s.reset()
        run_game(game, seats)
    n = len(rows)
    out = {"kind": np.zeros(n, np.int8), "legal": np.full((n, SLOTS), -1, np.int8),
           "values": np.full((n, SLOTS), np.nan), "card": np.zeros(n, np.int8),
           **{k: np.zeros((n, *shape), np.float32) for k, shape in _inputs(models).items()}}
    for i, (kind, legal, inputs, values, card) in enumerate(rows):
        k = len(legal)
        out["kind"][i] = kind
        out["legal"][i, :k] = legal
        out["values"][i, :k] = values
        out["card"][i] = card
        if models == "own":
            out["obs"][i] = inputs
        else:
            out["prior"][i, :k], out["features"][i, :k] = inputs
    return out


def _inputs(models: str) -> dict[str, tuple[int, ...]]:
    """The arrays of a chunk that the network reads, with their shapes a row."""
    if models == "own":
        from cribenv.observation import OBS_SIZE

        return {"obs": (OBS_SIZE,)}
    from agents.features import NUM_FEATURES

    return {"prior": (SLOTS,), "features": (SLOTS, NUM_FEATURES)}


def _play_job(args: tuple[str, int, int, int, str, str]) -> str:
    base, seed, games, playouts, models, path = args
    _write_chunk(path, seed, play_chunk(base, seed, games, playouts, models))
    return path


def _write_chunk(path: str, seed: int, data: dict[str, np.ndarray]) -> None:
    # the chunk's seed goes with it: a chunk of another round or run is told apart on resume
    write_with(path, lambda tmp: np.savez_compressed(tmp, seed=np.int64(seed), **data))


def policy_here(data: bytes) -> str:
    """The path of a copy of a policy file (its bytes ``data``) on this machine, written once
    (named by its SHA-256 in the temp folder): a Ray worker's run folder may be elsewhere."""
    import hashlib
    import tempfile

    from cribenv.files import atomic_path

    path = (Path(tempfile.gettempdir()) / "cribenv-ray-policies"
            / f"{hashlib.sha256(data).hexdigest()}.safetensors")
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
    return str(path)


def _play_remote(base: bytes, seed: int, games: int, playouts: int, models: str
                 ) -> dict[str, np.ndarray]:
    """:func:`play_chunk` on a Ray worker, the base policy given as its file's bytes."""
    return play_chunk(policy_here(base), seed, games, playouts, models)


def read_chunk(path: Path, seed: int | None = None, models: str = "heuristic",
               fix: str = "delete it to play its games again") -> dict[str, np.ndarray]:
    """The rows of a chunk file (:func:`play_chunk`'s arrays for ``models``), checked: a
    ValueError names a file that is damaged, not a chunk (of ``models``), or (``seed`` given)
    the chunk of another round or run, and says what to do (``fix``)."""
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} is a folder, not a chunk of games; {fix}")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(f"{path} is damaged or not a chunk of games ({exc}); {fix}") from None
    n = len(data.get("kind", ()))
    shapes = {"kind": (n,), "legal": (n, SLOTS), "values": (n, SLOTS), "card": (n,),
              **{k: (n, *shape) for k, shape in _inputs(models).items()}}
    if (set(data) - {"seed"} != set(shapes) or n == 0
            or any(data[k].shape != shape for k, shape in shapes.items())
            or any(not np.issubdtype(data[k].dtype, np.integer) for k in ("kind", "legal", "card"))
            or not np.isin(data["kind"], (PLAY, DISCARD)).all()
            or not ((data["legal"] >= -1) & (data["legal"] <= 51)).all()
            or not (data["legal"] == data["card"][:, None]).any(1).all()):
        found = ", ".join(f"{k} {v.shape}" for k, v in data.items())
        raise ValueError(f"{path} is not a chunk of games of this version (arrays: "
                         f"{found or 'none'}); {fix}")
    if seed is not None and "seed" in data and int(data.pop("seed")) != seed:
        raise ValueError(f"{path} is a chunk of another round or run (its seed is not this "
                         f"chunk's); {fix}")
    data.pop("seed", None)
    return data


def play_round(folder: Path, base: str, settings: Any, round_no: int,
               workers: int, progress: bool = True, on_ray: bool = False
               ) -> dict[str, np.ndarray]:
    """Play (or read back) the round's games (``settings``: a run's
    :class:`train.expert_iteration.IterationSettings`) in ``workers`` processes, or
    (``on_ray``) on the Ray cluster this process has joined; every chunk already on disk is
    kept. A chunk's games depend on its seed alone, so its file is the same either way."""
    from tqdm import tqdm

    games_dir = folder / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for c, start in enumerate(range(0, settings.games, CHUNK_GAMES)):
        path = games_dir / f"chunk-{c:04d}.npz"
        if not path.is_file():
            jobs.append((base, chunk_seed(settings.seed, round_no, c),
                         min(CHUNK_GAMES, settings.games - start), settings.playouts,
                         settings.models, str(path)))
    for tmp in games_dir.glob(".chunk-*.tmp*.npz"):   # half-written by a killed worker
        tmp.unlink(missing_ok=True)
    done = settings.games - sum(j[2] for j in jobs)
    with tqdm(total=settings.games, initial=done, unit="game", disable=not progress,
              desc=f"round {round_no}: search games") as bar:
        if on_ray:
            _play_on_ray(jobs, bar)
        elif workers > 1 and len(jobs) > 1:
            _play_in_pool(jobs, workers, bar)
        else:
            for j in jobs:
                _play_job(j)
                bar.update(j[2])
    parts = [read_chunk(games_dir / f"chunk-{c:04d}.npz",
                        chunk_seed(settings.seed, round_no, c), settings.models)
             for c in range(-(-settings.games // CHUNK_GAMES))]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _play_in_pool(jobs: list[tuple], workers: int, bar) -> None:
    """Play ``jobs`` in ``workers`` processes. A worker exits once this process is gone (a
    ``kill -9`` included) rather than idle forever; on an error or Ctrl-C here the workers are
    ended at once (a chunk they were writing is left half-written, and cleared on resume)."""
    import multiprocessing

    from tournament.workers import init_worker

    games = {job[-1]: job[2] for job in jobs}
    with multiprocessing.Pool(workers, initializer=init_worker) as pool:  # ends them on exit
        for path in pool.imap_unordered(_play_job, jobs):
            bar.update(games[path])


def _play_on_ray(jobs: list[tuple], bar) -> None:
    """Play ``jobs`` as Ray tasks on the connected cluster (two a CPU in flight); the chunks
    come back here and are written by this process, so the run folder need not be on the
    workers' machines (nor the base policy: its bytes go with the tasks)."""
    import ray

    from tournament.ray_workers import cluster_cpus, map_tasks

    bases = {base: ray.put(Path(base).read_bytes()) for base in {j[0] for j in jobs}}
    by_seed = {j[1]: j for j in jobs}       # each chunk has its own seed

    def got(args: tuple, data: dict[str, np.ndarray]) -> None:
        _, seed, games, _, _, path = by_seed[args[1]]
        _write_chunk(path, seed, data)
        bar.update(games)

    map_tasks(_play_remote, ((bases[j[0]], *j[1:5]) for j in jobs), got,
              in_flight=2 * cluster_cpus())

