"""Expert iteration: the search agent's choices distilled into its base network, round by round.

Each round (as in AlphaZero's and Anthony et al.'s expert iteration):

1. **Play**: games of ``search:ppo:BASE`` against itself (:mod:`agents.search`), two seats with
   their own seeds. At every play decision the search values each legal card by paired
   playouts (the chance to win); those values are the decision's target. The discards (which
   the search leaves to its base) are recorded too, to hold the network's throws where they
   are.
2. **Fit**: the base's card network (:class:`train.networks.CardNetwork`, loaded from
   its policy file) is fitted by cross-entropy to the search-improved policy
   ``softmax(base logits + values / temperature)`` over the legal cards of each play decision
   (the base's distribution reweighted by ``exp(value / temperature)``: a step of policy
   improvement that stays close to the base, as in MPO), and to the base's own card
   distribution on the discards (weight ``anchor``): the network moves toward the search's
   play and keeps its throws. (Fitting ``softmax(values / temperature)`` alone, the search's
   choice without the base, made the network weaker: ``results/expert-iteration``.)
3. **Measure**: the fitted network alone (no search) against the expert and against the
   round's base, on duplicate deals (:func:`train.evaluation.evaluate`).

The next round's base is this round's network. Everything is written under the run folder
(``round-K/games/chunk-NNNN.npz``, ``round-K/policy.safetensors``, ``round-K/eval.json``);
a run stopped at any point resumes where it stopped with the same results, since each chunk of
games has its own seed::

    cribenv expert-iteration --run-dir runs/exit --rounds 2 --games 2000

A run holds its folder (an ``flock`` on it, let go when the process ends, a ``kill -9``
included): a second run on the same folder is refused. Before it writes anything, a run checks
every file it will read back (``settings.json``, each round's chunks, ``fit.json``,
``eval.json`` and policy): a damaged or foreign one is named, and nothing is changed. The pool's
workers exit once the run's process is gone.

**Replay** (``--replay FOLDER``, repeatable): the games of earlier rounds (another run's
``round-K/games``) are fitted with each round's own, as AlphaZero fits on a window of recent
games rather than the last round's alone; the chunks are checked before anything is written and
a resume must replay the same files (their hash is in ``settings.json``).

**On a Ray cluster** (``--ray ADDRESS``): the chunks of search games and the evaluation's
games are Ray tasks (:func:`tournament.ray_workers.map_tasks`), the policies' bytes sent with
them and the chunks written here, so the files are those of a run in local processes and the
address may change on resume (it is not a setting of the run)::

    cribenv expert-iteration --run-dir runs/exit --ray HEAD_IP:6379

The search's leaf values come from the win-probability table (:mod:`agents.winprob`), not from
a critic, so no critic is fitted.

**From the rules alone** (``--models own``): the base is a network that reads the observation
(an ``mlp`` or ``keeps`` policy file, ``scratch`` for the one trained from the rules), the
search is ``search:ppo:BASE?models=own`` (the network's own playouts, its own model of the other
seat's throw, the chance to win from the table solved from its own hands), the rows hold the
observations (no bot's feature is computed) and the network fitted is the file's own
(:class:`train.policy_actor.PolicyActor`), throw head included: AlphaZero's loop with the
rules as the only simulator::

    cribenv expert-iteration --models own --base scratch --run-dir runs/exit-own --games 3000
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

# what the search and the fit read besides the rules: ``heuristic`` (the expert-prior card
# network on its features) or ``own`` (the base network's own models, on the observations)
from agents.search import MAX_PLAYOUTS, MODELS
from cribenv.checks import int_arg
from cribenv.files import write_text
from train.flags import add_flag, settings_from_flags
from train.iteration_games import CHUNK_GAMES, PLAY, chunk_seed, play_round, read_chunk
from train.run_lock import holding
from train.settings import Settings, described, setting

#: What ``fit.json`` holds (numbers) and each opponent of ``eval.json`` (numbers; ``games`` a
#: whole number).
FIT_KEYS = ("decisions", "play_decisions", "agreement_before", "held_out_loss_before",
            "held_out_loss", "agreement")
EVAL_KEYS = ("win_rate", "win_lo", "win_hi", "net_points", "games")


@dataclass
class IterationSettings(Settings):
    """What defines an expert-iteration run (``settings.json`` in the run folder): each setting
    declared once, with its default, range (:data:`train.settings.RANGES`) and help, from
    which ``cribenv expert-iteration --help`` is made."""

    base: str = setting(
        "shipped",
        "the first round's policy file ('shipped'; an expert-prior one, or with --models own an "
        "mlp or keeps one such as 'scratch')")
    rounds: int = setting(2, "rounds to run")
    games: int = setting(2000, "search games a round")
    playouts: int = setting(600, "the search's playouts a decision")
    temperature: float = setting(
        0.005,
        "of the search's values in the targets, in chances to win")
    anchor: float = setting(1.0, "weight of the discards, held at the base's throws")
    epochs: int = setting(10, "passes over the round's decisions")
    learning_rate: float = setting(3e-4)   # the help of every trainer's (train.settings)
    batch_size: int = setting(1024, "decisions a step of the fit")
    eval_games: int = setting(
        2000,
        "duplicate games of each round's network against expert and against its base (0: "
        "none)")
    seed: int = setting(0)
    models: str = setting(
        "heuristic",
        "what the search and the fit read besides the rules: 'heuristic' (the expert-prior "
        "network on its features, the heuristic playouts) or 'own' (the base network's own "
        "playouts and throw model, fitted on the observation: from the rules alone)", MODELS)
    replay: list[str] = setting(
        [],
        "a folder of earlier rounds' games (RUN/round-K/games), fitted with each round's own; "
        "repeat the flag for more")

    KIND = "expert-iteration"
    #: settings that may change when a run resumes (the rest define its results)
    RESUMABLE = ("rounds", "eval_games")

    def __post_init__(self) -> None:
        if isinstance(self.replay, tuple):   # a tuple of folders, as before: a list now
            self.replay = list(self.replay)
        super().__post_init__()
        if self.playouts > MAX_PLAYOUTS:   # one decision's memory (agents.search)
            raise ValueError(f"playouts must be <= {MAX_PLAYOUTS:,} (one decision's memory), "
                             f"got {self.playouts:,}")


# ---------------------------------------------------------------------------- fit


def _network(path: str, models: str = "heuristic"):
    """The network fitted, read from the policy file ``path``: with ``models`` ``heuristic``
    the card network of an expert-prior file (:class:`train.networks.CardNetwork`), with
    ``own`` an ``mlp`` or ``keeps`` network (:class:`train.policy_actor.PolicyActor`)."""
    from agents.ppo import policy_path

    if models == "own":
        from train.policy_actor import PolicyActor

        return PolicyActor.from_policy_file(policy_path(path))
    from train.networks import CardNetwork

    return CardNetwork.from_policy_file(policy_path(path), orthogonal=False)


def _scorer(nets, data: dict[str, np.ndarray], models: str):
    """``rows -> (len(rows), SLOTS)`` logits of the legal cards of those decisions (-inf on
    the padding), from what ``nets`` reads in ``data``."""
    import torch

    legal = torch.as_tensor(data["legal"].astype(np.int64))
    if models == "own":
        obs, slots = torch.as_tensor(data["obs"]), legal.clamp(min=0)

        def score(rows):
            z = nets.logits(obs[rows]).gather(1, slots[rows])
            return z.masked_fill(legal[rows] < 0, -torch.inf)
        return score
    prior, feats = torch.as_tensor(data["prior"]), torch.as_tensor(data["features"])

    def score_cards(rows):
        return nets(prior[rows], feats[rows]).masked_fill(legal[rows] < 0, -torch.inf)
    return score_cards


def targets(data: dict[str, np.ndarray], base_logits: np.ndarray, temperature: float
            ) -> np.ndarray:
    """The distribution over each decision's legal cards the network is fitted to: on play
    rows ``softmax(base_logits + values / temperature)``, on discard rows the base's own
    distribution.

    >>> data = {"kind": np.array([1, 0]), "legal": np.array([[3, 7, -1], [1, 2, 5]]),
    ...         "values": np.array([[0.50, 0.52, np.nan], [np.nan] * 3])}
    >>> t = targets(data, np.log(np.array([[0.5, 0.5, 1.0], [0.5, 0.25, 0.25]])), 0.01)
    >>> np.round(t, 3).tolist()
    [[0.119, 0.881, 0.0], [0.5, 0.25, 0.25]]
    """
    legal = data["legal"] >= 0
    play = (data["kind"] == PLAY)[:, None]
    z = np.where(play, base_logits + np.nan_to_num(data["values"]) / temperature, base_logits)
    z = np.where(legal, z, -np.inf)
    z = z - z.max(1, keepdims=True)
    p = np.where(legal, np.exp(z), 0.0)
    return p / p.sum(1, keepdims=True)


def fit(data: dict[str, np.ndarray], base: str, settings: IterationSettings,
        log=print) -> tuple[Any, dict[str, float]]:
    """Fit the base's card network to the round's targets (see the module docstring); 10% of
    the decisions are held out to report how often the network's card is the search's."""
    import torch

    torch.manual_seed(settings.seed)
    nets = _network(base, settings.models)
    score = _scorer(nets, data, settings.models)
    legal = torch.as_tensor(data["legal"].astype(np.int64))
    with torch.no_grad():
        base_logits = torch.cat([score(torch.arange(s, min(s + 8192, len(legal))))
                                 for s in range(0, len(legal), 8192)]).double().numpy()
    target = torch.as_tensor(targets(data, base_logits, settings.temperature),
                             dtype=torch.float32)
    weight = torch.as_tensor(np.where(data["kind"] == PLAY, 1.0, settings.anchor),
                             dtype=torch.float32)
    n = len(target)
    rng = np.random.default_rng(settings.seed)
    order = rng.permutation(n)
    held, train_rows = order[: n // 10], order[n // 10:]
    opt = torch.optim.Adam(nets.parameters(), lr=settings.learning_rate)

    def loss_on(rows) -> torch.Tensor:
        logp = torch.log_softmax(score(rows), 1)
        ce = -(target[rows] * torch.where(legal[rows] >= 0, logp, 0.0)).sum(1)
        return (weight[rows] * ce).sum() / weight[rows].sum().clamp(min=1e-9)

    def agreement(rows) -> float:
        """Share of held-out play decisions where the network's card is the search's best."""
        rows = rows[data["kind"][rows] == PLAY]
        with torch.no_grad():
            mine = score(torch.as_tensor(rows)).argmax(1).numpy()
        best = np.nan_to_num(data["values"][rows], nan=-1.0).argmax(1)
        return float((mine == best).mean()) if len(rows) else float("nan")

    stats = {"decisions": float(n), "play_decisions": float((data["kind"] == PLAY).sum()),
             "agreement_before": agreement(held)}
    with torch.no_grad():
        stats["held_out_loss_before"] = float(loss_on(torch.as_tensor(held)))
    for epoch in range(settings.epochs):
        rng.shuffle(train_rows)
        for s in range(0, len(train_rows), settings.batch_size):
            rows = torch.as_tensor(train_rows[s:s + settings.batch_size])
            opt.zero_grad()
            loss = loss_on(rows)
            loss.backward()
            opt.step()
        with torch.no_grad():
            held_loss = float(loss_on(torch.as_tensor(held)))
        log(f"  epoch {epoch + 1}: held-out loss {held_loss:.4f}")
    stats["held_out_loss"] = held_loss
    stats["agreement"] = agreement(held)
    return nets, stats


# ---------------------------------------------------------------------------- the run


def _evaluate(policy: Path, base: str, games: int, on_ray: bool = False) -> dict[str, Any]:
    """``eval.json``: ``policy`` alone against expert and against ``base``, on duplicate deals
    (played on the joined Ray cluster with ``on_ray``: the same games)."""
    if on_ray:
        return _evaluate_on_ray(policy, base, games)
    from agents import make_agent
    from train.evaluation import evaluate

    agent = make_agent(f"ppo:{policy}", seed=0)
    return {name: _eval_entry(evaluate(agent, spec, games, seed=0, target=121))
            for name, spec in (("expert", "expert"), ("base", f"ppo:{base}"))}


def _eval_entry(res: dict[str, Any]) -> dict[str, Any]:
    return {k: int(res[k]) if k == "games" else round(float(res[k]), 4) for k in EVAL_KEYS}


def _evaluate_on_ray(policy: Path, base: str, games: int) -> dict[str, Any]:
    """:func:`train.evaluation.evaluate`'s games for :func:`_evaluate`, played as Ray tasks
    of 20 games and put back in the schedule's order: the same rows, so the same figures."""
    import ray

    from tournament import ROW_FIELDS, AgentSpec, pair_stats, schedule
    from train.evaluation import AGENT_LABEL

    me = AgentSpec(AGENT_LABEL, AGENT_LABEL)
    mine, theirs = ray.put(policy.read_bytes()), ray.put(Path(base).read_bytes())
    out = {}
    for name, spec in (("expert", "expert"), ("base", f"ppo:{base}")):
        deals = games // 2
        tasks = schedule([me, AgentSpec(spec, spec)], 2 * deals, 0) if deals else []
        rows = _rows_on_ray(tasks, mine, theirs if name == "base" else None)
        stats = pair_stats(AGENT_LABEL, spec, [tuple(r[f] for f in ROW_FIELDS) for r in rows])
        out[name] = _eval_entry({"win_rate": stats.win_rate_a.value,
                                 "win_lo": stats.win_rate_a.low, "win_hi": stats.win_rate_a.high,
                                 "net_points": stats.net_points_a.value, "games": stats.games})
    return out


