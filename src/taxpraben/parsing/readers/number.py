"""The final answer of a calculation in a model output (:func:`extract_final_number`).

Read on the cleaned text with LaTeX made plain (:mod:`taxpraben.parsing.latex`), numbers as
:mod:`taxpraben.parsing.numbers` reads them: a JSON answer field; the final statements of
the shared answer region (:mod:`taxpraben.parsing.region`: ``\boxed{}``, answer markers,
self-corrections; latest first); the summaries and consequences (``综上``, ``因此``...; latest
first); the number after the last number-specific conclusion word (``应纳税额``, ``应缴纳``,
``合计``, ``共计``, ``结果``...); the number after the last ``=`` when it is a result (not the
first operand of an expression such as ``= 8,570,000 × 0.05% × 40``); the last number.
Those last three read the text before a note that follows a number (``注：``, ``备注：``,
``（注：……）``) when the note supposes another case (``如不考虑进项则为……``) or names no
result: the note is commentary on the answer before it; then the text with its bracketed
formulas and suppositions blanked (``104,000元（2,260,000÷1.13×13%−156,000）``,
``（若进项税额不得抵扣，则为260000元）``). A number the text denies (``4000元，而非12000元``,
``不是104000元``) is never read; a reading whose sentence offers two amounts (``可能为X，也可能为Y``,
``X或Y``) is ambiguous. ``应纳增值税``, ``应纳个人所得税``... are conclusion words, ``应纳税所得额`` not.
"The number of a statement" is read in its first clause (up to ``。；，\n``) that holds one:
the number after the clause's last ``=`` when it has one (``应纳税额=100000×13%=13000元``
gives 13000), else the clause's first number; a self-correction is read after its last
``应为``/``应该是``/``修正为``/``正确的…是``, else like a whole text. ``答案：零`` is 0.
Markdown tables whose header names a unit have it written after their bare numbers first
(:func:`~taxpraben.parsing.units.tables_with_units`).

Rates and amounts: with ``expect_percent=False`` (the gold is an amount) a number written with
``%`` is a rate restated beside the answer and is passed over wherever another candidate
exists (``应纳增值税104,000元（适用税率13%）`` gives 104000); with ``expect_percent=True`` the
other way round. :func:`~taxpraben.parsing.numbers.expects_percent` decides from the gold and
the query.

**The rules.** Each step above is a rule declared here, beside its attempt over one
:class:`NumberView` of the output (the rules several kinds share are declared in
:mod:`taxpraben.parsing.readers.shared`, their number attempts here); the ``number`` chain
(:data:`NUMBER_CHAIN`) runs them in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from functools import cached_property, lru_cache, wraps
from typing import TYPE_CHECKING

from taxpraben.parsing.alternatives import boxes_disagree, offers_alternatives, one_of_alternatives
from taxpraben.parsing.arithmetic import closed_form_value, symbolic_answer
from taxpraben.parsing.asides import before_note, without_asides, without_calculator_notes
from taxpraben.parsing.asked import counted_in, counted_noun, counts_in, named_years, without_years
from taxpraben.parsing.asked import signed_change as signed  # a change given as a fall is negative
from taxpraben.parsing.chain import Chain, chain_for
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.closing import (
    DECLINES_NUMBER,
    NOTHING_DUE,
    closes_on_number,
    cut_in_a_number,
    gives_no_last_number,
)
from taxpraben.parsing.jsonish import answer_text, answer_value, find_json_values, own_json_values
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.numbers import (
    NumberMatch,
    find_numbers,
    number_words,
    parse_number,
    read_gold_number,
)
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, own_answer
from taxpraben.parsing.readers.shared import (
    ANOTHER_QUESTION_RULE,
    ANSWER_STATEMENT_RULE,
    BOXED_RULE,
    CONCLUSION_RULE,
    COPY_OF_PROMPT_RULE,
    JSON_ANSWER_RULE,
    NO_ANSWER_RULE,
    SELF_CORRECTION_RULE,
    SEVERAL_ANSWERS_RULE,
)
from taxpraben.parsing.region import (
    AMBIGUOUS,
    CORRECTED_VALUE,
    NO_ANSWER,
    NOT_ASSERTED,
    Reading,
    Statement,
    answer_statements,
    conclusion_sentence,
    veto_of,
)
from taxpraben.parsing.registry import Example, register_rule
from taxpraben.parsing.span_words import question_line
from taxpraben.parsing.units import tables_with_units

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

__all__ = ["NUMBER_ANSWER_KEYS", "NUMBER_CHAIN", "NumberView", "extract_final_number", "number_chain", "read_final_number", "read_number"]


#: JSON keys holding the answer of a calculation, in priority order (compared without case,
#: spaces, underscores and punctuation).
NUMBER_ANSWER_KEYS: tuple[str, ...] = (
    "最终答案",
    "final_answer",
    "答案",
    "answer",
    "计算结果",
    "结果",
    "result",
    "应纳税额",
    "应缴纳税额",
    "应缴税额",
    "应补缴税款",
    "税额",
    "amount",
    "value",
)


_CONCLUSION = re.compile(
    r"综上所述|综上|最终结果|计算结果|结果|应纳税额|应缴纳|应缴|应补缴|应补|应交|应退|合计|共计|总计|总额"
    # "应纳增值税", "应纳个人所得税", "应纳契税" (not "应纳税所得额", a base)
    r"|应纳(?!税所得)[\u4e00-\u9fff]{0,7}?税(?!所得|率|[\u4e00-\u9fff]*?所得额)"
)
_CLAUSE_END = re.compile(r"[。；;！？?\n，、]|(?<!\d)!|,(?!\d)")  # "3!" is a factorial
_LEAD = re.compile(r"(?:[\s:：是为约*#>]|\(\d{1,2}\)|\d{1,2}[.、](?!\d))*")
_EQUALS = re.compile(r"[=≈]")
_REFUND = re.compile(r"退(?!出|回原)")
_ZERO_WORDS = re.compile(r"^[\s:：是为*#>]*(?:零|〇)(?:元)?(?:[。.！!\s*]|$)")


def _prefer(numbers: list[NumberMatch], expect_percent: bool | None) -> list[NumberMatch]:
    """Numbers of the wanted kind when there are any: an amount is no rate, a rate no amount."""
    if expect_percent is None:
        return numbers
    wanted = [n for n in numbers if n.is_percent == expect_percent]
    return wanted or numbers


def _shift(found: NumberMatch, offset: int) -> NumberMatch:
    return replace(found, start=found.start + offset, end=found.end + offset)


_OPERATOR_AFTER = re.compile(r"^[^=]*?[×xX*÷/+\-][ \t]*[(（]?[ \t]*\d")


#: A number inside a name: after "the" and before a word ("the 99% VaR of the portfolio",
#: "the 2016 Cannes Film Festival"): it names the quantity, it gives no value.
_NAME_BEFORE = re.compile(r"(?i:(?<![A-Za-z])the)\s+$")
_NAME_AFTER = re.compile(r"\s*[A-Z][A-Za-z]")


#: A number joined by a hyphen to the word after it modifies a noun ("the 3-year average", "a
#: 45-yard pass", "8 2-dollar games"): it names a kind of thing, it states no quantity.
_COMPOUND_AFTER = re.compile(r"-[a-z]{2,}")


def _in_a_name(clause: str, found: NumberMatch) -> bool:
    if _COMPOUND_AFTER.match(clause, found.end):
        return True
    return bool(_NAME_BEFORE.search(clause[max(0, found.start - 5) : found.start])) and bool(_NAME_AFTER.match(clause, found.end))


#: A copula that gives the value: 为, 是, 等于; an English one right before its number ("the order of
#: the element 5 in U_8 is 2", not "a threshold of 6 would be appropriate for 2 regions").
_COPULA = re.compile(
    r"为|是|等于|(?<![A-Za-z])(?:is|are|was|were|equals|will\s+be|would\s+be)"
    r"(?=\s+(?:(?:approximately|about|around|roughly|exactly|equal\s+to|only)\s+)?[-−$€£¥]?\s?\d)"
)
_IN_BRACKETS = re.compile(r"[(（][^()（）]*[)）]")


def _clause_number(
    text: str, start: int, expect_percent: bool | None = None, *, result_only: bool = False
) -> NumberMatch | None:
    """The number answering a marker that ends at ``start`` (see the module docstring).

    ``result_only``: the number must be a result, not the first operand of an expression
    (``= 8,570,000 × 0.05% × 40`` answers nothing).
    """
    lead = _LEAD.match(text, start)
    begin = lead.end() if lead else start
    end_match = _CLAUSE_END.search(text, begin)
    end = end_match.start() if end_match else len(text)
    clause = text[begin:end]
    numbers = [n for n in _prefer(find_numbers(clause), expect_percent) if not _denied(clause, n) and not _in_a_name(clause, n)]
    if not numbers:
        return None
    unbracketed = _IN_BRACKETS.sub(lambda m: " " * len(m.group(0)), clause)  # "5%（名义税率为20%）": an aside
    equals = list(_EQUALS.finditer(clause)) or list(_COPULA.finditer(unbracketed))
    if equals:  # the value follows the last "=" (or copula: "能被3整除的概率为 37/64" is 37/64)
        after = [n for n in numbers if n.start >= equals[-1].end()]
        if after:
            numbers = after
    fraction = _fraction_at(clause, numbers[0])
    if fraction is not None:  # "x = 1/2": one value, not its numerator over an operator
        return _shift(fraction, begin)
    if result_only and _OPERATOR_AFTER.match(clause[numbers[0].end :]):
        return None
    return _shift(numbers[0], begin)


#: A fraction written inline as a value ("1/2", "-3 / 4"), the whole of what its clause gives: no
#: operator, digit or slash after it (not a date "12/31/2020", not "1/2 × 8").
_FRACTION = re.compile(r"[-−]?\d{1,6}[ \t]*/[ \t]*\d{1,6}(?![\d/.,]\d|[ \t]*[-+×*÷/^(（\d])")


def _fraction_at(clause: str, found: NumberMatch) -> NumberMatch | None:
    """The fraction that opens at ``found`` in ``clause`` as one value, or None."""
    m = _FRACTION.match(clause, found.start)
    if m is None or found.is_percent or re.search(r"[\d/]\s*$", clause[max(0, found.start - 2) : found.start]):
        return None  # the middle of a date ("12/31/2020") or of a longer expression
    numerator, denominator = (Decimal(part.strip().replace("−", "-")) for part in m.group(0).split("/"))
    if denominator == 0:
        return None
    return NumberMatch(numerator / denominator, False, m.start(), m.end(), m.group(0))


def _from_markers(
    text: str, marker: re.Pattern[str], expect_percent: bool | None = None
) -> NumberMatch | None:
    result_only = marker is _EQUALS
    for m in reversed(list(marker.finditer(text))):
        found = _clause_number(text, m.end(), expect_percent, result_only=result_only)
        if found is not None:
            return found
    return None


def _from_json_value(value: JSONValue, expect_percent: bool | None = None) -> NumberMatch | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        try:
            return read_gold_number(value)
        except ValueError:
            return None
    if isinstance(value, str):
        return parse_number(value) or _final_in_text(clean_prediction(value), expect_percent)
    if isinstance(value, list):
        for item in reversed(value):
            found = _from_json_value(item, expect_percent)
            if found is not None:
                return found
    return None


#: Right before a number the text denies ("4000元，而非12000元"): that number is not the answer.
_DENIED = re.compile(r"(?:而非|而不是|并非|不是|不应是|不应为|不等于)\s*$")


def _denied(text: str, number: NumberMatch) -> bool:
    return bool(_DENIED.search(text[max(0, number.start - 6) : number.start]))


def _last_number(text: str, expect_percent: bool | None) -> NumberMatch | None:
    numbers = [n for n in _prefer(find_numbers(text), expect_percent) if not _denied(text, n)]
    if len(numbers) >= 2:  # "… is 11/12.": the fraction the text ends on, not its denominator
        fraction = _fraction_at(text, numbers[-2])
        if fraction is not None and fraction.end == numbers[-1].end:
            return fraction
    return numbers[-1] if numbers else None


def _final_in_text(text: str, expect_percent: bool | None = None) -> NumberMatch | None:
    """Without a final statement: conclusion words, the last ``=``, the last number."""
    for marker in (_CONCLUSION, _EQUALS):
        found = _from_markers(text, marker, expect_percent)
        if found is not None:
            return found
    return _last_number(text, expect_percent)


@lru_cache(maxsize=256)
def _given_values(query: str) -> frozenset[Decimal]:  # a task's outputs share their queries
    return frozenset(n.value for n in find_numbers(question_line(query)))


def _statement_number(statement: Statement, expect_percent: bool | None, unit: str | None = None,
                      years: frozenset[str] = frozenset(), given: frozenset[Decimal] = frozenset()) -> NumberMatch | None:
    """The number a final-answer statement gives (module docstring, "Final answer"); where the question
    counts in a unit (``unit``) and the statement's sentence gives one value in it, that value: the quantity
    asked for. A conclusion whose number is a year the question names (``years``) gives none ("In 2020,
    Corning's sales rose": the period asked about, not the amount)."""
    found = _stated_number(statement, expect_percent)
    if found is not None and statement.kind in ("conclusion", "answer") and not found.is_percent and found.text.strip() in years:
        return None  # "Answer:\nOkay, the change from 2007 to 2008 …": the period asked about, no value
    if given and found is not None and statement.kind == "conclusion" and found.value in given:
        # "So, Tommy raises $221 from selling 43 brownies and 23 slices": the question's data
        # restated beside the result, which is the one value of the sentence it does not give
        result = [n for n in find_numbers(_sentence_of(statement.text)) if n.value not in given]
        if len(result) == 1:
            return result[0]
    if given and found is not None and statement.kind == "answer" and found.value in given \
            and _restates_data(_sentence_of(statement.text), given):
        return None  # "Answer: Tom buys a set for $3000 and sells his old one for $1000, …": the data restated
    if unit and found is not None and statement.kind in ("answer", "conclusion"):
        counted = counted_in(_sentence_of(statement.text), unit)
        if counted is not None and counted.value != found.value:
            return _detached(counted)
    return found


def _restates_data(sentence: str, given: frozenset[Decimal]) -> bool:
    """``sentence`` opens by restating the question's data (an answer heading a derivation): its first two
    numbers are two different values the question gives, the first after words, not after a copula."""
    numbers = find_numbers(sentence)
    if len(numbers) < 2 or not all(n.value in given for n in numbers[:2]) or numbers[0].value == numbers[1].value:
        return False  # "循环群Z/100Z有100个子群": one datum named, and a result that happens to equal it
    head = sentence[: numbers[0].start]
    return re.search(r"[^\W\d_]{2,}", head) is not None and not _GIVEN_AFTER.search(head)


def _stated_number(statement: Statement, expect_percent: bool | None) -> NumberMatch | None:
    body = statement.text
    whole = parse_number(body.strip(" \t:：*#>是为"))
    if whole is not None:
        return whole
    closed = closed_form_value(body.strip(" \t:：*#>是为"))
    if closed is not None:  # "\frac{\sqrt{66}}{6}", "17/3": the value a grader compares
        return NumberMatch(closed, False, -1, -1, body.strip())
    if _ZERO_WORDS.match(body):
        return NumberMatch(Decimal(0), False, -1, -1, "零")
    if _says_zero(body):
        return NumberMatch(Decimal(0), False, -1, -1, "零")
    if statement.kind == "correction":
        found = _from_markers(body, CORRECTED_VALUE, expect_percent)
        # "更正/重新计算" open a corrected working whose result is the answer; a bare "不对"
        # gives its answer with 应为/改为 or gives none ("其中不对的地方已修正……").
        if found is None and not statement.marker.startswith(("不对", "wait", "Wait", "WAIT")):
            found = _final_in_text(body, expect_percent)
    elif statement.kind == "boxed":
        found = _final_in_text(body, expect_percent)
    else:
        found = _clause_number(body, 0, expect_percent)
        if found is not None and statement.kind == "answer":
            found = _derived(statement, found, expect_percent) or found
        if found is None:  # the answer may follow a clause without a number: "答案：经计算，为8000元"
            found = _final_in_text(body, expect_percent)
            if found is not None and found.start >= 0 and _in_a_name(body, found):
                found = None  # "the answer is the 99% VaR of the portfolio": the quantity named, no value
    if found is None and statement.kind == "answer":
        found = _opening_words(body)  # "The answer is six."
    if found is not None and found.start >= 0 and _REFUND.search(body[max(0, found.start - 12) : found.start]):
        found = replace(found, refund=True)
    return found


#: What lets a statement give the number right after it, besides its marker and a lead: a copula.
_GIVEN_AFTER = re.compile(
    r"(?:为|是|等于|约|[:：]|(?<![A-Za-z])(?i:is|are|was|were|equals|be|of|to))"
    r"\s*(?:(?:approximately|about|around|roughly|exactly|only)\s+)?[-−$¥€£]?\s*$"
)


def _derived(statement: Statement, found: NumberMatch, expect_percent: bool | None) -> NumberMatch | None:
    """The result of the derivation an answer marker heads, where its first number is only a
    figure the derivation starts from ("Answer: Brittany's mom gave … for 1 child ticket ($10) …
    $22 + $8 = $30."; "#### Bethany可以跑10圈，Quinn可以跑5圈，所以……10 - 5 = 5圈"): the result after
    the last ``=`` of the marker's line, the quantity asked for; None where the statement gives
    its number itself (right after the marker or a copula) or its line computes nothing after it."""
    head = statement.text[: found.start] if found.start >= 0 else ""
    if found.start < 0 or _LEAD.fullmatch(head) or _GIVEN_AFTER.search(head):
        return None
    line_end = statement.source.find("\n", statement.body_start)
    line = statement.source[statement.body_start : line_end if line_end >= 0 else len(statement.source)]
    equals = [m for m in _EQUALS.finditer(line) if m.start() >= found.end]
    if not equals:
        return None
    end = _CLAUSE_END.search(line, equals[-1].end())
    result = _prefer(find_numbers(line[equals[-1].end() : end.start() if end else len(line)]), expect_percent)
    if not result or _OPERATOR_AFTER.match(line, equals[-1].end() + result[0].end):
        return None  # "= 3 × 4": an expression, not a result
    return _shift(result[0], equals[-1].end())


#: What may stand before the number a statement writes in words ("is", ":", "**", "only").
_BEFORE_WORDS = re.compile(r"^[\s:：*#>\"'“]*(?i:(?:is|was|will\s+be|would\s+be|equals?|only|just|exactly)\s+)*")


def _opening_words(body: str) -> NumberMatch | None:
    """The number an answer statement opens with, written in words ("is six", ": twenty-one")."""
    end = _CLAUSE_END.search(body)
    clause = body[: end.start()] if end else body
    words = number_words(clause)
    before = _BEFORE_WORDS.match(clause)
    if words and before is not None and words[0].start == before.end():
        return _detached(words[0])
    return None


def _says_zero(body: str) -> bool:
    """The first clause of ``body`` says nothing is due (税额为零, 无需缴纳, 不需要缴纳: the answer
    0 when the gold is an amount) and holds no number."""
    end = _CLAUSE_END.search(body)
    clause = body[: end.start()] if end else body
    return bool(NOTHING_DUE.search(clause)) and not find_numbers(clause)


#: "It cannot be computed": the output declines to give a number.
_CANNOT = re.compile(
    r"(?:无法|不能|没法|难以|唔能|唔可以)[^，,。；;\n]{0,12}?(?:计算|計算|算出|确定|確定|得出|求出|给出|給出|回答)"
    r"|信息不足|条件不足|缺少(?:必要的)?(?:信息|条件|数据)|没有(?:足够|充分)的?(?:信息|条件|数据)|没有(?:具体|确定|唯一)的?答案"
    # the same in the other languages models answer in: Japanese, Korean, Spanish, German,
    # French, Russian ("no se puede determinar", "kann nicht berechnet werden", "невозможно определить")
    r"|(?:求め|計算|特定|決定|算出)(?:することが)?(?:でき|られ)ません|(?:계산|결정|확정)할\s*수\s*없"
    r"|(?i:no\s+(?:se\s+puede|es\s+posible|podemos)\s+(?:\w+\s+){0,2}(?:determinar|calcular|encontrar|saber)"
    r"|(?:kann|können|lässt\s+sich)\s+(?:\w+\s+){0,3}nicht\s+(?:\w+\s+){0,2}(?:bestimm|berechn|ermittel)\w*"
    r"|(?:impossible\s+de|ne\s+(?:peut|peuvent|pouvons)\s+pas)\s+(?:\w+\s+){0,2}(?:déterminer|calculer|trouver)"
    r"|(?:невозможно|нельзя)\s+(?:\w+\s+){0,2}(?:определить|вычислить|рассчитать|найти))"
)


def _declining(line: str, given: frozenset[Decimal] = frozenset()) -> bool:
    """``line`` says the number cannot be given, in a clause without a number ("因此，我们无法
    根据题目中的条件计算出离心率", "we cannot determine an exact figure")."""
    for m in _CANNOT.finditer(line):
        begin = max((x.end() for x in _CLAUSE_END.finditer(line, 0, m.start())), default=0)
        end = _CLAUSE_END.search(line, m.end())
        if not [n for n in _values_in(line[begin : end.start() if end else len(line)]) if n.value not in given]:
            return True
    for m in DECLINES_NUMBER.finditer(line):
        if _CONDITION_BEFORE.search(line, max(0, m.start() - 24), m.start()):
            continue  # "as R goes to infinity, I(R) approaches pi/2": a condition, not the result
        later = _CONCLUDES_LATER.search(line, m.end())
        if later is not None and _values_in(line[later.end() :]):
            continue  # "the 10-K does not mention any … Therefore, … is $0": concluded after all
        end = _CLAUSE_END.search(line, m.end())
        if not [n for n in _values_in(line[m.start() : end.start() if end else len(line)]) if n.value not in given]:
            return True  # the predicate gives no number but the question's: "the limit of 3n(a_n)^3 … is infinity"
    return False


def _values_in(clause: str) -> list[NumberMatch]:
    """The numbers of ``clause`` that are values, not parts of a name ("FY2018", "3M", "COVID-19")."""
    return [n for n in find_numbers(clause) if not _NAMED_NUMBER.match(clause, n.start)
            and not re.match(r"[A-Z]\b", clause[n.end : n.end + 2]) and not _COMPOUND_AFTER.match(clause, n.end)]


#: A number written inside a name: right after a Latin letter or a hyphenated word ("FY2018", "COVID-19").
_NAMED_NUMBER = re.compile(r"(?<=[A-Za-z])\d|(?<=[A-Za-z]-)\d")


#: A conclusion drawn after a sentence that seemed to decline.
_CONCLUDES_LATER = re.compile(r"(?i:(?<![A-Za-z])(?:therefore|thus|hence|so)(?![A-Za-z]))|因此|所以|综上")
#: A condition a limit is taken under ("as n goes to infinity", "when x approaches infinity").
_CONDITION_BEFORE = re.compile(r"(?i:(?<![A-Za-z])(?:as|when|while|if)\s+\S+\s*)$")


def _declines(text: str, given: frozenset[Decimal] = frozenset()) -> bool:
    """The last line says the number cannot be given, in a clause without a number but the question's (``given``)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and _declining(lines[-1], given)


def _detached(found: NumberMatch) -> NumberMatch:
    return replace(found, start=-1, end=-1)


def _around(text: str, found: NumberMatch) -> str | None:
    """The line of ``text`` that holds ``found`` (None when its offsets are unknown)."""
    if found.start < 0:
        return None
    start = text.rfind("\n", 0, found.start) + 1
    end = text.find("\n", found.end)
    return text[start : end if end >= 0 else len(text)]


def _sentence_of(body: str) -> str:
    """The first sentence of a statement's text."""
    end = _SENTENCE_END.search(body)
    return body[: end.start()] if end else body


def _checked(statement: Statement, found: NumberMatch, rule: str) -> Reading:
    """A statement's number, unless the statement offers alternatives ("6棵、15棵或20棵"),
    gives an expression, or says the number cannot be given."""
    sentence = _sentence_of(statement.text)
    if offers_alternatives(sentence, opening=statement.kind == "answer"):
        return Reading(None, AMBIGUOUS, rule=ALTERNATIVES_RULE.name)
    if symbolic_answer(sentence):  # "the answer is 2 * (3y-1)": an expression, not the number asked for
        return Reading(None, NOT_ASSERTED, rule=EXPRESSION_RULE.name)
    if _declining(_IN_BRACKETS.sub(" ", sentence)):  # "the answer is that … though we cannot determine an exact figure"
        return Reading(None, NOT_ASSERTED, rule=DECLINES_RULE.name)
    return Reading(found, rule=rule, source=statement.full_text)


_SENTENCE_END = re.compile(r"[。！？?\n]|(?<!\d)!")


# ---------------------------------------------------------------- the rules


_NO_ANSWER = Reading(None, NO_ANSWER, rule=NO_ANSWER_RULE.name)
_FINAL_RULE = {"boxed": BOXED_RULE.name, "correction": SELF_CORRECTION_RULE.name}


class NumberView:
    """One output as the number rules read it, built once: cleaned with LaTeX made plain,
    its own answer (with a query), tables given their units, and (on first use) its
    statements and the last number of its text."""

    def __init__(self, text: str, expect_percent: bool | None, query: str, raw: str | None = None) -> None:
        #: The raw output (TaxBen's rules read it).
        self.raw = text if raw is None else raw
        self.expect_percent = expect_percent
        self.query = query
        self.full = strip_latex(clean_prediction(text))
        own = own_answer(self.full, query) if query else None
        self.failure = own.failure if own is not None else None
        cleaned = own.text if own is not None and not own.failure else self.full
        self.empty = not cleaned.strip()
        self.cleaned = "" if self.empty or self.failure else without_calculator_notes(tables_with_units(cleaned))

    @cached_property
    def years(self) -> frozenset[str]:
        """The years the question names, unless it asks for one."""
        return named_years(self.query) if self.query else frozenset()

    @cached_property
    def given(self) -> frozenset[Decimal]:
        """The values the question gives (its data): a conclusion restates them beside its result."""
        return _given_values(self.query) if self.query else frozenset()

    @cached_property
    def unit(self) -> str | None:
        """The unit the question counts in ("gallons"), if it names one."""
        return counted_noun(self.query) if self.query else None

    @cached_property
    def raw_final_text(self) -> str | None:
        """The number expression the default chain reads from the raw output, as written (the
        stand-in for TaxBen's GPT-3.5 extraction, K3 of :mod:`taxpraben.parsing.readers.taxben`)."""
        found = extract_final_number(self.raw)
        return None if found is None else found.text

    @cached_property
    def json_values(self) -> list[JSONValue]:
        return own_json_values(self.full, self.query) if self.query else find_json_values(self.cleaned)

    @cached_property
    def statements(self) -> list[Statement]:
        return answer_statements(self.cleaned, query=self.query)

    @cached_property
    def first_final(self) -> tuple[Statement, NumberMatch, str] | None:
        """The latest final statement that gives a number, the number and its rule."""
        for statement in self.statements:
            if statement.kind == "conclusion":
                break
            found = signed(_statement_number(statement, self.expect_percent, self.unit, self.years, self.given), statement.text, self.query)
            if found is not None:
                return statement, _detached(found), _FINAL_RULE.get(statement.kind, ANSWER_STATEMENT_RULE.name)
        return None

    @cached_property
    def last_number(self) -> tuple[str, NumberMatch] | None:
        """The last number of the text (before a note, without asides, or the whole), and the
        text it was found in."""
        for text in (before_note(self.cleaned, _CONCLUSION), without_asides(self.cleaned), self.cleaned):
            if text is not None:
                found = _final_in_text(without_years(text, self.years), self.expect_percent)
                if found is not None:
                    # a figure that names the quantity ("the 99% VaR of the portfolio") gives no value
                    return None if found.start >= 0 and _in_a_name(text, found) else (text, found)
        return None


NumberAttempt = Callable[[NumberView], Reading | None]


def _on_text(attempt: NumberAttempt) -> NumberAttempt:
    """An attempt that reads the own answer: it does not apply when there is none."""

    @wraps(attempt)
    def guarded(view: NumberView) -> Reading | None:
        return None if view.empty or view.failure else attempt(view)

    return guarded


@COPY_OF_PROMPT_RULE.reads("number")
def _copy_of_prompt(view: NumberView) -> Reading | None:
    failure = view.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


@ANOTHER_QUESTION_RULE.reads("number")
def _another_question(view: NumberView) -> Reading | None:
    failure = view.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


@JSON_ANSWER_RULE.reads("number")
@_on_text
def _json_answer(view: NumberView) -> Reading | None:
    found_key, value = answer_value(view.json_values, NUMBER_ANSWER_KEYS, view.query)
    if not found_key:
        return None
    if isinstance(value, str) and symbolic_answer(value):  # {"answer": "e^(1.2)/(1+e^(1.2))"}: no number
        return Reading(None, NOT_ASSERTED, rule=EXPRESSION_RULE.name)
    from_json = _from_json_value(value, view.expect_percent)
    if from_json is None:
        return None
    return Reading(_detached(from_json), rule=JSON_ANSWER_RULE.name, source=answer_text(value))


def _tags_disagree(view: NumberView) -> bool:
    """One answer tag, closed each time, holds different values since the last correction
    ("[FINAL_ANSWER]27885[/FINAL_ANSWER] [FINAL_ANSWER]35066[/FINAL_ANSWER] …"): the model
    gave two answers in the very form it was asked for, and neither is its answer."""
    values: dict[str, list[Decimal]] = {}
    for statement in view.statements:  # latest first
        if statement.kind == "correction":
            break
        if statement.kind != "answer" or statement.body_end is None:
            continue
        found = _statement_number(statement, view.expect_percent, view.unit, view.years)
        if found is not None:
            values.setdefault(statement.marker.strip().lower(), []).append(found.value / 100 if found.is_percent else found.value)
    # one value written at two precisions ("16.500000000000001", "16.5") is one answer
    return any(abs(value - stated[0]) > abs(stated[0]) * Decimal("1e-9") for stated in values.values() for value in stated[1:])


@SEVERAL_ANSWERS_RULE.reads("number")
@_on_text
def _two_boxed(view: NumberView) -> Reading | None:
    boxes = sorted((st.start, st.text) for st in view.statements if st.kind == "boxed")
    if boxes_disagree(view.cleaned, boxes, lambda box: _final_in_text(box, view.expect_percent)) or _tags_disagree(view):
        return Reading(None, AMBIGUOUS, rule=SEVERAL_ANSWERS_RULE.name)
    return None


WORD_BOX_RULE = register_rule(
    "veto.word-box", kinds=("number",), tier=7, confidence="high",
    description="The output closes on a box that holds words and no number ('\\boxed{\\text{parabolic}}', "
                "'\\boxed{True}'): its answer is no number, and none is read from its derivation.",
    examples=(Example("number", "E' = k/2r - k/2r = 0, so the orbit is open.\nThe final answer is:\n\\boxed{\\text{parabolic}}", None),),
    leaves_alone=(Example("number", "The tax due is \\boxed{44000 \\text{ yuan}}", "44000"),),
)


@WORD_BOX_RULE.reads("number")
@_on_text
def _word_box(view: NumberView) -> Reading | None:
    final = next((st for st in view.statements if st.kind in ("answer", "boxed", "correction")), None)
    if final is None or final.kind != "boxed" or len(view.cleaned) - final.start > _WORD_BOX_TAIL:
        return None
    words = final.text.strip()
    if re.search(r"[^\W\d_]{3,}", words) and not find_numbers(words) and not number_words(words):
        return Reading(None, NOT_ASSERTED, rule=WORD_BOX_RULE.name)
    return None


_WORD_BOX_TAIL = 300  #: how near the output's end a box stands to be the answer it closes on (characters)


def _final_by(rule: str) -> NumberAttempt:
    """The attempt of a final-statement rule: the latest final statement's number, when it
    is a statement of ``rule`` (unless it offers alternatives: ``veto.alternatives``)."""

    @_on_text
    def attempt(view: NumberView) -> Reading | None:
        first = view.first_final
        if first is None or first[2] != rule:
            return None
        statement, found, _rule = first
        return _checked(statement, found, rule)

    return attempt


SELF_CORRECTION_RULE.reads("number")(_final_by(SELF_CORRECTION_RULE.name))
ANSWER_STATEMENT_RULE.reads("number")(_final_by(ANSWER_STATEMENT_RULE.name))
BOXED_RULE.reads("number")(_final_by(BOXED_RULE.name))

EXPRESSION_RULE = register_rule(
    "veto.expression", kinds=("number",), tier=7, confidence="high",
    description="The final statement gives an expression in a variable, not the number asked for "
                "('the answer is 2 * (3y-1)', 'a = 1050 / m').",
    examples=(Example("number", "So the total is 2 * (3y-1).\nThe answer is 2 * (3y-1)", None),
              Example("number", "The length is five more than 320 per week:\nl = 320 + 5w", None)),
    leaves_alone=(Example("number", "The answer is 5 (option b)", "5"),
                  Example("number", "循环群Z/100Z有100个子群,排列为:\nZ/1Z, Z/2Z, ..., Z/100Z", "100")),
)

@EXPRESSION_RULE.reads("number")
@_on_text
def _expression(view: NumberView) -> Reading | None:
    # a final statement or a conclusion is vetoed where it is read (_checked); with neither, an
    # output whose closing sentence gives an expression ("l = 320 + 5w") has no number either
    closing = conclusion_sentence(view.cleaned)
    if re.search(r"[=＝]", closing) and symbolic_answer(closing):  # stated with "=", not a list of terms
        return Reading(None, NOT_ASSERTED, rule=EXPRESSION_RULE.name)
    return None


DECLINES_RULE = register_rule(
    "veto.declines", kinds=("number",), tier=7, confidence="high",
    description="The output, its answer statement or its latest conclusion says the amount cannot be computed.",
    examples=(Example("number", "题目条件不足，无法计算应纳税额。", None),
              Example("number", "Therefore, the answer is that it owes more than $0, though we cannot determine an exact figure.", None),
              Example("number", "所以 x = 23。\n因此，我们无法根据题目中的条件计算出离心率。这可能是题目有误。", None)),
)


@DECLINES_RULE.reads("number")
@_on_text
def _declines_attempt(view: NumberView) -> Reading | None:
    if _declines(view.cleaned, view.given):
        return Reading(None, NOT_ASSERTED, rule=DECLINES_RULE.name)  # "无法直接计算出……": no number is given
    return None


@CONCLUSION_RULE.reads("number")
@_on_text
def _conclusion(view: NumberView) -> Reading | None:
    if not closes_on_number(view.cleaned):
        # a consequence drawn on the way ("So, the museum tour is 1.5 hours.") is the answer only
        # in an output that closes on its result: not one cut off, unfinished or declining
        return None
    for statement in view.statements:
        if statement.kind == "conclusion":
            found = signed(_statement_number(statement, view.expect_percent, view.unit, view.years, view.given), statement.text, view.query)
            if found is None:
                if _declining(_sentence_of(statement.text)):
                    # the latest conclusion says the number cannot be computed: earlier ones
                    # were tried and given up
                    return Reading(None, NOT_ASSERTED, rule=DECLINES_RULE.name)
                continue
            if _result_stated_after(view.cleaned, statement.start, found.value):
                # "因此加班工资为……= 60美元。\n总收入为：400 + 60 = 460美元。": the consequence was
                # drawn on the way; the output goes on to the result it closes on
                return None
            reading = _checked(statement, _detached(found), CONCLUSION_RULE.name)
            closing = conclusion_sentence(view.cleaned)
            if reading.rule == EXPRESSION_RULE.name and closing not in statement.full_text \
                    and find_numbers(closing) and not symbolic_answer(closing):
                # "So, the big pool has 4x gallons. … x = 2 gallons. The amount … is 2 gallons.":
                # an expression on the way, and the output closes on a value
                return None
            return reading
    return None


#: A line that states a result: a copula, an equals sign or a colon, then a number and at most
#: a short unit, at the line's end ("总收入为：400 + 60 = 460美元。").
_STATES_RESULT = re.compile(
    r"(?:=|＝|为|是|:|：)\s*[$¥￥£€]?\s*-?\d[\d,]*(?:\.\d+)?\s*[%A-Za-z\u4e00-\u9fff/]{0,6}\s*"
    r"(?:[(（][^()（）\n]{1,24}[)）])?\s*[。.!！]?$"  # "= 804.22 (million dollars)"
)
#: A line that checks a result already given ("验算：", "Check:"): it states no new one.
_CHECKS = re.compile(r"^\W*(?:检验|验算|验证|校验|检查|(?i:check|verify|verification))")


def _result_stated_after(text: str, at: int, value: Decimal) -> bool:
    """A line after the one at ``at`` states a result other than ``value`` (a check of it aside)."""
    end = text.find("\n", at)
    if end < 0:
        return False
    for line in text[end:].split("\n"):
        line = line.strip().strip("*#>$ ")
        m = _STATES_RESULT.search(line)
        if m is None or _CHECKS.match(line):
            continue
        numbers = find_numbers(m.group(0))
        if numbers and numbers[-1].value != value:
            return True
    return False


SAYS_ZERO_RULE = register_rule(
    "number.says-zero", kinds=("number",), tier=6, confidence="high",
    description="The last sentence says there is nothing to pay ('无需缴纳', '不需要缴纳').",
    examples=(Example("number", "本月无需缴纳增值税", "0"),),
)


@SAYS_ZERO_RULE.reads("number")
@_on_text
def _zero(view: NumberView) -> Reading | None:
    last = conclusion_sentence(view.cleaned)
    if _says_zero(last):
        return Reading(NumberMatch(Decimal(0), False, -1, -1, "零"), rule=SAYS_ZERO_RULE.name, source=last)
    return None


ALTERNATIVES_RULE = register_rule(
    "veto.alternatives", kinds=("number",), tier=7, confidence="high",
    description="The number read is one of alternatives the output offers ('可能为X，也可能为Y').",
    examples=(Example("number", "应纳税额可能为44000元，也可能为104000元", None),),
)


@ALTERNATIVES_RULE.reads("number")
@_on_text
def _alternatives(view: NumberView) -> Reading | None:
    last = view.last_number
    if last is not None and one_of_alternatives(*last):
        return Reading(None, AMBIGUOUS, rule=ALTERNATIVES_RULE.name)
    return None


SOLE_NUMBER_RULE = register_rule(
    "number.sole-number", kinds=("number",), tier=6, confidence="high",
    description="No statement, but the output holds one number and only one ('44000', '应纳税额44000元。').",
    examples=(Example("number", "44000", "44000"), Example("number", "**44000元**", "44000"),
              Example("number", "应纳增值税44000元。", "44000")),
    leaves_alone=(Example("number", "104000-60000=44000", "44000"),),
)


@SOLE_NUMBER_RULE.reads("number")
@_on_text
def _sole(view: NumberView) -> Reading | None:
    last = view.last_number
    if last is None or len(find_numbers(view.cleaned)) != 1 or cut_in_a_number(view.cleaned):
        return None  # the one number of an output cut while writing it is no answer (veto.unfinished)
    text, number = last
    if number.start > 0 and text[number.start - 1 : number.start].isascii() and text[number.start - 1].isalpha():
        return None  # digits written against a letter are an exponent or an index ("πr2", "x2"), no value
    return Reading(number, rule=SOLE_NUMBER_RULE.name, source=_around(*last))


IN_WORDS_RULE = register_rule(
    "number.in-words", kinds=("number",), tier=6, confidence="low",
    description="No number in digits: the first count written in words ('David would have six brothers.'), other "
                "than a quantity the question itself states.",
    examples=(Example("number", "The company owes forty-four thousand yuan of VAT this month.", "44000"),),
    leaves_alone=(Example("number", "No one can tell without the invoices.", None),),
)
_SENTENCE_OF_WORDS = re.compile(r"[^.!?。！？\n]+")


@IN_WORDS_RULE.reads("number")
@_on_text
def _in_words(view: NumberView) -> Reading | None:
    if find_numbers(view.cleaned):
        return None
    asked = view.query.casefold()
    for m in _SENTENCE_OF_WORDS.finditer(view.cleaned):
        sentence = m.group(0)
        words = number_words(sentence)
        if not words:
            continue
        # the count in the unit the question counts, the last the sentence gives ("… three sisters,
        # … for a total of three brothers"); else the first count that is not the question's own
        in_unit = [w for w in words if view.unit and counts_in(sentence, w.end, view.unit)]
        for found in in_unit[-1:] or words:
            counted = re.match(r"\s*[A-Za-z]+", sentence[found.end :])
            phrase = found.text + (counted.group(0) if counted else "")
            if not in_unit and counted and re.sub(r"\s+", " ", phrase).casefold() in asked:
                continue  # "three sisters": the question's own quantity restated
            return Reading(_detached(found), rule=IN_WORDS_RULE.name, source=sentence.strip())
    return None


LAST_NUMBER_RULE = register_rule(
    "number.last-number", kinds=("number",), tier=6, confidence="low",
    description="No statement: the last number of the output, outside notes, bracketed formulas and suppositions.",
    examples=(Example("number", "800000×13%=104000\n104000-60000=44000", "44000"),),
)


UNFINISHED_RULE = register_rule(
    "veto.unfinished", kinds=("number",), tier=7, confidence="high",
    description="No statement, and the derivation does not close on a number (cut off mid-sentence, ending on "
                "an operator or an open bracket, or closing on a remark without one), or runs 1,500 characters or "
                "more: its last number is no answer, but one of those drawn on the way.",
    examples=(Example("number", "800000×13%=104000\n104000-60000=44000\n应纳增值税 =", None),
              Example("number", "Step 1: the base is 800000.\nStep 2: multiply by the rate and then", None)),
    leaves_alone=(Example("number", "800000×13%=104000\n104000-60000=44000", "44000"),),
)


@UNFINISHED_RULE.reads("number")
@_on_text
def _unfinished(view: NumberView) -> Reading | None:
    if view.last_number is None:
        return None
    if gives_no_last_number(view.cleaned):
        return Reading(None, NO_ANSWER, rule=UNFINISHED_RULE.name)
    return None


DECLINED_RULE = register_rule(
    "veto.declined", kinds=("number",), tier=7, confidence="high",
    description="No statement, and the output says somewhere that it cannot give the number (no access to the "
                "data, the material lacks it, it cannot be computed): the numbers it discusses are no answer.",
    examples=(Example("number", "I'm sorry, but I don't have access to the company's statements.\nTo compute the ratio, "
                                "take the FY2021 revenue.\nDivide it by the average assets.\nRound it to 2 decimals.", None),
              Example("number", "Without the capital expenditure, it's not possible to calculate the average.\n"
                                "The 2018 revenue was 11,763 million.\nThe 2019 figure was 739 million.", None)),
    leaves_alone=(Example("number", "800000×13%=104000\n104000-60000=44000", "44000"),
                  Example("number", "I can't see the invoice, so assume sales of 800000: 800000×13%=104000", "104000")),
)


@DECLINED_RULE.reads("number")
@_on_text
def _declined(view: NumberView) -> Reading | None:
    # tried after every statement, conclusion and sole number: what is left is the last number
    # of a text that said it would not give one (a figure it discusses, a year, a count it restates)
    if view.last_number is not None and any(_declining(line, view.given) for line in view.cleaned.split("\n")):
        return Reading(None, NOT_ASSERTED, rule=DECLINED_RULE.name)
    return None


@LAST_NUMBER_RULE.reads("number")
@_on_text
def _last(view: NumberView) -> Reading | None:
    last = view.last_number
    if last is None:
        return None
    line = _around(*last)
    if line is not None and last[1].value in view.given and not re.search(r"[=＝+×*/÷]", line):
        # "Aisha needs $38,088 to buy 8 tickets for a Caribbean cruise.": the question's data
        # restated after the result, which is the one value of the line it does not give
        result = [n for n in find_numbers(line) if n.value not in view.given]
        if len(result) == 1:
            return Reading(_detached(result[0]), rule=LAST_NUMBER_RULE.name, source=line)
    return Reading(last[1], rule=LAST_NUMBER_RULE.name, source=line)


@NO_ANSWER_RULE.reads("number")
def _no_answer(view: NumberView) -> Reading | None:
    return _NO_ANSWER


#: The order in which the number reader tries its rules (the default chain set, ``taxpraben``): its
#: rules' names, each a rule declared in this module or in :mod:`~taxpraben.parsing.readers.shared`.
NUMBER_CHAIN: tuple[str, ...] = (
    "veto.copy-of-prompt",
    "veto.another-question",
    "json.answer-field",
    "veto.several-answers",
    "veto.word-box",
    "final.self-correction",
    "final.answer-statement",
    "final.boxed",
    "veto.declines",
    "conclusion.statement",
    "number.says-zero",
    "veto.expression",
    "veto.alternatives",
    "number.sole-number",
    "number.in-words",
    "veto.unfinished",
    "veto.declined",
    "number.last-number",
    "veto.no-answer",
)


def number_chain(names: tuple[str, ...] | None = None) -> Chain[NumberView]:
    """The number chain: ``names`` in order (default: the ``number`` chain of
    :data:`NUMBER_CHAIN`), each rule's number attempt."""
    return chain_for("number", NUMBER_CHAIN if names is None else names)


def read_number(
    text: str, expect_percent: bool | None, query: str, chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """The final number of an output, read by the number chain (``raw``: the output before
    cleaning, when ``text`` is not it)."""
    return number_chain(chain).run(NumberView(text, expect_percent, query, raw), _NO_ANSWER)


def extract_final_number(
    text: str, *, expect_percent: bool | None = None
) -> NumberMatch | None:
    """The final answer of a calculation in a model output, or None when it has no number.

    The output is cleaned (:func:`~taxpraben.parsing.clean.clean_prediction`) and its LaTeX
    made plain (:mod:`~taxpraben.parsing.latex`). Order: a JSON answer field
    (:data:`NUMBER_ANSWER_KEYS`); the final statements of
    :func:`~taxpraben.parsing.region.answer_statements` (boxed, answer markers,
    self-corrections; latest first); the
    conclusion statements (latest first); conclusion words, the last ``=``, the last number.
    ``expect_percent``: True when the answer is a rate (a number written with ``%`` is
    preferred wherever several are candidates), False when it is an amount (a number with
    ``%`` is a rate restated beside the amount and is passed over), None for no preference.
    Offsets are -1 except for the last fallbacks (offsets into the cleaned text).
    """
    reading = read_final_number(text, expect_percent=expect_percent)
    return reading.value if isinstance(reading.value, NumberMatch) else None


def read_final_number(
    text: str, *, expect_percent: bool | None = None, query: str = "", chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """:func:`extract_final_number` with the reason when no number is read; with ``query``,
    what the output copies of it and any question it goes on to invent are not read
    (:func:`~taxpraben.parsing.prompt_copy.own_answer`). The reading is the execution of the
    ``number`` chain (``chain``: other rule names, in order;
    :mod:`taxpraben.parsing.readers.number`)."""
    return read_number(text, expect_percent, query, chain, raw)
