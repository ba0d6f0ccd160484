"""What every command shares: the console it prints through.

The options are declared in ``taxpraben.options`` (their command line in ``commands.options``);
what a command does is a job of ``taxpraben.jobs``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from taxpraben.console import deferred_console

if TYPE_CHECKING:
    from rich.console import Console

#: Width of tables printed to a pipe or file: wide enough that no table of ours wraps
#: (tables take their natural width, not this one).
PIPE_WIDTH = 240


def cli_console(*, stderr: bool = False) -> Console:
    """The console every command prints through.

    On a terminal, rich wraps to its width. When the stream is not a terminal (a pipe, a
    log file, a test's captured output), printed messages are never hard-wrapped: one
    message per line, paths whole, so that ``grep`` finds them (``soft_wrap``); and tables
    get room for their natural width (a pipe has no width; ``COLUMNS`` describes a
    terminal), so the same command prints the same lines whatever terminal launched it.

    The console is made at its first use (:mod:`taxpraben.console`): ``run`` imports rich
    once it prints, after its first request.
    """
    stream = sys.stderr if stderr else sys.stdout
    if getattr(stream, "isatty", lambda: False)():
        return deferred_console(stderr=stderr)
    return deferred_console(stderr=stderr, soft_wrap=True, width=PIPE_WIDTH)


@contextmanager
def exit_on_job_error(console: Console) -> Iterator[None]:
    """A job's JobError printed (its lines, in its style) and turned into the command's exit."""
    from taxpraben.jobs.common import JobError

    try:
        yield
    except JobError as exc:
        for line in exc.lines:
            console.print(line, style=exc.style, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(exc.code) from None
