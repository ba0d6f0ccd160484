"""`score` counts predictions over records x runs: a run number outside the runs is refused
(file and line), and every count and banner is out of records x runs, a missing prediction
included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.results.predictions import Prediction, PredictionFileError, expected_runs
from taxpraben.run.batch_api import custom_id

#: The bundled sample: 186 records; 5 runs make 930 predictions.
RECORDS, RUNS = 186, 5


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1"}, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.replace("│", " ").split())


@pytest.fixture(scope="module")
def oracle_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """predictions.jsonl of the oracle over the sample, 5 runs (930 lines)."""
    out = tmp_path_factory.mktemp("oracle") / "out"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--no-semantic", "--no-cache",
                          "--no-score", "--out", str(out))  # fmt: skip
    assert code == 0, output
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == RECORDS * RUNS
    return lines


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def score(predictions: Path, out: Path, *extra: str, flag: str = "--predictions") -> tuple[int, str]:
    return invoke("score", "--data", "sample", flag, str(predictions), "--no-semantic", "--out", str(out), *extra)


# ---------------------------------------------------------------------------- run numbers


def test_a_run_beyond_the_runs_is_refused_with_its_file_and_line(oracle_lines: list[str], tmp_path: Path) -> None:
    stray = {**json.loads(oracle_lines[0]), "run": 99}
    path = write_lines(tmp_path / "p.jsonl", [*oracle_lines[:500], json.dumps(stray, ensure_ascii=False), *oracle_lines[500:]])
    code, output = score(path, tmp_path / "a", "--runs", "5")
    assert code == 1, output
    assert f"{path}:501: run 99 is not one of the runs expected, 0..4 (--runs 5)" in output
    code, output = score(path, tmp_path / "b")  # no --runs: the file's runs, and 5..98 hold none
    assert code == 1, output
    assert f"{path}:501: run 99, but runs 5..98 hold no prediction at all" in output and "--runs N" in output
    assert not (tmp_path / "a" / "results.json").exists() and not (tmp_path / "b" / "results.json").exists()


def test_without_runs_the_runs_are_the_files_and_said(oracle_lines: list[str], tmp_path: Path) -> None:
    code, output = score(write_lines(tmp_path / "p.jsonl", oracle_lines), tmp_path / "out")
    assert code == 0, output
    assert "runs: 5 (runs 0..4), as the predictions hold" in output
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["meta"]["runs"] == RUNS and results["meta"]["counts"]["errors"] == 0


def located(*runs: int) -> list[tuple[str, Prediction]]:
    return [(f"f.jsonl:{n + 1}", Prediction("TaxCalc", str(n), run, "x")) for n, run in enumerate(runs)]


def test_expected_runs() -> None:
    assert expected_runs(located(0, 1, 2, 1, 0), None) == 3
    assert expected_runs(located(0, 0), 4) == 4  # runs 1..3 score 0 as errors, as asked
    assert expected_runs([], None) == 1
    with pytest.raises(PredictionFileError, match=r"^f\.jsonl:2: run 2, but run 1 holds no prediction"):
        expected_runs(located(0, 2, 2), None)
    with pytest.raises(PredictionFileError, match=r"^f\.jsonl:3: run 4 is not one of the runs expected, 0\.\.3"):
        expected_runs(located(0, 3, 4), 4)


# ---------------------------------------------------------------------------- the true denominator


def test_fifty_missing_predictions_are_fifty_of_930(oracle_lines: list[str], tmp_path: Path) -> None:
    kept = oracle_lines[:100] + oracle_lines[150:]
    out = tmp_path / "out"
    code, output = score(write_lines(tmp_path / "p.jsonl", kept), out)
    assert code == 0, output
    banner = "50 of 930 predictions failed (50 of them had no prediction at all) and score 0 as errors"
    assert banner in output
    assert banner in (out / "report.md").read_text(encoding="utf-8")
    counts = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]["counts"]
    assert (counts["items"], counts["scored_predictions"], counts["missing_predictions"]) == (RECORDS, 880, 50)


def batch_line(prediction: dict[str, Any]) -> dict[str, Any]:
    """What vLLM's run_batch writes for one request answered with the prediction's text."""
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": prediction["prediction"]},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}  # fmt: skip
    cid = custom_id((prediction["task"], prediction["id"], prediction["run"]))
    return {"id": "batch_req_1", "custom_id": cid, "response": {"status_code": 200, "body": body}, "error": None}


def test_a_batch_output_with_22_answers_says_how_many_of_930_failed(oracle_lines: list[str], tmp_path: Path) -> None:
    """The README's batch step, its output holding 22 answers (of every run): 908 of the 930
    predictions failed, not every prediction."""
    chosen = [json.loads(line) for line in oracle_lines[::43]][:22]
    assert len(chosen) == 22 and {p["run"] for p in chosen} == set(range(RUNS))
    output_file = write_lines(tmp_path / "batch_output.jsonl", [json.dumps(batch_line(p), ensure_ascii=False) for p in chosen])
    code, output = score(output_file, tmp_path / "out", flag="--batch-output")
    assert code == 0, output
    assert "908 of 930 predictions failed (908 of them had no prediction at all)" in output
    assert "every prediction failed" not in output
