"""Finding JSON in model output: strict first, then json-repair, never an exception.

Shared by the number, choice, letter, span and field parsers. A model's JSON is found as
the top-level ``{...}`` / ``[...]`` spans of the text (string-aware brace matching; an
unclosed span runs to the end of the text, as in a truncated answer). Each span is parsed
with :func:`json.loads`; when that fails, with ``json_repair`` (trailing commas, single
quotes, unquoted keys, missing closing braces); when that gives nothing, once more after
turning Chinese structural punctuation (``“”‘’``, ``，``, ``：``) into ASCII.

A repair is taken only as far as it is faithful to the text (:func:`_faithful`): every
number it gives must be written there as a number, every string, key and truth value
must be there. json-repair guesses, and a guess can change an answer: it reads
``{"滞纳金" 47450}`` (a missing colon) as ``{"滞纳金": 7450}``. Such a span is first given
its missing colons (``"key" value`` -> ``"key": value``), its bare percentages quoted
(``5%`` -> ``"5%"``: json-repair reads 5) and its bare formulas quoted (``260000*0.0005*365``:
json-repair reads 260000, an operand, which the text does not write as a number; the fields
read the formula's value, :mod:`taxpraben.parsing.arithmetic`), then repaired; an entry whose
value the text does not hold is left out (the rest of the object stands: its fields are
read as written), and a list with such an item is left out whole.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

__all__ = ["answer_value", "find_json_values", "normalize_key", "template_answer_keys"]

#: Spans longer than this are only parsed strictly: json-repair is pure Python and slow on
#: megabytes, and no real answer object is that large.
_MAX_REPAIR_CHARS = 100_000
#: Deeper nesting than this is not a model answer (and would exhaust the recursion limit).
_MAX_DEPTH = 64
_CN_STRUCTURE = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "，": ",", "：": ":"})
_KEY_JUNK = re.compile(r"[\s\W_]+", re.UNICODE)


_SPECIAL = re.compile(r'[{}\[\]"\\]')


def _span_end(text: str, start: int) -> int:
    """End (exclusive) of the bracketed span opening at ``start``; -1 when it never closes."""
    depth, in_string, escaped = 0, False, -1
    for m in _SPECIAL.finditer(text, start):
        c, j = m.group(0), m.start()
        if in_string:
            if escaped == j:
                continue
            if c == "\\":
                escaped = j + 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


_OPENER = re.compile(r"[{\[]")
#: How many unclosed openers are skipped (prose like "见[注" before the real object) before
#: the rest of the text is taken as one truncated span; bounds the work on hostile input.
_MAX_UNCLOSED_SKIPS = 3


def _depth_ok(value: JSONValue, depth: int = 0) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(_depth_ok(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return all(_depth_ok(v, depth + 1) for v in value)
    return True


def _nesting(span: str) -> int:
    depth = best = 0
    for c in span:
        if c in "{[":
            depth += 1
            best = max(best, depth)
        elif c in "}]":
            depth -= 1
    return best


#: What a JSON value starts with (after a key whose colon is missing).
_VALUE_START = frozenset('-+0123456789."[{tfn')
#: An operator after a number after a colon: a span that may hold a bare formula.
_FORMULA_HINT = re.compile(r"[:：][ \t]*[-+(（]*\d[\d.,]*[ \t]*%?[)）]*[ \t]*[*/×÷+-]")
#: A closing quote, blanks, then what could be a value: a span without one has no key to mend.
_KEY_GAP = re.compile(r'"[ \t]+[-+\d."\[{tfn]')
#: The signs of a percentage (per mille included).
_PERCENT_SIGNS = "%％‰"
#: A bare number with a percent sign (``5%``), which json-repair reads as the number alone.
_BARE_PERCENT = re.compile(rf"[-+]?(?:\d+\.?\d*|\.\d+)[ \t]*[{_PERCENT_SIGNS}]")
#: A bare formula in a value place (``260000*0.0005*365``, ``(1000+500)/2 = 750``), up to
#: what ends the value; json-repair reads its first number alone (260000).
_FORMULA_NUMBER = r"\d+(?:[.,]\d+)*"
_BARE_FORMULA = re.compile(
    rf"[-+(（]*{_FORMULA_NUMBER}[ \t]*[{_PERCENT_SIGNS}]?[)）]*"
    rf"(?:[ \t]*[-+*/×÷][ \t]*[(（]*[-+]?{_FORMULA_NUMBER}[ \t]*[{_PERCENT_SIGNS}]?[)）]*)+"
    rf"(?:[ \t]*=[ \t]*[-+]?{_FORMULA_NUMBER}[ \t]*[{_PERCENT_SIGNS}]?)?(?=[ \t]*(?:[,}}\]\n]|//|$))"
)


def _mended(span: str) -> str:
    """``span`` with two faults mended that json-repair reads as another answer:

    - the colon put back after an object key that lacks one (``{"滞纳金" 47450}`` ->
      ``{"滞纳金": 47450}``; json-repair reads a value starting one character later, 7450).
      Only a key place counts: a string right after ``{`` or ``,`` inside an object, followed
      by blanks and a value; strings in arrays are items (``["A", "B" "C"]`` is three);
    - a bare percentage in a value place quoted (``{"税率": 5%}`` -> ``{"税率": "5%"}``;
      json-repair reads 5, and 5 is not 5% = 0.05).

    Nothing inside a string is touched."""
    if not _KEY_GAP.search(span) and not any(sign in span for sign in _PERCENT_SIGNS) and not _FORMULA_HINT.search(span):
        return span
    out: list[str] = []
    stack: list[str] = []
    key_place = False
    previous = ""  # the last character outside a string that is not a blank
    i, n = 0, len(span)
    while i < n:
        c = span[i]
        if c == '"':
            j = i + 1
            while j < n and span[j] != '"':
                j += 2 if span[j] == "\\" else 1
            out.append(span[i : j + 1])
            k = j + 1
            while k < n and span[k] in " \t":
                k += 1
            if key_place and stack and stack[-1] == "{" and k > j + 1 and k < n and span[k] in _VALUE_START:
                out.append(":")
            key_place, previous = False, '"'
            i = j + 1
            continue
        if previous == ":" and c in "+-(（0123456789":
            formula = _BARE_FORMULA.match(span, i)
            if formula is not None:
                out.append(json.dumps(formula.group(0), ensure_ascii=False))
                key_place, previous = False, '"'
                i = formula.end()
                continue
        if previous in (":", "[", ",") and c in "+-0123456789.":
            percent = _BARE_PERCENT.match(span, i)
            if percent is not None:
                out.append(f'"{percent.group(0)}"')
                key_place, previous = False, '"'
                i = percent.end()
                continue
        if c in "{[":
            stack.append(c)
            key_place = c == "{"
        elif c in "}]":
            if stack:
                stack.pop()
            key_place = False
        elif c == ",":
            key_place = bool(stack) and stack[-1] == "{"
        elif not c.isspace():
            key_place = False
        if not c.isspace():
            previous = c
        out.append(c)
        i += 1
    return "".join(out)


#: Numbers as a text writes them: plain, and grouped by commas or underscores.
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_GROUPED = re.compile(r"[-+]?\d{1,3}(?:[,_]\d{3})+(?:\.\d+)?|[-+]?\d+(?:_\d+)+(?:\.\d+)?")
_TRUTH = re.compile(r"\b(true|false)\b", re.IGNORECASE)
#: What :func:`_faithful` returns for a value the text does not hold.
_UNFAITHFUL = object()


def _numbers_in(text: str) -> set[float]:
    """The numbers ``text`` writes; not those written as a percentage (``13%`` is 0.13, and
    json-repair reads it as 13), nor the operands of a formula (``260000*0.0005*365`` writes
    no 260000: json-repair reads it so)."""
    found: set[float] = set()
    for pattern in (_NUMBER, _GROUPED):
        for m in pattern.finditer(text):
            after = text[m.end() : m.end() + 3].lstrip(" \t")
            if (after and after[0] in _PERCENT_SIGNS) or _operand(text, m.start(), m.end()):
                continue
            found.add(float(m.group(0).replace(",", "").replace("_", "")))
    return found


_PRODUCT_SIGNS = "*/×÷"


def _operand(text: str, start: int, end: int) -> bool:
    """The number at ``text[start:end]`` is an operand of a formula: a product sign before
    or after it, a sum sign after it before another number, or its own sign one (a digit or
    a bracket right before it)."""
    head = text[:start].rstrip(" \t(（")
    before = "" if head.endswith("//") else head[-1:]  # "//" opens a comment
    after = text[end:].lstrip(" \t)）")
    if after.startswith("//"):
        after = ""
    if (before and before in _PRODUCT_SIGNS) or (after[:1] and after[0] in _PRODUCT_SIGNS):
        return True
    if after[:1] in ("+", "-") and after[1:].lstrip(" \t(（")[:1].isdigit():
        return True
    return text[start] in "+-" and bool(before) and (before.isdigit() or before in ")）")


class _Text:
    """The text a repair came from, and what it writes (computed on first use)."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def _numbers(self) -> set[float]:
        return _numbers_in(self.text)

    @cached_property
    def _truths(self) -> set[str]:
        return {m.group(1).lower() for m in _TRUTH.finditer(self.text)}

    def has_number(self, value: float) -> bool:
        return float(value) in self._numbers

    def has_truth(self, value: bool) -> bool:
        return ("true" if value else "false") in self._truths

    def has_string(self, value: str) -> bool:
        return (
            not value
            or value in self.text
            or json.dumps(value, ensure_ascii=False)[1:-1] in self.text
            or json.dumps(value)[1:-1] in self.text
        )


def _faithful(value: JSONValue, text: _Text) -> JSONValue:
    """``value`` (a repair of ``text``) without what ``text`` does not hold: a dict keeps its
    faithful entries, a list is kept whole or not at all (an answer list missing an item is
    another answer), a scalar is kept or not; :data:`_UNFAITHFUL` for nothing kept."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if not text.has_string(str(key)):
                continue
            item = _faithful(item, text)
            if item is not _UNFAITHFUL:
                kept[key] = item
        return kept if kept or not value else _UNFAITHFUL
    if isinstance(value, list):
        items = [_faithful(item, text) for item in value]
        return _UNFAITHFUL if any(item is _UNFAITHFUL for item in items) else items
    if isinstance(value, bool):
        return value if text.has_truth(value) else _UNFAITHFUL
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) and text.has_number(value) else _UNFAITHFUL
    if isinstance(value, str):
        return value if text.has_string(value) else _UNFAITHFUL
    return value  # None: no value, nothing claimed


def _size(value: JSONValue) -> int:
    if isinstance(value, dict):
        return sum(1 + _size(v) for v in value.values())
    if isinstance(value, list):
        return sum(1 + _size(v) for v in value)
    return 0


#: In a key, the trace of a repair that ran across structure (``'税率"：5%，"税额'``).
_STRUCTURE_IN_KEY = re.compile(r'["“”‘’：，]')


def _misread_keys(value: JSONValue) -> int:
    if isinstance(value, dict):
        return sum(bool(_STRUCTURE_IN_KEY.search(str(k))) + _misread_keys(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_misread_keys(v) for v in value)
    return 0


def _repaired(span: str) -> JSONValue:
    """The best faithful repair of ``span`` (see :func:`_best_repair`), a fresh copy for each
    caller: the repairs are cached (json-repair is slow, and an output that copies its
    prompt's JSON template, or is read by several readers, repairs the same span again)."""
    return _copied(_best_repair(span))


def _copied(value: JSONValue) -> JSONValue:
    """``value`` with each of its dicts and lists new (the scalars are immutable)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


@lru_cache(maxsize=512)
def _best_repair(span: str) -> JSONValue:
    """The best faithful repair of ``span`` (see the module doc), or None: of the repairs of
    the span, mended or not, with Chinese structural punctuation made ASCII or not, the one
    the text holds whole, then with the fewest keys that swallowed structure, then the
    largest; the first of equals."""
    import json_repair  # on first use: most outputs are valid JSON or none

    translated = span.translate(_CN_STRUCTURE)
    best: JSONValue = None
    best_rank: tuple[bool, int, int] | None = None
    for candidate in dict.fromkeys((_mended(span), span, _mended(translated), translated)):
        try:
            value = json_repair.loads(candidate)
        except Exception:  # json-repair promises no exceptions; do not rely on it
            continue
        if not isinstance(value, (dict, list)) or not value:
            continue
        kept = _faithful(value, _Text(candidate))
        if kept is _UNFAITHFUL or not kept:
            continue
        rank = (_size(kept) == _size(value), -_misread_keys(kept), _size(kept))
        if best_rank is None or rank > best_rank:
            best, best_rank = kept, rank
    return best


def _parse_span(span: str) -> JSONValue:
    """A dict or list parsed from one span, or None."""
    if _nesting(span) > _MAX_DEPTH:
        return None
    try:
        value = json.loads(span)
    except (ValueError, RecursionError):
        value = None
    if value is None and len(span) <= _MAX_REPAIR_CHARS:
        value = _repaired(span)
    if isinstance(value, (dict, list)) and value and _depth_ok(value):
        return value
    return None


def find_json_values(text: str) -> list[JSONValue]:
    """Every non-empty JSON object or array found in ``text``, in order of appearance."""
    found: list[JSONValue] = []
    pos, skips = 0, 0
    while True:
        opener = _OPENER.search(text, pos)
        if opener is None:
            return found
        start = opener.start()
        end = _span_end(text, start)
        span = text[start:] if end < 0 else text[start:end]
        # "[1]" or "[注]" in prose is not JSON worth repairing: an array needs an object or a
        # quoted item inside.
        plausible = not (span[0] == "[" and "{" not in span and '"' not in span)
        value = _parse_span(span) if plausible else None
        # json-repair turns prose such as '[注: 见{"a": 1}]' into a list of fragments;
        # without an object in it, look for the object inside instead.
        if (
            span[0] == "["
            and isinstance(value, list)
            and "{" in span
            and not any(isinstance(item, dict) for item in value)
        ):
            value = None
        if value is not None:
            found.append(value)
        if end >= 0:
            # A closed "[...]" that is not JSON may still hold an object: "[注: {...}]".
            inner = text.find("{", start + 1, end) if value is None and span[0] == "[" else -1
            pos = inner if inner >= 0 else end
        elif value is None and skips < _MAX_UNCLOSED_SKIPS:
            skips += 1
            pos = start + 1
        else:
            return found


#: JSON keys that hold an option answer (a label or letters), most explicit first; the
#: classification and multiple-choice parsers extend this list with keys of their own.
OPTION_ANSWER_KEYS: tuple[str, ...] = (
    "最终答案", "final_answer", "答案", "answer", "正确答案", "正确选项", "选项", "选择",
    # the keys prompts name for the chosen option ("respond in JSON with the correct_answer_key")
    "correct_answer_key", "correct_answer", "answer_key", "correct_option", "correct_choice",
)  # fmt: skip


@lru_cache(maxsize=4096)
def normalize_key(key: str) -> str:
    """Key comparison form: case-folded, without whitespace, punctuation or underscores
    (cached: the answer keys and an output's own keys recur from output to output)."""
    return _KEY_JUNK.sub("", str(key).replace("*", "")).casefold()


def _dicts(value: JSONValue, depth: int = 0) -> Iterator[Mapping[str, JSONValue]]:
    """Dicts in ``value``: the value itself, then nested ones (breadth-first by level)."""
    if depth > 3:
        return
    if isinstance(value, dict):
        yield value
        for v in value.values():
            if isinstance(v, (dict, list)):
                yield from _dicts(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _dicts(v, depth + 1)


def answer_value(values: Sequence[JSONValue], keys: Sequence[str], query: str = "") -> tuple[bool, JSONValue]:
    """The value of the first answer-like key, searching the last JSON value first.

    ``keys`` are in priority order and compared with :func:`normalize_key`, then the keys the
    prompt's JSON template leaves for the answer (:func:`template_answer_keys` of ``query``).
    Returns ``(found, value)``; ``found`` is False when no JSON value has such a key.
    """
    wanted = [normalize_key(k) for k in keys] + list(template_answer_keys(query) if "<" in query else ())
    for value in reversed(values):
        for obj in _dicts(value):
            normalized = {normalize_key(k): v for k, v in reversed(list(obj.items()))}
            for key in wanted:
                if key in normalized:
                    return True, normalized[key]
    return False, None


#: A key of the prompt's JSON template with a placeholder for its value ('"age": <num_days>').
_TEMPLATE_KEY = re.compile(r'"([^"\n]{1,40})"\s*:\s*<[^<>\n]{1,60}>')
#: Template keys for the working, not the answer.
_WORKING_KEY = re.compile(r"explanation|explain|reason|rationale|step|analysis|thought|solution|work|justification")


@lru_cache(maxsize=256)
def template_answer_keys(query: str) -> tuple[str, ...]:
    """The keys the prompt's JSON template leaves for the answer, normalised
    (``{"explanation": <your step by step solution>, "age": <num_days>}`` gives ``age``): those
    with a placeholder value that are not for the working."""
    keys = (normalize_key(m.group(1)) for m in _TEMPLATE_KEY.finditer(query))
    return tuple(key for key in keys if key and not _WORKING_KEY.search(key))


def answer_text(value: JSONValue, sep: str = "、", *, dict_values: bool = False) -> str:
    """A JSON answer value as text: list items joined with ``sep``; dicts give their values
    (joined the same way) when ``dict_values``, else nothing; None gives ``""``."""
    if isinstance(value, list):
        return sep.join(answer_text(v, sep, dict_values=dict_values) for v in value)
    if isinstance(value, dict):
        if not dict_values:
            return ""
        return sep.join(answer_text(v, sep, dict_values=dict_values) for v in value.values())
    return "" if value is None else str(value)


def own_json_values(full: str, query: str) -> list[JSONValue]:
    """The JSON values of an output read whole, before copies of the prompt are blanked in it
    (``{"reasoning": "5+10", "answer": "15"}`` beside the options 5, 10, 15 is no option list
    written back: blanking cut its answer up), leaving out the values the prompt itself holds
    (its template or example, copied)."""
    # the prompt ends inside the object its answer fills ('JSON = {"explanation":'): the output
    # goes on from there, and the object is the prompt's opening and the output together
    opened = _opened_object(query)
    values = find_json_values(opened + full if opened and not full.lstrip().startswith("{") else full)
    if not values or not query:
        return values
    prompt = _prompt_json_values(query)
    own = [value for value in values if value not in prompt]
    if not own and len(values) == 1 and _ONLY_JSON.fullmatch(full):
        # the whole output is one object in the prompt's form that gives the example's value
        # ({"answer": "B"} where the prompt shows {"answer": "B"} as the form): it answers that
        return values
    return own


def _opened_object(query: str) -> str:
    """The JSON object the prompt opens at its end and leaves for the model to go on with
    (``{"explanation":``), or ""."""
    tail = query.rstrip()
    start = tail.rfind("{")
    if start < 0 or "}" in tail[start:] or not tail[start + 1 :].lstrip().startswith('"'):
        return ""
    return tail[start:]


#: An output that is one JSON object and nothing else (a code fence around it at most).
_ONLY_JSON = re.compile(r"\s*(?:```[A-Za-z]*\s*)?\{[\s\S]*\}\s*(?:```)?\s*")


@lru_cache(maxsize=256)
def _prompt_json_values(query: str) -> tuple[JSONValue, ...]:
    return tuple(find_json_values(query)) if "{" in query or "[" in query else ()
