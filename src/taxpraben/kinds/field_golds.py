"""Records whose gold has fields: JSON-shaped answers (mixed) and aspects (multi-aspect
generation). Shared by the kinds that score fields.

A record's fields are its gold's own keys (:func:`taxpraben.parsing.record_fields.record_fields`):
the spec's rules where it names them, kinds inferred from the gold value otherwise. Exact
fields (number, category) are scored here; text fields become text pairs for the semantic
scorers. A gold with no readable field is scored as one rationale, the whole answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from taxpraben.kinds.base import Noted, Prepared, chain_for, noted

# The field readers are imported by the functions that use them: the kinds are loaded with
# the task specs, before the first request, and these parsers (their patterns compile at
# import) are needed only once a record with fields is checked or an answer read (issue 24).

if TYPE_CHECKING:
    from taxpraben.parsing.field_match import AlignedField
    from taxpraben.parsing.region import Reading
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample, Status
    from taxpraben.task_spec import TaskSpec

#: The one field of a record whose gold has no readable fields: the whole answer.
WHOLE_ANSWER = "全文"


def as_json_object(answer: JSONValue) -> JSONObject | None:
    """The gold as an object: itself, or the object a JSON string holds; else None."""
    if isinstance(answer, dict):
        return answer
    if isinstance(answer, str):
        try:
            value = json.loads(answer)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


def check_field_gold(answer: JSONValue, spec: TaskSpec, aspects: bool, bad: Callable[[str, str], None]) -> JSONValue:
    """The gold of a field task as the scorer will read it, reporting spec number fields
    that hold no number. A JSON string becomes its object; any other text is kept as
    written (the scorer reads it with the prediction reader)."""
    from taxpraben.parsing.numbers import parse_gold_number
    from taxpraben.parsing.record_fields import gold_fields, record_fields

    if answer is None:
        return answer
    obj = as_json_object(answer)
    if obj is not None:
        answer = obj
    fields = gold_fields(answer)
    if fields is None or spec.fields is None:
        return answer
    for f in record_fields(fields, spec.field_rules, aspects=aspects):
        if f.inferred or f.rule.kind != "number":
            continue
        try:
            parse_gold_number(f.gold)
        except ValueError:
            bad(f"gold field {f.gold_key!r} must be a number, got {f.gold!r}", "answer")
    return answer


def _json_safe(value: object) -> JSONValue:
    if isinstance(value, (frozenset, set)):
        return "".join(sorted(value))
    return value


def whole_output_reading(status: Status, prediction: str, reading: Reading | None) -> Noted:
    """How a whole-output answer was read: its rule, and the whole prediction as its evidence."""
    if reading is None:
        return Noted()
    how = noted(status, prediction, reading.rule)
    return replace(how, evidence=(0, len(prediction))) if status == "ok" else how


def prepare_whole_answer(record: Record, prediction: str, text: str, failed: bool,
                         failure: str | None = None) -> Prepared:
    """A record whose gold has no fields: the whole prediction against the whole gold
    (``failure``: why the kind blanked the text, a copy of the prompt)."""
    from taxpraben.parsing.readers.text import read_text
    from taxpraben.results.samples import (
        TextPair,  # pydantic's: loaded with scoring, not with the kinds
    )

    reading = None if failed else read_text(text)
    missing = reading is None or reading.failure is not None
    status: Status = "error" if failed else ("format_failure" if missing else "ok")
    fields = {
        WHOLE_ANSWER: {
            "kind": "text", "pred": None if missing else text, "gold": record.answer_text, "score": None,
            "status": "missing" if missing else "ok", "matched_by": "whole", "inferred": True,
        }
    }  # fmt: skip
    return Prepared(status, None, failure, fields=fields,
                    pairs=(TextPair(WHOLE_ANSWER, "" if missing else text, record.answer_text, missing),),
                    reading=whole_output_reading(status, prediction, reading))  # fmt: skip


def prepare_fields(spec: TaskSpec, record: Record, prediction: str, text: str, failed: bool,
                   aspects: bool, failure: str | None = None) -> Prepared:
    """Align the prediction's fields to the record's own gold fields and score the exact ones
    (``failure``: why the kind blanked the text, a copy of the prompt)."""
    from taxpraben.parsing.field_match import (
        align_fields,
        field_text,
        field_value_matches,
        unreadable_number,
    )
    from taxpraben.parsing.readers.fields import (
        JSON_FIELDS_RULE,
        NO_FIELD_READ,
        field_spans,
        read_fields_chain,
    )
    from taxpraben.parsing.readers.shared import NO_ANSWER_RULE
    from taxpraben.parsing.record_fields import gold_fields, record_fields
    from taxpraben.results.samples import TextPair

    assert spec.fields is not None
    gold = gold_fields(record.answer)
    if gold is None:
        return prepare_whole_answer(record, prediction, text, failed, failure)
    fields = record_fields(gold, spec.field_rules, aspects=aspects)
    rules = [f.rule for f in fields]
    threshold = spec.fields.fuzzy_threshold
    aligned_by_id: dict[int, dict[str, AlignedField]] = {}

    def align(parsed: JSONObject) -> dict[str, AlignedField]:
        key = id(parsed)
        if key not in aligned_by_id:
            aligned_by_id[key] = align_fields(parsed, rules, threshold)
        return aligned_by_id[key]

    def holds_a_field(parsed: JSONObject) -> bool:
        """Whether the parsed fields hold one of the record's (else veto.no-field)."""
        found = align(parsed).values()
        return not rules or any(a.value is not None and field_text(a.value).strip() != "" for a in found)

    how = NO_ANSWER_RULE.name
    status: Status = "error" if failed else "ok"
    parsed: JSONObject | None = None
    if not failed:
        # a copy of the prompt found by the kind (failure) blanked the text
        reading = read_fields_chain(text if text.strip() else "", failure,
                                    None if aspects else holds_a_field, chain_for(spec, "fields"))
        how = reading.rule or how
        parsed = reading.value if isinstance(reading.value, dict) else None
        if reading.failure is not None:
            status = "format_failure"
            if reading.failure == NO_FIELD_READ:
                failure = reading.failure
    aligned = align(parsed) if parsed is not None else align_fields({}, rules, threshold)
    scored: dict[str, JSONObject] = {}
    pairs: list[TextPair] = []
    for f in fields:
        rule = f.rule
        got = aligned[rule.name]
        present = got.value is not None and field_text(got.value).strip() != ""
        info: JSONObject = {
            "kind": rule.kind,
            "pred": _json_safe(got.value),
            "gold": f.gold,
            "status": "ok" if present else "missing",
            "matched_by": got.how,
            "inferred": f.inferred,
        }
        if f.spec_name is not None and f.spec_name != rule.name:
            info["spec_field"] = f.spec_name
        unreadable = unreadable_number(got.value) if present and rule.kind == "number" else None
        if unreadable is not None:  # a formula with a word or a variable: no number was read
            info.update(status="format_failure", failure=unreadable)
        if rule.kind == "text":
            cand = field_text(got.value) if present else ""
            pairs.append(TextPair(rule.name, cand, field_text(f.gold), not present))
            info["score"] = None  # filled in when the item is finished
        else:
            info["score"] = float(present and unreadable is None and field_value_matches(got.value, f.gold, rule))
        scored[rule.name] = info
    spans: dict[str, tuple[int, int]] = {}
    if status == "ok" and parsed is not None:
        spans = field_spans(prediction, text, parsed, how == JSON_FIELDS_RULE.name,
                            [a.key for a in aligned.values() if a.key is not None and a.value is not None])
        for name, a in aligned.items():
            if a.key in spans:
                scored[name]["evidence"] = list(spans[a.key])
    extracted = {name: _json_safe(a.value) for name, a in aligned.items() if a.value is not None}
    read = Noted() if failed else _fields_reading(status, prediction, how, aligned, list(spans.values()))
    return Prepared(status, extracted, failure, fields=scored, pairs=tuple(pairs), reading=read)


