"""LaTeX in answers: ``\\boxed{}`` with nested braces, and math markup turned into plain text.

Models trained on maths data write answers as ``\\boxed{3{,}250\\text{元}}``, ``$8000$元`` or
``\\(13\\%\\)``. :func:`find_boxed` finds every ``\\boxed{...}`` (also ``\\fbox`` and a model's own
``\\answer{...}`` macro) by brace
matching, so nested groups stay inside; :func:`strip_latex` turns the markup that carries no
meaning for a tax answer into plain text:

- ``{,}`` (the LaTeX thousands separator) -> ``,``; thin spaces ``\\,`` ``\\;`` ``\\!``
  ``\\ `` and ``~`` between digits -> nothing (``3\\,250`` is 3250, ``224,\\!000`` is 224,000);
- ``\\text{..}``, ``\\mathrm{..}``, ``\\textbf{..}``, ``\\mathbf{..}``, ``\\operatorname{..}``
  -> their content; ``\\%`` -> ``%``; ``\\times`` -> ``×``; ``\\cdot`` -> ``·``;
  ``\\div`` -> ``÷``; ``\\left``/``\\right`` dropped; ``\\frac{a}{b}`` -> ``a/b``, or its value when both are plain numbers
  (``\\frac{1}{2}`` -> ``0.5``: a reader must not take the denominator for the answer);
- math delimiters ``$``, ``$$``, ``\\(``, ``\\)``, ``\\[``, ``\\]`` dropped;
- ``\\boxed{X}`` is kept as a marker with its content cleaned (``\\boxed{3,250元}``), so that
  the answer-region finder still sees it.

Pure and total: any string in, a string out.
"""

from __future__ import annotations

import re
from decimal import Decimal

__all__ = ["find_boxed", "strip_latex"]

_BOXED_OPEN = re.compile(r"\\(?:boxed|fbox|answer)\s*\{")
_MAX_BOXED = 50


def _closing_braces(text: str) -> dict[int, int]:
    """Index of each ``{`` -> index just past its ``}``, in one pass (unclosed ones absent).

    One pass over the text rather than one scan per ``\\boxed{``: thousands of unclosed
    boxes must not make this quadratic.
    """
    closing: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE.finditer(text):
        if m.group(0) == "{":
            stack.append(m.start())
        elif stack:
            closing[stack.pop()] = m.end()
    return closing


_BRACE = re.compile(r"[{}]")


def find_boxed(text: str) -> list[tuple[int, int, str]]:
    """Every ``\\boxed{...}`` as (start, end, content), in order; unclosed ones are skipped."""
    if "\\boxed" not in text and "\\fbox" not in text and "\\answer" not in text:
        return []
    closing = _closing_braces(text)
    found: list[tuple[int, int, str]] = []
    for m in _BOXED_OPEN.finditer(text):
        end = closing.get(m.end() - 1, -1)
        if end > 0:
            found.append((m.start(), end, text[m.end() : end - 1]))
    # The latest boxes are the ones that count (the final answer comes last).
    return found[-_MAX_BOXED:]


_WRAPPERS = re.compile(
    r"\\(?:text|mathrm|textbf|mathbf|textrm|mathit|operatorname|textit|mbox)\s*\{([^{}]*)\}"
)
#: A wrapper given one character without braces: ``\\text A``.
_BARE_WRAPPER = re.compile(r"\\(?:text|mathrm|textbf|mathbf|textrm|mathit)\s+([A-Za-z0-9])(?![A-Za-z0-9])")
#: A fraction; LaTeX lets either part be one character without braces ("\\frac{35}2", "\\frac12").
_FRAC = re.compile(r"\\[dt]?frac(?:\s*\{([^{}]*)\}|\s+([0-9A-Za-z])|([0-9]))\s*(?:\{([^{}]*)\}|([0-9A-Za-z]))")
_SYMBOLS = {
    r"\%": "%",
    r"\times": "×",
    r"\cdot": "·",
    r"\div": "÷",
    r"\approx": "≈",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\le": "≤",
    r"\ge": "≥",
    r"\yen": "¥",
    r"\$": "$",
}
#: A command named by letters ends where its letters do: "\\le" is no part of "\\left".
_SYMBOL = re.compile("|".join(re.escape(k) + (r"(?![A-Za-z])" if k[-1].isalpha() else "")
                              for k in sorted(_SYMBOLS, key=len, reverse=True)))
_THIN_SPACE = re.compile(r"(?<=\d)(,?)(?:\\[,;!: ]|~)(?=\d)")  # "224,\!000": the comma is kept
_SPACING = re.compile(r"\\[,;!: ]|\\quad|\\qquad")
_LEFT_RIGHT = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_DELIMITERS = re.compile(r"\$\$?|\\[()\[\]]")


_ESCAPED_COMMAND = re.compile(r"\\\\(?=[A-Za-z%$(\[\])])")
_PLAIN_NUMBER = re.compile(r"\s*-?\d+(?:\.\d+)?\s*")


def _fraction(m: re.Match[str]) -> str:
    """``\\frac{1}{2}`` of two plain numbers is its value (``0.5``, ``0.333333``), so that a
    reader does not take its denominator for the answer; any other fraction is ``a/b``."""
    top = next(part for part in m.group(1, 2, 3) if part is not None)
    bottom = next(part for part in m.group(4, 5) if part is not None)
    if _PLAIN_NUMBER.fullmatch(top) and _PLAIN_NUMBER.fullmatch(bottom) and float(bottom) != 0:
        value = Decimal(top.strip()) / Decimal(bottom.strip())
        text = format(value.quantize(Decimal("0.000001")).normalize(), "f")
        return text
    return f"{top}/{bottom}"


#: A sign, then a dollar sign and a digit ("= -$340").
_SIGNED_DOLLARS = re.compile(r"(?<![0-9A-Za-z)\]}.%])([-+−])\$(?=\d)")


def strip_latex(text: str) -> str:
    """``text`` with LaTeX markup made plain (rules in the module docstring)."""
    if "\\" not in text and "$" not in text and "{,}" not in text:
        return text
    # LaTeX inside a JSON string arrives with its backslashes escaped ("\\times"): one each.
    text = _ESCAPED_COMMAND.sub(r"\\", text)
    text = text.replace("{,}", ",")
    text = _THIN_SPACE.sub(r"\1", text)
    for _ in range(3):  # nested wrappers: \text{\textbf{元}}
        new = _FRAC.sub(_fraction, _WRAPPERS.sub(r"\1", text))
        if new == text:
            break
        text = new
    text = _BARE_WRAPPER.sub(r"\1", text)
    text = _SYMBOL.sub(lambda m: _SYMBOLS[m.group(0)], text)
    text = _LEFT_RIGHT.sub("", text)
    text = _SPACING.sub(" ", text)
    # a "$" between a sign and a digit is the currency's, not a delimiter: "-$340" is -340
    return _DELIMITERS.sub(" ", _SIGNED_DOLLARS.sub(r"\1", text))
