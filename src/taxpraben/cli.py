"""The `taxpraben` command line: the one place that wires the pipeline together."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Annotated, ParamSpec, TypeVar

import typer

from taxpraben.commands.habits import HabitCommand, PlainErrorsGroup
from taxpraben.terminal.collector import resume_collection

#: Every command: the module and function that implement it. Only the command a command line
#: names is imported (``taxpraben run`` does not load the report layer, ``merge`` or the data
#: checks' table printer): what ``run`` imports before its first request is its start-up.
COMMANDS: dict[str, tuple[str, str]] = {
    "tasks": ("taxpraben.commands.inspect_data", "tasks"),
    "validate": ("taxpraben.commands.inspect_data", "validate"),
    "run": ("taxpraben.commands.run", "run"),
    "estimate": ("taxpraben.commands.estimate", "estimate"),
    "score": ("taxpraben.commands.score", "score"),
    "merge": ("taxpraben.commands.merge", "merge"),
    "report": ("taxpraben.commands.report", "report"),
    "diff": ("taxpraben.commands.diff", "diff"),
    "explain": ("taxpraben.commands.explain", "explain"),
    "rules": ("taxpraben.commands.explain", "rules"),
    "review": ("taxpraben.commands.review", "review"),
    "lm-eval-path": ("taxpraben.commands.integrations", "lm_eval_path"),
    "export": ("taxpraben.commands.integrations", "export"),
}


def _version(value: bool) -> None:
    if value:
        from taxpraben.manifest import package_version

        typer.echo(f"taxpraben {package_version()}")
        raise typer.Exit()


def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Evaluate LLMs on TaxPraBen (Hu et al., 2026): 14 Chinese tax datasets, 5 runs each."""


def build_app(only: str | None = None) -> typer.Typer:
    """The command line with every command, or with the command ``only`` alone (the same
    options, help and behaviour for that command)."""
    built = typer.Typer(
        name="taxpraben",
        help="Evaluate LLMs on TaxPraBen, the benchmark of Chinese real-world tax practice.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        cls=PlainErrorsGroup,
    )
    built.callback()(main)
    for name, (module, function) in COMMANDS.items():
        if only is None or name == only:
            built.command(name, cls=HabitCommand)(said_when_interrupted(name, getattr(importlib.import_module(module), function)))
    return built


def interrupted_message(name: str) -> str:
    """What a command interrupted by Ctrl-C says (typer alone exits 130 without a word)."""
    return (
        f"Interrupted (Ctrl-C): taxpraben {name} stopped before it finished; the files it had not "
        "written yet were not written. Run the same command again to redo it."
    )


#: A command's parameters and its result (kept by :func:`said_when_interrupted`).
_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def said_when_interrupted(name: str, command: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """``command``, saying so on stderr when Ctrl-C stops it, exit 130. A job that has more
    to say (``run``: what was kept and how to resume) says it first, as its own error."""

    @functools.wraps(command)
    def said(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            print(interrupted_message(name), file=sys.stderr, flush=True)
            raise typer.Exit(130) from None

    return said


def named_command(argv: list[str]) -> str | None:
    """The command ``argv`` (without the program) names, when it is one of :data:`COMMANDS`."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMANDS else None


def __getattr__(name: str) -> typer.Typer:
    """``app``: the whole command line, built on first use (tests, documentation)."""
    if name == "app":
        globals()["app"] = built = build_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def entry() -> None:
    """The ``taxpraben`` executable: the app, then a quick exit.

    Once a command has returned, every file it wrote is closed or renamed into place and its
    cache is committed; what is left is the interpreter's own teardown of every module it
    imported (numpy, torch, ...), which took 0.2-0.9 s after the last completion
    (benchmarks/fixed_costs.py). So the streams are flushed and the process ends at once,
    unless a thread other than the main one is still alive (then the normal exit joins it).
    """
    command = named_command(sys.argv[1:])
    try:
        app = build_app(command)
        if command != "run":  # run resumes the collector itself, at its first request
            resume_collection()
        app()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:  # before a command started (while the command line was built)
        print(interrupted_message(command or "taxpraben"), file=sys.stderr)
        code = 130
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
