"""The rules of the fields reader (records whose answer is fields: a JSON object, key lines,
a table), each an attempt over one :class:`FieldsView` of the output, run in the order of the
``fields`` chain (:data:`taxpraben.parsing.rules.CHAINS`; parsing is described in
:mod:`taxpraben.parsing.field_parse`, whose helpers the attempts call).

A task that needs its own fields (``accept``: whether the parsed fields hold one of them)
gets ``veto.no-field`` for an output that parses but holds none; the veto keeps what was
parsed as its value (the fields are still laid against the gold, all missing)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, TypeAlias

from taxpraben.parsing._jsonish import find_json_values
from taxpraben.parsing.chain import Chain
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.field_parse import (
    _blocks,
    _parse_lines,
    as_object,
    flatten_fields,
    with_key_units,
)
from taxpraben.parsing.region import NO_ANSWER, Reading, veto_of
from taxpraben.parsing.rules import CHAINS

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject

__all__ = ["FIELDS_ATTEMPTS", "NO_FIELD_READ", "FieldsView", "fields_chain", "parse_fields", "read_fields", "read_fields_chain"]

#: The failure of an output that parses but holds none of the task's fields.
NO_FIELD_READ = "no field of the task read"
_NO_ANSWER = Reading(None, NO_ANSWER, rule=veto_of(NO_ANSWER))

#: The fields read from one output (flattened): JSON values, or strings from key lines.
Fields: TypeAlias = "JSONObject"


class FieldsView:
    """One output as the fields rules read it: ``failure`` a copy of the prompt found
    before (the text is then empty), the text cleaned, and (on first use) the largest JSON
    object in it and its key lines."""

    def __init__(self, text: str, failure: str | None = None, accept: Callable[[Fields], bool] | None = None):
        self.failure = failure
        self.accept = accept
        self.cleaned = clean_prediction(text)

    @cached_property
    def json_fields(self) -> Fields | None:
        best: Fields | None = None
        for value in find_json_values(self.cleaned):
            obj = as_object(value)
            if obj:
                flat = flatten_fields(obj)
                if best is None or len(flat) >= len(best):
                    best = flat
        return with_key_units(best) if best else None

    @cached_property
    def line_fields(self) -> Fields | None:
        lines = _parse_lines(_blocks(self.cleaned))
        return with_key_units(lines) if lines else None

    @cached_property
    def parsed(self) -> Fields | None:
        """What parses: the JSON object, else the key lines."""
        if self.failure or not self.cleaned:
            return None
        return self.json_fields or self.line_fields

    def accepted(self, fields: Fields) -> bool:
        return self.accept is None or self.accept(fields)


FieldsAttempt = Callable[[FieldsView], Reading | None]


def _copy_of_prompt(view: FieldsView) -> Reading | None:
    failure = view.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


def _json(view: FieldsView) -> Reading | None:
    parsed = view.parsed
    if parsed is None or parsed is not view.json_fields or not view.accepted(parsed):
        return None
    return Reading(parsed, rule="fields.json")


def _lines(view: FieldsView) -> Reading | None:
    parsed = view.parsed
    if parsed is None or view.json_fields is not None or not view.accepted(parsed):
        return None
    return Reading(parsed, rule="fields.lines")


def _no_field(view: FieldsView) -> Reading | None:
    parsed = view.parsed
    if parsed is None or view.accepted(parsed):
        return None
    return Reading(parsed, NO_FIELD_READ, rule=veto_of(NO_FIELD_READ))


def _no_answer(view: FieldsView) -> Reading | None:
    return _NO_ANSWER


#: Each fields rule's attempt, by rule name.
FIELDS_ATTEMPTS: dict[str, FieldsAttempt] = {
    "veto.copy-of-prompt": _copy_of_prompt,
    "fields.json": _json,
    "fields.lines": _lines,
    "veto.no-field": _no_field,
    "veto.no-answer": _no_answer,
}


@lru_cache(maxsize=64)
def fields_chain(names: tuple[str, ...] | None = None) -> Chain[FieldsView]:
    """The fields chain: ``names`` in order (default: the ``fields`` chain of the registry)."""
    return Chain("fields", CHAINS["fields"] if names is None else names, FIELDS_ATTEMPTS)


def read_fields_chain(
    text: str,
    failure: str | None = None,
    accept: Callable[[Fields], bool] | None = None,
    chain: tuple[str, ...] | None = None,
) -> Reading:
    """The fields of an output read by the fields chain (a veto's value: what was parsed)."""
    return fields_chain(chain).run(FieldsView(text, failure, accept), _NO_ANSWER)


def parse_fields(text: str) -> JSONObject | None:
    """The fields of an output as a dict (flattened, see module doc), or None when none parse.

    ``text`` is the raw output (cleaned here). Values keep their JSON types; values read
    from ``字段：值`` lines are strings.
    """
    return read_fields(text)[0]


def read_fields(text: str) -> tuple[JSONObject | None, str]:
    """:func:`parse_fields` and the rule that read the fields: ``fields.json`` (a JSON
    object), ``fields.lines`` (key lines, headings, a table) or ``veto.no-answer``; the
    ``fields`` chain (:mod:`taxpraben.parsing.fields_rules`)."""
    reading = read_fields_chain(text)
    value = reading.value if isinstance(reading.value, dict) else None
    return value, reading.rule or "veto.no-answer"
