"""A model output read into fields (TaxInspect, TaxPlan, TaxRisk): JSON, key lines, tables.

Gold strings are read the same way (:func:`taxpraben.parsing.record_fields.gold_fields`); the fields
are aligned to the gold's and compared in :mod:`taxpraben.parsing.field_match`.

**Parsing** (:func:`parse_fields`), on the cleaned output:

1. JSON: every ``{...}``/``[...]`` span is parsed strictly, then with json-repair (code
   fences, trailing commas, single quotes, unquoted keys, text around the object, a missing
   closing brace, Chinese quotes, colons and commas as structure). Of several objects the
   one with the most (flattened) keys wins, the later one on ties. A top-level list is
   accepted when it is a list of name/value items (``[{"字段": "罚款", "值": 500}, ...]``,
   names from :data:`ITEM_NAME_KEYS`, values from :data:`ITEM_VALUE_KEYS`; they become
   ``{"罚款": 500}``) or a list of objects (merged, first occurrence of a key wins).
2. Else ``字段：值`` lines (half- or full-width colon), also ``**字段**：值``,
   ``**字段：**值``, ``【字段】值``, bulleted and numbered lines (``1. 字段：值``,
   ``一、字段：值``, ``- 字段：值``), and headings (``## 字段`` or a line ``**字段**``)
   whose value is on the following lines; bare numbered headings (``1. 主要风险`` alone
   on its line) too, at the top level and in sequence (see :func:`_parse_lines`). A line
   that is not a key line continues the value of the key before it (multi-line
   rationales); lines before the first key are ignored. A key is at most 30 characters,
   has no sentence punctuation and is not a number. Markdown tables (header, ``---``
   rule, rows) give fields where they stand (:func:`_table_fields`): two columns are a row
   per field; more columns (or ``| 方案 | 税负 |``) a row per entity with a column per
   field (``方案一.税负``); a unit in a header (``金额（万元）``) goes with the column's
   numbers (``17.14`` -> ``"17.14万元"``).
3. Else None (a format failure).

**Nesting.** Nested objects are kept *and* flattened to dotted paths: ``{"罚款": {"金额":
500}}`` gives ``"罚款"`` (the dict) and ``"罚款.金额"`` (500). A list of objects is flattened
per item under the item's name (its ``方案``/``名称``/``name``... value) or its 1-based
index: ``{"方案": [{"名称": "方案一", "税负": 100}]}`` gives ``"方案.方案一.税负"``. Lists of
plain values stay lists (rendered by :func:`~taxpraben.parsing.field_match.field_text`).
Nesting deeper than :data:`MAX_FLATTEN_DEPTH` (8) levels is kept but not flattened further.

**The rules.** Reading fields is a chain of rules declared here, each beside its attempt
over one :class:`FieldsView` of the output, run in the order of the ``fields`` chain
(:data:`FIELDS_CHAIN`). A task that needs its own fields (``accept``:
whether the parsed fields hold one of them) gets ``veto.no-field`` for an output that parses
but holds none; the veto keeps what was parsed as its value (the fields are still laid
against the gold, all missing).

**Where each field was read** (:func:`field_spans`): the value of each field is found again
after its key, as the parser read it (``"key": value`` in JSON, ``key：value`` on a line,
``## key`` then the value below, ``【key】value``, a table row, a correction's ``key应为value``),
and its span given in the raw output. A rationale paragraph that repeats the numbers
(``节约税额为31200元``) is not where a field was read: the key and its separator must lead to
the value.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, TypeAlias

from taxpraben.parsing.chain import Chain, chain_for
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.jsonish import find_json_values, normalize_key
from taxpraben.parsing.readers.shared import COPY_OF_PROMPT_RULE, NO_ANSWER_RULE
from taxpraben.parsing.region import NO_ANSWER, Reading, veto_of
from taxpraben.parsing.registry import Example, register_rule

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

__all__ = [
    "FIELDS_CHAIN",
    "ITEM_NAME_KEYS",
    "ITEM_VALUE_KEYS",
    "MAX_FLATTEN_DEPTH",
    "NO_FIELD_READ",
    "FieldsView",
    "as_object",
    "field_spans",
    "fields_chain",
    "flatten_fields",
    "is_object_list",
    "parse_fields",
    "read_fields",
    "read_fields_chain",
    "with_key_units",
    "without_gloss",
]


#: Keys naming an item in a list of name/value items, or an item of a list of objects.
ITEM_NAME_KEYS: tuple[str, ...] = (
    "字段",
    "字段名",
    "名称",
    "项目",
    "方案",
    "指标",
    "方面",
    "维度",
    "name",
    "key",
    "field",
    "title",
)
#: Keys holding the value in a list of name/value items.
ITEM_VALUE_KEYS: tuple[str, ...] = (
    "值",
    "内容",
    "金额",
    "数值",
    "结果",
    "结论",
    "value",
    "content",
)

#: Nesting deeper than this is kept but not flattened further.
MAX_FLATTEN_DEPTH = 8


def _item_name(item: Mapping[str, JSONValue]) -> str | None:
    wanted = {normalize_key(k) for k in ITEM_NAME_KEYS}
    for key, value in item.items():
        if (
            normalize_key(key) in wanted
            and isinstance(value, (str, int, float))
            and not isinstance(value, bool)
        ):
            text = str(value).strip()
            if text:
                return text
    return None


def _name_value_items(items: list[JSONValue]) -> JSONObject | None:
    """``[{"字段": k, "值": v}, ...]`` as ``{k: v}``; None when the list is not of that shape."""
    if not items or not all(isinstance(i, dict) and len(i) == 2 for i in items):
        return None
    values = {normalize_key(k) for k in ITEM_VALUE_KEYS}
    out: JSONObject = {}
    for item in items:
        name = _item_name(item)
        rest = [v for k, v in item.items() if normalize_key(k) in values]
        if name is None or len(rest) != 1:
            return None
        out.setdefault(name, rest[0])
    return out


def is_object_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(i, dict) for i in value)


def _flatten_into(out: JSONObject, obj: Mapping[str, JSONValue], prefix: str, depth: int) -> None:
    for raw_key, value in obj.items():
        key = f"{prefix}.{raw_key}" if prefix else str(raw_key)
        if is_object_list(value):
            value = _name_value_items(value) or value
        out.setdefault(key, value)
        if depth >= MAX_FLATTEN_DEPTH:
            continue
        if isinstance(value, dict):
            _flatten_into(out, value, key, depth + 1)
        elif is_object_list(value):
            for index, item in enumerate(value, start=1):
                _flatten_into(out, item, f"{key}.{_item_name(item) or index}", depth + 1)


def flatten_fields(obj: Mapping[str, JSONValue]) -> JSONObject:
    """``obj`` with every nested object also reachable by its dotted path (see module doc)."""
    out: JSONObject = {}
    _flatten_into(out, obj, "", 0)
    return out


def as_object(value: JSONValue) -> JSONObject | None:
    if isinstance(value, dict):
        return value
    if is_object_list(value):
        pairs = _name_value_items(value)
        if pairs is not None:
            return pairs
        merged: JSONObject = {}
        for item in value:
            for key, item_value in item.items():
                merged.setdefault(str(key), item_value)
        return merged
    return None


_BULLET = r"(?:[-*+•·>]\s+|\d{1,2}[.、)]\s*|[(（]?[一二三四五六七八九十]{1,3}[)）、.]\s*|[(（]\d{1,2}[)）]\s*)?"
_KEY_LINE = re.compile(
    r"^"
    + _BULLET
    + r"(?:\*\*|__)?\s*(?P<key>[^:：\n]{1,40}?)\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(?P<value>.*)$"
)
_BRACKET_LINE = re.compile(r"^" + _BULLET + r"【(?P<key>[^】\n]{1,40})】\s*[:：]?\s*(?P<value>.*)$")
_HEADING_LINE = re.compile(
    r"^(?:#{1,6}\s*"
    + _BULLET
    + r"(?P<key>[^\n]{1,40}?)\s*#*|"
    + _BULLET
    + r"\*\*(?P<key2>[^*\n]{1,40})\*\*)\s*$"
)
_BAD_KEY = re.compile(r"[。，,；;！!？?=《》〔〕“”\"()（）]|https?$")
_WORDLIKE = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def _valid_key(key: str) -> str | None:
    key = key.strip().strip("*_`#").strip()
    if not key or len(key) > 30 or _BAD_KEY.search(key) or not _WORDLIKE.search(key):
        return None
    return key


def _line_key(line: str) -> tuple[str, str] | None:
    for pattern in (_BRACKET_LINE, _KEY_LINE):
        m = pattern.match(line)
        if m:
            key = _valid_key(m.group("key"))
            value = m.group("value").strip().strip("*").strip()
            if key is not None and not value.startswith("//"):
                return key, value
    m = _HEADING_LINE.match(line)
    if m:
        key = _valid_key(m.group("key") or m.group("key2") or "")
        if key is not None:
            return key, ""
    return None


_NUMBERING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:(?P<arabic>\d{1,2})\s*[.、．)）]|(?P<chinese>[一二三四五六七八九十]{1,3})\s*[、.．])\s*"
)
_CN_NUMBERS = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)}


def _numbering(line: str) -> tuple[str, int, int] | None:
    """``(style, number, end)`` of a line's leading ``1.`` / ``一、`` numbering, else None."""
    m = _NUMBERING.match(line)
    if m is None:
        return None
    if m.group("arabic") is not None:
        return "arabic", int(m.group("arabic")), m.end()
    digits = m.group("chinese")
    if len(digits) == 1:
        return "chinese", _CN_NUMBERS[digits], m.end()
    if digits[0] == "十" and len(digits) == 2:
        return "chinese", 10 + _CN_NUMBERS[digits[1]], m.end()
    return None


