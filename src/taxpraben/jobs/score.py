"""The ``score`` job: score existing generations (the predictions contract) against the data."""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from taxpraben.config import CONFIG_FILE, job_groups, write_config_file
from taxpraben.data.loader import LoadedData
from taxpraben.jobs.common import (
    JobError,
    ScoringJob,
    output_directory,
    read_data,
    say,
)
from taxpraben.jobs.gates import apply_gates
from taxpraben.jobs.rescore import open_scoring_job, priced, score_and_log, scoring_of
from taxpraben.manifest import job_manifest
from taxpraben.options import (
    ScoreInputOptions,
)
from taxpraben.results.harness_files import located_predictions
from taxpraben.results.predictions import (
    Prediction,
    PredictionFileError,
    expected_runs,
)
from taxpraben.tasks import Registry
from taxpraben.tasks.registry import closest_task_name

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject


@dataclass(frozen=True)
class ScoreJob(ScoringJob[ScoreInputOptions]):
    """Everything ``score`` was asked: one option group each."""


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


_GLOB = re.compile(r"[*?\[]")


def prediction_files(given: Sequence[Path]) -> list[Path]:
    """The files ``--predictions`` names, each once, in order: a path as given, a glob
    expanded (sorted); JobError (exit 1) when a glob matches nothing."""
    files: list[Path] = []
    for path in given:
        if not path.exists() and _GLOB.search(str(path)):
            matched = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
            if not matched:
                raise JobError(f"no predictions file matches {path}")
            files.extend(matched)
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def tasks_held(preds: Sequence[Prediction], registry: Registry, console: Console) -> list[str] | None:
    """The tasks the predictions hold, when they hold some but not all: a file for one task
    scores that task, not the other thirteen as missing (and says so)."""
    held = [name for name in registry if any(p.task == name for p in preds)]
    if not held or len(held) == len(registry):
        return None
    say(console, f"scoring {', '.join(held)}: the predictions hold no other task (pass --tasks to score "
                 "others as missing)")  # fmt: skip
    return held


Located = list[tuple[str, Prediction]]


def read_prediction_files(files: Sequence[Path]) -> Located:
    """The predictions of the files, each with where it was read ("file:line"): the contract's
    lines, or another harness's samples of TaxPraBen tasks (an Inspect AI log, an lm-eval
    samples file: :mod:`taxpraben.results.harness_files`)."""
    try:
        return [located for path in files for located in located_predictions(path)]
    except (OSError, PredictionFileError) as exc:
        raise JobError(f"cannot read predictions: {exc}") from exc


def read_batch_output_files(files: Sequence[Path]) -> Located:
    """The predictions of batch output and error files (``--batch-output``: custom_id ->
    task, id, run; see ``models.batch``), each with where it was read."""
    if not files:
        return []
    from taxpraben.run.batch_api import BatchFileError, located_batch_predictions

    try:
        return [located for path in files for located in located_batch_predictions(path)]
    except (OSError, BatchFileError) as exc:
        raise JobError(f"cannot read the batch output: {exc}") from exc


def runs_of(located: Located, given: int | None, console: Console) -> int:
    """The runs scored (``predictions.expected_runs``): ``--runs``, every run checked against
    it, else the file's own, said; JobError (exit 1) naming the line of a run outside them."""
    try:
        runs = expected_runs(located, given)
    except PredictionFileError as exc:
        raise JobError(f"cannot score the predictions: {exc}") from exc
    if given is None:
        span = "run 0" if runs == 1 else f"runs 0..{runs - 1}"
        say(console, f"runs: {runs} ({span}), as the predictions hold; --runs N checks them against N")
    return runs


def score_job(job: ScoreJob, console: Console) -> Path:
    """Read the predictions, match them to the data, score into the output directory (returned)."""
    if not job.inputs.predictions and not job.inputs.batch_output:
        raise JobError("nothing to score: give --predictions FILE or --batch-output FILE (or both)", code=2)
    opened = open_scoring_job(job)
    registry, started = opened.registry, opened.started
    scoring = scoring_of(job, registry, seed=job.inputs.seed, runs=job.inputs.runs, console=console)
    batch_files = prediction_files(job.inputs.batch_output or [])
    files = prediction_files(job.inputs.predictions or [])
    located = read_prediction_files(files) + read_batch_output_files(batch_files)
    preds = [p for _, p in located]
    files += batch_files
    scoring = replace(scoring, settings=replace(scoring.settings, runs=runs_of(located, job.inputs.runs, console)))
    del located  # where each line was read: 36.5K tuples and texts, not needed past here
    tasks = tasks_held(preds, registry, console) if job.data.tasks is None else None
    loaded = read_data(job.data, registry, console, tasks)
    source = files[0] if len(files) == 1 else Path(", ".join(str(f) for f in files))
    problems = unmatched_problems(loaded, preds, registry, source)
    if problems:
        raise JobError(*problems)
    models = sorted({p.model for p in preds if p.model})
    meta: JSONObject = {
        "model": models[0] if len(models) == 1 else (models or None),
        "predictions_file": str(files[0]) if len(files) == 1 else [str(f) for f in files],
        "started_at": started,
    }
    cost_of = priced(job, meta, console)
    meta["manifest"] = job_manifest(loaded=loaded, registry=registry, scoring=job.scoring, started_at=started)
    out_dir = job.inputs.out or files[0].parent / "scored"
    with output_directory(out_dir):
        try:  # the options with their effective values: `score --config OUT/config.yaml` replays it
            write_config_file(out_dir, "score", job_groups(replace(job, inputs=replace(job.inputs, out=out_dir))))
        except OSError as exc:
            raise JobError(f"cannot write {out_dir / CONFIG_FILE}: {exc}", code=2) from exc
        scored = score_and_log(job, "score", scoring, opened, loaded, preds, out_dir, meta, console, cost_of)
    apply_gates(job.gates, scored, console)
    return out_dir
