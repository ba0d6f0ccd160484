"""What ``run`` does beside generation (:class:`Alongside`), made by :func:`alongside_stage`:
the specs' check (:class:`~taxpraben.jobs.read_ahead.SpecCheck`), the answers read as they come
(:class:`~taxpraben.jobs.read_ahead.ReadAhead`, in a worker process where there are two CPUs:
:mod:`taxpraben.jobs.reading_process`), and, once a task's generation is complete
(:class:`~taxpraben.jobs.completion.TaskCompletion`), the judge's requests for it
(:class:`~taxpraben.jobs.judge.JudgeAlongside`) or (with no judge) its scores
(:class:`~taxpraben.jobs.read_ahead.ScoreAlongside`).

``$TAXPRABEN_READINGS``: ``auto`` (the default: a worker process where this process has three
CPUs or more, started once :data:`AUTO_START_AFTER` answers are in, so that a small run has
none), ``process`` (a worker from the first answer) or ``thread`` (the readings on the scoring
thread, as with fewer CPUs); the items are the same.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taxpraben.jobs.completion import TaskCompletion, answering
from taxpraben.jobs.judge import JudgeAlongside
from taxpraben.jobs.read_ahead import ReadAhead, ScoreAlongside, SpecCheck
from taxpraben.jobs.reading_process import ReadingProcess, worker_wanted

if TYPE_CHECKING:
    from taxpraben.costs.ledger import CostOf
    from taxpraben.jobs.judge import Judge
    from taxpraben.models.base import Request
    from taxpraben.results.predictions import Prediction
    from taxpraben.scoring.settings import ScoringSettings
    from taxpraben.tasks import Registry

#: Where the readings run: ``process`` or ``thread`` (see the module doc).
READINGS_ENV = "TAXPRABEN_READINGS"
READINGS_WHERE = ("auto", "process", "thread")

#: ``auto``: the answers read on the scoring thread before the worker process is started.
AUTO_START_AFTER = 256

#: The interpreter's switch interval while the scoring thread works beside the event loop
#: (``sys.setswitchinterval``; Python's default is 5 ms): a loop woken by the network waits
#: for the lock at most this long, not 5 ms, while the thread reads. Measured at C = 256 on
#: 2 CPUs (benchmarks/README.md, "The event loop's pace"): the loop's mean lag 23-58 ms at
#: 5 ms, 13-23 ms at 1 ms (10-20 at 0.5 ms, at more CPU for the switches: 0.2 ms cost 1.3 s);
#: but on a calm machine the switches cost more than the lag: the whole run at 1 ms took
#: 1.73-1.74x the bare client's wall time (CPU 3.9 s), at 2.5 ms 1.547x (3.1 s), at 5 ms
#: 1.554x (3.0 s) ("All of issue 38's work merged").
SWITCH_INTERVAL_S = 0.0025


#: The cyclic collector's first threshold (allocations less deallocations of tracked objects
#: between young collections; Python's default is 700) while ``run`` generates, scores and
#: reports. Each answer makes and drops thousands of objects (aiohttp's, the stream's chunks,
#: the readings'), so at 700 the collector ran ~300 young and ~26 middle collections over a
#: C = 256 run of 2,000 requests: 0.16-0.29 s of the interpreter's time, the event loop's and
#: the scoring thread's alike (thread CPU inside gc.callbacks, 6 runs); at 50,000: 0.05 s and
#: the same peak RSS (benchmarks/fixed_costs.py). What the collector frees is garbage of
#: cycles only, and it is freed all the same, a few collections later.
GC_THRESHOLD = 50_000


#: The requests the runner reads before it sends the first (``run.runner._FIRST_CHUNK``): it
#: reads the next once those are with aiohttp, and the warm-up (:class:`WarmUp`) starts then,
#: so that nothing of it can come before the first request.
WARM_UP_AFTER_READS = 8
#: Seconds the scoring thread then waits before it starts the warm-up: the first requests
#: go on the wire meanwhile.
WARM_UP_AFTER_S = 0.05


class WarmUp:
    """What the first answer needs, made on the scoring thread while the first requests are
    out (the runner's ``on_read``: once, at the request after :data:`WARM_UP_AFTER_READS`):
    the predictions' model (pydantic's import and the validator's build, 0.2-0.6 s that the
    event loop otherwise spent at the first answer, as the first answers came in), the specs'
    check and the scoring imports. It waits :data:`WARM_UP_AFTER_S` first (off the lock), so
    that the first requests go out before. A run of fewer requests warms up at its first
    answer, as before."""

    def __init__(self, worker: ThreadPoolExecutor, starts: Sequence[Callable[[], object]]) -> None:
        self._worker = worker
        self._starts = list(starts)
        self._reads = 0

    def __call__(self, key: str, request: Request) -> None:
        self._reads += 1
        if self._reads != WARM_UP_AFTER_READS + 1:
            return
        self._worker.submit(time.sleep, WARM_UP_AFTER_S)
        self._worker.submit(prediction_model_built)
        for start in self._starts:
            start()


def prediction_model_built() -> None:
    """The predictions' model imported and its validator built (``defer_build``)."""
    from taxpraben.results.predictions import Prediction

    Prediction.model_rebuild()