#: The fields of a Markdown table, flattened: a JSON object (strings, objects of strings).
Table: TypeAlias = "JSONObject"
#: A line, or the fields of a Markdown table standing where the table was.
Block: TypeAlias = "str | Table"


def _parse_lines(blocks: Sequence[Block]) -> JSONObject:
    """Fields of ``字段：值`` lines, headings and tables (module doc, step 2), in order.

    A bare numbered heading (``1. 主要风险`` alone on its line) opens a field only at the
    top level (before any other key, or while every key so far was numbered) and only when
    it continues the numbering (the first is 1 or 一, then 2, 3 ... in that style), so
    the numbered items inside a field's value (``防范建议：`` then ``1. 建立台账``) stay its
    value. A table ends the value of the key before it; its fields join the others.
    """
    out: JSONObject = {}  # a line key's value is the list of its lines until joined
    current: list[str] | None = None
    numbered: tuple[str, int] | None = None  # style and number of the last numbered key
    top_level = True
    for block in blocks:
        if isinstance(block, dict):
            for key, value in block.items():
                out.setdefault(key, value)
            current = None
            continue
        found = _line_key(block)
        number = _numbering(block) if top_level else None
        # The first numbered key fixes the style: 1 or 一 opens it, then the next number
        # of that style; other styles (sub-items) are content.
        continues = number is not None and (
            number[1] == 1 if numbered is None else (number[0], number[1]) == (numbered[0], numbered[1] + 1)
        )
        if found is None and continues and number is not None:
            numbered_key = _valid_key(block[number[2] :].strip().rstrip("：:"))
            found = (numbered_key, "") if numbered_key is not None else None
        if found is not None:
            if continues and number is not None:
                numbered = (number[0], number[1])
            else:
                top_level = False
            key, value = found
            if key in out:
                current = None  # a repeated key: keep the first, ignore this block
                continue
            current = out[key] = [value] if value else []
        elif current is not None and block.strip():
            current.append(block.strip())
    fields = {key: "\n".join(value) if isinstance(value, list) else value for key, value in out.items()}
    return _apply_corrections(fields)


