"""The terminal summary printed at the end of ``run``, ``score`` and ``report`` (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from taxpraben.report import format as fmt
from taxpraben.report.leaderboard import Leaderboard, overall_gap
from taxpraben.report.review import review_banner, review_cell, review_lines, review_task_lines
from taxpraben.report.tables import judge_lines, ledger_summary, overall_summary, problem_banner
from taxpraben.report.view import RunView, as_view
from taxpraben.results import Results


def print_summary(
    run: RunView | Results, paths: Sequence[Path], console: Console | None = None
) -> None:
    """Task scores, group scores, the Overall Average with its 95% interval, format failures, paths.

    ``run``: the run's view, or its results as written or as loaded: the figures are shown
    as the reports show them (:func:`~taxpraben.report.load.reported`).
    """
    console = console or Console()
    run = as_view(run)
    results = run.results
    for line in problem_banner(run):
        console.print(f"Warning: {line}", style="bold red", markup=False, highlight=False)
    for line in review_banner(results):
        console.print(f"Warning: {line}", style="bold red", markup=False, highlight=False)
    for line in judge_lines(run):
        console.print(line, markup=False, highlight=False)
    meta = results.meta
    runs = "?" if meta.runs is None else meta.runs
    profile = "?" if meta.profile is None else meta.profile
    table = Table(
        title=f"TaxPraBen: {run.label}",
        caption=f"points out of 100, mean ± std over {runs} run(s) · profile {profile}",
    )
    table.add_column("Bloom")
    table.add_column("Task")
    table.add_column("Score", justify="right", no_wrap=True)
    table.add_column("Format failures", justify="right", no_wrap=True)
    table.add_column("Errors", justify="right", no_wrap=True)
    previous = None
    for row in run.tasks:
        task = row.entry
        bloom = fmt.bloom_label(row.bloom) if row.bloom != previous else ""
        previous = row.bloom
        score = fmt.stat(task.score) if row.computed else "[yellow]not computed[/]"
        table.add_row(
            bloom,
            row.name,
            score,
            fmt.mean(task.format_failure_rate, "format_failure_rate"),
            fmt.mean(task.error_rate, "error_rate"),
        )
    table.add_section()
    overall = overall_summary(run)
    beside = f" [yellow]({overall['coverage']})[/]" if overall["coverage"] else ""
    table.add_row("", "[bold]Overall Average[/]", f"[bold]{overall['value']}[/]{beside}", "", "")
    table.add_row("", "95% CI over runs", overall["ci95"], "", "")
    table.add_row("", "95% bootstrap CI (items)", overall["bootstrap_ci95"], "", "")
    console.print(table)
    for heading, figures, label in (
        ("type", results.groups.type, fmt.type_label),
        ("Bloom level", results.groups.bloom, fmt.bloom_label),
    ):
        if figures:
            text = " · ".join(
                f"{label(name)} {fmt.stat(figure)}" for name, figure in figures.items()
            )
            console.print(f"[bold]By {heading}:[/] {text}", highlight=False)
    if overall["partial"]:
        console.print(f"[yellow]{overall['partial']}[/]", highlight=False)
    for line in [*review_lines(results)[:1], *review_task_lines(results), *review_lines(results)[1:]]:
        console.print(line, markup=False, highlight=False)
    by_reason: dict[str, list[str]] = {}
    for row in run.tasks:
        if not row.computed:
            by_reason.setdefault(row.entry.reason or "no reason recorded", []).append(row.name)
    for reason, names in by_reason.items():
        console.print(f"[yellow]Not computed[/] ({', '.join(names)}): {reason}", highlight=False)
    for line in run.scorer_problems:
        console.print(f"Scorer unavailable: {line}", style="yellow", highlight=False, markup=False)
    ledger = ledger_summary(run)
    if ledger is not None:
        console.print(f"[bold]Answers:[/] {ledger}", highlight=False)
    for path in paths:
        console.print(f"Wrote {path}", highlight=False)


def print_leaderboard(board: Leaderboard, paths: Sequence[Path], console: Console | None = None) -> None:
    """The ranking of a leaderboard (``leaderboard.Leaderboard``) with the adjacent-pair verdicts."""
    console = console or Console()
    table = Table(
        title="TaxPraBen leaderboard",
        caption="Overall: points out of 100, mean ± std over runs. Δ next: Overall minus the next one's; "
        "paired Δ, p, Sig.: paired bootstrap against the next model over shared items (p < 0.05)",
    )
    table.add_column("#", justify="right")
    table.add_column("Model", min_width=12, overflow="fold")
    table.add_column("Overall", justify="right", no_wrap=True)
    reviewed = any(e.results.review is not None for e in board.entries)
    if reviewed:
        table.add_column("Human review")
    table.add_column("95% CI")
    table.add_column("Errors", justify="right")
    table.add_column("Δ next", justify="right", no_wrap=True)
    table.add_column("paired Δ", justify="right", no_wrap=True)
    table.add_column("p", justify="right", no_wrap=True)
    table.add_column("Sig.", no_wrap=True)
    for rank, entry in enumerate(board.entries, 1):
        delta = paired = p = verdict = ""
        if rank <= len(board.comparisons):
            comparison = board.comparisons[rank - 1]
            delta = fmt.signed_points(overall_gap(comparison.better, comparison.worse))
            test = comparison.test
            if test is None:
                verdict = "n/a"
            else:
                paired, p = fmt.signed_points(test.difference), fmt.p_value(test.p_value)
                verdict = "yes" if test.significant else "[yellow]no[/]"
        partial = f" ({entry.flags})" if entry.flags else ""  # explained by a warning below
        table.add_row(
            str(rank),
            entry.label,
            fmt.stat(entry.overall) + partial,
            *([review_cell(entry.results)] if reviewed else []),
            fmt.interval(entry.overall.ci95),
            f"[red]{entry.error_flag}[/]" if entry.error_flag else "0",
            delta,
            paired,
            p,
            verdict,
        )
    console.print(table)
    for warning in board.warnings:
        console.print(f"[yellow]Warning:[/] {warning}", highlight=False)
    for path in paths:
        console.print(f"Wrote {path}", highlight=False)
