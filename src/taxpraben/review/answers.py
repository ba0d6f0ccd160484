"""A reviewer's answer against a gold or a reading: the same answer, or not.

Kind-free on purpose (a hand-written review.jsonl names no kind): two sides that each read
as one number (:func:`taxpraben.parsing.numbers.parse_number`: thousands separators, 万/亿,
元, full-width digits, Chinese numerals; so ``3.62万元`` is 36200) are the same within half a
cent, a percentage only as a percentage; otherwise both are folded (NFKC, spaces and
thousands separators dropped, a trailing 元 dropped), two runs of option letters are the
same set ("CA" is "AC"), and anything else must be the same text.
"""

from __future__ import annotations

import math
import re
import unicodedata

from taxpraben.parsing.numbers import parse_number

_LETTERS = re.compile(r"[A-H]+")


def folded(value: object) -> str:
    """``value`` as text, folded for comparison."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = unicodedata.normalize("NFKC", str(value)).strip()
    text = re.sub(r"[\s,]", "", text)
    return text.removesuffix("元")


def as_number(value: object) -> tuple[float, bool] | None:
    """``value`` read as one number: (its value, whether it is a percentage); None when it
    is not exactly one number (a word, a sentence, a run of letters)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return (float(value), False) if math.isfinite(value) else None
    found = parse_number(str(value))
    if found is None:
        return None
    number = float(found.value)
    return (number, found.is_percent) if math.isfinite(number) else None


def same_answer(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same answer (see the module docstring); None is the
    same only as None."""
    if a is None or b is None:
        return a is None and b is None
    na, nb = as_number(a), as_number(b)
    if na is not None and nb is not None:
        return na[1] == nb[1] and math.isclose(na[0], nb[0], rel_tol=1e-9, abs_tol=0.005)
    x, y = folded(a), folded(b)
    if _LETTERS.fullmatch(x.upper()) and _LETTERS.fullmatch(y.upper()):
        return set(x.upper()) == set(y.upper())
    return x == y
