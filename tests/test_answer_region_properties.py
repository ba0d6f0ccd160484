"""Properties of the shared answer region: an answer appended after arbitrary reasoning wins.

Since a second, different final answer with no self-correction between is ambiguous (README,
"How answers are scored"), the reasoning these properties draw states no final answer of its
own with an answer marker (``答案：`` / ``最终答案``) unless a self-correction introduces the
appended answer; the ambiguity itself is a property below.

Reasoning is drawn from pieces that real outputs are made of (markers, corrections, options,
figures, rates, letters, tax names, punctuation, Markdown) so that every reader meets earlier
candidates, earlier answers and earlier corrections, and must still read the final answer
statement. The alphabet leaves out what changes the structure of a whole output by design:
``<think>`` tags (reasoning removal), code fences, JSON braces (a JSON answer object is
read first) and backslashes (LaTeX boxes).
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from taxpraben.parsing.numbers import numbers_equal
from taxpraben.parsing.readers.label import extract_choice
from taxpraben.parsing.readers.letters import extract_letter_set
from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.parsing.readers.span import span_match
from taxpraben.parsing.region import answer_statements

SETTINGS = settings(max_examples=300, deadline=None)
CHOICES = ["增值税", "企业所得税", "个人所得税", "消费税"]
PIECES = [
    "答案：", "最终答案", "不对，", "更正：", "应为", "综上所述，", "因此", "所以", "故",
    "属于", "不属于", "选", "选项", "A", "B", "C", "D", "E", "AB", "A、C", "正确", "错误",
    "13%", "9%", "6%", "=", "×", "100000元", "1.2万元", "8000", "三十日", "第十五条",
    "增值税", "企业所得税", "个人所得税", "消费税", "VAT", "CPA", "**", "#", "-", "\n",
    "。", "，", "；", "（", "）", "：", " ", "计算", "销项税额", "进项税额", "应纳税额",
    "以上都对", "均不正确", "或",
]  # fmt: skip
#: Reasoning with earlier candidates, corrections and conclusions, but no answer statement (four
#: "#" pieces in a row are GSM8K's answer marker: "####A" states A, a strong answer of its own).
NO_ANSWER_PIECES = [p for p in PIECES if p not in ("答案：", "最终答案")]
reasoning = st.lists(st.sampled_from(NO_ANSWER_PIECES), max_size=40).map("".join).filter(lambda text: "####" not in text)
#: Reasoning that may state answers of its own.
answering = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
amounts = st.decimals(min_value=Decimal(0), max_value=Decimal(10) ** 9, places=2)


@SETTINGS
@given(reasoning, amounts)
def test_appended_amount_is_read(before: str, amount: Decimal) -> None:
    found = extract_final_number(f"{before}\n\n答案：{amount}元", expect_percent=False)
    assert found is not None and numbers_equal(found, amount)


@SETTINGS
@given(reasoning, st.sets(st.sampled_from("ABCDE"), min_size=1))
def test_appended_letters_are_read(before: str, letters: set[str]) -> None:
    answer = "、".join(sorted(letters))
    assert extract_letter_set(f"{before}\n\n答案：{answer}") == frozenset(letters)


@SETTINGS
@given(reasoning, st.integers(0, 3))
def test_appended_choice_letter_is_read(before: str, index: int) -> None:
    out = f"{before}\n\n答案：{'ABCD'[index]}"
    assert extract_choice(out, CHOICES, option_letters=True, markers=["属于"]) == CHOICES[index]


@SETTINGS
@given(reasoning, st.integers(0, 3))
def test_appended_label_is_read(before: str, index: int) -> None:
    out = f"{before}\n\n最终答案：{CHOICES[index]}"
    assert extract_choice(out, CHOICES, option_letters=False, markers=["属于"]) == CHOICES[index]


@SETTINGS
@given(reasoning)
def test_appended_span_is_read(before: str) -> None:
    assert span_match(f"{before}\n\n最终答案：次月十五日内", "次月15日内")


@SETTINGS
@given(st.text(max_size=300), st.lists(st.text(max_size=8), max_size=5))
def test_region_is_total(text: str, markers: list[str]) -> None:
    for statement in answer_statements(text, markers):
        assert statement.start >= 0 and isinstance(statement.text, str)


@SETTINGS
@given(answering, st.integers(0, 3))
def test_a_correction_before_the_appended_letter_wins(before: str, index: int) -> None:
    out = f"{before}\n\n不对，应为{'ABCD'[index]}"
    assert extract_choice(out, CHOICES, option_letters=True, markers=["属于"]) == CHOICES[index]


@SETTINGS
@given(answering, st.sets(st.sampled_from("ABCDE"), min_size=1))
def test_a_correction_before_the_appended_letters_wins(before: str, letters: set[str]) -> None:
    answer = "、".join(sorted(letters))
    assert extract_letter_set(f"{before}\n\n不对，应为{answer}") == frozenset(letters)


@SETTINGS
@given(reasoning, st.integers(0, 3), st.integers(1, 3))
def test_two_different_answers_without_a_correction_are_ambiguous(before: str, first: int, shift: int) -> None:
    second = (first + shift) % 4
    out = f"答案：{'ABCD'[first]}\n{before}\n\n答案：{'ABCD'[second]}"
    if "不对" in before or "更正" in before:
        return  # a correction between them: the later one wins (the property above)
    assert extract_choice(out, CHOICES, option_letters=True, markers=["属于"]) is None
    assert extract_letter_set(out.replace("答案：", "最终答案：")) is None
