"""The tables of a report, as plain text cells, shared by the Markdown and HTML renderers.

Building them once means report.md and report.html cannot disagree about a figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taxpraben.kinds import all_metrics, kinds
from taxpraben.report import format as fmt
from taxpraben.report.load import bloom_levels, ordered_tasks, scorer_problems

NOT_COMPUTED_CELL = "not computed"
NOT_APPLICABLE = ""


@dataclass
class Row:
    cells: list[str]
    task: str | None = None  # the task a row is about (HTML links it to the sample browser)
    group: str | None = None  # the Bloom level heading a row sits under
    muted: bool = False  # a task that was not computed


@dataclass
class Table:
    key: str
    title: str
    headers: list[str]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def paper_table(results: dict[str, Any]) -> Table:
    """Tasks grouped by Bloom level; each metric as mean ± std over runs; the task score last."""
    table = Table(
        "tasks",
        "Results by task",
        [
            "Bloom level",
            "Task",
            "名称",
            "Type",
            "N",
            *(label for _, label in fmt.metric_columns()),
            "Score",
        ],
    )
    for row in ordered_tasks(results):
        metrics = row.data.get("metrics") or {}
        cells = [
            fmt.bloom_label(row.bloom),
            row.name,
            row.data.get("name_zh") or "",
            fmt.type_label(row.kind),
            str(row.data.get("n", "")),
        ]
        for key, _ in fmt.metric_columns():
            if key not in metrics:
                cells.append(NOT_APPLICABLE)
            else:
                cells.append(fmt.stat(metrics[key], key))
        cells.append(fmt.stat(row.data.get("score")) if row.computed else NOT_COMPUTED_CELL)
        table.rows.append(Row(cells, task=row.name, group=row.bloom, muted=not row.computed))
    table.notes.append(
        "Scores are points out of 100: the mean over runs ± the sample standard deviation over runs. "
        "BARTScore is exp(mean token log-likelihood); BARTScore (raw) is the mean log-likelihood itself."
    )
    # One note per distinct reason (a missing scorer usually stops several tasks at once).
    by_reason: dict[str, list[str]] = {}
    for row in ordered_tasks(results):
        if not row.computed:
            by_reason.setdefault(row.data.get("reason") or "no reason recorded", []).append(row.name)
    for reason, names in by_reason.items():
        table.notes.append(f"Not computed ({', '.join(names)}): {reason.rstrip('.')}.")
    for line in scorer_problems(results):
        table.notes.append(f"Scorer unavailable: {line}")
    return table


def group_tables(results: dict[str, Any]) -> list[Table]:
    """Group scores by output type and by Bloom level (unweighted means of task scores)."""
    groups = results.get("groups") or {}
    members: dict[tuple[str, str], list[str]] = {}
    for row in ordered_tasks(results):
        name = row.name if row.computed else f"{row.name} ({NOT_COMPUTED_CELL})"
        members.setdefault(("type", row.kind), []).append(name)
        members.setdefault(("bloom", row.bloom), []).append(name)
    out = []
    order = {
        "type": [kind.name for kind in kinds()],
        "bloom": bloom_levels(),
    }
    titles = {"type": ("By output type", "Type"), "bloom": ("By Bloom level", "Bloom level")}
    for dimension in ("type", "bloom"):
        title, heading = titles[dimension]
        table = Table(f"groups-{dimension}", title, [heading, "Tasks", "Score", "95% CI over runs"])
        values = groups.get(dimension) or {}
        names = [k for k in order[dimension] if k in values or (dimension, k) in members]
        names += [k for k in values if k not in names]
        for name in names:
            figure = values.get(name)
            label = fmt.bloom_label(name) if dimension == "bloom" else fmt.type_label(name)
            tasks = ", ".join(members.get((dimension, name), [])) or "(none)"
            table.rows.append(
                Row(
                    [label, tasks, fmt.stat(figure), fmt.interval((figure or {}).get("ci95"))],
                    group=name if dimension == "bloom" else None,
                    muted=figure is None,
                )
            )
        table.notes.append(
            "A group's score is the unweighted mean of its computed tasks' scores, per run."
        )
        out.append(table)
    return out


def failure_table(results: dict[str, Any]) -> Table:
    """Format failures (unparseable output), generation errors and missing classification labels."""
    table = Table(
        "failures",
        "Format failures and errors",
        [
            "Task",
            "Format failures",
            "Errors",
            "Missing label",
            "Items ok / format failure / error (all runs)",
        ],
    )
    for row in ordered_tasks(results):
        metrics = row.data.get("metrics") or {}
        counts = {"ok": 0, "format_failure": 0, "error": 0}
        for run in row.data.get("per_run") or []:
            for key in counts:
                counts[key] += int((run.get("counts") or {}).get(key, 0) or 0)
        table.rows.append(
            Row(
                [
                    row.name,
                    fmt.stat(row.data.get("format_failure_rate"), "format_failure_rate"),
                    fmt.stat(row.data.get("error_rate"), "error_rate"),
                    fmt.stat(metrics.get("missing_rate"), "missing_rate")
                    if "missing_rate" in metrics
                    else NOT_APPLICABLE,
                    f"{counts['ok']} / {counts['format_failure']} / {counts['error']}",
                ],
                task=row.name,
            )
        )
    table.notes.append(
        "A format failure is an output the scorer could not parse; it scores 0 and is counted here, "
        "apart from wrong answers. Errors are generations that failed (they also score 0)."
    )
    return table


def field_table(results: dict[str, Any]) -> Table | None:
    """Per-field figures of mixed tasks and multi-aspect generation, or None when there are none."""
    table = Table(
        "fields",
        "Fields and aspects",
        ["Task", "Field", "Kind", "Metric", "Value", "Format failures"],
    )
    declared = all_metrics()
    for row in ordered_tasks(results):
        for name, figures in (row.data.get("fields") or {}).items():
            figures = figures or {}
            metric = next((k for k in figures if k in declared), None)
            value = fmt.stat(figures.get(metric), metric) if metric else NOT_APPLICABLE
            if not row.computed and metric and figures.get(metric) is None:
                value = NOT_COMPUTED_CELL
            table.rows.append(
                Row(
                    [
                        row.name,
                        name,
                        str(figures.get("kind", "")),
                        fmt.metric_label(metric) if metric else "",
                        value,
                        fmt.stat(figures.get("format_failure_rate"), "format_failure_rate"),
                    ],
                    task=row.name,
                    muted=not row.computed,
                )
            )
    if not table.rows:
        return None
    table.notes.append(
        "A field missing from a prediction scores 0 and counts as a format failure of that field."
    )
    return table


def per_run_table(results: dict[str, Any]) -> Table:
    """Each task's score in each run, then the Overall Average per run."""
    runs = int(results.get("meta", {}).get("runs") or 0)
    for row in ordered_tasks(results):
        runs = max(runs, len(row.data.get("per_run") or []))
    table = Table(
        "per-run",
        "Scores per run",
        ["Task", *(f"Run {k}" for k in range(runs)), "Mean ± std", "95% CI over runs"],
    )
    for row in ordered_tasks(results):
        by_run = {r.get("run", k): r for k, r in enumerate(row.data.get("per_run") or [])}
        cells = [row.name]
        for k in range(runs):
            entry = by_run.get(k)
            cells.append(fmt.number(entry.get("score")) if entry else "")
        score = row.data.get("score")
        cells += [
            fmt.stat(score) if row.computed else NOT_COMPUTED_CELL,
            fmt.interval((score or {}).get("ci95")),
        ]
        table.rows.append(Row(cells, task=row.name, muted=not row.computed))
    overall = results.get("overall") or {}
    per_run = list(overall.get("runs") or [])
    table.rows.append(
        Row(
            [
                "Overall Average",
                *(fmt.number(v) for v in per_run + [None] * (runs - len(per_run))),
                fmt.stat(overall),
                fmt.interval(overall.get("ci95")),
            ]
        )
    )
    return table