@dataclass(frozen=True)
class Alongside:
    """The run's work beside generation, and the runner's hooks into it."""

    spec_check: SpecCheck
    #: None with --no-score (nothing is read).
    ahead: ReadAhead | None
    #: The judge's requests as each task completes (with a judge).
    judge: JudgeAlongside | None
    #: Each task scored as it completes (without a judge).
    scores: ScoreAlongside | None
    completion: TaskCompletion | None
    warm_up: WarmUp | None = None
    #: The switch interval before :data:`SWITCH_INTERVAL_S` (None: it was not changed).
    switch_interval: float | None = None

    def generation_over(self) -> None:
        """The switch interval as it was: after generation no event loop waits for the lock
        (the tail's threads switch at Python's pace, not 1,000 times a second)."""
        if self.switch_interval is not None:
            sys.setswitchinterval(self.switch_interval)

    def on_answer(self) -> Callable[[Request, Prediction], None] | None:
        """The runner's ``on_answer``: the specs' check, the readings, the completion."""
        return answering(self.spec_check, self.ahead, self.completion.answered if self.completion else None)

    def on_read(self) -> Callable[[str, Request], None] | None:
        """The runner's ``on_read``: the warm-up (once), the completion."""
        read = self.completion.read if self.completion is not None else None
        warm_up = self.warm_up
        if warm_up is None or read is None:
            return warm_up or read

        def on_read(key: str, request: Request) -> None:
            warm_up(key, request)
            read(key, request)

        return on_read

    def fed(self) -> Callable[[str, int], None] | None:
        """``stream_requests``' ``fed``."""
        return self.completion.fed if self.completion is not None else None


def reading_process(profile: str, environ: dict[str, str] | None = None) -> ReadingProcess | None:
    """The worker process the readings run in (not started yet), or None: on the scoring
    thread (``$TAXPRABEN_READINGS=thread``, or ``auto`` with under three CPUs); ValueError for
    another value."""
    where = (os.environ if environ is None else environ).get(READINGS_ENV, "").strip().lower()
    if where and where not in READINGS_WHERE:
        raise ValueError(f"${READINGS_ENV} is {where!r}: use one of {', '.join(READINGS_WHERE)}")
    if where == "process":
        return ReadingProcess(profile)
    if where == "thread" or not worker_wanted():
        return None
    return ReadingProcess(profile, start_after=AUTO_START_AFTER)


def alongside_stage(
    held: ExitStack, registry: Registry, settings: ScoringSettings, tasks: Sequence[str], *,
    judge: Judge | None, scoring: bool, cost_of: CostOf | None = None,
) -> Alongside:  # fmt: skip
    """The work beside generation, its thread and process stopped when ``held`` closes (without
    waiting for what is queued: an interrupted run reads nothing more). ``scoring``: unless
    --no-score (then only the specs are checked)."""
    process = reading_process(settings.profile) if scoring else None
    if process is not None:
        held.callback(process.close)  # after the scoring thread (last in, first out)
    before = sys.getswitchinterval()
    held.callback(sys.setswitchinterval, before)  # once the thread has stopped (last in, first out)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    thresholds = gc.get_threshold()
    held.callback(gc.set_threshold, *thresholds)  # the job over: Python's own pace again
    gc.set_threshold(max(GC_THRESHOLD, thresholds[0]), *thresholds[1:])
    warm = ThreadPoolExecutor(1, thread_name_prefix="taxpraben-scoring")
    held.callback(warm.shutdown, wait=True, cancel_futures=True)
    # Scoring's imports load, and the answers are read, while requests go out.
    ahead = ReadAhead(warm, settings.profile, process) if scoring else None
    # Once a task's generation is complete, beside the later tasks' generation, the judge asks
    # for it, or (with no judge) it is scored.
    along = None if judge is None or ahead is None else JudgeAlongside(judge, ahead.after_readings, tasks)
    scores = None if judge is not None or ahead is None else ScoreAlongside(ahead, registry, settings, tasks, cost_of)
    if scores is not None:
        held.callback(scores.close)
    listeners = [listener.complete for listener in (along, scores) if listener is not None]
    completion = TaskCompletion(listeners) if listeners else None
    check = SpecCheck(warm, registry)
    warm_up = WarmUp(warm, [check.start, *([ahead.start] if ahead is not None else [])])
    return Alongside(check, ahead, along, scores, completion, warm_up, before)
