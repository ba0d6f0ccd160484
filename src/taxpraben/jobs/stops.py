"""How a run that stops early keeps what it has and says how to go on: interrupted (Ctrl-C,
SIGTERM: the answers so far written to ``OUT/predictions.jsonl``), or stopped by its budget
(the budget that would finish it named)."""

from __future__ import annotations

import _thread
import contextlib
import math
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from taxpraben.costs.budget import BudgetShare
from taxpraben.jobs.common import JobError, write_predictions_file
from taxpraben.run.runner import BudgetReached, Runner


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's stop, ``kill``) while generating: handled as Ctrl-C is."""


@contextlib.contextmanager
def terminated_as_interrupted() -> Iterator[None]:
    """While the block runs, SIGTERM stops it as Ctrl-C does (in the main thread only, where
    signal handlers can be set), so that a stopped run keeps its answers; :class:`Terminated`
    where SIGINT has no handler of Python's."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        # As Ctrl-C: SIGINT's own handler runs (under asyncio.run, the runner's, which
        # cancels the main task). Raising here instead raised inside whichever coroutine
        # ran, an aiohttp write among them ("Task exception was never retrieved").
        if signal.getsignal(signal.SIGINT) in (signal.SIG_DFL, signal.SIG_IGN, None):
            raise Terminated
        _thread.interrupt_main(signal.SIGINT)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def keep_answered(runner: Runner, out_dir: Path) -> str:
    """An interrupted run's answers so far written to ``OUT/predictions.jsonl`` (not scored:
    the figures of a part would mislead); the words that say so, or why it could not."""
    answered = runner.answered()
    if not answered:
        return ""
    first: dict[tuple[str, str], int] = {}
    for p in answered:
        first.setdefault((p.task, p.id), len(first))
    ordered = sorted(answered, key=lambda p: (first[(p.task, p.id)], p.run))
    try:
        path = write_predictions_file(out_dir, ordered)
    except JobError as exc:
        return f" ({exc.lines[0]})"
    return f"; their {len(ordered)} predictions are written to {path} (not scored)"


def budget_to_finish(exc: BudgetReached, cached: bool) -> dict[str, str]:
    """The ``--budget-*`` values a rerun needs to finish: the unsent generations' worst case
    (prompts estimated, with a margin, plus ``--max-tokens`` each), plus what was spent when
    nothing is cached (the rerun pays it again)."""
    budget = exc.budget.budget if isinstance(exc.budget, BudgetShare) else exc.budget
    flags = {}
    if budget.tokens is not None:
        flags["--budget-tokens"] = str(exc.left_tokens + (0 if cached else budget.spent_tokens))
    if budget.cost is not None:
        cost = exc.left_cost + (0 if cached else budget.spent_cost)
        flags["--budget-cost"] = f"{math.ceil(cost * 10_000) / 10_000:.4f}"
    return flags


def with_options_set(argv: list[str], values: dict[str, str]) -> list[str]:
    """``argv`` with each option of ``values`` given that value (replaced where it is, as
    ``--flag V`` or ``--flag=V``; added at the end where it is not)."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag in values:
            if "=" not in arg:
                next(args, None)
            continue
        out.append(arg)
    return out + [part for flag, value in values.items() for part in (flag, value)]
