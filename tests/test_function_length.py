"""The house rule of issue 38: the scoring and job stages are short compositions of named
stages, no function in ``scoring/`` or ``jobs/`` over 60 lines."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "taxpraben"
LIMIT = 60


def long_functions(package: str) -> list[str]:
    """``file:function (N lines)`` for each function of ``package`` over :data:`LIMIT` lines."""
    return [
        f"{path.relative_to(SRC)}:{node.name} ({(node.end_lineno or node.lineno) - node.lineno + 1} lines)"
        for path in sorted((SRC / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.end_lineno or node.lineno) - node.lineno + 1 > LIMIT
    ]


def test_the_check_finds_a_long_function(tmp_path: Path) -> None:
    """The measure counts a function's lines from its ``def`` to its last line."""
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    tree = ast.parse(f"def f():\n{body}\n")
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    assert (node.end_lineno or 0) - node.lineno + 1 == LIMIT + 1


def test_no_function_in_scoring_is_over_60_lines() -> None:
    assert long_functions("scoring") == []


def test_no_function_in_jobs_is_over_60_lines() -> None:
    assert long_functions("jobs") == []
