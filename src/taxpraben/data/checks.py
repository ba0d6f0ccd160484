"""Checking the raw items of a dataset file against its task spec, record by record.

:func:`check_record` turns one decoded object into a :class:`~taxpraben.records.Record`
or says precisely what is wrong with it; :func:`iter_checked` streams a whole file as
records, with a :class:`~taxpraben.data.problems.Problem` in place of anything wrong
(duplicate ids included) and one summary warning per gold key whose kind had to be inferred.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.data.files import iter_raw
from taxpraben.data.problems import Problem, Unit

# Validation accepts a numeric gold exactly when scoring can read it: one definition.
from taxpraben.kinds import FieldMode, kind_of
from taxpraben.records import ID_FIELDS, KNOWN_FIELDS, Record
from taxpraben.tasks import TaskSpec

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue


#: Reports a problem of a record: its message and the field at fault (None: the record).
Report = Callable[[str, str | None], None]


def _record_id(obj: JSONObject, position: int) -> str:
    for key in ID_FIELDS:
        value = obj.get(key)
        if value is not None and value != "":
            return str(value)
    return str(position)


def _check_choices(obj: JSONObject, bad: Report, warn: Report) -> tuple[str, ...] | None:
    """The record's choices, if it has any, reporting what is wrong with them."""
    choices: tuple[str, ...] | None = None
    raw_choices = obj.get("choices")
    if raw_choices is not None:
        if not isinstance(raw_choices, list) or not raw_choices:
            bad("must be a non-empty list of strings", "choices")
        elif not all(isinstance(c, str) and c.strip() for c in raw_choices):
            bad("every choice must be a non-empty string", "choices")
        else:
            choices = tuple(raw_choices)
            repeated = sorted({c for c in choices if choices.count(c) > 1}, key=choices.index)
            if repeated:
                # Real exams repeat option texts ("以上都不对"); an answer is read by its
                # position or letter, so the record is kept as it is.
                warn(f"repeated option text(s) {repeated}: kept as given; answers are "
                     "scored by position/letter", "choices")
    return choices


def check_record(
    obj: JSONValue, spec: TaskSpec, path: Path, position: int, unit: Unit, index: int | None = None
) -> tuple[Record | None, list[Problem]]:
    """Turn one decoded object into a Record, or say precisely what is wrong with it.

    ``position`` locates it for messages; ``index`` (0-based, default ``position``) is the
    id of a record that has no id field. Warnings (repeated option texts) come with a
    Record; any error comes with None.
    """
    problems: list[Problem] = []

    def bad(message: str, fld: str | None = None) -> None:
        problems.append(Problem(str(path), message, position, fld, unit=unit))

    def warn(message: str, fld: str | None = None) -> None:
        problems.append(Problem(str(path), message, position, fld, "warning", unit))

    if not isinstance(obj, dict):
        bad(f"a record must be a JSON object, got {type(obj).__name__}")
        return None, problems
    query = obj.get("query")
    if "query" not in obj:
        bad("required field is missing", "query")
    elif not isinstance(query, str) or not query.strip():
        bad("must be a non-empty string (the full prompt)", "query")
    answer = obj.get("answer")
    if "answer" not in obj or answer is None:
        bad("required field is missing", "answer")
    elif isinstance(answer, str) and not answer.strip():
        bad("is empty", "answer")
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        bad(f"must be a string, got {type(text).__name__}", "text")

    choices = _check_choices(obj, bad, warn)
    # The kind reads the gold as scoring will (a choice index, a number, fields).
    answer, gold = kind_of(spec).check_gold(spec, obj, answer, choices, bad)

    if any(p.severity == "error" for p in problems):
        return None, problems
    record = Record(
        task=spec.name,
        id=_record_id(obj, position if index is None else index),
        query=query,  # type: ignore[arg-type]  # a str: anything else was an error above
        answer=answer,
        text=text,
        choices=choices,
        gold=gold,
        extra={k: v for k, v in obj.items() if k not in KNOWN_FIELDS},
        source=str(path),
        line=position,
    )
    return record, problems


