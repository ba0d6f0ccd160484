"""`taxpraben score`: score existing generations (the predictions contract) against the data."""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from taxpraben.commands.common import cli_console, use_local_models_if_hub_unreachable
from taxpraben.commands.inspect_data import registry_or_exit
from taxpraben.commands.options import (
    DATA_PANEL,
    DataOpt,
    LimitOpt,
    OutOpt,
    ScoringOptions,
    SeedOpt,
    TaskDirOpt,
    TasksOpt,
    scoring_settings_or_exit,
    with_scoring_options,
)
from taxpraben.data.loader import DataError, LoadedData, load_data
from taxpraben.locks import DirectoryLock, InUseError
from taxpraben.predictions import Prediction, PredictionFileError, read_predictions
from taxpraben.tasks import Registry
from taxpraben.tasks.registry import closest_task_name

if TYPE_CHECKING:
    from taxpraben.scoring import ScoredResults, ScoringSettings

# The scoring pipeline (sklearn, scipy) and the reports are imported where they are used,
# so that `taxpraben --help`, `tasks` and the start of `run` stay fast.


def split_tasks(tasks: str | None) -> list[str] | None:
    if not tasks:
        return None
    return [t.strip() for t in tasks.split(",") if t.strip()]


def load_data_or_exit(
    data: str, registry: Registry, tasks: str | None, limit: int | None, console: Console
) -> LoadedData:
    try:
        loaded = load_data(data, registry, split_tasks(tasks), limit)
    except (DataError, KeyError) as exc:
        console.print(str(exc).strip("'\""), style="red", markup=False, highlight=False)
        raise typer.Exit(1) from exc
    for warning in loaded.warnings:
        console.print(str(warning), style="yellow", markup=False, highlight=False)
    return loaded


def score_and_report(
    loaded: LoadedData,
    predictions: list[Prediction],
    registry: Registry,
    out: Path,
    settings: ScoringSettings,
    meta: dict[str, Any],
    console: Console,
) -> ScoredResults:
    """Score, write the output directory, print warnings and the terminal summary."""
    from taxpraben.report import print_summary, write_reports
    from taxpraben.results import Results
    from taxpraben.scoring import PredictionMatchError, score_to_dir

    try:
        scored = score_to_dir(loaded, predictions, registry, out, settings, meta)
        write_reports(out)
    except PredictionMatchError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(1) from exc
    except OSError as exc:  # a full disk, a read-only directory
        console.print(f"cannot write the results into {out}: {exc}", style="red", markup=False, highlight=False)
        raise typer.Exit(2) from exc
    for message in scored.match.messages():
        console.print(message, style="yellow", markup=False, highlight=False)
    paths = [out / name for name in ("results.json", "samples.jsonl", "report.md", "report.html")]
    # The renderers read the typed results: the pipeline's JSON object goes through the model once.
    print_summary(Results.model_validate(scored.results), [p for p in paths if p.exists()], console)
    return scored


def unmatched_problems(
    loaded: LoadedData, predictions: Sequence[Prediction], registry: Registry, source: Path
) -> list[str]:
    """Why ``predictions`` are not a result for ``loaded``, one line each; [] when some match.

    A file with no prediction, or none whose (task, id) is an item of the data, would score
    as a full report of zeros; it is refused with what was expected (the tasks, an example
    line) and, for task names that are close to a known one, a did-you-mean.
    """
    ids = {task: {r.id for r in records} for task, records in loaded.records.items()}
    matched = 0
    tasks_seen: dict[str, int] = {}
    for p in predictions:
        spec = registry.lookup(p.task)
        task = spec.name if spec is not None else p.task
        if p.id in ids.get(task, ()):
            matched += 1
        tasks_seen[p.task] = tasks_seen.get(p.task, 0) + 1
    if matched:
        return []
    task = next((t for t, r in loaded.records.items() if r), "TaxCalc")
    example = json.dumps(
        {"task": task, "id": _first_id(loaded, task), "run": 0, "prediction": "..."}, ensure_ascii=False
    )
    lines = [
        f"{source}: no predictions in the file"
        if not predictions
        else f"{source}: none of its {len(predictions)} predictions is an item of the data",
        f"expected tasks: {', '.join(loaded.records)}",
        f"expected lines like: {example}",
    ]
    for name, count in tasks_seen.items():
        spec = registry.lookup(name)
        if spec is not None and spec.name in ids:
            sample = next(p.id for p in predictions if p.task == name)
            lines.append(
                f"task {name!r} ({count} prediction(s)): ids such as {sample!r} are not in the "
                f"data (its ids look like {_first_id(loaded, spec.name)!r})"
            )
            continue
        where = "not selected (--tasks)" if spec is not None else "not a known task"
        hint = closest_task_name(name, loaded.records)
        extra = f"; did you mean {hint!r}?" if hint else ""
        lines.append(f"task {name!r} ({count} prediction(s)): {where}{extra}")
    return lines


