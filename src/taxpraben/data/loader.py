"""Loading a data directory: the checked records of the chosen tasks, streamed or whole.

The files are found and read by :mod:`taxpraben.data.files`, each record is checked by
:mod:`taxpraben.data.checks`; every :class:`~taxpraben.data.problems.Problem` is collected,
and :func:`load_data` refuses to continue when there is any, so a bad record is never skipped
silently. ``taxpraben validate`` (:func:`validate_data`) prints them all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from taxpraben.data.checks import iter_checked
from taxpraben.data.files import DatasetFile, discover_files, hash_files, resolve_data_dir
from taxpraben.data.problems import DataError, Problem
from taxpraben.records import Record
from taxpraben.tasks import Registry


@dataclass
class LoadedData:
    """The records of each task, in file order, plus where they came from."""

    data_dir: Path
    records: dict[str, list[Record]]
    files: dict[str, Path]
    data_hash: str
    warnings: list[Problem] = field(default_factory=list)
    limit: int | None = None

    @property
    def n_records(self) -> int:
        return sum(len(v) for v in self.records.values())


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
    checked), while the problems are collected on the side. Once the iteration has ended,
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
        limit: int | None = None,
    ) -> None:
        self.data_dir = resolve_data_dir(data)
        self.registry = registry
        self.limit = limit
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

    def __iter__(self) -> Iterator[Record]:
        if self._done or self.records:
            raise RuntimeError("a DataStream is read once")
        for f in self.files:
            spec = self.registry[f.task]
            kept = self.records.setdefault(f.task, [])
            for item in iter_checked(f.path, spec):
                if isinstance(item, Problem):
                    self.problems.append(item)
                elif self.limit is None or len(kept) < self.limit:
                    kept.append(item)
                    yield item
        self._done = True

    def result(self) -> LoadedData:
        """The loaded data once every record was read; DataError if anything was wrong."""
        if not self._done:
            raise RuntimeError("DataStream.result() before the records were read")
        problems = self.problems
        if not self.files and not any(p.severity == "error" for p in problems):
            problems.append(
                Problem(str(self.data_dir), "no dataset file matches a task (expected e.g. TaxCalc.jsonl)")
            )
        if any(p.severity == "error" for p in problems):
            raise DataError(problems)
        return LoadedData(
            data_dir=self.data_dir,
            records=self.records,
            files={f.task: f.path for f in self.files},
            data_hash=hash_files(self.files),
            warnings=[p for p in problems if p.severity == "warning"],
            limit=self.limit,
        )


def load_data(
    data: str | Path,
    registry: Registry,
    tasks: Sequence[str] | None = None,
    limit: int | None = None,
) -> LoadedData:
    """Load the records of the chosen tasks, raising :class:`DataError` on any problem.

    ``tasks`` (names, case-insensitive) defaults to every task that has a file. Asking
    for a task with no file is an error, not an empty result. ``limit`` keeps the first
    N records of each task (all of them are still checked).
    """
    stream = DataStream(data, registry, tasks, limit)
    for _ in stream:
        pass
    return stream.result()
