"""Scoring: from predictions and records to results.json and samples.jsonl."""

from taxpraben.scoring.pipeline import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
    PredictionMatchError,
    ScoredResults,
    ScoringSettings,
    score_predictions,
    score_to_dir,
    write_results,
)
from taxpraben.scoring.semantic import SemanticScorers, build_scorers

__all__ = [
    "DEFAULT_BARTSCORE_MODEL",
    "DEFAULT_BERTSCORE_LAYER",
    "DEFAULT_BERTSCORE_MODEL",
    "PredictionMatchError",
    "ScoredResults",
    "ScoringSettings",
    "SemanticScorers",
    "build_scorers",
    "score_predictions",
    "score_to_dir",
    "write_results",
]