def _first_id(loaded: LoadedData, task: str) -> str:
    records = loaded.records.get(task) or []
    return records[0].id if records else "0"


def settings_from_options(
    scoring: ScoringOptions, console: Console, *, seed: int, runs: int | None
) -> ScoringSettings:
    """The checked ScoringSettings of the options (exit 2 if not valid); when semantic
    scorers will run, the hub is probed first (see use_local_models_if_hub_unreachable)."""
    settings = scoring_settings_or_exit(scoring, console, seed=seed, runs=runs)
    if settings.semantic:
        use_local_models_if_hub_unreachable(scoring.scorer_models, console)
    return settings


_GLOB = re.compile(r"[*?\[]")


def prediction_files(given: Sequence[Path], console: Console) -> list[Path]:
    """The files ``--predictions`` names, each once, in order: a path as given, a glob
    expanded (sorted); exit 1 when a glob matches nothing."""
    files: list[Path] = []
    for path in given:
        if not path.exists() and _GLOB.search(str(path)):
            matched = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
            if not matched:
                console.print(f"no predictions file matches {path}", style="red", markup=False, highlight=False)
                raise typer.Exit(1)
            files.extend(matched)
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def tasks_held(preds: Sequence[Prediction], registry: Registry, console: Console) -> str | None:
    """The tasks the predictions hold, as a --tasks value, when they hold some but not all:
    a file for one task scores that task, not the other thirteen as missing."""
    held = [name for name in registry if any(p.task == name for p in preds)]
    if not held or len(held) == len(registry):
        return None
    console.print(
        f"scoring {', '.join(held)}: the predictions hold no other task (pass --tasks to score "
        "others as missing)",
        markup=False,
        highlight=False,
    )
    return ",".join(held)


@with_scoring_options
def score(
    data: DataOpt,
    predictions: Annotated[
        list[Path],
        typer.Option(
            "--predictions",
            "-p",
            help="Predictions file (JSON Lines, one per task/id/run); repeat the option, or give a "
            "glob ('runs/*/predictions.jsonl'), to read several. Only the tasks they hold are "
            "scored unless --tasks says otherwise.",
            rich_help_panel=DATA_PANEL,
        ),
    ],
    tasks: TasksOpt = None,
    limit: LimitOpt = None,
    task_dir: TaskDirOpt = None,
    runs: Annotated[
        int | None,
        typer.Option(
            "--runs",
            min=1,
            help="Expected runs 0..N-1 (default: the runs present in the file).",
            rich_help_panel=DATA_PANEL,
        ),
    ] = None,
    *,
    scoring: ScoringOptions,
    seed: SeedOpt = 0,
    out: OutOpt = None,
) -> None:
    """Score existing generations; writes results.json, samples.jsonl and the reports."""
    console = cli_console()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    registry = registry_or_exit(task_dir, console)
    settings = settings_from_options(scoring, console, seed=seed, runs=runs)
    files = prediction_files(predictions, console)
    try:
        preds = [p for path in files for p in read_predictions(path)]
    except (OSError, PredictionFileError) as exc:
        console.print(f"cannot read predictions: {exc}", style="red", markup=False, highlight=False)
        raise typer.Exit(1) from exc
    if tasks is None:
        tasks = tasks_held(preds, registry, console)
    loaded = load_data_or_exit(data, registry, tasks, limit, console)
    source = files[0] if len(files) == 1 else Path(", ".join(str(f) for f in files))
    problems = unmatched_problems(loaded, preds, registry, source)
    if problems:
        for line in problems:
            console.print(line, style="red", markup=False, highlight=False)
        raise typer.Exit(1)
    models = sorted({p.model for p in preds if p.model})
    meta = {
        "model": models[0] if len(models) == 1 else (models or None),
        "predictions_file": str(files[0]) if len(files) == 1 else [str(f) for f in files],
        "started_at": started,
    }
    out_dir = out or files[0].parent / "scored"
    with ExitStack() as held:
        try:
            held.enter_context(DirectoryLock(out_dir))
        except (InUseError, OSError) as exc:
            console.print(str(exc), style="red", markup=False, highlight=False)
            raise typer.Exit(2) from exc
        score_and_report(loaded, preds, registry, out_dir, settings, meta, console)
