"""``run``'s readings in a worker process (:class:`ReadingProcess`), so that parsing the answers
does not take the interpreter's lock from the event loop that sends the requests.

On the scoring thread the readings held the lock for ~0.5 ms an answer (2,000 items/s): at
concurrency 256 the event loop waited for it and the run took ~1.7x the bare client's wall
time. In a process of its own (``spawn``: the parent has threads, so no ``fork``), the
readings run on another core; the parent only pickles each batch of answers and unpickles the
items that come back (microseconds an item), on the scoring thread.

What goes to the worker: each batch's (task, record, prediction) and the specs it has not had
yet; what comes back: the items, pickled with the batch's records and predictions as references
(``persistent_id``) so that the parent's own objects are put back in place: the items read in
the worker are those the scoring thread would have made (the readers are pure).

One worker, first in first out, started with the first answer (not before: its start would
compete with the first requests); until it has made its imports (:meth:`ReadingProcess.ready`:
0.2-0.3 s on an idle machine, more on a busy one) the parent reads the answers on its scoring
thread. A worker that cannot start or dies (:class:`ReadingProcessError`) is not retried:
:class:`~taxpraben.jobs.read_ahead.ReadAhead` reads on its thread from then on, as it does where
there are fewer than three CPUs (see :func:`worker_wanted`).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pickle
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from taxpraben.records import Record
    from taxpraben.results.predictions import Prediction
    from taxpraben.results.samples import Sample
    from taxpraben.tasks import TaskSpec

#: One answer to read: its task's name, its record and its prediction.
Answer = tuple[str, "Record", "Prediction"]

#: How the worker reads one answer (a parameter of the tests: a worker that dies).
Reader = Callable[["TaskSpec", "Record", "Prediction", str], "Sample"]


class ReadingProcessError(RuntimeError):
    """The worker process could not start, died, or sent back what cannot be read."""


#: The CPUs this process needs for a worker to help: one for the event loop, one that a local
#: server (``--serve``, a mock) or the system takes a good part of, one for the worker. With
#: two, measured beside a mock server, the worker only competed with them: at C = 256 the run
#: took 1.94x the bare client's wall time against 1.68x reading on the thread (tail 0.68 s
#: against 0.22 s; benchmarks/README.md, "The readings in a worker process").
MIN_CPUS = 3


def worker_wanted() -> bool:
    """Whether reading in a worker process can help: with :data:`MIN_CPUS` for this process."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    return cpus >= MIN_CPUS


# ---------------------------------------------------------------------------- the worker side

#: How much lower the worker's priority is than the run's (``nice``): where the CPUs are busy,
#: the event loop (and a local server) go first, and the worker reads with what is left; what
#: it has not read when generation ends it reads then, when the CPUs are free.
WORKER_NICENESS = 5


