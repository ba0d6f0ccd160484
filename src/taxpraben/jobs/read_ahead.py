"""``run`` reads each answer on the scoring thread as it arrives (:class:`ReadAhead`), after
loading what scoring and the reports import (:data:`SCORING_IMPORTS`), so that the tail of a
run is the writing, not the reading of every answer nor the imports."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from taxpraben.jobs.reading_process import Answer, ReadingProcess, ReadingProcessError

if TYPE_CHECKING:
    from taxpraben.costs.ledger import CostOf
    from taxpraben.jobs.completion import Entries
    from taxpraben.models.base import Request
    from taxpraben.records import Record
    from taxpraben.results.predictions import Prediction
    from taxpraben.results.samples import Sample
    from taxpraben.scoring.early import EarlyScores
    from taxpraben.scoring.items import Readings
    from taxpraben.scoring.settings import ScoringSettings
    from taxpraben.scoring.task_scores import TaskScores
    from taxpraben.tasks import Registry, TaskSpec

T = TypeVar("T")

#: What scoring and the reports import, loaded on the scoring thread while requests go out
#: (none of them is needed to send a request). Not cn2an (~0.1-0.25 s): the readers import
#: it when an answer or a gold first holds a Chinese numeral, which most runs never meet, and
#: at high concurrency every import on this thread is time the event loop waits for the lock.
SCORING_IMPORTS = (
    "taxpraben.scoring.pipeline",
    "numpy.random",  # the bootstrap's generator
    "numpy.ma",  # numpy's quantiles look for masks
    "rich._emoji_codes",  # the console's first message after generation
    "taxpraben.report.terminal",
    "taxpraben.report.html",
    "taxpraben.report.markdown",
    "taxpraben.report.summary_csv",
    "yaml",  # OUT/config.yaml (taxpraben.config imports it there, not before the first request)
)

#: The typed results (``taxpraben.results``) that a run's tail validates: results.json and
#: the figures the reports read. Their validators are built on first use (``defer_build``,
#: so that the start of a command does not pay for them); the warm-up builds them, so that
#: the tail does not (Results alone: 15-45 ms).
TAIL_MODELS = ("Results", "Stat", "RunCounts", "Counts", "TaskResult", "RunFigures", "OverallStat", "Groups", "Ledger")

def _import_for_scoring() -> None:
    """Warm-up only: what fails here (a private module a newer library lacks) is done, or
    reported, where it is used."""
    for name in SCORING_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        from taxpraben.report.html import prepare

        prepare()  # the report's template compiled, not in the tail
    with contextlib.suppress(Exception):
        from taxpraben import results

        for name in TAIL_MODELS:
            getattr(results, name).model_rebuild()
    with contextlib.suppress(Exception):
        from taxpraben.manifest import package_version, package_versions

        package_versions()  # the manifest's versions, read from the installed metadata once
        package_version()  # config.yaml's and the manifest's (read once, then kept)


def _new_readings(profile: str) -> Readings:
    from taxpraben.scoring.items import Readings

    return Readings(profile)


class _Sent:
    """A batch sent to the worker process: its items (:meth:`items`, on the scoring thread),
    unless :meth:`take_over` (the end of the run) has it read in this process instead."""

    def __init__(self, batch: list[Answer], future: Future[bytes]) -> None:
        self.batch = batch
        self._future = future
        self._here = False
        self._decided = threading.Event()
        future.add_done_callback(lambda _: self._decided.set())

    def take_over(self) -> bool:
        """The batch to be read here, unless the worker's items are in already."""
        if self._future.done() and not self._future.cancelled():
            return False
        self._future.cancel()  # not started: the worker never reads it
        self._here = True
        self._decided.set()
        return True

    def items(self) -> list[Sample | None] | None:
        """The worker's items once they are in (None: read here); ReadingProcessError when the
        worker died."""
        self._decided.wait()
        if self._here or self._future.cancelled():
            return None
        return ReadingProcess.items(self._future, self.batch)


