"""Loading a data directory: the checked records of the chosen tasks, streamed or whole.

The files are found and read by :mod:`taxpraben.data.files`, each record is checked by
:mod:`taxpraben.data.checks`; every :class:`~taxpraben.data.problems.Problem` is collected,
and :func:`load_data` refuses to continue when there is any, so a bad record is never skipped
silently. ``taxpraben validate`` (:func:`validate_data`) prints them all.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from taxpraben.data.checks import iter_checked
from taxpraben.data.files import DatasetFile, discover_files, hash_dataset_files, resolve_data_dir

# DataError is re-exported (``as``): the jobs catch it from here.
from taxpraben.data.problems import DataError as DataError
from taxpraben.data.problems import Problem
from taxpraben.records import Record
from taxpraben.tasks import Registry, TaskSpec


@dataclass
class LoadedData:
    """The records of each task, in file order, plus where they came from."""

    data_dir: Path
    records: dict[str, list[Record]]
    files: dict[str, Path]
    data_hash: str
    warnings: list[Problem] = field(default_factory=list)
    #: ``--limit``: records per task (an int), or a fraction of each task (a float in (0, 1)).
    limit: int | float | None = None
    #: The sha256 (hex) of each task's file, from the read that made ``data_hash``.
    file_hashes: dict[str, str] = field(default_factory=dict)
    #: The tasks of the benchmark not selected, with why (``taxpraben.coverage``'s reasons).
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def n_records(self) -> int:
        return sum(len(v) for v in self.records.values())


def is_fraction(limit: int | float | None) -> bool:
    """True for a ``--limit`` that is a fraction of each task (0.1 = 10%), not a count."""
    return isinstance(limit, float) and 0 < limit < 1


def records_kept(limit: int | float | None, n: int) -> int:
    """How many of a task's ``n`` records ``limit`` keeps: all (None), the first N (a count),
    or the first ceil(fraction x n) (a fraction: 0.1 of 25 records is 3)."""
    if limit is None:
        return n
    if is_fraction(limit):
        # round first: 0.1 * 30 is 3.0000000000000004, and ceil must not make it 4
        return min(n, math.ceil(round(limit * n, 9)))
    return min(n, int(limit))


def validate_data(data: str | Path, registry: Registry) -> tuple[list[DatasetFile], list[Problem], dict[str, int]]:
    """Check every file of a data directory; returns files, all problems, and record counts."""
    data_dir = resolve_data_dir(data)
    files, problems = discover_files(data_dir, registry)
    counts: dict[str, int] = {}
    for f in files:
        spec = registry[f.task]
        n = 0
        for item in iter_checked(f.path, spec):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                n += 1
        counts[f.task] = n
    if not files and not any(p.severity == "error" for p in problems):
        problems.append(Problem(str(data_dir), "no dataset file matches a task (expected e.g. TaxCalc.jsonl)"))
    return files, problems, counts


class DataStream:
    """The records of the chosen tasks, yielded as each is read and checked.

    Iterating yields the records :func:`load_data` would keep, in the same order (a task's
    file after the previous one's; at most ``limit`` per task, though every record is
    checked; a fractional ``limit`` keeps a task's first ceil(fraction x n), so its records
    are yielded once its file is read), while the problems are collected on the side. Once the
    iteration has ended,
    :meth:`result` gives the :class:`LoadedData`, or raises :class:`DataError` with every
    problem, exactly as :func:`load_data` does. This lets `taxpraben run` send the first
    request as soon as the first record is read instead of after the whole directory.

    Selection problems (an unknown task name: ``KeyError``; a data directory that is not
    one: :class:`DataError`) are raised by the constructor, before any record is read.
    """

    def __init__(
        self,
        data: str | Path,
        registry: Registry,
        tasks: Sequence[str] | None = None,
        limit: int | float | None = None,
        left_out: dict[str, str] | None = None,
    ) -> None:
        self.data_dir = resolve_data_dir(data)
        self.registry = registry
        self.limit = limit
        self.left_out = dict(left_out or {})
        files, self.problems = discover_files(self.data_dir, registry)
        if tasks is not None:
            wanted = [s.name for s in registry.select(tasks)]
            by_task = {f.task: f for f in files}
            absent = [t for t in wanted if t not in by_task]
            if absent:
                self.problems.append(Problem(str(self.data_dir), f"no data file for task(s) {absent}"))
            files = [by_task[t] for t in wanted if t in by_task]
        self.files = files
        self.records: dict[str, list[Record]] = {}
        self._done = False
        #: The records read ahead by :meth:`read_all`, yielded by the next iteration.
        self._kept: list[Record] | None = None
        self._loaded: LoadedData | None = None
        #: Records read (and checked) per task, kept or not.
        self._read: dict[str, int] = {}

    def read_all(self) -> LoadedData:
        """Read and check every record now (the stream then yields them from memory, once):
        ``run`` checks all it will send before its first request. The loaded data, or
        DataError with every problem."""
        self._kept = list(self)
        self._loaded = self.result()
        return self._loaded

    def __iter__(self) -> Iterator[Record]:
        kept, self._kept = self._kept, None
        if kept is not None:
            yield from kept
            return
        if self._done or self.records:
            raise RuntimeError("a DataStream is read once")
        for f in self.files:
            spec = self.registry[f.task]
            kept = self.records.setdefault(f.task, [])
            if is_fraction(self.limit):  # the task's size decides: its records after its file
                every = list(self._records(f.path, spec))
                self._read[f.task] = len(every)
                kept.extend(every[: records_kept(self.limit, len(every))])
                yield from kept
                continue
            for record in self._records(f.path, spec):
                self._read[f.task] = self._read.get(f.task, 0) + 1
                if self.limit is None or len(kept) < self.limit:
                    kept.append(record)
                    yield record
        self._done = True

    def cut(self) -> bool:
        """True when ``limit`` left out a record of some task; a limit at or above every task's
        size keeps everything, and the data is then not limited."""
        return any(len(self.records.get(task, ())) < n for task, n in self._read.items())

    def _records(self, path: Path, spec: TaskSpec) -> Iterator[Record]:
        """The checked records of one file; its problems collected on the side."""
        for item in iter_checked(path, spec):
            if isinstance(item, Problem):
                self.problems.append(item)
            else:
                yield item

    def result(self) -> LoadedData:
        """The loaded data once every record was read; DataError if anything was wrong."""
        if self._loaded is not None:
            return self._loaded  # read_all's: the files are hashed once
        if not self._done:
            raise RuntimeError("DataStream.result() before the records were read")
        problems = self.problems
        if not self.files and not any(p.severity == "error" for p in problems):
            problems.append(
                Problem(str(self.data_dir), "no dataset file matches a task (expected e.g. TaxCalc.jsonl)")
            )
        if any(p.severity == "error" for p in problems):
            raise DataError(problems)
        data_hash, file_hashes = hash_dataset_files(self.files)
        return LoadedData(
            data_dir=self.data_dir,
            records=self.records,
            files={f.task: f.path for f in self.files},
            data_hash=data_hash,
            warnings=[p for p in problems if p.severity == "warning"],
            limit=self.limit if self.cut() else None,  # a limit that cut nothing is no limit
            file_hashes=file_hashes,
            left_out=self.left_out,
        )


def load_data(
    data: str | Path,
    registry: Registry,
    tasks: Sequence[str] | None = None,
    limit: int | float | None = None,
    left_out: dict[str, str] | None = None,
) -> LoadedData:
    """Load the records of the chosen tasks, raising :class:`DataError` on any problem.

    ``tasks`` (names, case-insensitive) defaults to every task that has a file. Asking
    for a task with no file is an error, not an empty result. ``limit`` keeps the first
    N records of each task, or the first ceil(fraction x n) of a task of n records for a
    fraction in (0, 1) (all of them are still checked). ``left_out``: the tasks of the
    benchmark not selected, with why (kept in the result for the results' ``overall.missing``).
    """
    stream = DataStream(data, registry, tasks, limit, left_out)
    for _ in stream:
        pass
    return stream.result()