#: Keys of a line that corrects an earlier field: ``更正：罚款应为130,000元``.
_CORRECTION_KEYS = frozenset({"更正", "修正", "订正", "纠正", "更正说明", "勘误"})
#: A correction is a line or two; only its start is searched (bounds the work on hostile input).
_MAX_CORRECTION_CHARS = 2000
_CORRECTED_TO = re.compile(r"\s*(?:应该?为|应是|更正为|改为|修正为|应改为|为)\s*")


def _apply_corrections(fields: JSONObject) -> JSONObject:
    """A correction line replaces the value of the field it names first (followed by 应为,
    改为 ...) with what follows; the correction line itself is dropped once applied."""
    for key in [k for k in fields if k in _CORRECTION_KEYS]:
        text = str(fields[key])[:_MAX_CORRECTION_CHARS]
        found: tuple[int, str, str] | None = None
        for name in fields:
            if name in _CORRECTION_KEYS:
                continue
            at = text.find(name)
            while at >= 0:
                m = _CORRECTED_TO.match(text, at + len(name))
                if m and (found is None or at < found[0]):
                    found = (at, name, text[m.end() :].strip())
                    break
                at = text.find(name, at + 1)
        if found is not None and found[2]:
            fields[found[1]] = found[2]
            del fields[key]
    return fields


