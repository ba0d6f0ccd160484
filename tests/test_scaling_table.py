"""The issue-14 scale benchmarks: the table's arithmetic, the doc in step with the script, and
the token and cache scripts on a small synthetic benchmark.

Only what does not depend on the machine is asserted: the derivations on simple inputs set
here (not the recorded figures, which change when remeasured), counts, and that the tables
pasted into docs/scaling.md are the ones the script prints.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import cache_writes
import scaling_table
import token_counts
from make_synthetic import write_data, write_predictions
from scaling_table import Figure

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def simple_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Round inputs, so the expected values can be worked out by hand."""
    values = {
        "requests_per_model": 1000, "harness_eff_1": 1.0, "pool_eff": 0.5,
        "harness_ceiling_rps": 100, "first_request_s": 0.0, "gpu_score_s": 100.0,
        "gpu_semantic_s": 80.0, "leaderboard_10_s": 10.0, "leaderboard_100_s": 100.0,
    }  # fmt: skip
    for name, value in values.items():
        monkeypatch.setitem(scaling_table.MEASURED, name, Figure(value, "", "test"))


def test_generation_uses_the_pool_efficiency_and_shards_past_the_process_ceiling(
    simple_inputs: None,
) -> None:
    assert scaling_table.generation_rate(1, 50) == (50.0, 1)  # one endpoint: 1.0 x 50
    assert scaling_table.generation_rate(4, 50) == (
        100.0,
        1,
    )  # a pool: 0.5 x 4 x 50, at the ceiling
    assert scaling_table.generation_rate(16, 50) == (400.0, 4)  # 400 req/s needs 4 processes of 100
    assert scaling_table.generation_seconds(3, 4, 50) == pytest.approx(3 * 1000 / 100)


def test_scoring_divides_only_the_semantic_part_or_runs_models_side_by_side(
    simple_inputs: None,
) -> None:
    split, side_by_side = scaling_table.scoring_seconds(10, 4)
    assert split == pytest.approx(10 * (20 + 80 / 4))
    assert side_by_side == pytest.approx(3 * 100)  # ceil(10 / 4) rounds of one model per GPU
    assert scaling_table.scoring_seconds(1, 1) == (100.0, 100.0)


def test_leaderboard_time_is_on_the_line_through_the_two_measurements(simple_inputs: None) -> None:
    assert scaling_table.leaderboard_seconds(55) == pytest.approx(55.0)
    assert scaling_table.leaderboard_seconds(1) == 0.0


def test_duration_picks_a_readable_unit() -> None:
    assert [scaling_table.duration(s) for s in (59, 600, 3 * 3600, 3 * 86400)] == [
        "59 s",
        "10 min",
        "3.0 h",
        "3.0 days",
    ]
    assert scaling_table.duration(math.nan) == "not measured"


def test_docs_show_the_tables_the_script_prints() -> None:
    printed = scaling_table.render(scaling_table.REPLICA_RPS).splitlines()
    tables = printed[1 : printed.index("Inputs (measured):")]  # without the date line
    guide = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    assert "\n".join(tables).strip() in guide


def test_token_counts_sum_prompts_answers_and_golds(tmp_path: Path) -> None:
    data, predictions = tmp_path / "syn", tmp_path / "p.jsonl"
    counts = write_data(data, scale=0.01)
    answers = write_predictions(data, predictions, runs=2)
    table = token_counts.count(data, predictions, {"double": lambda text: 2 * len(text)})
    assert {task: row["records"] for task, row in table.items()} == counts
    assert sum(row["answers"] for row in table.values()) == answers == 2 * sum(counts.values())
    queries = [
        json.loads(line)["query"]
        for line in (data / "TaxCalc.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert table["TaxCalc"]["prompt_chars"] == sum(map(len, queries))
    assert table["TaxCalc"]["prompt_double"] == 2 * table["TaxCalc"]["prompt_chars"]


def test_cache_writes_stores_and_reads_back_every_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, predictions = tmp_path / "syn", tmp_path / "p.jsonl"
    write_data(data, scale=0.01)
    n = write_predictions(data, predictions, runs=2)
    assert cache_writes.main(["--data", str(data), "--predictions", str(predictions), "--runs", "2",
                              "--batch", "1", "7", "--dir", str(tmp_path)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"{n} requests" in out
    assert (
        out.count("rows/transaction") == 2 and "read back" in out
    )  # read_all raises on a missing row
