"""Unit tests of parsing.fields: parsing, flattening, alignment, value matching, field_text."""

from __future__ import annotations

from decimal import Decimal

import pytest

from taxpraben.parsing.fields import (
    AlignedField,
    align_fields,
    field_text,
    field_value_matches,
    flatten_fields,
    parse_fields,
)
from taxpraben.tasks.spec import FieldRule

RULES = [
    FieldRule(name="违法性质", kind="category", synonyms=["定性", "违法类型"]),
    FieldRule(name="少缴税款", kind="number", synonyms=["应补税款"]),
    FieldRule(name="罚款", kind="number", synonyms=["罚款金额"]),
    FieldRule(name="分析理由", kind="text", synonyms=["理由"]),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": "x"}', {"a": 1, "b": "x"}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('{"a": 1, "b": 2,}', {"a": 1, "b": 2}),
        ("{'a': 1, 'b': 'x'}", {"a": 1, "b": "x"}),
        ('好的，结果如下：{"a": 1} 希望有帮助', {"a": 1}),
        ('{"a": 1, "b": "x"', {"a": 1, "b": "x"}),
        ("{“a”：1，“b”：“x”}", {"a": 1, "b": "x"}),
        ('{a: 1, b: "x"}', {"a": 1, "b": "x"}),
        ('{"理由": "属于“偷税”，应处罚"}', {"理由": "属于“偷税”，应处罚"}),
        # the object with most keys wins, the later one on ties
        ('示例：{"a": 1}\n实际：{"a": 2, "b": 3}', {"a": 2, "b": 3}),
        ('{"a": 1}{"a": 2}', {"a": 2}),
        # lists of items
        (
            '[{"字段": "罚款", "值": 500}, {"字段": "定性", "值": "偷税"}]',
            {"罚款": 500, "定性": "偷税"},
        ),
        ('[{"name": "罚款", "value": 500}]', {"罚款": 500}),
        ('[{"a": 1}, {"b": 2, "a": 3}]', {"a": 1, "b": 2}),
    ],
)
def test_parse_fields_json(text: str, expected: dict[str, object]) -> None:
    assert parse_fields(text) == expected


def test_nested_objects_are_kept_and_flattened() -> None:
    parsed = parse_fields('{"罚款": {"金额": 500, "依据": {"条": 63}}, "x": [1, 2]}')
    assert parsed == {
        "罚款": {"金额": 500, "依据": {"条": 63}},
        "罚款.金额": 500,
        "罚款.依据": {"条": 63},
        "罚款.依据.条": 63,
        "x": [1, 2],
    }


def test_lists_of_objects_are_flattened_by_item_name_or_index() -> None:
    parsed = parse_fields(
        '{"方案": [{"名称": "方案一", "税负": 100}, {"税负": 80}], '
        '"明细": [{"字段": "罚款", "值": 5}]}'
    )
    assert parsed is not None
    assert parsed["方案.方案一.税负"] == 100
    assert parsed["方案.2.税负"] == 80
    assert parsed["明细"] == {"罚款": 5}
    assert parsed["明细.罚款"] == 5


def test_flatten_fields_does_not_overwrite() -> None:
    assert flatten_fields({"a.b": 1, "a": {"b": 2}}) == {"a.b": 1, "a": {"b": 2}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("违法性质：偷税\n罚款: 500元", {"违法性质": "偷税", "罚款": "500元"}),
        ("**违法性质**：偷税", {"违法性质": "偷税"}),
        ("**违法性质：**偷税", {"违法性质": "偷税"}),
        ("- **罚款**：500元", {"罚款": "500元"}),
        ("1. 违法性质：偷税\n2) 罚款：500", {"违法性质": "偷税", "罚款": "500"}),
        ("一、违法性质：偷税\n（二）罚款：500", {"违法性质": "偷税", "罚款": "500"}),
        ("【违法性质】偷税", {"违法性质": "偷税"}),
        ("## 分析理由\n第一行\n第二行", {"分析理由": "第一行\n第二行"}),
        ("**分析理由**\n内容", {"分析理由": "内容"}),
        ("分析理由：第一行\n第二行", {"分析理由": "第一行\n第二行"}),
        ("开场白。\n违法性质：偷税", {"违法性质": "偷税"}),
        ("违法性质：偷税\n违法性质：逃税", {"违法性质": "偷税"}),
        # not keys: sentences, numbers, URLs
        ("根据规定，应补税款：500", None),
        ("12:30", None),
        ("见https://example.com", None),
        ("没有任何字段", None),
        ("", None),
        ("<think>违法性质：偷税</think>", None),
    ],
)
def test_parse_fields_lines(text: str, expected: dict[str, object] | None) -> None:
    assert parse_fields(text) == expected


