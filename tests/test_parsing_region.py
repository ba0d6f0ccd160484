"""Unit tests of the shared answer region, LaTeX plain text, and the units of an amount."""

from __future__ import annotations

from decimal import Decimal

import pytest

from taxpraben.parsing.latex import find_boxed, strip_latex
from taxpraben.parsing.numbers import expects_percent, parse_number, read_gold_number
from taxpraben.parsing.prompt_copy import own_answer
from taxpraben.parsing.region import (
    answer_statements,
    corrected_part,
    is_refusal,
    sentences_last_first,
)
from taxpraben.parsing.units import asked_unit, gold_unit


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        (r"3{,}250\text{元}", "3,250元"),
        (r"$8000$元", " 8000 元"),
        (r"\(13\%\)", " 13% "),
        (r"100000 \times 13\% = 13000", "100000 × 13% = 13000"),
        (r"3\,250", "3250"),
        (r"\frac{1}{2}", "0.5"),  # a fraction of plain numbers is its value (not "1/2": 2 is no answer)
        (r"\frac{1}{3}", "0.333333"),
        (r"\frac{a}{b}", "a/b"),
        (r"\text{\textbf{元}}", "元"),
        ("no latex here", "no latex here"),
    ],
)
def test_strip_latex(text: str, plain: str) -> None:
    assert strip_latex(text) == plain


def test_find_boxed_matches_nested_braces_and_skips_unclosed() -> None:
    text = r"a \boxed{3{,}250\text{元}} b \boxed{C} c \boxed{x"
    assert [inner for _, _, inner in find_boxed(text)] == [r"3{,}250\text{元}", "C"]
    assert find_boxed("no box") == []


def test_statements_latest_final_first_then_summaries_then_consequences() -> None:
    text = "因此销项为13000元。答案：A。综上，选B。不对，应为C"
    kinds = [(s.kind, s.marker) for s in answer_statements(text)]
    assert kinds == [("correction", "不对"), ("answer", "答案"), ("conclusion", "综上"), ("conclusion", "因此")]


@pytest.mark.parametrize(
    ("text", "is_correction"),
    [
        ("答案：A\n不对，应为C", True),
        ("更正：应为C", True),
        ("上面计算有误，应为8000元", True),
        ("答案：A（说法不对的是B项）", False),  # a verdict inside a clause
        ("如果不对，请告知", False),
        ("A项表述有误", False),
    ],
)
def test_what_counts_as_a_correction(text: str, is_correction: bool) -> None:
    assert any(s.kind == "correction" for s in answer_statements(text)) is is_correction


def test_statement_text_empty_line_takes_the_next_line() -> None:
    (statement,) = [s for s in answer_statements("**答案**\n\n8000元") if s.kind == "answer"]
    assert statement.text == "8000元"


def test_negated_markers_are_no_conclusion() -> None:
    assert [s.marker for s in answer_statements("不属于增值税", ["属于"])] == []
    assert [s.marker for s in answer_statements("属于消费税", ["属于"])] == ["属于"]


def test_corrected_part() -> None:
    assert corrected_part("，漏减进项。应为44000元") == "44000元"
    assert corrected_part("，漏减进项") is None


def test_a_lone_option_line_is_no_copy_but_echoed_lines_are() -> None:
    """(What drop_echo did, now own_answer: the copy blanked, the lines kept in place.)"""
    query = "下列哪项适用6%？\nA. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务"
    options = ["有形动产租赁服务", "不动产租赁服务", "信息技术服务"]
    assert own_answer("B. 不动产租赁服务", query, options=options).text == "B. 不动产租赁服务"
    echoed = "A. 有形动产租赁服务\nB. 不动产租赁服务\n我选C"
    assert own_answer(echoed, query, options=options).text.strip() == "我选C"


@pytest.mark.parametrize(
    ("text", "refusal"),
    [("抱歉，我无法回答。", True), ("I'm sorry, but I can't help.", True), ("抱歉，上面算错了，应为8000元", True),
     ("答案：抱歉两字不在其中", False), ("8000元", False)],
)  # fmt: skip
def test_is_refusal(text: str, refusal: bool) -> None:
    assert is_refusal(text) is refusal


def test_sentences_last_first() -> None:
    assert list(sentences_last_first("甲。乙！\n丙")) == ["丙", "乙", "甲"]


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("请计算应纳税额（单位：万元）。", "万元"),
        ("应缴纳多少万元？", "万元"),
        ("以亿元为单位计算", "亿元"),
        ("销售额50万元，应纳税额（元）为多少？", "元"),
        ("销售额50万元，计算应纳税额。", "元"),
    ],
)
def test_asked_unit(query: str, name: str) -> None:
    assert asked_unit(query).name == name


def test_gold_unit_prefers_the_gold_text_and_converts_both_sides() -> None:
    unit = gold_unit("17.14万元", "计算滞纳金（元）")
    assert (unit.name, unit.factor) == ("万元", Decimal(10_000))
    pred = parse_number("171,400.00元")
    assert pred is not None and unit.convert(pred).value == Decimal("17.14")
    bare = parse_number("17.14")
    assert bare is not None and unit.convert(bare).value == Decimal("17.14")  # taken as 万元
    assert unit.show(Decimal("17.140")) == "17.14万元"
    assert gold_unit(28.5, "应缴纳多少万元？").name == "万元"


@pytest.mark.parametrize(
    ("gold", "query", "expected"),
    [("13%", "", True), (0.13, "适用税率是多少", True), (0.5, "计算", None), (8000, "适用税率13%", False)],
)
def test_expects_percent(gold: object, query: str, expected: bool | None) -> None:
    assert expects_percent(read_gold_number(gold), query) is expected


def test_the_conclusion_markers_of_a_task_are_read_first_longest_first() -> None:
    from taxpraben.parsing.region import answer_statements

    text = "分析如下。我的判断：B。综上，选A"
    found = [(st.marker, st.text) for st in answer_statements(text, ["判断", "我的判断", " "]) if st.kind == "conclusion"]
    assert found == [("综上", "，选A"), ("我的判断", "：B")]
    assert [st.marker for st in answer_statements(text) if st.kind == "conclusion"] == ["综上"]
