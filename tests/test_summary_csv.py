"""summary.csv: a run's figures (and a leaderboard's) read back with csv equal results.json's."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from helpers.report_fixtures import build_result_dir
from taxpraben.report import write_leaderboard, write_reports
from taxpraben.report.summary_csv import summary_columns


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def number(text: str) -> float | None:
    return None if text == "" else float(text)


def assert_stat(row: dict[str, str], key: str, figure: dict[str, Any] | None) -> None:
    """The four cells of ``key`` are the STAT's mean, std and interval, to the last digit."""
    if figure is None:
        assert [row[f"{key}_{p}"] for p in ("mean", "std", "ci95_low", "ci95_high")] == ["", "", "", ""]
        return
    assert number(row[f"{key}_mean"]) == figure["mean"]
    assert number(row[f"{key}_std"]) == figure["std"]
    ci = figure["ci95"] or [None, None]
    assert (number(row[f"{key}_ci95_low"]), number(row[f"{key}_ci95_high"])) == (ci[0], ci[1])


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    out = build_result_dir(tmp_path / "run", items_per_task=6, runs=3, not_computed=("TaxSum",))
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    results["tasks"]["TaxCalc"]["ledger"] = {"answers": 18, "truncated": 2, "truncated_rate": 2 / 18}
    (out / "results.json").write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    write_reports(out)
    return out


def test_task_rows_equal_results_json(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    header, rows = read_csv(run_dir / "summary.csv")
    assert header == summary_columns()
    assert header[:4] == ["row_kind", "name", "type", "bloom"]
    assert header[-5:] == ["n", "format_failure_rate", "error_rate", "truncated", "notes"]
    tasks = [r for r in rows if r["row_kind"] == "task"]
    assert sorted(r["name"] for r in tasks) == sorted(results["tasks"])
    assert [r["row_kind"] for r in rows] == ["task"] * 14 + ["type"] * 4 + ["bloom"] * 6 + ["overall"]
    for row in tasks:
        entry = results["tasks"][row["name"]]
        assert (row["type"], row["bloom"], int(row["n"])) == (entry["type"], entry["bloom"], entry["n"])
        assert_stat(row, "score", entry["score"])
        for key, figure in entry["metrics"].items():
            # the scorer that never loaded: its figures are empty, as the reports' "n/c"
            unavailable = not results["meta"]["scorers"].get(key, {}).get("available", True)
            assert_stat(row, key, None if unavailable else figure)
        assert number(row["format_failure_rate"]) == entry["format_failure_rate"]["mean"]
        assert number(row["error_rate"]) == entry["error_rate"]["mean"]
        # a metric the task does not have is empty
        if entry["type"] == "structured":
            assert row["acc_mean"] == "" and row["bertscore_mean"] == ""
    by_name = {r["name"]: r for r in tasks}
    assert by_name["TaxCalc"]["truncated"] == "2" and by_name["TaxRead"]["truncated"] == ""
    # not computed: no score, no semantic metric, but its rates are there
    assert by_name["TaxSum"]["score_mean"] == "" and by_name["TaxSum"]["bertscore_mean"] == ""
    assert number(by_name["TaxSum"]["error_rate"]) == results["tasks"]["TaxSum"]["error_rate"]["mean"]


def test_group_and_overall_rows_equal_results_json(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    _, rows = read_csv(run_dir / "summary.csv")
    for kind in ("type", "bloom"):
        group = [r for r in rows if r["row_kind"] == kind]
        assert {r["name"] for r in group} == set(results["groups"][kind])
        for row in group:
            assert row[kind] == row["name"]
            assert_stat(row, "score", results["groups"][kind][row["name"]])
    assert [r["name"] for r in rows if r["row_kind"] == "bloom"] == [
        "remember", "understand", "apply", "analyze", "evaluate", "create",
    ]  # fmt: skip
    (overall,) = [r for r in rows if r["row_kind"] == "overall"]
    assert overall["name"] == "Overall Average"
    assert_stat(overall, "score", results["overall"])
    assert int(overall["n"]) == len(results["overall"]["tasks"]) == 13


def test_leaderboard_summary_csv(tmp_path: Path) -> None:
    a = build_result_dir(tmp_path / "a", model="m-a", quality=0.2, seed=1, items_per_task=5, runs=2)
    b = build_result_dir(tmp_path / "b", model="m-b", quality=0.0, seed=2, items_per_task=5, runs=2)
    paths = write_leaderboard([b, a], tmp_path / "board", resamples=200)
    assert paths[-1] == tmp_path / "board" / "summary.csv"
    header, rows = read_csv(paths[-1])
    assert header == [
        "rank", "model", "directory", "row_kind", "task",
        "score_mean", "score_std", "score_ci95_low", "score_ci95_high", "n", "notes",
    ]  # fmt: skip
    assert len(rows) == 2 * (14 + 1)
    for directory, label, rank in ((a, "m-a", "1"), (b, "m-b", "2")):
        results = json.loads((directory / "results.json").read_text(encoding="utf-8"))
        mine = [r for r in rows if r["model"] == label]
        assert {r["rank"] for r in mine} == {rank} and {r["directory"] for r in mine} == {str(directory)}
        for row in mine:
            if row["row_kind"] == "task":
                assert_stat(row, "score", results["tasks"][row["task"]]["score"])
                assert int(row["n"]) == results["tasks"][row["task"]]["n"]
            else:
                assert (row["row_kind"], row["task"]) == ("overall", "Overall Average")
                assert_stat(row, "score", results["overall"])
        assert mine[-1]["row_kind"] == "overall"