def test_align_passes() -> None:
    pred = {
        "违法性质": "偷税",  # exact
        "少缴税款 ": 100,  # normalised
        "罚款金额": 50,  # synonym
        "备注说明": "……",  # nothing in common: not aligned
    }
    aligned = align_fields(pred, RULES, 0.6)
    assert aligned["违法性质"] == AlignedField("违法性质", "违法性质", "偷税", "exact", 1.0)
    assert aligned["少缴税款"].how == "normalized"
    assert aligned["罚款"].how == "synonym"
    assert aligned["分析理由"].how == "missing"
    assert aligned["分析理由"].value is None


def test_align_fuzzy_best_first_and_threshold() -> None:
    aligned = align_fields({"分析的理由": "a", "少缴的税款": 1}, RULES, 0.6)
    assert aligned["分析理由"].how == "fuzzy"
    assert aligned["分析理由"].similarity == pytest.approx(2 * 4 / 9)
    assert aligned["少缴税款"].key == "少缴的税款"
    assert align_fields({"分析的理由": "a"}, RULES, 0.95)["分析理由"].how == "missing"


def test_each_key_is_used_once_and_exact_wins() -> None:
    rules = [FieldRule(name="理由"), FieldRule(name="分析理由", synonyms=["理由"])]
    aligned = align_fields({"理由": "x"}, rules, 0.6)
    assert aligned["理由"].how == "exact"
    assert aligned["分析理由"].how == "missing"


def test_align_uses_leaf_of_dotted_keys() -> None:
    aligned = align_fields({"结论": {"违法性质": "偷税"}}, RULES, 0.6)
    assert aligned["违法性质"].key == "结论.违法性质"
    assert aligned["违法性质"].how == "normalized"


def test_align_result_order_is_rule_order() -> None:
    assert list(align_fields({}, RULES, 0.6)) == [r.name for r in RULES]


NUMBER = FieldRule(name="罚款", kind="number")
NUMBER0 = FieldRule(name="罚款", kind="number", decimals=0)
CATEGORY = FieldRule(name="违法性质", kind="category")


@pytest.mark.parametrize(
    ("pred", "gold", "rule", "matches"),
    [
        ("1.2万元", 12000, NUMBER, True),
        ("12,000.00", "12000", NUMBER, True),
        (12000, "1.2万", NUMBER, True),
        (Decimal("12000.001"), 12000, NUMBER, True),
        ("罚款=6000×2=12000元", 12000, NUMBER, True),
        ([12000], 12000, NUMBER, True),
        ("12000.4", 12000, NUMBER0, True),
        ("12000.4", 12000, NUMBER, False),
        ("无", 12000, NUMBER, False),
        (None, 12000, NUMBER, False),
        (True, 1, NUMBER, False),
        ("偷税", "偷税", CATEGORY, True),
        (" 偷税。", "偷税", CATEGORY, True),
        ("《偷税》", "偷税", CATEGORY, True),
        ("'偷税'", "偷税", CATEGORY, True),
        ("Tax Evasion", "tax evasion", CATEGORY, True),
        ("偷税", ["偷税", "逃税"], CATEGORY, True),
        ("骗税", ["偷税", "逃税"], CATEGORY, False),
        ("偷税行为", "偷税", CATEGORY, False),
        (None, "偷税", CATEGORY, False),
        ("", "", CATEGORY, False),
    ],
)
def test_field_value_matches(pred: object, gold: object, rule: FieldRule, matches: bool) -> None:
    assert field_value_matches(pred, gold, rule) is matches


def test_field_value_matches_rejects_text_fields_and_bad_golds() -> None:
    with pytest.raises(ValueError):
        field_value_matches("x", "x", FieldRule(name="理由", kind="text"))
    with pytest.raises(ValueError):
        field_value_matches("1", "无", NUMBER)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        ("  文本 ", "文本"),
        (12, "12"),
        (1.50, "1.5"),
        (1e-05, "0.00001"),
        (Decimal("12.500"), "12.5"),
        (True, "是"),
        (False, "否"),
        (["a", 1, None, "b"], "a；1；b"),
        ({"风险": "x", "金额": 5}, "风险：x；金额：5"),
        ({"a": ["x", {"b": 2}]}, "a：x；b：2"),
        (float("nan"), "NaN"),
    ],
)
def test_field_text(value: object, text: str) -> None:
    assert field_text(value) == text
