"""The public Python API (issue 46, item 1; docs/api.md): every name there, the readings and
figures of taxpraben's own rules, and the commands as thin calls of the library."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score
from typer.testing import CliRunner

import taxpraben
from taxpraben.cli import app
from taxpraben.data.files import sample_data_dir

#: The names docs/api.md documents: removing one breaks users' code, and this test.
PUBLIC = {
    "evaluate": ("model", "data", "runs", "tasks", "out", "verbose", "options"),
    "score": ("predictions", "data", "tasks", "out", "verbose", "options"),
    "load_results": ("out_dir",),
    "read_answer": ("task", "record", "output", "run", "profile", "task_dir"),
    "task_figures": ("task", "samples", "scorers", "semantic", "bootstrap", "seed", "task_dir"),
    "bertscore": ("pairs", "settings"),
    "bartscore": ("pairs", "settings"),
    "register_rule": ("name", "kinds", "tier", "confidence", "description", "examples", "leaves_alone", "comparison",
                      "attempts", "decides"),
}
TYPES = {"Results", "Reading", "Record", "Sample", "TaskResult", "JobError"}


def sample_records(task: str) -> list[dict[str, object]]:
    path = sample_data_dir() / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_public_name_is_exported_with_its_parameters() -> None:
    assert set(PUBLIC) | TYPES | {"__version__"} == set(taxpraben.__all__)
    for name, parameters in PUBLIC.items():
        assert tuple(inspect.signature(getattr(taxpraben, name)).parameters) == parameters, name
    for name in TYPES:
        assert isinstance(getattr(taxpraben, name), type), name
    assert hasattr(taxpraben.Record, "from_dict")
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        getattr(taxpraben, "evaluat")  # noqa: B009


def test_importing_taxpraben_loads_no_api_module() -> None:
    code = "import sys, taxpraben; print(sorted(m for m in sys.modules if m.startswith('taxpraben.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


# ---------------------------------------------------------------------------- read_answer


@pytest.mark.parametrize(
    ("task", "output", "value", "read_by", "evidence"),
    [
        ("TaxSCQ", "答案是C", "信息技术服务", "rule:final.answer-statement", "C"),
        ("TaxCalc", "应纳税额为 104,000 元。", "104000", "rule:number.sole-number", "104,000 元"),
        ("TaxMCQ", "答案：A、B和D", "ABD", "rule:final.answer-statement", "答案：A、B和D"),
    ],
)
def test_read_answer_reads_with_the_rule_and_its_evidence(task: str, output: str, value: object, read_by: str,
                                                          evidence: str) -> None:  # fmt: skip
    reading = taxpraben.read_answer(task, sample_records(task)[0], output)
    assert (reading.value, reading.status, reading.read_by) == (value, "ok", read_by)
    assert reading.evidence is not None and output[reading.evidence[0]:reading.evidence[1]] == evidence
    assert reading.evidence_text == evidence and reading.confidence == "high" and reading.failure is None
    assert reading.sample.task == task and reading.sample.prediction == output


def test_read_answer_says_why_nothing_was_read() -> None:
    record = sample_records("TaxSCQ")[0]
    reading = taxpraben.read_answer("taxscq", record, "我不确定")  # a task name in any case
    assert (reading.status, reading.value, reading.read_by, reading.failure) == (
        "format_failure", "missing", None, "no answer found")  # fmt: skip
    assert reading.scores == {"acc": 0.0}
    none = taxpraben.read_answer("TaxSCQ", record, None)
    assert (none.status, none.value, none.read_by) == ("error", "missing", None)  # the label "missing", counted


def test_read_answer_under_taxbens_rules() -> None:
    """TaxBen's profile takes the first choice in list order named anywhere in the output."""
    record = sample_records("TaxSCQ")[0]
    output = "不是有形动产租赁服务，答案是信息技术服务"
    assert taxpraben.read_answer("TaxSCQ", record, output).value == "信息技术服务"
    assert taxpraben.read_answer("TaxSCQ", record, output, profile="taxben").value == "有形动产租赁服务"


def test_record_from_dict_checks_as_a_data_file_does() -> None:
    record = taxpraben.Record.from_dict({"id": 7, "query": "q", "answer": "B", "choices": ["甲", "乙"]}, "TaxSCQ")
    assert (record.id, record.gold, record.gold_label, record.task) == ("7", 1, "乙", "TaxSCQ")
    with pytest.raises(ValueError, match="field 'query': required field is missing"):
        taxpraben.Record.from_dict({"answer": "1"}, "TaxCalc")
    with pytest.raises(KeyError, match="did you mean 'TaxCalc'"):
        taxpraben.Record.from_dict({"query": "q", "answer": "1"}, "TaxCal")


