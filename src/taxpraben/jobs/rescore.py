"""What ``score`` and ``merge`` share: a job that scores generations made before.

Its start (:func:`open_scoring_job`: the registry, and the gates and trackers it names checked
before anything is read; then :func:`scoring_of`: the scoring settings, the scorers ready,
the judge asked) and its end (:func:`score_and_log`: scored into the output directory with
the judge as second reader, logged to the trackers; the caller applies the gates once the
directory is released) and its prices (:func:`priced`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.config import job_groups
from taxpraben.jobs.common import (
    InputsT,
    ScoringJob,
    costing,
    ready_scorers,
    score_and_report,
    scoring_settings,
    task_registry,
)
from taxpraben.jobs.gates import refuse_unknown_gate_tasks
from taxpraben.jobs.judge import as_second_reader, scoring_judge
from taxpraben.jobs.trackers import log_to_trackers, require_trackers

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.costs.ledger import CostOf
    from taxpraben.data.loader import LoadedData
    from taxpraben.jobs.judge import Judge
    from taxpraben.results.json_value import JSONObject
    from taxpraben.results.predictions import Prediction
    from taxpraben.scoring import ScoredResults, ScoringSettings
    from taxpraben.tasks import Registry


@dataclass(frozen=True)
class Opened:
    """A scoring job once its options are checked: when it started and its task registry."""

    started: str
    registry: Registry


@dataclass(frozen=True)
class Scoring:
    """How a scoring job scores: its settings (scorers ready) and its judge, if any."""

    settings: ScoringSettings
    judge: Judge | None


def open_scoring_job(job: ScoringJob[InputsT]) -> Opened:
    """The start of ``score`` and ``merge``, before any file is read: the registry, and the
    gates and trackers the job names refused now (JobError, exit 2) when they cannot work."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    registry = task_registry(job.data.task_dir)
    refuse_unknown_gate_tasks(job.gates, registry)
    require_trackers(job.trackers)
    return Opened(started, registry)


def scoring_of(job: ScoringJob[InputsT], registry: Registry, *, seed: int, runs: int | None,
               console: Console) -> Scoring:  # fmt: skip
    """The scoring settings (the scorers made ready) and the judge (its endpoint asked now)."""
    settings = scoring_settings(job.scoring, seed=seed, runs=runs)
    ready_scorers(job.scoring, settings, console)
    judge = scoring_judge(job.judge, job.pricing, registry, profile=settings.profile, seed=seed, console=console)
    return Scoring(settings, judge)


def priced(job: ScoringJob[InputsT], meta: JSONObject, console: Console) -> CostOf | None:
    """The prices of the ledgers (:func:`~taxpraben.jobs.common.costing`) for the one model
    ``meta`` names (none when the predictions come from several), written into ``meta``."""
    model = meta.get("model")
    cost_of, pricing = costing(job.pricing, model if isinstance(model, str) else None, console)
    if pricing is not None:
        meta["pricing"] = pricing
    return cost_of


def score_and_log(job: ScoringJob[InputsT], command: str, scoring: Scoring, opened: Opened, loaded: LoadedData,
                  predictions: list[Prediction], out: Path, meta: JSONObject, console: Console,
                  cost_of: CostOf | None) -> ScoredResults:  # fmt: skip
    """Score ``predictions`` into ``out`` (judged by the job's judge) and log the result to
    the trackers; the gates are the caller's, once the output directory is released."""
    scored = score_and_report(loaded, predictions, opened.registry, out, scoring.settings, meta, console,
                              cost_of=cost_of, second_reader=as_second_reader(scoring.judge))  # fmt: skip
    log_to_trackers(job.trackers, command, job_groups(job), out, scored.results, console)  # before the gates
    return scored
