"""Where each field of a fields task was read (issue 45, item 8: "for fields, the evidence is the
set of spans each field was read from").

Each expected span is found here by hand in the raw output (``str.index`` of the value after its
key as the output writes it), not by the code under test.
"""

from __future__ import annotations

import pytest

from taxpraben.parsing.readers.fields import field_spans, read_fields
from taxpraben.records import Record
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)


def _after(text: str, lead: str, value: str, start: int = 0) -> tuple[int, int]:
    """The span of ``value`` written right after ``lead`` (found from ``start``)."""
    at = text.index(lead, start) + len(lead)
    assert text[at : at + len(value)] == value
    return at, at + len(value)


def _spans(output: str) -> dict[str, tuple[int, int]]:
    fields, rule = read_fields(output)
    assert fields is not None
    return field_spans(output, output, fields, rule == "fields.json")


#: The TaxPlan case of the issue: three fields taken from JSON, then a rationale paragraph that
#: repeats the numbers (even after the fields' names and a colon).
PLAN_OUTPUT = (
    '{"方案一税负": 84000, "方案二税负": 115200, "推荐方案": "方案一"}\n\n'
    "筹划理由：方案一税负：84000元，方案二税负：115200元，推荐方案：方案一，节税31200元。"
)


def test_the_taxplan_fields_are_the_json_values_not_the_rationale_that_repeats_them() -> None:
    gold = {"方案一税负": 84000, "方案二税负": 115200, "推荐方案": "方案一", "节税金额": 31200,
            "筹划理由": "自营仓储按房产余值计征，税负较低。"}  # fmt: skip
    record = Record("TaxPlan", "p1", "比较两个筹划方案。", gold)
    item = prepare_item(REG["TaxPlan"], record, 0, PLAN_OUTPUT, None)
    assert item.status == "ok" and item.fields is not None
    expected = {
        "方案一税负": _after(PLAN_OUTPUT, '"方案一税负": ', "84000"),
        "方案二税负": _after(PLAN_OUTPUT, '"方案二税负": ', "115200"),
        "推荐方案": _after(PLAN_OUTPUT, '"推荐方案": "', "方案一"),
    }
    json_end = PLAN_OUTPUT.index("}")
    for name, (start, end) in expected.items():
        assert item.fields[name]["evidence"] == [start, end], (name, item.fields[name])
        assert end <= json_end
    for name in ("节税金额", "筹划理由"):  # not in the JSON: not read (JSON fields are read whole)
        assert item.fields[name]["status"] == "missing" and "evidence" not in item.fields[name]
    # the reading's one evidence span (samples.jsonl's [start, end]) runs from the first field's
    # span to the last's, inside the JSON (it ran to the rationale's 方案一)
    assert item.evidence == [expected["方案一税负"][0], expected["推荐方案"][1]]
    line = item.to_json()
    assert line["fields"]["方案二税负"]["evidence"] == list(expected["方案二税负"])


def test_json_spans_are_taken_in_the_raw_output_after_the_reasoning_and_inside_the_fence() -> None:
    output = ('<think>草稿：{"少缴税款": 260000, "罚款": 130000}</think>\n'
              '最终答案：\n```json\n{"少缴税款": 260000, "罚款": 130000, "违法性质": "偷税"}\n```\n'
              "说明：少缴税款：260000元。")  # fmt: skip
    fields, rule = read_fields(output)
    assert rule == "fields.json" and fields is not None
    fence = output.index("```json")
    spans = field_spans(output, output, fields, True)
    assert spans == {
        "少缴税款": _after(output, '"少缴税款": ', "260000", fence),
        "罚款": _after(output, '"罚款": ', "130000", fence),
        "违法性质": _after(output, '"违法性质": "', "偷税", fence),
    }


def test_full_width_characters_are_spanned_as_the_output_writes_them() -> None:
    output = "违法性质：偷税\n少缴税款：２６００００元\n罚款：１３００００元"
    assert _spans(output) == {
        "违法性质": _after(output, "违法性质：", "偷税"),
        "少缴税款": _after(output, "少缴税款：", "２６００００元"),
        "罚款": _after(output, "罚款：", "１３００００元"),
    }


