"""Numbers in Chinese tax answers: reading them, finding the final one, comparing them.

**What a number expression is** (:func:`find_numbers`, :func:`parse_number`):

- Arabic digits, full-width digits (folded), optional decimals, thousands separators
  ``12,000.00`` (a comma counts only between groups of exactly three digits; the Chinese
  comma ``，`` is never a separator, so ``3000，500`` is two numbers);
- a sign: ``-300``, ``+5``, ``负300``. A ``-`` right after a digit, letter, ``)`` or ``%`` is
  an operator, not a sign (``13000-5000`` is 13000 and 5000);
- scientific notation ``1.2e4``, ``1.2E+04``, ``1.2×10^4`` (also ``x``, ``*``, ``·``,
  ``**``), and integer powers ``10^4`` (superscripts ``10⁴`` are turned into ``10^4`` by the
  cleaner);
- a Chinese multiplier right after the digits: ``万`` 1e4, ``十万``, ``百万``, ``千万``,
  ``亿`` 1e8, ``十亿``, ``百亿``, ``千亿``, ``万亿`` 1e12, and ``千`` 1e3 (not in ``千克``,
  ``千米``, ``千瓦``, ...); ``1.2万元`` is 12000. Mixed forms such as ``12万5千`` are read as
  two numbers;
- Chinese numerals, converted with ``cn2an`` (``一万二千`` 12000, ``十二万五千`` 125000,
  ``两千``, ``壹万贰仟``, ``负三百``, ``三点五`` 3.5 with exact decimals). Inside running
  text a numeral run counts only when it cannot be an ordinary word: it has a decimal
  ``点``, or at least one digit and one power character (``十百千万亿``), or starts with
  ``十`` and has two or more characters (``十万``), or is followed by a currency or percent
  sign. So ``一般纳税人``, ``统一``, ``十分``, ``千万`` are not numbers;
  ``三十日`` (30) is. :func:`parse_number` (a whole expression) also accepts a lone ``十``;
- a percent: ``12%`` and ``百分之十二`` give value 12 with ``is_percent=True``; per-mille
  and per-ten-thousand forms are read in percent points (``千分之五`` and ``5‰`` are 0.5,
  ``万分之五`` and ``5‱`` are 0.05, all with ``is_percent=True``);
- a currency suffix (``元``) belongs to the expression but does not change the value.

**Accounting negatives.** ``(300)`` / ``（1,200.00）元`` mean -300 / -1200 only in
:func:`parse_number`, i.e. when the *whole* expression is one parenthesised amount (a JSON
field value, a table cell). In running text parentheses are list markers ``(1)`` and
asides ``(税率13%)``, so :func:`find_numbers` reads them as positive.

**Final answer of a calculation** (:func:`extract_final_number`), on the cleaned text with
LaTeX made plain (:mod:`taxpraben.parsing.latex`): a JSON answer field; the final statements of
the shared answer region (:mod:`taxpraben.parsing.region`: ``\\boxed{}``, answer markers,
self-corrections; latest first); the summaries and consequences (``综上``, ``因此``...; latest
first); the number after the last number-specific conclusion word (``应纳税额``, ``应缴纳``,
``合计``, ``共计``, ``结果``...); the number after the last ``=`` when it is a result (not the
first operand of an expression such as ``= 8,570,000 × 0.05% × 40``); the last number.
"The number of a statement" is read in its first clause (up to ``。；，\\n``) that holds one:
the number after the clause's last ``=`` when it has one (``应纳税额=100000×13%=13000元``
gives 13000), else the clause's first number; a self-correction is read after its last
``应为``/``应该是``/``修正为``/``正确的…是``, else like a whole text. ``答案：零`` is 0.

Rates and amounts: with ``expect_percent=False`` (the gold is an amount) a number written with
``%`` is a rate restated beside the answer and is passed over wherever another candidate
exists (``应纳增值税104,000元（适用税率13%）`` gives 104000); with ``expect_percent=True`` the
other way round. :func:`expects_percent` decides from the gold and the query.

Units (:func:`gold_unit`, :class:`AnswerUnit`): the unit of a gold amount is the one its text
is written in (``"17.14万元"``), else the one the query asks for (``单位：万元``,
``多少万元``, ``以万元为单位``, ``（万元）``), else 元. A predicted number written with a
multiplier or currency word (``28.50万元``, ``285000元``, ``2.8（万元）``) is converted into
that unit; a bare number is taken as already in it. Both sides are compared in that unit.

**Equality** (:func:`numbers_equal`): both sides are rounded half-up (away from zero) at
``decimals`` places and compared. Percent rule, with ``p`` the prediction and ``g`` the gold
as written:

- a percent prediction ``12%`` has value 12 and equals gold ``12`` (percent kept as percent);
- when ``percent_as_fraction`` is true and the gold is a plain number with ``|g| <= 1`` (a
  fraction), a percent prediction also equals it when ``round(p) == round(100 * g)``: the
  comparison happens in percent points, so ``12.34%`` equals ``0.1234`` but ``12%`` does
  not equal ``0.1249``;
- symmetrically, a gold written as a percent string (``"12%"``) equals a plain prediction
  ``0.12`` (``|p| <= 1``, compared as ``round(100 * p) == round(g)``).

A gold of ``0.5`` therefore also equals a prediction ``0.5%`` (first rule): the gold alone
cannot say which was meant, and the first rule is the literal reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from itertools import islice
from typing import Any

import cn2an

from taxpraben.parsing._jsonish import answer_value, find_json_values
from taxpraben.parsing.clean import clean_prediction, fold_characters
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.prompt_copy import own_answer
from taxpraben.parsing.region import (
    AMBIGUOUS,
    CORRECTED_VALUE,
    NO_ANSWER,
    NOT_ASSERTED,
    Reading,
    Statement,
    answer_statements,
    conclusion_sentence,
)

__all__ = [
    "NUMBER_ANSWER_KEYS",
    "YUAN",
    "AnswerUnit",
    "NumberMatch",
    "asked_unit",
    "expects_percent",
    "extract_final_number",
    "find_numbers",
    "gold_unit",
    "numbers_equal",
    "parse_gold_number",
    "parse_number",
    "read_final_number",
    "read_gold_number",
]


@dataclass(frozen=True)
class NumberMatch:
    """One number read from text.

    ``value`` is the number as written (``12%`` -> 12, ``is_percent=True``; ``1.2万`` ->
    12000). ``start``/``end`` are offsets into the string that was searched (for
    :func:`extract_final_number`: the cleaned text); both are -1 when the number came from a
    parsed JSON value. ``text`` is the expression as it appears there.
    """

    value: Decimal
    is_percent: bool
    start: int
    end: int
    text: str
    #: A multiplier (万, 亿, 千, ...) was written: the value is already in 元-like base units.
    scaled: bool = False
    #: A currency word (元, 块, 圆) was written right after the number.
    currency: bool = False
    #: The answer statement calls the amount a refund (应退税2520元): a negative gold of the
    #: same size is meant.
    refund: bool = False


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

# Same-length folding for offsets that match the caller's string: full-width ASCII (except
# the Chinese comma, see clean.py), ideographic space, minus signs.
_SAME_LENGTH = str.maketrans(
    {
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F) if c != 0xFF0C},
        "\u3000": " ",
        "\u2212": "-",
        "\ufe63": "-",
        "\u2013": "-",
    }
)

_CN_DIGITS = "零〇一二两三四五六七八九壹贰叁肆伍陆柒捌玖"
_CN_POWERS = "十百千万亿拾佰仟"
_CN_DIGIT_VALUE = {c: i for i, c in enumerate("零一二三四五六七八九")} | {
    "〇": 0,
    "两": 2,
    **{c: i + 1 for i, c in enumerate("壹贰叁肆伍陆柒捌玖")},
}
_UNITS = {
    "万亿": Decimal(10) ** 12,
    "千亿": Decimal(10) ** 11,
    "百亿": Decimal(10) ** 10,
    "十亿": Decimal(10) ** 9,
    "亿": Decimal(10) ** 8,
    "千万": Decimal(10) ** 7,
    "百万": Decimal(10) ** 6,
    "十万": Decimal(10) ** 5,
    "万": Decimal(10) ** 4,
    "千": Decimal(10) ** 3,
}

_NUMBER = re.compile(
    r"""
    (?:
      (?P<sign>(?<![0-9A-Za-z)\]}.%])[-+]|负)?
      (?P<num>(?:\d{1,3}(?:,\d{3})+(?![0-9])|\d+)(?:\.\d+)?|(?<![\w.])\.\d+)
      (?:
         [eE](?P<exp>[-+]?\d{1,2})(?![A-Za-z0-9])
       | [ \t]*[×xX*·][ \t]*10[ \t]*(?:\^|\*\*)[ \t]*(?P<exp2>[-+]?\d{1,2})(?![0-9])
       | \^(?P<pow>\d{1,2})(?![0-9])
      )?
      (?:[ \t]?(?P<unit>万亿|千亿|百亿|十亿|亿|千万|百万|十万|万|千(?![克米瓦帕焦卡])))?
    |
      (?P<cnpct>百分之|千分之|万分之)?
      (?P<cn>负?[零〇一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟]{1,40}
         (?:点[零〇一二三四五六七八九壹贰叁肆伍陆柒捌玖]{1,12})?)
    )
    (?P<pct>[ \t]?[%‰‱])?
    (?P<cur>[ \t]?(?:元|块|圆))?
    (?P<bunit>[ \t]?\([ \t]*(?P<bmul>万|亿|千|百万|十万|千万)?元[ \t]*\))?
    """,
    re.VERBOSE,
)


def _cn_to_decimal(run: str) -> Decimal | None:
    """A Chinese numeral run (optionally with 点 decimals) as an exact Decimal, or None."""
    negative = run.startswith("负")
    run = run.removeprefix("负")
    integer, _, fraction = run.partition("点")
    try:
        whole = Decimal(int(cn2an.cn2an(integer, "normal"))) if integer else Decimal(0)
    except Exception:  # cn2an raises ValueError and others on non-numerals such as 万一
        return None
    if fraction:
        digits = "".join(str(_CN_DIGIT_VALUE.get(c, -1)) for c in fraction)
        if "-" in digits:
            return None
        whole += Decimal("0." + digits)
    return -whole if negative else whole


def _plausible_cn(run: str, suffixed: bool) -> bool:
    """Whether a numeral run in running text is a number rather than part of a word."""
    body = run.removeprefix("负")
    if "点" in body or suffixed:
        return True
    if len(body) >= 2 and body[0] in "十拾":  # 十万, 十亿: no digit character, still a number
        return True
    return any(c in _CN_DIGITS for c in body) and any(c in _CN_POWERS for c in body)


def _build(m: re.Match[str], *, whole: bool) -> NumberMatch | None:
    percent = m.group("pct") is not None or m.group("cnpct") is not None
    if m.group("cn") is not None:
        run = m.group("cn")
        suffixed = percent or m.group("cur") is not None
        if not whole and not _plausible_cn(run, suffixed):
            return None
        value = _cn_to_decimal(run)
        if value is None:
            return None
    else:
        value = Decimal(m.group("num").replace(",", ""))
        exponent = m.group("exp") or m.group("exp2")
        try:
            if exponent:
                value = value.scaleb(int(exponent))
            if m.group("pow"):
                value = value ** int(m.group("pow"))
            if m.group("unit"):
                value *= _UNITS[m.group("unit")]
            elif m.group("bmul") and not m.group("cur"):  # "2.8（万元）"
                value *= _UNITS[m.group("bmul")]
        except ArithmeticError:  # 0^0, overflow: not an amount
            return None
        if not value.is_finite():
            return None
        if m.group("sign") in ("-", "负"):
            value = -value
    # Per-mille and per-ten-thousand forms are read in percent points: 千分之五 = 5‰ = 0.5%.
    per = (m.group("cnpct") or "") + (m.group("pct") or "").strip()
    if "千分之" in per or "‰" in per:
        value /= 10
    elif "万分之" in per or "‱" in per:
        value /= 100
    return NumberMatch(
        value,
        percent,
        m.start(),
        m.end(),
        m.group(0),
        scaled=m.group("unit") is not None or (m.group("bmul") is not None and m.group("cur") is None),
        currency=m.group("cur") is not None or m.group("bunit") is not None,
    )


def _iter_numbers(text: str, *, whole: bool = False) -> Iterator[NumberMatch]:
    folded = text.translate(_SAME_LENGTH)
    for m in _NUMBER.finditer(folded):
        found = _build(m, whole=whole)
        if found is not None:
            yield replace(found, text=text[m.start() : m.end()])


def find_numbers(text: str) -> list[NumberMatch]:
    """Every number expression in ``text``, left to right (rules in the module docstring).

    Offsets refer to ``text`` itself; full-width digits are read without changing offsets.
    """
    return list(_iter_numbers(text))


# What may surround the single number of a whole expression.
_FILLER = re.compile(
    r"(?:\s|[¥$€￥:：=.,，。;；!！*_`'\"“”‘’]|人民币|RMB|CNY|rmb|约为|约|大约|左右|共|为|是)+"
)
_PARENS = re.compile(r"^[(（]\s*(?P<inner>[^()（）]+?)\s*[)）]\s*(?:元|块|圆)?\s*$")


def parse_number(s: str) -> NumberMatch | None:
    """Read ``s`` as one number expression, or return None.

    ``s`` must hold exactly one number; besides it only currency words and signs (元, ¥,
    人民币, RMB), ``约``/``左右``, quotes, Markdown emphasis and punctuation are allowed:
    ``"约 ¥12,000.00 元"`` is 12000, ``"应纳税额为13000元"`` and ``"100与200"`` are None (use
    :func:`extract_final_number` for sentences). A whole expression in parentheses is an
    accounting negative: ``"(300)"`` and ``"（1,200.00）元"`` are -300 and -1200. Offsets
    refer to the folded form of ``s`` (same length as ``s`` except for rare NFKC expansions).
    """
    if not isinstance(s, str):
        return None
    text = fold_characters(s).strip()
    if not text:
        return None
    paren = _PARENS.match(text)
    if paren:
        inner = parse_number(paren.group("inner"))
        if inner is None or inner.value < 0:
            return inner
        return replace(inner, value=-inner.value, start=0, end=len(text), text=text)
    found = list(islice(_iter_numbers(text, whole=True), 2))
    if len(found) != 1:
        return None
    match = found[0]
    rest = text[: match.start] + " " + text[match.end :]
    if _FILLER.sub("", rest):
        return None
    return match


def read_gold_number(value: Any) -> NumberMatch:
    """A gold answer as a :class:`NumberMatch` (so its percent sign and unit are known).

    Accepts what :func:`parse_gold_number` accepts and raises ValueError likewise.
    """
    return _gold_match(value)


_RATE_WORDS = re.compile(r"税率|征收率|税负率|负担率|比例|百分比|百分之|利润率|扣除率|%")


def expects_percent(gold: NumberMatch, query: str) -> bool | None:
    """Whether the answer to ``query`` is a rate (True), an amount (False) or either (None).

    A gold written with ``%`` is a rate. A gold of magnitude at most 1 is a rate when the
    query speaks of rates (税率, 比例, ``%``...) and either when it does not; any other gold
    is an amount.
    """
    if gold.is_percent:
        return True
    if abs(gold.value) <= 1:
        return True if _RATE_WORDS.search(query or "") else None
    return False


def parse_gold_number(value: Any) -> Decimal:
    """A gold answer as a Decimal: int, float, Decimal or a string :func:`parse_number` reads.

    A percent string keeps its written value (``"12%"`` -> 12). Floats go through their
    shortest repr (``0.1`` -> ``Decimal("0.1")``). Raises ValueError for bools, NaN,
    infinities and strings that are not one number.
    """
    return _gold_match(value).value


def _gold_match(value: Any) -> NumberMatch:
    if isinstance(value, bool):
        raise ValueError(f"a boolean is not a numeric gold: {value!r}")
    if isinstance(value, NumberMatch):
        return value
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, Decimal):
        number = value
    elif isinstance(value, str):
        parsed = parse_number(value)
        if parsed is None:
            raise ValueError(f"not a number: {value!r}")
        return parsed
    else:
        raise ValueError(f"not a number: {value!r}")
    if not number.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return NumberMatch(number, False, -1, -1, str(value))


def _round(value: Decimal, decimals: int) -> Decimal:
    # Enough precision for any magnitude, so quantize never raises.
    with localcontext() as ctx:
        ctx.prec = max(28, value.adjusted() + decimals + 4)
        return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def numbers_equal(
    pred: NumberMatch | None,
    gold: Decimal | float | int | str | NumberMatch,
    decimals: int = 2,
    percent_as_fraction: bool = True,
) -> bool:
    """Whether a prediction equals the gold at ``decimals`` places (percent rule above).

    ``pred`` None (nothing extracted) is never equal. The gold is read by
    :func:`parse_gold_number` and raises ValueError when it is not a number.
    """
    gold_match = _gold_match(gold)
    if pred is None:
        return False
    p, g = pred.value, gold_match.value
    try:
        if _round(p, decimals) == _round(g, decimals):
            return True
        if not percent_as_fraction:
            return False
        if pred.is_percent and not gold_match.is_percent and abs(g) <= 1:
            return _round(p, decimals) == _round(g * 100, decimals)
        if gold_match.is_percent and not pred.is_percent and abs(p) <= 1:
            return _round(p * 100, decimals) == _round(g, decimals)
    except InvalidOperation:  # exponents beyond Decimal's range: not a tax amount
        return False
    return False


# --- final answer of a calculation ------------------------------------------------------

_CONCLUSION = re.compile(
    r"综上所述|综上|最终结果|计算结果|结果|应纳税额|应缴纳|应缴|应补缴|应补|应交|应退|合计|共计|总计|总额"
)
_CLAUSE_END = re.compile(r"[。；;！!？?\n，、]|,(?!\d)")
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
    numbers = _prefer(list(_iter_numbers(clause)), expect_percent)
    if not numbers:
        return None
    equals = list(_EQUALS.finditer(clause))
    if equals:
        after = [n for n in numbers if n.start >= equals[-1].end()]
        if after:
            numbers = after
    if result_only and _OPERATOR_AFTER.match(clause[numbers[0].end :]):
        return None
    return _shift(numbers[0], begin)


def _from_markers(
    text: str, marker: re.Pattern[str], expect_percent: bool | None = None
) -> NumberMatch | None:
    result_only = marker is _EQUALS
    for m in reversed(list(marker.finditer(text))):
        found = _clause_number(text, m.end(), expect_percent, result_only=result_only)
        if found is not None:
            return found
    return None


def _from_json_value(value: Any, expect_percent: bool | None = None) -> NumberMatch | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        try:
            return _gold_match(value)
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


def _last_number(text: str, expect_percent: bool | None) -> NumberMatch | None:
    numbers = _prefer(list(_iter_numbers(text)), expect_percent)
    return numbers[-1] if numbers else None


def _final_in_text(text: str, expect_percent: bool | None = None) -> NumberMatch | None:
    """Without a final statement: conclusion words, the last ``=``, the last number."""
    for marker in (_CONCLUSION, _EQUALS):
        found = _from_markers(text, marker, expect_percent)
        if found is not None:
            return found
    return _last_number(text, expect_percent)


def _statement_number(statement: Statement, expect_percent: bool | None) -> NumberMatch | None:
    """The number a final-answer statement gives (module docstring, "Final answer")."""
    body = statement.text
    whole = parse_number(body.strip(" \t:：*#>是为"))
    if whole is not None:
        return whole
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
        if found is None:  # the answer may follow a clause without a number: "答案：经计算，为8000元"
            found = _final_in_text(body, expect_percent)
    if found is not None and found.start >= 0 and _REFUND.search(body[max(0, found.start - 12) : found.start]):
        found = replace(found, refund=True)
    return found


#: "Nothing is due": the answer 0 when the gold is an amount (税额为零, 无需缴纳, 不需要缴纳).
_ZERO_DUE = re.compile(
    r"(?:税额|税款|应纳税额|应缴税额|应交税额|应补税额|金额|结果)?\s*(?:为|是)?\s*(?:零|〇)(?![一二三四五六七八九十百千万点])"
    r"|(?:无需|无须|不需要?|不用|不必)(?:再)?(?:缴纳|缴税|纳税|交税|补缴|补税|申报缴纳)|免(?:征|予征收|缴)"
)


def _says_zero(body: str) -> bool:
    """The first clause of ``body`` says nothing is due and holds no number."""
    end = _CLAUSE_END.search(body)
    clause = body[: end.start()] if end else body
    return bool(_ZERO_DUE.search(clause)) and not list(_iter_numbers(clause))


#: "It cannot be computed": the output declines to give a number.
_CANNOT = re.compile(
    r"(?:无法|不能|没法|难以)(?:直接)?(?:准确)?(?:计算|算出|确定|得出|求出|给出|回答)|信息不足|条件不足|缺少(?:必要的)?(?:信息|条件|数据)"
    r"|没有(?:具体|确定|唯一)的?答案"
)
def _declines(text: str) -> bool:
    """The last line says the number cannot be given, in a clause without a number."""
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return False
    last = lines[-1]
    for m in _CANNOT.finditer(last):
        begin = max((x.end() for x in _CLAUSE_END.finditer(last, 0, m.start())), default=0)
        end = _CLAUSE_END.search(last, m.end())
        if not list(_iter_numbers(last[begin : end.start() if end else len(last)])):
            return True
    return False


#: Amounts offered as alternatives: "6棵、15棵或20棵", "100或200".
_ALTERNATIVES = re.compile(r"\d[\d.,]*\s*[^\d\s。；;，,]{0,3}\s*(?:或者|或是|或)\s*\d")


def _tables_with_units(text: str) -> str:
    """Markdown tables whose header names the unit (``金额（万元）``, or a ``单位：万元`` line
    above the table): each number in such a column gets the unit written after it, so that
    it is read in that unit."""
    if "|" not in text or ("万" not in text and "千元" not in text and "亿" not in text):
        return text
    lines = text.split("\n")
    out: list[str] = []
    units: list[str | None] | None = None
    table_unit: str | None = None
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("|"):
            units = None
            m = _UNIT_LINE.search(line)
            table_unit = m.group("u") if m else table_unit
            out.append(line)
            continue
        cells = stripped.strip("|").split("|")
        if units is None:  # the header row
            units = []
            for cell in cells:
                m = _UNIT_BRACKET.search(fold_characters(cell)) or _UNIT_ASKED.search(fold_characters(cell))
                units.append(next((g for g in m.groups() if g), None) if m else table_unit)
            out.append(line)
            continue
        if all(set(c.strip()) <= set("-: ") for c in cells):
            out.append(line)
            continue
        for i, cell in enumerate(cells):
            unit = units[i] if i < len(units) else None
            if unit and unit != "元" and _BARE_CELL.fullmatch(cell.strip()):
                cells[i] = f" {cell.strip()}{unit} "
        out.append("|" + "|".join(cells) + "|")
    return "\n".join(out)


_BARE_CELL = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _detached(found: NumberMatch) -> NumberMatch:
    return replace(found, start=-1, end=-1)


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
    text: str, *, expect_percent: bool | None = None, query: str = ""
) -> Reading:
    """:func:`extract_final_number` with the reason when no number is read; with ``query``,
    what the output copies of it and any question it goes on to invent are not read
    (:func:`~taxpraben.parsing.prompt_copy.own_answer`)."""
    cleaned = strip_latex(clean_prediction(text))
    if query:
        own = own_answer(cleaned, query)
        if own.failure:
            return Reading(None, own.failure)
        cleaned = own.text
    if not cleaned.strip():
        return Reading(None, NO_ANSWER)
    cleaned = _tables_with_units(cleaned)
    found = _final_number(cleaned, expect_percent)
    if found is None:
        return Reading(None, NO_ANSWER)
    return found


def _final_number(cleaned: str, expect_percent: bool | None) -> Reading | None:
    """The final number of a cleaned output (the order of :func:`extract_final_number`)."""
    def ok(found: NumberMatch | None) -> Reading | None:
        return None if found is None else Reading(found)

    found_key, value = answer_value(find_json_values(cleaned), NUMBER_ANSWER_KEYS)
    if found_key:
        from_json = _from_json_value(value, expect_percent)
        if from_json is not None:
            return ok(_detached(from_json))
    statements = answer_statements(cleaned)
    for statement in statements:
        if statement.kind == "conclusion":
            break
        found = _statement_number(statement, expect_percent)
        if found is not None:
            return _checked(statement.text, _detached(found))
    last = conclusion_sentence(cleaned)
    if _declines(cleaned):
        return Reading(None, NOT_ASSERTED)  # "无法直接计算出……": no number is given
    for statement in statements:
        if statement.kind == "conclusion":
            found = _statement_number(statement, expect_percent)
            if found is not None:
                return _checked(statement.text, _detached(found))
    if _says_zero(last):
        return Reading(NumberMatch(Decimal(0), False, -1, -1, "零"))
    return ok(_final_in_text(cleaned, expect_percent))


def _checked(body: str, found: NumberMatch) -> Reading:
    """A statement's number, unless the statement offers alternatives ("6棵、15棵或20棵")."""
    end = _SENTENCE_END.search(body)
    sentence = body[: end.start()] if end else body
    if _ALTERNATIVES.search(sentence):
        return Reading(None, AMBIGUOUS)
    return Reading(found)