def problem_banner(results: dict[str, Any]) -> list[str]:
    """What makes the figures less than a model's score, one line each, with counts.

    Shown at the top of report.md, report.html and the terminal summary whenever
    predictions errored or were missing, or tasks were not computed; [] otherwise.
    """
    counts = (results.get("meta") or {}).get("counts") or {}
    rows = ordered_tasks(results)
    total = int(counts.get("scored_predictions") or counts.get("predictions") or 0)
    if not total:  # older results: count from the tasks' own per-run counts
        total = sum(sum((r.get("counts") or {}).values()) for row in rows for r in row.data.get("per_run") or [])
    errors = int(counts.get("errors") or 0) or sum(
        int((r.get("counts") or {}).get("error", 0)) for row in rows for r in row.data.get("per_run") or []
    )
    missing = int(counts.get("missing_predictions") or 0)
    lines = []
    if errors:
        every = "every prediction" if errors >= total else f"{errors} of {total} predictions"
        why = f" ({missing} of them had no prediction at all)" if missing else ""
        lines.append(
            f"{every} failed{why} and score 0 as errors: "
            + ("the scores below measure no model output." if errors >= total else "the scores below are lowered by them.")
        )
    elif missing:
        lines.append(f"{missing} of {total} predictions are missing and score 0.")
    skipped = [row.name for row in rows if not row.computed]
    if skipped:
        lines.append(
            f"{len(skipped)} of {len(rows)} tasks were not computed ({', '.join(skipped)}): "
            "the Overall Average is partial."
        )
    return lines


