"""What of the benchmark a result covers: the whole of it, or a subset that says so loudly.

The benchmark is the registry's task list (the 14 bundled tasks, with any ``--task-dir``
specs added). A result that computed fewer of them is *partial*: ``results.json`` names each
missing task with why (:data:`NO_DATA_FILE`, :data:`EXCLUDED`, ...), every report shows
"partial: N of 14" beside the Overall Average, and the gates fail on it unless
``--allow-partial``. Some reasons were the user's choice (``--tasks``, ``--allow-missing``,
``--no-semantic``); a scorer model that could not be loaded while semantic scoring was on
was not, and ends ``run``/``score``/``merge`` with :data:`PARTIAL_EXIT`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.results import Results

#: Why a task of the benchmark is missing from a result (``overall.missing``'s values).
NO_DATA_FILE = "no data file"
EXCLUDED = "excluded (--tasks)"
NO_PREDICTIONS = "no predictions"
NOT_SELECTED = "not selected"
SCORER_UNAVAILABLE = "not computed: scorer unavailable"
SEMANTIC_OFF = "not computed: semantic scoring off (--no-semantic)"

#: The reasons nobody chose: a run that is partial for one of them did not do what was asked.
UNCHOSEN = frozenset({SCORER_UNAVAILABLE})

#: The exit status of ``run``/``score``/``merge`` whose results are partial for a reason the
#: user did not choose, and of a leaderboard with a partial entry (without --allow-partial).
PARTIAL_EXIT = 6


@dataclass(frozen=True)
class Coverage:
    """The benchmark's tasks, the ones computed, and why each other one is missing."""

    benchmark: tuple[str, ...]
    computed: tuple[str, ...]
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return bool(self.missing) or len(self.computed) < len(self.benchmark)

    @property
    def label(self) -> str:
        """``partial: 13 of 14`` for a partial result, '' for a whole one."""
        return f"partial: {len(self.computed)} of {len(self.benchmark)}" if self.partial else ""

    @property
    def unchosen(self) -> list[str]:
        """The missing tasks whose reason nobody chose (a scorer that could not be loaded)."""
        return [task for task, why in self.missing.items() if why in UNCHOSEN]

    def listing(self, tasks: Iterable[str] | None = None) -> str:
        """The missing tasks (or ``tasks`` of them) grouped by reason, in benchmark order:
        ``TaxSCQ (no data file); TaxQA, TaxSum (not computed: scorer unavailable)``."""
        by_reason: dict[str, list[str]] = {}
        for task in self.missing if tasks is None else tasks:
            by_reason.setdefault(self.missing.get(task, NOT_SELECTED), []).append(task)
        return "; ".join(f"{', '.join(names)} ({why})" for why, names in by_reason.items())


def missing_reasons(
    benchmark: Sequence[str],
    statuses: Mapping[str, str],
    left_out: Mapping[str, str],
    *,
    semantic: bool,
) -> dict[str, str]:
    """For each task of ``benchmark`` not computed, why, in benchmark order: a task scored
    but ``not_computed`` lacked its scorer (:data:`SEMANTIC_OFF` with ``semantic`` false,
    :data:`SCORER_UNAVAILABLE` otherwise); a task not scored is as ``left_out`` says (the
    job's selection), else :data:`NOT_SELECTED`. A task scored that the benchmark lacks
    cannot be missing."""
    missing: dict[str, str] = {}
    for task in benchmark:
        status = statuses.get(task)
        if status == "ok":
            continue
        if status is None:
            missing[task] = left_out.get(task, NOT_SELECTED)
        else:
            missing[task] = SCORER_UNAVAILABLE if semantic else SEMANTIC_OFF
    return missing


def coverage_of(results: Results) -> Coverage:
    """The coverage ``results`` records (``overall.benchmark`` and ``overall.missing``); for
    files written before them, the tasks scored are the benchmark and the tasks not computed
    the missing ones (their reason read from ``meta.scorers``)."""
    overall = results.overall
    computed = tuple(name for name, entry in results.tasks.items() if entry.computed)
    if overall.benchmark:
        return Coverage(tuple(overall.benchmark), computed, dict(overall.missing))
    semantic_off = any("--no-semantic" in (info.reason or "") for info in results.meta.scorers.values())
    missing = {name: SEMANTIC_OFF if semantic_off else SCORER_UNAVAILABLE
               for name, entry in results.tasks.items() if not entry.computed}  # fmt: skip
    return Coverage(tuple(results.tasks), computed, missing)


def partial_failures(results: Results) -> list[str]:
    """What a gate says of a partial result, one line (none for a whole one)."""
    coverage = coverage_of(results)
    if not coverage.partial:
        return []
    return [f"the results are {coverage.label} tasks of the benchmark; missing: {coverage.listing()} "
            "(--allow-partial accepts a partial result)"]  # fmt: skip


@dataclass(frozen=True)
class Selection:
    """The tasks a job scores (``tasks``, in registry order) and why each other task of the
    benchmark is left out (``left_out``)."""

    tasks: list[str]
    left_out: dict[str, str]


class MissingDataError(ValueError):
    """Tasks of the benchmark (or of --tasks) that have no data file and were not let go."""

    def __init__(self, missing: Sequence[str], looked_for: Mapping[str, Sequence[str]], data_dir: str) -> None:
        lines = [f"{data_dir}: no data file for {len(missing)} task(s) of the benchmark:"]
        lines += [f"  {task} (looked for {', '.join(looked_for[task])})" for task in missing]
        lines.append("A score covers the whole benchmark: add the files, name the tasks to score with --tasks, "
                     "or pass --allow-missing to score the others (the results are then marked partial).")
        super().__init__("\n".join(lines))
        self.missing = list(missing)


def select_tasks(
    benchmark: Sequence[str],
    found: Iterable[str],
    *,
    chosen: Sequence[str] | None = None,
    held: Sequence[str] | None = None,
) -> tuple[Selection, list[str]]:
    """Which tasks a job scores (in the order wanted), and the tasks it wants that have no data file (the caller
    refuses those unless ``--allow-missing``, when they are :data:`NO_DATA_FILE`). ``chosen``: ``--tasks`` (the others are
    :data:`EXCLUDED`); ``held``: the tasks a predictions file holds (``score``; the others
    have :data:`NO_PREDICTIONS`); neither: the whole benchmark. Pure."""
    have = set(found)
    if chosen is not None:
        wanted, others = list(chosen), EXCLUDED
    elif held is not None:
        wanted, others = list(held), NO_PREDICTIONS
    else:
        wanted, others = list(benchmark), NOT_SELECTED
    absent = [task for task in wanted if task not in have]
    left_out = {task: others for task in benchmark if task not in wanted}
    left_out.update({task: NO_DATA_FILE for task in absent})
    tasks = [task for task in wanted if task in have]
    return Selection(tasks, {task: left_out[task] for task in benchmark if task in left_out}), absent