# --- glosses: a value's trailing explanation ------------------------------------------------

#: A trailing bracketed gloss of a category value: ``方案一（自营仓储）``.
_GLOSS = re.compile(r"^(?P<base>.+?)\s*[（(](?P<inner>[^（）()]*)[）)]\s*$")


#: A category value followed by an explanation: ``方案一，即在合同中分别列明``.
_EXPLAINED = re.compile(r"^(?P<base>[^，,；;。]+?)\s*[，,；;]\s*(?:即|也就是|因为|因|由于|理由|原因|该方案|此方案|其|这|系)")
#: A short category value labelling what follows a colon: ``方案一：提供仓储服务``.
_LABELLED = re.compile(r"^(?P<base>[^:：，,。]{1,12}?)\s*[:：]\s*\S")


def without_gloss(text: str) -> str:
    """``text`` without a trailing bracketed gloss, or the head of an explained or labelling
    value (``方案一，即……``, ``方案一：……``)."""
    m = _GLOSS.match(text.strip()) or _EXPLAINED.match(text.strip()) or _LABELLED.match(text.strip())
    return m.group("base") if m else text


def bracketed_gloss(text: str) -> str | None:
    """What a trailing bracket of ``text`` holds (``自营仓储（方案一）`` -> ``方案一``), or None."""
    m = _GLOSS.match(text.strip())
    return m.group("inner").strip() if m else None


def after_label(text: str) -> str | None:
    """What follows a short label and a colon (``建议：方案一`` -> ``方案一``), or None."""
    m = _LABELLED.match(text.strip())
    return text.strip()[m.end("base") :].lstrip(" \t:：") if m else None


# --- Markdown tables ------------------------------------------------------------------------

_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
#: Header words of a name/value table (``| 字段 | 值 |``): such a header row is not a field.
_GENERIC_HEADERS = frozenset(
    normalize_key(k)
    for k in (
        *ITEM_NAME_KEYS, *ITEM_VALUE_KEYS, "字段名称", "项目名称", "说明", "答案", "备注", "数据",
        "取值", "计算结果", "分析", "要素", "事项", "类别", "item", "result", "description",
    )
)  # fmt: skip
_INDEX_HEADERS = frozenset({"序号", "编号", "no", ""})
#: Header words of a column of entity names (``| 方案 | 税负 |``).
_NAME_HEADERS = frozenset(normalize_key(k) for k in (*ITEM_NAME_KEYS, "方案名称", "项目名称", "税种"))
_HEADER_UNIT = re.compile(
    r"^(?P<name>.*?)\s*[（(]\s*(?:单位\s*[:：]\s*)?(?P<unit>[千百]?[万亿]?元|[万亿]|%)\s*[）)]\s*$"
)
_BARE_NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?$")


def _generic(header: str) -> bool:
    """A header that only names the column (``值``, ``金额/结论``), not a field."""
    parts = [p for p in re.split(r"[/／、|]|和|及", header) if p.strip()]
    return bool(parts) and all(normalize_key(p) in _GENERIC_HEADERS for p in parts)


def _entity_name(cell: str) -> str | None:
    """A row's entity name without its gloss: ``方案一（自营仓储）``, ``方案一：分别列明`` -> 方案一."""
    name = re.split(r"[:：]", cell, maxsplit=1)[0]
    return _valid_key(without_gloss(name))


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip().strip("*_`").strip() for c in re.split(r"(?<!\\)\|", inner)]


def _header(cell: str) -> tuple[str, str]:
    """A header cell as (name, unit): ``金额（万元）`` -> ``("金额", "万元")``."""
    m = _HEADER_UNIT.match(cell)
    return (m.group("name").strip() or cell, m.group("unit")) if m else (cell, "")


def _with_unit(value: str, unit: str) -> str:
    """A bare number cell takes its column's unit, so the number reader sees ``17.14万元``."""
    return value + unit if unit and _BARE_NUMBER.match(value) else value


