"""``report.load.reported``: the figures of a scorer that never loaded are null in every task,
field and run, as a deep copy changed in place would have them, and the input is unchanged."""

from __future__ import annotations

import json
import random

from taxpraben.data.loader import load_data
from taxpraben.report.load import _null_stat, reported, uncomputed_metrics
from taxpraben.results import Results
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import ScoringSettings, score_predictions
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)


def plainly_reported(results: Results) -> Results:
    """The definition: a deep copy, every absent figure set to null in place."""
    absent = uncomputed_metrics(results)
    results = results.model_copy(deep=True)
    for task in results.tasks.values():
        for key in absent & set(task.metrics):
            task.metrics[key] = _null_stat(task.metrics[key])
        for figures in (task.fields or {}).values():
            metrics = figures.model_extra or {}
            for key in absent & set(metrics):
                metrics[key] = _null_stat(metrics[key])
        for run in task.per_run:
            for key in absent & set(run.metrics or {}):
                run.metrics[key] = None  # type: ignore[index]
    return results


def test_reported_is_the_deep_copy_with_absent_figures_null() -> None:
    sample = load_data("sample", REG)
    rng = random.Random(1)
    preds = [Prediction(task, rec.id, run, rec.answer_text if rng.random() < 0.5 else "不知道")
             for run in range(2) for task, recs in sample.records.items() for rec in recs]  # fmt: skip
    scored = score_predictions(sample, preds, REG, ScoringSettings(semantic=False, bootstrap=20, runs=2))
    results = Results.model_validate(scored.results)
    before = json.dumps(results.to_json(), ensure_ascii=False)
    shown = reported(results)
    assert shown.to_json() == plainly_reported(results).to_json()
    assert json.dumps(results.to_json(), ensure_ascii=False) == before  # the input is unchanged
    nulled = [t for t in shown.tasks.values() if t.fields and any(
        f.model_extra.get("bertscore") is not None and f.model_extra["bertscore"].mean is None
        for f in t.fields.values() if f.model_extra)]  # fmt: skip
    assert nulled, "a field's BERTScore is shown null"
    assert any(run.metrics and "bertscore" in run.metrics and run.metrics["bertscore"] is None
               for t in shown.tasks.values() for run in t.per_run)  # fmt: skip
