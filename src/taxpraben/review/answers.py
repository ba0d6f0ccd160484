"""A reviewer's answer against a gold or a reading: the same answer, or not.

Kind-free on purpose (a hand-written review.jsonl names no kind): both sides are folded
(NFKC, spaces and thousands separators dropped, a trailing 元 dropped); two numbers are the
same within half a cent; two runs of option letters are the same set
("CA" is "AC"); anything else must be the same text.
"""

from __future__ import annotations

import math
import re
import unicodedata

_LETTERS = re.compile(r"[A-H]+")


def folded(value: object) -> str:
    """``value`` as text, folded for comparison."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = unicodedata.normalize("NFKC", str(value)).strip()
    text = re.sub(r"[\s,]", "", text)
    return text.removesuffix("元")


def as_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def same_answer(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same answer (see the module docstring); None is the
    same only as None."""
    if a is None or b is None:
        return a is None and b is None
    x, y = folded(a), folded(b)
    nx, ny = as_number(x), as_number(y)
    if nx is not None and ny is not None:
        return math.isclose(nx, ny, rel_tol=1e-9, abs_tol=0.005)
    if _LETTERS.fullmatch(x.upper()) and _LETTERS.fullmatch(y.upper()):
        return set(x.upper()) == set(y.upper())
    return x == y
