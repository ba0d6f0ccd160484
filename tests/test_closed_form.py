"""Answers in closed form (parsing/arithmetic.py closed_form_value): the value a grader
computes before comparing with a decimal gold, checked against Python's math."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taxpraben.parsing.arithmetic import closed_form_value, symbolic_answer
from taxpraben.parsing.readers.number import read_final_number


@pytest.mark.parametrize(("text", "expect"), [
    (r"\frac{\sqrt{66}}{6}", math.sqrt(66) / 6),
    (r"\dfrac{5\sqrt{3}}{4}", 5 * math.sqrt(3) / 4),
    (r"\sqrt[3]{\dfrac{3}{2}}", 1.5 ** (1 / 3)),
    (r"\sqrt{\frac{11}{6}}", math.sqrt(11 / 6)),
    ("sqrt(66)/6", math.sqrt(66) / 6),
    ("5√3/4", 5 * math.sqrt(3) / 4),
    ("17/3", 17 / 3),
    ("2π", 2 * math.pi),
    (r"\frac{\pi}{4}", math.pi / 4),
    (r"2^{10}", 1024),
    (r"\sqrt[3]{-8}", -2),
    (r"\(\dfrac{\sqrt{66}}{6}\)（或等价的 \(\sqrt{\dfrac{11}{6}}\)）", math.sqrt(66) / 6),
])
def test_a_closed_form_has_its_value(text: str, expect: float) -> None:
    value = closed_form_value(text)
    assert value is not None
    assert float(value) == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("text", [
    "2x + 2", r"\frac{1}{k}", "2 * (3y-1)", "-1 - i", "e", "12", "-5", "x=2", "2024/06/30",
    r"\lim_{x\to 1} f(x)", r"\sqrt{-4}", "1/0", "",
])
def test_what_is_not_a_closed_form_number_has_no_value(text: str) -> None:
    assert closed_form_value(text) is None


@given(st.integers(1, 10_000), st.integers(1, 500))
def test_a_root_over_a_number_is_computed(a: int, b: int) -> None:
    value = closed_form_value(rf"\frac{{\sqrt{{{a}}}}}{{{b}}}")
    assert value is not None
    assert float(value) == pytest.approx(math.sqrt(a) / b, rel=1e-12)


def test_a_final_statement_in_closed_form_is_read_at_its_value() -> None:
    reading = read_final_number(r"……所以离心率为 \frac{\sqrt{66}}{6}。" "\n<answer>\\(\\frac{\\sqrt{66}}{6}\\)</answer>")
    assert reading.value is not None
    assert round(reading.value.value, 4) == Decimal("1.3540")
    assert reading.rule == "final.answer-statement"


@pytest.mark.parametrize("sentence", [
    "The answer is 2 * (3y-1)", "a = 1050 / m", "l = 320 + 5w, where w is the wage", "N(S)/|S| approaches 11/|S|",
    "the count is 3^x - x^2 + 1", "the derivative is 2x + 2",
])
def test_a_stated_expression_in_a_variable_is_symbolic(sentence: str) -> None:
    assert symbolic_answer(sentence)


@pytest.mark.parametrize("sentence", [
    "the price is $36,000", "the acceleration is 7.22 m/s2", "the distance is 22.1 m", "P = 1.28 × 10^-5 V/K",
    "x = 5", "the return is approximately -1.35%", "FCFF = $1,106 - 535 + 243 = $714", r"e = \frac{\sqrt{66}}{6}",
    "答案：366（3aa3fbd62d53）", ":366(3aa3fbd62d53)", "The answer is 5 (option b)",  # a note in brackets after the number
    "there are 388.6 * 86,400 = 33,564,640 spontaneous fissions of U-238.",  # a number and what it counts
])
def test_a_stated_number_is_not_symbolic(sentence: str) -> None:
    assert not symbolic_answer(sentence)


def test_a_final_statement_of_an_expression_gives_no_number() -> None:
    reading = read_final_number("Solving for FD: FD = 2 * (3y-1)\nThe answer is 2 * (3y-1)")
    assert reading.value is None


def test_a_remark_in_brackets_after_the_value_is_no_part_of_it() -> None:
    assert not symbolic_answer("Therefore, the answer is $1.31 (representing Core EPS of 2017 used for trailing P/E, since the "
                               "P/E ratio cannot be calculated due to missing price information)")
    assert symbolic_answer("The answer is 2 * (3y-1)")
