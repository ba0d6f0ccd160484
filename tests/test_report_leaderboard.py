"""The leaderboard: ranking, paired significance of adjacent pairs, refusal to mix data or rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from helpers.report_fixtures import build_result_dir
from taxpraben.commands.report import report
from taxpraben.report import IncompatibleResultsError, ReportError, write_leaderboard
from taxpraben.report import format as fmt
from taxpraben.report.leaderboard import build_leaderboard, save_leaderboard
from taxpraben.report.significance import item_scores, paired_bootstrap
from taxpraben.results import Sample


@pytest.fixture(scope="module")
def three_models(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A clearly better model A, and B and C whose difference is small and not significant."""
    root = tmp_path_factory.mktemp("models")
    a = build_result_dir(root / "a", model="openai:model-a", quality=0.2, seed=4)
    b = build_result_dir(root / "b", model="openai:model-b", quality=0.0, seed=5)
    c = build_result_dir(root / "c", model="openai:model-c", quality=-0.01, seed=6)
    return [c, a, b]  # deliberately not in rank order


def test_ranking_and_adjacent_significance(three_models: list[Path]):
    board = build_leaderboard(three_models)
    assert [e.label for e in board.entries] == [
        "openai:model-a",
        "openai:model-b",
        "openai:model-c",
    ]
    means = [e.overall.mean for e in board.entries]
    assert means == sorted(means, reverse=True)
    first, second = board.comparisons
    assert first.test is not None and second.test is not None
    assert first.test.significant and first.test.p_value < 0.01
    assert not second.test.significant and second.test.p_value > 0.05
    assert second.test.ci95[0] < 0 < second.test.ci95[1]
    assert first.test.items == 14 * 10 and len(first.test.tasks) == 14


def test_leaderboard_files_show_the_verdicts(three_models: list[Path], tmp_path: Path):
    paths = write_leaderboard(three_models, tmp_path / "board")
    assert [p.name for p in paths] == ["leaderboard.md", "leaderboard.html", "summary.csv"]
    md = paths[0].read_text(encoding="utf-8")
    board = build_leaderboard(three_models)
    pairs = md.split("## Adjacent pairs", 1)[1]
    rows = [line for line in pairs.splitlines() if line.startswith("| #")]
    assert len(rows) == 2
    assert "#1 openai:model-a vs #2 openai:model-b" in rows[0] and "| yes |" in rows[0]
    assert "#2 openai:model-b vs #3 openai:model-c" in rows[1]
    assert "| no (not significant) |" in rows[1]
    assert fmt.p_value(board.comparisons[1].test.p_value) in rows[1]
    assert fmt.signed_points(board.comparisons[1].test.difference) in rows[1]
    ranking = [
        line for line in md.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")
    ]
    assert "significant" in ranking[0] and "**not significant**" in ranking[1]
    assert fmt.stat(board.entries[0].overall) in ranking[0]
    assert "Paired bootstrap over items (10000 resamples, seed" in md
    html = paths[1].read_text(encoding="utf-8")
    assert 'data-significant="no"' in html and 'data-significant="yes"' in html
    assert "<strong>not significant</strong>" in html
    assert "<script" not in html


def test_paired_bootstrap_is_seeded_and_sane():
    a = {"T": {str(i): float(i % 2) for i in range(40)}, "U": {str(i): 0.5 for i in range(30)}}
    same = paired_bootstrap(a, a, ["T", "U"], resamples=500, seed=1)
    assert (
        same is not None and same.difference == 0 and same.p_value == 1.0 and not same.significant
    )
    b = {"T": {k: v - 0.2 for k, v in a["T"].items()}, "U": {k: v - 0.2 for k, v in a["U"].items()}}
    shifted = paired_bootstrap(a, b, ["T", "U"], resamples=500, seed=1)
    assert shifted.difference == pytest.approx(0.2) and shifted.significant
    again = paired_bootstrap(a, b, ["T", "U"], resamples=500, seed=1)
    assert again == shifted
    assert paired_bootstrap(a, {"V": {"1": 1.0}}, ["T"]) is None  # no shared items


def test_difference_is_mean_of_task_differences():
    a = {"T": {"1": 1.0, "2": 1.0}, "U": {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0}}
    b = {"T": {"1": 0.0, "2": 0.0, "9": 1.0}, "U": {"1": 0.5, "2": 0.5, "3": 0.5, "4": 0.5}}
    test = paired_bootstrap(a, b, ["T", "U"], resamples=200)
    # T: +1 on its 2 shared items; U: -0.5 on 4 items; each task weighs the same
    assert test.difference == pytest.approx((1.0 - 0.5) / 2)
    assert test.items == 6


