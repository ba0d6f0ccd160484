"""Reading a result directory (``results.json`` and ``samples.jsonl``, docs/results-schema.md).

The report layer reads only these files; it imports no model, parsing or metric code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from taxpraben.kinds import all_metrics
from taxpraben.results import (
    SCHEMA_VERSION,
    FieldFigures,
    Results,
    RunFigures,
    Sample,
    Stat,
    TaskResult,
)
from taxpraben.tasks import BLOOM_ORDER, PAPER_ORDER

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

RESULTS_FILE = "results.json"
SAMPLES_FILE = "samples.jsonl"
#: The results.json layout this code reads (the one it writes).
SUPPORTED_SCHEMA = SCHEMA_VERSION


class ReportError(ValueError):
    """A result directory that cannot be reported on; the message names the file."""


def read_results(out_dir: Path) -> Results:
    """``OUT/results.json``, typed; ReportError naming the file when it is not one this code
    reads (missing, not JSON, another ``schema_version``, or keys of the wrong type)."""
    path = Path(out_dir) / RESULTS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ReportError(f"{path}: not found (is {out_dir} a result directory?)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read results: {exc}") from exc
    if not isinstance(raw, dict) or "tasks" not in raw:
        raise ReportError(f"{path}: not a results file (no 'tasks')")
    check_schema_version(raw, path)
    try:
        return Results.model_validate(raw)
    except ValidationError as exc:
        raise ReportError(
            f"{path}: does not match results schema {SCHEMA_VERSION} ({schema_problems(exc)})"
        ) from exc


def check_schema_version(raw: Mapping[str, JSONValue], path: Path) -> None:
    """Refuse a results object of another layout, saying which and what to do."""
    if "schema_version" not in raw:
        raise ReportError(
            f"{path}: no schema_version: not a results.json written by taxpraben (this version "
            f"reads schema_version {SCHEMA_VERSION}); score its predictions with `taxpraben score`"
        )
    version = raw["schema_version"]
    if version == SCHEMA_VERSION and not isinstance(version, bool):
        return
    if isinstance(version, int) and not isinstance(version, bool):
        why = (
            "written by a newer taxpraben: upgrade taxpraben to report on it"
            if version > SCHEMA_VERSION
            else "written by an older taxpraben: rescore its predictions.jsonl with `taxpraben score`"
        )
    else:
        why = f"expected the integer {SCHEMA_VERSION}"
    raise ReportError(
        f"{path}: schema_version {version!r} is not supported (this version reads {SCHEMA_VERSION}); {why}"
    )


def schema_problems(exc: ValidationError, shown: int = 5) -> str:
    """The first ``shown`` validation errors as "where: what", joined by "; "."""
    errors = exc.errors()
    parts = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors[:shown]]
    more = f"; and {len(errors) - shown} more" if len(errors) > shown else ""
    return "; ".join(parts) + more


def load_results(out_dir: Path) -> Results:
    """``OUT/results.json`` as the reports show it (see :func:`reported`), what the renderers
    take; :func:`read_results` gives it as written."""
    return reported(read_results(out_dir))


def scorer_metrics(scorer: str) -> tuple[str, ...]:
    """The metric keys a semantic scorer makes (from the kinds' declarations)."""
    return tuple(key for key, m in all_metrics().items() if m.scorer == scorer) or (scorer,)


def uncomputed_metrics(results: Results) -> set[str]:
    """Metric keys whose scorer never loaded (``meta.scorers[...].available`` is false)."""
    return {
        metric
        for name, info in results.meta.scorers.items()
        if not info.available
        for metric in scorer_metrics(name)
    }


def _null_stat(figure: Stat | None) -> Stat:
    runs = figure.runs if figure is not None else []
    return Stat.model_validate({
        "mean": None, "std": None, "ci95": None, "bootstrap_ci95": None, "runs": [None] * len(runs),
    })  # fmt: skip


def reported(results: Results) -> Results:
    """``results`` as the reports show it: a figure of a scorer that never loaded is null.

    Where every item failed, the pipeline fills the semantic metrics with the 0 that a
    failed item scores, although no model ever computed them; shown as "0.00 ± 0.00" that
    reads as a measurement. Here those figures become null ("n/c") in every task, field
    and run. The input is not modified.
    """
    absent = uncomputed_metrics(results)
    if not absent:
        return results
    # New objects only where a figure changes; the rest is shared with ``results`` (a deep
    # copy of a run's results took 10-30 ms of the tail of ``run``).
    tasks = {name: _task_reported(task, absent) for name, task in results.tasks.items()}
    return results.model_copy(update={"tasks": tasks})


def _task_reported(task: TaskResult, absent: set[str]) -> TaskResult:
    update: JSONObject = {}
    if absent & set(task.metrics):
        update["metrics"] = {key: _null_stat(value) if key in absent else value for key, value in task.metrics.items()}
    if task.fields and any(absent & set(figures.model_extra or {}) for figures in task.fields.values()):
        update["fields"] = {name: _field_reported(figures, absent) for name, figures in task.fields.items()}
    if any(absent & set(run.metrics or {}) for run in task.per_run):
        update["per_run"] = [_run_reported(run, absent) for run in task.per_run]
    return task.model_copy(update=update) if update else task


def _field_reported(figures: FieldFigures, absent: set[str]) -> FieldFigures:
    metrics = figures.model_extra or {}
    if not absent & set(metrics):
        return figures
    copied = figures.model_copy()
    copied.__pydantic_extra__ = {key: _null_stat(value) if key in absent else value for key, value in metrics.items()}
    return copied


def _run_reported(run: RunFigures, absent: set[str]) -> RunFigures:
    if not absent & set(run.metrics or {}):
        return run
    assert run.metrics is not None
    return run.model_copy(update={"metrics": {key: None if key in absent else value for key, value in run.metrics.items()}})


def iter_samples(out_dir: Path, *, check: bool = True) -> Iterator[Sample]:
    """The items of ``OUT/samples.jsonl``, one per line, read lazily in one pass: each line
    is read into its :class:`~taxpraben.results.Sample`, checked (here, once); nothing when
    the file is absent. ReportError names the file and line of a bad one.

    ``check=False``: the lines were written by this process from its items a moment ago
    (the reports of a ``run``): read as JSON only, not checked a second time."""
    path = Path(out_dir) / SAMPLES_FILE
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            if not check:
                yield Sample.trusted(json.loads(line))
                continue
            try:
                checked = Sample.model_validate_json(line)
            except ValidationError as exc:
                if any(e["type"] == "json_invalid" for e in exc.errors()):
                    raise ReportError(f"{path}:{number}: not JSON: {schema_problems(exc)}") from exc
                raise ReportError(f"{path}:{number}: not a samples line ({schema_problems(exc)})") from exc
            yield checked


def load_samples(out_dir: Path) -> list[Sample]:
    """All the items of ``OUT/samples.jsonl`` at once (:func:`iter_samples`; for tests and
    small runs: the reports stream them)."""
    return list(iter_samples(out_dir))


@dataclass(frozen=True)
class TaskRow:
    """One task of ``results.json`` with its name, for tables in paper order; what the
    tables ask of it (computed, Bloom level, kind) is read once, when the row is made."""

    name: str
    entry: TaskResult
    computed: bool = field(init=False)
    bloom: str = field(init=False)  # "" where the entry has none
    kind: str = field(init=False)  # the output kind (``type``), "" where the entry has none

    def __post_init__(self) -> None:
        object.__setattr__(self, "computed", self.entry.computed)
        object.__setattr__(self, "bloom", self.entry.bloom or "")
        object.__setattr__(self, "kind", self.entry.type or "")


def ordered_tasks(results: Results) -> list[TaskRow]:
    """The tasks in the paper's table order: by Bloom level, then the paper's dataset order."""
    tasks = results.tasks
    bloom_rank = {level: i for i, level in enumerate(bloom_levels())}
    paper_rank = {name: i for i, name in enumerate(PAPER_ORDER)}
    listed_rank = {name: i for i, name in enumerate(results.meta.tasks)}

    def key(name: str) -> tuple[int, int, int, str]:
        return (
            bloom_rank.get(tasks[name].bloom or "", len(bloom_rank)),
            paper_rank.get(name, len(paper_rank)),
            listed_rank.get(name, len(listed_rank)),
            name,
        )

    return [TaskRow(name, tasks[name]) for name in sorted(tasks, key=key)]


def bloom_levels() -> list[str]:
    """Bloom's levels, lowest first."""
    return [level.value for level in BLOOM_ORDER]


def model_label(results: Results, out_dir: Path | None = None) -> str:
    """What to call the evaluated model: ``meta.model``, else the directory's name."""
    model = results.meta.model
    if model:
        return str(model)
    return Path(out_dir).resolve().name if out_dir is not None else "(scored predictions)"


def scorer_problems(results: Results) -> list[str]:
    """One line per semantic scorer that was unavailable, which metric and why, when some
    task needed it (has one of its metrics, or was not computed): a run of exact tasks alone
    never loads one, and says nothing of it."""
    used = {key for entry in results.tasks.values() for key in entry.metrics}
    not_computed = any(not entry.computed for entry in results.tasks.values())
    return [
        f"{metric}: {info.reason or 'unavailable'}"
        for metric, info in results.meta.scorers.items()
        if not info.available and (not_computed or used & set(scorer_metrics(metric)))
    ]
