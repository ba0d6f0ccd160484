"""`taxpraben merge`: combine the predictions of sharded runs (`run --shard I/N`) and score them.

Each source is a shard's output directory (its ``predictions.jsonl`` and ``shard.json``) or a
predictions file. The merge refuses, with a compact list: the same (task, id, run) predicted
differently by two sources (an overlap), items of the data and runs that no source predicts
(a gap), and shards that are missing, given twice or from another run (by their manifests).
``--force`` scores anyway: the gaps score 0 as errors and the manifests' differences are only
printed; an overlap is always refused, since no rule can tell which prediction is right.
"""

from __future__ import annotations

from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer

from taxpraben.commands.common import cli_console
from taxpraben.commands.inspect_data import registry_or_exit
from taxpraben.commands.options import (
    DATA_PANEL,
    OUTPUT_PANEL,
    DataOpt,
    LimitOpt,
    ScoringOptions,
    SeedOpt,
    TaskDirOpt,
    TasksOpt,
    with_scoring_options,
)
from taxpraben.commands.run import in_data_order
from taxpraben.commands.score import load_data_or_exit, score_and_report, settings_from_options
from taxpraben.data.loader import LoadedData
from taxpraben.locks import DirectoryLock, InUseError
from taxpraben.predictions import (
    Prediction,
    PredictionFileError,
    read_predictions,
    write_predictions,
)
from taxpraben.shards import (
    SHARD_MANIFEST,
    describe_gaps,
    describe_overlaps,
    manifest_problems,
    merge_predictions,
    read_manifest,
)


def source_files(source: Path) -> tuple[Path, Path]:
    """(predictions file, manifest path) of a shard directory or a predictions file."""
    if source.is_dir():
        return source / "predictions.jsonl", source / SHARD_MANIFEST
    return source, source.parent / SHARD_MANIFEST


def selection_problems(manifests: dict[str, dict[str, Any]], loaded: LoadedData) -> list[str]:
    """Where the merge's data selection (--data, --tasks, --limit) is not the shards' one."""
    if not manifests:
        return []
    name, first = next(iter(manifests.items()))
    ours = {"data_hash": loaded.data_hash, "tasks": list(loaded.records), "limit": loaded.limit}
    return [
        f"{name} was run with {fact} {first.get(fact)!r}; this merge has {value!r} "
        "(give the same --data, --tasks and --limit as the shards)"
        for fact, value in ours.items()
        if fact in first and first[fact] != value
    ]


@with_scoring_options
def merge(
    sources: Annotated[
        list[Path],
        typer.Argument(
            help="Shard output directories (predictions.jsonl + shard.json) or predictions files.",
            show_default=False,
        ),
    ],
    data: DataOpt,
    tasks: TasksOpt = None,
    limit: LimitOpt = None,
    task_dir: TaskDirOpt = None,
    runs: Annotated[
        int | None,
        typer.Option(
            "--runs",
            min=1,
            help="Runs 0..N-1 every item must have (default: the shards' manifests, else the "
            "highest run present + 1).",
            rich_help_panel=DATA_PANEL,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Score despite gaps (they score 0 as errors) and manifest differences; "
            "overlaps are always refused.",
            rich_help_panel=DATA_PANEL,
        ),
    ] = False,
    *,
    scoring: ScoringOptions,
    seed: SeedOpt = 0,
    out: Annotated[
        Path, typer.Option("--out", help="Output directory of the merged run.", rich_help_panel=OUTPUT_PANEL)
    ],
) -> None:
    """Merge sharded runs' predictions (refusing overlaps and gaps), then score the whole."""
    console = cli_console()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def fail(lines: list[str], code: int = 1) -> typer.Exit:
        for line in lines:
            console.print(line, style="red", markup=False, highlight=False)
        return typer.Exit(code)

    registry = registry_or_exit(task_dir, console)
    read: list[tuple[str, list[Prediction]]] = []
    manifests: dict[str, dict[str, Any]] = {}
    for source in sources:
        predictions_path, manifest_path = source_files(source)
        try:
            read.append((str(source), list(read_predictions(predictions_path))))
            manifest = read_manifest(manifest_path)
        except (OSError, PredictionFileError, ValueError) as exc:
            raise fail([f"cannot read {source}: {exc}"]) from exc
        if manifest is not None:
            manifests[str(source)] = manifest
    if runs is None:
        declared = {m.get("runs") for m in manifests.values()} - {None}
        present = max((p.run for _, ps in read for p in ps), default=0) + 1
        runs = max(declared) if declared else present
    settings = settings_from_options(scoring, console, seed=seed, runs=runs)
    loaded = load_data_or_exit(data, registry, tasks, limit, console)
    expected = {task: [r.id for r in records] for task, records in loaded.records.items()}
    merged = merge_predictions(read, expected, range(runs))
    problems = manifest_problems(manifests)
    problems += selection_problems(manifests, loaded)
    if merged.gaps:
        total = sum(len(ids) for ids in expected.values()) * runs
        problems += [
            f"{len(merged.gaps)} of {total} items (data x {runs} run(s)) have no prediction in "
            "any source:",
            *describe_gaps(merged.gaps, expected),
        ]
    if merged.overlaps:  # refused even with --force: no rule can tell which one is right
        raise fail([
            f"{len(merged.overlaps)} item(s) predicted differently by several sources "
            "(task/id/run: sources); keep one shard's output per item:",
            *describe_overlaps(merged.overlaps), *problems, "Nothing was merged.",
        ])  # fmt: skip
    if problems and not force:
        raise fail([*problems, "Nothing was merged. Rerun the shards that are missing or "
                    "incomplete (the same command resumes from its cache), or --force to "
                    "score the gaps as errors."])  # fmt: skip
    for line in problems:
        console.print(line, style="yellow", markup=False, highlight=False)
    if merged.repeated:
        console.print(
            f"{merged.repeated} prediction(s) given identically by more than one source: kept once.",
            style="yellow", markup=False, highlight=False,
        )  # fmt: skip

    predictions = in_data_order(merged.predictions, loaded)
    first = next(iter(manifests.values()), {})
    models = sorted({p.model for p in predictions if p.model})
    meta: dict[str, Any] = {
        "model": first.get("model") or (models[0] if len(models) == 1 else (models or None)),
        "endpoint": first.get("endpoint"),
        "generation": first.get("generation"),
        "runs": runs,
        "started_at": started,
        "merged_from": {
            "sources": [str(s) for s in sources],
            "shards": sorted(
                (m["shard"] for m in manifests.values()), key=lambda s: s.get("index", 0)
            ),
            "gaps": len(merged.gaps),
            "forced": force and bool(merged.gaps or problems),
        },
    }
    meta = {k: v for k, v in meta.items() if v is not None}
    with ExitStack() as held:
        try:
            held.enter_context(DirectoryLock(out))
        except (InUseError, OSError) as exc:
            raise fail([str(exc)], 2) from exc
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_predictions(out / "predictions.jsonl", predictions)
        except OSError as exc:
            raise fail([f"cannot write {out / 'predictions.jsonl'}: {exc}"], 2) from exc
        console.print(
            f"{len(predictions)} predictions merged from {len(sources)} source(s) -> "
            f"{out / 'predictions.jsonl'}",
            markup=False, highlight=False,
        )  # fmt: skip
        score_and_report(loaded, predictions, registry, out, settings, meta, console)