def overall_summary(results: dict[str, Any]) -> dict[str, str]:
    """The Overall Average as text pieces: value, intervals and a partial warning (or '')."""
    overall = results.get("overall") or {}
    missing = [row.name for row in ordered_tasks(results) if not row.computed]
    partial = ""
    if overall.get("partial") or missing:
        partial = (
            f"Partial: computed over {len(overall.get('tasks') or [])} of {len(results.get('tasks', {}))} tasks; "
            f"not computed: {', '.join(missing) or 'see tasks'}. It is not comparable with a full Overall Average."
        )
    return {
        "value": fmt.stat(overall),
        "ci95": fmt.interval(overall.get("ci95")),
        "bootstrap_ci95": fmt.interval(overall.get("bootstrap_ci95")),
        "runs": str(len(overall.get("runs") or [])),
        "partial": partial,
    }


def configuration(results: dict[str, Any]) -> list[tuple[str, str]]:
    """The run configuration as (label, text) pairs, in reading order."""
    meta = results.get("meta") or {}
    gen = meta.get("generation") or {}
    pairs: list[tuple[str, str]] = [
        ("Model", str(meta.get("model") or "(predictions scored with `taxpraben score`)")),
        ("Endpoint", str(meta.get("endpoint") or "—")),
        ("Generation", _generation_text(gen)),
        (
            "Runs",
            f"{meta.get('runs', '?')}"
            + (" (one shared deterministic generation)" if meta.get("shared_generation") else ""),
        ),
        ("Scoring profile", str(meta.get("profile") or "—")),
        ("Data directory", str(meta.get("data_dir") or "—")),
        ("Data hash", str(meta.get("data_hash") or "—")),
    ]
    for name, scorer in (meta.get("scorers") or {}).items():
        pairs.append((_scorer_label(name), _scorer_text(scorer or {})))
    counts = meta.get("counts") or {}
    if counts:
        pairs.append(("Counts", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())))
    version = str(meta.get("package_version") or "?")
    if meta.get("git_hash"):
        version += f" (git {meta['git_hash']})"
    pairs.append(("taxpraben", version))
    pairs.append(
        (
            "Started / finished",
            f"{meta.get('started_at') or '?'} / {meta.get('finished_at') or '?'}",
        )
    )
    return pairs


def _generation_text(gen: dict[str, Any]) -> str:
    parts = []
    for key in ("temperature", "top_p", "max_tokens", "seed_base"):
        if key in gen:
            parts.append(f"{key}={gen[key] if gen[key] is not None else 'default'}")
    if gen.get("system_prompt"):
        prompt = str(gen["system_prompt"])
        parts.append(f"system_prompt={prompt[:80]!r}" + ("…" if len(prompt) > 80 else ""))
    else:
        parts.append("no system prompt")
    if gen.get("gen_kwargs"):
        parts.append("gen_kwargs=" + ", ".join(f"{k}={v}" for k, v in gen["gen_kwargs"].items()))
    return ", ".join(parts) if parts else "—"


def _scorer_label(name: str) -> str:
    return {"bertscore": "BERTScore scorer", "bartscore": "BARTScore scorer"}.get(
        name, f"{name} scorer"
    )


def _scorer_text(scorer: dict[str, Any]) -> str:
    parts = [str(scorer.get("model") or "?")]
    for key in ("layer", "idf", "max_tokens", "weights", "max_length"):
        if key in scorer:
            parts.append(f"{key}={scorer[key] if scorer[key] is not None else 'none'}")
    if scorer.get("available") is False:
        parts.append(f"UNAVAILABLE ({scorer.get('reason') or 'no reason recorded'})")
    return ", ".join(parts)