_SENTENCE_END = re.compile(r"[。！？!?\n]")


# --- the unit an answer is asked in --------------------------------------------------------

#: Units an answer may be asked in, by the factor from 元.
_UNIT_FACTORS: dict[str, Decimal] = {
    "元": Decimal(1),
    **{m + "元": _UNITS[m] for m in ("千", "万", "十万", "百万", "千万", "亿")},
}
_UNIT_WORD = r"(?P<u>亿元|千万元|百万元|十万元|万元|千元|元)"
_UNIT_ASKED = re.compile(
    r"单位\s*[:：为是]?\s*(?:人民币)?\s*" + _UNIT_WORD
    + r"|多少\s*" + _UNIT_WORD.replace("?P<u>", "?P<u2>")
    + r"|以\s*" + _UNIT_WORD.replace("?P<u>", "?P<u3>") + r"\s*(?:为单位|计|表示)"
)
_UNIT_BRACKET = re.compile(r"[(（]\s*" + _UNIT_WORD + r"\s*[)）]")
_UNIT_LINE = re.compile(r"单位\s*[:：为是]?\s*(?:人民币)?\s*" + _UNIT_WORD)


@dataclass(frozen=True)
class AnswerUnit:
    """The unit an amount is asked in: its name (``"万元"``) and factor from 元 (10000)."""

    name: str
    factor: Decimal

    def convert(self, match: NumberMatch) -> NumberMatch:
        """``match`` expressed in this unit, so that it compares at N decimals of this unit.

        A number written with a multiplier or a currency word (``28.5万元``, ``285000元``)
        is in 元 and is divided by the factor; a bare number is taken as already in this
        unit; a percent is left alone.
        """
        if match.is_percent or self.factor == 1 or not (match.scaled or match.currency):
            return match
        return replace(match, value=match.value / self.factor)

    def show(self, value: Decimal) -> str:
        """A value in this unit as text for the samples file (``"28.5万元"``; 元 unnamed)."""
        text = format(value, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text + ("" if self.factor == 1 else self.name)


YUAN = AnswerUnit("元", Decimal(1))


def asked_unit(query: str) -> AnswerUnit:
    """The unit the question asks the amount in (``单位：万元``, ``多少万元``, ``（万元）``).

    An explicit request wins over a unit in brackets; of several, the last one (the
    question usually comes last). 元 when the query names none.
    """
    query = fold_characters(query or "")
    for pattern in (_UNIT_ASKED, _UNIT_BRACKET):
        found = [m for m in pattern.finditer(query)]
        if found:
            m = found[-1]
            name = next(g for g in m.groups() if g)
            return AnswerUnit(name, _UNIT_FACTORS[name])
    return YUAN


def gold_unit(gold: Any, query: str) -> AnswerUnit:
    """The unit of a gold amount: the one its text is written in (``"17.14万元"``), else
    the unit the query asks for, else 元."""
    if isinstance(gold, str):
        match = parse_number(gold)
        if match is not None and match.scaled:
            for name, factor in sorted(_UNIT_FACTORS.items(), key=lambda kv: -kv[1]):
                if name[:-1] and name[:-1] in match.text:
                    return AnswerUnit(name, factor)
    return asked_unit(query)