def _fields_reading(status: Status, prediction: str, how: str, aligned: Mapping[str, AlignedField],
                    spans: list[tuple[int, int]]) -> Noted:
    """The fields' reading: its rule, low confidence when a field was matched fuzzily, and
    its evidence: the stretch from the first to the last span a field was read from
    (``spans``); without any, the stretch covering the values read wherever they are last
    written (a guess: the reader could not place them after their keys)."""
    from taxpraben.parsing.evidence import covering_span
    from taxpraben.parsing.field_match import field_text

    reading = noted(status, prediction, how)
    if status != "ok":
        return reading
    evidence: tuple[int, int] | None
    if spans:
        evidence = (min(s for s, _ in spans), max(e for _, e in spans))
    else:
        values = [field_text(a.value) for a in aligned.values() if a.value is not None]
        evidence = covering_span(prediction, [v for v in values if v.strip()])
    reading = replace(reading, evidence=evidence)
    if any(a.how == "fuzzy" for a in aligned.values() if a.value is not None):
        reading = replace(reading, confidence="low")
    return reading


def _field_names(spec: TaskSpec, items_by_run: list[list[Sample]]) -> list[str]:
    """Every field some record scores (named by the gold's keys): those a spec rule names
    first, in spec order, then the others in order of first appearance."""
    assert spec.fields is not None
    order = {rule.name: i for i, rule in enumerate(spec.field_rules)}
    seen: dict[str, int] = {}
    for items in items_by_run:
        for item in items:
            for name, info in (item.fields or {}).items():
                rank = order.get(info.get("spec_field") or name, len(order))
                seen[name] = min(seen.get(name, rank), rank)
    appearance = {name: i for i, name in enumerate(seen)}
    return sorted(seen, key=lambda name: (seen[name], appearance[name]))


