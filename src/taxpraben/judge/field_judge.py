"""The judge on the answer-bearing fields of a field task (TaxInspect, TaxPlan): which
fields of an item it is asked for, in what form, and its reply merged into the rules' reading.

A mixed answer is read field by field (:func:`taxpraben.kinds.field_golds.prepare_fields`: per
field ``pred``, ``gold``, ``score``, ``status``, ``kind``, ``matched_by`` in ``Sample.fields``).
Its *answer-bearing* fields are the exact ones (``number``, ``category``: scored by EM); the
text fields (the rationale) go to BERTScore: they are compared, not extracted, and are never
asked. An item is asked for the answer-bearing fields the rules did not read (``missing``)
and for those they read with low confidence (:data:`LOW_CONFIDENCE`); an item whose
answer-bearing fields the rules all read with confidence is only asked by the audit, for
all of them. The judge answers a JSON object with exactly the asked keys (the gold's own
key names), read back by the task's own reader; only the asked fields are adopted, each
with ``matched_by`` :data:`JUDGE`, and the item is then scored by the task's own metric.

Pure functions, no I/O; the judge's stage (:mod:`.stage`) reaches them through
:mod:`.reading` and :mod:`.prompt`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from taxpraben.kinds import kind_of
from taxpraben.kinds.profiles import PAPER_RULES
from taxpraben.parsing.field_match import field_text, field_value_matches
from taxpraben.parsing.numbers import parse_number
from taxpraben.parsing.readers.fields import without_gloss
from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.parsing.record_fields import gold_fields, record_fields
from taxpraben.parsing.units import asked_unit
from taxpraben.records import Record
from taxpraben.results.samples import Sample
from taxpraben.scoring.items import prepare_item
from taxpraben.task_spec import FieldRule, TaskSpec

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

#: The readings the rules themselves mark as a fallback, asked of the judge as low
#: confidence: a field aligned by key similarity (``matched_by: fuzzy``, the last pass of
#: :func:`~taxpraben.parsing.field_match.align_fields`, after the exact key, its normalised
#: form and the spec's synonyms). Nothing else a reader records says so: the number, letter,
#: label and span readers return a value or why there is none, never which rule found it.
LOW_CONFIDENCE: frozenset[str] = frozenset({"fuzzy"})
#: ``matched_by`` of a field adopted from the judge's reply.
JUDGE = "judge"
#: A field value that is the judge's own "no answer" for that field.
_DECLINED = frozenset({"【无答案】", "无答案"})


def fields_task(spec: TaskSpec) -> bool:
    """Whether the task's kind reads named fields with an exact part (mixed: TaxInspect,
    TaxPlan); multi-aspect generation (TaxRisk) reads aspects, every one of them text."""
    return kind_of(spec).field_mode(spec) == "fields"


def answer_bearing(item: Sample) -> list[str]:
    """The item's exact (EM-scored) fields, in the gold's order; [] for an item read whole
    or without fields."""
    return [name for name, info in (item.fields or {}).items() if info.get("kind") != "text"]


def unread_fields(item: Sample) -> list[str]:
    """The answer-bearing fields the rules did not read (missing or unreadable)."""
    return [name for name in answer_bearing(item) if item.fields and item.fields[name].get("status") != "ok"]


def low_confidence_fields(item: Sample) -> list[str]:
    """The answer-bearing fields the rules read by a fallback (:data:`LOW_CONFIDENCE`)."""
    fields = item.fields or {}
    return [name for name in answer_bearing(item)
            if fields[name].get("status") == "ok" and fields[name].get("matched_by") in LOW_CONFIDENCE]  # fmt: skip


def asked_fields(item: Sample) -> list[str]:
    """The fields the judge is asked for when the item is sent for what the rules left:
    the unread and the low-confidence answer-bearing fields, in the gold's order (none for a
    generation error, which has no output)."""
    if item.status == "error":
        return []
    doubtful = set(unread_fields(item)) | set(low_confidence_fields(item))
    return [name for name in answer_bearing(item) if name in doubtful]


def fields_to_ask(item: Sample) -> list[str]:
    """The fields a prompt about the item's output asks: :func:`asked_fields`, else (an
    output the rules read entirely, only ever sent by the audit) every answer-bearing field."""
    return asked_fields(item) or answer_bearing(item)


def prompt_fields(spec: TaskSpec, record: Record, output: str) -> list[str]:
    """:func:`fields_to_ask` of ``output`` read by this project's rules: the prompt is a
    function of (record, output) alone. Under ``--profile taxben`` the readings are the
    same but for a copy of the prompt, which these rules read as nothing: every field is
    then asked (a superset of what the item lacks; only its own fields are adopted)."""
    return fields_to_ask(prepare_item(spec, record, 0, output, None, PAPER_RULES))


# ---------------------------------------------------------------------------- the answer form


def _record_rules(spec: TaskSpec, record: Record) -> dict[str, tuple[FieldRule, JSONValue]]:
    """The record's fields (gold key -> its rule and gold value), as the kind scores them."""
    gold = gold_fields(record.answer)  # as :func:`~taxpraben.kinds.field_golds.prepare_fields` reads it
    if gold is None or spec.fields is None:
        return {}
    return {f.gold_key: (f.rule, f.gold) for f in record_fields(gold, spec.field_rules, aspects=False)}