def _rows_on_ray(tasks: list, mine: Any, base: Any) -> list[dict[str, Any]]:
    """The rows of ``tasks`` played as Ray tasks of 20 games, in the order of ``tasks``."""
    from tournament.ray_workers import cluster_cpus, map_tasks

    parts: dict[int, list[dict[str, Any]]] = {}
    map_tasks(_evaluation_games, ((start, tasks[start:start + CHUNK_GAMES], mine, base)
                                  for start in range(0, len(tasks), CHUNK_GAMES)),
              lambda args, rows: parts.__setitem__(args[0], rows), 2 * cluster_cpus())
    return [r for start in sorted(parts) for r in parts[start]]


def _evaluation_games(_start: int, tasks: list, mine: bytes, base: bytes | None
                      ) -> list[dict[str, Any]]:
    """The rows of ``tasks`` of :func:`_evaluate_on_ray` (on a Ray worker): the network under
    test from its file's bytes ``mine``, the opponent its spec or the base's bytes ``base``."""
    from agents import make_agent
    from cribenv.game import Rules
    from tournament import play_task
    from train.evaluation import AGENT_LABEL
    from train.iteration_games import policy_here

    agent = make_agent(f"ppo:{policy_here(mine)}", seed=0)
    opponent = None if base is None else f"ppo:{policy_here(base)}"

    def make(entrant, seed: int):
        if entrant.label == AGENT_LABEL:
            return agent
        return make_agent(opponent or entrant.spec, seed=seed)

    return [play_task(t, Rules(num_players=2, target=121), make) for t in tasks]


