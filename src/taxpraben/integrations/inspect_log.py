"""taxpraben's readings and figures in Inspect AI's terms: the ``Score`` of one reading
(:func:`inspect_score`, the scorer's and the export's), the metric value of a task's figures
(:func:`inspect_figures`), and a whole output directory as an Inspect log
(:func:`inspect_log`: ``taxpraben export OUT_DIR --to inspect``), written with Inspect's own
public models and ``write_eval_log``, which ``inspect view`` opens and ``read_eval_log`` reads.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
from inspect_ai.scorer import Score

from taxpraben.api.reading import Reading, reading_of
from taxpraben.integrations.harness import flat_figures

if TYPE_CHECKING:
    from taxpraben.api.evaluation import Results
    from taxpraben.results import Sample, TaskResult
    from taxpraben.results.json_value import JSONObject

#: The scorer's name, in the Inspect tasks' logs and in the exported ones.
SCORER = "taxpraben_scorer"


def _explanation(reading: Reading) -> str:
    if reading.read_by is None:
        return f"no answer read: {reading.failure or 'no output'}"
    quoted = f" from “{reading.evidence_text}”" if reading.evidence_text else ""
    return f"read by {reading.read_by} ({reading.confidence or 'unrated'} confidence){quoted}"


def inspect_score(reading: Reading, run: int, extra: JSONObject | None = None) -> Score:
    """The ``Score`` of one reading: the exact per-item scores as its value (``read``: 1 or 0
    when it has none), the reading as its answer, the rule, confidence and evidence as its
    explanation and metadata (with ``run`` and ``extra``), ``reason="invalid_response_format"``
    for a format failure."""
    exact = {key: value for key, value in reading.scores.items() if value is not None}
    answer = reading.value if isinstance(reading.value, str) or reading.value is None else str(reading.value)
    return Score(
        value=exact or {"read": float(reading.status == "ok")},
        answer=answer,
        explanation=_explanation(reading),
        reason="invalid_response_format" if reading.status == "format_failure" else None,
        metadata={
            "read_by": reading.read_by, "evidence": list(reading.evidence) if reading.evidence else None,
            "confidence": reading.confidence, "failure": reading.failure, "run": run,
            "judge_reply": reading.sample.judge_reply, **(extra or {}),
        },
    )  # fmt: skip


def inspect_figures(figures: Mapping[str, TaskResult]) -> dict[str, float]:
    """The metric value of the tasks' figures: per task each metric's mean over runs, the task
    score and the format-failure rate (keys TASK/metric when there are several tasks, with the
    Overall Average as ``overall`` once every task has its score); figures not computed left out."""
    several = len(figures) > 1
    out: dict[str, float | None] = {}
    for name, result in figures.items():
        out.update(flat_figures(name, result, several))
    task_scores = [r.score.mean for r in figures.values() if r.score is not None and r.score.mean is not None]
    if several and len(task_scores) == len(figures):
        out["overall"] = sum(task_scores) / len(task_scores)
    return {key: value for key, value in out.items() if value is not None}


def task_of_log(tasks: list[str]) -> str:
    """The Inspect task name of results of ``tasks`` (as the entry point names them)."""
    return f"taxpraben/{tasks[0].lower()}" if len(tasks) == 1 else "taxpraben/taxpraben"


def _eval_sample(sample: Sample, query: str, model: str) -> EvalSample:
    prediction = sample.prediction or ""
    record = {"task": sample.task, "id": sample.id, "query": query, "answer": sample.gold}
    return EvalSample(
        id=f"{sample.task}/{sample.id}", epoch=sample.run + 1, input=query, target=str(sample.gold),
        messages=[ChatMessageUser(content=query), ChatMessageAssistant(content=prediction)],
        output=ModelOutput.from_content(model, prediction),
        scores={SCORER: inspect_score(reading_of(sample), sample.run)},
        metadata={"task": sample.task, "record": record},
    )  # fmt: skip


def inspect_log(results: Results) -> EvalLog:
    """The log of an output directory's results (``load_results``): the task (``taxpraben/NAME``,
    or ``taxpraben/taxpraben`` for several), the model, one sample per record and run (epoch =
    run + 1) with its output and its ``Score`` (:func:`inspect_score`), and the figures of
    results.json as the scorer's metrics (:func:`inspect_figures`)."""
    tasks = list(results.tasks)
    meta = results.meta
    model = str(meta.model) if meta is not None and meta.model else "taxpraben/unknown"
    model = model.replace(":", "/", 1)
    queries = {(s.task, s.id): s.query for s in results.samples if s.query}
    created = (meta.started_at if meta is not None and meta.started_at else None) or datetime.now(timezone.utc).isoformat()
    runs = max((s.run for s in results.samples), default=0) + 1
    ids = list(dict.fromkeys(f"{s.task}/{s.id}" for s in results.samples))
    samples = [_eval_sample(s, queries.get((s.task, s.id), f"{s.task}/{s.id}"), model) for s in results.samples]
    metrics = {key: EvalMetric(name=key, value=value) for key, value in inspect_figures(results.tasks).items()}
    spec = EvalSpec(created=created, task=task_of_log(tasks), dataset=EvalDataset(name="taxpraben", samples=len(ids),
                    sample_ids=ids), model=model, config=EvalConfig(epochs=runs))  # fmt: skip
    scores = [EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)]
    return EvalLog(eval=spec, status="success", samples=samples,
                   results=EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores))  # fmt: skip


def export_inspect(results: Results, dest: Path) -> Path:
    """Write :func:`inspect_log` of ``results`` into the folder ``dest`` (made), named as
    Inspect names its logs (``TIME_TASK_ID.eval``); the file written."""
    log = inspect_log(results)
    dest.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    path = dest / f"{stamp}_{log.eval.task.replace('/', '-')}_{uuid.uuid4().hex[:22]}.eval"
    write_eval_log(log, str(path))
    return path

