"""The type checker's silences say what they silence and why: in src/, every
``type: ignore`` comment names its error codes and gives its reason on the same line
(``# type: ignore[arg-type]  # why``). mypy itself runs in ``make test`` (pyproject's
``[tool.mypy]``)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import taxpraben

SOURCE = Path(taxpraben.__file__).resolve().parent

#: ``type: ignore[codes]`` followed by a comment that says something.
_EXPLAINED = re.compile(r"type:\s*ignore\[[\w\-, ]+\]\s*#\s*\S")
_IGNORE = re.compile(r"type:\s*ignore")


def unexplained_ignores(text: str) -> list[int]:
    """The lines of ``text`` (Python source) whose ``type: ignore`` comment lacks its codes
    or its reason; only comments count, not strings that mention one."""
    lines = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        found = len(_IGNORE.findall(token.string))
        if found and len(_EXPLAINED.findall(token.string)) < found:
            lines.append(token.start[0])
    return lines


def test_an_ignore_without_codes_or_reason_is_found() -> None:
    source = (
        "a = f(x)  # type: ignore\n"
        "b = f(x)  # type: ignore[arg-type]\n"
        "c = f(x)  # type: ignore[arg-type]  # x is a str here\n"
        'd = "# type: ignore"\n'
        "e = f(x)  # type: ignore[arg-type, misc]  #\n"
    )
    assert unexplained_ignores(source) == [1, 2, 5]


def test_every_type_ignore_in_src_names_its_codes_and_reason() -> None:
    unexplained = [
        f"{path.relative_to(SOURCE)}:{line}"
        for path in sorted(SOURCE.rglob("*.py"))
        for line in unexplained_ignores(path.read_text(encoding="utf-8"))
    ]
    assert unexplained == []
