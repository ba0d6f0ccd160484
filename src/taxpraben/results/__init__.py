"""Typed output files: ``results.json``, one ``samples.jsonl`` line, one ``predictions.jsonl`` line.

These pydantic models are the one description of the files other tools read (the README,
"Evaluate a model"): the scoring pipeline validates through them before writing, the report reader
and the leaderboard read through them, and ``docs/results-schema.md`` is generated from them
(``python -m taxpraben.results --markdown > docs/results-schema.md``).

One module per file or part of one: ``results_json`` (results.json whole), ``figures`` and
``meta`` (its parts), ``samples`` (a sample: a samples.jsonl line), ``predictions`` (a predictions.jsonl line
and its files), on the base of ``file_object``; ``schema_doc`` writes the schema page (imported on its own:
``taxpraben.results.schema_doc.schema_markdown``).

Two promises hold for every model here:

- lenient reading: every file this code has ever written validates (older files lack some
  keys, which then take their defaults); keys a model does not declare are kept
  (``extra="allow"``): metric names are open (a task kind declares its own), and plugins or
  newer writers may add facts;
- faithful writing: ``to_json()`` gives back exactly the keys that were given, in the order
  they were given, with the same values, so writing through a model changes no byte of
  meaning of what the pipeline built.
"""

from __future__ import annotations

from taxpraben.results.figures import (
    FieldFigures,
    Groups,
    JudgeAudit,
    JudgeMeta,
    JudgeTask,
    Ledger,
    OverallStat,
    Review,
    ReviewDraw,
    ReviewFigure,
    RunCounts,
    RunFigures,
    Stat,
    TaskResult,
    TokenTally,
)
from taxpraben.results.file_object import (
    SCHEMA_VERSION,
    FileObject,
    Number,
)
from taxpraben.results.meta import (
    Counts,
    EndpointFigures,
    GenerationMeta,
    GenerationStats,
    Manifest,
    ManifestFile,
    ManifestScorer,
    ManifestSpec,
    ManifestVersion,
    MergedFrom,
    Meta,
    ScorerInfo,
    ShardInfo,
    ShardRef,
)
from taxpraben.results.predictions import (
    Prediction,
    PredictionFileError,
    expected_runs,
    prediction_from_json,
    read_located_predictions,
    read_predictions,
    write_predictions,
)
from taxpraben.results.results_json import (
    Results,
)
from taxpraben.results.samples import (
    FieldScore,
    JudgeEdit,
    Sample,
)

__all__ = [
    "SCHEMA_VERSION",
    "Counts",
    "EndpointFigures",
    "FieldFigures",
    "FieldScore",
    "FileObject",
    "GenerationMeta",
    "GenerationStats",
    "Groups",
    "JudgeAudit",
    "JudgeEdit",
    "JudgeMeta",
    "JudgeTask",
    "Ledger",
    "Manifest",
    "ManifestFile",
    "ManifestScorer",
    "ManifestSpec",
    "ManifestVersion",
    "MergedFrom",
    "Meta",
    "Number",
    "OverallStat",
    "Prediction",
    "PredictionFileError",
    "Results",
    "Review",
    "ReviewDraw",
    "ReviewFigure",
    "RunCounts",
    "RunFigures",
    "Sample",
    "ScorerInfo",
    "ShardInfo",
    "ShardRef",
    "Stat",
    "TaskResult",
    "TokenTally",
    "expected_runs",
    "prediction_from_json",
    "read_located_predictions",
    "read_predictions",
    "write_predictions",
]