def _table_fields(rows: list[list[str]]) -> dict[str, str | dict[str, str]]:
    """Fields of one table (``rows[0]`` is the header, the separator row is gone).

    Two columns: a row per field (``| 罚款 | 500 |``); the header row is a field too unless
    it names the columns (``| 字段 | 值 |``). More columns, or two whose header is a name
    column and a field (``| 方案 | 税负 |``): a row per entity, a column per field, nested as ``{entity: {column: value}}`` (flattened to ``entity.column``); with a
    single entity row its columns are also plain fields (listed first). A leading 序号
    column is dropped. A unit in a header (``金额（万元）``) is appended to the column's bare
    numbers.
    """
    header = rows[0]
    body = [r for r in rows[1:] if any(r)]
    if len(header) > 2 and normalize_key(header[0]) in _INDEX_HEADERS:
        header, body = header[1:], [r[1:] for r in body]
    names = [_header(c) for c in header]
    width = len(names)
    body = [(r + [""] * width)[:width] for r in body]
    out: dict[str, str | dict[str, str]] = {}
    # | 方案 | 税负 |: a name column and one field column is a row per entity too
    entity_rows = width == 2 and normalize_key(names[0][0]) in _NAME_HEADERS and not _generic(names[1][0])
    if width == 2 and not entity_rows:
        unit = names[1][1]
        generic = all(_generic(n) for n, _ in names)
        pairs = ([] if generic else [(header[0], header[1])]) + [(r[0], r[1]) for r in body]
        for raw_key, value in pairs:
            key, key_unit = _header(raw_key)
            valid = _valid_key(key)
            if valid is not None and value:
                out.setdefault(valid, _with_unit(value, key_unit or unit))
        return out
    if width < 2:
        return out
    if len(body) == 1:
        for (name, unit), value in zip(names, body[0], strict=True):
            if _valid_key(name) and value:
                out.setdefault(name, _with_unit(value, unit))
    for row in body:
        entity = _entity_name(row[0])
        if entity is None:
            continue
        values = {
            name: _with_unit(value, unit)
            for (name, unit), value in zip(names[1:], row[1:], strict=True)
            if _valid_key(name) and value
        }
        if values:
            out.setdefault(entity, values)
    return out


def _blocks(text: str) -> list[Block]:
    """The lines of ``text``, each Markdown table (header, ``---`` rule, rows) replaced by
    its fields (flattened)."""
    lines = text.split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and _TABLE_ROW.match(lines[i]) and _TABLE_RULE.match(lines[i + 1]):
            rows = [_cells(lines[i])]
            i += 2
            while i < len(lines) and _TABLE_ROW.match(lines[i]):
                rows.append(_cells(lines[i]))
                i += 1
            out.append(flatten_fields(_table_fields(rows)))
            continue
        out.append(lines[i])
        i += 1
    return out


#: A key that states the unit of its value: ``少缴税款（万元）``, ``税负(元)``.
_KEY_UNIT = re.compile(r"^(?P<base>.+?)\s*[（(](?P<unit>万元|亿元|千元|元|万|亿)[)）]\s*$")


def with_key_units(fields: JSONObject) -> JSONObject:
    """``fields`` with a unit its key states written after its bare numbers (``{"少缴税款（万元）":
    26}`` -> ``{"少缴税款": "26万元"}``, 260,000 yuan), under the key without the unit (yuan,
    the unit of the golds, is only taken off the key)."""
    out: JSONObject = {}
    for key, value in fields.items():
        m = _KEY_UNIT.match(str(key))
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        bare = number or (isinstance(value, str) and _BARE_AMOUNT.match(value.strip()))
        if m and bare and m.group("base") not in fields:
            unit = m.group("unit")
            out[m.group("base")] = value if unit == "元" else f"{value}{unit}".replace(" ", "")
        else:
            out[key] = value
    return out


_BARE_AMOUNT = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?$")


# ---------------------------------------------------------------- the rules


#: The failure of an output that parses but holds none of the task's fields.
NO_FIELD_READ = "no field of the task read"
_NO_ANSWER = Reading(None, NO_ANSWER, rule=NO_ANSWER_RULE.name)

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


