"""No Python ``None`` in any report, page or command output (issue 45, item 8), and
``explain`` says why the point was given or withheld.

The sample runs (the oracle and the first-choice baseline on every task of the bundled sample,
two runs, no semantic scorers) are reported, reviewed (a person's "wrong, no answer" among the
verdicts), explained item by item and put on a leaderboard and a diff; none of what that
writes or prints holds the word ``None``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.review.store import REVIEW_FILE, Verdict, append_verdict

NONE = re.compile(r"\bNone\b")
ENV = {"COLUMNS": "200"}


def _run(model: str, out: Path) -> Path:
    result = CliRunner().invoke(app, ["run", "--model", model, "--data", "sample", "--runs", "2", "--no-semantic",
                                      "--out", str(out), "--allow-partial"], env=ENV)
    assert result.exit_code == 0, result.output
    assert not NONE.search(result.output), result.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("none")
    return _run("baseline:oracle", root / "oracle"), _run("baseline:first-choice", root / "fc")


def _items(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def _explain(out: Path, task: str, item_id: str) -> str:
    result = CliRunner().invoke(app, ["explain", str(out), task, item_id], env=ENV)
    assert result.exit_code == 0, result.output
    return result.output


def test_no_none_in_reports_pages_and_command_outputs(runs: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    oracle, fc = runs[0], Path(shutil.copytree(runs[1], tmp_path / "fc"))
    items = _items(fc)
    read = next(x for x in items if x["task"] == "TaxSCQ" and x["status"] == "ok")
    failed = next(x for x in items if x["status"] == "format_failure")
    path = fc / REVIEW_FILE
    append_verdict(path, Verdict(read["task"], read["id"], 0, "ann", "wrong", None))  # the person reads no answer
    append_verdict(path, Verdict(failed["task"], failed["id"], 0, "ann", "right", None, "", None))
    outputs = {}
    for out in (oracle, fc):
        result = CliRunner().invoke(app, ["report", str(out), "--allow-partial"], env=ENV)
        assert result.exit_code == 0, result.output
        outputs[f"report {out.name}"] = result.output
        for name in ("report.md", "report.html", "summary.csv"):
            outputs[f"{out.name}/{name}"] = (out / name).read_text(encoding="utf-8")
        for item in {(x["task"]): x for x in _items(out) if x["run"] == 0}.values():  # one item per task
            outputs[f"explain {out.name} {item['task']}"] = _explain(out, item["task"], item["id"])
    outputs["explain a format failure"] = _explain(fc, failed["task"], failed["id"])
    board = tmp_path / "board"
    result = CliRunner().invoke(app, ["report", str(oracle), str(fc), "--out", str(board), "--allow-partial"], env=ENV)
    assert result.exit_code == 0, result.output
    outputs["leaderboard"] = result.output
    for name in ("leaderboard.md", "leaderboard.html", "summary.csv"):
        if (board / name).exists():
            outputs[f"board/{name}"] = (board / name).read_text(encoding="utf-8")
    diff = CliRunner().invoke(app, ["diff", str(oracle), str(fc), "--out", str(tmp_path / "d")], env=ENV)
    outputs["diff"] = diff.output
    leaks = {name: NONE.findall(text) and text[max(0, NONE.search(text).start() - 80):NONE.search(text).end() + 40]
             for name, text in outputs.items() if NONE.search(text)}
    assert leaks == {}
    assert "person no answer" in outputs["fc/report.md"]  # what used to print as "person None"


def test_explain_shows_the_gold_the_comparison_and_its_outcome(runs: tuple[Path, Path]) -> None:
    _, fc = runs
    scq = next(x for x in _items(fc) if x["task"] == "TaxSCQ" and x["status"] == "ok" and x["score"] == 0)
    shown = _explain(fc, "TaxSCQ", scq["id"])
    assert f"Gold: '{scq['gold']}'" in shown
    assert "Comparison: the option read must be the gold's option" in shown
    assert f"Outcome: not equal: '{scq['extracted']}' is not '{scq['gold']}': the point is withheld" in shown
    assert "Judge: not asked" in shown and "Review: not reviewed" in shown
    start, end = scq["evidence"]
    marked = scq["prediction"][:start] + "⟦" + scq["prediction"][start:end] + "⟧" + scq["prediction"][end:]
    assert marked in shown  # piped: the evidence between plain markers


def test_explain_of_fields_marks_each_fields_span_and_compares_each_field(runs: tuple[Path, Path]) -> None:
    oracle, _ = runs
    item = next(x for x in _items(oracle) if x["task"] == "TaxInspect" and x["status"] == "ok")
    shown = _explain(oracle, "TaxInspect", item["id"])
    numbers = [(name, f) for name, f in item["fields"].items() if f["kind"] == "number"]
    assert numbers
    for name, f in numbers:
        value = f"{f['pred']:g}" if isinstance(f["pred"], float) else str(f["pred"])
        assert re.search(rf"  {name} \(number\): read {re.escape(value)} at \[\d+, \d+\).*; gold .*; equal: 1", shown)
    # one pair of markers a field (its value where the reader read it, the rationale's too), and
    # the header that names them
    assert shown.count("⟦") == len(item["fields"]) + 1
    for f in item["fields"].values():
        start, end = f["evidence"]
        assert "⟦" + item["prediction"][start:end] + "⟧" in shown


def test_explain_shows_a_reviewers_verdict_and_marks_it_stale_when_the_reading_changed(runs, tmp_path) -> None:
    import shutil

    _, fc = runs
    out = Path(shutil.copytree(fc, tmp_path / "fc"))
    (out / REVIEW_FILE).unlink(missing_ok=True)
    from taxpraben.jobs.review import build_session

    session = build_session(out, 5, 0, "ann")
    reading = session.readings[0]
    session.record(0, "wrong", "X")
    shown = _explain(out, reading.task, reading.id)
    label = f" (field {reading.field})" if reading.field else ""
    assert f"Review{label}: ann said wrong, the output gives 'X'" in shown and "stale" not in shown
    lines = _items(out)
    for x in lines:
        if (x["task"], x["id"], x["run"]) == reading.key[:3]:
            x["prediction"] = x["prediction"] + " "
    (out / "samples.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                                       encoding="utf-8")
    assert "[stale: the reading changed since; not counted]" in _explain(out, reading.task, reading.id)
