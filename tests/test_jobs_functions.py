"""The house rule of issue 38 for ``jobs/``: each job is a short composition of named stages, so
no function there is over 60 lines (``run_job`` was 100)."""

from __future__ import annotations

import ast
from pathlib import Path

JOBS = Path(__file__).resolve().parent.parent / "src" / "taxpraben" / "jobs"


def test_no_function_in_jobs_is_over_60_lines() -> None:
    long = [
        f"{path.name}:{node.name} ({(node.end_lineno or node.lineno) - node.lineno + 1} lines)"
        for path in sorted(JOBS.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.end_lineno or node.lineno) - node.lineno + 1 > 60
    ]
    assert long == []