@COPY_OF_PROMPT_RULE.reads("fields")
def _copy_of_prompt(view: FieldsView) -> Reading | None:
    failure = view.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


JSON_FIELDS_RULE = register_rule(
    "fields.json", kinds=("fields",), tier=1, confidence="high",
    description="The fields of a JSON object in the output (the largest one).",
    examples=(Example("fields", '{"违法性质": "偷税", "少缴税款": 260000}', '{"违法性质": "偷税", "少缴税款": 260000}'),),
)


@JSON_FIELDS_RULE.reads("fields")
def _json(view: FieldsView) -> Reading | None:
    parsed = view.parsed
    if parsed is None or parsed is not view.json_fields or not view.accepted(parsed):
        return None
    return Reading(parsed, rule=JSON_FIELDS_RULE.name)


FIELD_LINES_RULE = register_rule(
    "fields.lines", kinds=("fields",), tier=3, confidence="high",
    description="Fields written as '字段：值' lines, headings or a Markdown table.",
    examples=(Example("fields", "违法性质：偷税\n少缴税款：260000", '{"违法性质": "偷税", "少缴税款": "260000"}'),),
)


@FIELD_LINES_RULE.reads("fields")
def _lines(view: FieldsView) -> Reading | None:
    parsed = view.parsed
    if parsed is None or view.json_fields is not None or not view.accepted(parsed):
        return None
    return Reading(parsed, rule=FIELD_LINES_RULE.name)


NO_FIELD_RULE = register_rule(
    "veto.no-field", kinds=("fields",), tier=7, confidence="high",
    description="The output parses into fields (a JSON object, key lines) but holds none of the task's.",
    examples=(Example("fields", '{"结论": "存在问题", "建议": "补缴"}', None),),
    leaves_alone=(Example("fields", '{"违法性质": "偷税"}', '{"违法性质": "偷税"}'),),
    decides=NO_FIELD_READ,
)


@NO_FIELD_RULE.reads("fields")
def _no_field(view: FieldsView) -> Reading | None:
    parsed = view.parsed
    if parsed is None or view.accepted(parsed):
        return None
    return Reading(parsed, NO_FIELD_READ, rule=NO_FIELD_RULE.name)


@NO_ANSWER_RULE.reads("fields")
def _no_answer(view: FieldsView) -> Reading | None:
    return _NO_ANSWER


#: The order in which the fields reader tries its rules (the default chain set, ``taxpraben``): its
#: rules' names, each a rule declared in this module or in :mod:`~taxpraben.parsing.readers.shared`.
FIELDS_CHAIN: tuple[str, ...] = (
    "veto.copy-of-prompt",
    "fields.json",
    "fields.lines",
    "veto.no-field",
    "veto.no-answer",
)


