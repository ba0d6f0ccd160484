"""Unit tests of the field readers (parsing.readers.fields, field_match, fields): parsing, flattening,
alignment, value matching, field_text."""

from __future__ import annotations

from decimal import Decimal

import pytest

from taxpraben.parsing.field_match import (
    AlignedField,
    align_fields,
    field_text,
    field_value_matches,
)
from taxpraben.parsing.readers.fields import flatten_fields, parse_fields
from taxpraben.parsing.record_fields import gold_fields, infer_field_kind, record_fields
from taxpraben.task_spec import FieldRule

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
        ("偷税行为", "偷税", CATEGORY, True),  # the act of the category: the category
        ("偷税或虚开发票", "偷税", CATEGORY, False),
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


# --- real output styles: tables, headings, comments, glosses -------------------------------

QWEN_TABLE = """根据案例，筹划结果如下：

| 项目 | 内容 |
|------|------|
| 方案一税负 | 84,000.00元 |
| 方案二税负 | 115,200.00元 |
| **推荐方案** | 方案一（自营仓储） |
| 节税金额 | 31,200.00元 |

**筹划理由**：自营仓储按房产余值从价计征，税负较低。"""

GPT4O_ENTITY_TABLE = """### 方案对比

| 方案 | 房产税（万元） | 计税方式 |
| :--- | ---: | --- |
| 方案一 | 8.4 | 从价计征 |
| 方案二 | 11.52 | 从租计征 |

结论：推荐方案一。"""

GLM_ONE_ROW_TABLE = """| 序号 | 违法性质 | 少缴税款（元） | 罚款（元） |
|---|---|---|---|
| 1 | 偷税 | 120000 | 60000 |"""

HEADER_IS_A_FIELD = """| 违法性质 | 偷税 |
|---|---|
| 少缴税款 | 12万元 |"""

DEEPSEEK_NUMBERED = """<think>先识别风险，再找依据。</think>
1. 主要风险
公司通过个人账户收款，隐匿收入。
2. 法律依据
《税收征收管理法》第六十三条。
3. 防范建议
（1）停止使用个人账户收款；
（2）补充申报。
1. 规范账户管理
2. 定期核对平台数据"""

CHINESE_NUMBERED = """一、风险识别
隐匿收入。
二、法律依据：《税收征收管理法》第六十三条。
三、防范建议
1. 建立收入台账
2. 定期自查"""

GLM_BOLD_COLON = """**风险识别**：未开票收入未申报。
**法律依据**：《增值税暂行条例》第十九条。
**防范建议**：如实申报。"""

MARKDOWN_HEADINGS = """## 风险识别
未开票收入未申报。

## 法律依据
《增值税暂行条例》第十九条。"""

COMMENTED_JSON = """```json
{
  // 稽查结论
  "违法性质": "偷税", /* 定性 */
  "少缴税款": 120000, // 单位：元
  "罚款": 60000,
}
```"""

