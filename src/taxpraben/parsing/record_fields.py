"""The fields of one record (TaxInspect, TaxPlan, TaxRisk): its gold read into fields, the
rule that scores each.

**Golds** are read the way predictions are (:func:`gold_fields`, a string by
:func:`~taxpraben.parsing.readers.fields.parse_fields`), and a record's fields are the gold's
own keys (:func:`record_fields`): the task spec's rule where it names a key, a kind inferred
from the gold value otherwise (:func:`infer_field_kind`). A prediction's fields are aligned
to them and compared in :mod:`taxpraben.parsing.field_match`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from taxpraben.parsing.field_match import field_text, key_forms
from taxpraben.parsing.jsonish import normalize_key
from taxpraben.parsing.numbers import parse_number
from taxpraben.parsing.readers.fields import as_object, flatten_fields, is_object_list, parse_fields
from taxpraben.task_spec import FieldKind, FieldRule

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

__all__ = [
    "SHORT_TEXT_MAX",
    "FieldKind",
    "RecordField",
    "gold_fields",
    "infer_field_kind",
    "record_fields",
]

#: Longest text (characters) inferred as a category; longer values are rationales.
SHORT_TEXT_MAX = 30
#: Punctuation that makes a value a sentence (a rationale) rather than a category.
_SENTENCE = re.compile(r"[。；;！!？?，,\n]")


def infer_field_kind(value: object) -> FieldKind:
    """The kind of a gold value whose key no task spec names.

    A number (int, float, Decimal) or a string :func:`~taxpraben.parsing.numbers.parse_number`
    reads as one number expression (``"76000元"``, ``"17.14万元"``, ``"13%"``) -> ``number``;
    a boolean, or a string of at most :data:`SHORT_TEXT_MAX` characters without sentence
    punctuation (``。；！？，`` or a line break) -> ``category``; anything else (longer text,
    lists, objects) -> ``text``, scored by BERTScore.
    """
    if isinstance(value, bool):
        return "category"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, str):
        text = value.strip()
        if parse_number(text) is not None:
            return "number"
        if len(text) <= SHORT_TEXT_MAX and not _SENTENCE.search(text):
            return "category"
    return "text"


def _has_value(value: object) -> bool:
    return value is not None and field_text(value) != ""


def gold_fields(answer: JSONValue) -> JSONObject | None:
    """The fields of a gold answer: leaf key -> value, or None when no field can be read.

    An object (or a list of name/value items) is taken as it is; a string is read by
    :func:`~taxpraben.parsing.readers.fields.parse_fields`, the reader of predictions (a JSON string, ``字段：值`` lines,
    headings, a Markdown table). Nested objects give their leaves under dotted paths
    (``{"方案一": {"税负": 1}}`` -> ``{"方案一.税负": 1}``), except a leaf that only repeats
    another key (:func:`_repeats`); lists of plain values stay one field. Fields
    with an empty key or an empty value (None, ``""``, ``[]``) are left out: there is
    nothing to score.
    """
    if isinstance(answer, Mapping):
        obj: Mapping[str, JSONValue] | None = answer
    elif isinstance(answer, list):
        obj = as_object(answer)
    elif isinstance(answer, str):
        obj = parse_fields(answer)
    else:
        obj = None
    if not obj:
        return None
    flat = flatten_fields(obj)
    leaves = {
        key: value
        for key, value in flat.items()
        if key.strip()
        and not isinstance(value, Mapping)
        and not is_object_list(value)
        and _has_value(value)
        and not _repeats(key, value, flat)
    }
    return leaves or None


_ABSENT = object()


def _repeats(key: str, value: JSONValue, flat: Mapping[str, JSONValue]) -> bool:
    """Whether a dotted leaf only repeats what another key says: ``偷税.罚款`` beside a plain
    ``罚款`` of the same value (a one-row table), or ``方案.方案一.名称`` = ``方案一`` (the
    name a list item is filed under)."""
    if "." not in key:
        return False
    parts = key.split(".")
    if flat.get(parts[-1], _ABSENT) == value:
        return True
    return len(parts) >= 2 and isinstance(value, (str, int)) and str(value).strip() == parts[-2]


@dataclass(frozen=True)
class RecordField:
    """One field of one record: the gold key, its value and the rule that scores it.

    ``rule.name`` is the gold key (results report the field under it); when the key is one a
    spec rule names (its name or a synonym), ``spec_name`` is that rule's name and the
    rule's kind, decimals and synonyms (the spec name among them) apply, so a prediction may
    use any of them. ``inferred`` is True when the kind was inferred from the gold value
    (:func:`infer_field_kind`).
    """

    rule: FieldRule
    gold: JSONValue
    inferred: bool
    spec_name: str | None = None

    @property
    def gold_key(self) -> str:
        return self.rule.name


def _spec_rule_for(key: str, rules: Sequence[FieldRule], taken: set[str], how: int) -> FieldRule | None:
    forms = key_forms(key)
    for rule in rules:
        if rule.name in taken:
            continue
        if (
            (how == 0 and key == rule.name)
            or (how == 1 and normalize_key(rule.name) in forms)
            or (how == 2 and key in rule.synonyms)
            or (how == 3 and any(normalize_key(s) in forms for s in rule.synonyms))
        ):
            return rule
    return None


def record_fields(
    gold: Mapping[str, JSONValue], rules: Sequence[FieldRule], *, aspects: bool = False
) -> list[RecordField]:
    """The fields that score one record: one per gold key, named by it, in the gold's order.

    Each gold key takes the spec rule it names, in passes over all keys: the rule's exact
    name, its normalised name (a dotted key also offers its last segment), a synonym, a
    normalised synonym; a rule serves one key. A key no rule names is inferred
    (:func:`infer_field_kind`). Spec rules the gold lacks are not part of the record.
    ``aspects`` (multi-aspect generation such as TaxRisk): every field is text.
    """
    keys = list(gold)
    taken: set[str] = set()
    chosen: dict[str, FieldRule] = {}
    for how in range(4):
        for key in keys:
            if key in chosen:
                continue
            rule = _spec_rule_for(key, rules, taken, how)
            if rule is not None:
                chosen[key] = rule
                taken.add(rule.name)
    out: list[RecordField] = []
    for key in keys:
        value = gold[key]
        rule = chosen.get(key)
        if rule is None:
            kind: FieldKind = "text" if aspects else infer_field_kind(value)
            out.append(RecordField(FieldRule(name=key, kind=kind), value, True))
            continue
        synonyms = [n for n in (rule.name, *rule.synonyms) if n != key]
        kind = "text" if aspects else rule.kind
        scored = dataclasses.replace(rule, name=key, synonyms=synonyms, kind=kind)
        out.append(RecordField(scored, value, False, rule.name))
    return out
