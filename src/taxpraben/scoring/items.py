"""Scoring one prediction against one record: the steps every kind shares.

Scoring is two-phase (see :mod:`taxpraben.kinds.base`): :func:`prepare_item` cleans the
prediction and lets the task's kind parse it, score everything exact and list the text
pairs it needs; the pipeline scores all pairs at once; :func:`finalize_item` lets the kind
combine both into the item's scores. Each step makes a new frozen sample
(:class:`~taxpraben.results.Sample`), the one samples.jsonl and the report take.

An item whose prediction cannot be parsed is a ``format_failure`` and scores 0; an item
whose generation failed (or that has no prediction) is an ``error`` and scores 0. Neither
is ever dropped.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import cast

from pydantic import ValidationError

from taxpraben.kinds import (
    PROFILES,
    Profile,
    SemanticValues,
    kind_of,
    with_finished,
    with_prepared,
)
from taxpraben.kinds.classification import option_label
from taxpraben.kinds.field_golds import WHOLE_ANSWER
from taxpraben.kinds.profiles import PAPER_RULES, ScoringRules, scoring_rules
from taxpraben.parsing.clean import clean_prediction
from taxpraben.records import Record
from taxpraben.results import Prediction
from taxpraben.results.samples import Sample, Status, TextPair
from taxpraben.tasks import TaskSpec

__all__ = [
    "PROFILES",
    "WHOLE_ANSWER",
    "Profile",
    "Readings",
    "Sample",
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
) -> Sample:
    """The item of (``record``, ``run``): its prediction read and its exact parts scored; the
    text pairs it needs listed.

    ``prediction``: the predictions line (or its text; None: no prediction); ``error``: why
    the generation failed, when it did; ``profile``: the chain set to read it with
    (:mod:`taxpraben.kinds.profiles`), or its name. The prediction is cleaned here, once,
    for every reader (:func:`~taxpraben.parsing.clean.clean_prediction`)."""
    if isinstance(prediction, str):
        prediction = Prediction(record.task, record.id, run, prediction, error=error)
    text = prediction.prediction if prediction is not None else None
    failed = text is None or (error is not None and not text.strip())
    item = Sample.of(record.task, record.id, run, prediction, gold=record.gold_label, status="error" if failed else "ok",
                     error=(error or "no prediction") if failed else None)  # fmt: skip
    cleaned = "" if failed else clean_prediction(text or "")
    spec = scoring_rules(profile).applied_to(spec)  # the chain set the profile reads with
    kind = kind_of(spec)
    try:
        prepared = kind.prepare(spec, record, item, cleaned, failed)
    except ValidationError as exc:  # a plugin's kind that writes into the sample it is given
        if not _refused_write(exc):
            raise
        prepared = None
    if prepared is None:  # such a kind, read again on a working copy it may write into
        draft = _draft(item)
        prepared = kind.prepare(spec, record, draft, cleaned, failed)
        if prepared is None:
            return item.evolve(**{name: getattr(draft, name) for name in _DRAFTED})
    return with_prepared(item, prepared)


#: What a plugin's kind may write into its working copy (:func:`_draft`): the sample's fields
#: a reading sets, and what scoring works with.
_DRAFTED = ("status", "extracted", "failure", "scores", "score", "fields", "read_by", "evidence", "confidence",
            "veto", "pairs", "label_gold", "label_pred")  # fmt: skip


def _refused_write(exc: ValidationError) -> bool:
    """Whether ``exc`` is a frozen sample refusing an assignment."""
    return all(error["type"] == "frozen_instance" for error in exc.errors())


def _draft(item: Sample) -> Sample:
    """A working copy of ``item`` that a kind may write into (a plugin's kind that returns
    None instead of :class:`~taxpraben.kinds.base.Prepared`): what it may write and what
    kinds read, in a namespace; the sample itself is frozen."""
    values = {name: getattr(item, name) for name in _DRAFTED}
    return cast("Sample", SimpleNamespace(**values, prediction=item.text, text=item.text, gold=item.gold,
                                          task=item.task, id=item.id, run=item.run))


def finalize_item(spec: TaskSpec, item: Sample, values: SemanticValues) -> Sample:
    """The item with its exact and semantic parts combined into its scores and its score
    (None when a needed scorer is unavailable): a new item."""
    return with_finished(item, kind_of(spec).finish(spec, item, values))


class Readings:
    """Each distinct answer of a record read once, whenever it arrives.

    The readers are pure: the same text of the same record reads the same, so a record whose
    runs gave the same answer (greedy decoding, runs sharing one generation) is read once
    and its reading copied to the other runs (:meth:`Sample.for_run`). A run reads ahead
    (:meth:`read_ahead`, on a worker thread while the other requests are still out), so
    that scoring finds most items read when the last completion arrives; :meth:`read` then
    takes what was read ahead and reads the rest."""

    def __init__(self, profile: ScoringRules | str = PAPER_RULES) -> None:
        self.rules = scoring_rules(profile)
        #: (task, id, text, error) -> the item of its first reading.
        self._read: dict[tuple[str, str, str, str | None], Sample] = {}
        #: The keys whose first item was handed out by :meth:`read` (later ones get copies).
        self._used: set[tuple[str, str, str, str | None]] = set()
        self._lock = threading.Lock()
        #: Items read ahead, and of those the ones :meth:`read` took.
        self.ahead = 0
        self.taken = 0

    def read_ahead(self, spec: TaskSpec, record: Record, prediction: Prediction) -> None:
        """Read ``prediction`` of ``record`` now (any thread), unless it already was."""
        key = (spec.name, record.id, prediction.prediction, prediction.error)
        with self._lock:
            if key in self._read:
                return
        self.keep(spec, record, prediction, prepare_item(spec, record, prediction.run, prediction, prediction.error,
                                                         self.rules))  # fmt: skip

    def keep(self, spec: TaskSpec, record: Record, prediction: Prediction, item: Sample) -> None:
        """``item``, read ahead elsewhere (a worker process), as :meth:`read_ahead` keeps its
        own: unless ``prediction`` of ``record`` was already read."""
        key = (spec.name, record.id, prediction.prediction, prediction.error)
        with self._lock:
            if self._read.setdefault(key, item) is item:
                self.ahead += 1

    def peek(self, spec: TaskSpec, record: Record, prediction: Prediction) -> Sample | None:
        """The item read ahead for ``prediction`` of ``record`` (None when it was not), left
        as it is: the judge of ``run`` plans its requests from it while generation goes on."""
        with self._lock:
            return self._read.get((spec.name, record.id, prediction.prediction, prediction.error))

    def read(self, spec: TaskSpec, record: Record, run: int, prediction: Prediction) -> Sample:
        """The item of ``prediction`` (run ``run`` of ``record``): the first reading of its
        answer for the first run that asks, a copy of it for the others."""
        key = (spec.name, record.id, prediction.prediction, prediction.error)
        with self._lock:
            first = self._read.get(key)
            fresh = key not in self._used
            self._used.add(key)
        if first is None:
            first = prepare_item(spec, record, run, prediction, prediction.error, self.rules)
            with self._lock:
                self._read[key] = first
            return first
        if not fresh:
            return first.for_run(run, prediction)
        self.taken += 1
        # Read ahead from a generation equal in text and error: this run's own is kept.
        taken = first.for_run(run, prediction)
        with self._lock:
            self._read[key] = taken
        return taken
