"""The command line as a user meets it: tasks, score (oracle and imperfect files), errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben import __version__
from taxpraben.cli import app
from taxpraben.data.loader import load_data
from taxpraben.tasks import OutputType, load_registry

REG = load_registry(use_env=False)
runner = CliRunner()


def test_version_and_help() -> None:
    out = runner.invoke(app, ["--version"])
    assert out.exit_code == 0 and __version__ in out.output
    for cmd in ("tasks", "validate", "run", "score", "report"):
        res = runner.invoke(app, [cmd, "--help"])
        assert res.exit_code == 0, (cmd, res.output)


def test_tasks_lists_the_14_datasets() -> None:
    res = runner.invoke(app, ["tasks"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for name in REG:
        assert name in res.output
    assert "classification" in res.output and "create" in res.output


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def exact_tasks() -> str:
    return ",".join(n for n, s in REG.items() if s.type in (OutputType.classification, OutputType.structured))


def test_score_oracle_gives_one_on_exact_tasks(tmp_path: Path, exact_tasks: str) -> None:
    data = load_data("sample", REG, exact_tasks.split(","))
    rows = [
        {"task": t, "id": r.id, "run": run, "prediction": r.gold_label if REG[t].type is OutputType.classification else r.answer_text}
        for run in range(2) for t, recs in data.records.items() for r in recs
    ]
    preds = _write(tmp_path / "p.jsonl", rows)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", exact_tasks, "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    results = json.loads((tmp_path / "o/results.json").read_text(encoding="utf-8"))
    assert results["overall"]["mean"] == 1.0
    assert results["meta"]["runs"] == 2
    for name in ("results.json", "samples.jsonl", "report.md", "report.html"):
        assert (tmp_path / "o" / name).is_file()


def test_score_imperfect_file_known_values(tmp_path: Path) -> None:
    data = load_data("sample", REG, ["TaxMCQ"])
    recs = data.records["TaxMCQ"]
    rows = []
    for i, r in enumerate(recs):
        if i % 2 == 0:
            text = f"正确答案：{'、'.join(r.answer)}"  # right, other format
        elif i % 3 == 0:
            text = "我认为这道题无法判断。"  # no letters: format failure
        else:
            text = f"答案：{r.answer[0]}"  # a strict subset: wrong (gold has 2+ letters)
        rows.append({"task": "TaxMCQ", "id": r.id, "run": 0, "prediction": text})
    preds = _write(tmp_path / "p.jsonl", rows)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxMCQ", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    task = json.loads((tmp_path / "o/results.json").read_text(encoding="utf-8"))["tasks"]["TaxMCQ"]
    n = len(recs)
    right = sum(1 for i in range(n) if i % 2 == 0)
    fails = sum(1 for i in range(n) if i % 2 == 1 and i % 3 == 0)
    assert task["metrics"]["em"]["mean"] == pytest.approx(right / n)
    assert task["format_failure_rate"]["mean"] == pytest.approx(fails / n)


def test_score_refuses_duplicates_and_bad_files(tmp_path: Path) -> None:
    dup = _write(tmp_path / "d.jsonl", [{"task": "TaxCalc", "id": "1", "run": 0, "prediction": "1"}] * 2)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(dup), "--tasks", "TaxCalc", "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "duplicate" in res.output
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"task": "TaxCalc", "id": "1", "run": 0, "prediction": "1"}\n{"task": \n', encoding="utf-8")
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(bad), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "b.jsonl:2" in res.output.replace("\n", "")
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(dup), "--tasks", "TaxCalk"])
    assert res.exit_code == 1 and "did you mean 'TaxCalc'" in res.output
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(dup), "--profile", "helm"])
    assert res.exit_code == 2 and "unknown scoring profile" in res.output


def test_taxben_profile_differs_where_it_should(tmp_path: Path) -> None:
    data = load_data("sample", REG, ["TaxRead"])
    rows = [{"task": "TaxRead", "id": r.id, "run": 0, "prediction": f"根据材料，答案是{r.answer_text}，依据如上所述。"} for r in data.records["TaxRead"]]
    preds = _write(tmp_path / "p.jsonl", rows)
    scores = {}
    for profile in ("taxpraben", "taxben"):
        out = tmp_path / profile
        res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxRead", "--profile", profile, "--out", str(out)])
        assert res.exit_code == 0, res.output
        scores[profile] = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["TaxRead"]["metrics"]["em"]["mean"]
    assert scores["taxben"] == 1.0  # gold-in-output
    assert scores["taxpraben"] == 1.0  # the span after 答案 ends at the clause


def test_scorer_options_reach_the_scorers_and_results(tmp_path: Path, tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> None:
    data = load_data("sample", REG, ["TaxSum"])
    rows = [{"task": "TaxSum", "id": r.id, "run": 0, "prediction": r.answer_text[: len(r.answer_text) // 2]}
            for r in data.records["TaxSum"]]
    preds = _write(tmp_path / "p.jsonl", rows)
    means = {}
    for idf in (False, True):
        out = tmp_path / f"idf{idf}"
        args = ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxSum", "--out", str(out),
                "--bertscore-model", str(tiny_xlnet_dir), "--bertscore-layer", "2", "--bertscore-batch-size", "4",
                "--bartscore-model", str(tiny_bart_dir), "--device", "cpu"]
        res = runner.invoke(app, args + (["--bertscore-idf"] if idf else []))
        assert res.exit_code == 0, res.output
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        bert = results["meta"]["scorers"]["bertscore"]
        assert bert["idf"] is idf and bert["layer"] == 2 and bert["available"] is True
        means[idf] = results["tasks"]["TaxSum"]["metrics"]["bertscore"]["mean"]
    assert means[True] != means[False]


def test_scorer_dtype_reaches_the_scorers_and_results(tmp_path: Path, tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> None:
    data = load_data("sample", REG, ["TaxSum"])
    rows = [{"task": "TaxSum", "id": r.id, "run": 0, "prediction": r.answer_text[: len(r.answer_text) // 2]}
            for r in data.records["TaxSum"]]
    preds = _write(tmp_path / "p.jsonl", rows)
    scores = {}
    for dtype in ("float32", "bf16"):
        out = tmp_path / dtype
        args = ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxSum", "--out", str(out),
                "--bertscore-model", str(tiny_xlnet_dir), "--bertscore-layer", "2",
                "--bartscore-model", str(tiny_bart_dir), "--device", "cpu", "--scorer-dtype", dtype]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        for metric in ("bertscore", "bartscore"):
            info = results["meta"]["scorers"][metric]
            assert info["dtype"] == dtype and info["exact"] is (dtype == "float32")
        scores[dtype] = results["tasks"]["TaxSum"]["metrics"]["bartscore_raw"]["mean"]
    assert scores["bf16"] != scores["float32"]
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--scorer-dtype", "fp8"])
    assert res.exit_code == 2 and "unknown scorer dtype" in res.output
