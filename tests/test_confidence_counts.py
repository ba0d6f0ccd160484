"""results.json says, per task, how many readings are low-confidence (issue 44, item 4): the
judge's and the reviewer's load, visible before either starts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "taxpraben"


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typer.testing import CliRunner

    from taxpraben.cli import app

    out = tmp_path_factory.mktemp("oracle")
    result = CliRunner().invoke(app, ["run", "--model", "baseline:first-choice", "--data", str(SRC / "data" / "sample"),
                                      "--runs", "2", "--out", str(out), "--no-semantic"])
    assert result.exit_code in (0, 3, 4), result.output
    return out


def test_confidence_counts_are_the_samples_counts(oracle_run: Path) -> None:
    lines = [json.loads(x) for x in (oracle_run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    results = json.loads((oracle_run / "results.json").read_text(encoding="utf-8"))
    seen = 0
    for task, entry in results["tasks"].items():
        counted = Counter(x["confidence"] for x in lines if x["task"] == task and x["confidence"] is not None)
        if not counted:
            assert "confidence" not in entry
            continue
        seen += 1
        assert entry["confidence"] == {"high": counted["high"], "low": counted["low"]}
        # every reading made by a rule has a confidence; format failures have none
        assert sum(entry["confidence"].values()) == sum(
            1 for x in lines if x["task"] == task and x["status"] == "ok" and (x["read_by"] or "").startswith("rule:"))
    assert seen >= 3
