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

# --no-semantic leaves the generation tasks not computed: the gates accept that partial result
# only with --allow-partial (test_a_partial_result_fails_every_gate shows them without it).
SAMPLE_RUN = ["run", "--data", "sample", "--no-semantic", "--allow-partial", "--runs", "1", "--no-cache"]


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
    assert gate_failures([(None, overall), ("TaxCalc", calc)], results, allow_partial=True) == []  # equal passes
    partial = ("the results are partial: 13 of 14 tasks of the benchmark; missing: TaxSum (not computed: scorer "
               "unavailable) (--allow-partial accepts a partial result)")  # fmt: skip
    assert gate_failures([(None, overall), ("TaxCalc", calc)], results) == [partial]  # a partial result fails
    failures = gate_failures([(None, overall + 0.01), ("TaxCalc", calc + 0.01), ("TaxSum", 0.1)], results,
                             allow_partial=True)  # fmt: skip
    assert failures == [
        f"Overall Average {overall:.4f} (partial: over the computed tasks only) is below --fail-under {overall + 0.01:g}",
        f"TaxCalc score {calc:.4f} is below --fail-under TaxCalc={calc + 0.01:g}",
        "TaxSum score was not computed, so --fail-under TaxSum=0.1 cannot pass",
    ]
    assert gate_failures([("TaxPlan", 0.1)], read_results(build_result_dir(
        tmp_path / "s", items_per_task=2, runs=2, tasks=("TaxCalc",))), allow_partial=True) == [
        "TaxPlan score: TaxPlan was not scored in this run, so --fail-under TaxPlan=0.1 cannot pass"
    ]  # fmt: skip


def test_oracle_passes_the_gate(tmp_path: Path) -> None:
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:oracle", "--out", str(tmp_path / "o"),
                          "--fail-under", "0.99", "--fail-under", "TaxCalc=1")  # fmt: skip
    assert code == 0, output
    mean = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["overall"]["mean"]
    assert mean >= 0.99
    # What was checked, the figure and the flag: not "Gates passed: 0.99, TaxCalc=1."
    assert (f"Gates passed: Overall Average {mean:.4f} >= 0.99 (--fail-under 0.99); TaxCalc score 1.0000 >= 1 "
            "(--fail-under TaxCalc=1).") in " ".join(output.split())  # fmt: skip


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
    code, output = invoke("score", "--data", "sample", "--no-semantic", "--allow-partial",
                          "--predictions", str(out / "predictions.jsonl"),
                          "--out", str(tmp_path / "scored"), "--fail-under", "TaxCalc=0.5")  # fmt: skip
    assert code == 4 and f"TaxCalc score {calc:.4f} is below --fail-under TaxCalc=0.5" in output
    assert (tmp_path / "scored" / "summary.csv").exists()
    code, output = invoke("merge", str(out / "predictions.jsonl"), "--data", "sample", "--no-semantic",
                          "--allow-partial", "--out", str(tmp_path / "merged"), "--fail-under", f"{overall}")  # fmt: skip
    assert code == 0, output
    code, output = invoke("merge", str(out / "predictions.jsonl"), "--data", "sample", "--no-semantic",
                          "--allow-partial", "--out", str(tmp_path / "merged2"), "--fail-under", "TaxCalc=0.5")  # fmt: skip
    assert code == 4 and "TaxCalc score" in output


def test_no_score_refuses_gates(tmp_path: Path) -> None:
    code, output = invoke(*SAMPLE_RUN, "--model", "baseline:oracle", "--out", str(tmp_path / "o"), "--no-score",
                          "--fail-under", "0.5")  # fmt: skip
    assert code == 2 and "--no-score" in output


def _sample_without(tmp_path: Path, task: str) -> Path:
    """The bundled sample with ``task``'s file left out."""
    from taxpraben.data.files import sample_data_dir

    data = tmp_path / "data"
    data.mkdir()
    for path in sample_data_dir().glob("*.jsonl"):
        if path.stem != task:
            (data / path.name).write_bytes(path.read_bytes())
    return data


def test_a_partial_result_fails_every_gate(tmp_path: Path) -> None:
    """A task of the benchmark without data, let go with --allow-missing: --fail-under 0 (which
    any score passes) fails with exit 4 naming the task, after every file is written."""
    data, out = _sample_without(tmp_path, "TaxSCQ"), tmp_path / "o"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", str(data), "--runs", "1", "--no-cache",
                          "--no-semantic", "--allow-missing", "--out", str(out), "--fail-under", "0")  # fmt: skip
    assert code == 4, output
    gate = next(line for line in output.splitlines() if line.startswith("Gate failed"))
    assert "partial: 5 of 14" in gate and "TaxSCQ (no data file)" in gate and "--allow-partial" in gate
    assert "TaxRecite" in gate and "(not computed: semantic scoring off (--no-semantic))" in gate
    for name in ("results.json", "samples.jsonl", "predictions.jsonl", "report.md", "report.html", "summary.csv"):
        assert (out / name).exists(), name
    code, output = invoke("run", "--model", "baseline:oracle", "--data", str(data), "--runs", "1", "--no-cache",
                          "--no-semantic", "--allow-missing", "--allow-partial", "--out", str(tmp_path / "o2"),
                          "--fail-under", "0")  # fmt: skip
    assert code == 0 and "Gates passed: Overall Average " in output and ">= 0 (--fail-under 0)." in output, output
