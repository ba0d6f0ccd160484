"""The semantic scorers on a batch of text pairs, their models loaded once per process.

``bertscore([(prediction, gold), ...])`` gives each pair's BERTScore F1 and
``bartscore(...)`` each pair's raw BARTScore (the mean token log-likelihood of the gold given
the prediction, a negative number), with the protocol's models and settings (README, "Scorer
models"; the same environment variables as the command line). A scorer is built the first time
it is asked for with given settings and kept for the process; a model that cannot be loaded
raises :class:`~taxpraben.metrics.scorer_models.ScorerUnavailable` saying how to get it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

from taxpraben.metrics.defaults import (
    ENV_BARTSCORE_MODEL,
    ENV_BARTSCORE_WEIGHTS,
    ENV_BERTSCORE_LAYER,
    ENV_BERTSCORE_MODEL,
)
from taxpraben.scoring.semantic import BartLike, BertLike, build_scorers
from taxpraben.scoring.settings import ScoringSettings

#: A (prediction, gold) text pair.
Pair = tuple[str, str]


def scorer_settings(
    *,
    bertscore_model: str | None = None,
    bertscore_layer: int | None = None,
    bartscore_model: str | None = None,
    bartscore_weights: str | None = None,
    device: str = "auto",
    scorer_dtype: str = "float32",
) -> ScoringSettings:
    """The scoring settings of the scorers: each model given, else its environment variable,
    else the protocol's default."""
    base = ScoringSettings(device=device, scorer_dtype=scorer_dtype, bootstrap=0)
    layer = bertscore_layer if bertscore_layer is not None else os.environ.get(ENV_BERTSCORE_LAYER)
    return replace(
        base,
        bertscore_model=bertscore_model or os.environ.get(ENV_BERTSCORE_MODEL) or base.bertscore_model,
        bertscore_layer=int(layer) if layer is not None else base.bertscore_layer,
        bartscore_model=bartscore_model or os.environ.get(ENV_BARTSCORE_MODEL) or base.bartscore_model,
        bartscore_weights=bartscore_weights or os.environ.get(ENV_BARTSCORE_WEIGHTS) or None,
    )


def _unavailable(metric: str, reason: str) -> Exception:
    from taxpraben.metrics.scorer_models import ScorerUnavailable

    return ScorerUnavailable(f"{metric}: {reason}")


#: The scorers built in this process, by metric and settings.
_BUILT: dict[tuple[object, ...], BertLike | BartLike] = {}


def _key(metric: str, settings: ScoringSettings) -> tuple[object, ...]:
    return (metric, *dataclasses.astuple(settings))


def _scorer(metric: str, settings: ScoringSettings) -> BertLike | BartLike:
    """The ``metric`` scorer ("bertscore" or "bartscore") of ``settings``, built once per process."""
    key = _key(metric, settings)
    if key not in _BUILT:
        built = build_scorers(settings, {metric})
        scorer = built.bert if metric == "bertscore" else built.bart
        if scorer is None:
            raise _unavailable(metric, built.unavailable.get(metric, "not available"))
        _BUILT[key] = scorer
    return _BUILT[key]


def bert_scorer(settings: ScoringSettings) -> BertLike:
    """The BERTScore scorer of ``settings``, built once per process."""
    return cast("BertLike", _scorer("bertscore", settings))


def bart_scorer(settings: ScoringSettings) -> BartLike:
    """The BARTScore scorer of ``settings``, built once per process."""
    return cast("BartLike", _scorer("bartscore", settings))


def bertscore(pairs: Sequence[Pair], settings: ScoringSettings | None = None) -> list[float]:
    """BERTScore F1 of each (prediction, gold) pair, in one batch (distinct pairs scored once)."""
    if not pairs:
        return []
    keys = list(dict.fromkeys(pairs))
    scored = bert_scorer(settings or scorer_settings()).score([k[0] for k in keys], [k[1] for k in keys])
    by_key = {k: float(s.f1) for k, s in zip(keys, scored, strict=True)}
    return [by_key[p] for p in pairs]


def bartscore(pairs: Sequence[Pair], settings: ScoringSettings | None = None) -> list[float]:
    """Raw BARTScore of each (prediction, gold) pair (source = prediction, target = gold), in one batch."""
    if not pairs:
        return []
    keys = list(dict.fromkeys(pairs))
    scored = bart_scorer(settings or scorer_settings()).score([k[0] for k in keys], [k[1] for k in keys])
    by_key = {k: float(s) for k, s in zip(keys, scored, strict=True)}
    return [by_key[p] for p in pairs]