def _number_form(gold: object, query: str) -> str:
    """How to write a number field: in the unit its gold is compared in (a gold written with
    a multiplier or 元 compares by value in 元; a bare one is in the unit the question asks)."""
    match = parse_number(gold) if isinstance(gold, str) else None
    if match is not None and match.is_percent:
        return "一个百分数（阿拉伯数字加%，如13%）"
    unit = "元" if match is not None and (match.scaled or match.currency) else asked_unit(query).name
    return f"一个数字（阿拉伯数字，以{unit}为单位，不写单位，不用千分位）"


def field_forms(spec: TaskSpec, record: Record, names: Sequence[str]) -> dict[str, str]:
    """Each named field's expected form (from its kind and its gold's unit, never its value)."""
    rules = _record_rules(spec, record)
    forms = {}
    for name in names:
        if name not in rules:
            continue
        rule, gold = rules[name]
        if rule.kind == "number":
            forms[name] = _number_form(gold, record.query)
        else:
            forms[name] = "一个类别词（照题目要求中的写法写出；题目列出可选项时取其一）"
    return forms


def fields_form(spec: TaskSpec, record: Record, names: Sequence[str] | None = None) -> str:
    """The answer form of a field task: a JSON object with exactly the asked keys (the
    gold's own key names) and each one's form; ``names`` None: every answer-bearing field
    of the record."""
    if names is None:
        names = [n for n, (rule, _) in _record_rules(spec, record).items() if rule.kind != "text"]
    forms = field_forms(spec, record, names)
    lines = [f"一个JSON对象，只含下列{len(forms)}个键（键名照写，不加其他键）："]
    lines += [f'"{name}"：{form}' for name, form in forms.items()]
    lines.append("考生回答没有给出的字段，值写 null。")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- the reply