def worker_started(parent: int, niceness: int) -> None:
    """In the worker, first: its priority lowered (where the system allows), and a watch that
    ends it once ``parent`` is gone: a run killed (SIGKILL) cannot stop it, and the worker
    would otherwise wait for its next batch for ever (it holds its queue's both ends)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(niceness)
    threading.Thread(target=_exit_with, args=(parent,), name="taxpraben-parent-watch", daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


#: The specs the worker was sent, by task (one worker: each is sent once).
_specs: dict[str, TaskSpec] = {}


def warm_up() -> None:
    """In the worker, first: what the readers import (so that the parent sends it answers only
    once it reads at once; until then the parent reads them itself)."""
    import taxpraben.scoring.items  # noqa: F401  (the readers, every kind)

    with contextlib.suppress(ImportError):  # Chinese numerals: imported by the first reading that meets one
        importlib.import_module("cn2an")


def read_item(spec: TaskSpec, record: Record, prediction: Prediction, profile: str) -> Sample:
    """The reading the scoring thread would make (:meth:`Readings.read_ahead`'s)."""
    from taxpraben.scoring.items import prepare_item

    return prepare_item(spec, record, prediction.run, prediction, prediction.error, profile)


def read_batch(profile: str, specs: dict[str, TaskSpec], batch: list[Answer], reader: Reader = read_item) -> bytes:
    """In the worker: each answer of ``batch`` read (None for one whose reading raised: scoring
    reads it again and reports it where it always has), pickled with the batch's records and
    predictions as references (:func:`items_of`)."""
    _specs.update(specs)
    items: list[Sample | None] = []
    for task, record, prediction in batch:
        try:
            items.append(reader(_specs[task], record, prediction, profile))
        except Exception:
            items.append(None)
    return _dumps(items, batch)


def _references(batch: Sequence[Answer]) -> dict[int, tuple[str, int]]:
    """The batch's records and predictions by identity: what is pickled as a reference."""
    refs: dict[int, tuple[str, int]] = {}
    for index, (_, record, prediction) in enumerate(batch):
        refs.setdefault(id(record), ("record", index))
        refs.setdefault(id(prediction), ("prediction", index))
    return refs


def _dumps(items: list[Sample | None], batch: Sequence[Answer]) -> bytes:
    refs = _references(batch)
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.persistent_id = lambda obj: refs.get(id(obj))  # type: ignore[method-assign]  # pickle's documented hook
    pickler.dump(items)
    return out.getvalue()


def items_of(data: bytes, batch: Sequence[Answer]) -> list[Sample | None]:
    """In the parent: the worker's items of ``batch``, with the parent's own records and
    predictions in them; ReadingProcessError for what cannot be read back."""

    def load(ref: tuple[str, int]) -> object:
        kind, index = ref
        _, record, prediction = batch[index]
        return record if kind == "record" else prediction

    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = load  # type: ignore[method-assign]  # pickle's documented hook
    try:
        items = unpickler.load()
    except Exception as exc:
        raise ReadingProcessError(f"the readings' worker sent back what cannot be read: {exc!r}") from exc
    if not isinstance(items, list) or len(items) != len(batch):
        raise ReadingProcessError("the readings' worker sent back a batch of another size")
    return items


# ---------------------------------------------------------------------------- the parent side


def new_pool(start_method: str) -> ProcessPoolExecutor:
    """The worker's pool, one process (started with its first task). multiprocessing is
    imported here, not with the module: 25-30 ms that the first request need not wait for."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(start_method)
    return ProcessPoolExecutor(1, mp_context=context, initializer=worker_started, initargs=(os.getpid(), WORKER_NICENESS))


class ReadingProcess:
    """The worker process: :meth:`submit` a batch, :meth:`items` its items (which waits)."""

    def __init__(self, profile: str, reader: Reader = read_item, start_method: str = "spawn", start_after: int = 0) -> None:
        self._profile = profile
        #: The answers read on the scoring thread before the worker is started: a small run
        #: (the bundled sample's 186) is over before a worker would be of use, and its start
        #: (an interpreter and the readers' imports, 0.3 s of CPU) would only compete with it.
        self.start_after = start_after
        self._reader = reader
        self._start_method = start_method
        self._pool: ProcessPoolExecutor | None = None
        self._warm: Future[None] | None = None
        self._failed: str | None = None
        self._sent: set[str] = set()

    def start(self) -> None:
        """The worker started (once), its imports under way; ReadingProcessError when it
        cannot be started."""
        if self._warm is not None:
            return
        if self._failed is not None:
            raise ReadingProcessError(self._failed)
        try:
            self._pool = new_pool(self._start_method)
            self._warm = self._pool.submit(warm_up)
        except Exception as exc:  # OSError (no process), RuntimeError, BrokenProcessPool
            self._failed = f"the readings' worker process could not start: {exc!r}"
            raise ReadingProcessError(self._failed) from exc

    def ready(self) -> bool:
        """Whether the worker (started if it was not) has made its imports and reads at once;
        ReadingProcessError when it could not start or has died."""
        self.start()
        assert self._warm is not None
        if not self._warm.done():
            return False
        if self._warm.exception() is not None:
            raise ReadingProcessError(f"the readings' worker process could not start: {self._warm.exception()!r}")
        return True

    def wait_until_ready(self) -> None:
        """:meth:`ready`, waited for."""
        self.start()
        assert self._warm is not None
        with contextlib.suppress(Exception):
            self._warm.result()
        self.ready()

    @property
    def started(self) -> bool:
        """Whether the worker was started (with the first batch)."""
        return self._pool is not None

    def submit(self, batch: list[Answer], specs: dict[str, TaskSpec]) -> Future[bytes]:
        """``batch`` sent to the worker (started with the first); ReadingProcessError when
        the worker cannot be started or is gone."""
        new = {task: spec for task, spec in specs.items() if task not in self._sent}
        self.start()
        assert self._pool is not None
        try:
            future = self._pool.submit(read_batch, self._profile, new, batch, self._reader)
        except Exception as exc:  # OSError, BrokenProcessPool, RuntimeError after shutdown
            raise ReadingProcessError(f"the readings' worker process could not start: {exc!r}") from exc
        self._sent.update(new)
        return future

    @staticmethod
    def items(future: Future[bytes], batch: Sequence[Answer]) -> list[Sample | None]:
        """The items of ``batch`` (waits for the worker); ReadingProcessError when it died."""
        try:
            data = future.result()
        except Exception as exc:  # BrokenProcessPool: the worker died (or could not start)
            raise ReadingProcessError(f"the readings' worker process stopped: {exc!r}") from exc
        return items_of(data, batch)

    def close(self) -> None:
        """The worker told to stop (what it has not started is dropped), without waiting for
        it to exit (it has nothing left to do; the run's end need not wait for its own)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
