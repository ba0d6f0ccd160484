"""Smaller places where a figure or a message said more than it knew (issue 45, item 9 of Why):
a local ./sample read for the bundled one without a word, --limit 1e30 accepted, a limit that
cuts nothing counted as a limit, a --limit 2, 1-run result unflagged, --tasks TaxCal exiting 1,
the leaderboard calling two partial runs "a partial run beside a full one"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.report_fixtures import build_result_dir
from taxpraben.cli import build_app
from taxpraben.data.files import sample_data_dir
from taxpraben.report import IncompatibleResultsError
from taxpraben.report.leaderboard import build_leaderboard

ORACLE = ("run", "--model", "baseline:oracle", "--runs", "1", "--no-semantic", "--no-cache")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    return result.exit_code, " ".join(result.output.split())


def test_an_unknown_task_is_a_usage_error_with_a_did_you_mean(tmp_path: Path) -> None:
    code, output = invoke(*ORACLE, "--data", "sample", "--tasks", "TaxCal", "--out", str(tmp_path / "o"))
    assert code == 2, output
    assert "--tasks: unknown task 'TaxCal'; did you mean 'TaxCalc'?" in output


@pytest.mark.parametrize("limit", ["1e30", "10000000000"])
def test_an_absurd_limit_is_refused(tmp_path: Path, limit: str) -> None:
    code, output = invoke(*ORACLE, "--data", "sample", "--limit", limit, "--out", str(tmp_path / "o"))
    assert code == 2, output
    assert "--limit" in output and "more records than any task holds" in output


def test_a_limit_that_cuts_nothing_is_no_limit(tmp_path: Path) -> None:
    """TaxCalc has 16 records: --limit 16 (and 50) keeps them all; --limit 15 cuts one."""
    for limit, recorded in (("16", None), ("50", None), ("15", 15)):
        out = tmp_path / limit
        code, output = invoke(*ORACLE, "--data", "sample", "--tasks", "TaxCalc", "--limit", limit, "--out", str(out))
        assert code == 0, output
        meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
        assert meta["limit"] == recorded and meta["manifest"]["limit"] == recorded, limit
        assert ("limited:" in (out / "report.md").read_text(encoding="utf-8")) == (recorded is not None)


def test_a_limited_one_run_result_is_flagged_beside_its_overall_average(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, output = invoke(*ORACLE, "--data", "sample", "--tasks", "TaxCalc,TaxMCQ", "--limit", "2", "--out", str(out))
    assert code == 0, output
    md = (out / "report.md").read_text(encoding="utf-8")
    overall = md.split("## Overall Average", 1)[1].split("\n\n", 2)[1]
    assert "limited: first 2 per task · 1 run" in overall
    assert "limited: first 2 per task · 1 run" in output  # the terminal's Overall Average too


def test_a_local_sample_directory_is_named_beside_the_bundled_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """./sample exists: --data sample reads it (a directory named so), and says so, naming the
    bundled sample too; where it lacks tasks, the refusal names both."""
    local = tmp_path / "sample"
    local.mkdir()
    shutil.copy(sample_data_dir() / "TaxCalc.jsonl", local / "TaxCalc.jsonl")
    monkeypatch.chdir(tmp_path)
    code, output = invoke(*ORACLE, "--data", "sample", "--tasks", "TaxCalc", "--out", str(tmp_path / "o"))
    assert code == 0, output
    said = f"--data sample read {local.resolve()} (a directory named sample here), not the bundled sample " \
           f"({sample_data_dir()})"  # fmt: skip
    assert said in output and "pass --data ./sample to say so" in output
    code, output = invoke(*ORACLE, "--data", "sample", "--out", str(tmp_path / "o2"))
    assert code == 2 and "no data file for 13 task(s)" in output and said in output


def test_two_partial_runs_are_not_called_a_partial_run_beside_a_full_one(tmp_path: Path) -> None:
    a = build_result_dir(tmp_path / "a", items_per_task=4, runs=2, not_computed=("TaxSum",))
    b = build_result_dir(tmp_path / "b", items_per_task=4, runs=2, seed=9, not_computed=("TaxQA",))
    with pytest.raises(IncompatibleResultsError) as caught:
        build_leaderboard([a, b])
    message = str(caught.value)
    assert "partial runs of different tasks" in message and "beside a full one" not in message


def test_run_help_cuts_no_description_and_names_no_parser() -> None:
    """At 80 columns, `run --help` cut ten descriptions with "…" (model kinds, the default base
    URL, environment variables' names) and showed --limit's metavar as <parse_number>."""
    result = CliRunner().invoke(build_app(), ["run", "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert "<parse_" not in result.output and "parse_number" not in result.output
    limit = next(line for line in result.output.splitlines() if "--limit" in line)
    assert "NUMBER" in limit
    text = "".join(line.strip("│ ") for line in result.output.splitlines())
    assert "TAXPRABEN_BERTSCORE_MODEL" in text and "hfl/chinese-xlnet-base" in text
