"""Predicted fields against a record's gold fields: which key answers which field (alignment),
and whether its value matches (numbers, categories; text is left to the semantic scorer).

**Alignment** (:func:`align_fields`): each rule (gold field) gets at most one prediction key
and each key serves at most one rule, in passes over all rules: exact key; normalised key
(case, whitespace, punctuation, Markdown and underscores removed; a dotted key also offers
its last segment, so ``"答案.罚款"`` aligns with ``罚款``); a synonym from the task spec
(exact or normalised); fuzzy (difflib ratio of normalised forms, names and synonyms against
keys and their last segments, at least ``fuzzy_threshold``, best pair first, ties in rule
order then key order); a key naming a rate or a tax base (税率, 计税依据, 应纳税所得额 ...)
never fuzzily matches a rule whose names do not say so.

**Matching** (:func:`field_value_matches`): ``number`` fields with
:func:`~taxpraben.parsing.numbers.numbers_equal` at the rule's decimals (a prediction
``"1.2万元"`` equals gold 12000; a sentence value is read with ``extract_final_number``);
``category`` fields by :func:`~taxpraben.parsing.readers.span.normalize_span` equality (so
wrappers such as ``《》``, quotes and brackets do not matter) or equality after mapping
single Chinese digits to Arabic (``方案一`` = ``方案1``), also once a trailing bracketed
gloss is dropped on both sides (``方案一（自营仓储）`` = ``方案一``); a list gold accepts any
of its items. ``text`` fields are scored by the semantic scorer on :func:`field_text`.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from taxpraben.parsing.arithmetic import evaluate_expression
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.jsonish import normalize_key
from taxpraben.parsing.numbers import NumberMatch, numbers_equal, parse_number
from taxpraben.parsing.readers.fields import (
    MAX_FLATTEN_DEPTH,
    after_label,
    bracketed_gloss,
    flatten_fields,
    without_gloss,
)
from taxpraben.parsing.readers.span import normalize_span
from taxpraben.task_spec import FieldRule

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

__all__ = [
    "AlignedField",
    "MatchKind",
    "align_fields",
    "computed_value",
    "field_text",
    "field_value_matches",
    "key_forms",
    "unreadable_number",
]

MatchKind = Literal["exact", "normalized", "synonym", "fuzzy", "missing"]

_MAX_FUZZY_KEYS = 200


@dataclass(frozen=True)
class AlignedField:
    """A gold field and the prediction value aligned to it.

    ``key`` is the prediction key used (None when missing), ``value`` its value (None when
    missing), ``how`` the pass that matched, ``similarity`` the difflib ratio for fuzzy
    matches (1.0 for the other passes, 0.0 when missing).
    """

    name: str
    key: str | None
    value: JSONValue
    how: MatchKind
    similarity: float


# --- alignment --------------------------------------------------------------------------


def key_forms(key: str) -> tuple[str, ...]:
    full = normalize_key(key)
    leaf = normalize_key(key.rsplit(".", 1)[-1]) if "." in key else full
    return (full, leaf) if leaf != full else (full,)


#: Words naming a quantity that is not the amount itself: a rate, a tax base, an income.
_QUANTITY_WORDS = ("率", "依据", "所得额", "收入", "销售额", "营业额", "基数", "原值", "余值", "价款")


def _other_quantity(key: str, names: Sequence[str]) -> bool:
    """Whether ``key`` names a quantity (a rate, a base ...) that none of ``names`` names:
    fuzzy alignment never pairs 方案一税负 with 方案一.应纳税所得额 or 方案一.税率."""
    return any(w in key and not any(w in n for n in names) for w in _QUANTITY_WORDS)


def align_fields(
    pred: Mapping[str, JSONValue],
    rules: Sequence[FieldRule],
    fuzzy_threshold: float,
) -> dict[str, AlignedField]:
    """Map each rule name to the prediction value aligned to it (passes in the module doc).

    ``pred`` is a parsed prediction (nested objects are flattened here too). The result has
    one entry per rule, in rule order; a rule with no key is ``how="missing"`` with
    ``key=None`` and ``value=None``.
    """
    flat = flatten_fields(pred)
    keys = list(flat)
    forms = {key: key_forms(key) for key in keys}
    used: set[str] = set()
    result: dict[str, AlignedField] = {}

    def take(rule: FieldRule, key: str, how: MatchKind, similarity: float = 1.0) -> None:
        used.add(key)
        result[rule.name] = AlignedField(rule.name, key, flat[key], how, similarity)

    def first_key(predicate: Callable[[str], bool]) -> str | None:
        return next((k for k in keys if k not in used and predicate(k)), None)

    pending = list(rules)
    passes: list[tuple[MatchKind, Callable[[FieldRule, str], bool]]] = [
        ("exact", lambda rule, k: k == rule.name),
        ("normalized", lambda rule, k: normalize_key(rule.name) in forms[k]),
        (
            "synonym",
            lambda rule, k: (
                k in rule.synonyms or any(normalize_key(s) in forms[k] for s in rule.synonyms)
            ),
        ),
    ]
    for how, matches in passes:
        still: list[FieldRule] = []
        for rule in pending:
            key = first_key(functools.partial(matches, rule))
            if key is None:
                still.append(rule)
            else:
                take(rule, key, how)
        pending = still

    if pending:
        candidates = [k for k in keys if k not in used][:_MAX_FUZZY_KEYS]
        pairs: list[tuple[float, int, int, str]] = []
        for rule_index, rule in enumerate(pending):
            names = [normalize_key(n) for n in (rule.name, *rule.synonyms)]
            for key_index, key in enumerate(candidates):
                if _other_quantity(key, names):
                    continue
                best = 0.0
                for name in names:
                    for form in forms[key]:
                        matcher = difflib.SequenceMatcher(None, name, form)
                        if (
                            matcher.real_quick_ratio() >= fuzzy_threshold
                            and matcher.quick_ratio() >= fuzzy_threshold
                        ):
                            best = max(best, matcher.ratio())
                if best >= fuzzy_threshold and best > 0:
                    pairs.append((-best, rule_index, key_index, key))
        pairs.sort()
        for negative_ratio, rule_index, _key_index, key in pairs:
            rule = pending[rule_index]
            if key not in used and rule.name not in result:
                take(rule, key, "fuzzy", -negative_ratio)

    return {
        rule.name: result.get(rule.name, AlignedField(rule.name, None, None, "missing", 0.0))
        for rule in rules
    }


# --- values -----------------------------------------------------------------------------


def _format_number(value: int | float | Decimal) -> str:
    if isinstance(value, float) and value != value:  # NaN
        return "NaN"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return str(value)
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite():
        return str(number)
    text = format(number, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def field_text(value: object, _depth: int = 0) -> str:
    """Any field value as text for the semantic scorer.

    None -> ``""``; strings are stripped; numbers are written in plain notation without
    trailing zeros (``1.50`` -> ``"1.5"``, ``1e-05`` -> ``"0.00001"``); booleans are ``是`` /
    ``否``; lists join their items with ``；``; dicts become ``键：值`` pairs joined with ``；``.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, (int, float, Decimal)):
        return _format_number(value)
    if isinstance(value, str):
        return value.strip()
    if _depth > MAX_FLATTEN_DEPTH:
        return str(value)
    if isinstance(value, Mapping):
        parts = (f"{k}：{field_text(v, _depth + 1)}" for k, v in value.items())
        return "；".join(p for p in parts if p)
    if isinstance(value, (list, tuple, set, frozenset)):
        return "；".join(t for t in (field_text(v, _depth + 1) for v in value) if t)
    return str(value).strip()


