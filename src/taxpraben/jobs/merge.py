"""The ``merge`` job: combine the predictions of sharded runs (``run --shard I/N``) and score them.

Each source is a shard's output directory (its ``predictions.jsonl`` and ``shard.json``) or a
predictions file. The merge refuses, with a compact list: the same (task, id, run) predicted
differently by two sources (an overlap), items of the data and runs that no source predicts
(a gap), and shards that are missing, given twice or from another run (by their manifests).
``--force`` scores anyway: the gaps score 0 as errors and the manifests' differences are only
printed; an overlap is always refused, since no rule can tell which prediction is right.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from taxpraben.data.loader import LoadedData
from taxpraben.jobs.common import (
    JobError,
    ScoringJob,
    in_data_order,
    output_directory,
    read_data,
    say,
    warn,
    write_predictions_file,
)
from taxpraben.jobs.gates import apply_gates
from taxpraben.jobs.rescore import open_scoring_job, priced, score_and_log, scoring_of
from taxpraben.manifest import job_manifest
from taxpraben.options import (
    MergeInputOptions,
)
from taxpraben.results.predictions import Prediction, PredictionFileError, read_predictions
from taxpraben.run.shards import (
    SHARD_MANIFEST,
    MergeResult,
    describe_gaps,
    describe_overlaps,
    manifest_problems,
    merge_predictions,
    read_manifest,
)

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject


@dataclass(frozen=True)
class MergeJob(ScoringJob[MergeInputOptions]):
    """Everything ``merge`` was asked: one option group each."""


def source_files(source: Path) -> tuple[Path, Path]:
    """(predictions file, manifest path) of a shard directory or a predictions file."""
    if source.is_dir():
        return source / "predictions.jsonl", source / SHARD_MANIFEST
    return source, source.parent / SHARD_MANIFEST


def selection_problems(manifests: dict[str, JSONObject], loaded: LoadedData) -> list[str]:
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


def read_sources(sources: list[Path]) -> tuple[list[tuple[str, list[Prediction]]], dict[str, JSONObject]]:
    """Each source's predictions, and the manifests of those that have one."""
    read: list[tuple[str, list[Prediction]]] = []
    manifests: dict[str, JSONObject] = {}
    for source in sources:
        predictions_path, manifest_path = source_files(source)
        try:
            read.append((str(source), list(read_predictions(predictions_path))))
            manifest = read_manifest(manifest_path)
        except (OSError, PredictionFileError, ValueError) as exc:
            raise JobError(f"cannot read {source}: {exc}") from exc
        if manifest is not None:
            manifests[str(source)] = manifest
    return read, manifests


def expected_runs(given: int | None, read: list[tuple[str, list[Prediction]]], manifests: dict[str, JSONObject]) -> int:
    """--runs, else the manifests' runs, else the highest run present + 1."""
    if given is not None:
        return given
    declared: set[int] = {m["runs"] for m in manifests.values() if m.get("runs") is not None}
    present = max((p.run for _, ps in read for p in ps), default=0) + 1
    return max(declared) if declared else present


def merge_problems(
    merged: MergeResult, manifests: dict[str, JSONObject], loaded: LoadedData, runs: int, force: bool
) -> list[str]:
    """What is wrong with the merge (JobError when it cannot be scored; with --force, the
    problems that are only shown)."""
    expected = {task: [r.id for r in records] for task, records in loaded.records.items()}
    problems = manifest_problems(manifests) + selection_problems(manifests, loaded)
    if merged.gaps:
        total = sum(len(ids) for ids in expected.values()) * runs
        problems += [
            f"{len(merged.gaps)} of {total} items (data x {runs} run(s)) have no prediction in any source:",
            *describe_gaps(merged.gaps, expected),
        ]
    if merged.overlaps:  # refused even with --force: no rule can tell which one is right
        raise JobError(
            f"{len(merged.overlaps)} item(s) predicted differently by several sources "
            "(task/id/run: sources); keep one shard's output per item:",
            *describe_overlaps(merged.overlaps), *problems, "Nothing was merged.",
        )  # fmt: skip
    if problems and not force:
        raise JobError(*problems, "Nothing was merged. Rerun the shards that are missing or incomplete (the "
                       "same command resumes from its cache), or --force to score the gaps as errors.")  # fmt: skip
    return problems


def merge_meta(
    job: MergeJob, predictions: list[Prediction], manifests: dict[str, JSONObject], runs: int,
    merged: MergeResult, problems: list[str], started: str,
) -> JSONObject:  # fmt: skip
    """What results.json's ``meta`` says of the merged run."""
    first = next(iter(manifests.values()), {})
    models = sorted({p.model for p in predictions if p.model})
    meta: JSONObject = {
        "model": first.get("model") or (models[0] if len(models) == 1 else (models or None)),
        "endpoint": first.get("endpoint"),
        "generation": first.get("generation"),
        "runs": runs,
        "started_at": started,
        "merged_from": {
            "sources": [str(s) for s in job.inputs.sources],
            "shards": sorted((m["shard"] for m in manifests.values()), key=lambda s: s.get("index", 0)),
            "gaps": len(merged.gaps),
            "forced": job.inputs.force and bool(merged.gaps or problems),
        },
    }
    return {k: v for k, v in meta.items() if v is not None}


def merge_job(job: MergeJob, console: Console) -> None:
    """Merge the sources' predictions (refusing overlaps and gaps), then score the whole."""
    opened = open_scoring_job(job)
    registry, started = opened.registry, opened.started
    read, manifests = read_sources(job.inputs.sources)
    runs = expected_runs(job.inputs.runs, read, manifests)
    scoring = scoring_of(job, registry, seed=job.inputs.seed, runs=runs, console=console)
    loaded = read_data(job.data, registry, console)
    expected = {task: [r.id for r in records] for task, records in loaded.records.items()}
    merged = merge_predictions(read, expected, range(runs))
    problems = merge_problems(merged, manifests, loaded, runs, job.inputs.force)
    for line in problems:
        warn(console, line)
    if merged.repeated:
        warn(console, f"{merged.repeated} prediction(s) given identically by more than one source: kept once.")
    predictions = in_data_order(merged.predictions, loaded)
    meta = merge_meta(job, predictions, manifests, runs, merged, problems, started)
    cost_of = priced(job, meta, console)
    meta["manifest"] = job_manifest(loaded=loaded, registry=registry, scoring=job.scoring, started_at=started,
                                    generation=meta.get("generation"), model_args=meta.get("model_args"))  # fmt: skip
    out = job.inputs.out
    with output_directory(out):
        path = write_predictions_file(out, predictions)
        say(console, f"{len(predictions)} predictions merged from {len(job.inputs.sources)} source(s) -> {path}")
        scored = score_and_log(job, "merge", scoring, opened, loaded, predictions, out, meta, console, cost_of)
    apply_gates(job.gates, scored, console)
