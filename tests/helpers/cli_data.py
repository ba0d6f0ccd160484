"""Small data directories and a CLI app for the command tests (run, merge, endpoints, faults)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer


def quarterly_calc_rows(n: int) -> list[dict[str, Any]]:
    """``n`` TaxCalc records whose gold is 13% of the quarter's sales."""
    return [
        {"id": str(i), "query": f"某企业第{i}季度销售额{1000 * (i + 1)}元，税率13%，求销项税额。",
         "answer": 130 * (i + 1)}
        for i in range(n)
    ]  # fmt: skip


def sales_calc_rows(n: int) -> list[dict[str, Any]]:
    """``n`` TaxCalc records (another query text, so their cache keys differ from the above)."""
    return [
        {"id": str(i), "query": f"某企业销售额{1000 * (i + 1)}元，税率13%，求销项税额。", "answer": 130 * (i + 1)}
        for i in range(n)
    ]


def scq_rows(n: int) -> list[dict[str, Any]]:
    """``n`` TaxSCQ records about the general VAT rate (gold: 13%)."""
    return [
        {"id": f"s{i}", "query": f"第{i}题：增值税一般税率是？A. 13% B. 9% C. 6%",
         "answer": "13%", "choices": ["13%", "9%", "6%"], "gold": 0}
        for i in range(n)
    ]  # fmt: skip


def write_data(directory: Path, tasks: Mapping[str, Sequence[Mapping[str, Any]]]) -> Path:
    """One ``TASK.jsonl`` per task in ``directory`` (created); returns the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, rows in tasks.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (directory / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return directory


def cli_app(**commands: Callable[..., Any]) -> typer.Typer:
    """A Typer app with the given commands by name, plus a no-op, so that each command is
    addressed by name as in the real CLI."""
    app = typer.Typer()
    for name, command in commands.items():
        app.command(name)(command)

    @app.command("noop")
    def _noop() -> None:
        """A second command."""

    return app


#: ``taxpraben run`` as a child process (``python -c RUN_SCRIPT --model ...``), for the tests
#: that kill, interrupt or race it. SIGUSR1 makes it print every thread's stack to stderr
#: (:func:`stacks_of`: what a child that does not stop is waiting for).
RUN_SCRIPT = """
import faulthandler, signal
faulthandler.register(signal.SIGUSR1, all_threads=True)
import typer
from taxpraben.commands.run import run
app = typer.Typer()
app.command()(run)
app()
"""


def stacks_of(proc: subprocess.Popen[str]) -> str:
    """A RUN_SCRIPT child that did not stop: its threads' stacks and what it printed; killed."""
    proc.send_signal(signal.SIGUSR1)
    try:
        stdout, stderr = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    return f"stdout:\n{stdout}\nstderr (stacks at the end):\n{stderr}"


def cached_rows(path: Path) -> int:
    """The rows of a completion cache file (0 when it or its table is not there yet)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        conn.close()
