"""The library calls behind ``taxpraben run`` and ``taxpraben score``, and results read back.

:func:`evaluate` and :func:`score` take the commands' options by their declared names
(:mod:`taxpraben.api.options`) and return the typed :class:`Results`; with ``out=`` they
write the same files as the commands, without it they work in a temporary directory that is
removed once the results are read. Nothing is printed unless ``verbose=True`` (then the
command's messages, summary and progress bar). A job that cannot go on raises
:class:`~taxpraben.jobs.common.JobError` (its ``lines`` say why, ``code`` is the command's exit
status). The commands call :func:`evaluate_job` and :func:`score_job` with the options they parsed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.jobs.generate import RunJob, run_job

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.jobs.score import ScoreJob
    from taxpraben.results import Meta, OverallStat, Sample, TaskResult
    from taxpraben.results import Results as ResultsFile


@dataclass(frozen=True)
class Results:
    """What an evaluation made: ``file``, results.json (typed, as the reports read it; None
    when nothing was scored: ``no_score=True``), its ``samples`` (one per samples.jsonl line,
    in its order) and ``out_dir``, where the files are (None: they were written to a temporary
    directory, now removed)."""

    file: ResultsFile | None
    samples: tuple[Sample, ...]
    out_dir: Path | None

    @property
    def tasks(self) -> dict[str, TaskResult]:
        """Per task: its figures per run and over runs (results.json's ``tasks``; none unscored)."""
        return self.file.tasks if self.file is not None else {}

    @property
    def overall(self) -> OverallStat | None:
        """The Overall Average per run and over runs, and what of the benchmark is covered."""
        return self.file.overall if self.file is not None else None

    @property
    def meta(self) -> Meta | None:
        """How the results were made (model, data hash, scorers, versions, times)."""
        return self.file.meta if self.file is not None else None


def load_results(out_dir: str | Path) -> Results:
    """The results of an output directory (of ``run``, ``score``, ``merge`` or :func:`evaluate`):
    results.json and samples.jsonl, each checked against its schema;
    :class:`~taxpraben.report.load.ReportError` names the file (and line) that is not one. A
    directory of generations not scored (``no_score``: predictions.jsonl alone) has no results."""
    from taxpraben.report.load import RESULTS_FILE, load_samples, read_results

    out = Path(out_dir)
    if not (out / RESULTS_FILE).exists() and (out / "predictions.jsonl").exists():
        return Results(None, (), out)
    return Results(read_results(out), tuple(load_samples(out)), out)


def _consoles(verbose: bool) -> tuple[Console, Console]:
    """Where messages and the progress bar go: the command's consoles, or nowhere."""
    from rich.console import Console

    if not verbose:
        quiet = Console(quiet=True)
        return quiet, quiet
    from taxpraben.terminal.console import deferred_console

    return deferred_console(), deferred_console(stderr=True)


def evaluate_job(job: RunJob, console: Console, progress: Console | None = None) -> Path:
    """``taxpraben run`` with its parsed options: generate, write, score; the output directory."""
    return run_job(job, console, progress)


def score_job(job: ScoreJob, console: Console) -> Path:
    """``taxpraben score`` with its parsed options: score into the output directory (returned)."""
    from taxpraben.jobs.score import score_job as run_score_job

    return run_score_job(job, console)


def _tasks_option(tasks: str | Sequence[str] | None) -> str | None:
    return tasks if tasks is None or isinstance(tasks, str) else ",".join(tasks)


def evaluate(
    model: str,
    data: str | Path,
    *,
    runs: int = 5,
    tasks: str | Sequence[str] | None = None,
    out: str | Path | None = None,
    verbose: bool = False,
    **options: object,
) -> Results:
    """Evaluate ``model`` (a model spec: ``openai:MODEL``, ``hf:PATH``, ``replay:FILE``,
    ``baseline:NAME``) on ``data`` (a data directory, or ``"sample"``): ``runs`` runs of every
    record of ``tasks`` (names, or one comma-separated text; default: every task), scored.

    ``options``: any other option of ``taxpraben run`` by its name (``base_url``,
    ``concurrency``, ``temperature``, ``no_semantic``, ``bertscore_model``, ``allow_partial``,
    ...; ``taxpraben run --help`` lists them, a configuration file's keys are the same). TypeError
    for a name that is no option, ValueError for a value it refuses; JobError when the job stops.
    """
    from taxpraben.api.options import job_of

    given = {**options, "model": model, "data": data, "runs": runs, "tasks": _tasks_option(tasks)}
    console, progress = _consoles(verbose)
    if out is not None:
        job = job_of(RunJob, "evaluate", {**given, "out": out})
        return load_results(evaluate_job(job, console, progress))
    with tempfile.TemporaryDirectory(prefix="taxpraben-") as tmp:
        job = job_of(RunJob, "evaluate", {**given, "out": Path(tmp) / "out"})
        return replace(load_results(evaluate_job(job, console, progress)), out_dir=None)


def score(
    predictions: str | Path | Sequence[str | Path],
    data: str | Path,
    *,
    tasks: str | Sequence[str] | None = None,
    out: str | Path | None = None,
    verbose: bool = False,
    **options: object,
) -> Results:
    """Score existing generations: ``predictions`` (one file or several: the predictions
    contract, a batch output, an Inspect AI log or an lm-evaluation-harness samples file)
    against ``data``. ``options``: any other option of ``taxpraben score`` by its name
    (``runs``, ``no_semantic``, ``profile``, ``judge``, ...). Errors as :func:`evaluate`'s."""
    from taxpraben.api.options import job_of
    from taxpraben.jobs.score import ScoreJob

    files = [predictions] if isinstance(predictions, (str, Path)) else list(predictions)
    given = {**options, "predictions": files, "data": data, "tasks": _tasks_option(tasks)}
    console, _ = _consoles(verbose)
    if out is not None:
        return load_results(score_job(job_of(ScoreJob, "score", {**given, "out": out}), console))
    with tempfile.TemporaryDirectory(prefix="taxpraben-") as tmp:
        job = job_of(ScoreJob, "score", {**given, "out": Path(tmp) / "out"})
        return replace(load_results(score_job(job, console)), out_dir=None)
