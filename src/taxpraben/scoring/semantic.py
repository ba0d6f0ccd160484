"""Building the semantic scorers a scoring job needs, and recording why one is unavailable.

The scorer objects own their models (metrics.bertscore, metrics.bartscore); this module only
decides which ones to build from the settings and turns "cannot load the model" into a metric
that is "not computed", with the reason, instead of a crash or an invented number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from taxpraben.scoring.settings import ScoringSettings

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject


class _PRF(Protocol):
    @property
    def f1(self) -> float: ...


class BertLike(Protocol):
    def score(self, candidates: list[str], references: list[str]) -> Sequence[_PRF]: ...
    def describe(self) -> JSONObject: ...


class BartLike(Protocol):
    def score(self, sources: list[str], targets: list[str]) -> list[float]: ...
    def describe(self) -> JSONObject: ...


@dataclass
class SemanticScorers:
    """The scorers of one job; ``unavailable`` maps a metric to why it is not computed."""

    bert: BertLike | None = None
    bart: BartLike | None = None
    unavailable: dict[str, str] = field(default_factory=dict)
    config: dict[str, JSONObject] = field(default_factory=dict)

    def describe(self) -> dict[str, JSONObject]:
        out: dict[str, JSONObject] = {}
        for metric, scorer in (("bertscore", self.bert), ("bartscore", self.bart)):
            info = dict(self.config.get(metric, {}))
            if scorer is not None:
                info.update(scorer.describe())
            info["available"] = scorer is not None
            info["reason"] = self.unavailable.get(metric)
            out[metric] = info
        return out


def build_scorers(settings: ScoringSettings, needed: set[str]) -> SemanticScorers:
    """Load the scorers in ``needed`` ({"bertscore", "bartscore"}) as the settings say
    (with --no-semantic, none of the scorers' modules is imported: 10-15 ms of a run's tail)."""
    scorers = SemanticScorers(
        config={
            "bertscore": {
                "model": settings.bertscore_model,
                "layer": settings.bertscore_layer,
                "idf": settings.bertscore_idf,
                "max_tokens": settings.bertscore_max_tokens,
                "dtype": settings.scorer_dtype,
            },
            "bartscore": {
                "model": settings.bartscore_model,
                "weights": str(settings.bartscore_weights) if settings.bartscore_weights else None,
                "max_length": 1024,
                "dtype": settings.scorer_dtype,
            },
        }
    )
    for metric in sorted(needed):
        if not settings.semantic:
            scorers.unavailable[metric] = "semantic metrics turned off (--no-semantic)"
            continue
        from taxpraben.compute.devices import DeviceError
        from taxpraben.metrics.bartscore import BartScorer
        from taxpraben.metrics.bertscore import BertScorer
        from taxpraben.metrics.scorer_models import ScorerUnavailable

        try:
            if metric == "bertscore":
                scorers.bert = BertScorer(
                    settings.bertscore_model,
                    settings.bertscore_layer,
                    idf=settings.bertscore_idf,
                    batch_size=settings.bertscore_batch_size,
                    device=settings.device,
                    max_tokens=settings.bertscore_max_tokens,
                    progress=settings.progress,
                    dtype=settings.scorer_dtype,
                )
            else:
                scorers.bart = BartScorer(
                    settings.bartscore_model,
                    weights=str(settings.bartscore_weights) if settings.bartscore_weights else None,
                    batch_size=settings.bartscore_batch_size,
                    device=settings.device,
                    progress=settings.progress,
                    dtype=settings.scorer_dtype,
                )
        except (ScorerUnavailable, DeviceError) as exc:
            # A --device this machine lacks is reported like a missing model: the metric is
            # not computed, with the reason in meta.scorers, and the rest of the job is kept.
            scorers.unavailable[metric] = str(exc)
    return scorers