def _file_hash(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_json(path: Path, what: str, fix: str) -> Any:
    """The JSON in ``path``; a ValueError naming the file when it cannot be read as JSON."""
    if not path.is_file():
        raise ValueError(f"{path} is a folder, not {what}; {fix}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:    # JSON and UTF-8 errors are ValueErrors
        raise ValueError(f"{path} is damaged: not {what} ({exc}); {fix}") from None


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _check_fit(path: Path) -> dict[str, float]:
    """A round's ``fit.json``, checked (ValueError naming it)."""
    fix = "delete it to fit the round again"
    stats = _read_json(path, "a round's fit statistics", fix)
    if not (isinstance(stats, dict) and all(_is_number(stats.get(k)) for k in FIT_KEYS)):
        raise ValueError(f"{path} is damaged: not a round's fit statistics (a JSON object of "
                         f"{', '.join(FIT_KEYS)}); {fix}")
    return stats


def _check_eval(path: Path) -> dict[str, dict[str, Any]]:
    """A round's ``eval.json``, checked (ValueError naming it)."""
    fix = "delete it to measure the round again"
    res = _read_json(path, "a round's evaluation", fix)
    if not (isinstance(res, dict) and set(res) == {"expert", "base"} and all(
            isinstance(r, dict) and all(_is_number(r.get(k)) for k in EVAL_KEYS)
            and type(r["games"]) is int for r in res.values())):
        raise ValueError(f"{path} is damaged: not a round's evaluation (a JSON object of "
                         f"'expert' and 'base', each with {', '.join(EVAL_KEYS)}); {fix}")
    return res


#: what to do about a bad chunk of a replay (another run's games: never to be deleted here)
REPLAY_FIX = "leave its folder out of --replay"


def replay_chunks(settings: IterationSettings) -> list[Path]:
    """The chunk files of the ``replay`` folders, in order, each checked (a ValueError names
    a folder that is missing or holds no chunk, or a chunk that is damaged or of other
    models)."""
    chunks, seen = [], set()
    for given in settings.replay:
        folder = Path(given)
        if not str(given).strip():
            raise ValueError(f"--replay {given!r} names no folder: give a round's games/ "
                             "folder")
        if folder.resolve() in seen:
            raise ValueError(f"--replay {given!r} is given twice: its games would count twice "
                             "in the fit")
        seen.add(folder.resolve())
        found = sorted(folder.glob("chunk-*.npz")) if folder.is_dir() else []
        if not found:
            raise ValueError(f"--replay {str(folder)!r} is not a folder of games (a round's "
                             "games/ folder, with chunk-NNNN.npz files)")
        for path in found:
            read_chunk(path, None, settings.models, REPLAY_FIX)
        chunks += found
    return chunks


def _replay_hash(chunks: list[Path]) -> str:
    import hashlib

    return hashlib.sha256("".join(_file_hash(p) for p in chunks).encode()).hexdigest()


def _record(settings: IterationSettings, base: Path, chunks: list[Path]) -> dict[str, Any]:
    return {**asdict(settings), "base_file": str(base.resolve()),
            "base_sha256": _file_hash(base), "replay_sha256": _replay_hash(chunks)}


def _check_settings(run_dir: Path, record: dict[str, Any], replay_checked: bool = True
                    ) -> dict[str, Any] | None:
    """A resume must not change what defines the results: ValueError naming the setting, a
    damaged ``settings.json`` or rounds without one; the saved settings (None for a new run).
    The first base is compared by its hash, not its path (the same file in another checkout
    resumes the run); the replay by its files' hash when they were checked
    (``replay_checked``), else by its folders."""
    path = run_dir / "settings.json"
    if not path.exists():
        rounds = sorted(p.name for p in run_dir.glob("round-*"))
        if rounds:   # its settings.json deleted: the settings they were made with are unknown
            raise ValueError(f"{run_dir} holds {', '.join(rounds)} but no settings.json, so "
                             "the settings they were made with are unknown: restore it, or "
                             "move the rounds aside or use another --run-dir")
        return None
    fix = "move it aside or use another --run-dir"
    saved = _read_json(path, "the settings of an expert-iteration run", fix)
    if isinstance(saved, dict):                 # runs made before the settings were
        saved.setdefault("models", "heuristic")
        saved.setdefault("replay", [])
        saved.setdefault("replay_sha256", _replay_hash([]))
    if not isinstance(saved, dict) or not set(record) <= set(saved):
        missing = sorted(set(record) - set(saved)) if isinstance(saved, dict) else []
        raise ValueError(f"{path} is damaged: not the settings of an expert-iteration run "
                         f"({'no ' + ', '.join(missing) if missing else 'not a JSON object'}); "
                         f"{fix}")
    if replay_checked and saved["replay_sha256"] != record["replay_sha256"]:
        raise ValueError(f"{path} was made with other --replay games ({saved['replay']}) than "
                         f"these ({record['replay']}): use another --run-dir or the same games")
    if not replay_checked and ([Path(f).resolve() for f in record["replay"]]
                               != [Path(f).resolve() for f in saved["replay"]]):
        raise ValueError(f"--replay {list(record['replay'])} is not the replay the run was made "
                         f"with ({saved['replay']}): give those folders, or use another "
                         "--run-dir")
    for key, value in record.items():
        if key not in (*IterationSettings.RESUMABLE, "base", "base_file", "replay",
                       "replay_sha256") and saved[key] != value:
            raise ValueError(f"{path} was made with {key}={saved[key]!r}, not "
                             f"{value!r}: use another --run-dir or the same settings")
    return saved


def _check_rounds(run_dir: Path, settings: IterationSettings, base_sha256: str) -> None:
    """Every file of the run's rounds that the run will read back, checked before anything is
    written: a ValueError names the first one damaged, foreign or of the wrong kind."""
    from agents.ppo import load_policy

    for round_no in range(1, settings.rounds + 1):
        folder = run_dir / f"round-{round_no}"
        for path, kind in ((folder, "folder"), (folder / "games", "folder"),
                           (folder / "policy.safetensors", "file"), (folder / "fit.json", "file")):
            if path.exists() and (path.is_dir() != (kind == "folder")):
                raise ValueError(f"{path} is a {'file' if kind == 'folder' else 'folder'}, not "
                                 f"a {kind}; move it aside or use another --run-dir")
        policy, fit_path = folder / "policy.safetensors", folder / "fit.json"
        if policy.is_file() and fit_path.is_file():
            _check_fit(fit_path)
            fix = "delete it and fit.json beside it to fit the round again"
            try:
                config = load_policy(policy).config
            except ValueError as exc:
                raise ValueError(f"{exc}; {fix}") from None
            if base_sha256 and (config.get("expert_iteration_round") != round_no
                                or config.get("base_sha256") != base_sha256):
                raise ValueError(f"{policy} is not round {round_no} of this run (another base "
                                 f"or round); {fix}")
            base_sha256 = _file_hash(policy)
        else:
            base_sha256 = ""        # fitted again: the next round's base is not known yet
            for c in range(-(-settings.games // CHUNK_GAMES)):
                path = folder / "games" / f"chunk-{c:04d}.npz"
                if path.exists():
                    read_chunk(path, chunk_seed(settings.seed, round_no, c), settings.models)
        if (folder / "eval.json").exists():
            _check_eval(folder / "eval.json")


def _check_can_start(run_dir: Path, settings: IterationSettings
                     ) -> tuple[Path, list[Path] | None]:
    """Everything a run needs, checked before it writes anything: the settings, the packages,
    a base file of the network fitted (see ``models``), the replay's games and a run folder
    that can be made. Returns the base's file and the replay's chunk files (None: every round
    is fitted and the replay's games are gone, so they are not needed)."""
    import importlib

    from agents.ppo import policy_path

    for module in ("torch", "tqdm", "numba", "safetensors"):
        importlib.import_module(module)       # a missing extra: the CLI names it, exit 2
    base = policy_path(settings.base)
    _network(str(base), settings.models)      # a file of the network fitted, or PolicyFileError
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"--run-dir {str(run_dir)!r} is a file, not a folder")
    gone = not all(Path(f).is_dir() for f in settings.replay)
    return base, None if gone and _fitted(run_dir, settings) else replay_chunks(settings)


def _fitted(run_dir: Path, settings: IterationSettings) -> bool:
    """Whether every round of the run in ``run_dir`` is fitted already: a replay whose games
    are gone is then not needed (a finished run resumes for its evaluation)."""
    return (run_dir / "settings.json").is_file() and all(
        (run_dir / f"round-{r}" / name).is_file() for r in range(1, settings.rounds + 1)
        for name in ("policy.safetensors", "fit.json"))


def run_iteration(run_dir: str | Path, settings: IterationSettings, workers: int = 2,
                  progress: bool = True, log=print, ray_address: str | None = None
                  ) -> list[dict[str, Any]]:
    """Run (or resume) the rounds of ``settings`` in ``run_dir``; each round's summary.
    ``ray_address``: the search games and the evaluation are played on that Ray cluster
    (``workers`` unused); the files are those of a run here."""
    run_dir = Path(run_dir)
    first, replay = _check_can_start(run_dir, settings)
    connected = False
    if ray_address is not None:          # before anything is written: a bad address, exit 2
        from tournament.ray_workers import cluster_cpus, join_cluster

        connected = join_cluster(ray_address)
        log(f"playing on the Ray cluster at {ray_address} ({cluster_cpus()} CPUs)")
    try:
        return _run_in(run_dir, settings, first, replay, workers, progress, log,
                       ray_address is not None)
    finally:
        if connected:
            import ray

            ray.shutdown()


def _run_in(run_dir: Path, settings: IterationSettings, first: Path, replay: list[Path] | None,
            workers: int, progress: bool, log, on_ray: bool) -> list[dict[str, Any]]:
    """:func:`run_iteration` once its checks before any work are passed."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--run-dir {str(run_dir)!r} cannot be made: {exc.strerror}") from None
    with holding(run_dir, "expert-iteration run"):
        record = _record(settings, first, replay or [])
        saved = _check_settings(run_dir, record, replay_checked=replay is not None)
        if replay is None:              # every round fitted: the replay as it was recorded
            record["replay"], record["replay_sha256"] = saved["replay"], saved["replay_sha256"]
            log("every round is fitted: the --replay games, gone, are not needed")
        _check_rounds(run_dir, settings, record["base_sha256"])
        write_text(run_dir / "settings.json", json.dumps(record, indent=2) + "\n")
        return _run_rounds(run_dir, settings, str(first), replay or [], record["replay_sha256"],
                           workers, progress, log, on_ray)


def _read_replay(chunks: list[Path], sha256: str, models: str) -> list[dict[str, np.ndarray]]:
    """The replay's games as they were checked when the run began (a ValueError if its files
    changed since: the fit would not be the one ``settings.json`` records)."""
    folders = sorted({str(p.parent) for p in chunks})
    try:
        same = _replay_hash(chunks) == sha256
    except OSError:                       # a chunk deleted (or made unreadable) since
        same = False
    if not same:
        raise ValueError(f"the --replay games in {folders} changed since the run began: "
                         "resume it with them as they were, or use another --run-dir")
    return [read_chunk(p, None, models, REPLAY_FIX) for p in chunks]


def _run_rounds(run_dir: Path, settings: IterationSettings, base: str, replay: list[Path],
                replay_sha256: str, workers: int, progress: bool, log, on_ray: bool = False
                ) -> list[dict[str, Any]]:
    """The rounds of :func:`run_iteration`, in a checked run folder that this run holds, with
    the replay's chunk files checked at its start."""
    summaries = []
    for round_no in range(1, settings.rounds + 1):
        folder = run_dir / f"round-{round_no}"
        policy = folder / "policy.safetensors"
        fit_path = folder / "fit.json"
        started = time.perf_counter()
        if not (policy.is_file() and fit_path.is_file()):
            data = play_round(folder, base, settings, round_no, workers, progress, on_ray)
            log(f"round {round_no}: {len(data['kind']):,} decisions "
                f"({int((data['kind'] == PLAY).sum()):,} searched plays) from {base}")
            if settings.replay:
                parts = _read_replay(replay, replay_sha256, settings.models)
                data = {k: np.concatenate([*(p[k] for p in parts), v])
                        for k, v in data.items()}
                log(f"round {round_no}: fitted with {len(data['kind']):,} decisions, the "
                    f"replay's included")
            nets, stats = fit(data, base, settings, log=log)
            write_text(fit_path, json.dumps(stats, indent=2) + "\n")
            # the policy last: it marks the round's fit as done
            # (a network of the observation keeps its count of self-play decisions)
            nets.save(policy, {**({"steps": 0} if settings.models == "heuristic" else {}),
                               "expert_iteration_round": round_no,
                               "base": Path(base).name, "base_sha256": _file_hash(Path(base)),
                               **{k: round(v, 4) for k, v in stats.items()}})
        summary = {"round": round_no, "base": base, "policy": str(policy),
                   **_check_fit(fit_path)}
        eval_path = folder / "eval.json"
        if settings.eval_games and (not eval_path.is_file() or any(
                r["games"] != settings.eval_games for r in _check_eval(eval_path).values())):
            write_text(eval_path, json.dumps(_evaluate(policy, base, settings.eval_games,
                                                       on_ray), indent=2) + "\n")
        if eval_path.is_file():
            summary["eval"] = _check_eval(eval_path)
            for name, res in summary["eval"].items():
                log(f"round {round_no}: against {name}: {100 * res['win_rate']:.1f}% "
                    f"[{100 * res['win_lo']:.1f}, {100 * res['win_hi']:.1f}] of "
                    f"{res['games']:,} games, {res['net_points']:+.3f} net a game")
        log(f"round {round_no}: {policy} ({time.perf_counter() - started:.0f} s)")
        summaries.append(summary)
        base = str(policy)
    return summaries


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Expert iteration: play games with the search agent on a base policy, "
                          "fit the base's network to the search's choices, and repeat "
                          "with the fitted network as the next base. Resumable.")
    parser.add_argument("--run-dir", required=True, help="folder of the run (resumed if it "
                                                         "exists)")
    for s in described(IterationSettings):   # a flag a setting, its help where it is declared
        if s.name == "replay":   # one folder a flag, repeated
            parser.add_argument("--replay", action="append", default=None, metavar="FOLDER",
                                help=f"{s.help} (none)")
        else:
            add_flag(parser, s)
    parser.add_argument("--workers", type=int_arg(1), default=2, help="processes (2)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="play the search games and the evaluation on the Ray cluster at "
                             "ADDRESS (e.g. HEAD_IP:6379, or 'auto': the one started on this "
                             "machine) instead of --workers processes; the same files; may "
                             "change on resume; needs the 'ray' extra")


def settings_of(args: argparse.Namespace) -> IterationSettings:
    """The settings the flags ``args`` give (the defaults for those not given)."""
    return settings_from_flags(IterationSettings, args)


def run(args: argparse.Namespace) -> int:
    run_iteration(args.run_dir, settings_of(args), workers=args.workers, ray_address=args.ray)
    return 0
