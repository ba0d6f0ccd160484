"""Property-based tests: parsers are total and fast, and numbers survive formatting."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import cn2an
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from taxpraben.parsing.clean import clean_prediction, normalize_text
from taxpraben.parsing.field_match import align_fields, field_text
from taxpraben.parsing.numbers import find_numbers, numbers_equal, parse_number
from taxpraben.parsing.readers import taxben
from taxpraben.parsing.readers.fields import parse_fields
from taxpraben.parsing.readers.label import extract_choice
from taxpraben.parsing.readers.letters import extract_letter_set
from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.parsing.readers.span import extract_span, normalize_span, span_match
from taxpraben.task_spec import FieldRule

SETTINGS = settings(max_examples=250, deadline=None)
CHOICES = ["增值税", "企业所得税", "所得税", "消费税"]
RULES = [
    FieldRule(name="违法性质", kind="category", synonyms=["定性"]),
    FieldRule(name="少缴税款", kind="number"),
    FieldRule(name="分析理由", kind="text"),
]
# Pieces that exercise every rule at once: markers, tags, fences, JSON, numbers, letters.
PIECES = [
    "答案",
    "答:",
    "最终答案",
    "结果",
    "应纳税额",
    "合计",
    "综上",
    "属于",
    "不属于",
    "选",
    "选项",
    "=",
    "×",
    "%",
    "％",
    "万",
    "亿",
    "元",
    "点",
    "负",
    "一",
    "二",
    "十",
    "百",
    "千",
    "两",
    "0",
    "1",
    "9",
    ".",
    ",",
    "，",
    "。",
    "、",
    "-",
    "(",
    ")",
    "（",
    "）",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    ":",
    "：",
    "\n",
    " ",
    "A",
    "B",
    "E",
    "VAT",
    "<think>",
    "</think>",
    "```",
    "```json\n",
    "\\boxed{",
    "e",
    "^",
    "⁴",
    "①",
    "增值税",
    "企业所得税",
    "所得税",
    "**",
    "#",
    "《",
    "》",
    "“",
    "”",
    '{"答案": ',
    '{"违法性质": "偷税", "少缴税款": ',
]
tax_text = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
any_text = st.one_of(st.text(max_size=300), tax_text)


def run_every_parser(text: str) -> None:
    assert isinstance(clean_prediction(text), str)
    assert isinstance(normalize_text(text), str)
    for n in find_numbers(text):
        assert text[n.start : n.end] == n.text
        assert n.value.is_finite()
    parsed = parse_number(text)
    assert parsed is None or parsed.value.is_finite()
    final = extract_final_number(text)
    if final is not None:
        numbers_equal(final, 1)
    for letters in (True, False):
        label = extract_choice(text, CHOICES, option_letters=letters, markers=["答案", "属于"])
        assert label is None or label in CHOICES
    assert taxben.classification_label(text, CHOICES) in (None, *CHOICES)
    found = extract_letter_set(text)
    assert found is None or (found and found <= set("ABCDE"))
    letters = taxben.mcq_letters(text)
    assert letters is None or (2 <= len(letters) <= 5 and set(letters) <= set("ABCDE"))
    assert isinstance(taxben.calc_answer(text), str)
    assert isinstance(extract_span(text), str)
    assert isinstance(normalize_span(text), str)
    span_match(text, "增值税")
    assert taxben.read_correct(text, "增值税") is ("增值税" in text)
    fields = parse_fields(text)
    assert fields is None or (isinstance(fields, dict) and fields)
    aligned = align_fields(fields or {}, RULES, 0.6)
    assert list(aligned) == [r.name for r in RULES]
    for field in aligned.values():
        assert isinstance(field_text(field.value), str)


@SETTINGS
@given(any_text)
def test_no_parser_crashes_on_any_text(text: str) -> None:
    run_every_parser(text)


@SETTINGS
@given(any_text)
def test_cleaning_is_idempotent(text: str) -> None:
    once = clean_prediction(text)
    assert clean_prediction(once) == once


def test_a_megabyte_and_deep_nesting_are_parsed() -> None:
    """They finish without error (their time is a benchmark figure: benchmarks/fuzz_parsers.py)."""
    rng = random.Random(0)
    megabyte = "".join(rng.choice(PIECES) for _ in range(300_000))[:1_000_000]
    deep_object = '{"a": ' * 5000 + "1" + "}" * 5000
    deep_array = "[" * 20000 + "]" * 20000
    deep_json = json.dumps({"答案": 1, "x": [[[[[[["深"]]]]]]]})
    for text in (megabyte, deep_object, deep_array, "{" * 100_000, "<think>" * 20_000, deep_json):
        extract_final_number(text)
        extract_choice(text, CHOICES, option_letters=True, markers=["答案", "属于"])
        extract_letter_set(text)
        extract_span(text)
        parse_fields(text)
        find_numbers(text)
    assert extract_final_number(deep_json) is not None


# --- numbers survive formatting -----------------------------------------------------------

FULL_WIDTH = str.maketrans("0123456789.-", "０１２３４５６７８９．－")

amounts = st.builds(
    lambda units, places, negative: (-1 if negative else 1) * Decimal(units).scaleb(-places),
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=0, max_value=4),
    st.booleans(),
)


def plain(value: Decimal) -> str:
    return format(value, "f")


FORMATS = {
    "plain": plain,
    "thousands": lambda v: format(v, ",f"),
    "yuan": lambda v: plain(v) + "元",
    "thousands_yuan": lambda v: format(v, ",f") + "元",
    "wan": lambda v: plain(v / Decimal(10**4)) + "万",
    "wan_yuan": lambda v: plain(v / Decimal(10**4)) + "万元",
    "yi": lambda v: plain(v / Decimal(10**8)) + "亿",
    "full_width": lambda v: plain(v).translate(FULL_WIDTH),
    "full_width_yuan": lambda v: plain(v).translate(FULL_WIDTH) + "元",
    "scientific": lambda v: f"{v:e}",
}


@SETTINGS
@given(amounts, st.sampled_from(sorted(FORMATS)))
def test_formatted_numbers_parse_back(value: Decimal, how: str) -> None:
    written = FORMATS[how](value)
    parsed = parse_number(written)
    assert parsed is not None, written
    assert parsed.value == value, written
    assert not parsed.is_percent
    assert numbers_equal(parsed, value)
    final = extract_final_number(f"经计算，应纳税额为{written}。")
    assert final is not None and final.value == value, written


@SETTINGS
@given(amounts)
def test_percentages_parse_back(value: Decimal) -> None:
    for written in (plain(value) + "%", plain(value).translate(FULL_WIDTH) + "％"):
        parsed = parse_number(written)
        assert parsed is not None and parsed.is_percent and parsed.value == value, written
        assert numbers_equal(parsed, value)


def _cn2an_reads(numeral: str) -> bool:
    try:
        cn2an.cn2an(numeral, "smart")
    except ValueError:
        return False
    return True


@SETTINGS
@given(st.integers(min_value=-(10**15), max_value=10**15), st.booleans())
def test_chinese_numerals_parse_back(value: int, yuan: bool) -> None:
    numeral = cn2an.an2cn(value)
    # cn2an writes some numbers without the 零 that marks an empty place after 亿 or 万
    # ("九十一万一千三百七十三亿一千" for 91,137,300,001,000) and cannot read them back itself:
    # such forms are no standard numeral, so the property holds for the standard ones
    assume(_cn2an_reads(numeral))
    written = numeral + ("元" if yuan else "")
    parsed = parse_number(written)
    assert parsed is not None and parsed.value == value, written
    final = extract_final_number(f"答案：{written}")
    lone = len(written.removeprefix("负")) == 1
    if not lone:  # a lone numeral in running text is a word ("一般", "十分"); 元 makes it one
        assert final is not None and final.value == value, written


@SETTINGS
@given(amounts)
def test_accounting_negatives(value: Decimal) -> None:
    if value <= 0:
        return
    for written in (f"({format(value, ',f')})", f"（{plain(value)}）元"):
        parsed = parse_number(written)
        assert parsed is not None and parsed.value == -value, written


@given(st.integers(-10**6, 10**6), st.integers(1, 997), st.integers(2, 6), st.integers(6, 9))
def test_a_value_and_its_rounding_are_one_value(top: int, bottom: int, places: int, tenths: int) -> None:
    from taxpraben.parsing.alternatives import same_at_precision

    exact = Decimal(top) / Decimal(bottom)
    rounded = exact.quantize(Decimal(1).scaleb(-places))
    assert same_at_precision(exact, rounded) and same_at_precision(rounded, exact)
    # a value more than half a unit of the rounded figure's last place away from it is another value
    farther = rounded + Decimal(tenths).scaleb(-places - 1) * (1 if top >= 0 else -1)
    assert not same_at_precision(rounded, farther) and not same_at_precision(farther, rounded)