def test_item_scores_average_runs():
    lines = [
        {"task": "T", "id": "1", "run": 0, "status": "ok", "score": 1.0},
        {"task": "T", "id": "1", "run": 1, "status": "format_failure", "score": 0.0},
        {"task": "T", "id": "2", "run": 0, "status": "ok", "score": None},
    ]
    assert item_scores(map(Sample.model_validate, lines)) == {"T": {"1": 0.5}}


def _set_meta(out: Path, **changes) -> None:
    path = out / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results["meta"].update(changes)
    path.write_text(json.dumps(results), encoding="utf-8")


def test_refuses_different_data_hash_unless_forced(tmp_path: Path):
    a = build_result_dir(tmp_path / "a", model="m-a", items_per_task=4, runs=2, quality=0.1)
    b = build_result_dir(
        tmp_path / "b", model="m-b", items_per_task=4, runs=2, data_hash="sha256:other"
    )
    with pytest.raises(
        IncompatibleResultsError, match=r"different data hashes.*sha256:other.*--force"
    ):
        write_leaderboard([a, b], tmp_path / "board")
    assert not (tmp_path / "board").exists()
    paths = write_leaderboard([a, b], tmp_path / "board", force=True)
    md = paths[0].read_text(encoding="utf-8")
    assert "**Warning:** Forced comparison despite different data hashes" in md


def test_refuses_different_profile(tmp_path: Path):
    a = build_result_dir(tmp_path / "a", model="m-a", items_per_task=3, runs=2)
    b = build_result_dir(tmp_path / "b", model="m-b", items_per_task=3, runs=2, profile="taxben")
    with pytest.raises(IncompatibleResultsError, match="different scoring profiles"):
        build_leaderboard([a, b])


def test_needs_two_directories(tmp_path: Path):
    a = build_result_dir(tmp_path / "a", items_per_task=2, runs=2)
    with pytest.raises(ReportError, match="at least two"):
        write_leaderboard([a], tmp_path)


def test_same_model_twice_is_told_apart_and_partial_is_flagged(tmp_path: Path):
    a = build_result_dir(tmp_path / "run1", items_per_task=4, runs=2)
    b = build_result_dir(
        tmp_path / "run2", items_per_task=4, runs=2, seed=9, not_computed=("TaxSum",)
    )
    _set_meta(b, scorers={"bertscore": {"model": "bert-base-chinese", "layer": 8}})
    # a partial run beside a full one is refused as unlike runs are; forced, it is marked
    with pytest.raises(IncompatibleResultsError, match=r"a partial run beside a full one.*partial: 13 of 14"):
        build_leaderboard([a, b])
    board = build_leaderboard([a, b], force=True)
    labels = sorted(e.label for e in board.entries)
    assert labels == ["openai:deepseek-chat (run1)", "openai:deepseek-chat (run2)"]
    assert any("Partial Overall Average" in w and "TaxSum (not computed: scorer unavailable)" in w
               for w in board.warnings)  # fmt: skip
    assert [e.label for e in board.partial] == ["openai:deepseek-chat (run2)"]
    assert any("Forced comparison despite different scorer setups" in w and "layer 8" in w for w in board.warnings)
    # the pair is tested on the tasks both computed
    assert "TaxSum" not in board.comparisons[0].test.tasks


# --- the command ----------------------------------------------------------------------------


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report)

    @app.command("noop")
    def noop() -> None:  # a second command keeps typer from collapsing to a single one
        pass

    return app


