"""How a run that stops early keeps what it has and says how to go on: interrupted (Ctrl-C,
SIGTERM: the answers so far written to ``OUT/predictions.jsonl``, :func:`resume_hint`), stopped
by its budget (the budget that would finish it named, :func:`budget_stop`), or ended with
generations that failed for good (:func:`failures_error`)."""

from __future__ import annotations

import _thread
import contextlib
import math
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.costs.budget import BUDGET_EXIT, BudgetShare
from taxpraben.jobs.common import JobError, in_data_order, write_predictions_file
from taxpraben.jobs.judge import unsent_words
from taxpraben.run.runner import BudgetReached, Runner

if TYPE_CHECKING:
    from taxpraben.data.loader import LoadedData
    from taxpraben.results.predictions import Prediction
    from taxpraben.run.cache import CompletionCache
    from taxpraben.terminal.progress import RunStats


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


def resume_hint(cache: CompletionCache | None, stats: RunStats, written: str = "") -> str:
    """What an interrupted run says; ``written``: where its answers so far were written."""
    done = stats.cached + stats.done
    command = "taxpraben " + shlex.join(sys.argv[1:])
    if cache is None:
        return (
            f"Interrupted after {done} of {stats.unique} generations{written}; nothing is cached (--no-cache), "
            f"so a rerun generates everything again. Run without --no-cache to make a run resumable."
        )
    return (
        f"Interrupted: {done} of {stats.unique} generations are stored in {cache.path}{written}.\n"
        f"To resume, run the same command again; only the missing {stats.unique - done} are sent:\n"
        f"  {command}"
    )


def budget_stop(exc: BudgetReached, out_dir: Path, loaded: LoadedData, store: CompletionCache | None) -> JobError:
    """What a run stopped by its budget says (exit :data:`BUDGET_EXIT`), once the
    predictions it has are written (not scored: the figures of a part would mislead), with
    the budget that would finish it."""
    path = write_predictions_file(out_dir, in_data_order(exc.predictions, loaded))
    kept = f"the answers are in {store.path}" if store is not None else "nothing is cached (--no-cache)"
    needed = budget_to_finish(exc, cached=store is not None)
    named = " and ".join(f"{flag} {value}" for flag, value in needed.items())
    paid = "what is in the cache is not paid for again" if store is not None else "everything is paid for again"
    worst = (f"the worst case of the {exc.unsent} generation(s) not sent: their prompts' estimated tokens, +10%, "
             "and --max-tokens each")  # fmt: skip
    judge_unsent = getattr(exc, "judge_unsent", 0)
    if judge_unsent:  # the judge's requests are not estimated: no figure covers them
        how = (f"To finish, run the same command with a larger budget: {named} covers {worst}; the {judge_unsent} "
               f"judge request(s) not sent come on top; {paid}:")  # fmt: skip
        command = sys.argv[1:]
    else:
        how = f"To finish, run the same command with {named} ({worst}; {paid}):"
        command = with_options_set(sys.argv[1:], needed)
    return JobError(
        f"Budget reached: {exc.budget.describe()} spent; {unsent_words(exc)} were not sent, so the run "
        "is not scored.",
        f"{len(exc.predictions)} predictions written to {path}; {kept}.",
        how,
        "  taxpraben " + shlex.join(command),
        code=BUDGET_EXIT,
        style="yellow",
    )


def failures_error(predictions: list[Prediction], stats: RunStats) -> JobError | None:
    """Items that failed after every retry (they score 0 as errors), and what to do."""
    failed = sum(1 for p in predictions if p.error)
    if not failed:
        return None
    advice = (
        "Rerun the same command to retry only those."
        if not stats.rejected
        else f"{stats.rejected} generation(s) were rejected by the server as invalid requests: a rerun will "
        "not help them; fix the request (see the error)."
    )
    return JobError(
        f"{failed} of {len(predictions)} predictions failed after all retries and score 0 as errors "
        f"(first error: {stats.first_error}). {advice}"
    )
