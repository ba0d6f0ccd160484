"""Numbers in Chinese tax answers: reading them and comparing them.

The final number of a whole output is read in :mod:`taxpraben.parsing.readers.number`, the unit
an amount is asked in in :mod:`taxpraben.parsing.units`.

**What a number expression is** (:func:`find_numbers`, :func:`parse_number`):

- Arabic digits, full-width digits (folded), optional decimals, thousands separators
  ``12,000.00`` (a comma counts only between groups of exactly three digits; the Chinese
  comma ``，`` is never a separator, so ``3000，500`` is two numbers);
- a sign: ``-300``, ``+5``, ``负300``, also before a currency symbol (``-$340``). A ``-`` right
  after a digit, letter, ``)`` or ``%`` is an operator, not a sign (``13000-5000`` is 13000 and
  5000);
- scientific notation ``1.2e4``, ``1.2E+04``, ``1.2×10^4`` (also ``x``, ``*``, ``·``,
  ``**``), and integer powers ``10^4`` (superscripts ``10⁴`` are turned into ``10^4`` by the
  cleaner);
- a Chinese multiplier right after the digits: ``万`` 1e4, ``十万``, ``百万``, ``千万``,
  ``亿`` 1e8, ``十亿``, ``百亿``, ``千亿``, ``万亿`` 1e12, and ``千`` 1e3 (not in ``千克``,
  ``千米``, ``千瓦``, ...); ``1.2万元`` is 12000. A smaller amount written right after a 万 or
  亿 amount continues it, as a grader reads it: ``12万5千`` is 125000, ``10万4000元`` 104000,
  ``1万零400元`` 10400;
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

**Equality** (:func:`numbers_equal`): both sides are rounded half-up (away from zero) at
``decimals`` places and compared. Percent rule, with ``p`` the prediction and ``g`` the gold
as written:

- a percent prediction ``12%`` has value 12 and equals gold ``12`` (percent kept as percent);
- when ``percent_as_fraction`` is true and the gold is a plain number with ``|g| <= 1`` (a
  fraction), a percent prediction also equals it when ``round(p) == round(100 * g)``: the
  comparison happens in percent points, so ``12.34%`` equals ``0.1234`` but ``12%`` does
  not equal ``0.1249``; or as the fraction it is, at the places the gold is written with
  (at least ``decimals``): ``18.56%`` equals ``0.186``, as the plain ``0.1856`` does;
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

from taxpraben.parsing.clean import fold_characters

__all__ = [
    "MULTIPLIERS",
    "NumberMatch",
    "asks_for_rate",
    "expects_percent",
    "find_numbers",
    "number_words",
    "numbers_equal",
    "parse_gold_number",
    "parse_number",
    "read_gold_number",
]


@dataclass(frozen=True)
class NumberMatch:
    """One number read from text.

    ``value`` is the number as written (``12%`` -> 12, ``is_percent=True``; ``1.2万`` ->
    12000). ``start``/``end`` are offsets into the string that was searched (for
    :func:`~taxpraben.parsing.readers.number.extract_final_number`: the cleaned text); both
    are -1 when the number came from a parsed JSON value. ``text`` is the expression as it
    appears there.
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
#: The Chinese multipliers a number may be written with, by their value.
MULTIPLIERS: dict[str, Decimal] = {
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
      (?P<sign>(?<![0-9A-Za-z)\]}.%])[-+−](?:[$¥€£](?=\d))?|负)?
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
    # cn2an is imported on first use: importing it takes ~0.25 s, which the start of a run
    # (that reads golds written in digits) should not pay.
    import cn2an

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
                value *= MULTIPLIERS[m.group("unit")]
            elif m.group("bmul") and not m.group("cur"):  # "2.8（万元）"
                value *= MULTIPLIERS[m.group("bmul")]
        except ArithmeticError:  # 0^0, overflow: not an amount
            return None
        if not value.is_finite():
            return None
        if m.group("sign") is not None and m.group("sign")[0] in "-−负":  # "-340", "-$340", "负300"
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


