"""One output read as taxpraben reads it: :func:`read_answer` gives a :class:`Reading` (the
value, the rule that read it, its evidence span and confidence, or why nothing was read), for
any task kind, through the kinds layer (``scoring.items.prepare_item``: the output cleaned, then
read by its kind's chain of named rules under the scoring profile).

Another harness calls it per sample; :func:`taxpraben.api.figures.task_figures` then makes the
task's figures of the readings' samples with taxpraben's own rules.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from taxpraben.data.checks import check_record
from taxpraben.records import Record as _PlainRecord
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import Registry, TaskSpec, load_registry

if TYPE_CHECKING:
    from taxpraben.results import Sample
    from taxpraben.results.json_value import JSONValue


@functools.lru_cache(maxsize=8)
def _registry(task_dir: str | None) -> Registry:
    return load_registry([task_dir] if task_dir else ())


def task_spec(task: str | TaskSpec, task_dir: str | Path | None = None) -> TaskSpec:
    """The spec of ``task`` (a name, any case; a spec is returned as it is) in the registry
    (the bundled specs, ``$TAXPRABEN_TASK_DIR`` and ``task_dir``); KeyError with the nearest
    name for an unknown one."""
    if not isinstance(task, str):
        return task
    registry = _registry(str(task_dir) if task_dir is not None else None)
    return registry.select([task])[0]


class Record(_PlainRecord):
    """One benchmark instance (:class:`taxpraben.records.Record`), with :meth:`from_dict`."""

    __slots__ = ()

    @classmethod
    def from_dict(cls, obj: Mapping[str, JSONValue], task: str | TaskSpec, *, task_dir: str | Path | None = None,
                  index: int = 0) -> Record:  # fmt: skip
        """The record of ``obj`` (a data file's object: ``query``, ``answer``, ``choices``,
        ``gold``, ``id``, ...) for ``task``, checked as a data file's record is (README, "Data
        format"); ValueError naming each field at fault. ``index``: its id when it has none."""
        spec = task_spec(task, task_dir)
        where = Path(f"<{spec.name} record>")
        record, problems = check_record(dict(obj), spec, where, index, "record", index)
        errors = [p for p in problems if p.severity == "error"]
        if record is None or errors:
            raise ValueError("; ".join(str(p) for p in errors) or f"{where}: not a record")
        values = {name: getattr(record, name) for name in _PlainRecord.__dataclass_fields__}
        return cls(**values)


@dataclass(frozen=True)
class Reading:
    """How taxpraben read one output.

    ``value``: what was read (a label, a number, letters, a span, fields; None when nothing);
    ``status``: ok | format_failure (nothing could be read) | error (no output);
    ``read_by``: the rule that read it (``rule:<name>``, as ``taxpraben rules`` lists them);
    ``evidence``: the [start, end) character span of ``output`` it was read from, and
    ``evidence_text`` that stretch; ``confidence``: high | low; ``failure``: why nothing was
    read, and ``veto`` the rule that decided it; ``scores``: the exact per-item scores (EM,
    ACC; semantic ones come with the task's figures); ``sample``: the read sample
    (:class:`~taxpraben.results.Sample`), which :func:`~taxpraben.api.figures.task_figures` takes.
    """

    value: JSONValue
    status: Literal["ok", "format_failure", "error"]
    read_by: str | None
    evidence: tuple[int, int] | None
    evidence_text: str | None
    confidence: str | None
    failure: str | None
    veto: str | None
    scores: dict[str, float | None]
    sample: Sample


def reading_of(sample: Sample) -> Reading:
    """The :class:`Reading` of a read sample."""
    span = sample.span
    text = sample.text
    return Reading(
        value=sample.extracted, status=sample.status, read_by=sample.read_by, evidence=span,
        evidence_text=text[span[0]:span[1]] if span is not None else None, confidence=sample.confidence,
        failure=sample.failure, veto=sample.veto, scores=dict(sample.scores), sample=sample,
    )  # fmt: skip


def read_answer(
    task: str | TaskSpec,
    record: Record | _PlainRecord | Mapping[str, JSONValue],
    output: str | None,
    *,
    run: int = 0,
    profile: str = "taxpraben",
    task_dir: str | Path | None = None,
) -> Reading:
    """Read ``output`` (a model's answer; None: it gave none) to ``record`` of ``task`` with
    taxpraben's readers under ``profile`` (``taxpraben``, the default, or ``taxben``: TaxBen's
    own rules). ``record`` may be a data file's object (:meth:`Record.from_dict`)."""
    spec = task_spec(task, task_dir)
    if not isinstance(record, _PlainRecord):
        record = Record.from_dict(record, spec, task_dir=task_dir)
    return reading_of(prepare_item(spec, record, run, output, None if output is not None else "no output", profile))
