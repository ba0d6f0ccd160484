"""One sample is one frozen value while it is read and scored (issue 38): a kind's prepare
returns what it read (``Prepared``), its finish what it scored (``Finished``), the judge's
edit a new item with the edit in its history; no assignment to an item anywhere in src/."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from taxpraben.kinds import kind_of
from taxpraben.kinds.base import Finished, Item, Prepared, SemanticValues
from taxpraben.records import Record
from taxpraben.results import Prediction
from taxpraben.scoring.items import finalize_item, prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)
SRC = Path(__file__).resolve().parents[1] / "src" / "taxpraben"
NO_SEMANTIC = SemanticValues(None, None)

RECORDS = {
    "TaxSCQ": Record("TaxSCQ", "1", "题目：适用6%税率的是（ ）。\nA. 建筑服务\nB. 信息技术服务\n答案：", "信息技术服务",
                     choices=("建筑服务", "信息技术服务"), gold=1),
    "TaxMCQ": Record("TaxMCQ", "1", "多选题：\nA. 甲\nB. 乙\nC. 丙", "AB"),
    "TaxCalc": Record("TaxCalc", "1", "计算应纳税额（元）。", "44000"),
    "TaxQA": Record("TaxQA", "1", "问：", "增值税是流转税。"),
    "TaxInspect": Record("TaxInspect", "1", "请输出JSON", {"违法性质": "偷税", "少缴税款": 260000, "分析理由": "隐匿收入。"}),
}
OUTPUTS = {"TaxSCQ": "答案：B", "TaxMCQ": "答案：AB", "TaxCalc": "答案：44000元", "TaxQA": "增值税是流转税。",
           "TaxInspect": '{"违法性质": "偷税", "少缴税款": 260000, "分析理由": "隐匿收入"}'}


def test_an_item_cannot_be_assigned() -> None:
    item = prepare_item(REGISTRY["TaxCalc"], RECORDS["TaxCalc"], 0, "答案：44000元")
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.status = "format_failure"  # type: ignore[misc]  # the point: a frozen item refuses it


@pytest.mark.parametrize("task", sorted(RECORDS))
def test_each_kind_returns_what_it_read_and_scored(task: str) -> None:
    spec, record = REGISTRY[task], RECORDS[task]
    blank = Item(record, 0, Prediction(task, "1", 0, OUTPUTS[task]))
    prepared = kind_of(spec).prepare(spec, record, blank, OUTPUTS[task], False)
    assert isinstance(prepared, Prepared) and prepared.status == "ok"
    assert (blank.status, blank.extracted, blank.scores, blank.read_by) == ("ok", None, {}, None)  # left as it was
    item = prepare_item(spec, record, 0, OUTPUTS[task])
    assert (item.status, item.extracted, item.scores) == (prepared.status, prepared.extracted, prepared.scores)
    assert item.read_by == prepared.reading.read_by and item.read_by is not None
    finished = kind_of(spec).finish(spec, item, NO_SEMANTIC)
    assert isinstance(finished, Finished)
    assert item.score is None  # finishing makes a new item
    done = finalize_item(spec, item, NO_SEMANTIC)
    assert done is not item and (done.scores, done.score) == (finished.scores, finished.score)


def test_a_judge_edit_makes_a_new_item_with_its_history() -> None:
    item = prepare_item(REGISTRY["TaxCalc"], RECORDS["TaxCalc"], 0, "这道题考查增值税。")
    assert item.status == "format_failure"
    edited = item.edited("adopted", "judge:m", status="ok", extracted="44000", read_by="judge:m")
    again = edited.edited("audited", "judge:m", judge_reply="44000")
    assert (item.status, item.extracted, item.judge_history) == ("format_failure", None, [])
    assert (edited.status, edited.extracted) == ("ok", "44000")
    assert [h["edit"] for h in again.judge_history] == ["adopted", "audited"]
    assert again.judge_history[0]["before"] == {"status": "format_failure", "extracted": None, "read_by": None}
    assert edited.judge_history == again.judge_history[:1]


def _item_fields() -> set[str]:
    return {f.name for f in dataclasses.fields(Item)}


def test_no_module_assigns_to_an_item() -> None:
    """Every ``x.<item field> = ...`` in src/ is on an object that is no item (a view, an
    accumulator) — those listed here; an item is made new, never assigned."""
    allowed = {("parsing/number_rules.py", "failure"), ("parsing/fields_rules.py", "failure"),
               ("parsing/span_rules.py", "failure"), ("parsing/span_rules.py", "gold"),
               ("report/samples.py", "scores")}
    found = set()
    names = _item_fields()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else []
            flat = [t for target in targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
            for target in flat:
                if isinstance(target, ast.Attribute) and target.attr in names and not (
                        isinstance(target.value, ast.Name) and target.value.id == "self" and path.name != "base.py"):
                    found.add((path.relative_to(SRC).as_posix(), target.attr))
    assert found - allowed == set()
