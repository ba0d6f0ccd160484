"""The oracle (the gold replayed) scores 1.0 on every exact and classification metric of the
synthetic benchmark (benchmarks/make_synthetic.py), fields included."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from make_synthetic import write_data

from taxpraben.data.loader import load_data
from taxpraben.models.baselines import oracle
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import ScoringSettings, score_predictions
from taxpraben.tasks import load_registry

EXACT_METRICS = {"acc", "f1", "macro_f1", "em"}


def test_oracle_is_one_on_every_exact_metric_and_field(tmp_path: Path) -> None:
    registry = load_registry(use_env=False)
    write_data(tmp_path, seed=0, scale=0.05)
    loaded = load_data(tmp_path, registry)
    rng = random.Random(0)
    preds = [
        Prediction(task, rec.id, 0, oracle(rec, registry[task], rng))
        for task, recs in loaded.records.items()
        for rec in recs
    ]
    results = score_predictions(loaded, preds, registry, ScoringSettings(semantic=False, bootstrap=0)).results
    checked = 0
    for task, entry in results["tasks"].items():
        assert entry["format_failure_rate"]["mean"] == 0.0, task
        for key, stat in entry["metrics"].items():
            if key in EXACT_METRICS:
                assert stat["mean"] == 1.0, (task, key)
                checked += 1
        for name, figures in (entry.get("fields") or {}).items():
            if figures["kind"] != "text":
                assert figures["em"]["mean"] == 1.0, (task, name)
                checked += 1
            assert figures["format_failure_rate"]["mean"] == 0.0, (task, name)
    assert checked >= 20


CHOICE_LABEL_NUMBER = ("TaxTopic", "TaxSCQ", "TaxCrime", "TaxMCQ", "TaxCalc")


def _echo_results(data_dir: Path) -> dict:
    from taxpraben.models.baselines import echo

    registry = load_registry(use_env=False)
    loaded = load_data(data_dir, registry, tasks=list(CHOICE_LABEL_NUMBER))
    rng = random.Random(0)
    preds = [
        Prediction(task, rec.id, 0, echo(rec, registry[task], rng))
        for task, recs in loaded.records.items()
        for rec in recs
    ]
    return score_predictions(loaded, preds, registry, ScoringSettings(semantic=False, bootstrap=0)).results


def _assert_echo_scores_nothing(results: dict) -> None:
    for task in CHOICE_LABEL_NUMBER:
        entry = results["tasks"][task]
        assert entry["format_failure_rate"]["mean"] == 1.0, task
        assert entry["format_failures"] == {"copy of the prompt": entry["n"]}, (task, entry["format_failures"])
        for key, stat in entry["metrics"].items():
            if key in EXACT_METRICS:
                assert stat["mean"] == 0.0, (task, key)


def test_echo_scores_nothing_on_the_sample() -> None:
    """baseline:echo (the query as the answer) is a copy of the prompt for every item."""
    _assert_echo_scores_nothing(_echo_results(Path(__file__).resolve().parents[1] / "src" / "taxpraben" / "data" / "sample"))


def test_echo_scores_nothing_on_the_synthetic_benchmark(tmp_path: Path) -> None:
    write_data(tmp_path, seed=0, scale=0.05)
    _assert_echo_scores_nothing(_echo_results(tmp_path))
