"""`taxpraben score`: score existing generations (the predictions contract) against the data."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from taxpraben.commands.common import (
    BartModelOpt,
    BartWeightsOpt,
    BertBatchOpt,
    BertIdfOpt,
    BertLayerOpt,
    BertMaxTokensOpt,
    BertModelOpt,
    DataOpt,
    DeviceOpt,
    LimitOpt,
    NoSemanticOpt,
    OutOpt,
    ProfileOpt,
    ScorerDtypeOpt,
    SeedOpt,
    TaskDirOpt,
    TasksOpt,
)
from taxpraben.commands.inspect_data import registry_or_exit
from taxpraben.data.loader import DataError, LoadedData, load_data
from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
)
from taxpraben.predictions import Prediction, PredictionFileError, read_predictions
from taxpraben.tasks import Registry

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
    print_summary(scored.results, [p for p in paths if p.exists()], console)
    return scored


def settings_from_options(console: Console, *, no_semantic: bool, **options: Any) -> ScoringSettings:
    """ScoringSettings from the CLI's scoring options (keyword names as in ScoringSettings)."""
    from taxpraben.scoring import ScoringSettings

    try:
        return ScoringSettings(semantic=not no_semantic, progress=True, **options)
    except ValueError as exc:
        console.print(str(exc), style="red", markup=False)
        raise typer.Exit(2) from exc


def score(
    data: DataOpt,
    predictions: Annotated[
        Path, typer.Option("--predictions", "-p", help="Predictions file (JSON Lines, one per task/id/run).")
    ],
    out: OutOpt = None,
    tasks: TasksOpt = None,
    limit: LimitOpt = None,
    task_dir: TaskDirOpt = None,
    runs: Annotated[
        int | None,
        typer.Option("--runs", min=1, help="Expected runs 0..N-1 (default: the runs present in the file)."),
    ] = None,
    profile: ProfileOpt = "taxpraben",
    bertscore_model: BertModelOpt = DEFAULT_BERTSCORE_MODEL,
    bertscore_layer: BertLayerOpt = DEFAULT_BERTSCORE_LAYER,
    bertscore_max_tokens: BertMaxTokensOpt = None,
    bertscore_idf: BertIdfOpt = False,
    bertscore_batch_size: BertBatchOpt = 32,
    bartscore_model: BartModelOpt = DEFAULT_BARTSCORE_MODEL,
    bartscore_weights: BartWeightsOpt = None,
    device: DeviceOpt = "auto",
    scorer_dtype: ScorerDtypeOpt = "float32",
    no_semantic: NoSemanticOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Score existing generations; writes results.json, samples.jsonl and the reports."""
    console = Console()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    registry = registry_or_exit(task_dir, console)
    settings = settings_from_options(
        console, no_semantic=no_semantic, profile=profile, bertscore_model=bertscore_model,
        bertscore_layer=bertscore_layer, bertscore_max_tokens=bertscore_max_tokens,
        bertscore_idf=bertscore_idf, bertscore_batch_size=bertscore_batch_size,
        bartscore_model=bartscore_model, bartscore_weights=bartscore_weights, device=device,
        scorer_dtype=scorer_dtype, seed=seed, runs=runs,
    )  # fmt: skip
    loaded = load_data_or_exit(data, registry, tasks, limit, console)
    try:
        preds = list(read_predictions(predictions))
    except (OSError, PredictionFileError) as exc:
        console.print(f"cannot read predictions: {exc}", style="red", markup=False)
        raise typer.Exit(1) from exc
    models = sorted({p.model for p in preds if p.model})
    meta = {
        "model": models[0] if len(models) == 1 else (models or None),
        "predictions_file": str(predictions),
        "started_at": started,
    }
    out_dir = out or predictions.parent / "scored"
    score_and_report(loaded, preds, registry, out_dir, settings, meta, console)
