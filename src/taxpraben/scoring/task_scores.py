"""One task scored (:func:`score_task`): its items finished, its samples.jsonl lines, its
figures run by run and over runs, its ledger.

The pipeline scores each task with it, in data order (the bootstrap's generator is drawn
from in that order); ``run`` scores with it the tasks whose generation is complete while the
later ones still generate (:mod:`taxpraben.scoring.early`), so that the same function makes
the same figures either way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from taxpraben.aggregate import FRACTION, percentile_interval, run_stat
from taxpraben.costs.ledger import CostOf, task_ledger
from taxpraben.kinds import kind_of
from taxpraben.results import RunFigures, Sample, TaskResult
from taxpraben.scoring.items import SemanticValues, finalize_item
from taxpraben.scoring.settings import ScoringSettings
from taxpraben.tasks import TaskSpec

if TYPE_CHECKING:
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject


@dataclass
class TaskScores:
    """A task scored: ``rows`` its samples run by run (finished: :class:`Sample`), ``entry``
    results.json's ``tasks.NAME`` (typed), ``replicates`` the bootstrap's replicates of its
    score (None without a bootstrap), ``lines`` its samples in samples.jsonl's order (until
    written), and how many items are errors and format failures."""

    task: str
    rows: list[list[Sample]]
    entry: TaskResult
    replicates: np.ndarray | None
    lines: list[Sample] = field(default_factory=list)
    errors: int = 0
    format_failures: int = 0
    #: What a run made of the finished items ahead for its item sink (the report's sample
    #: browser: ``report.samples.PreparedTask``, opaque to scoring, which only carries it back
    #: to the job that made it); its items are then not handed to the sink.
    prepared: object = None


def score_task(
    spec: TaskSpec,
    records: Sequence[Record],
    rows: list[list[Sample]],
    run_ids: list[int],
    values: SemanticValues,
    unavailable: dict[str, str],
    rng: np.random.Generator | None,
    n_boot: int,
    cost_of: CostOf | None = None,
    shared_generation: bool = False,
    judge: JSONObject | None = None,
) -> TaskScores:
    """Finish the items of one task (``rows``: run by run, in the order of its ``records``) with the semantic
    ``values``, and make its figures; ``rng`` is drawn from once (its bootstrap's indices);
    ``judge``: what the second reader did on the task (results.json's ``tasks.NAME.judge``)."""
    errors = failures = 0
    for k, row in enumerate(rows):
        # The finished samples take their places. The query goes on the first run's sample
        # only: the report shows it per item, and repeating it for every run would multiply
        # samples.jsonl by the prompt length.
        row[:] = [_finished(spec, it, values, rec.query if k == 0 else None)
                  for it, rec in zip(row, records, strict=True)]  # fmt: skip
        for it in row:
            errors += it.status == "error"
            failures += it.status == "format_failure"
    entry, reps = _task_entry(spec, rows, run_ids, unavailable, rng, n_boot)
    entry["ledger"] = task_ledger(rows, shared_generation=shared_generation, cost_of=cost_of)
    if judge is not None:
        entry["judge"] = judge
    lines = [sample for row in rows for sample in row]
    return TaskScores(spec.name, rows, TaskResult.model_validate(entry), reps, lines, errors, failures)


def _finished(spec: TaskSpec, item: Sample, values: SemanticValues, query: str | None) -> Sample:
    """``item`` finished, saying who read it (rule | judge | none, on every samples line), with
    the prompt ``query`` (its record's, on the first run only): a new sample."""
    done = finalize_item(spec, item, values)
    return done.evolve(extracted_by=done.reader, query=query)


def sample_text(samples: Sequence[Sample]) -> str:
    """samples.jsonl's lines of ``samples`` (:class:`~taxpraben.results.Sample`), one a line."""
    return "".join([json.dumps(sample.to_json(), ensure_ascii=False) + "\n" for sample in samples])


def new_generator(settings: ScoringSettings) -> np.random.Generator | None:
    """The bootstrap's generator of a scoring job (None without a bootstrap)."""
    return np.random.default_rng(settings.seed) if settings.bootstrap > 0 else None


#: Where a scored task's lines go: handed the samples.jsonl text of each task, in task order.
SampleSink = Callable[[str], object]


def _rate(items: Sequence[Sample], status: str) -> float:
    return sum(it.status == status for it in items) / len(items)


def _run_figures(spec: TaskSpec, run: int, items: Sequence[Sample]) -> RunFigures:
    """Figures of one task in one run (``items`` in record order), as its kind computes them."""
    metrics, score = kind_of(spec).run_metrics(spec, items)
    counts = {s: sum(it.status == s for it in items) for s in ("ok", "format_failure", "error")}
    return RunFigures.model_validate({
        "run": run,
        "metrics": metrics,
        "score": score,
        "format_failure_rate": _rate(items, "format_failure"),
        "error_rate": _rate(items, "error"),
        "counts": counts,
    })  # fmt: skip


def _bootstrap(
    spec: TaskSpec, items_by_run: list[list[Sample]], rng: np.random.Generator | None, n_boot: int
) -> tuple[dict[str, list[float] | None], np.ndarray | None]:
    """The kind's bootstrap intervals of each metric and the replicates of the task score
    (none without a bootstrap); ``rng`` is drawn from once."""
    n = len(items_by_run[0]) if items_by_run else 0
    idx = rng.integers(0, n, size=(n_boot, n)) if rng is not None and n > 0 and n_boot > 0 else None
    return ({}, None) if idx is None else kind_of(spec).bootstrap(spec, items_by_run, idx)


def _figures(
    spec: TaskSpec, per_run: list[RunFigures], boot: dict[str, list[float] | None], score_reps: np.ndarray | None
) -> JSONObject:
    """The task's figures over runs (typed :class:`Stat`), each clipped to the range its
    metric declares (:attr:`taxpraben.kinds.base.Metric.bounds`)."""
    bounds = {m.key: m.bounds for m in kind_of(spec).metrics}
    metric_keys = list(per_run[0].metrics or {}) if per_run else []
    score_ci = percentile_interval(score_reps) if score_reps is not None else None
    return {
        "metrics": {
            key: run_stat([(r.metrics or {})[key] for r in per_run], boot.get(key), bounds.get(key, FRACTION))
            for key in metric_keys
        },
        "score": run_stat([r.score for r in per_run], score_ci),
        "format_failure_rate": run_stat([r.format_failure_rate for r in per_run]),
        "error_rate": run_stat([r.error_rate for r in per_run]),
    }


def _readings(items_by_run: list[list[Sample]]) -> JSONObject:
    """Format failures by reason and readings by reader, over all runs (each only when any)."""
    out: JSONObject = {}
    reasons = Counter(
        it.failure or "no answer found"
        for items in items_by_run for it in items if it.status == "format_failure"
    )  # fmt: skip
    if reasons:
        out["format_failures"] = dict(reasons.most_common())
    readings = Counter(it.read_by or it.veto for items in items_by_run for it in items if it.read_by or it.veto)
    if readings:
        out["readings"] = dict(sorted(readings.items(), key=lambda kv: (-kv[1], kv[0])))
    levels = Counter(it.confidence for items in items_by_run for it in items if it.confidence is not None)
    if levels:
        # Always both keys: a task whose readings are all high-confidence says "low": 0.
        out["confidence"] = {"high": levels.get("high", 0), "low": levels.get("low", 0)}
    return out


def _task_entry(
    spec: TaskSpec,
    items_by_run: list[list[Sample]],
    run_ids: list[int],
    unavailable: dict[str, str],
    rng: np.random.Generator | None,
    n_boot: int,
) -> tuple[JSONObject, np.ndarray | None]:
    """results.json's ``tasks.NAME`` of the task's finished items (its ledger and judge
    aside), and the replicates of its score."""
    kind = kind_of(spec)
    per_run = [_run_figures(spec, run, items) for run, items in zip(run_ids, items_by_run, strict=True)]
    boot, score_reps = _bootstrap(spec, items_by_run, rng, n_boot)
    missing = sorted(kind.scorers(spec) & set(unavailable))
    entry: JSONObject = {
        "name_zh": spec.name_zh,
        "type": spec.type,
        "bloom": spec.bloom.value,
        "n": len(items_by_run[0]) if items_by_run else 0,
        "status": "not_computed" if missing else "ok",
        # Short here; the full reason (which model, why, how to get it) is in meta.scorers.
        "reason": f"{' and '.join(missing)} unavailable (see meta.scorers)" if missing else None,
        **_figures(spec, per_run, boot, score_reps),
        "per_run": per_run,
        **_readings(items_by_run),
    }
    fields = kind.field_figures(spec, items_by_run)
    if fields is not None:
        entry["fields"] = fields
    return entry, score_reps
