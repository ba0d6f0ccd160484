"""The full-size synthetic benchmark (benchmarks/make_synthetic.py) keeps the data contract."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from make_synthetic import SIZES, records, sizes, write_data, write_predictions

from taxpraben.data.loader import load_data, validate_data
from taxpraben.results.predictions import read_predictions
from taxpraben.tasks import load_registry


def test_sizes_are_taxbens_and_total_the_papers_7300() -> None:
    registry = load_registry(use_env=False)
    assert set(SIZES) == set(registry)
    for name, spec in registry.items():
        if spec.paper_size is not None:
            assert SIZES[name] == spec.paper_size
    assert sum(SIZES.values()) == 7300


def test_deterministic_from_the_seed() -> None:
    first = list(records("TaxInspect", 5, seed=3))
    assert first == list(records("TaxInspect", 5, seed=3))
    assert first != list(records("TaxInspect", 5, seed=4))


def test_small_scale_validates_and_follows_the_contract(tmp_path: Path) -> None:
    registry = load_registry(use_env=False)
    counts = write_data(tmp_path, seed=0, scale=0.02)
    assert counts == sizes(0.02)
    _, problems, found = validate_data(tmp_path, registry)
    assert [p for p in problems if p.severity == "error"] == []
    assert found == counts
    loaded = load_data(tmp_path, registry)
    for task, recs in loaded.records.items():
        spec = registry[task]
        # Distinct prompts: the harness sends identical requests once, a peer would not.
        assert len({rec.query for rec in recs}) == len(recs)
        for rec in recs:
            assert 20 <= len(rec.query) <= 2000
            if spec.type == "classification":
                assert rec.choices and rec.answer == rec.choices[rec.gold]  # type: ignore[index]
            elif task == "TaxMCQ":
                assert set(rec.answer) <= set("ABCDE") and len(rec.answer) >= 2
            elif task == "TaxCalc":
                assert isinstance(rec.answer, float)
            elif spec.fields is not None:
                assert [f.name for f in spec.field_rules] == list(rec.answer)


def test_predictions_cover_every_item_and_run(tmp_path: Path) -> None:
    counts = write_data(tmp_path / "data", seed=1, scale=0.01)
    n = write_predictions(tmp_path / "data", tmp_path / "p.jsonl", runs=3, seed=1)
    assert n == 3 * sum(counts.values())
    keys = {p.key for p in read_predictions(tmp_path / "p.jsonl")}
    assert len(keys) == n


@pytest.mark.slow
def test_full_size_writes_7300_valid_records(tmp_path: Path) -> None:
    counts = write_data(tmp_path, seed=0)
    assert sum(counts.values()) == 7300
    _, problems, found = validate_data(tmp_path, load_registry(use_env=False))
    assert not [p for p in problems if p.severity == "error"]
    assert sum(found.values()) == 7300
    lengths = [len(json.loads(line)["query"]) for line in (tmp_path / "TaxSum.jsonl").open(encoding="utf-8")]
    assert 300 < sum(lengths) / len(lengths) < 1200  # news articles, not one-liners
