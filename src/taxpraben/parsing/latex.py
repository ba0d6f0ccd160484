"""LaTeX in answers: ``\\boxed{}`` with nested braces, and math markup turned into plain text.

Models trained on maths data write answers as ``\\boxed{3{,}250\\text{元}}``, ``$8000$元`` or
``\\(13\\%\\)``. :func:`find_boxed` finds every ``\\boxed{...}`` (also ``\\fbox``) by brace
matching, so nested groups stay inside; :func:`strip_latex` turns the markup that carries no
meaning for a tax answer into plain text:

- ``{,}`` (the LaTeX thousands separator) -> ``,``; thin spaces ``\\,`` ``\\;`` ``\\!``
  ``\\ `` and ``~`` between digits -> nothing (``3\\,250`` is 3250);
- ``\\text{..}``, ``\\mathrm{..}``, ``\\textbf{..}``, ``\\mathbf{..}``, ``\\operatorname{..}``
  -> their content; ``\\%`` -> ``%``; ``\\times`` -> ``×``; ``\\cdot`` -> ``·``;
  ``\\div`` -> ``÷``; ``\\left``/``\\right`` dropped; ``\\frac{a}{b}`` -> ``a/b``;
- math delimiters ``$``, ``$$``, ``\\(``, ``\\)``, ``\\[``, ``\\]`` dropped;
- ``\\boxed{X}`` is kept as a marker with its content cleaned (``\\boxed{3,250元}``), so that
  the answer-region finder still sees it.

Pure and total: any string in, a string out.
"""

from __future__ import annotations

import re

__all__ = ["find_boxed", "strip_latex"]

_BOXED_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")
_MAX_BOXED = 50


def _group_end(text: str, open_brace: int) -> int:
    """Index just past the ``}`` closing the ``{`` at ``open_brace``; -1 when unclosed."""
    depth = 0
    for i in range(open_brace, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def find_boxed(text: str) -> list[tuple[int, int, str]]:
    """Every ``\\boxed{...}`` as (start, end, content), in order; unclosed ones are skipped."""
    found: list[tuple[int, int, str]] = []
    for m in _BOXED_OPEN.finditer(text):
        end = _group_end(text, m.end() - 1)
        if end > 0:
            found.append((m.start(), end, text[m.end() : end - 1]))
            if len(found) >= _MAX_BOXED:
                break
    return found


_WRAPPERS = re.compile(
    r"\\(?:text|mathrm|textbf|mathbf|textrm|mathit|operatorname|textit|mbox)\s*\{([^{}]*)\}"
)
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
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
_SYMBOL = re.compile("|".join(re.escape(k) for k in sorted(_SYMBOLS, key=len, reverse=True)) + r"(?![A-Za-z])")
_THIN_SPACE = re.compile(r"(?<=\d)(?:\\[,;!: ]|~)(?=\d)")
_SPACING = re.compile(r"\\[,;!: ]|\\quad|\\qquad")
_LEFT_RIGHT = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_DELIMITERS = re.compile(r"\$\$?|\\[()\[\]]")


def strip_latex(text: str) -> str:
    """``text`` with LaTeX markup made plain (rules in the module docstring)."""
    if "\\" not in text and "$" not in text and "{,}" not in text:
        return text
    text = text.replace("{,}", ",")
    text = _THIN_SPACE.sub("", text)
    for _ in range(3):  # nested wrappers: \text{\textbf{元}}
        new = _FRAC.sub(r"\1/\2", _WRAPPERS.sub(r"\1", text))
        if new == text:
            break
        text = new
    text = _SYMBOL.sub(lambda m: _SYMBOLS[m.group(0)], text)
    text = _LEFT_RIGHT.sub("", text)
    text = _SPACING.sub(" ", text)
    return _DELIMITERS.sub(" ", text)
