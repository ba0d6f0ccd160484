"""Reading a result directory (``results.json`` and ``samples.jsonl``, docs/results-schema.md).

The report layer reads only these files; it imports no model, parsing or metric code.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taxpraben.kinds import all_metrics
from taxpraben.tasks import BLOOM_ORDER, PAPER_ORDER

RESULTS_FILE = "results.json"
SAMPLES_FILE = "samples.jsonl"
SUPPORTED_SCHEMA = 1


class ReportError(ValueError):
    """A result directory that cannot be reported on; the message names the file."""


def load_results(out_dir: Path) -> dict[str, Any]:
    """``OUT/results.json`` as a dict, checked for the schema version this code understands."""
    path = Path(out_dir) / RESULTS_FILE
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ReportError(f"{path}: not found (is {out_dir} a result directory?)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read results: {exc}") from exc
    if not isinstance(results, dict) or "tasks" not in results:
        raise ReportError(f"{path}: not a results file (no 'tasks')")
    version = results.get("schema_version")
    if version != SUPPORTED_SCHEMA:
        raise ReportError(
            f"{path}: schema_version {version!r} is not supported (this version reads {SUPPORTED_SCHEMA})"
        )
    return as_reported(results)


def scorer_metrics(scorer: str) -> tuple[str, ...]:
    """The metric keys a semantic scorer makes (from the kinds' declarations)."""
    return tuple(key for key, m in all_metrics().items() if m.scorer == scorer) or (scorer,)


def uncomputed_metrics(results: dict[str, Any]) -> set[str]:
    """Metric keys whose scorer never loaded (``meta.scorers[...].available`` is false)."""
    scorers = (results.get("meta") or {}).get("scorers") or {}
    return {
        metric
        for name, info in scorers.items()
        if isinstance(info, dict) and info.get("available") is False
        for metric in scorer_metrics(name)
    }


def _null_stat(figure: Any) -> dict[str, Any]:
    runs = figure.get("runs") if isinstance(figure, dict) else None
    return {
        "mean": None, "std": None, "ci95": None, "bootstrap_ci95": None,
        "runs": [None] * len(runs or []),
    }  # fmt: skip


def as_reported(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` as the reports show it: a figure of a scorer that never loaded is null.

    Where every item failed, the pipeline fills the semantic metrics with the 0 that a
    failed item scores, although no model ever computed them; shown as "0.00 ± 0.00" that
    reads as a measurement. Here those figures become null ("n/c") in every task, field
    and run. The input is not modified.
    """
    absent = uncomputed_metrics(results)
    if not absent:
        return results
    results = copy.deepcopy(results)
    for task in (results.get("tasks") or {}).values():
        metrics = task.get("metrics") or {}
        for key in absent & set(metrics):
            metrics[key] = _null_stat(metrics[key])
        for figures in (task.get("fields") or {}).values():
            for key in absent & set(figures or {}):
                figures[key] = _null_stat(figures[key])
        for run in task.get("per_run") or []:
            run_metrics = run.get("metrics") or {}
            for key in absent & set(run_metrics):
                run_metrics[key] = None
    return results


def iter_samples(out_dir: Path) -> Iterator[dict[str, Any]]:
    """The lines of ``OUT/samples.jsonl``; nothing when the file is absent."""
    path = Path(out_dir) / SAMPLES_FILE
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ReportError(f"{path}:{number}: not JSON: {exc}") from exc


def load_samples(out_dir: Path) -> list[dict[str, Any]]:
    return list(iter_samples(out_dir))


@dataclass(frozen=True)
class TaskRow:
    """One task of ``results.json`` with its name, for tables in paper order."""

    name: str
    data: dict[str, Any]

    @property
    def computed(self) -> bool:
        return self.data.get("status", "ok") == "ok"

    @property
    def bloom(self) -> str:
        return self.data.get("bloom") or ""

    @property
    def kind(self) -> str:
        return self.data.get("type") or ""


def ordered_tasks(results: dict[str, Any]) -> list[TaskRow]:
    """The tasks in the paper's table order: by Bloom level, then the paper's dataset order."""
    tasks = results.get("tasks", {})
    listed = results.get("meta", {}).get("tasks") or []
    bloom_rank = {level: i for i, level in enumerate(bloom_levels())}
    paper_rank = {name: i for i, name in enumerate(PAPER_ORDER)}
    listed_rank = {name: i for i, name in enumerate(listed)}

    def key(name: str) -> tuple[int, int, int, str]:
        bloom = tasks[name].get("bloom") or ""
        return (
            bloom_rank.get(bloom, len(bloom_rank)),
            paper_rank.get(name, len(paper_rank)),
            listed_rank.get(name, len(listed_rank)),
            name,
        )

    return [TaskRow(name, tasks[name]) for name in sorted(tasks, key=key)]


def bloom_levels() -> list[str]:
    """Bloom's levels, lowest first."""
    return [level.value for level in BLOOM_ORDER]


def model_label(results: dict[str, Any], out_dir: Path | None = None) -> str:
    """What to call the evaluated model: ``meta.model``, else the directory's name."""
    model = results.get("meta", {}).get("model")
    if model:
        return str(model)
    return Path(out_dir).resolve().name if out_dir is not None else "(scored predictions)"


def scorer_problems(results: dict[str, Any]) -> list[str]:
    """One line per semantic scorer that was unavailable: which metric and why."""
    scorers = (results.get("meta") or {}).get("scorers") or {}
    return [
        f"{metric}: {info.get('reason') or 'unavailable'}"
        for metric, info in scorers.items()
        if isinstance(info, dict) and info.get("available") is False
    ]
