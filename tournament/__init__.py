"""Round-robin tournaments between agents with duplicate deals, confidence intervals and ratings.

    cribenv tournament --agents random greedy expert --games 200 --workers 4 \\
        --out results/

API: :func:`run_tournament` plays (or resumes) a tournament and returns a
:class:`TournamentReport`; :func:`load_report` recomputes the report of a results database.

One module per job:

=================  ==========================================================================
``schedule``       entrants (``LABEL=SPEC``), the duplicate-deal schedule, deal and agent seeds
``games``          one game of the schedule played (:func:`play_task`), the row it stores
``workers``        playing the schedule in chunks, in this process or a process pool
``storage``        the SQLite results database: kill-safe inserts, configuration, resume
``statistics``     interval estimates over duplicate units (the project's Wilson interval),
                   a pair's results (:func:`pair_stats`)
``ratings``        Bradley-Terry ratings on the Elo scale with bootstrap intervals
``report``         :class:`TournamentReport`: text, JSON, CSV; :func:`load_report`
``plots``          the report's PNG
``runner``         :func:`run_tournament`
``command``        ``configure(parser)`` / ``run(args)`` for ``cribenv tournament``
=================  ==========================================================================

Each module's docstring gives its method (the design of the duplicate deals, the intervals, the
ratings and the storage).
"""

from tournament.command import configure, run
from tournament.games import play_task
from tournament.ratings import ELO_SCALE, MEAN_RATING, RATING_ALPHA, Rating, fit_ratings
from tournament.report import TournamentReport, compute_report, load_report
from tournament.runner import run_tournament
from tournament.schedule import (
    AgentSpec,
    GameTask,
    agent_seed,
    deal_seed,
    parse_spec,
    schedule,
)
from tournament.statistics import (
    BUCKETS,
    ROW_FIELDS,
    Estimate,
    PairStats,
    pair_stats,
    proportion_estimate,
    ratio_estimate,
    wilson_interval,
)
from tournament.storage import COLUMNS, FORMAT, SCHEMA

__all__ = [
    "AgentSpec", "Estimate", "PairStats", "Rating", "TournamentReport", "GameTask",
    "run_tournament", "load_report", "schedule", "deal_seed", "agent_seed", "parse_spec",
    "wilson_interval", "proportion_estimate", "ratio_estimate", "fit_ratings",
    "configure", "run",
    "play_task", "pair_stats", "compute_report", "ROW_FIELDS", "COLUMNS", "SCHEMA", "FORMAT",
    "BUCKETS", "RATING_ALPHA", "ELO_SCALE", "MEAN_RATING",
]