# ---------------------------------------------------------------------------- task_figures


def test_task_figures_are_sklearns_per_run_then_the_mean_over_runs() -> None:
    records = sample_records("TaxSCQ")
    letters = "ABCD"
    outputs = [[f"答案是{letters[(i * 7 + run * 3) % 4]}" if (i + run) % 5 else "不知道" for i in range(len(records))]
               for run in range(3)]  # fmt: skip
    samples = [taxpraben.read_answer("TaxSCQ", rec, outputs[run][i], run=run).sample
               for run in range(3) for i, rec in enumerate(records)]  # fmt: skip
    result = taxpraben.task_figures("TaxSCQ", samples)
    golds = [str(rec["choices"][rec["gold"]]) for rec in records]  # type: ignore[index]
    accs, f1s, macros = [], [], []
    for run in range(3):
        preds = [str(records[i]["choices"][letters.index(o[-1])]) if o != "不知道" else "missing"  # type: ignore[index]
                 for i, o in enumerate(outputs[run])]  # fmt: skip
        labels = sorted(set(golds))
        accs.append(accuracy_score(golds, preds))
        f1s.append(f1_score(golds, preds, labels=labels, average="weighted", zero_division=0))
        macros.append(f1_score(golds, preds, labels=labels, average="macro", zero_division=0))
        figures = result.per_run[run]
        assert figures.metrics is not None
        assert figures.metrics["acc"] == pytest.approx(accs[-1], abs=1e-12)
        assert figures.metrics["f1"] == pytest.approx(f1s[-1], abs=1e-12)
        assert figures.metrics["macro_f1"] == pytest.approx(macros[-1], abs=1e-12)
        assert figures.score == pytest.approx((accs[-1] + f1s[-1]) / 2, abs=1e-12)
    assert result.metrics["f1"].mean == pytest.approx(np.mean(f1s), abs=1e-12)
    assert result.metrics["f1"].std == pytest.approx(np.std(f1s, ddof=1), abs=1e-12)
    assert result.format_failure_rate is not None
    assert result.format_failure_rate.mean == pytest.approx(
        np.mean([sum(o == "不知道" for o in run) / len(records) for run in outputs]), abs=1e-12)  # fmt: skip


def test_task_figures_refuse_runs_that_hold_other_items() -> None:
    records = sample_records("TaxCalc")
    samples = [taxpraben.read_answer("TaxCalc", rec, "1元", run=run).sample for run in (0, 1) for rec in records]
    without = [s for s in samples if not (s.run == 1 and s.id == "1")]
    with pytest.raises(ValueError, match=r"TaxCalc: run 1 does not hold run 0's items \(lacks \['1'\]"):
        taxpraben.task_figures("TaxCalc", without)
    with pytest.raises(ValueError, match="a sample of task 'TaxCalc'"):
        taxpraben.task_figures("TaxSCQ", samples)


# ---------------------------------------------------------------------------- evaluate, score


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def figures_of(tasks: dict[str, taxpraben.TaskResult]) -> dict[str, object]:
    return {name: [(r.metrics, r.score, r.format_failure_rate) for r in task.per_run] for name, task in tasks.items()}


def test_evaluate_is_run_as_a_library_call_and_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options = ("--model", "baseline:random", "--data", "sample", "--runs", "2", "--tasks", "TaxSCQ,TaxCalc,TaxMCQ",
               "--no-semantic", "--no-cache")  # fmt: skip
    invoke("run", *options, "--out", str(tmp_path / "cli"))
    capsys.readouterr()
    results = taxpraben.evaluate("baseline:random", "sample", runs=2, tasks=["TaxSCQ", "TaxCalc", "TaxMCQ"],
                                 no_semantic=True, no_cache=True, out=tmp_path / "api")  # fmt: skip
    assert capsys.readouterr() == ("", "")
    cli = taxpraben.load_results(tmp_path / "cli")
    assert results.out_dir == tmp_path / "api" and set(results.tasks) == {"TaxSCQ", "TaxCalc", "TaxMCQ"}
    assert figures_of(results.tasks) == figures_of(cli.tasks)
    assert [s.to_json() for s in results.samples] == [s.to_json() for s in cli.samples]
    assert {p.name for p in (tmp_path / "api").iterdir()} == {p.name for p in (tmp_path / "cli").iterdir()}
    elsewhere = taxpraben.evaluate("baseline:random", "sample", runs=2, tasks="TaxSCQ", no_semantic=True, no_cache=True)
    assert elsewhere.out_dir is None and elsewhere.tasks["TaxSCQ"].per_run == results.tasks["TaxSCQ"].per_run


