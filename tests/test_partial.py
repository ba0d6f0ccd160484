"""A score covers the whole benchmark or says loudly what it left out (taxpraben.coverage).

End to end with ``baseline:oracle`` on the bundled sample with one task file removed: refused
without a choice; with --allow-missing, every output says "partial: 13 of 14"; the gates,
``diff`` and the leaderboard fail on it unless --allow-partial.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.report_fixtures import build_result_dir
from taxpraben.cli import build_app
from taxpraben.coverage import (
    EXCLUDED,
    NO_DATA_FILE,
    NO_PREDICTIONS,
    NOT_SELECTED,
    SCORER_UNAVAILABLE,
    SEMANTIC_OFF,
    coverage_of,
    missing_reasons,
    select_tasks,
)
from taxpraben.data.files import sample_data_dir
from taxpraben.report import IncompatibleResultsError
from taxpraben.report.leaderboard import build_leaderboard
from taxpraben.report.load import read_results
from taxpraben.tasks import load_registry

BENCHMARK = list(load_registry(use_env=False))
#: Beside the Overall Average of these runs: the tiny scorers, --limit 2 and --runs 1.
FL = " · non-standard scorer · limited: first 2 per task · 1 run"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.output


def sample_without(root: Path, *tasks: str) -> Path:
    """The bundled sample with the files of ``tasks`` left out."""
    data = root / "data"
    data.mkdir(parents=True)
    for path in sample_data_dir().glob("*.jsonl"):
        if path.stem not in tasks:
            (data / path.name).write_bytes(path.read_bytes())
    return data


def oracle_run(data: Path, out: Path, *extra: str, tiny: tuple[Path, Path] | None = None) -> tuple[int, str]:
    """``run --model baseline:oracle`` over ``data``: the tiny scorer models when given
    (every task computed), else --no-semantic."""
    scorers = (["--device", "cpu", "--bertscore-model", str(tiny[0]), "--bertscore-layer", "2",
                "--bartscore-model", str(tiny[1])] if tiny else ["--no-semantic"])  # fmt: skip
    return invoke("run", "--model", "baseline:oracle", "--data", str(data), "--runs", "1", "--limit", "2",
                  "--no-cache", "--out", str(out), *scorers, *extra)  # fmt: skip


@pytest.fixture(scope="module")
def tiny(tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> tuple[Path, Path]:
    return tiny_xlnet_dir, tiny_bart_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, tiny: tuple[Path, Path]) -> dict[str, Path]:
    """A full run of the sample and one over the sample without TaxSCQ (--allow-missing),
    every other task computed by the tiny scorers."""
    root = tmp_path_factory.mktemp("partial")
    full, partial = root / "full", root / "partial"
    code, output = oracle_run(sample_data_dir(), full, tiny=tiny)
    assert code == 0, output
    code, output = oracle_run(sample_without(root, "TaxSCQ"), partial, "--allow-missing", tiny=tiny)
    assert code == 0, output  # the user chose it: written, and no failure
    (root / "partial.out").write_text(output, encoding="utf-8")
    return {"full": full, "partial": partial, "output": root / "partial.out"}


# --- the refusal -------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "score", "merge", "estimate"])
def test_a_data_directory_lacking_a_task_is_refused_naming_it(tmp_path: Path, command: str) -> None:
    data, out = sample_without(tmp_path, "TaxSCQ"), tmp_path / "o"
    if command in ("run", "estimate"):
        code, output = invoke(command, "--model", "baseline:oracle", "--data", str(data),
                              *(["--no-semantic", "--out", str(out)] if command == "run" else []))  # fmt: skip
    else:  # predictions of every task, so that the data must hold them all
        code, output = oracle_run(sample_data_dir(), tmp_path / "made")
        assert code == 0, output
        preds = str(tmp_path / "made" / "predictions.jsonl")
        sources = ["-p", preds] if command == "score" else [preds]
        code, output = invoke(command, *sources, "--data", str(data), "--no-semantic", "--out", str(out))
    assert code == 2, output
    assert "no data file for 1 task(s) of the benchmark" in output
    assert "TaxSCQ (looked for TaxSCQ.jsonl, TaxSCQ.json, TaxSCQ.parquet, TaxSCQ/test.jsonl" in output
    assert "--tasks" in output and "--allow-missing" in output
    assert not out.exists()  # refused before anything was written (or sent)


def test_validate_names_the_missing_task(tmp_path: Path) -> None:
    code, output = invoke("validate", "--data", str(sample_without(tmp_path, "TaxSCQ")), "--quiet")
    assert code == 0, output
    assert "no data file for TaxSCQ (looked for TaxSCQ.jsonl" in output
    assert "13 of the benchmark's 14 tasks have data" in output


def test_a_subset_named_with_tasks_is_scored_and_marked_partial(tmp_path: Path) -> None:
    data = sample_without(tmp_path, "TaxSCQ")
    code, output = oracle_run(data, tmp_path / "o", "--tasks", "TaxCalc,TaxCrime")
    assert code == 0, output
    overall = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["overall"]
    assert overall["partial"] is True and overall["tasks"] == ["TaxCalc", "TaxCrime"]
    assert overall["missing"]["TaxSCQ"] == EXCLUDED and overall["missing"]["TaxRecite"] == EXCLUDED
    assert len(overall["missing"]) == 12 and overall["benchmark"] == BENCHMARK
    md = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "**partial: 2 of 14 · limited: first 2 per task · 1 run**" in md  # --no-semantic: no scorer to flag


# --- a partial run: every output says so -------------------------------------------------------------


def test_results_say_which_task_is_missing_and_why(runs: dict[str, Path]) -> None:
    full = json.loads((runs["full"] / "results.json").read_text(encoding="utf-8"))["overall"]
    assert full["partial"] is False and full["missing"] == {} and full["benchmark"] == BENCHMARK
    assert len(full["tasks"]) == 14
    partial = json.loads((runs["partial"] / "results.json").read_text(encoding="utf-8"))["overall"]
    assert partial["partial"] is True
    assert partial["missing"] == {"TaxSCQ": NO_DATA_FILE}
    assert partial["benchmark"] == BENCHMARK and len(partial["tasks"]) == 13 and "TaxSCQ" not in partial["tasks"]


def test_every_report_says_partial_13_of_14(runs: dict[str, Path]) -> None:
    md = (runs["partial"] / "report.md").read_text(encoding="utf-8")
    overall = md.split("## Overall Average", 1)[1].split("|", 1)[0]
    assert "**partial: 13 of 14 · non-standard scorer · limited: first 2 per task · 1 run**" in overall and "TaxSCQ (no data file)" in overall
    html = (runs["partial"] / "report.html").read_text(encoding="utf-8")
    assert '<div class="warn" id="overall-coverage"><strong>partial: 13 of 14 · non-standard scorer · limited: first 2 per task · 1 run</strong></div>' in html
    terminal = runs["output"].read_text(encoding="utf-8")
    assert "The Overall Average is partial: 13 of 14 tasks of the benchmark; missing: TaxSCQ (no data file)." in terminal
    for name in ("report.md", "report.html"):
        assert "partial: 13 of 14" not in (runs["full"] / name).read_text(encoding="utf-8"), name


def test_summary_csv_says_partial_13_of_14(runs: dict[str, Path]) -> None:
    with open(runs["partial"] / "summary.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    overall = next(r for r in rows if r["row_kind"] == "overall")
    assert overall["notes"] == "partial: 13 of 14 · non-standard scorer · limited: first 2 per task · 1 run; missing: TaxSCQ (no data file)" and overall["n"] == "13"
    scq = next(r for r in rows if r["name"] == "TaxSCQ")
    assert scq["row_kind"] == "task" and scq["notes"] == NO_DATA_FILE and scq["score_mean"] == ""
    with open(runs["full"] / "summary.csv", encoding="utf-8", newline="") as fh:
        assert next(r for r in csv.DictReader(fh) if r["row_kind"] == "overall")["notes"] == "non-standard scorer · limited: first 2 per task · 1 run"


def test_the_leaderboard_refuses_a_partial_run_beside_a_full_one(runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(IncompatibleResultsError, match=r"a partial run beside a full one.*partial: 13 of 14"):
        build_leaderboard([runs["full"], runs["partial"]], resamples=200)
    code, output = invoke("report", str(runs["full"]), str(runs["partial"]), "--out", str(tmp_path / "lb"))
    assert code == 2 and "a partial run beside a full one" in output
    # forced: written, marked, and still the partial gate's exit status unless --allow-partial
    code, output = invoke("report", str(runs["full"]), str(runs["partial"]), "--out", str(tmp_path / "lb"),
                          "--force", "--resamples", "200")  # fmt: skip
    assert code == 6, output
    assert "is partial: 13 of 14 tasks of the benchmark (missing: TaxSCQ (no data file))" in output
    md = (tmp_path / "lb" / "leaderboard.md").read_text(encoding="utf-8")
    assert f"(partial: 13 of 14{FL})" in md and "partial: 13 of 14 (missing: TaxSCQ (no data file))" in md
    with open(tmp_path / "lb" / "summary.csv", encoding="utf-8", newline="") as fh:
        notes = [r["notes"] for r in csv.DictReader(fh) if r["row_kind"] == "overall"]
    assert sum("partial: 13 of 14" in n for n in notes) == 1
    assert f"(partial: 13 of 14{FL})" in (tmp_path / "lb" / "leaderboard.html").read_text(encoding="utf-8")
    code, output = invoke("report", str(runs["full"]), str(runs["partial"]), "--out", str(tmp_path / "lb2"),
                          "--force", "--allow-partial", "--resamples", "200")  # fmt: skip
    assert code == 0, output


def test_diff_gate_fails_when_b_is_partial(runs: dict[str, Path], tmp_path: Path) -> None:
    args = ["diff", str(runs["full"]), str(runs["partial"]), "--out", str(tmp_path), "--force", "--resamples", "200"]
    code, output = invoke(*args, "--fail-over-regression", "0.5")
    assert code == 5, output
    assert "B: baseline:oracle is partial: 13 of 14 tasks of the benchmark (missing: TaxSCQ (no data file))" in output
    code, output = invoke(*args, "--fail-over-regression", "0.5", "--allow-partial")
    assert code == 0, output  # the oracle did not regress on the tasks both computed
    code, output = invoke(*args)
    assert code == 0, output  # no gate, no failure


# --- what is chosen and what is not ------------------------------------------------------------------


def test_scorer_models_missing_is_not_chosen_and_exits_6(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--runs", "1", "--limit", "1",
                          "--no-cache", "--out", str(out), "--bertscore-model", str(tmp_path / "no-bert"),
                          "--bartscore-model", str(tmp_path / "no-bart"))  # fmt: skip
    assert code == 6, output
    assert "partial: 6 of 14" in output and "TaxRecite" in output and "(not computed: scorer unavailable)" in output
    assert (out / "summary.csv").exists() and (out / "report.html").exists()  # after writing everything
    missing = json.loads((out / "results.json").read_text(encoding="utf-8"))["overall"]["missing"]
    assert set(missing.values()) == {SCORER_UNAVAILABLE} and len(missing) == 8
    code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--runs", "1", "--limit", "1",
                          "--no-cache", "--out", str(tmp_path / "o2"), "--bertscore-model", str(tmp_path / "no-bert"),
                          "--bartscore-model", str(tmp_path / "no-bart"), "--allow-partial")  # fmt: skip
    assert code == 0, output


def test_no_semantic_is_chosen(tmp_path: Path) -> None:
    code, output = oracle_run(sample_data_dir(), tmp_path / "o")
    assert code == 0, output
    missing = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["overall"]["missing"]
    assert set(missing.values()) == {SEMANTIC_OFF} and len(missing) == 8


# --- the pure parts ------------------------------------------------------------------------------------


def test_select_tasks_says_why_each_task_is_left_out() -> None:
    bench = ["A", "B", "C", "D"]
    selection, absent = select_tasks(bench, ["A", "B", "C"])
    assert (selection.tasks, selection.left_out, absent) == (["A", "B", "C"], {"D": NO_DATA_FILE}, ["D"])
    selection, absent = select_tasks(bench, ["A", "B", "C"], chosen=["C", "A"])
    assert (selection.tasks, absent) == (["C", "A"], [])
    assert selection.left_out == {"B": EXCLUDED, "D": EXCLUDED}
    selection, absent = select_tasks(bench, ["A", "C"], held=["A", "B"])
    assert (selection.tasks, absent) == (["A"], ["B"])
    assert selection.left_out == {"B": NO_DATA_FILE, "C": NO_PREDICTIONS, "D": NO_PREDICTIONS}


def test_missing_reasons_in_benchmark_order() -> None:
    statuses = {"A": "ok", "C": "not_computed"}
    assert missing_reasons(["A", "B", "C"], statuses, {"B": NO_DATA_FILE}, semantic=True) == {
        "B": NO_DATA_FILE, "C": SCORER_UNAVAILABLE}  # fmt: skip
    assert missing_reasons(["A", "B", "C"], statuses, {}, semantic=False) == {"B": NOT_SELECTED, "C": SEMANTIC_OFF}


def test_an_older_results_file_reads_its_tasks_as_the_benchmark(tmp_path: Path) -> None:
    """A results.json written before overall.benchmark: its tasks are the benchmark, its
    tasks not computed the missing ones."""
    out = build_result_dir(tmp_path / "r", items_per_task=2, runs=2, not_computed=("TaxSum",))
    raw = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert "benchmark" not in raw["overall"] and "missing" not in raw["overall"]
    coverage = coverage_of(read_results(out))
    assert coverage.label == "partial: 13 of 14" and coverage.missing == {"TaxSum": SCORER_UNAVAILABLE}
    assert coverage.unchosen == ["TaxSum"]


def test_score_of_a_file_holding_some_tasks_names_the_others(tmp_path: Path) -> None:
    """`score` of predictions for TaxCalc alone, against the whole sample: scored, and the other
    13 tasks are missing for want of predictions; a gate then fails naming them."""
    code, output = oracle_run(sample_data_dir(), tmp_path / "made", "--tasks", "TaxCalc")
    assert code == 0, output
    preds = str(tmp_path / "made" / "predictions.jsonl")
    code, output = invoke("score", "-p", preds, "--data", "sample", "--limit", "2", "--out", str(tmp_path / "o"))
    assert code == 0, output
    overall = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["overall"]
    assert overall["tasks"] == ["TaxCalc"] and overall["partial"] is True
    assert set(overall["missing"].values()) == {NO_PREDICTIONS} and len(overall["missing"]) == 13
    code, output = invoke("score", "-p", preds, "--data", "sample", "--limit", "2", "--out", str(tmp_path / "g"),
                          "--fail-under", "TaxCalc=0.5")  # fmt: skip
    assert code == 4 and "partial: 1 of 14" in output and "(no predictions)" in output, output