#: What stands before a unit's exponent: a letter and ^ (``dm^3``, ``m^{2}``).
_EXPONENT_BEFORE = re.compile(r"[A-Za-z][ \t]*\^[ \t]*\{?[ \t]*$")
#: A unit of length or time an exponent 2 or 3 is written right after, without ^ (``1000m2``,
#: ``7.22 m/s2``, ``cm3``): the digit is the unit's exponent, no number of its own.
_UNIT_BEFORE_EXPONENT = re.compile(r"(?:^|[^A-Za-z])(?:[kcdm]?m|s|ft)$")


def _iter_numbers(text: str, *, whole: bool = False) -> Iterator[NumberMatch]:
    folded = text.translate(_SAME_LENGTH)
    pending: NumberMatch | None = None
    for m in _NUMBER.finditer(folded):
        if _EXPONENT_BEFORE.search(folded, max(0, m.start() - 4), m.start()):
            continue  # a unit's exponent (dm^3, m^{2}): no number of its own
        if m.group(0) in ("2", "3") and _UNIT_BEFORE_EXPONENT.search(folded[max(0, m.start() - 3) : m.start()]) \
                and not folded[m.end() : m.end() + 1].isalnum():
            continue  # m2, m/s2, cm3: the unit's exponent
        found = _build(m, whole=whole)
        if found is None:
            continue
        found = replace(found, text=text[m.start() : m.end()])
        if pending is not None:
            merged = _continued(text, pending, found)
            if merged is not None:
                pending = merged
                continue
            yield pending
        pending = found
    if pending is not None:
        yield pending


#: Scales after which a smaller amount written right after continues it ("10万4千元").
_SCALES = {"万": Decimal(10_000), "亿": Decimal(100_000_000)}


def _continued(text: str, first: NumberMatch, second: NumberMatch) -> NumberMatch | None:
    """``first`` and ``second`` as one amount when ``second`` continues a 万/亿 amount right
    after it (``10万4千元``, ``10万4000元``, ``1万零400元`` are 104000, 104000 and 10400)."""
    scale = _SCALES.get(first.text.rstrip().rstrip("零〇")[-1:]) if first.text else None
    gap = text[first.end : second.start]
    if scale is None or first.is_percent or second.is_percent or gap not in ("", "零", "〇"):
        return None
    if second.text in ("零", "〇") and not gap:  # read alone where a whole text is read: the gap
        return replace(first, end=second.end, text=text[first.start : second.end])
    if not (0 < second.value < scale) or first.value < 0:
        return None
    return replace(first, value=first.value + second.value, end=second.end, text=text[first.start : second.end],
                   currency=second.currency)  # fmt: skip


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
    :func:`~taxpraben.parsing.readers.number.extract_final_number` for sentences). A whole
    expression in parentheses is an accounting negative: ``"(300)"`` and ``"（1,200.00）元"``
    are -300 and -1200. Offsets refer to the folded form of ``s`` (same length as ``s``
    except for rare NFKC expansions).
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


def read_gold_number(value: object) -> NumberMatch:
    """A gold answer as a :class:`NumberMatch` (so its percent sign and unit are known).

    Accepts what :func:`parse_gold_number` accepts and raises ValueError likewise.
    """
    return _gold_match(value)


#: The Chinese names of a rate (税率, 比例, 百分比 …).
_RATE_NAMES = r"税率|征收率|税负率|负担率|比例|百分比|百分之|利润率|扣除率"
_RATE_WORDS = re.compile(_RATE_NAMES + r"|%")


#: A question that asks for its answer as a percentage.
_ASKS_PERCENT = re.compile(
    r"(?i:(?:expressed|given|written|answer(?:ed)?)\s+(?:as|in)\s+(?:a\s+)?percent(?:age)?s?\b|\bwhat\s+percent(?:age)?\b"
    r"|\bin\s+percent(?:age)?\s+points\b)|百分之几|百分比是多少|用百分数表示"
)


