"""The `taxpraben` command line: the one place that wires the pipeline together."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Annotated

import typer

import taxpraben
from taxpraben.commands.inspect_data import tasks, validate
from taxpraben.commands.merge import merge
from taxpraben.commands.report import report
from taxpraben.commands.run import run
from taxpraben.commands.score import score

app = typer.Typer(
    name="taxpraben",
    help="Evaluate LLMs on TaxPraBen, the benchmark of Chinese real-world tax practice.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"taxpraben {taxpraben.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Evaluate LLMs on TaxPraBen (Hu et al., 2026): 14 Chinese tax datasets, 5 runs each."""


app.command("tasks")(tasks)
app.command("validate")(validate)
app.command("run")(run)
app.command("score")(score)
app.command("merge")(merge)
app.command("report")(report)


def entry() -> None:
    """The ``taxpraben`` executable: the app, then a quick exit.

    Once a command has returned, every file it wrote is closed or renamed into place and its
    cache is committed; what is left is the interpreter's own teardown of every module it
    imported (numpy, torch, ...), which took 0.2-0.9 s after the last completion
    (benchmarks/fixed_costs.py). So the streams are flushed and the process ends at once,
    unless a thread other than the main one is still alive (then the normal exit joins it).
    """
    try:
        app()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    if threading.active_count() == 1:
        os._exit(code)
    sys.exit(code)