VALUE_LIST = """防范建议：
1. 建立台账
2. 定期自查"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            QWEN_TABLE,
            {
                "方案一税负": "84,000.00元", "方案二税负": "115,200.00元", "推荐方案": "方案一(自营仓储)",
                "节税金额": "31,200.00元", "筹划理由": "自营仓储按房产余值从价计征，税负较低。",
            },
            id="qwen-two-column-table",
        ),
        pytest.param(
            GPT4O_ENTITY_TABLE,
            {
                "方案对比": "",
                "方案一": {"房产税": "8.4万元", "计税方式": "从价计征"},
                "方案一.房产税": "8.4万元", "方案一.计税方式": "从价计征",
                "方案二": {"房产税": "11.52万元", "计税方式": "从租计征"},
                "方案二.房产税": "11.52万元", "方案二.计税方式": "从租计征",
                "结论": "推荐方案一。",
            },
            id="gpt4o-entity-rows-unit-in-header",
        ),
        pytest.param(
            GLM_ONE_ROW_TABLE,
            {
                "违法性质": "偷税", "少缴税款": "120000元", "罚款": "60000元",
                "偷税": {"少缴税款": "120000元", "罚款": "60000元"},
                "偷税.少缴税款": "120000元", "偷税.罚款": "60000元",
            },
            id="glm-one-row-table-with-index-column",
        ),
        pytest.param(HEADER_IS_A_FIELD, {"违法性质": "偷税", "少缴税款": "12万元"}, id="header-row-is-a-field"),
        pytest.param(
            "| 方案 | 税负（元） |\n|---|---|\n| 方案一 | 84000 |\n| 方案二 | 115200 |",
            {"方案一": {"税负": "84000元"}, "方案一.税负": "84000元", "方案二": {"税负": "115200元"}, "方案二.税负": "115200元"},
            id="two-columns-name-and-field-are-entity-rows",
        ),
        pytest.param(
            DEEPSEEK_NUMBERED,
            {
                "主要风险": "公司通过个人账户收款，隐匿收入。",
                "法律依据": "《税收征收管理法》第六十三条。",
                "防范建议": "(1)停止使用个人账户收款;\n(2)补充申报。\n1. 规范账户管理\n2. 定期核对平台数据",
            },
            id="deepseek-bare-numbered-headings",
        ),
        pytest.param(
            CHINESE_NUMBERED,
            {
                "风险识别": "隐匿收入。",
                "法律依据": "《税收征收管理法》第六十三条。",
                "防范建议": "1. 建立收入台账\n2. 定期自查",
            },
            id="chinese-numbered-headings-and-arabic-items",
        ),
        pytest.param(
            GLM_BOLD_COLON,
            {"风险识别": "未开票收入未申报。", "法律依据": "《增值税暂行条例》第十九条。", "防范建议": "如实申报。"},
            id="glm-bold-colon",
        ),
        pytest.param(
            MARKDOWN_HEADINGS,
            {"风险识别": "未开票收入未申报。", "法律依据": "《增值税暂行条例》第十九条。"},
            id="markdown-headings",
        ),
        pytest.param(COMMENTED_JSON, {"违法性质": "偷税", "少缴税款": 120000, "罚款": 60000}, id="json-comments"),
        pytest.param(VALUE_LIST, {"防范建议": "1. 建立台账\n2. 定期自查"}, id="numbered-items-are-a-value"),
        # headings with nothing under them are keys with empty values (a gold drops them)
        pytest.param("1. 首先\n2. 其次", {"首先": "", "其次": ""}, id="numbered-headings-without-values"),
        pytest.param("1. 首先\n3. 其次\n内容", {"首先": "3. 其次\n内容"}, id="numbering-must-continue"),
    ],
)
def test_parse_fields_real_styles(text: str, expected: dict[str, object]) -> None:
    assert parse_fields(text) == expected


def test_table_ends_the_value_of_the_heading_before_it() -> None:
    parsed = parse_fields("## 计算结果\n| 项目 | 金额（元） |\n|---|---|\n| 罚款 | 500 |\n说明文字")
    assert parsed == {"计算结果": "", "罚款": "500元"}


PLAN_CATEGORY = FieldRule(name="推荐方案", kind="category")


@pytest.mark.parametrize(
    ("pred", "gold", "matches"),
    [
        ("方案一（自营仓储）", "方案一", True),
        ("方案一", "方案一（自营仓储）", True),
        ("方案一(自营仓储)", "方案一（自营仓储）", True),
        ("方案1（自营）", "方案一", True),
        ("方案二（出租）", "方案一", False),
        ("（自营仓储）", "方案一", False),
        ("方案一自营仓储", "方案一", False),
        # the category in the bracket, a description before it; a label before a colon
        ("自营仓储（方案一）", "方案一", True),
        ("逃税（偷税）", "偷税", True),
        ("出租（方案二）", "方案一", False),
        ("方案一：提供仓储服务", "方案一", True),
        ("方案二：出租", "方案一", False),
        ("建议：方案一", "方案一", True),
        # a short statement of the category
        ("属于偷税", "偷税", True),
        ("偷税行为", "偷税", True),
        ("定性为偷税", "偷税", True),
        ("偷税，依据征管法第63条", "偷税", True),
        ("不构成偷税，属于未按规定申报", "未按规定申报", True),
        ("不构成偷税，属于未按规定申报", "偷税", False),
        ("建议采用方案一", "方案一", True),
        ("方案一更优", "方案一", True),
        ("选择方案一，提供仓储服务", "方案一", True),
        ("不推荐方案二，选方案一", "方案一", True),
        ("不推荐方案一", "方案一", False),
        ("方案一税负更低，但推荐方案二", "方案一", False),
        ("方案二：优于方案一", "方案一", False),
    ],
)
def test_category_gloss_is_dropped(pred: str, gold: str, matches: bool) -> None:
    assert field_value_matches(pred, gold, PLAN_CATEGORY) is matches


# --- the fields of a record -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (76000, "number"),
        (0.5, "number"),
        ("76000元", "number"),
        ("17.14万元", "number"),
        ("13%", "number"),
        ("1,200.00", "number"),
        (True, "category"),
        ("偷税", "category"),
        ("方案一（自营仓储）", "category"),
        ("0.5倍", "category"),
        ("第六十三条", "category"),
        ("偷税，应补税款", "text"),
        ("公司隐匿收入。", "text"),
        ("税" * 31, "text"),
        ("税" * 30, "category"),
        (["增值税", "企业所得税"], "text"),
        ({"a": 1}, "text"),
    ],
)
def test_infer_field_kind(value: object, kind: str) -> None:
    assert infer_field_kind(value) == kind


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"定性": "偷税", "罚款": None, "备注": ""}, {"定性": "偷税"}),
        ({"方案一": {"税负": 1, "说明": "x"}}, {"方案一.税负": 1, "方案一.说明": "x"}),
        ([{"字段": "罚款", "值": 500}], {"罚款": 500}),
        ('{"定性": "偷税"}', {"定性": "偷税"}),
        ("案件定性：偷税\n补税金额：12万元", {"案件定性": "偷税", "补税金额": "12万元"}),
        (GLM_ONE_ROW_TABLE, {"违法性质": "偷税", "少缴税款": "120000元", "罚款": "60000元"}),
        ("该公司构成偷税，应补缴税款。", None),
        (12000, None),
        ({"": "x"}, None),
        # the name a list item is filed under is not a field of its own
        ({"方案": [{"名称": "方案一", "税负": 1}]}, {"方案.方案一.税负": 1}),
    ],
)
def test_gold_fields(answer: object, expected: dict[str, object] | None) -> None:
    assert gold_fields(answer) == expected


def test_record_fields_use_spec_rules_where_named_and_infer_the_rest() -> None:
    gold = {"定性": "偷税", "罚款": 500, "应补缴增值税": "13万元", "处罚倍数": "0.5倍", "稽查说明": "公司隐匿收入，构成偷税。"}
    fields = record_fields(gold, RULES)
    by_name = {f.rule.name: f for f in fields}
    assert list(by_name) == list(gold)  # named by the gold's keys, in its order
    # 定性 is a synonym of 违法性质: the spec rule's kind, and its name is a synonym now
    assert by_name["定性"].spec_name == "违法性质" and not by_name["定性"].inferred
    assert by_name["定性"].rule.kind == "category"
    assert set(by_name["定性"].rule.synonyms) == {"违法性质", "违法类型"}
    assert by_name["罚款"].rule.kind == "number" and by_name["罚款"].spec_name == "罚款"
    assert {n: (f.rule.kind, f.spec_name) for n, f in by_name.items() if f.inferred} == {
        "应补缴增值税": ("number", None),
        "处罚倍数": ("category", None),
        "稽查说明": ("text", None),
    }
    # spec rules the gold lacks (少缴税款, 分析理由) are not part of the record
    assert {f.spec_name for f in fields} == {"违法性质", "罚款", None}


def test_record_fields_exact_name_wins_over_synonym_and_aspects_are_text() -> None:
    fields = record_fields({"理由": "a", "分析理由": "b", "罚款": 1}, RULES)
    assert [(f.gold_key, f.spec_name, f.inferred) for f in fields] == [
        ("理由", None, True), ("分析理由", "分析理由", False), ("罚款", "罚款", False),
    ]
    assert {f.rule.kind for f in record_fields({"罚款": 1, "新方面": "x"}, RULES, aspects=True)} == {"text"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "罚款：260,000元\n少缴税款：260,000元\n\n更正：罚款应为少缴税款的0.5倍，即130,000元。",
            {"罚款": "少缴税款的0.5倍，即130,000元。", "少缴税款": "260,000元"},
            id="correction-replaces-the-field-it-names-first",
        ),
        pytest.param(
            "节税金额：130,000元\n修正：节税金额改为120,000元",
            {"节税金额": "120,000元"},
            id="correction-with-改为",
        ),
        pytest.param("罚款：5000元\n更正：见上文", {"罚款": "5000元", "更正": "见上文"}, id="correction-naming-nothing-stays"),
        pytest.param(
            "| 方案 | 印花税（元） |\n|---|---|\n| 方案一：分别列明 | 3,000 |\n| 方案二（含税） | 3,390 |",
            {"方案一": {"印花税": "3,000元"}, "方案一.印花税": "3,000元", "方案二": {"印花税": "3,390元"}, "方案二.印花税": "3,390元"},
            id="entity-names-lose-their-gloss",
        ),
        pytest.param(
            "| 项目 | 金额/结论 |\n|---|---|\n| 定性结论 | 偷税 |\n| 罚款 | 310,000.00 |",
            {"定性结论": "偷税", "罚款": "310,000.00"},
            id="generic-header-with-slash",
        ),
        pytest.param(
            '[{"方面": "风险识别", "内容": "白条入账"}, {"方面": "法律依据", "内容": "扣除凭证办法"}]',
            {"风险识别": "白条入账", "法律依据": "扣除凭证办法"},
            id="aspect-item-list",
        ),
        pytest.param(
            "## 法律依据\n财税〔2010〕121号：免租期由产权人缴纳房产税。",
            {"法律依据": "财税〔2010〕121号:免租期由产权人缴纳房产税。"},  # NFKC folds the colon
            id="document-number-is-no-key",
        ),
    ],
)
def test_parse_fields_corrections_and_tables(text: str, expected: dict[str, object]) -> None:
    assert parse_fields(text) == expected


@pytest.mark.parametrize(
    ("pred", "gold", "matches"),
    [
        ("260,000元（适用税率13%）", 260000, True),
        ("150,000元(5%+3%+2%=10%)", 150000, True),
        ("无", 0, True),
        ("没有", 0, True),
        ("无", 500, False),
        ("零", 0, True),
    ],
)
def test_number_field_readings(pred: str, gold: object, matches: bool) -> None:
    assert field_value_matches(pred, gold, NUMBER) is matches


@pytest.mark.parametrize(
    ("pred", "matches"),
    [
        ("方案一，即在合同中分别列明价款和增值税", True),
        ("方案一，因为税负低", True),
        ("方案一，方案二均可", False),  # a hedge is not an explanation
    ],
)
def test_category_explained_after_a_comma(pred: str, matches: bool) -> None:
    assert field_value_matches(pred, "方案一", PLAN_CATEGORY) is matches


def test_fuzzy_never_takes_a_rate_or_a_base_for_an_amount() -> None:
    rules = [FieldRule(name="方案一税负", kind="number", synonyms=["方案一应纳税额"])]
    pred = {"方案一.应纳税所得额": 3080000, "方案一.实际税率": "25%", "方案一.企业所得税": 770000}
    assert align_fields(pred, rules, 0.6)["方案一税负"].key == "方案一.企业所得税"
    rate = [FieldRule(name="方案一适用税率", kind="number")]
    assert align_fields(pred, rate, 0.6)["方案一适用税率"].key == "方案一.实际税率"


def test_a_unit_in_the_key_is_the_unit_of_its_numbers() -> None:
    """``{"少缴税款（万元）": 26}`` is 260,000 yuan: the key names the unit of its bare value."""
    from taxpraben.parsing.readers.fields import parse_fields

    read = parse_fields('{"违法性质": "偷税", "少缴税款（万元）": 26, "滞纳金（万元）": "4.745", "罚款(元)": 130000}')
    assert read == {"违法性质": "偷税", "少缴税款": "26万元", "滞纳金": "4.745万元", "罚款": 130000}
    assert field_value_matches(read["少缴税款"], 260000, NUMBER)
    assert field_value_matches(read["滞纳金"], 47450, NUMBER)
    kept = parse_fields('{"税额（万元）": "26万元", "税额": 1}')  # a unit written already; a key taken
    assert kept == {"税额(万元)": "26万元", "税额": 1}  # (cleaned: brackets folded)
