"""Several values offered for one number: no single answer.

An output that offers different amounts as alternatives ("6棵、15棵或20棵", "4 or 5"), gives one
quantity two values ("x = 2, x = -2", "x = 13/4 and x = -6/4") or, in an answer statement, two
numbers at once ("the answer is 0.5 and 1.5") gives no single number. One value written two ways
("约等于0.179或者17.9%", "1/4 or 25%", "0.63, or 63%") is one answer, and "60, or 15" restates. Cells of
a table side by side ("$16 | $9") are several values too. Used
by the number reader (:mod:`taxpraben.parsing.readers.number`) on its statements and on the last
number it reads, and on its boxes (:func:`boxes_disagree`). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from taxpraben.parsing.numbers import NumberMatch, find_numbers, parse_number

__all__ = ["boxes_disagree", "offers_alternatives", "one_of_alternatives", "same_at_precision"]


#: Amounts offered as alternatives: "6棵、15棵或20棵", "100或200".
_ALTERNATIVES = re.compile(
    r"\d[\d.,]*\s*[^\d\s。；;，,]{0,3}\s*(?:或者|或是|或)\s*\d"
    # "4 or 5": English "or" between two numbers, no comma before it ("60, or 15" restates)
    r"|\d(?:[\d,]*\d)?(?:\.\d+)?\s*%?[ \t]+or[ \t]+[-−]?[$¥€£]?\d"
    r"|可能(?:为|是)\s*\d[^。；;]*?[，,]\s*也可能(?:为|是)\s*\d"  # "可能为257.5万元，也可能为250万元"
    # table cells side by side, written back from the prompt's table: "$16 | $9", "high heels | 3 | 7"
    r"|\d(?:[\d,]*\d)?(?:\.\d+)?\s*%?[ \t]+\|[ \t]+[-−]?[$¥€£]?\d"
)


#: One quantity given two values in one sentence: "x = 2, x = -2", "x = 13/4 and x = -6/4".
_SAME_VARIABLE = re.compile(
    r"(?<![A-Za-z])([A-Za-z])\s*=\s*([-−]?\d[\d.,/]*)\s*(?:,|，|;|；|\band\b|\bor\b|或)\s*(?:and\s+|or\s+)?\1\s*=\s*([-−]?\d[\d.,/]*)")
#: An answer statement that gives two numbers at once: "is 0.5 and 1.5".
_TWO_AT_ONCE = re.compile(
    r"^[\s:：*]*(?:(?i:is|are|was|were)\s+)?[-−]?[$¥€£]?\d(?:[\d,]*\d)?(?:\.\d+)?(?![\d,.]\d)\s*%?\s*(?:,\s|\band\b)\s*"
    r"[-−]?[$¥€£]?\d")


def offers_alternatives(sentence: str, opening: bool = False) -> bool:
    """``sentence`` offers different amounts as alternatives ("6棵、15棵或20棵", "4 or 5"), gives
    one quantity two values ("x = 2, x = -2"), or (``opening``: an answer statement's) opens
    on two numbers at once ("is 0.5 and 1.5"); one value written two ways ("约等于0.179或者17.9%",
    "0.85 or 85%") is one answer."""
    for m in _SAME_VARIABLE.finditer(sentence):
        if _differ(m.group(2), m.group(3)):
            return True
    if opening and (two := _TWO_AT_ONCE.match(sentence)) and len(_values(sentence[: two.end() + 24])) > 1:
        return True
    for m in _ALTERNATIVES.finditer(sentence):
        if re.search(r"[ \t]or[ \t]", m.group(0)):  # "1/4 or 25%": the values as English writes them
            if len(_values(_alternatives_window(sentence, m))) > 1:
                return True
            continue
        numbers = find_numbers(sentence[m.start() : m.end() + 24])[:2]
        values = {n.value / 100 if n.is_percent else n.value for n in numbers}
        if len(numbers) < 2 or len(values) > 1:
            return True
    return False


#: A number as an alternative writes it: "1/4", "25%", "-0.204%", "$1,200".
_ONE_VALUE = re.compile(r"[-−]?[$¥€£]?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?\s*%?")


def _alternatives_window(text: str, m: re.Match[str]) -> str:
    """The text of an alternatives match from the start of its first number ("1/4 or 25%", not
    "4 or 25%") to a little past its end."""
    start = m.start()
    while start > 0 and text[start - 1] in "0123456789./,−-$¥€£":
        start -= 1
    return text[start : m.end() + 24]


def _values(text: str) -> set[Decimal]:
    """The values of the first two numbers of ``text`` (a fraction ``1/4`` as one, a percent as
    its fraction), so that "1/4 or 25%" is one value."""
    values: set[Decimal] = set()
    for m in list(_ONE_VALUE.finditer(text))[:2]:
        token = m.group(0).replace("−", "-").replace(",", "").strip(" $¥€£")
        percent = token.endswith("%")
        if "/" in token:
            top, bottom = (Decimal(part.strip(" %")) for part in token.split("/", 1))
            value = top / bottom if bottom else top
        else:
            value = Decimal(token.strip(" %"))
        values.add((value / 100 if percent else value).normalize())
    return values


def _differ(a: str, b: str) -> bool:
    return len(_values(a) | _values(b)) > 1

def one_of_alternatives(text: str, found: NumberMatch) -> bool:
    """The number read is one of two the text offers ("可能为257.5万元，也可能为250万元"), not a
    number beside alternatives of something else ("税率为3%或5%，应纳税额为4000元")."""
    if found.start < 0:
        return False
    # "x = -1/2 and x = 4": the number read is one of two values of one quantity
    if any(m.start() <= found.start < m.end() and _differ(m.group(2), m.group(3))
           for m in _SAME_VARIABLE.finditer(text)):
        return True
    return any((m.start() <= found.start < m.end() or m.start() < found.end <= m.end())
               and len(_values(_alternatives_window(text, m))) > 1
               for m in _ALTERNATIVES.finditer(text))  # fmt: skip


#: A box that lists values: numbers joined by commas, semicolons, "and", "or".
_LISTED_VALUES = re.compile(r"^\s*[-+]?\d+(?:\.\d+)?(?:\s*(?:[,，;；、]|和|或|(?i:or|and))\s*[-+]?\d+(?:\.\d+)?)+\s*$")
#: "Or" alone on a line between two results.
_OR_LINE = re.compile(r"(?m)^[ \t]*(?:或者|或是|或|(?i:or))[ \t]*$")


def boxes_disagree(cleaned: str, boxes: list[tuple[int, str]], value_of: Callable[[str], NumberMatch | None]) -> bool:
    """The boxes of ``cleaned`` (their offsets and texts, in order; ``value_of`` reads a box's
    number) give two answers: the latest line that boxes a value boxes two different ones
    ("$\\boxed{10}$ 或 $\\boxed{-10}$"), the last two boxes are joined by "or" on a line of its
    own, or the last box lists values ("\\boxed{2,3}"). One value boxed twice ("\\boxed{85\\%} 或
    \\boxed{0.85}", "\\boxed{\\frac{340}{7}} or approximately \\boxed{48.57}") is one answer."""
    if boxes and _LISTED_VALUES.match(boxes[-1][1]) and parse_number(boxes[-1][1]) is None \
            and len({n.value for n in find_numbers(boxes[-1][1])}) > 1:
        return True  # one box, a list of values: "the possible values of m are \boxed{2,3}"
    if len(boxes) < 2:
        return False
    (first_at, first), (last_at, last) = boxes[-2], boxes[-1]
    if _OR_LINE.search(cleaned[first_at + len(first) : last_at]):  # "\boxed{15}\n\n或者\n\n… = \boxed{-15}"
        joined = [value_of(first), value_of(last)]
        if all(joined) and len({f.value for f in joined if f is not None}) > 1:
            return True
    last_line = max(cleaned.count("\n", 0, at) for at, _ in boxes)
    values = set()
    for at, text in boxes:
        found = value_of(text) if cleaned.count("\n", 0, at) == last_line else None
        if found is not None:
            values.add(found.value / 100 if found.is_percent else found.value)
    return any(not same_at_precision(a, b) for a in values for b in values)


def same_at_precision(a: Decimal, b: Decimal) -> bool:
    """``a`` and ``b`` are one value written at two precisions: the one with fewer decimals, two
    at least, is the other rounded to its places (48.57 and 340/7; not 1 and 1.4)."""
    if a == b:
        return True
    coarse, fine = sorted((a, b), key=_places)
    if _places(coarse) < 2:
        return False
    try:
        return fine.quantize(coarse) == coarse
    except ArithmeticError:
        return False


def _places(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) else 0
