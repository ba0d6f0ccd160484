"""What every command shares: the console it prints through, and where an option's value came from.

The options are declared in ``taxpraben.options`` (their command line in ``commands.options``);
what a command does is a job of ``taxpraben.jobs``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import typer

from taxpraben.terminal.console import deferred_console

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.options import EndpointOptions

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

    The console is made at its first use (:mod:`taxpraben.terminal.console`): ``run`` imports rich
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


#: Where each option of the command being run took its value (click's ParameterSource
#: names: COMMANDLINE, ENVIRONMENT, DEFAULT_MAP (a configuration file), DEFAULT); set by
#: ``commands.options.with_options`` while the command runs.
OPTION_SOURCES: ContextVar[dict[str, str]] = ContextVar("option_sources", default={})  # noqa: B039 (never mutated)


def given_by_environment(name: str) -> bool:
    """True when the option ``name`` of the command being run took its value from its
    environment variable (not the command line, a configuration file or its default)."""
    return OPTION_SOURCES.get().get(name) == "ENVIRONMENT"


def served_endpoint(endpoint: EndpointOptions, console: Console) -> EndpointOptions:
    """``--serve`` decides where requests go: a base URL that came from the environment
    (``$OPENAI_BASE_URL``, left over from another session) is dropped with a warning, so that
    the served command's own URL is the one asked. A ``--base-url`` given on the command
    line or in a configuration file still wins."""
    if not endpoint.serve or not endpoint.base_url or not given_by_environment("base_url"):
        return endpoint
    import dataclasses

    from taxpraben.jobs.common import warn
    from taxpraben.models.base import redact_url
    from taxpraben.models.defaults import BASE_URL_ENV
    from taxpraben.run.serve import served_base_url

    try:
        served = served_base_url(endpoint.serve)
    except ValueError:  # refused later, with the job's own message
        served = "the served command's URL"
    warn(console, f"--serve: ${BASE_URL_ENV} ({', '.join(redact_url(u) for u in endpoint.base_url)}) is ignored; "
                  f"requests go to {served} (give --base-url to send them elsewhere).")  # fmt: skip
    return dataclasses.replace(endpoint, base_url=None)
