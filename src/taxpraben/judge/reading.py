"""Which items the judge reads, and its reply read back through the task's own reader.

Pure functions over prepared items (:mod:`taxpraben.scoring.items`): the judge is asked
only for what the rules could not read, never for generation errors: the outputs of the
tasks whose score rests on one read answer (those that need no semantic scorer:
classification and structured tasks) that are format failures, and the answer-bearing
fields of the field tasks (mixed: TaxInspect, TaxPlan) that the rules left unread
(:mod:`.fields`). Its reply is ``{"answer": ..., "quote": ...}``: the answer is read as a
model output would be, so that the item is then scored by its task's own metric, and counts
only when its quote is evidence in the output (:mod:`.grounding`). A reply that is no
answer, that the reader cannot read either, or whose quote is no evidence, leaves the item
(or those fields) unread.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Literal

from taxpraben.judge.field_judge import (
    LOW_CONFIDENCE,
    answer_bearing,
    asked_fields,
    field_disagreements,
    fields_task,
    fields_to_ask,
    low_confidence_fields,
    merge_fields,
    same_fields,
    unread_fields,
)
from taxpraben.judge.grounding import (
    NOT_IN_OUTPUT,
    REPEATS_EXAMPLE,
    Examples,
    Output,
    answer_text,
    field_quotes,
    ground,
    parse_reply,
    repeats_example,
)
from taxpraben.judge.prompt import NO_ANSWER
from taxpraben.kinds import kind_of
from taxpraben.kinds.profiles import ScoringRules
from taxpraben.parsing.field_match import field_value_matches
from taxpraben.results import Prediction
from taxpraben.results.samples import Sample
from taxpraben.scoring.items import prepare_item
from taxpraben.task_spec import FieldRule, TaskSpec

if TYPE_CHECKING:
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue

#: Who decided an item's reading (samples.jsonl ``extracted_by``).
Reader = Literal["rule", "judge", "none"]
#: (task, id, output text): one distinct output, asked once whatever the runs that gave it.
OutputKey = tuple[str, str, str]
#: A prompt without worked examples (a reply then repeats none).
NO_EXAMPLES = Examples(frozenset(), "")


__all__ = [
    "LOW_CONFIDENCE",
    "OutputKey",
    "Reader",
    "ReplyReading",
    "adopt",
    "answer_bearing",
    "asked_fields",
    "field_disagreements",
    "fields_to_ask",
    "is_no_answer",
    "judged_task",
    "low_confidence_outputs",
    "read_outputs",
    "read_reply",
    "reader_counts",
    "same_reading",
    "unanswered_reader",
    "unread_outputs",
]


def judged_task(spec: TaskSpec) -> bool:
    """Whether the judge may read the task's outputs: its score rests on one read answer
    (no semantic scorer: classification and structured tasks), or its kind reads named
    fields with an exact part (mixed: the answer-bearing fields only). Generation never."""
    return not kind_of(spec).scorers(spec) or fields_task(spec)


def _field_item(item: Sample) -> bool:
    """An item read field by field with at least one answer-bearing field."""
    return bool(answer_bearing(item))


def output_key(item: Sample) -> OutputKey:
    return (item.task, item.id, item.text)


def _unread(item: Sample) -> bool:
    if item.status == "error":
        return False
    if item.fields is not None:  # a field task: its answer-bearing fields decide
        return bool(unread_fields(item))
    return item.status == "format_failure"


def unread_outputs(items: Iterable[Sample]) -> dict[OutputKey, list[Sample]]:
    """The outputs the rules left unread, each once with the items (runs) that gave it, in
    order: format failures, and the field items with an answer-bearing field the rules did
    not read (``error`` items had no output to read; an item read whole, or whose fields are
    all text, is never asked)."""
    out: dict[OutputKey, list[Sample]] = {}
    for item in items:
        if _unread(item):
            out.setdefault(output_key(item), []).append(item)
    return out


def _low_confidence(item: Sample) -> bool:
    """Read by a fallback: a rule of low confidence (a last number with no statement, an
    option named only in the last sentence, ...), or, for a field item, some answer-bearing
    field (:data:`~taxpraben.judge.field_judge.LOW_CONFIDENCE`)."""
    if item.status != "ok":
        return False
    if item.fields is not None:
        return bool(low_confidence_fields(item))
    return item.confidence == "low" and (item.read_by or "").startswith("rule:")


def low_confidence_outputs(items: Iterable[Sample]) -> dict[OutputKey, list[Sample]]:
    """The outputs the rules read, but only by a fallback (:func:`_low_confidence`: every
    kind), each once with its items: asked of the judge apart from the unread ones; its
    reading replaces the rules' only where it reads a value. (An item with unread fields
    asks for its low-confidence ones as well.)"""
    out: dict[OutputKey, list[Sample]] = {}
    for item in items:
        if not _unread(item) and _low_confidence(item):
            out.setdefault(output_key(item), []).append(item)
    return out


def read_outputs(items: Iterable[Sample]) -> dict[OutputKey, list[Sample]]:
    """The outputs the rules did read with confidence, each once with its items, in order:
    the audit's candidates. A field item counts when the rules read all its answer-bearing
    fields with confidence (one with a low-confidence field is the judge's to read, not to
    audit); another item when its rule is of high confidence."""
    out: dict[OutputKey, list[Sample]] = {}
    for item in items:
        if item.status != "ok" or (item.fields is None and _low_confidence(item)):
            continue  # a low-confidence reading is the judge's to read, not to audit
        if item.fields is not None and (not _field_item(item) or asked_fields(item)):
            continue
        out.setdefault(output_key(item), []).append(item)
    return out


@dataclass(frozen=True)
class ReplyReading:
    """The judge's reply read back: ``answer`` (``item`` holds the reading, ``evidence`` the
    quote's raw ``[start, end)``), ``no_answer`` (null, the token; for fields, every asked
    key written null), ``malformed`` (no reply object, or an answer the reader cannot read)
    or ``not_grounded`` (``why``: its quote is no evidence, :mod:`.grounding`). For a field
    item ``item`` is the rules' reading with the adopted (grounded) fields merged in,
    ``unreadable`` names the asked fields the reply does not read (a warning, even beside
    adopted ones) and ``rejected`` the fields whose quote was not grounded, with why."""

    outcome: Literal["answer", "no_answer", "malformed", "not_grounded"]
    item: Sample | None = None
    unreadable: tuple[str, ...] = ()
    evidence: tuple[int, int] | None = None
    why: str | None = None
    rejected: dict[str, str] = field(default_factory=dict)

    @property
    def rejection(self) -> str | None:
        """Why the reading (or some field of it) was rejected, in words; None when none was."""
        if self.rejected:
            return "; ".join(f"{name}: {why}" for name, why in self.rejected.items())
        return self.why


def is_no_answer(reply: str) -> bool:
    """The reply is the no-answer token (brackets optional, surrounding space and 。 ignored)."""
    text = reply.strip().strip("。.").strip()
    return text in (NO_ANSWER, NO_ANSWER.strip("【】"))


def read_reply(spec: TaskSpec, record: Record, item: Sample, reply: str, rules: ScoringRules,
               examples: Examples | None = None) -> ReplyReading:  # fmt: skip
    """``reply`` (the judge's ``{"answer": ..., "quote": ...}``) read back: its answer read
    as the output of ``item``'s ``record`` by the task's own reader, and its quote checked as
    evidence in ``item``'s output (:func:`~.grounding.ground`); ``examples``: the judge
    prompt's worked examples, which a reply may not repeat."""
    parsed = parse_reply(reply)
    if not parsed.parsed:
        return ReplyReading("malformed")
    if parsed.answer is None:
        return ReplyReading("no_answer")
    examples = examples or NO_EXAMPLES
    if repeats_example(parsed.answer, parsed.quote, examples):
        return ReplyReading("not_grounded", why=REPEATS_EXAMPLE)
    generation = Prediction(item.task, item.id, item.run, answer_text(parsed.answer))
    reading = prepare_item(spec, record, item.run, generation, None, rules)
    if _field_item(item):
        return _read_fields(spec, record, item, reading, parsed.quote, examples)
    if reading.status != "ok":
        return ReplyReading("malformed", reading)

    def reads_same(text: str) -> bool:
        return same_reading(reading, prepare_item(spec, record, item.run, text, None, rules))

    found = ground(parsed.quote, Output.of(spec, record, item.text), reads_same, examples)
    if found.span is None:
        return ReplyReading("not_grounded", reading, why=found.why)
    return ReplyReading("answer", reading, evidence=found.span)


def _field_reads(info: JSONObject) -> Callable[[str], bool]:
    """Whether a quote reads a field's value, by the field matcher (a number by value, a
    category as the statement that gives it)."""
    rule = FieldRule(name="field", kind="number" if info.get("kind") == "number" else "category")

    def reads(text: str) -> bool:
        try:
            return field_value_matches(text, info.get("pred"), rule)
        except ValueError:  # the judge's value holds no number
            return False

    return reads


def _read_fields(spec: TaskSpec, record: Record, item: Sample, reading: Sample, quote: JSONValue,
                 examples: Examples) -> ReplyReading:
    """A field item's reply: the asked fields it reads, each grounded by its own quote,
    merged into the rules' reading."""
    asked = fields_to_ask(item)
    merge = merge_fields(item, reading, asked)
    if merge.item is None:
        if merge.declined and not merge.unreadable:
            return ReplyReading("no_answer", None)
        return ReplyReading("malformed", reading, merge.unreadable)
    output = Output.of(spec, record, item.text)
    quotes = field_quotes(quote)
    spans: dict[str, tuple[int, int]] = {}
    rejected: dict[str, str] = {}
    for name in merge.adopted:
        found = ground(quotes.get(name), output, _field_reads((reading.fields or {})[name]), examples)
        if found.span is not None:
            spans[name] = found.span
        else:
            rejected[name] = found.why or NOT_IN_OUTPUT
    if not spans:
        return ReplyReading("not_grounded", reading, merge.unreadable, why=next(iter(rejected.values())),
                            rejected=rejected)  # fmt: skip
    kept = merge_fields(item, reading, list(spans))
    assert kept.item is not None and kept.item.fields is not None
    fields = {name: {**info, "evidence": list(spans[name])} if name in spans else info
              for name, info in kept.item.fields.items()}  # fmt: skip
    evidence = (min(s for s, _ in spans.values()), max(e for _, e in spans.values()))
    return ReplyReading("answer", kept.item.evolve(fields=fields), merge.unreadable, evidence=evidence,
                        rejected=rejected)  # fmt: skip


def adopt(item: Sample, reading: Sample, evidence: tuple[int, int] | None = None, judge: str = "judge") -> Sample:
    """``item`` with the judge's reading (status, extracted value, exact scores, fields and
    text pairs; for a field item, its rules' reading with the adopted fields, each
    ``matched_by`` judge), its evidence (the quote's raw span) and who read it
    (``read_by: "judge:<model>"``, no rule confidence, no veto): a new item; its own
    generation, the model's output, stays."""
    adopted = item.edited("adopted", f"judge:{judge}", status=reading.status, extracted=reading.extracted,
                          scores=dict(reading.scores), fields=reading.fields, failure=None, extracted_by="judge",
                          evidence=list(evidence) if evidence is not None else None, read_by=f"judge:{judge}",
                          confidence=None, veto=None)  # fmt: skip
    # what scoring works with (not written, not in the history)
    return adopted.evolve(pairs=reading.pairs, label_pred=reading.label_pred)


def _canonical(value: object) -> str:
    """A reading in a form where equal answers are equal: numbers by value ("1,560" ==
    "1560.00"), other values as sorted JSON."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(str(value)) or str(value)
    if isinstance(value, str):
        number = _number(value)
        return number if number is not None else " ".join(value.split())
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _number(text: str) -> str | None:
    cleaned = text.strip().replace(",", "").replace("，", "")
    try:
        return str(Decimal(cleaned).normalize())
    except InvalidOperation:
        return None


def unanswered_reader(item: Sample) -> Reader:
    """Who decided a reading the judge was asked about but gave none for: "rule" when the
    rules read some answer-bearing field of a field item (their fields stand), else "none"."""
    if _field_item(item) and len(unread_fields(item)) < len(answer_bearing(item)):
        return "rule"
    return "none"


def same_reading(rule: Sample, judge: Sample | None) -> bool:
    """Whether the rules' reading and the judge's are the same answer (a classification
    label, a number by value, a letter set, a span; for a field item, every asked field:
    the judge read each and to the same value); False when the judge read none."""
    if judge is None or judge.status != "ok":
        return False
    if _field_item(rule):
        return same_fields(rule, judge, fields_to_ask(rule))
    if rule.label_pred is not None or judge.label_pred is not None:
        return rule.label_pred == judge.label_pred
    return _canonical(rule.extracted) == _canonical(judge.extracted)


def reader_counts(items: Sequence[Sample]) -> dict[str, int]:
    """Items by who decided their reading (``extracted_by``)."""
    counts = {"rule": 0, "judge": 0, "none": 0}
    for item in items:
        counts[item.reader] += 1
    return counts