def _number_of(value: object, *, none_is_zero: bool = False) -> NumberMatch | None:
    """The number a field value states; ``none_is_zero``: a prediction's 无 is 0."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float, Decimal)):
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        return NumberMatch(number, False, -1, -1, str(value)) if number.is_finite() else None
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return _number_of(value[0], none_is_zero=none_is_zero)
    text = field_text(value)
    if none_is_zero and text in _NONE_WORDS:
        return NumberMatch(Decimal(0), False, 0, len(text), text)
    # "260,000元（适用税率13%）": the bracket after the amount explains it, it is not the amount
    parsed = parse_number(text) or parse_number(without_gloss(text))
    if parsed is not None:
        return parsed
    computed = computed_value(text)  # a formula for the amount: "260000×0.05%×365"
    if computed is not None:
        return NumberMatch(computed, False, 0, len(text), text)
    found = _final_number(text)
    return None if found is not None and _in_formula(text, found) else found


def _final_number(text: str) -> NumberMatch | None:
    # The sentence reader (and its patterns) is loaded on first use: the data checks, which
    # read gold fields before the first request, never need it (start-up, issue 24).
    from taxpraben.parsing.readers.number import extract_final_number

    return extract_final_number(text)


#: A number written with a multiplier word or its unit inside a formula (``226万×13%``).
_MULTIPLIED = re.compile(r"(\d+(?:\.\d+)?)\s*(万|亿)元?")
_YUAN_OPERAND = re.compile(r"(?<=\d)\s*元(?=\s*[-+*/×÷）)])")
_MULTIPLIERS = {"万": "10000", "亿": "100000000"}
#: A formula: terms (numbers, words, variables, brackets) joined by arithmetic operators, at
#: least one of them × ÷ * or + (a lone - or / is a range, a date or a unit: 10-20万, 元/吨).
_TERM = r"[\w.%()（）]+"
_FORMULA = re.compile(rf"{_TERM}(?:\s*[-+×÷*/]\s*{_TERM})*\s*[+×÷*]\s*{_TERM}(?:\s*[-+×÷*/]\s*{_TERM})*|"
                      rf"{_TERM}\s*[-+×÷*/]\s*$")


def computed_value(text: str) -> Decimal | None:
    """The value of a field written as plain arithmetic: numbers (with 元, 万 or 亿), + - × ÷
    and brackets (``260000×0.05%×365``, ``226万×13%``); None for anything else.

    A careful grader computes such a value: the field is where the amount goes, every operand
    is given, and nothing is left to guess (:mod:`taxpraben.parsing.arithmetic`)."""
    value = evaluate_expression(text)
    if value is not None:
        return value
    if not re.search(r"[+×÷*＊]", text):  # 10-20万 is a range, not 10 minus 200000
        return None
    plain = _YUAN_OPERAND.sub("", _MULTIPLIED.sub(lambda m: f"({m.group(1)}*{_MULTIPLIERS[m.group(2)]})", text))
    return evaluate_expression(plain) if plain != text else None


def unreadable_number(value: JSONValue) -> str | None:
    """Why a number field's value states no number, or None when it states one (or is no
    formula at all: a sentence is read for its number as before).

    A formula that is not plain arithmetic (a word or a variable among its terms:
    ``2260000 × 13% - 进项税额``, ``应纳税额 × 13%``, ``(2260000-x)*13%``, or an operator
    with nothing after it) cannot be computed: the value is no number, and the field a format
    failure (counted and shown as such), not a wrong answer read from one of its operands.
    A formula followed by its result (``= 293800``) states the result."""
    if value is None or isinstance(value, (bool, int, float)):
        return None
    text = field_text(value)
    if not _FORMULA.search(clean_prediction(text)):
        return None
    if parse_number(text) or parse_number(without_gloss(text)) or computed_value(text) is not None:
        return None
    found = _final_number(text)
    if found is not None and not _in_formula(text, found):
        return None  # a result stated after the formula ("2260000×13%=293800", "…，即293800元")
    return f"an expression, not a number: {text[:60]!r} (a term is not a number, so it cannot be computed)"


def _in_formula(text: str, found: NumberMatch) -> bool:
    """Whether the number read from ``text`` (offsets into its cleaned form) is a term of a
    formula there: an operand, not a result."""
    if found.start < 0:
        return False
    return any(m.start() <= found.start and found.end <= m.end() for m in _FORMULA.finditer(clean_prediction(text)))


#: An amount written as "none": 0 (a grader reads 少缴税款：无 as 0).
_NONE_WORDS = frozenset({"无", "没有", "无需缴纳", "不存在"})


_CN_DIGIT = str.maketrans(
    {c: str(i) for i, c in enumerate("零一二三四五六七八九")} | {"两": "2", "〇": "0"}
)


def _same_category(a: str, b: str) -> bool:
    a, b = normalize_span(a), normalize_span(b)
    return bool(b) and (a == b or a.translate(_CN_DIGIT) == b.translate(_CN_DIGIT))


def _category_matches(pred: JSONValue, gold: JSONValue) -> bool:
    """Equal as categories, or equal once a trailing bracketed gloss (or an explanation after
    a comma or a colon, ``方案一，即…``, ``方案一：…``) is dropped on both sides
    (``方案一（自营仓储）`` = ``方案一``; ``偷税（少缴税款）`` = ``偷税（逃税）``), or the prediction's
    bracket holds the category itself (``自营仓储（方案一）``, ``逃税（偷税）``), or it follows a label
    (``建议：方案一``)."""
    a, b = field_text(pred), field_text(gold)
    if not normalize_span(b):
        return False
    if _same_category(a, b) or _same_category(without_gloss(a), without_gloss(b)):
        return True
    parts = (bracketed_gloss(a), after_label(a), _stated_category(a))
    return any(part is not None and _same_category(part, without_gloss(b)) for part in parts)


_CATEGORY_CLAUSE = re.compile(r"[，,；;。]")
_CATEGORY_NEGATED = re.compile(r"^\s*(?:不|非|未|并非|而非|无)")
_CATEGORY_VERB = re.compile(
    r"^\s*(?:应当|应)?(?:定性为|认定为|属于|构成|选择|选用|采用|推荐|建议采用|建议选择|建议|选)\s*(?:采用|选择)?\s*"
)
_CATEGORY_HEDGE = re.compile(r"均可|都可|皆可|或者|或是|也可以|也可")
_CATEGORY_TAIL = re.compile(r"\s*(?:行为|更优|较优|最优|为宜|为佳|更好|更合适)\s*$")


def _stated_category(text: str) -> str | None:
    """The category a short statement gives: its first clause not denied, without the verb
    that states it and a word that only qualifies it (``属于偷税``, ``偷税行为``, ``建议采用方案一``,
    ``方案一更优``, ``选择方案一，提供仓储服务``, ``不推荐方案二，选方案一``); None for none."""
    if _CATEGORY_HEDGE.search(text):  # "方案一，方案二均可": no one category
        return None
    for clause in _CATEGORY_CLAUSE.split(text):
        if not clause.strip() or _CATEGORY_NEGATED.match(clause):
            continue
        core = _CATEGORY_TAIL.sub("", _CATEGORY_VERB.sub("", clause))
        return core.strip() or None
    return None


def field_value_matches(pred_value: JSONValue, gold_value: JSONValue, rule: FieldRule) -> bool:
    """Exact match of one number or category field (rules in the module docstring).

    A missing prediction (None) never matches. Raises ValueError for a ``text`` rule (scored
    by the semantic scorer) and for a number gold that holds no number.
    """
    if rule.kind == "text":
        raise ValueError(f"field {rule.name!r} is a text field: score it with the semantic scorer")
    if isinstance(gold_value, list) and rule.kind == "category":
        return any(field_value_matches(pred_value, g, rule) for g in gold_value)
    if rule.kind == "number":
        gold = _number_of(gold_value)
        if gold is None:
            raise ValueError(f"gold of number field {rule.name!r} is not a number: {gold_value!r}")
        return numbers_equal(_number_of(pred_value, none_is_zero=True), gold, rule.decimals)
    if pred_value is None:
        return False
    return _category_matches(pred_value, gold_value)

