"""Datasets whose field golds use keys our specs have never seen, or come as text.

The gold's own keys are each record's fields: validate lists the inferred ones as warnings
(one per task and key) and refuses nothing; `taxpraben score` with the golds replayed as
predictions gives EM 1.0 on every exact field, and model-style answers (tables, headings,
numbered sections) are read against the same golds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.data.loader import load_data, validate_data
from taxpraben.scoring.items import WHOLE_ANSWER, prepare_item
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
RATIONALE = "该公司通过个人账户收取货款，未申报销售收入，少缴增值税和企业所得税，经责令限期改正仍未改正，依据《税收征收管理法》第六十三条构成偷税。"

INSPECT = [
    {"id": "i1", "query": "分析以下稽查案件。", "answer": {
        "案件定性": "偷税", "应补缴增值税": 130000, "应补缴企业所得税": "25万元", "处罚倍数": "0.5倍",
        "稽查分析": RATIONALE}},
    {"id": "i2", "query": "分析以下稽查案件。", "answer": json.dumps({
        "案件定性": "虚开增值税专用发票", "涉案税额": "86.4万元", "移送公安": "是", "处理意见": RATIONALE,
    }, ensure_ascii=False)},
    # a text gold in 字段：值 lines
    {"id": "i3", "query": "分析以下稽查案件。", "answer":
        f"案件定性：偷税\n应补缴增值税：76000元\n罚款：38000元\n处理意见：{RATIONALE}"},
    # a text gold as a Markdown table (unit in the header)
    {"id": "i4", "query": "分析以下稽查案件。", "answer":
        "| 项目 | 金额（万元） |\n|---|---|\n| 应补缴增值税 | 17.14 |\n| 加收滞纳金 | 0.86 |\n"
        f"\n稽查分析：{RATIONALE}"},
    # no field can be read: scored as one rationale
    {"id": "i5", "query": "分析以下稽查案件。", "answer": RATIONALE},
    # exact fields only: the item score is EM only
    {"id": "i6", "query": "分析以下稽查案件。", "answer": {"案件定性": "偷税", "应补缴增值税": 5000}},
]
PLAN = [
    {"id": "p1", "query": "比较两个筹划方案。", "answer": {
        "方案": [{"名称": "方案一", "应纳税额": 84000}, {"名称": "方案二", "应纳税额": 115200}],
        "最优选择": "方案一（自营仓储）", "节约税额": "3.12万元", "分析": RATIONALE}},
    {"id": "p2", "query": "比较两个筹划方案。", "answer":
        f"## 最优选择\n方案二\n## 节约税额\n24000元\n## 筹划思路\n{RATIONALE}"},
]
RISK = [
    {"id": "r1", "query": "分析税务风险。", "answer": {
        "涉税风险": "隐匿收入。", "政策依据": "《税收征收管理法》第六十三条。", "应对措施": "如实申报。", "风险等级": "高"}},
    {"id": "r2", "query": "分析税务风险。", "answer":
        "1. 涉税风险\n公司通过个人账户收款。\n2. 政策依据\n《税收征收管理法》第六十三条。\n3. 整改建议\n规范账户。"},
]

#: (task, gold key) -> {kind: records}, written from the data above by hand.
EXPECTED_INFERRED = {
    ("TaxInspect", "案件定性"): {"category": 4},
    ("TaxInspect", "应补缴增值税"): {"number": 4},
    ("TaxInspect", "应补缴企业所得税"): {"number": 1},
    ("TaxInspect", "处罚倍数"): {"category": 1},
    ("TaxInspect", "涉案税额"): {"number": 1},
    ("TaxInspect", "移送公安"): {"category": 1},
    ("TaxInspect", "处理意见"): {"text": 2},
    ("TaxInspect", "加收滞纳金"): {"number": 1},
    ("TaxPlan", "方案.方案一.应纳税额"): {"number": 1},
    ("TaxPlan", "方案.方案二.应纳税额"): {"number": 1},
    ("TaxPlan", "最优选择"): {"category": 2},
    ("TaxPlan", "节约税额"): {"number": 2},
    ("TaxRisk", "涉税风险"): {"text": 2},
    ("TaxRisk", "应对措施"): {"text": 1},
    ("TaxRisk", "风险等级"): {"text": 1},
}
_KIND = {"number (EM)": "number", "category (EM)": "category", "text (BERTScore)": "text"}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "TaxInspect.jsonl", INSPECT)
    write_jsonl(data / "TaxPlan.jsonl", PLAN)
    write_jsonl(data / "TaxRisk.jsonl", RISK)
    return data


def test_unseen_keys_validate_with_one_warning_per_task_and_key(data_dir: Path) -> None:
    _, problems, counts = validate_data(data_dir, REG)
    assert [p for p in problems if p.severity == "error"] == []
    assert counts == {"TaxRisk": 2, "TaxInspect": 6, "TaxPlan": 2}
    inferred: dict[tuple[str, str], dict[str, int]] = {}
    for p in problems:
        m = re.match(r"gold key '(.+?)' is not in the (\w+) spec; kind inferred from its value: (.+) record", p.message)
        if m:
            assert (m[2], m[1]) not in inferred, "one warning per task and key"
            assert Path(p.path).stem == m[2]
            inferred[(m[2], m[1])] = {_KIND[k]: int(n) for k, n in re.findall(r"(\w+ \(\w+\)) in (\d+)", m[3])}
    assert inferred == EXPECTED_INFERRED
    unreadable = [p for p in problems if "no field could be read" in p.message]
    assert [(Path(p.path).name, p.line) for p in unreadable] == [("TaxInspect.jsonl", 5)]
    assert [(p.line, p.message) for p in problems if "instead of (EM + BERTScore) / 2" in p.message] == [
        (6, "1 TaxInspect record(s) have no text (rationale) field, so their item score is EM only "
            "instead of (EM + BERTScore) / 2 (first: id 'i6')")
    ]


def test_validate_command_exits_0_and_prints_the_warnings(data_dir: Path) -> None:
    res = CliRunner().invoke(app, ["validate", "--data", str(data_dir)])
    assert res.exit_code == 0, res.output
    assert "0 error(s)" in res.output
    # compared without whitespace: the console wraps lines wherever the terminal ends
    assert "goldkey'最优选择'isnotintheTaxPlanspec" in "".join(res.output.split())


def _oracle_file(data_dir: Path, path: Path, runs: int) -> Path:
    loaded = load_data(data_dir, REG)
    rows = [
        {"task": task, "id": rec.id, "run": run, "prediction": rec.answer_text}
        for run in range(runs) for task, recs in loaded.records.items() for rec in recs
    ]
    write_jsonl(path, rows)
    return path


def test_score_with_replayed_oracle_gives_em_one_on_every_exact_field(data_dir: Path, tmp_path: Path) -> None:
    preds = _oracle_file(data_dir, tmp_path / "oracle.jsonl", runs=2)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["score", "--data", str(data_dir), "-p", str(preds), "--out", str(out), "--no-semantic"])
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    for task in ("TaxInspect", "TaxPlan"):
        entry = results["tasks"][task]
        assert entry["metrics"]["em"]["runs"] == [1.0, 1.0], task
        assert entry["format_failure_rate"]["mean"] == 0.0, task
        exact = {name: f for name, f in entry["fields"].items() if f["kind"] != "text"}
        assert exact and all(f["em"]["mean"] == 1.0 for f in exact.values()), exact
        assert all(f["format_failure_rate"]["mean"] == 0.0 for f in entry["fields"].values())
    inspect = results["tasks"]["TaxInspect"]["fields"]
    # per-field figures count only the records that have the field
    assert inspect["案件定性"]["n"] == 4 and inspect["案件定性"]["inferred"] is True
    assert inspect["应补缴增值税"]["n"] == 4 and inspect["应补缴增值税"]["kind"] == "number"
    assert inspect["罚款"]["n"] == 1 and inspect["罚款"]["inferred"] is False
    # 稽查分析 is a synonym of the spec's 分析理由: a text field, not inferred, under its own name
    assert inspect["稽查分析"]["n"] == 2 and inspect["稽查分析"]["kind"] == "text"
    assert inspect["稽查分析"]["inferred"] is False
    assert inspect[WHOLE_ANSWER]["n"] == 1
    assert list(inspect)[:2] == ["罚款", "稽查分析"]  # fields the spec knows first, in spec order
    assert set(results["tasks"]["TaxRisk"]["fields"]) == {"政策依据", "整改建议", "涉税风险", "应对措施", "风险等级"}
    by_id = {(s["task"], s["id"]): s for s in samples if s["run"] == 0}
    assert by_id[("TaxInspect", "i6")]["score"] == 1.0  # EM only: no rationale to wait for
    assert "bertscore" not in by_id[("TaxInspect", "i6")]["scores"]
    assert by_id[("TaxInspect", "i5")]["fields"][WHOLE_ANSWER]["status"] == "ok"
    assert by_id[("TaxInspect", "i1")]["fields"]["稽查分析"]["spec_field"] == "分析理由"


def test_score_with_tiny_scorers_gives_bertscore_one_to_the_oracle(
    data_dir: Path, tmp_path: Path, tiny_xlnet_dir: Path, tiny_bart_dir: Path
) -> None:
    preds = _oracle_file(data_dir, tmp_path / "oracle.jsonl", runs=1)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, [
        "score", "--data", str(data_dir), "-p", str(preds), "--out", str(out), "--device", "cpu",
        "--bertscore-model", str(tiny_xlnet_dir), "--bertscore-layer", "2", "--bartscore-model", str(tiny_bart_dir),
    ])
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for task in ("TaxInspect", "TaxPlan", "TaxRisk"):
        entry = results["tasks"][task]
        assert entry["status"] == "ok", task
        assert entry["metrics"]["bertscore"]["mean"] == pytest.approx(1.0, abs=1e-6), task
    # every TaxInspect / TaxPlan item: exact parts 1 and rationale 1, so the item mean is 1
    assert results["tasks"]["TaxInspect"]["score"]["mean"] == pytest.approx(1.0, abs=1e-6)
    assert results["tasks"]["TaxPlan"]["score"]["mean"] == pytest.approx(1.0, abs=1e-6)


# model-style answers to the unseen-key golds: every exact field right
STYLED = [
    ("TaxInspect", "i1", "gpt-4o table",
     "| 字段 | 值 |\n|---|---|\n| 案件定性 | 偷税 |\n| 应补缴增值税 | 13万元 |\n| 应补缴企业所得税 | 250,000 |\n"
     "| 处罚倍数 | 0.5倍 |\n\n**稽查分析**：隐匿收入构成偷税。"),
    ("TaxInspect", "i3", "qwen bold colon lines",
     "**案件定性**：偷税\n**应补缴增值税**：7.6万元\n**罚款**：38,000.00元\n**处理意见**：追缴税款。"),
    ("TaxInspect", "i4", "deepseek json with comments",
     '<think>先算金额</think>```json\n{"应补缴增值税": 171400, // 元\n "加收滞纳金": "8600元",\n "稽查分析": "偷税",}\n```'),
    ("TaxPlan", "p1", "glm entity table",
     "| 方案 | 应纳税额（元） |\n|---|---|\n| 方案一 | 84000 |\n| 方案二 | 115200 |\n\n"
     "最优选择：方案一\n节约税额：31200元\n分析：自营仓储税负低。"),
    ("TaxPlan", "p2", "numbered headings",
     "1. 最优选择\n方案二（出租）\n2. 节约税额\n2.4万元\n3. 筹划思路\n出租税负低。"),
]


@pytest.mark.parametrize(("task", "rid", "style", "text"), STYLED, ids=[s[2] for s in STYLED])
def test_model_styles_score_every_exact_field(data_dir: Path, task: str, rid: str, style: str, text: str) -> None:
    record = next(r for r in load_data(data_dir, REG).records[task] if r.id == rid)
    item = prepare_item(REG[task], record, 0, text, None)
    assert item.status == "ok"
    assert item.fields is not None
    exact = {name: info["score"] for name, info in item.fields.items() if info["kind"] != "text"}
    assert exact and all(score == 1.0 for score in exact.values()), (style, item.fields)
    assert all(info["status"] == "ok" for info in item.fields.values()), (style, item.fields)
