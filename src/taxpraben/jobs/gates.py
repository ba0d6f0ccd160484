"""CI gates (``--fail-under``): the end of ``run``, ``score`` and ``merge`` in a pipeline.

After the results and reports are written, a figure below its threshold ends the job with
:data:`GATE_EXIT` (4), naming the figure, its value, the threshold and the task. A task the
registry does not know is refused before anything is done (exit 2, with the nearest name); a
gated task these results have no score for (not selected, or not computed) fails the gate: a
figure that could not be checked did not pass. Gated results that are partial (a task of the
benchmark missing or not computed, ``taxpraben.coverage``) fail too, naming those tasks, unless
``--allow-partial``; and results partial for a reason nobody chose end the job with
:data:`~taxpraben.coverage.PARTIAL_EXIT` (6), gates or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from taxpraben.coverage import PARTIAL_EXIT, coverage_of, partial_failures
from taxpraben.jobs.common import JobError, say
from taxpraben.options import GateOptions
from taxpraben.tasks.registry import closest_task_name

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.results import Results
    from taxpraben.scoring import ScoredResults

#: The exit status of a figure below its --fail-under threshold.
GATE_EXIT = 4


def refuse_unknown_gate_tasks(gates: GateOptions, known: Iterable[str], *, scoring: bool = True) -> None:
    """Before the job starts: JobError (exit 2) for a ``--fail-under TASK=X`` whose task is
    not one of ``known`` (the nearest name suggested), or for gates on a job that scores
    nothing (``scoring`` false: ``run --no-score``)."""
    thresholds = gates.thresholds
    if thresholds and not scoring:
        raise JobError("--fail-under needs scores: it cannot be used with --no-score (gate the merge instead)",
                       code=2)  # fmt: skip
    names = list(known)
    for task, _ in thresholds:
        if task is not None and task not in names:
            nearest = closest_task_name(task, names)
            hint = f"did you mean {nearest}?" if nearest else f"known tasks: {', '.join(names)}"
            raise JobError(f"--fail-under {task}=...: unknown task {task!r}; {hint}", code=2)


def gate_failures(
    thresholds: Iterable[tuple[str | None, float]], results: Results, *, allow_partial: bool = False
) -> list[str]:
    """One line per threshold the results fall below (or cannot be checked against), and,
    for gated results that are partial (a task of the benchmark missing or not computed),
    one line naming those tasks unless ``allow_partial``; pure."""
    thresholds = list(thresholds)
    failures = [] if allow_partial or not thresholds else partial_failures(results)
    for task, threshold in thresholds:
        if task is None:
            value, figure = results.overall.mean, "Overall Average"
            note = " (partial: over the computed tasks only)" if results.overall.partial else ""
            flag = f"--fail-under {threshold:g}"
        else:
            entry = results.tasks.get(task)
            score = entry.score if entry is not None and entry.computed else None
            value, figure, note = (score.mean if score is not None else None), f"{task} score", ""
            flag = f"--fail-under {task}={threshold:g}"
            if entry is None:
                failures.append(f"{figure}: {task} was not scored in this run, so {flag} cannot pass")
                continue
        if value is None:
            failures.append(f"{figure} was not computed, so {flag} cannot pass")
        elif value < threshold:
            failures.append(f"{figure} {value:.4f}{note} is below {flag}")
    return failures


def gate_passes(thresholds: Iterable[tuple[str | None, float]], results: Results) -> list[str]:
    """What each passed threshold checked, one piece each: ``Overall Average 0.8123 >= 0.8
    (--fail-under 0.8)``, ``TaxCalc score 1.0000 >= 1 (--fail-under TaxCalc=1)``; pure."""
    passed = []
    for task, threshold in thresholds:
        if task is None:
            value, figure, flag = results.overall.mean, "Overall Average", f"--fail-under {threshold:g}"
        else:
            entry = results.tasks.get(task)
            value = entry.score.mean if entry is not None and entry.score is not None else None
            figure, flag = f"{task} score", f"--fail-under {task}={threshold:g}"
        shown = f"{value:.4f}" if value is not None else "n/a"
        passed.append(f"{figure} {shown} >= {threshold:g} ({flag})")
    return passed


def apply_gates(gates: GateOptions, scored: ScoredResults | Results, console: Console) -> None:
    """At the end of a job, every file written: JobError (exit 4) listing each figure below
    its threshold (and the tasks missing from partial results, unless --allow-partial); a
    line saying the gates passed otherwise. Then JobError (exit 6, :data:`PARTIAL_EXIT`) for
    results partial for a reason nobody chose (a scorer model that could not be loaded while
    semantic scoring was on), unless --allow-partial."""
    from taxpraben.results import Results

    if isinstance(scored, Results):
        results = scored
    else:
        results = scored.typed if scored.typed is not None else Results.model_validate(scored.results)
    thresholds = gates.thresholds
    if thresholds:
        failures = gate_failures(thresholds, results, allow_partial=gates.allow_partial)
        if failures:
            raise JobError(*(f"Gate failed: {line}." for line in failures), code=GATE_EXIT)
        say(console, f"Gates passed: {'; '.join(gate_passes(thresholds, results))}.", "green")
    coverage = coverage_of(results)
    unchosen = coverage.unchosen
    if unchosen and not gates.allow_partial:
        raise JobError(
            f"The results are {coverage.label} tasks of the benchmark: {coverage.listing(unchosen)}. "
            "Every file is written; make the scorer models available (README, \"Scorer models\") and score "
            "again, or pass --no-semantic or --allow-partial to accept a partial result.",
            code=PARTIAL_EXIT,
        )
