"""Unit tests of parsing.numbers and parsing.readers.number: reading, finding, final answer, equality."""

from __future__ import annotations

from decimal import Decimal

import pytest

from taxpraben.parsing.numbers import (
    NumberMatch,
    find_numbers,
    numbers_equal,
    parse_gold_number,
    parse_number,
)
from taxpraben.parsing.readers.number import extract_final_number


def pm(value: str, percent: bool = False) -> NumberMatch:
    return NumberMatch(Decimal(value), percent, 0, 0, value)


@pytest.mark.parametrize(
    ("text", "value", "percent"),
    [
        ("13000", "13000", False),
        ("12,000.00元", "12000", False),
        ("1,234,567.89", "1234567.89", False),
        ("1.2万元", "12000", False),
        ("1.2 万元", "12000", False),
        ("3亿", "300000000", False),
        ("2.5亿元", "250000000", False),
        ("1万亿", "1000000000000", False),
        ("3千万", "30000000", False),
        ("5百万元", "5000000", False),
        ("3千元", "3000", False),
        ("12%", "12", True),
        ("12.5 %", "12.5", True),
        ("１２％", "12", True),
        ("百分之十二", "12", True),
        ("-300", "-300", False),
        ("+300", "300", False),
        ("负300", "-300", False),
        ("(300)", "-300", False),
        ("（300）", "-300", False),
        ("(1,200.00)元", "-1200", False),
        ("（1,200.00元）", "-1200", False),
        ("(-300)", "-300", False),
        ("一万二千元", "12000", False),
        ("一万二千", "12000", False),
        ("十二万五千", "125000", False),
        ("三点五", "3.5", False),
        ("零点一二", "0.12", False),
        ("二十三万四千五百六十七点八九", "234567.89", False),
        ("两千", "2000", False),
        ("壹万贰仟元", "12000", False),
        ("负三百", "-300", False),
        ("十", "10", False),
        ("零", "0", False),
        ("１２３４", "1234", False),
        ("1.2e4", "12000", False),
        ("1.2E+04", "12000", False),
        ("5e-2", "0.05", False),
        ("1.2×10^4", "12000", False),
        ("1.2x10^4", "12000", False),
        ("1.2*10**4", "12000", False),
        ("1.2×10⁴", "12000", False),
        ("10⁴", "10000", False),
        (".5", "0.5", False),
        ("约 ¥12,000.00 元", "12000", False),
        ("RMB 500", "500", False),
        ("**13000元**", "13000", False),
        ("13000元。", "13000", False),
        ('"13000"', "13000", False),
    ],
)
def test_parse_number(text: str, value: str, percent: bool) -> None:
    found = parse_number(text)
    assert found is not None
    assert found.value == Decimal(value)
    assert found.is_percent is percent


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "abc",
        "应纳税额为13000元",
        "100与200",
        "3000，500",
        "一般",
        "万",
        "千万",
        "答案",
        None,
        12,
    ],
)
def test_parse_number_rejects(text: object) -> None:
    assert parse_number(text) is None  # type: ignore[arg-type]


def test_find_numbers_in_order_with_offsets() -> None:
    text = "税率13%，三十日内缴纳1,200元；13000-5000=8000"
    found = find_numbers(text)
    assert [(n.value, n.is_percent) for n in found] == [
        (Decimal(13), True),
        (Decimal(30), False),
        (Decimal(1200), False),
        (Decimal(13000), False),
        (Decimal(5000), False),
        (Decimal(8000), False),
    ]
    for n in found:
        assert text[n.start : n.end] == n.text


@pytest.mark.parametrize(
    ("text", "values"),
    [
        # Chinese words made of numeral characters are not numbers
        ("一般纳税人统一适用", []),
        ("十分重要，千万注意，万一出错", []),
        ("三十日内", ["30"]),
        ("一万多元", ["10000"]),
        # a minus after a digit, letter, ) or % is an operator
        ("13000-5000", ["13000", "5000"]),
        ("(1-30%)", ["1", "30"]),
        ("20%-1410", ["20", "1410"]),
        ("=-300", ["-300"]),
        ("- 13000", ["13000"]),
        # parentheses in running text are not accounting negatives
        ("(1)税额(300)", ["1", "300"]),
        # the Chinese comma is not a thousands separator, a comma needs groups of three
        ("3000，500", ["3000", "500"]),
        ("1,2345", ["1", "2345"]),
        ("5千克", ["5"]),
        ("１２，０００", ["12", "0"]),
        ("12万5千", ["125000"]),  # one amount, as a grader reads it
        ("10万4000元", ["104000"]),
        ("1万零400元", ["10400"]),
        ("1万，4000元", ["10000", "4000"]),  # two amounts
        ("2万3%", ["20000", "3"]),
        ("２０２３年", ["2023"]),
    ],
)
def test_find_numbers_rules(text: str, values: list[str]) -> None:
    assert [n.value for n in find_numbers(text)] == [Decimal(v) for v in values]