def field_figures(spec: TaskSpec, items_by_run: list[list[Sample]], text_metrics: tuple[str, ...],
                  text_value: Callable[[str], str]) -> JSONObject:
    """Per-field figures over the records that have the field (records differ in their keys).

    ``kind`` is the field's most common kind; ``n`` the records scoring it (per run);
    ``inferred`` whether any record inferred its kind from the gold value. Exact fields
    report ``em``; text fields ``text_metrics``, read from each field's entry under
    ``text_value(metric)``.
    """
    import numpy as np

    from taxpraben.aggregate import run_stat

    out: JSONObject = {}
    for name in _field_names(spec, items_by_run):
        runs = [[it.fields[name] for it in items if it.fields and name in it.fields] for items in items_by_run]
        infos = [info for run in runs for info in run]
        kinds = [info["kind"] for info in infos]
        kind = max(dict.fromkeys(kinds), key=kinds.count)
        figures: JSONObject = {"kind": kind, "n": len(runs[0]) if runs else 0,
                                   "inferred": any(info.get("inferred") for info in infos)}
        metrics = ("em",) if kind != "text" else text_metrics
        for metric in metrics:
            per_run: list[float | None] = []
            for run in runs:
                # Only the records where the field has the figure's kind count toward it.
                vals = [
                    info.get("score" if info["kind"] != "text" else text_value(metric))
                    for info in run
                    if (info["kind"] == "text") == (kind == "text")
                ]
                per_run.append(None if not vals or any(v is None for v in vals) else float(np.mean([v for v in vals if v is not None])))
            figures[metric] = run_stat(per_run)
        figures["format_failure_rate"] = run_stat(
            [float(np.mean([info["status"] != "ok" for info in run])) if run else None for run in runs]
        )
        out[name] = figures
    return out