def test_options_are_checked_by_name_and_bounds() -> None:
    with pytest.raises(TypeError, match=r"evaluate\(\): unknown option 'concurency'; did you mean 'concurrency'\?"):
        taxpraben.evaluate("baseline:oracle", "sample", concurency=4)
    with pytest.raises(ValueError, match=r"'runs' \(--runs\)"):
        taxpraben.evaluate("baseline:oracle", "sample", runs=0)


def test_score_equals_read_answer_and_task_figures_item_for_item(
    tmp_path: Path, tiny_xlnet_dir: Path, tiny_bart_dir: Path
) -> None:
    """The same outputs scored by `score` and by the library's reading and figures, for a task
    of every kind (the semantic ones with the tiny scorer models)."""
    tasks = ["TaxSCQ", "TaxCalc", "TaxMCQ", "TaxRead", "TaxQA", "TaxRisk", "TaxPlan"]
    made = taxpraben.evaluate("baseline:random", "sample", runs=2, tasks=tasks, no_semantic=True, no_cache=True,
                              no_score=True, out=tmp_path / "gen")  # fmt: skip
    assert made.out_dir is not None
    predictions = made.out_dir / "predictions.jsonl"
    models = {"bertscore_model": str(tiny_xlnet_dir), "bertscore_layer": 2, "bartscore_model": str(tiny_bart_dir)}
    lines = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    from taxpraben.api.semantic import (
        scorer_settings,  # imported here: `import taxpraben` loads no scorer
    )

    settings = scorer_settings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2, bartscore_model=str(tiny_bart_dir))
    by_id = {task: {str(r["id"]): r for r in sample_records(task)} for task in tasks}
    for task in tasks:
        readings = [taxpraben.read_answer(task, by_id[task][p["id"]], p["prediction"], run=p["run"])
                    for p in lines if p["task"] == task]  # fmt: skip
        figures = taxpraben.task_figures(task, [r.sample for r in readings], scorers=settings)
        # One task a time: the scorers' float32 sums depend on which texts share a batch.
        scored = taxpraben.score(predictions, "sample", tasks=task, **models)
        ours = {(s.id, s.run): s for s in scored.samples if s.task == task}
        for reading in readings:
            line = ours[(reading.sample.id, reading.sample.run)]
            assert (reading.value, reading.read_by, reading.evidence) == (line.extracted, line.read_by, line.span)
        expected = scored.tasks[task]
        assert expected.status == "ok", task
        # The scorers compute in float32 (about 7 significant digits) and torch's thread pool may
        # sum in another order from one call to the next: equal to float32 precision, not to the bit.
        close = 1e-6
        for got, want in zip(figures.per_run, expected.per_run, strict=True):
            assert got.metrics is not None and want.metrics is not None
            assert got.metrics.keys() == want.metrics.keys()
            for key, value in want.metrics.items():
                assert got.metrics[key] == pytest.approx(value, abs=close), (task, key)
            assert got.score == pytest.approx(want.score, abs=close)
        assert figures.score.mean == pytest.approx(expected.score.mean, abs=close)


def test_the_scorers_are_built_once_per_process(tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> None:
    from taxpraben.api.semantic import bart_scorer, bert_scorer, scorer_settings
    from taxpraben.metrics.bartscore import BartScorer
    from taxpraben.metrics.bertscore import BertScorer

    settings = scorer_settings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2, bartscore_model=str(tiny_bart_dir))
    pairs = [("应当申报缴纳增值税", "应当按照规定申报缴纳增值税"), ("免征", "免征增值税"), ("应当申报缴纳增值税", "应当按照规定申报缴纳增值税")]
    bert = taxpraben.bertscore(pairs, settings)
    assert bert_scorer(settings) is bert_scorer(settings) and bart_scorer(settings) is bart_scorer(settings)
    direct = BertScorer(str(tiny_xlnet_dir), 2).score([p[0] for p in pairs], [p[1] for p in pairs])
    assert bert == pytest.approx([float(s.f1) for s in direct], abs=1e-6) and bert[0] == bert[2]
    bart = taxpraben.bartscore(pairs, settings)
    assert bart == pytest.approx(BartScorer(str(tiny_bart_dir)).score([p[0] for p in pairs], [p[1] for p in pairs]), abs=1e-6)
    assert all(value < 0 for value in bart)
