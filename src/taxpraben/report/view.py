"""One run as every renderer reads it: loaded and ordered once (:class:`RunView`).

A report is a dozen tables and plots; each of them used to ask ``load.py`` again for the
tasks in paper order, the label, the scorer problems. :func:`load_run` (a result directory)
and :func:`view_of` (results already in memory) do that once; the tables, plots, Markdown,
HTML, terminal summary and leaderboard take the view. ``samples.jsonl`` is not read here:
:meth:`RunView.samples` streams it, one item (:class:`~taxpraben.results.Sample`) a line,
when a renderer asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from taxpraben.report.load import (
    TaskRow,
    bloom_levels,
    iter_samples,
    model_label,
    ordered_tasks,
    read_results,
    reported,
    scorer_problems,
    uncomputed_metrics,
)
from taxpraben.results import Results, Sample


@dataclass(frozen=True)
class RunView:
    """A run's results as the reports show them, with what every renderer derives from them."""

    #: The results as the reports show them (:func:`~taxpraben.report.load.reported`).
    results: Results
    #: What to call the model (:func:`~taxpraben.report.load.model_label`).
    label: str
    #: The tasks in the paper's table order (:func:`~taxpraben.report.load.ordered_tasks`).
    tasks: tuple[TaskRow, ...]
    #: Bloom's levels, lowest first.
    bloom_levels: tuple[str, ...]
    #: One line per semantic scorer that was unavailable: which and why.
    scorer_problems: tuple[str, ...]
    #: Metric keys whose scorer never loaded (their figures are null in ``results``).
    uncomputed_metrics: frozenset[str]
    #: The result directory (None: results held in memory with no directory to read samples from).
    out_dir: Path | None = None
    #: Its samples.jsonl was written by this process from its items (read without checking).
    written_here: bool = False

    @property
    def task_names(self) -> list[str]:
        """The tasks' names, in paper order."""
        return [row.name for row in self.tasks]

    @property
    def computed_tasks(self) -> list[str]:
        """The computed tasks' names, in paper order."""
        return [row.name for row in self.tasks if row.computed]

    def samples(self) -> Iterator[Sample]:
        """The items of ``out_dir/samples.jsonl``, streamed line by line (checked and read
        into items, as :func:`~taxpraben.report.load.iter_samples`); each call reads the file
        afresh. Nothing when there is no directory or no file."""
        if self.out_dir is None:
            return iter(())
        return iter_samples(self.out_dir, check=not self.written_here)


def view_of(results: Results, out_dir: Path | None = None, *, written_here: bool = False) -> RunView:
    """The view of ``results`` held in memory (as written or as loaded), of ``out_dir``
    when given (its samples, and its name where ``meta.model`` is empty); ``written_here``:
    this process has just written ``out_dir`` from its items."""
    shown = reported(results)
    return RunView(
        results=shown,
        label=model_label(shown, out_dir),
        tasks=tuple(ordered_tasks(shown)),
        bloom_levels=tuple(bloom_levels()),
        scorer_problems=tuple(scorer_problems(shown)),
        uncomputed_metrics=frozenset(uncomputed_metrics(shown)),
        out_dir=None if out_dir is None else Path(out_dir),
        written_here=written_here,
    )


def load_run(out_dir: Path) -> RunView:
    """The view of the result directory ``out_dir``: ``results.json`` read once
    (``ReportError`` naming the file when it cannot be), ``samples.jsonl`` left to stream."""
    return view_of(read_results(Path(out_dir)), out_dir)


def as_view(run: Results | RunView) -> RunView:
    """``run`` itself when it is a view, else the view of the results (no directory)."""
    return run if isinstance(run, RunView) else view_of(run)
