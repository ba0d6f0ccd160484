"""What every harness's integration shares, without any harness imported: a record carried
through another harness as JSON and back, a read sample as JSON (with what scoring works with)
and back, and the figures of a harness's scored samples grouped by task.

A harness scores one sample at a time and aggregates at the end: its scorer reads with
:func:`taxpraben.api.reading.read_answer` and keeps :func:`sample_state` in the score; its
aggregation rebuilds the samples (:func:`sample_of_state`) and makes the figures with
:func:`taxpraben.api.figures.task_figures`, the semantic scorers run once over all its pairs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, cast

from taxpraben.records import Record
from taxpraben.results import Sample
from taxpraben.results.samples import TextPair

if TYPE_CHECKING:
    from taxpraben.results import TaskResult
    from taxpraben.results.json_value import JSONObject, JSONValue


def record_state(record: Record) -> JSONObject:
    """``record`` as JSON (a harness sample's metadata)."""
    values = {f.name: getattr(record, f.name) for f in dataclasses.fields(Record)}
    values["choices"] = list(record.choices) if record.choices is not None else None
    return values


def record_of_state(state: Mapping[str, JSONValue]) -> Record:
    """The record :func:`record_state` wrote."""
    values = dict(state)
    choices = values.get("choices")
    values["choices"] = tuple(cast("list[str]", choices)) if choices is not None else None
    return Record(**values)


def sample_state(sample: Sample) -> JSONObject:
    """A read sample as JSON: its samples.jsonl line and what scoring works with (its text
    pairs, its labels), so that :func:`sample_of_state` gives back a sample to finish."""
    return {
        "line": sample.to_json(),
        "pairs": [[p.name, p.candidate, p.reference, p.missing] for p in sample.pairs],
        "label_gold": sample.label_gold,
        "label_pred": sample.label_pred,
    }


def sample_of_state(state: Mapping[str, JSONValue]) -> Sample:
    """The sample :func:`sample_state` wrote, ready to be finished."""
    pairs = tuple(TextPair(str(n), str(c), str(r), bool(m)) for n, c, r, m in cast("list[list[JSONValue]]", state["pairs"]))
    line = Sample.model_validate(state["line"])
    return line.evolve(pairs=pairs, label_gold=state.get("label_gold"), label_pred=state.get("label_pred"))


def figures_by_task(states: Iterable[Mapping[str, JSONValue]]) -> dict[str, TaskResult]:
    """The figures of each task of the read samples ``states`` (:func:`sample_state`), made by
    :func:`~taxpraben.api.figures.task_figures` (the semantic scorers as the environment names them).

    A harness may ask while it is still scoring (Inspect updates its metrics as samples finish):
    the figures are then of the records every run has scored so far; once all are, of all."""
    from taxpraben.api.figures import task_figures

    by_task: dict[str, list[Sample]] = {}
    for state in states:
        sample = sample_of_state(state)
        by_task.setdefault(sample.task, []).append(sample)
    figures: dict[str, TaskResult] = {}
    for task, samples in by_task.items():
        ids_by_run: dict[int, set[str]] = {}
        for sample in samples:
            ids_by_run.setdefault(sample.run, set()).add(sample.id)
        complete = set.intersection(*ids_by_run.values())
        if complete:
            figures[task] = task_figures(task, [s for s in samples if s.id in complete])
    return figures


def flat_figures(task: str, figures: TaskResult, prefix: bool) -> dict[str, float | None]:
    """A task's figures as one flat mapping (mean over runs of each metric, the task score,
    the format-failure rate), keys prefixed by the task when ``prefix``."""
    head = f"{task}/" if prefix else ""
    out: dict[str, float | None] = {
        f"{head}{key}": stat.mean if stat is not None else None for key, stat in figures.metrics.items()
    }
    out[f"{head}score"] = figures.score.mean if figures.score is not None else None
    if figures.format_failure_rate is not None:
        out[f"{head}format_failure_rate"] = figures.format_failure_rate.mean
    return out