def test_report_command_leaderboard_and_force(three_models: list[Path], tmp_path: Path):
    runner = CliRunner()
    result = runner.invoke(
        _app(),
        ["report", *map(str, three_models), "--out", str(tmp_path / "lb"), "--resamples", "500"],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "lb" / "leaderboard.md").exists()
    # A leaderboard leaves its inputs' own reports alone unless asked.
    assert not any((d / "report.html").exists() for d in three_models)
    assert "Sig." in result.output
    assert "not significant" in (tmp_path / "lb" / "leaderboard.md").read_text(encoding="utf-8")

    other = build_result_dir(
        tmp_path / "other", model="m-x", items_per_task=3, runs=2, data_hash="sha256:x"
    )
    result = runner.invoke(
        _app(), ["report", str(three_models[0]), str(other), "--out", str(tmp_path / "lb2")]
    )
    assert result.exit_code == 2
    assert "different data hashes" in result.output and "--force" in result.output
    assert not (tmp_path / "lb2").exists()
    result = runner.invoke(
        _app(),
        [
            "report",
            str(three_models[0]),
            str(other),
            "--out",
            str(tmp_path / "lb2"),
            "--force",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "lb2" / "leaderboard.html").exists()


def test_report_command_single_directory(tmp_path: Path):
    out = build_result_dir(tmp_path / "out", items_per_task=3, runs=2)
    result = CliRunner().invoke(_app(), ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert "Overall Average" in result.output and "report.html" in result.output
    result = CliRunner().invoke(_app(), ["report", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "not found" in result.output


def _edit_meta(directory: Path, **changes: object) -> None:
    path = directory / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results["meta"].update(changes)
    path.write_text(json.dumps(results), encoding="utf-8")


def test_report_rebuilds_input_reports_only_when_asked(three_models: list[Path], tmp_path: Path):
    dirs = [build_result_dir(tmp_path / n, model=f"m-{n}", seed=i, items_per_task=3, runs=2) for i, n in enumerate("xy")]
    result = CliRunner().invoke(_app(), ["report", *map(str, dirs), "--out", str(tmp_path / "lb"), "--rebuild-reports"])
    assert result.exit_code == 0, result.output
    assert all((d / "report.md").exists() and (d / "report.html").exists() for d in dirs)


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ({"limit": 2}, "different --limit values"),
        ({"runs": 1}, "different run counts"),
        ({"tasks": ["TaxCalc", "TaxSCQ"]}, "different task sets"),
        ({"profile": "taxben"}, "different scoring profiles"),
    ],
)
def test_leaderboard_refuses_results_computed_differently(tmp_path: Path, change: dict, what: str):
    a = build_result_dir(tmp_path / "a", model="m-a", items_per_task=3, runs=2, seed=1)
    b = build_result_dir(tmp_path / "b", model="m-b", items_per_task=3, runs=2, seed=2)
    _edit_meta(b, **change)
    result = CliRunner().invoke(_app(), ["report", str(a), str(b), "--out", str(tmp_path / "lb")])
    assert result.exit_code == 2, result.output
    assert any(what in line and "--force" in line for line in result.output.splitlines()), result.output
    assert not (tmp_path / "lb").exists()
    forced = CliRunner().invoke(_app(), ["report", str(a), str(b), "--out", str(tmp_path / "lb"), "--force"])
    assert forced.exit_code == 0, forced.output
    md = (tmp_path / "lb" / "leaderboard.md").read_text(encoding="utf-8")
    assert f"Forced comparison despite {what}" in md


def test_delta_is_the_difference_of_ranked_figures_and_errors_are_flagged(tmp_path: Path):
    a = build_result_dir(tmp_path / "a", model="m-a", quality=0.2, items_per_task=4, runs=2, seed=1, hostile=False)
    b = build_result_dir(tmp_path / "b", model="m-b", items_per_task=4, runs=2, seed=2, hostile=False)
    counts = json.loads((b / "results.json").read_text(encoding="utf-8"))["meta"]["counts"]
    _edit_meta(b, counts={**counts, "errors": 7, "scored_predictions": 112})
    _edit_meta(a, counts={**counts, "errors": 0})
    board = build_leaderboard([b, a], resamples=200)
    means = {e.label: json.loads((e.directory / "results.json").read_text(encoding="utf-8"))["overall"]["mean"] for e in board.entries}
    gap = fmt.signed_points(means["m-a"] - means["m-b"])
    md = (save_leaderboard(board, tmp_path / "lb")[0]).read_text(encoding="utf-8")
    first = next(line for line in md.splitlines() if line.startswith("| 1 | m-a"))
    second = next(line for line in md.splitlines() if line.startswith("| 2 | m-b"))
    cells = [c.strip() for c in first.strip("|").split("|")]
    assert cells[6] == gap  # "Δ next" is the difference of the two Overall figures
    paired = board.comparisons[0].test
    assert paired is not None and f"Δ {fmt.signed_points(paired.difference)}, p" in cells[7]
    assert "**7 of 112 errored**" in second and "| 0 |" in first
    assert "Predictions errored (scored 0) for: m-b (7 of 112 errored)" in md
    result = CliRunner().invoke(_app(), ["report", str(a), str(b), "--out", str(tmp_path / "lb2"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert gap in result.output and "7 of 112 errored" in result.output
