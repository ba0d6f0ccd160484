"""Scoring: from predictions and records to results.json and samples.jsonl.

The settings and the scorer builder are light and imported at once; the pipeline (numpy,
the parsers) is imported on first use of one of its names, so that the command line can
build and check :class:`ScoringSettings` without paying for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
    PROFILES,
)
from taxpraben.scoring.semantic import SemanticScorers, build_scorers
from taxpraben.scoring.settings import ScoringSettings

if TYPE_CHECKING:
    from taxpraben.scoring.pipeline import (
        Hooks,
        PredictionMatchError,
        ScoredResults,
        score_predictions,
        score_to_dir,
    )

_FROM_PIPELINE = frozenset(
    {"Hooks", "PredictionMatchError", "ScoredResults", "score_predictions", "score_to_dir"}
)


def __getattr__(name: str) -> object:
    """The pipeline's names, imported on first use (PEP 562)."""
    if name in _FROM_PIPELINE:
        from taxpraben.scoring import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_BARTSCORE_MODEL",
    "DEFAULT_BERTSCORE_LAYER",
    "DEFAULT_BERTSCORE_MODEL",
    "PROFILES",
    "Hooks",
    "PredictionMatchError",
    "ScoredResults",
    "ScoringSettings",
    "SemanticScorers",
    "build_scorers",
    "score_predictions",
    "score_to_dir",
]
