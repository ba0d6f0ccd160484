"""Where results go and where they come from: the output directory of a run, the inputs of
``score`` and ``merge``, the gates on the results, and the trackers a run is logged to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taxpraben.options.checks import (
    check_shard,
    check_threshold,
    check_trackers,
    parse_threshold,
    parse_trackers,
)
from taxpraben.options.declare import (
    DATA_PANEL,
    OUTPUT_PANEL,
    SCORING_PANEL,
    declare,
)


@dataclass(frozen=True, kw_only=True)
class RunOutputOptions:
    """Where ``run`` writes, what it keeps, and what ends it with an error."""

    out: Path | None = declare(
        None, flag="--out", short="-o", help="Output directory (default: runs/MODEL-YYYYMMDD-HHMMSS, MODEL the "
        "--model spec made a file name).", panel=OUTPUT_PANEL,
    )  # fmt: skip
    shard: str = declare(
        "0/1",
        flag="--shard", brief="Run only shard I of N (e.g. 2/3); merge with `taxpraben merge`.",
        envvar="TAXPRABEN_SHARD",
        check=check_shard,
        help="Run only shard I of N (0-based, e.g. 2/3): a deterministic, balanced share of the records, "
        "every run of each; merge the shards with `taxpraben merge`.",
        panel=DATA_PANEL,
    )
    no_score: bool = declare(
        False, flag="--no-score", brief="Write predictions.jsonl only (score later).",
        help="Write predictions.jsonl only (for a shard: score later with `taxpraben merge`).", panel=SCORING_PANEL,
    )  # fmt: skip
    cache: Path | None = declare(
        None, flag="--cache", envvar="TAXPRABEN_CACHE",
        help="Completion cache (default ~/.cache/taxpraben/completions.sqlite).", panel=OUTPUT_PANEL,
    )  # fmt: skip
    no_cache: bool = declare(
        False, flag="--no-cache", help="Neither read nor write the completion cache.", panel=OUTPUT_PANEL
    )
    allow_failures: bool = declare(
        False, flag="--allow-failures", help="Exit 0 even if some items failed after all retries.",
        panel=OUTPUT_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class ScoreInputOptions:
    """What ``score`` reads besides the data, and where it writes."""

    predictions: list[Path] | None = declare(
        None,
        flag="--predictions", brief="Predictions file(s) (JSON Lines); repeatable, globs accepted.",
        short="-p",
        help="Predictions file (JSON Lines, one per task/id/run); repeat the option, or give a glob "
        "('runs/*/predictions.jsonl'), to read several. Only the tasks they hold are scored unless --tasks "
        "says otherwise.",
        panel=DATA_PANEL,
    )
    batch_output: list[Path] | None = declare(
        None,
        flag="--batch-output", brief="Output file(s) of a batch job, read as predictions.",
        help="Output (or error) file of a batch job on the file of `run --batch-file-only` (OpenAI batch "
        "format, e.g. from vLLM's run_batch); repeatable, globs accepted; read as predictions, alone or "
        "beside --predictions.",
        panel=DATA_PANEL,
    )
    runs: int | None = declare(
        None, flag="--runs", min=1, help="Expected runs 0..N-1 (default: the runs present in the file).",
        panel=DATA_PANEL,
    )  # fmt: skip
    seed: int = declare(0, flag="--seed", help="Seed for bootstrap intervals.", panel=SCORING_PANEL)
    out: Path | None = declare(
        None, flag="--out", short="-o", help="Output directory (default: 'scored' beside the first predictions file).",
        panel=OUTPUT_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class MergeInputOptions:
    """What ``merge`` combines, how strictly, and where it writes."""

    sources: list[Path] = declare(
        flag="SOURCES",
        argument=True,
        help="Shard output directories (predictions.jsonl + shard.json) or predictions files.",
        panel=DATA_PANEL,
    )
    runs: int | None = declare(
        None, flag="--runs", min=1,
        help="Runs 0..N-1 every item must have (default: the shards' manifests, else the highest run present + 1).",
        panel=DATA_PANEL,
    )  # fmt: skip
    force: bool = declare(
        False, flag="--force", brief="Score despite gaps and manifest differences.",
        help="Score despite gaps (they score 0 as errors) and manifest differences; overlaps are always refused.",
        panel=DATA_PANEL,
    )  # fmt: skip
    seed: int = declare(0, flag="--seed", help="Seed for bootstrap intervals.", panel=SCORING_PANEL)
    out: Path = declare(flag="--out", short="-o", help="Output directory of the merged run.", panel=OUTPUT_PANEL)


@dataclass(frozen=True, kw_only=True)
class GateOptions:
    """CI gates of ``run``, ``score`` and ``merge``: after the results and reports are written,
    a figure below its threshold ends the command with exit status 4."""

    fail_under: list[str] | None = declare(
        None,
        flag="--fail-under", brief="CI gate: exit 4 when the Overall (or TASK=X: a task) is below X.",
        check=check_threshold,
        help="CI gate: exit 4 (after writing every file) when the Overall Average is below X, or with "
        "TASK=X when that task's score is; X in the results' 0-1 scale. Repeatable.",
        panel=OUTPUT_PANEL,
    )
    allow_partial: bool = declare(
        False, flag="--allow-partial", brief="Accept partial results (no exit 6; gates not failed by them).", panel=OUTPUT_PANEL,
        help="Accept partial results: without it a task of the benchmark missing or not computed fails every "
        "--fail-under gate (exit 4), and results partial for a reason not chosen (a scorer model that could not "
        "be loaded) end the command with exit 6, after writing every file.",
    )  # fmt: skip

    @property
    def thresholds(self) -> list[tuple[str | None, float]]:
        """Each ``--fail-under`` as (task, X); task None: the Overall Average."""
        return [parse_threshold(text) for text in self.fail_under or []]


@dataclass(frozen=True, kw_only=True)
class RegressionGateOptions:
    """The CI gate of ``diff``: B significantly worse than A."""

    fail_over_regression: float | None = declare(
        None,
        flag="--fail-over-regression", brief="CI gate: exit 5 when B is significantly worse than A by more than X.",
        min=0.0,
        max=1.0,
        help="CI gate: exit 5 when B is worse than A by more than X (0-1 scale) on the Overall Average or "
        "a task score and the paired test is significant at 95%; a task of the benchmark missing or not "
        "computed in A or B fails it too (unless --allow-partial).",
        panel=OUTPUT_PANEL,
    )
    allow_partial: bool = declare(
        False, flag="--allow-partial", brief="Accept partial results (no exit 6; gates not failed by them).", panel=OUTPUT_PANEL,
        help="With --fail-over-regression: accept A or B partial (some task of the benchmark missing or not computed).",
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class TrackerOptions:
    """Experiment trackers of ``run``, ``score`` and ``merge``: once the results and reports are
    written, the options, the manifest, every figure and the report files are logged."""

    log: list[str] | None = declare(
        None,
        flag="--log", brief="Log to a tracker: wandb or mlflow (pip install 'taxpraben[wandb]' / 'taxpraben[mlflow]').",
        check=check_trackers,
        help="Log the run to an experiment tracker: wandb or mlflow (repeatable, or comma-separated): the "
        "options, the manifest, every figure (0-1 scale) and the report files. Needs the extra: "
        "pip install 'taxpraben[wandb]' / 'taxpraben[mlflow]'.",
        panel=OUTPUT_PANEL,
    )
    log_project: str = declare(
        "taxpraben", flag="--log-project",
        help="--log: the W&B project, the MLflow experiment.", panel=OUTPUT_PANEL,
    )  # fmt: skip
    log_uri: str | None = declare(
        None, flag="--log-uri", brief="--log mlflow: the tracking URI.",
        help="--log mlflow: the tracking URI (default $MLFLOW_TRACKING_URI, else the local file store ./mlruns).",
        panel=OUTPUT_PANEL,
    )  # fmt: skip

    @property
    def trackers(self) -> list[str]:
        """The trackers ``--log`` names, each once, in order."""
        return parse_trackers(self.log)
