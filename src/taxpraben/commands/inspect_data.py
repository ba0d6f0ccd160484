"""`taxpraben tasks` and `taxpraben validate`: look at the registry and at a data directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from taxpraben.commands.common import cli_console
from taxpraben.commands.options import DataOpt, TaskDirOpt
from taxpraben.data.files import DatasetFile, looked_for
from taxpraben.data.loader import DataError, validate_data
from taxpraben.kinds import kind_of
from taxpraben.report.format import metric_label
from taxpraben.tasks import TaskSpecError, load_registry
from taxpraben.tasks.registry import Registry


def registry_or_exit(task_dirs: list[Path] | None, console: Console) -> Registry:
    try:
        return load_registry(task_dirs or ())
    except TaskSpecError as exc:
        console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from exc


def tasks(task_dir: TaskDirOpt = None) -> None:
    """List the task registry: every dataset with its type, Bloom level and metrics."""
    console = cli_console()
    registry = registry_or_exit(task_dir, console)
    wide = console.width >= 140  # the description only fits a wide terminal
    table = Table(title=f"TaxPraBen tasks ({len(registry)})")
    columns = ["task", "中文名", "type", "Bloom level", "metrics"]
    for col in [*columns, "paper n", "description"] if wide else columns:
        table.add_column(col, overflow="fold", no_wrap=col != "metrics" and col != "description")
    for spec in registry.values():
        mode = kind_of(spec).field_mode(spec)
        row = [
            spec.name,
            spec.name_zh,
            spec.type,
            spec.bloom.value,
            ", ".join(metric_label(m) for m in spec.metrics)
            + (f" per aspect ({len(spec.field_rules)})" if spec.fields and mode == "aspects" else ""),
        ]
        extra = [str(spec.paper_size) if spec.paper_size else "?", spec.description]
        table.add_row(*row, *(extra if wide else []))
    console.print(table)


def validate(
    data: DataOpt,
    task_dir: TaskDirOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print problems only.")] = False,
) -> None:
    """Check a data directory against the contract; report every problem; exit 1 on errors.

    Warnings (gold keys the task spec does not name, with the kind inferred for them;
    golds with no readable field; repeated option texts) are printed but do not fail.
    """
    console = cli_console()
    registry = registry_or_exit(task_dir, console)
    try:
        files, problems, counts = validate_data(data, registry)
    except DataError as exc:
        for p in exc.problems:
            console.print(str(p), highlight=False, markup=False)
        raise typer.Exit(1) from exc
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity == "warning"]
    for p in problems:
        style = "red" if p.severity == "error" else "yellow"
        console.print(str(p), style=style, highlight=False, markup=False)
    if not quiet:
        table = Table(title="datasets found")
        table.add_column("task")
        table.add_column("file", overflow="fold")
        table.add_column("records", justify="right")
        table.add_column("warnings", justify="right")
        for f in files:
            n_warn = sum(p.path == str(f.path) for p in warnings)
            table.add_row(f.task, str(f.path), str(counts.get(f.task, 0)), str(n_warn))
        console.print(table)
    for line in missing_lines(registry, files):
        console.print(line, style="yellow", markup=False, highlight=False)
    summary = f"{len(errors)} error(s), {len(warnings)} warning(s), {sum(counts.values())} valid records"
    if errors:
        console.print(summary, style="bold red", markup=False)
        raise typer.Exit(1)
    console.print(summary, style="bold green", markup=False)


def missing_lines(registry: Registry, files: list[DatasetFile]) -> list[str]:
    """The benchmark's tasks without a data file, one line each with the names looked for,
    and what `run` and `score` will do about them; [] when every task has one (or none does)."""
    found = {f.task for f in files}
    missing = [name for name in registry if name not in found]
    if not missing or not found:
        return []
    lines = [f"no data file for {name} (looked for {', '.join(looked_for(name))})" for name in missing]
    lines.append(f"{len(found)} of the benchmark's {len(registry)} tasks have data: `run` and `score` refuse this "
                 "directory unless --tasks names a subset or --allow-missing is given (results marked partial).")
    return lines