def expects_percent(gold: NumberMatch, query: str) -> bool | None:
    """Whether the answer to ``query`` is a rate (True), an amount (False) or either (None).

    A gold written with ``%``, or a question that asks for a percentage, is a rate. A gold of
    magnitude at most 1 is a rate when the query speaks of rates (税率, 比例, ``%``...) and
    either when it does not; any other gold is an amount.
    """
    if gold.is_percent or _ASKS_PERCENT.search(query or ""):
        return True  # the question asks for a percentage: "(expressed as a percentage)", "what percent"
    if abs(gold.value) <= 1:
        return True if _RATE_WORDS.search(query or "") else None
    return False


#: A question that asks for a rate in percent: "what percentage of …", "the percentage change",
#: "the growth rate", 税率, 比例.
_ASKS_RATE = re.compile(
    r"(?i:\bpercent(?:age)?s?\b|\bgrowth\s+rates?\b|\brates?\s+of\s+(?:growth|change|return|increase|decrease|decline)\b)"
    r"|" + _RATE_NAMES + r"|增长率|变化率|增長率|変化率|比率"
)


def asks_for_rate(question: str) -> bool:
    """The question asks for a rate in percent ("what is the percentage change …", "the growth
    rate"): a bare number answering it may be written in percent points, as models asked for
    "only the number, no units" write "-4.38" for -4.38%."""
    return _ASKS_RATE.search(question or "") is not None


def parse_gold_number(value: object) -> Decimal:
    """A gold answer as a Decimal: int, float, Decimal or a string :func:`parse_number` reads.

    A percent string keeps its written value (``"12%"`` -> 12). Floats go through their
    shortest repr (``0.1`` -> ``Decimal("0.1")``). Raises ValueError for bools, NaN,
    infinities and strings that are not one number.
    """
    return _gold_match(value).value


def _gold_match(value: object) -> NumberMatch:
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
            # in percent points, or as the fraction the gold writes, at the gold's own places
            # ("18.56%" is the gold 0.186, as the plain 0.1856 is)
            exponent = g.as_tuple().exponent
            places = max(decimals, -exponent if isinstance(exponent, int) else 0)
            return _round(p, decimals) == _round(g * 100, decimals) or _round(p / 100, places) == _round(g, places)
        if gold_match.is_percent and not pred.is_percent and abs(p) <= 1:
            return _round(p * 100, decimals) == _round(g, decimals)
    except InvalidOperation:  # exponents beyond Decimal's range: not a tax amount
        return False
    return False


# ---------------------------------------------------------------- numbers in English words

_UNIT_WORD = (r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
              r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)")
_TENS_UNITS = _UNIT_WORD + r"(?:[- ]" + _UNIT_WORD + r")?"
#: A number in English words: "six", "twenty-one", "three hundred and five", "two thousand".
_NUMBER_WORDS = re.compile(
    r"(?<![A-Za-z-])(?i:" + _TENS_UNITS + r"(?:\s+(?:hundred|thousand|million)(?:\s+(?:and\s+)?" + _TENS_UNITS
    + r")?)*)(?![A-Za-z-])"
)
#: "one" that counts nothing: a pronoun ("no one", "one of them", "one another", "the one").
_PRONOUN_ONE = re.compile(r"(?i:(?:no|any|the|this|that|each|every|which|some)\s+one\b|\bone\s+(?:of|another|by\s+one|or\s+the\s+other)\b)")


def number_words(text: str) -> list[NumberMatch]:
    """The numbers ``text`` writes in English words, in order (``six`` 6, ``twenty-one`` 21,
    ``three hundred and five`` 305), converted by ``word2number``; "one" used as a pronoun
    ("no one", "one of them") is no number."""
    if not re.search(r"[A-Za-z]", text):
        return []
    from word2number import w2n  # imported on first use, as cn2an: most outputs write digits

    pronouns = [m.span() for m in _PRONOUN_ONE.finditer(text)]
    found = []
    for m in _NUMBER_WORDS.finditer(text):
        if any(a <= m.start() < b for a, b in pronouns):
            continue
        try:
            value = w2n.word_to_num(m.group(0).replace("-", " "))
        except ValueError:
            continue
        found.append(NumberMatch(Decimal(value), False, m.start(), m.end(), m.group(0)))
    return found