def fields_chain(names: tuple[str, ...] | None = None) -> Chain[FieldsView]:
    """The fields chain: ``names`` in order (default: the ``fields`` chain of
    :data:`FIELDS_CHAIN`), each rule's fields attempt."""
    return chain_for("fields", FIELDS_CHAIN if names is None else names)


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
    ``fields`` chain (:mod:`taxpraben.parsing.readers.fields`)."""
    reading = read_fields_chain(text)
    value = reading.value if isinstance(reading.value, dict) else None
    return value, reading.rule or NO_ANSWER_RULE.name


# ---------------------------------------------------------------- where each field was read

#: Between a key and its value: a unit bracket of the key (``少缴税款（万元）``), its quotes or
#: emphasis, then a colon, ``】``, a table cell's ``|``, the end of a heading's line, a
#: correction's ``应为``, or the value key of a name/value item (``"罚款", "值":``); then the
#: value's opening quote or emphasis.
_KEY_TO_VALUE = (
    r"(?:[^\S\n]*[（(][^（）()\n]{1,8}[)）])?[\"'“”‘’*_`]*[^\S\n]*"
    r"(?:[:：]|】[^\S\n]*[:：]?|\||[*_#]*[^\S\n]*\n|(?:应该?为|应是|更正为|改为|修正为|应改为)"
    r"|[,，]\s*[\"'“”]?(?:" + "|".join(map(re.escape, ITEM_VALUE_KEYS)) + r")[\"'“”]?[^\S\n]*[:：])"
    r"(?P<lead>[\s\"'“”‘’*_`]*)"
)
#: A unit the parser wrote after a bare number (a key's ``（万元）``, a table header's): the
#: number stands without it in the output.
_ADDED_UNIT = re.compile(r"(?<=\d)(?:[千百]?[万亿]?元|[万亿]|%)$")
#: Values longer than this are located by their start (a long rationale: the span runs to
#: where its text ends, found from there).
_MAX_VALUE_PATTERN = 2000


def _value_forms(value: JSONValue) -> list[str]:
    """The texts a scalar field value may be written as, preferred first; [] for an object or
    a list (located by their own fields) and for an empty value."""
    if isinstance(value, bool):
        return ["true", "True"] if value else ["false", "False"]
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, float):
        forms = [repr(value), str(int(value))] if value.is_integer() else [repr(value)]
        return forms
    if not isinstance(value, str) or not value.strip():
        return []
    text = value.strip()
    forms = [text, json.dumps(text, ensure_ascii=False)[1:-1]]
    bare = _ADDED_UNIT.sub("", text)
    if bare != text:
        forms.append(bare)
    return list(dict.fromkeys(forms))


#: :data:`_KEY_TO_VALUE`, matched right after a key.
_SEPARATOR = re.compile(_KEY_TO_VALUE)
_WORD = re.compile(r"\w")
#: Whitespace (or a JSON escape of it) where a value has whitespace.
_GAP = r"(?:\s|\\[nrt])+"


def _value_end(text: str, at: int, form: str) -> int | None:
    """Where ``form`` ends when ``text`` writes it at ``at`` (any run of whitespace, or a JSON
    escape of one, where ``form`` has whitespace); None when it does not."""
    if text.startswith(form, at):
        return at + len(form)
    pieces = re.split(r"\s+", form[:_MAX_VALUE_PATTERN])
    if len(pieces) < 2 and "\\" not in text[at : at + len(form) + 8]:
        return None
    m = re.compile(_GAP.join(re.escape(p) for p in pieces if p)).match(text, at)
    return m.end() if m else None


def _key_value_places(text: str, key: str, forms: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """(key start, value start, value end) of each place of ``text`` where ``key`` (a whole
    key: no word character before it) leads to one of ``forms``."""
    at = text.find(key) if key else -1
    while at >= 0:
        if at == 0 or not _WORD.match(text[at - 1]):
            separator = _SEPARATOR.match(text, at + len(key))
            # the value starts after the separator, or within its lead when it is quoted itself
            starts = range(separator.end(), separator.start("lead") - 1, -1) if separator else range(0)
            for start in starts:
                end = next((e for e in (_value_end(text, start, f) for f in forms) if e is not None), None)
                if end is not None:
                    yield at, start, end
                    break
        at = text.find(key, at + 1)


def _located(text: str, key: str, value: JSONValue, from_json: bool) -> tuple[int, int, int] | None:
    """(key start, value start, value end) of field ``key`` in the cleaned ``text``: its leaf
    key leading to its value. JSON: the latest such place whose key is quoted, else the latest;
    lines: the first (the parser keeps a repeated key's first value)."""
    forms = _value_forms(value)
    if not forms:
        return None
    leaf = key.rsplit(".", 1)[-1]
    found = list(_key_value_places(text, leaf, forms))
    if not found:
        return _table_cell(text, key, forms)
    if from_json:
        quoted = [place for place in found if place[0] > 0 and text[place[0] - 1] in "\"'“‘"]
        return (quoted or found)[-1]
    return found[0]


#: A table cell: its text (as :func:`_cells` gives it) and its span in the text.
_Cell: TypeAlias = "tuple[str, int, int]"


def _table_rows(text: str) -> Iterator[tuple[int, list[_Cell], list[tuple[int, list[_Cell]]]]]:
    """Each Markdown table of ``text`` (as :func:`_blocks` finds them): its start, its header's
    cells and its rows (each with its start), each cell with its span."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    i = 0
    while i + 1 < len(lines):
        if not (_TABLE_ROW.match(lines[i]) and _TABLE_RULE.match(lines[i + 1])):
            i += 1
            continue
        header, rows = _spanned_cells(lines[i], starts[i]), []
        first, i = starts[i], i + 2
        while i < len(lines) and _TABLE_ROW.match(lines[i]):
            rows.append((starts[i], _spanned_cells(lines[i], starts[i])))
            i += 1
        yield first, header, rows


def _spanned_cells(row: str, at: int) -> list[_Cell]:
    """The cells of a table row (text as :func:`_cells` strips it) with their spans, the
    row starting at offset ``at``."""
    cells = []
    for m in re.finditer(r"(?<=\|)[^|]*(?=\|)", row):
        inner = m.group().strip()
        text = inner.strip("*_`").strip()
        start = at + m.start() + m.group().find(text) if text else at + m.start()
        cells.append((text, start, start + len(text)))
    return cells


def _table_cell(text: str, key: str, forms: Sequence[str]) -> tuple[int, int, int] | None:
    """(row start, cell start, cell end) of field ``key`` read from a table's column: the
    column named as the key's last part (its unit left out), in the row of the entity its
    part before names (``方案一.税负``), else in the table's only row."""
    if "|" not in text:
        return None
    parts = key.split(".")
    column, entity = parts[-1], parts[-2] if len(parts) > 1 else None
    wanted = {normalize_key(f) for f in forms}
    for _, header, rows in _table_rows(text):
        names = [normalize_key(_header(cell)[0]) for cell, _, _ in header]
        if normalize_key(column) not in names:
            continue
        col = names.index(normalize_key(column))
        for start, cells in rows:
            named = _entity_name(cells[0][0]) if cells else None
            if col >= len(cells) or (entity is None and len(rows) != 1) or (entity is not None and named != entity):
                continue
            cell, cell_start, cell_end = cells[col]
            if normalize_key(cell) in wanted:
                return start, cell_start, cell_end
    return None


class _RawOffsets:
    """Offsets in the cleaned text as offsets in the raw output: both compared on the key
    of :mod:`taxpraben.parsing.evidence` (cleaning drops and folds characters only); a
    stretch found several times is taken at the same place counted from the end (a reasoning
    block the cleaner dropped comes first)."""

    def __init__(self, raw: str, cleaned: str) -> None:
        self.raw, self.cleaned = raw, cleaned

    @cached_property
    def _keys(self) -> tuple[tuple[str, list[int]], tuple[str, list[int]]]:
        from taxpraben.parsing.evidence import keyed

        return keyed(self.cleaned), keyed(self.raw)

    def span(self, start: int, value_start: int, end: int) -> tuple[int, int] | None:
        if self.raw == self.cleaned:
            return value_start, end
        source = self.cleaned[start:end]  # written as read (most outputs): no key needed
        places = _occurrences(self.raw, source, 0)
        if places:
            later = _occurrences(self.cleaned, source, start + 1)
            place = places[-(len(later) + 1)] if len(later) < len(places) else places[0]
            return place + value_start - start, place + end - start
        (cleaned_key, at), (raw_key, raw_at) = self._keys
        first, value, stop = bisect_left(at, start), bisect_left(at, value_start), bisect_left(at, end)
        if not first <= value < stop:
            return None
        source = cleaned_key[first:stop]
        later = _occurrences(cleaned_key, source, first + 1)
        places = _occurrences(raw_key, source, 0)
        if not places:
            return None
        place = places[-(len(later) + 1)] if len(later) < len(places) else places[0]
        return raw_at[place + value - first], raw_at[place + stop - first - 1] + 1


def _occurrences(text: str, needle: str, start: int) -> list[int]:
    found, at = [], text.find(needle, start)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def field_spans(prediction: str, text: str, fields: Mapping[str, JSONValue], from_json: bool,
                keys: Sequence[str] | None = None) -> dict[str, tuple[int, int]]:
    """The ``[start, end)`` span of ``prediction`` (the raw output) each field of ``fields``
    (as :func:`parse_fields` read them from ``text``, the output the reader was given;
    ``from_json``: read from a JSON object, else from key lines) was read from; ``keys``: the
    fields wanted (default: all). A field whose value is an object or a list, or that is not
    found after its key (a name/value item list, a table column), has no span."""
    cleaned = clean_prediction(text)
    offsets = _RawOffsets(prediction, cleaned)
    out: dict[str, tuple[int, int]] = {}
    for key in fields if keys is None else keys:
        if key not in fields:
            continue
        place = _located(cleaned, key, fields[key], from_json)
        span = offsets.span(*place) if place is not None else None
        if span is not None and span[0] < span[1]:
            out[key] = span
    return out