@dataclass
class _FieldNotes:
    """What a file's field golds leave to inference, summed up as one warning per key."""

    path: Path
    spec: TaskSpec
    unit: Unit
    mode: FieldMode
    #: gold key -> kind -> count; and the first record (position, id) using the key
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    first: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: "EM only" / "BERTScore only" -> count and first record
    lopsided: dict[str, int] = field(default_factory=dict)
    lopsided_first: dict[str, tuple[int, str]] = field(default_factory=dict)

    def add(self, record: Record) -> Problem | None:
        """Note one record; a record with no readable field is reported at once."""
        # Imported here: a run's first request waits for the first record's checks, and the
        # field readers (their patterns compile at import) only serve records with fields.
        from taxpraben.parsing.record_fields import gold_fields, record_fields

        gold = gold_fields(record.answer)
        assert self.spec.fields is not None
        if gold is None:
            return Problem(
                str(self.path),
                "no field could be read from the gold (not an object, nor 字段：值 lines, "
                "headings or a table); the record is scored as one rationale",
                record.line, "answer", "warning", self.unit,
            )
        fields = record_fields(gold, self.spec.field_rules, aspects=self.mode == "aspects")
        for f in fields:
            if f.inferred:
                counts = self.kinds.setdefault(f.gold_key, {})
                counts[f.rule.kind] = counts.get(f.rule.kind, 0) + 1
                self.first.setdefault(f.gold_key, (record.line, record.id))
        if self.mode == "fields":  # exact fields and a rationale are expected together
            kinds = {f.rule.kind for f in fields}
            side = None if "text" in kinds and kinds - {"text"} else ("BERTScore only" if "text" in kinds else "EM only")
            if side is not None:
                self.lopsided[side] = self.lopsided.get(side, 0) + 1
                self.lopsided_first.setdefault(side, (record.line, record.id))
        return None

    def summary(self) -> list[Problem]:
        """One warning per inferred key (kinds, count, an example) and per lopsided kind."""
        # The location is the first record concerned; the message counts all of them.
        out = []
        for key, counts in self.kinds.items():
            line, rid = self.first[key]
            kinds = ", ".join(f"{_KIND_WORDS[k]} in {n}" for k, n in counts.items())
            out.append(Problem(
                str(self.path),
                f"gold key {key!r} is not in the {self.spec.name} spec; kind inferred from its "
                f"value: {kinds} record(s) (first: id {rid!r})",
                line, "answer", "warning", self.unit,
            ))
        for side, n in self.lopsided.items():
            line, rid = self.lopsided_first[side]
            lacks = "no text (rationale)" if side == "EM only" else "no exact"
            out.append(Problem(
                str(self.path),
                f"{n} {self.spec.name} record(s) have {lacks} field, so their item score is "
                f"{side} instead of (EM + BERTScore) / 2 (first: id {rid!r})",
                line, "answer", "warning", self.unit,
            ))
        return out


_KIND_WORDS = {"number": "number (EM)", "category": "category (EM)", "text": "text (BERTScore)"}


def iter_checked(path: Path, spec: TaskSpec) -> Iterator[Record | Problem]:
    """Stream a dataset file as Records, with a Problem in place of anything that is wrong."""
    unit: Unit = "line" if path.suffix.lower() == ".jsonl" else "record"
    seen: dict[str, int] = {}
    mode = kind_of(spec).field_mode(spec)
    notes = _FieldNotes(path, spec, unit, mode) if mode is not None and spec.fields is not None else None
    n_items = 0
    file_problem = False
    for item in iter_raw(path):
        if item.problem is not None:
            file_problem = True
            yield item.problem
            continue
        n_items += 1
        record, problems = check_record(item.obj, spec, path, item.position, unit, item.index)
        yield from problems
        if record is None:
            continue
        if notes is not None:
            unreadable = notes.add(record)
            if unreadable is not None:
                yield unreadable
        if record.id in seen:
            yield Problem(
                str(path),
                f"duplicate id {record.id!r} (first at {unit} {seen[record.id]})",
                item.position,
                "id",
                unit=unit,
            )
            continue
        seen[record.id] = item.position
        yield record
    if notes is not None:
        yield from notes.summary()
    if n_items == 0 and not file_problem:
        yield Problem(str(path), "file holds no records")