def test_find_numbers_offsets_with_full_width_digits() -> None:
    text = "税额１２，０００元"
    (first, second) = find_numbers(text)
    assert text[first.start : first.end] == first.text == "１２"
    assert second.value == 0


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # (a) JSON answer field
        ('{"答案": 13000}', "13000"),
        ('{"计算过程": "1+2=3", "answer": "1.2万元"}', "12000"),
        ('{"result": [100, 200]}', "200"),
        ('{"答案": "(300)"}', "-300"),
        ('{"答案": "应纳税额=100×13%=13"}', "13"),
        ('{"答案": true, "说明": "13000"}', "13000"),
        # (b) explicit marker beats conclusion markers and later numbers
        ("答案：8000。合计13000元。", "8000"),
        ("答案：\n13000元", "13000"),
        ("答案：(1)13000元", "13000"),
        ("答案：见下文。\n应纳税额为13000元", "13000"),
        # conclusion markers, the last one with a number
        ("应纳税额计算如下：\n100×13%=13", "13"),
        ("应缴纳增值税13000元，城建税910元", "13000"),
        ("增值税应纳税额=13000元；城建税=910元；合计应纳税额=13910元", "13910"),
        # the number after the last "=" of a chain
        ("100000×13%=13000\n备注：税率13%", "13000"),
        ("=销项-进项\n=13000-5000\n=8000元", "8000"),
        # else the last number
        ("销售额100000元，税率13%，税额13000元", "13000"),
        ("约13000元左右吧", "13000"),
        # boxed answers
        ("\\boxed{1.2万}", "12000"),
        ("\\boxed{x} then 5", "5"),
    ],
)
def test_extract_final_number(text: str, value: str) -> None:
    found = extract_final_number(text)
    assert found is not None
    assert found.value == Decimal(value)


def test_extract_final_number_never_the_first_number_of_a_chain() -> None:
    found = extract_final_number("应纳税额=100000×13%=13000元")
    assert found is not None
    assert found.value == 13000
    assert found.text == "13000元"


@pytest.mark.parametrize("text", ["", "无法计算", "<think>100×13%=13", "答案：无"])
def test_extract_final_number_none(text: str) -> None:
    assert extract_final_number(text) is None


def test_extract_final_number_offsets_refer_to_cleaned_text() -> None:
    found = extract_final_number("答案：１３０００元")
    assert found is not None
    # From a final statement: the text as written, no offsets.
    assert (found.start, found.end, found.text, found.value) == (-1, -1, "13000元", 13000)
    found = extract_final_number("税额为５００元，合计为１３０００元")
    assert found is not None
    assert (found.start, found.end, found.text) == (11, 17, "13000元")


@pytest.mark.parametrize(
    ("pred", "gold", "decimals", "equal"),
    [
        (pm("13000"), 13000, 2, True),
        (pm("13000.004"), "13000", 2, True),
        (pm("13000.005"), 13000, 2, False),
        (pm("13000.005"), "13000.01", 2, True),
        (pm("-0.125"), "-0.13", 2, True),
        (pm("0.124"), 0.12, 2, True),
        (pm("12.4"), 12, 0, True),
        (pm("12.5"), 13, 0, True),
        (pm("13000"), 13001, 2, False),
        (pm("13000"), Decimal("13000.00"), 2, True),
        (pm("1E+4"), 10000, 2, True),
        (None, 13000, 2, False),
    ],
)
def test_numbers_equal_rounding(
    pred: NumberMatch | None, gold: object, decimals: int, equal: bool
) -> None:
    assert numbers_equal(pred, gold, decimals=decimals) is equal  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pred", "gold", "as_fraction", "equal"),
    [
        (pm("12", True), 12, True, True),  # percent kept as percent
        (pm("12", True), 0.12, True, True),  # gold is a fraction
        (pm("12", True), 0.12, False, False),
        (pm("12.34", True), "0.1234", True, True),  # compared in percent points
        (pm("12", True), "0.1249", True, False),
        (pm("18.56", True), "0.186", True, True),  # the fraction it is, at the gold's own places
        (pm("18.56", True), "0.1859", True, False),
        (pm("18", True), "0.186", True, False),
        (pm("100", True), 1, True, True),
        (pm("50", True), 5, True, False),  # |gold| > 1: not a fraction
        (pm("0.12"), "12%", True, True),  # gold written as a percent
        (pm("0.12"), "12%", False, False),
        (pm("12"), "12%", True, True),
        (pm("0.5", True), 0.5, True, True),  # the literal reading wins
        (pm("0.12"), 0.12, True, True),
    ],
)
def test_numbers_equal_percent_rule(
    pred: NumberMatch, gold: object, as_fraction: bool, equal: bool
) -> None:
    assert numbers_equal(pred, gold, decimals=2, percent_as_fraction=as_fraction) is equal  # type: ignore[arg-type]


def test_numbers_equal_huge_values_do_not_raise() -> None:
    assert numbers_equal(pm("1" * 200), "1" * 200)
    assert not numbers_equal(pm("1E+99"), 1)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (13000, "13000"),
        (0.1, "0.1"),
        (Decimal("12.50"), "12.5"),
        ("12,000.00元", "12000"),
        ("1.2万", "12000"),
        ("12%", "12"),
        ("(300)", "-300"),
        ("一万二千", "12000"),
    ],
)
def test_parse_gold_number(value: object, expected: str) -> None:
    assert parse_gold_number(value) == Decimal(expected)


@pytest.mark.parametrize(
    "value", [True, float("nan"), float("inf"), Decimal("NaN"), "abc", "1和2", None, [1]]
)
def test_parse_gold_number_rejects(value: object) -> None:
    with pytest.raises(ValueError):
        parse_gold_number(value)