class ReadAhead:
    """Reads each answer as it arrives (the runner's ``on_answer``), so that the items are
    read by the time the last completion is in: the run's tail is then the semantic scoring
    and the writing, not the reading of every answer.

    With ``process`` (:class:`~taxpraben.jobs.reading_process.ReadingProcess`), the answers
    go to a worker process in batches (of ``batch_size``, or what came in ``batch_wait_s``,
    or what there is when a task's readings are asked for: :meth:`after_readings`), and come
    back as items on the scoring thread: the readings then take nothing from the event loop
    but the pickling. Until the worker has made its imports, without it, or once it cannot
    start or dies (:attr:`fallback` says why), each answer is read on the scoring thread; at
    the end (:meth:`result`), what the worker has not read is read here. The items are the
    same either way.

    One worker thread (the scoring thread), first in first out: once the first requests are
    out (:meth:`start`, the warm-up) or with the first answer (not before: the imports would
    hold the interpreter while the first requests are being sent) the scoring imports, then
    the readings in the order the answers came, those of one turn of the event loop as one
    job (:meth:`_hold`). A reading that
    fails here is left to scoring, which reads that answer again and reports the failure
    where it always has."""

    def __init__(self, worker: ThreadPoolExecutor, profile: str, process: ReadingProcess | None = None,
                 batch_size: int = 64, batch_wait_s: float = 0.05) -> None:  # fmt: skip
        self._worker = worker
        self._profile = profile
        self._process = process
        self._batch_size = batch_size
        self._batch_wait_s = batch_wait_s
        self._readings: Future[Readings] | None = None
        self._last: Future[None] | None = None
        #: Answers waiting to go to the worker process, since when, and the specs of their tasks.
        self._batch: list[Answer] = []
        self._batch_since = 0.0
        self._specs: dict[str, TaskSpec] = {}
        #: The answers sent (or read) already: each distinct one goes once.
        self._seen: set[tuple[str, str, str, str | None]] = set()
        #: The batches sent to the worker process.
        self._in_worker: list[_Sent] = []
        #: Why the answers are read on the scoring thread after all (None: they are not).
        self.fallback: str | None = None
        #: Answers for the scoring thread, handed over at the end of the loop's turn.
        self._held: list[tuple[TaskSpec, Record, Prediction]] = []
        #: Answers sent to the worker process but read by :meth:`result`'s thread.
        self.read_at_the_end = 0
        self._answers = 0

    def __call__(self, request: Request, prediction: Prediction) -> None:
        spec = request.spec
        if spec is None:
            return
        self._started()
        if not self._worker_ready():
            self._hold(spec, request.record, prediction)
            return
        self._hand_over()
        key = (spec.name, request.record.id, prediction.prediction, prediction.error)
        if key in self._seen:
            return
        self._seen.add(key)
        if not self._batch:
            self._batch_since = time.monotonic()
        self._batch.append((spec.name, request.record, prediction))
        self._specs.setdefault(spec.name, spec)
        if len(self._batch) >= self._batch_size or time.monotonic() - self._batch_since >= self._batch_wait_s:
            self._send()

    def _hold(self, spec: TaskSpec, record: Record, prediction: Prediction) -> None:
        """One answer for the scoring thread, handed over with the others of this turn of the
        event loop (:meth:`_hand_over`, called soon): one job a turn, not one an answer (each
        job is a hand-over of the interpreter's lock between the loop and the thread)."""
        if not self._held:
            try:
                asyncio.get_running_loop().call_soon(self._hand_over)
            except RuntimeError:  # no event loop (a test, a caller of its own): at once
                self._last = self._worker.submit(self._read, spec, record, prediction)
                return
        self._held.append((spec, record, prediction))

    def _hand_over(self) -> None:
        """The answers held this turn (:meth:`_hold`), to the scoring thread as one job."""
        held, self._held = self._held, []
        if held:
            self._last = self._worker.submit(self._read_all, held)

    def _read_all(self, held: list[tuple[TaskSpec, Record, Prediction]]) -> None:
        for spec, record, prediction in held:
            self._read(spec, record, prediction)

    def _worker_ready(self) -> bool:
        """Whether answers go to the worker process: there is one, and it reads at once (until
        then they are read on the scoring thread)."""
        if self._process is None:
            return False
        self._answers += 1
        if self._answers <= self._process.start_after:
            return False
        try:
            return self._process.ready()
        except ReadingProcessError as exc:
            self._fall_back(str(exc))
            return False

    def start(self) -> None:
        """The scoring imports and the readings' making queued on the scoring thread (before the
        first answer: :class:`~taxpraben.jobs.alongside.WarmUp`), if they are not already."""
        self._started()

    def _started(self) -> Future[Readings]:
        if self._readings is None:
            self._worker.submit(_import_for_scoring)
            self._readings = self._worker.submit(_new_readings, self._profile)
        return self._readings

    def _read(self, spec: TaskSpec, record: Record, prediction: Prediction) -> None:
        assert self._readings is not None
        with contextlib.suppress(Exception):  # see the class doc: scoring reads it again
            self._readings.result().read_ahead(spec, record, prediction)

    def _send(self) -> None:
        """The answers waiting, to the worker process (or, without one, to the scoring thread)."""
        batch, self._batch = self._batch, []
        if not batch:
            return
        sent: _Sent | None = None
        if self._process is not None:
            try:
                sent = _Sent(batch, self._process.submit(batch, {task: self._specs[task] for task, _, _ in batch}))
                self._in_worker.append(sent)
            except ReadingProcessError as exc:
                self._fall_back(str(exc))
        self._last = self._worker.submit(self._take, batch, sent)

    def _take(self, batch: list[Answer], sent: _Sent | None) -> None:
        """On the scoring thread: the worker's items of ``batch`` kept (read here without a
        worker, when it has died, or when :meth:`result` took the batch over)."""
        items: list[Sample | None] | None = None
        if sent is not None:
            try:
                items = sent.items()
            except ReadingProcessError as exc:
                self._fall_back(str(exc))
        readings = self._started().result()
        for index, (task, record, prediction) in enumerate(batch):
            item = items[index] if items is not None else None
            if item is not None:
                readings.keep(self._specs[task], record, prediction, item)
            elif items is None:
                self._read(self._specs[task], record, prediction)

    def _fall_back(self, why: str) -> None:
        """From now on every answer is read on the scoring thread."""
        if self.fallback is None:
            self.fallback = why
        self._process = None

    def after_readings(self, job: Callable[[Readings], T]) -> Future[T]:
        """``job`` run on the scoring thread with the readings, after every answer handed
        over so far is read (the worker is first in, first out): the judge plans a task there."""
        readings = self._started()
        self._hand_over()
        self._send()
        return self._worker.submit(lambda: job(readings.result()))

    def result(self) -> Readings:
        """Every answer handed over so far, read (waits for the last readings). The batches
        the worker process has not read yet are read here, the last first, while the worker
        goes on with the first (once generation is over, this process's CPU is free again):
        the end never waits for a worker that is behind or still starting."""
        readings = self._started()
        self._hand_over()
        self._send()
        behind = [sent.batch for sent in reversed(self._in_worker) if sent.take_over()]
        self._in_worker = []
        self.read_at_the_end += sum(map(len, behind))
        for batch in behind:
            for task, record, prediction in batch:
                self._read(self._specs[task], record, prediction)
        if self._last is not None:
            self._last.result()
        return readings.result()


