"""TaxBen's rules are a named chain set of their own (``taxben``): a task spec may name it
(``reading: {chain: taxben}``), ``--profile taxben`` reads every task with it, an unknown
chain name is refused when the spec is loaded, and every TaxBen reading names its rule
(``rule:taxben.*``) with an evidence span of the raw output holding what it read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.kinds.base import chain_for
from taxpraben.kinds.profiles import RULES as PROFILES
from taxpraben.records import Record
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry
from taxpraben.tasks.registry import TaskSpecError

REGISTRY = load_registry(use_env=False)
SAMPLE = Path(__file__).resolve().parents[1] / "src" / "taxpraben" / "data" / "sample"

SPEC = """name: {name}
name_zh: 我的测验
description: Single-choice questions read by TaxBen's rules.
type: classification
bloom: apply
metrics: [acc]
classification:
  option_letters: true
reading:
  chain: {chain}
"""
CHOICES = ("VAT 增值税", "信息技术服务", "建筑服务")
OUTPUT = "C. 建筑服务？不对，信息技术服务适用 vat 增值税"


def _registry(root: Path, chain: str, name: str = "MyQuiz") -> Any:
    tasks = root / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / f"{name}.yaml").write_text(SPEC.format(name=name, chain=chain), encoding="utf-8")
    return load_registry([tasks], use_env=False), tasks / f"{name}.yaml"


def _record(task: str = "MyQuiz") -> Record:
    return Record(task, "q1", "题目：适用6%税率的是（ ）。\nA. VAT 增值税\nB. 信息技术服务\nC. 建筑服务\n答案：", "信息技术服务",
                  choices=CHOICES, gold=1)


def test_a_spec_naming_the_taxben_chain_reads_by_taxbens_rules(tmp_path: Path) -> None:
    registry, _ = _registry(tmp_path, "taxben")
    spec = registry["MyQuiz"]
    assert spec.reading_chain == "taxben"
    assert chain_for(spec, "label") == ("taxben.choice-substring", "veto.no-answer")
    item = prepare_item(spec, _record(), 0, OUTPUT)
    # C3: the first choice in list order found in the lower-cased output, lower-cased; C1: the gold lower-cased
    assert (item.label_pred, item.label_gold, item.scores) == ("vat 增值税", "信息技术服务", {"acc": 0.0})
    assert item.read_by == "rule:taxben.choice-substring" and item.confidence == "high"
    assert item.evidence is not None and OUTPUT[item.evidence[0]:item.evidence[1]] == "vat 增值税"
    # the same output read by the chain set named taxpraben: the option it settles on
    default, _ = _registry(tmp_path / "d", "taxpraben")
    ours = prepare_item(default["MyQuiz"], _record(), 0, OUTPUT)
    assert ours.label_pred == "信息技术服务" and not (ours.read_by or "").startswith("rule:taxben.")


def test_the_taxben_profile_reads_with_the_taxben_chain_whatever_the_spec_says(tmp_path: Path) -> None:
    registry, _ = _registry(tmp_path, "[choice.bare-answer, veto.no-answer]")
    spec = registry["MyQuiz"]
    by_profile = prepare_item(spec, _record(), 0, OUTPUT, None, profile="taxben")
    by_spec = prepare_item(spec, _record(), 0, OUTPUT)
    assert (by_profile.read_by, by_profile.label_pred) == ("rule:taxben.choice-substring", "vat 增值税")
    assert by_spec.status == "format_failure" and by_spec.veto == "veto.no-answer"
    assert (PROFILES["taxben"].chain, PROFILES["taxpraben"].chain) == ("taxben", None)


@pytest.mark.parametrize("chain", ["taxbenn", "TaxBen"])
def test_an_unknown_chain_name_is_refused_at_load_naming_file_task_and_choices(tmp_path: Path, chain: str) -> None:
    with pytest.raises(TaskSpecError) as caught:
        _registry(tmp_path, chain)
    message = str(caught.value)
    path = tmp_path / "tasks" / "MyQuiz.yaml"
    assert str(path) in message and "task MyQuiz" in message and "reading.chain" in message
    assert f"{chain!r} is no chain set" in message and "taxpraben, taxben" in message


def test_a_chain_mixing_taxbens_rules_with_ours_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskSpecError) as caught:
        _registry(tmp_path, "[taxben.choice-substring, choice.bare-answer, veto.no-answer]")
    assert "compare with the gold in different ways" in str(caught.value)
    # TaxBen's rules alone, as a list, are a chain like any other
    registry, _ = _registry(tmp_path / "ok", "[taxben.choice-substring, veto.no-answer]")
    assert prepare_item(registry["MyQuiz"], _record(), 0, OUTPUT).label_pred == "vat 增值税"


CASES = [  # task, record fields, raw output, rule, text the evidence holds, extracted
    ("TaxMCQ", {"answer": "ABD"}, "<think>想想</think>本题选 A、B、D。", "taxben.letter-run", "A、B、D", "ABD"),
    ("TaxCalc", {"answer": "44000"}, " 44000 ", "taxben.whole-output-float", " 44000 ", "44000.00"),
    ("TaxCalc", {"answer": "44000"}, "销项104000元，应纳税额=104000-60000=44000元。", "taxben.yuan-amount", "44000元",
     "44000.00"),
    ("TaxRead", {"answer": "万分之五"}, "答：按日加收万分之五的滞纳金", "taxben.gold-substring", "万分之五", "万分之五"),
    ("TaxRead", {"answer": "万分之五"}, "按日加收千分之五", "taxben.gold-absent", "按日加收千分之五", None),
    ("TaxSCQ", {"answer": "信息技术服务", "choices": ("不动产租赁服务", "信息技术服务"), "gold": 1},
     "<think>A?</think>答案：B. 信息技术服务", "taxben.choice-substring", "信息技术服务", "信息技术服务"),
    ("TaxQA", {"answer": "增值税是流转税。"}, "<think>想</think>增值税是流转税。", "taxben.raw-output",
     "<think>想</think>增值税是流转税。", None),
]


@pytest.mark.parametrize(("task", "fields", "output", "rule", "held", "extracted"), CASES,
                         ids=[c[3] for c in CASES])
def test_taxben_readings_name_their_rule_with_evidence_of_what_they_read(
        task: str, fields: dict[str, Any], output: str, rule: str, held: str, extracted: str | None) -> None:
    record = Record(task, "1", "问题为：多少？", fields["answer"], choices=fields.get("choices"), gold=fields.get("gold"))
    item = prepare_item(REGISTRY[task], record, 0, output, None, profile="taxben")
    assert item.status == "ok"
    assert (item.read_by, item.confidence) == (f"rule:{rule}", "high")
    assert item.evidence is not None
    start, end = item.evidence
    assert output[start:end] == held
    if task != "TaxQA":
        assert item.extracted == extracted


def test_taxben_format_failures_name_their_veto() -> None:
    record = Record("TaxCalc", "1", "问题为：多少？", "44000")
    item = prepare_item(REGISTRY["TaxCalc"], record, 0, "应纳税额为44000", None, profile="taxben")
    assert (item.status, item.extracted, item.veto, item.read_by, item.evidence) == (
        "format_failure", "未知", "veto.no-answer", None, None)


def test_explain_names_the_chain_a_taxben_run_read_with(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    shutil.copytree(SAMPLE, data)
    result = CliRunner().invoke(app, ["run", "--model", "baseline:first-choice", "--data", str(data), "--runs", "1",
                                      "--tasks", "TaxMCQ", "--out", str(out), "--no-semantic", "--profile", "taxben"])
    assert result.exit_code in (0, 3, 4), result.output
    first = json.loads((out / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    shown = CliRunner().invoke(app, ["explain", str(out), "TaxMCQ", str(first["id"])], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "chain taxben (profile taxben)" in shown.output
    assert "taxben.letter-run" in shown.output and "letters.last-group" not in shown.output
