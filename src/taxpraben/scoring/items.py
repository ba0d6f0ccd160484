"""Scoring one prediction against one record: the steps every kind shares.

Scoring is two-phase (see :mod:`taxpraben.kinds.base`): :func:`prepare_item` cleans the
prediction and lets the task's kind parse it, score everything exact and list the text
pairs it needs; the pipeline scores all pairs at once; :func:`finalize_item` lets the kind
combine both into the item's scores and writes its samples.jsonl line.

An item whose prediction cannot be parsed is a ``format_failure`` and scores 0; an item
whose generation failed (or that has no prediction) is an ``error`` and scores 0. Neither
is ever dropped.
"""

from __future__ import annotations

from typing import Any

from taxpraben.data.records import Record
from taxpraben.kinds import (
    PROFILES,
    PreparedItem,
    Profile,
    SemanticValues,
    Status,
    TextPair,
    kind_of,
)
from taxpraben.kinds.classification import option_label
from taxpraben.kinds.fields import WHOLE_ANSWER
from taxpraben.parsing.clean import clean_prediction
from taxpraben.tasks import TaskSpec

__all__ = [
    "PROFILES",
    "WHOLE_ANSWER",
    "PreparedItem",
    "Profile",
    "SemanticValues",
    "Status",
    "TextPair",
    "finalize_item",
    "option_label",
    "prepare_item",
]


def prepare_item(
    spec: TaskSpec,
    record: Record,
    run: int,
    prediction: str | None,
    error: str | None,
    profile: Profile = "taxpraben",
) -> PreparedItem:
    """Parse one prediction and score its exact parts; list the text pairs it needs."""
    item = PreparedItem(
        task=spec.name, id=record.id, run=run, status="ok", prediction=prediction or "", gold=record.gold_label
    )
    failed = prediction is None or (error is not None and not (prediction or "").strip())
    if failed:
        item.status = "error"
        item.error = error or "no prediction"
    text = "" if failed else clean_prediction(prediction or "")
    kind_of(spec).prepare(spec, record, item, text, failed, profile)
    return item


def finalize_item(spec: TaskSpec, item: PreparedItem, values: SemanticValues) -> dict[str, Any]:
    """Combine exact and semantic parts into the item's scores and its samples.jsonl line.

    Returns the line; ``line["score"]`` is None when a needed scorer is unavailable.
    """
    score = kind_of(spec).finish(spec, item, values)
    line: dict[str, Any] = {
        "task": item.task,
        "id": item.id,
        "run": item.run,
        "status": item.status,
        "prediction": item.prediction,
        "gold": item.gold,
        "extracted": item.extracted,
        "scores": dict(item.scores),
        "score": score,
        "error": item.error,
    }
    if item.failure is not None and item.status == "format_failure":
        line["failure"] = item.failure
    if item.fields is not None:
        line["fields"] = item.fields
    return line