class ScoreAlongside:
    """``run``'s early scoring: told of each task whose generation is complete (a
    :class:`~taxpraben.jobs.completion.TaskCompletion` listener, on the event loop's thread),
    it scores that task on the scoring thread after the readings of its answers
    (:class:`~taxpraben.scoring.early.EarlyScores`, made there with the first such task: the
    scoring modules are not imported before the first answer). :meth:`result` at the end."""

    def __init__(self, ahead: ReadAhead, registry: Registry, settings: ScoringSettings, tasks: Sequence[str],
                 cost_of: CostOf | None = None) -> None:  # fmt: skip
        self._ahead = ahead
        self._registry = registry
        self._settings = settings
        self._tasks = list(tasks)
        self._cost_of = cost_of
        self._early: EarlyScores | None = None
        self._applies: bool | None = None
        self._jobs: list[Future[None]] = []

    def complete(self, task: str, entries: Entries) -> None:
        """The listener: ``task``'s generation is complete."""
        self._jobs.append(self._ahead.after_readings(lambda readings: self._score(readings, task, entries)))

    def _score(self, readings: Readings, task: str, entries: Entries) -> None:
        if self._applies is None:
            from taxpraben.scoring.early import EarlyScores

            self._applies = EarlyScores.applies(self._registry, self._settings, self._tasks)
            if self._applies:
                self._early = EarlyScores(self._registry, self._settings, readings, self._tasks, self._cost_of)
        if self._early is not None:
            self._early.complete(task, entries)
            self._prepare_browser(self._early.scored())

    def _prepare_browser(self, scored: list[TaskScores]) -> None:
        """The report's sample browser's part of each task newly scored (its position: the
        task's in the data, as the scored tasks are the data's first)."""
        from taxpraben.report.samples import prepare_task

        for index, scores in enumerate(scored):
            if scores.prepared is None:
                scores.prepared = prepare_task(scores.task, index, [it for row in scores.rows for it in row])

    def result(self) -> EarlyScores | None:
        """What was scored early, once every early job is done (None: nothing could be)."""
        for job in self._jobs:
            with contextlib.suppress(Exception):  # scoring at the end scores what was not
                job.result()
        return self._early

    def close(self) -> None:
        """What was not started is not; what was scored early is dropped (an interrupted run)."""
        for job in self._jobs:
            job.cancel()
        early = self.result()
        if early is not None:
            early.close()


class SpecCheck:
    """pydantic's check of the task specs that ``run`` built without it
    (``Registry.check``): on the scoring thread, once the first requests are out (the
    warm-up: :class:`~taxpraben.jobs.alongside.WarmUp`) or with the first answer (an
    ``on_answer`` hook, first of all), not before: pydantic's import would otherwise hold the
    interpreter while the first requests are being sent (0.1 s of a 0.4 s start). A spec found wrong stops the
    sending (:meth:`feed` raises its TaskSpecError at the next request read, as a data
    error does) and the run (:meth:`result`), exit 2; what was answered is in the cache."""

    def __init__(self, worker: ThreadPoolExecutor, registry: Registry) -> None:
        self._worker = worker
        self._registry = registry
        self._future: Future[None] | None = None

    def __call__(self, request: Request, prediction: Prediction) -> None:
        self._started()

    def start(self) -> None:
        """The check queued on the scoring thread (before the first answer: the warm-up)."""
        self._started()

    def _started(self) -> Future[None]:
        if self._future is None:
            self._future = self._worker.submit(self._registry.check)
        return self._future

    def feed(self, requests: Iterator[Request]) -> Iterator[Request]:
        """``requests``, stopped by the TaskSpecError of a spec found wrong."""
        for request in requests:
            future = self._future
            if future is not None and future.done() and future.exception() is not None:
                self.result()
            yield request

    def result(self) -> None:
        """Once the specs are checked; their TaskSpecError if one is wrong."""
        self._started().result()
