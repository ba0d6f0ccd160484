"""The scoring pipeline end to end on the bundled sample, with real (tiny) scorer models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from taxpraben.data.loader import LoadedData, load_data
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import (
    Hooks,
    PredictionMatchError,
    ScoringSettings,
    build_scorers,
    score_predictions,
    score_to_dir,
)
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
EXACT_METRICS = {"acc", "f1", "macro_f1", "em"}


def gold_prediction(record: Record) -> str:
    spec = REG[record.task]
    if spec.type == "classification":
        return record.gold_label
    return record.answer_text


@pytest.fixture(scope="module")
def sample() -> LoadedData:
    return load_data("sample", REG)


@pytest.fixture(scope="module")
def tiny_settings(tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> ScoringSettings:
    return ScoringSettings(
        bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2, bartscore_model=str(tiny_bart_dir),
        device="cpu", bootstrap=200,
    )


def oracle(sample: LoadedData, runs: int) -> list[Prediction]:
    return [
        Prediction(task, rec.id, run, gold_prediction(rec))
        for run in range(runs)
        for task, recs in sample.records.items()
        for rec in recs
    ]


def test_oracle_scores_one_on_every_exact_metric(sample: LoadedData, tiny_settings: ScoringSettings) -> None:
    scored = score_predictions(sample, oracle(sample, 2), REG, tiny_settings)
    res = scored.results
    assert res["meta"]["runs"] == 2
    assert set(res["tasks"]) == set(REG)
    for task, entry in res["tasks"].items():
        assert entry["status"] == "ok", task
        assert entry["format_failure_rate"]["mean"] == 0, task
        for key, stat in entry["metrics"].items():
            if key in EXACT_METRICS:
                assert stat["mean"] == 1.0, (task, key)
                assert stat["runs"] == [1.0, 1.0]
        if "bertscore" in entry["metrics"]:
            assert entry["metrics"]["bertscore"]["mean"] == pytest.approx(1.0, abs=1e-6), task
        if entry["type"] in ("classification", "structured"):
            assert entry["score"]["mean"] == 1.0
    assert res["overall"]["partial"] is False
    assert len(scored.samples) == 2 * sample.n_records
    assert all(s["status"] == "ok" for s in scored.samples)


def test_task_score_recipes(sample: LoadedData, tiny_settings: ScoringSettings) -> None:
    scored = score_predictions(sample, oracle(sample, 1), REG, tiny_settings)
    res = scored.results
    gen = res["tasks"]["TaxSum"]
    m = gen["metrics"]
    assert gen["score"]["mean"] == pytest.approx((m["bertscore"]["mean"] + m["bartscore"]["mean"]) / 2)
    raws = [s["scores"]["bartscore_raw"] for s in scored.samples if s["task"] == "TaxSum"]
    assert m["bartscore"]["mean"] == pytest.approx(np.mean(np.exp(raws)))
    assert m["bartscore_raw"]["mean"] == pytest.approx(np.mean(raws))
    scores = [e["score"]["mean"] for e in res["tasks"].values()]
    assert res["overall"]["mean"] == pytest.approx(np.mean(scores))
    apply = [e["score"]["mean"] for e in res["tasks"].values() if e["bloom"] == "apply"]
    assert res["groups"]["bloom"]["apply"]["mean"] == pytest.approx(np.mean(apply))
    gen_tasks = [e["score"]["mean"] for e in res["tasks"].values() if e["type"] == "generation"]
    assert res["groups"]["type"]["generation"]["mean"] == pytest.approx(np.mean(gen_tasks))


def _find(sample: LoadedData, task: str) -> list[Record]:
    return sample.records[task]


def test_hand_made_imperfect_predictions(sample: LoadedData) -> None:
    """Known lower values, computed here by hand / with sklearn, for exact tasks."""
    settings = ScoringSettings(semantic=False, bootstrap=0)
    preds: list[Prediction] = []
    # TaxCalc run 0: half right in chatty form, 3 wrong, 2 unparseable, 1 missing.
    calc = _find(sample, "TaxCalc")
    n = len(calc)
    for i, rec in enumerate(calc):
        gold = float(rec.answer)
        if i < n // 2:
            text = f"<think>先算销项税额</think>经计算，应纳税额为{gold:,.2f}元。"
        elif i < n // 2 + 3:
            text = f"答案：{gold + 1:.2f}"
        elif i < n - 1:
            text = "无法确定，需要更多信息。"
        else:
            continue  # missing -> error
        preds.append(Prediction("TaxCalc", rec.id, 0, text))
    # TaxSCQ run 0: answer letters; the first three wrong (shifted), one unparseable.
    scq = _find(sample, "TaxSCQ")
    golds, labels = [], []
    for i, rec in enumerate(scq):
        assert rec.choices is not None and rec.gold is not None
        if i < 3:
            j = (rec.gold + 1) % len(rec.choices)
            text = f"答案：{'ABCD'[j]}"
            label = rec.choices[j]
        elif i == 3:
            text = "这道题我不确定。"
            label = "missing"
        else:
            text = f"正确答案是{'ABCD'[rec.gold]}。"
            label = rec.choices[rec.gold]
        golds.append(rec.gold_label)
        labels.append(label)
        preds.append(Prediction("TaxSCQ", rec.id, 0, text))
    loaded = LoadedData(sample.data_dir, {"TaxCalc": calc, "TaxSCQ": scq}, sample.files, sample.data_hash)
    scored = score_predictions(loaded, preds, REG, settings)
    res = scored.results
    c = res["tasks"]["TaxCalc"]
    assert c["metrics"]["em"]["mean"] == pytest.approx((n // 2) / n)
    assert c["format_failure_rate"]["mean"] == pytest.approx((n - 1 - n // 2 - 3) / n)
    assert c["error_rate"]["mean"] == pytest.approx(1 / n)
    assert scored.match.missing == [("TaxCalc", calc[-1].id, 0)]
    s = res["tasks"]["TaxSCQ"]
    lab = sorted(set(golds))
    assert s["metrics"]["acc"]["mean"] == pytest.approx(accuracy_score(golds, labels))
    assert s["metrics"]["f1"]["mean"] == pytest.approx(f1_score(golds, labels, labels=lab, average="weighted", zero_division=0))
    assert s["metrics"]["macro_f1"]["mean"] == pytest.approx(f1_score(golds, labels, labels=lab, average="macro", zero_division=0))
    assert s["metrics"]["missing_rate"]["mean"] == pytest.approx(1 / len(scq))
    assert s["score"]["mean"] == pytest.approx((s["metrics"]["acc"]["mean"] + s["metrics"]["f1"]["mean"]) / 2)
    statuses = [x["status"] for x in scored.samples if x["task"] == "TaxCalc"]
    assert statuses.count("error") == 1 and statuses.count("format_failure") == n - 1 - n // 2 - 3


def test_unknown_duplicate_and_missing_predictions(sample: LoadedData) -> None:
    settings = ScoringSettings(semantic=False, bootstrap=0)
    calc = sample.records["TaxCalc"]
    loaded = LoadedData(sample.data_dir, {"TaxCalc": calc}, sample.files, sample.data_hash)
    preds = [Prediction("TaxCalc", calc[0].id, 0, "1"), Prediction("TaxNope", "1", 0, "x"),
             Prediction("TaxCalc", "no-such-id", 0, "1"), Prediction("TaxMCQ", "1", 0, "A")]
    scored = score_predictions(loaded, preds, REG, settings)
    msgs = "\n".join(scored.match.messages())
    assert "task 'TaxNope'" in msgs
    assert "TaxCalc/no-such-id/run 0" in msgs
    assert "tasks not selected" in msgs
    assert f"{len(calc) - 1} item(s) have no prediction" in msgs
    assert scored.results["meta"]["counts"]["missing_predictions"] == len(calc) - 1
    with pytest.raises(PredictionMatchError, match="duplicate"):
        score_predictions(loaded, [*preds, Prediction("TaxCalc", calc[0].id, 0, "2")], REG, settings)


def test_expected_runs_make_absent_runs_failures(sample: LoadedData) -> None:
    settings = ScoringSettings(semantic=False, bootstrap=0, runs=3)
    calc = sample.records["TaxCalc"]
    loaded = LoadedData(sample.data_dir, {"TaxCalc": calc}, sample.files, sample.data_hash)
    preds = [Prediction("TaxCalc", r.id, 0, str(r.answer)) for r in calc]
    res = score_predictions(loaded, preds, REG, settings).results
    assert res["tasks"]["TaxCalc"]["metrics"]["em"]["runs"] == [1.0, 0.0, 0.0]
    assert res["tasks"]["TaxCalc"]["error_rate"]["runs"] == [0.0, 1.0, 1.0]


def test_unavailable_scorer_marks_tasks_not_computed(sample: LoadedData, tmp_path: Path) -> None:
    settings = ScoringSettings(bertscore_model=str(tmp_path / "no-model"), bartscore_model=str(tmp_path / "no-bart"), bootstrap=0)
    res = score_predictions(sample, oracle(sample, 1), REG, settings).results
    assert res["tasks"]["TaxSum"]["status"] == "not_computed"
    assert "bertscore" in res["tasks"]["TaxSum"]["reason"] and "bartscore" in res["tasks"]["TaxSum"]["reason"]
    assert "no-model" in res["meta"]["scorers"]["bertscore"]["reason"]
    assert res["tasks"]["TaxInspect"]["status"] == "not_computed"
    assert res["tasks"]["TaxInspect"]["metrics"]["em"]["mean"] == 1.0  # exact part still shown
    assert res["tasks"]["TaxCalc"]["status"] == "ok"
    assert res["overall"]["partial"] is True
    assert "TaxSum" not in res["overall"]["tasks"] and "TaxCalc" in res["overall"]["tasks"]
    assert res["meta"]["scorers"]["bertscore"]["available"] is False


def test_mixed_fields_score_by_hand(sample: LoadedData, tiny_settings: ScoringSettings) -> None:
    rec = sample.records["TaxInspect"][0]
    gold = dict(rec.answer)
    wrong = dict(gold)
    number_fields = [f.name for f in REG["TaxInspect"].field_rules if f.kind == "number"]
    wrong[number_fields[0]] = float(gold[number_fields[0]]) + 100  # one of 4 exact fields wrong
    text = "分析结果如下：\n```json\n" + json.dumps(wrong, ensure_ascii=False) + "\n```"
    loaded = LoadedData(sample.data_dir, {"TaxInspect": [rec]}, sample.files, sample.data_hash)
    res = score_predictions(loaded, [Prediction("TaxInspect", rec.id, 0, text)], REG, tiny_settings)
    line = res.samples[0]
    n_exact = sum(1 for f in REG["TaxInspect"].field_rules if f.kind != "text")
    assert line["scores"]["em"] == pytest.approx((n_exact - 1) / n_exact)
    assert line["scores"]["bertscore"] == pytest.approx(1.0, abs=1e-6)  # rationale copied
    assert line["score"] == pytest.approx(((n_exact - 1) / n_exact + 1.0) / 2, abs=1e-6)
    assert line["fields"][number_fields[0]]["score"] == 0.0


def test_a_mixed_output_with_no_field_read_is_a_format_failure(sample: LoadedData,
                                                                tiny_settings: ScoringSettings) -> None:  # fmt: skip
    """An answer that parses (a JSON object) but holds none of the task's fields read nothing:
    counted in the format-failure rate (it was 0.0%), still scoring 0."""
    rec = sample.records["TaxInspect"][0]
    text = json.dumps({"结论": "企业存在少缴税款的情况", "建议": "补缴税款"}, ensure_ascii=False)
    loaded = LoadedData(sample.data_dir, {"TaxInspect": [rec]}, sample.files, sample.data_hash)
    res = score_predictions(loaded, [Prediction("TaxInspect", rec.id, 0, text)], REG, tiny_settings)
    line = res.samples[0]
    assert line["status"] == "format_failure" and line["failure"] == "no field of the task read"
    assert line["score"] == 0.0
    entry = res.results["tasks"]["TaxInspect"]
    assert entry["format_failure_rate"]["mean"] == 1.0
    assert entry["format_failures"] == {"no field of the task read": 1}


def test_results_files_follow_the_contract(sample: LoadedData, tmp_path: Path) -> None:
    settings = ScoringSettings(semantic=False, bootstrap=100)
    score_to_dir(sample, oracle(sample, 2), REG, tmp_path, settings)
    paths = [tmp_path / "results.json", tmp_path / "samples.jsonl"]
    res = json.loads(paths[0].read_text(encoding="utf-8"))
    assert res["schema_version"] == 1
    for key in ("model", "endpoint", "generation", "runs", "data_dir", "data_hash", "profile", "scorers",
                "package_version", "git_hash", "started_at", "finished_at", "tasks", "counts"):
        assert key in res["meta"], key
    stat = res["tasks"]["TaxCalc"]["score"]
    assert set(stat) == {"mean", "std", "ci95", "runs", "bootstrap_ci95"}
    assert stat["bootstrap_ci95"] == [1.0, 1.0]
    lines = [json.loads(x) for x in paths[1].read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 * sample.n_records
    assert {"task", "id", "run", "status", "prediction", "gold", "extracted", "scores", "score", "error"} <= set(lines[0])
    first = {(x["task"], x["id"]): x for x in lines if x["run"] == 0}
    assert all(first[(t, r.id)]["query"] == r.query for t, recs in sample.records.items() for r in recs)
    assert not any("query" in x for x in lines if x["run"] == 1)


def test_build_scorers_reports_reason(tmp_path: Path) -> None:
    s = build_scorers(ScoringSettings(bertscore_model=str(tmp_path / "x")), {"bertscore"})
    assert s.bert is None and "x" in s.unavailable["bertscore"]
    off = build_scorers(ScoringSettings(semantic=False), {"bertscore", "bartscore"})
    assert off.unavailable["bartscore"].startswith("semantic metrics turned off")


def test_an_answer_repeated_over_runs_is_read_once_and_scored_as_if_read_again(
    sample: LoadedData, tiny_settings: ScoringSettings
) -> None:
    """Runs that gave the same text share one reading (copied per run); every line is what
    reading that run on its own gives, and the copies do not share mutable parts."""
    from taxpraben.scoring.items import prepare_item

    texts = ["答案是B。", "应纳税额为 1,200 元", "```json\n{\"结论\": \"补税\"}\n```", ""]
    preds = [
        Prediction(task, rec.id, run, texts[k % len(texts)] if run < 2 else texts[(k + 1) % len(texts)])
        for run in range(3)
        for task, recs in sample.records.items()
        for k, rec in enumerate(recs)
    ]
    scored = score_predictions(sample, preds, REG, tiny_settings)
    by_key = {(line["task"], line["id"], line["run"]): line for line in scored.samples}
    records = {(t, r.id): r for t, recs in sample.records.items() for r in recs}
    for p in preds:
        line = dict(by_key[(p.task, p.id, p.run)])
        line.pop("query", None)
        alone = prepare_item(REG[p.task], records[(p.task, p.id)], p.run, p, p.error)
        read = {k: v for k, v in alone.to_json().items() if k not in ("scores", "score", "fields")}
        assert {k: v for k, v in line.items() if k in read} == read
    run0 = [line for line in scored.samples if line["run"] == 0]
    run1 = [line for line in scored.samples if line["run"] == 1]
    for a, b in zip(run0, run1, strict=True):
        assert {**a, "run": 1, "query": None} == {**b, "query": None}
        if a.get("fields"):
            assert a["fields"] is not b["fields"]


def test_answers_read_ahead_are_taken_as_read_and_score_the_same(
    sample: LoadedData, tiny_settings: ScoringSettings
) -> None:
    """What a run reads while generating (Readings.read_ahead, run 0 of each record; some
    answers repeated in run 1) is what scoring uses, item for item, and the results and
    sample lines are those of reading everything at the end."""
    from taxpraben.scoring.items import Readings

    texts = ["答案是B。", "应纳税额为 1,200 元", "```json\n{\"结论\": \"补税\"}\n```", ""]
    preds = [
        Prediction(task, rec.id, run, texts[(k + run * (k % 2)) % len(texts)],
                   error="HTTP 500: boom" if k == 3 and run == 1 else None)
        for run in range(2)
        for task, recs in sample.records.items()
        for k, rec in enumerate(recs)
    ]  # fmt: skip
    records = {(t, r.id): r for t, recs in sample.records.items() for r in recs}
    readings = Readings(tiny_settings.profile)
    for p in preds:
        if p.run == 0:
            readings.read_ahead(REG[p.task], records[(p.task, p.id)], p)
    ahead = readings.ahead
    assert ahead == sum(p.run == 0 for p in preds)
    finished = []
    with_readings = score_predictions(sample, preds, REG, tiny_settings,
                                      hooks=Hooks(readings=readings, item_sink=finished.append))
    plain = score_predictions(sample, preds, REG, tiny_settings)
    assert with_readings.samples == plain.samples
    strip = ("finished_at", "started_at")
    assert {k: v for k, v in with_readings.results["meta"].items() if k not in strip} == {
        k: v for k, v in plain.results["meta"].items() if k not in strip
    }
    assert with_readings.results["tasks"] == plain.results["tasks"]
    # Every answer read ahead was taken once (as itself, with its own run's generation),
    # the repeats in run 1 are copies, and the rest was read at the end.
    first = {(p.task, p.id): (p.prediction, p.error) for p in preds if p.run == 0}
    repeated = sum(p.run == 1 and first[(p.task, p.id)] == (p.prediction, p.error) for p in preds)
    assert readings.taken == ahead and repeated > 0
    assert len(finished) == len(preds)
    by_key = {(it.task, it.id, it.run): it for it in finished}  # the finished samples
    for p in preds:
        sample_of_p = by_key[(p.task, p.id, p.run)]
        assert (sample_of_p.prediction, sample_of_p.usage, sample_of_p.finish_reason) == (
            p.prediction, p.usage or None, p.finish_reason)  # its own run's generation
    assert len({id(it) for it in finished}) == len(finished)


def test_readings_of_another_profile_are_not_used(sample: LoadedData) -> None:
    from taxpraben.scoring.items import Readings

    task, recs = next(iter(sample.records.items()))
    p = Prediction(task, recs[0].id, 0, "答案是A")
    readings = Readings("taxben")
    readings.read_ahead(REG[task], recs[0], p)
    score_predictions(sample, [p], REG, ScoringSettings(semantic=False), hooks=Hooks(readings=readings))
    assert readings.taken == 0


def test_the_report_built_from_the_items_is_the_report_read_back_from_the_files(
    sample: LoadedData, tmp_path: Path
) -> None:
    """A run writes report.html's sample browser from the items as they are finished
    (item_sink -> BrowserData.add); reading samples.jsonl back gives the same page, byte for byte."""
    from taxpraben.report import write_reports
    from taxpraben.report.samples import BrowserData
    from taxpraben.report.view import view_of

    texts = ["答案是B。", "应纳税额为 1,200 元。" * 200, "```json\n{\"结论\": \"补税\"}\n```", "我不知道"]
    preds = [
        Prediction(task, rec.id, run, texts[(k + run) % len(texts)], error="HTTP 500" if k == 2 else None)
        for run in range(3)
        for task, recs in sample.records.items()
        for k, rec in enumerate(recs)
        if not (k == 1 and run == 2)  # one missing prediction
    ]
    settings = ScoringSettings(semantic=False, bootstrap=0, runs=3)
    with BrowserData() as browser:
        scored = score_to_dir(sample, preds, REG, tmp_path, settings, hooks=Hooks(item_sink=browser.add))
        assert scored.typed is not None and browser.n_samples == 3 * sum(len(r) for r in sample.records.values())
        write_reports(tmp_path, view_of(scored.typed, tmp_path, written_here=True), browser=browser)
    in_memory = (tmp_path / "report.html").read_text(encoding="utf-8")
    write_reports(tmp_path)  # results.json and samples.jsonl read back
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == in_memory


def test_browser_data_is_built_once() -> None:
    from taxpraben.report.samples import BrowserData

    with BrowserData() as data:
        with pytest.raises(RuntimeError, match="not finished"):
            next(data.json_chunks())
        data.finish(["TaxCalc"])
        with pytest.raises(RuntimeError, match="already finished"):
            data.finish(["TaxCalc"])
        assert b"".join(data.json_chunks()).endswith(b'"items":[]}')


def test_no_semantic_scoring_imports_none_of_the_scorers() -> None:
    """--no-semantic: the scorers are said unavailable without importing their modules (the
    tail of a run without semantic metrics, issue 24)."""
    from helpers.probes import probe

    code = (
        "import json, sys\n"
        "from taxpraben.scoring import ScoringSettings\n"
        "from taxpraben.scoring.semantic import build_scorers\n"
        "s = build_scorers(ScoringSettings(semantic=False), {'bertscore', 'bartscore'})\n"
        "print(json.dumps([s.unavailable, sorted(m for m in sys.modules if m.startswith('taxpraben.metrics.'))]))\n"
    )
    unavailable, loaded = probe(code)
    assert unavailable == {m: "semantic metrics turned off (--no-semantic)" for m in ("bartscore", "bertscore")}
    assert [m for m in loaded if m.split(".")[2] in ("bartscore", "bertscore", "scorer_models")] == []
