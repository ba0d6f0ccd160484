"""CI gates: --fail-under X / TASK=X on run, score and merge (exit 4 after every file is written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.report_fixtures import build_result_dir
from taxpraben.cli import build_app
from taxpraben.jobs.gates import gate_failures
from taxpraben.options import parse_threshold
from taxpraben.report.load import read_results

SAMPLE_RUN = ["run", "--data", "sample", "--no-semantic", "--runs", "1", "--no-cache"]


def invoke(*args: str) -> tuple[int, str]:
    # Wide, so that messages are not wrapped across the error box's lines (COLUMNS=40 in CI checks)
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("0.99", (None, 0.99)), ("0", (None, 0.0)), ("1", (None, 1.0)), ("TaxCalc=0.8", ("TaxCalc", 0.8)),
     (" TaxCalc = 0.5", ("TaxCalc", 0.5))],
)  # fmt: skip
def test_thresholds_parse(text: str, parsed: tuple[str | None, float]) -> None:
    assert parse_threshold(text) == parsed


@pytest.mark.parametrize(
    ("text", "why"),
    [("1.01", "out of range"), ("TaxCalc=1.01", "out of range"), ("80", "0.8, not 80"), ("-0.1", "out of range"),
     ("TaxCalc=high", "not a number"), ("=0.5", "TASK=X")],
)  # fmt: skip
def test_bad_thresholds_are_refused(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_threshold(text)


def test_gate_failures_name_figure_value_threshold_and_task(tmp_path: Path) -> None:
    out = build_result_dir(tmp_path / "r", items_per_task=4, runs=2, not_computed=("TaxSum",))
    results = read_results(out)
    raw = json.loads((out / "results.json").read_text(encoding="utf-8"))
    overall, calc = raw["overall"]["mean"], raw["tasks"]["TaxCalc"]["score"]["mean"]
    assert gate_failures([(None, overall), ("TaxCalc", calc)], results) == []  # equal passes
    failures = gate_failures([(None, overall + 0.01), ("TaxCalc", calc + 0.01), ("TaxSum", 0.1)], results)
    assert failures == [
        f"Overall Average {overall:.4f} (partial: over the computed tasks only) is below --fail-under {overall + 0.01:g}",
        f"TaxCalc score {calc:.4f} is below --fail-under TaxCalc={calc + 0.01:g}",
        "TaxSum score was not computed, so --fail-under TaxSum=0.1 cannot pass",
    ]
    assert gate_failures([("TaxPlan", 0.1)], read_results(build_result_dir(
        tmp_path / "s", items_per_task=2, runs=2, tasks=("TaxCalc",)))) == [
        "TaxPlan score: TaxPlan was not scored in this run, so --fail-under TaxPlan=0.1 cannot pass"
    ]  # fmt: skip


def test_oracle_passes_the_gate(tmp_path: Path) -> None:
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:oracle", "--out", str(tmp_path / "o"),
                          "--fail-under", "0.99", "--fail-under", "TaxCalc=1")  # fmt: skip
    assert code == 0, output
    assert "Gates passed: 0.99, TaxCalc=1." in output
    assert json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["overall"]["mean"] >= 0.99


def test_out_of_range_threshold_is_refused_when_parsed(tmp_path: Path) -> None:
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:oracle", "--out", str(tmp_path / "o"),
                          "--fail-under", "TaxCalc=1.01")  # fmt: skip
    assert code == 2
    assert "--fail-under" in output and "out of range" in output
    assert not (tmp_path / "o").exists()


def test_unknown_task_is_refused_before_the_run_with_the_nearest_name(tmp_path: Path) -> None:
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:oracle", "--out", str(tmp_path / "o"),
                          "--fail-under", "taxcalk=0.5")  # fmt: skip
    assert code == 2
    assert "unknown task 'taxcalk'; did you mean TaxCalc?" in output
    assert not (tmp_path / "o" / "predictions.jsonl").exists()


def test_first_choice_fails_the_gate_with_exit_4_after_writing_everything(tmp_path: Path) -> None:
    out = tmp_path / "fc"
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:first-choice", "--out", str(out),
                          "--fail-under", "0.99", "--fail-under", "TaxCalc=0.5")  # fmt: skip
    assert code == 4, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    overall, calc = results["overall"]["mean"], results["tasks"]["TaxCalc"]["score"]["mean"]
    assert overall < 0.99 and calc < 0.5
    assert f"Gate failed: Overall Average {overall:.4f}" in output and "is below --fail-under 0.99" in output
    assert f"Gate failed: TaxCalc score {calc:.4f} is below --fail-under TaxCalc=0.5." in output
    for name in ("results.json", "samples.jsonl", "predictions.jsonl", "report.md", "report.html", "summary.csv"):
        assert (out / name).exists(), name

    # score and merge gate the same way, on the same predictions
    code, output = invoke("score", "--data", "sample", "--no-semantic", "--predictions", str(out / "predictions.jsonl"),
                          "--out", str(tmp_path / "scored"), "--fail-under", "TaxCalc=0.5")  # fmt: skip
    assert code == 4 and f"TaxCalc score {calc:.4f} is below --fail-under TaxCalc=0.5" in output
    assert (tmp_path / "scored" / "summary.csv").exists()
    code, output = invoke("merge", str(out / "predictions.jsonl"), "--data", "sample", "--no-semantic",
                          "--out", str(tmp_path / "merged"), "--fail-under", f"{overall}")  # fmt: skip
    assert code == 0, output
    code, output = invoke("merge", str(out / "predictions.jsonl"), "--data", "sample", "--no-semantic",
                          "--out", str(tmp_path / "merged2"), "--fail-under", "TaxCalc=0.5")  # fmt: skip
    assert code == 4 and "TaxCalc score" in output


def test_no_score_refuses_gates(tmp_path: Path) -> None:
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:oracle", "--out", str(tmp_path / "o"), "--no-score",
                          "--fail-under", "0.5")  # fmt: skip
    assert code == 2 and "--no-score" in output