@pytest.mark.parametrize(("output", "expected"), [
    # key lines: a later line that repeats a key is not read (the first value is kept)
    ("违法性质：偷税\n少缴税款：260000元\n分析：经核实，少缴税款：260000元。\n少缴税款：1元",
     {"违法性质": ("违法性质：", "偷税"), "少缴税款": ("少缴税款：", "260000元"),
      "分析": ("分析：", "经核实，少缴税款：260000元。")}),
    # emphasis and brackets around keys
    ("**违法性质**：偷税\n【罚款】130000元", {"违法性质": ("**：", "偷税"), "罚款": ("】", "130000元")}),
    # headings: the value on the lines below
    ("## 最优选择\n方案二\n## 节约税额\n24000元", {"最优选择": ("最优选择\n", "方案二"), "节约税额": ("节约税额\n", "24000元")}),
    # a multi-line value: from its first line to its last
    ("分析：第一段。\n第二段。\n罚款：1元", {"分析": ("分析：", "第一段。\n第二段。"), "罚款": ("罚款：", "1元")}),
    # a key with its unit: the number the output writes, without the unit the reader added
    ('{"少缴税款（万元）": 26, "违法性质": "偷税"}', {"少缴税款": ("（万元）\": ", "26"), "违法性质": ('性质": "', "偷税")}),
    # a list of name/value items
    ('[{"字段": "罚款", "值": 500}, {"字段": "违法性质", "值": "偷税"}]',
     {"罚款": ('"值": ', "500"), "违法性质": ('"违法性质", "值": "', "偷税")}),
    # a correction replaces a field's value: its span is the corrected value
    ("罚款：120000元\n更正：罚款应为130,000元", {"罚款": ("罚款应为", "130,000元")}),
    # a two-column table, a row per field
    ("| 项目 | 金额 |\n|---|---|\n| 少缴税款 | 260000 |\n| 罚款 | 130000 |",
     {"少缴税款": ("少缴税款 | ", "260000"), "罚款": ("罚款 | ", "130000")}),
])  # fmt: skip
def test_each_field_is_spanned_where_its_key_leads_to_it(output: str, expected: dict[str, tuple[str, str]]) -> None:
    spans = _spans(output)
    assert {k: spans.get(k) for k in expected} == {k: _after(output, lead, v) for k, (lead, v) in expected.items()}


def test_a_table_with_a_column_per_field_spans_each_cell() -> None:
    output = ("| 违法性质 | 少缴税款（万元） | 罚款（万元） |\n|---|---|---|\n| 偷税 | 45 | 22.5 |\n\n"
              "分析理由：个人消费不得税前扣除，少缴税款45万元。")  # fmt: skip
    row = output.index("| 偷税")
    spans = _spans(output)
    assert {k: spans.get(k) for k in ("违法性质", "少缴税款", "罚款", "分析理由")} == {
        "违法性质": _after(output, "| ", "偷税", row),
        "少缴税款": _after(output, "偷税 | ", "45", row),
        "罚款": _after(output, "45 | ", "22.5", row),
        "分析理由": _after(output, "分析理由：", output.split("分析理由：")[1]),
    }


def test_an_entity_table_spans_each_entitys_cell() -> None:
    output = "| 方案 | 税负（元） |\n|---|---|\n| 方案一（自营仓储） | 84,000 |\n| 方案二 | 115,200 |"
    fields, _ = read_fields(output)
    assert fields is not None and fields["方案一.税负"] == "84,000元"
    spans = field_spans(output, output, fields, False, ["方案一.税负", "方案二.税负"])
    assert spans == {"方案一.税负": _after(output, "| ", "84,000", output.index("方案一")),
                     "方案二.税负": _after(output, "| ", "115,200", output.index("方案二"))}


def test_a_value_not_found_after_its_key_has_no_span() -> None:
    fields = {"罚款": 500, "方案": {"名称": "方案一"}}
    assert field_spans("罚款合计为500元。", "罚款合计为500元。", fields, True) == {}