def _holds_number(value: object) -> bool:
    """Whether a field value states a number, as the field matcher reads one."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, (int, float, Decimal)):
        return Decimal(repr(value) if isinstance(value, float) else value).is_finite()
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return _holds_number(value[0])
    text = field_text(value)
    return bool(text) and (parse_number(text) or parse_number(without_gloss(text)) or extract_final_number(text)) is not None


def _declined(info: Mapping[str, JSONValue] | None) -> bool:
    """The judge wrote the key with null (or the no-answer token): the output gives no value."""
    if info is None:
        return False
    pred = info.get("pred")
    if pred is None:
        return info.get("matched_by") not in (None, "missing")
    return isinstance(pred, str) and pred.strip().strip("。.").strip() in _DECLINED


def readable_field(info: Mapping[str, JSONValue] | None) -> bool:
    """Whether the reply's reading of a field holds a value to adopt: present, not declined,
    and a number for a number field."""
    if info is None or info.get("status") != "ok" or _declined(info):
        return False
    return info.get("kind") != "number" or _holds_number(info.get("pred"))


@dataclass(frozen=True)
class FieldMerge:
    """The judge's reply merged into an item: the merged reading (None when nothing was
    adopted), the asked fields adopted, those the judge declined (null), and those its reply
    does not read (a missing key, an empty value, no number for a number field)."""

    item: Sample | None
    adopted: tuple[str, ...]
    declined: tuple[str, ...]
    unreadable: tuple[str, ...]


def merge_fields(item: Sample, reply: Sample, names: Sequence[str]) -> FieldMerge:
    """``item``'s reading with the fields ``names`` taken from ``reply`` (the judge's reply
    read by the task's own reader, so each field is scored against the gold by the task's
    matcher) where the reply reads them; every other field stays as the rules read it, and
    so do the text pairs (the rationale is never asked). ``item`` is not changed."""
    adopted, declined, unreadable = [], [], []
    for name in names:
        info = (reply.fields or {}).get(name)
        if readable_field(info):
            adopted.append(name)
        elif _declined(info):
            declined.append(name)
        else:
            unreadable.append(name)
    if not adopted:
        return FieldMerge(None, (), tuple(declined), tuple(unreadable))
    fields = copy.deepcopy(item.fields or {})
    for name in adopted:
        fields[name] = {**copy.deepcopy((reply.fields or {})[name]), "matched_by": JUDGE}
    merged = item.evolve(fields=fields, scores=dict(item.scores), status="ok", failure=None,
                         extracted={name: info["pred"] for name, info in fields.items() if info.get("pred") is not None})
    return FieldMerge(merged, tuple(adopted), tuple(declined), tuple(unreadable))


def _same_value(kind: str, a: object, b: object) -> bool:
    """Two readings of one field are the same value by the field matcher (numbers by value
    at 2 decimals, categories after normalisation), else as text."""
    rule = FieldRule(name="field", kind="number" if kind == "number" else "category")
    for pred, gold in ((a, b), (b, a)):
        try:
            return field_value_matches(pred, gold, rule)
        except ValueError:  # the side taken as the reference holds no number
            continue
    return " ".join(field_text(a).split()) == " ".join(field_text(b).split())


def same_fields(rule: Sample, judge: Sample, names: Sequence[str]) -> bool:
    """Whether the judge read every field of ``names`` (``matched_by`` judge) as the rules
    did (the same canonical value)."""
    rule_fields, judge_fields = rule.fields or {}, judge.fields or {}
    for name in names:
        ours, theirs = rule_fields.get(name), judge_fields.get(name)
        if ours is None or theirs is None or theirs.get("matched_by") != JUDGE:
            return False
        if ours.get("status") != "ok" or not _same_value(str(ours.get("kind")), ours.get("pred"), theirs.get("pred")):
            return False
    return True


def field_disagreements(rule: Sample, judge: Sample | None) -> dict[str, JSONObject]:
    """Per asked field on which the two readers differ: the rules' value and the judge's
    (None where the judge read none); the audit's disagreements list, field by field."""
    out: dict[str, JSONObject] = {}
    judge_fields = (judge.fields or {}) if judge is not None else {}
    for name in fields_to_ask(rule):
        ours = (rule.fields or {})[name]
        theirs = judge_fields.get(name)
        value = theirs.get("pred") if theirs is not None and theirs.get("matched_by") == JUDGE else None
        if judge is None or not same_fields(rule, judge, [name]):
            out[name] = {"rule": ours.get("pred"), "judge": value}
    return out
