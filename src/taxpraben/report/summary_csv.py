"""``summary.csv``: a run's figures as one table for spreadsheets and scripts.

report.md is for reading; this file is for ``pandas.read_csv``: one row per task, then one per
output type, one per Bloom level and the Overall Average (``row_kind`` says which), with fixed
columns (:func:`summary_columns`) and the values in results.json's own 0-1 scale, unrounded.
A figure that does not apply to a row, or was not computed, is an empty cell.

A leaderboard writes its own ``summary.csv`` (:func:`leaderboard_rows`): one row per model and
task, and one per model for its Overall Average.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from taxpraben.atomic import atomic_writer
from taxpraben.coverage import coverage_of
from taxpraben.kinds import all_metrics
from taxpraben.report.overall_flags import flags_text
from taxpraben.report.view import RunView
from taxpraben.results import Results, Stat

SUMMARY_CSV = "summary.csv"

#: The four columns of one figure, after its key: ``acc_mean``, ``acc_std``, ...
FIGURE_PARTS = ("mean", "std", "ci95_low", "ci95_high")
#: The columns before the figures and after them.
LEAD_COLUMNS = ("row_kind", "name", "type", "bloom")
TAIL_COLUMNS = ("n", "format_failure_rate", "error_rate", "truncated", "notes")
#: The leaderboard's columns.
LEADERBOARD_COLUMNS = (
    "rank", "model", "directory", "row_kind", "task",
    "score_mean", "score_std", "score_ci95_low", "score_ci95_high", "n", "notes",
)  # fmt: skip


#: A row of a CSV file by column: numbers, text or None (an empty cell), each written by :func:`cell_text`.
CsvRow = dict[str, object]

def figure_keys() -> list[str]:
    """The figures that have columns: every declared metric (built-in ones first, in their
    declaration order; a plugin's metrics after them), then ``score``."""
    return [*all_metrics(), "score"]


def summary_columns(keys: Sequence[str] | None = None) -> list[str]:
    """The header of a run's summary.csv: ``row_kind, name, type, bloom``, four columns per
    figure (``KEY_mean, KEY_std, KEY_ci95_low, KEY_ci95_high``), ``n, format_failure_rate,
    error_rate, truncated, notes``."""
    keys = figure_keys() if keys is None else keys
    return [*LEAD_COLUMNS, *(f"{key}_{part}" for key in keys for part in FIGURE_PARTS), *TAIL_COLUMNS]


def stat_cells(key: str, figure: Stat | None) -> dict[str, float | None]:
    """The four cells of one figure (None where absent: no interval with one run)."""
    if figure is None:
        return {f"{key}_{part}": None for part in FIGURE_PARTS}
    low, high = (figure.ci95[0], figure.ci95[1]) if figure.ci95 else (None, None)
    return {f"{key}_mean": figure.mean, f"{key}_std": figure.std, f"{key}_ci95_low": low, f"{key}_ci95_high": high}


def overall_notes(results: Results) -> str | None:
    """The Overall Average row's notes: what is said beside it (``partial: 13 of 14``,
    ``non-standard scorer``, ...) and the missing tasks; None for the paper's figure."""
    flags = flags_text(results)
    coverage = coverage_of(results)
    if coverage.partial:
        return f"{flags}; missing: {coverage.listing()}"
    return flags or None


def summary_rows(view: RunView) -> Iterator[CsvRow]:
    """The rows of a run's summary.csv, as dicts by column: tasks (paper order; then a row
    with no figures for each task of the benchmark not scored, its ``notes`` saying why),
    types, Bloom levels (lowest first), the Overall Average (``notes``: ``partial: 13 of 14``
    and the missing tasks, for a partial result)."""
    results = view.results
    coverage = coverage_of(results)
    for row in view.tasks:
        entry = row.entry
        out: CsvRow = {"row_kind": "task", "name": row.name, "type": row.kind, "bloom": row.bloom}
        if not row.computed:
            out["notes"] = coverage.missing.get(row.name, "not computed")
        for key, figure in entry.metrics.items():
            out.update(stat_cells(key, figure))
        out.update(stat_cells("score", entry.score))
        out["n"] = entry.n
        out["format_failure_rate"] = entry.format_failure_rate.mean if entry.format_failure_rate else None
        out["error_rate"] = entry.error_rate.mean if entry.error_rate else None
        out["truncated"] = entry.ledger.truncated if entry.ledger is not None else None
        yield out
    for task in coverage.missing:
        if task not in results.tasks:
            yield {"row_kind": "task", "name": task, "notes": coverage.missing[task]}
    for kind, figure in results.groups.type.items():
        yield {"row_kind": "type", "name": kind, "type": kind, **stat_cells("score", figure)}
    order = {level: i for i, level in enumerate(view.bloom_levels)}
    for level in sorted(results.groups.bloom, key=lambda lv: order.get(lv, len(order))):
        yield {"row_kind": "bloom", "name": level, "bloom": level, **stat_cells("score", results.groups.bloom[level])}
    overall = results.overall
    yield {
        "row_kind": "overall",
        "name": "Overall Average",
        **stat_cells("score", overall),
        "n": len(overall.tasks),
        "truncated": results.ledger.truncated if results.ledger is not None else None,
        "notes": overall_notes(results),
    }


def cell_text(value: object) -> str:
    """A value as its CSV cell: empty for None, ``repr`` of a float (every digit kept)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_rows(path: Path, columns: Sequence[str], rows: Iterable[CsvRow]) -> Path:
    """``path`` as UTF-8 CSV with a header (written whole, then renamed into place); a key
    of a row that is no column is an error (a new metric must add its columns)."""
    with atomic_writer(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="raise", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: cell_text(value) for key, value in row.items()})
    return path


def write_summary_csv(out_dir: Path, view: RunView) -> Path:
    """``out_dir/summary.csv`` of ``view`` (columns: :func:`summary_columns`, with a metric
    results.json names that no kind declares, a plugin's absent here, appended)."""
    rows = list(summary_rows(view))
    keys = figure_keys()
    for row in view.tasks:
        keys[-1:-1] = [key for key in row.entry.metrics if key not in keys]
    return write_rows(Path(out_dir) / SUMMARY_CSV, summary_columns(keys), rows)


def leaderboard_rows(
    entries: Iterable[tuple[int, str, Path, RunView, str]],
) -> Iterator[CsvRow]:
    """The rows of a leaderboard's summary.csv from ``(rank, label, directory, view, notes)``
    per model, best first: its tasks (paper order), then its Overall Average."""
    for rank, label, directory, view, notes in entries:
        base = {"rank": rank, "model": label, "directory": str(directory), "notes": notes}
        for row in view.tasks:
            yield {**base, "row_kind": "task", "task": row.name, **stat_cells("score", row.entry.score),
                   "n": row.entry.n}  # fmt: skip
        overall = view.results.overall
        yield {**base, "row_kind": "overall", "task": "Overall Average", **stat_cells("score", overall),
               "n": len(overall.tasks)}  # fmt: skip
