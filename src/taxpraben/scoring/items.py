"""Scoring one prediction against one record: the steps every kind shares.

Scoring is two-phase (see :mod:`taxpraben.kinds.base`): :func:`prepare_item` cleans the
prediction and lets the task's kind parse it, score everything exact and list the text
pairs it needs; the pipeline scores all pairs at once; :func:`finalize_item` lets the kind
combine both into the item's scores; the item writes its own samples.jsonl line
(:meth:`~taxpraben.kinds.base.Item.sample_json`).

An item whose prediction cannot be parsed is a ``format_failure`` and scores 0; an item
whose generation failed (or that has no prediction) is an ``error`` and scores 0. Neither
is ever dropped.
"""

from __future__ import annotations

from taxpraben.kinds import (
    PROFILES,
    Item,
    Profile,
    SemanticValues,
    Status,
    TextPair,
    kind_of,
)
from taxpraben.kinds.classification import option_label
from taxpraben.kinds.fields import WHOLE_ANSWER
from taxpraben.kinds.profiles import PAPER_RULES, ScoringRules, scoring_rules
from taxpraben.parsing.clean import clean_prediction
from taxpraben.records import Record
from taxpraben.results import Prediction
from taxpraben.tasks import TaskSpec

__all__ = [
    "PROFILES",
    "WHOLE_ANSWER",
    "Item",
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
    prediction: str | Prediction | None,
    error: str | None = None,
    profile: ScoringRules | str = PAPER_RULES,
) -> Item:
    """The item of (``record``, ``run``): its prediction read and its exact parts scored; the
    text pairs it needs listed.

    ``prediction``: the predictions line (or its text; None: no prediction); ``error``: why
    the generation failed, when it did; ``profile``: the rules to read it by
    (:mod:`taxpraben.kinds.profiles`), or their name. The prediction is cleaned here, once,
    for every reader (:func:`~taxpraben.parsing.clean.clean_prediction`)."""
    if isinstance(prediction, str):
        prediction = Prediction(record.task, record.id, run, prediction, error=error)
    item = Item(record, run, prediction)
    text = prediction.prediction if prediction is not None else None
    failed = text is None or (error is not None and not text.strip())
    if failed:
        item.status = "error"
        item.error = error or "no prediction"
    cleaned = "" if failed else clean_prediction(text or "")
    scoring_rules(profile).prepare(kind_of(spec), spec, record, item, cleaned, failed)
    return item


def finalize_item(spec: TaskSpec, item: Item, values: SemanticValues) -> Item:
    """Combine exact and semantic parts into the item's scores and its score (None when a
    needed scorer is unavailable); returns the item."""
    item.score = kind_of(spec).finish(spec, item, values)
    return item
