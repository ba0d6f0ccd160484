"""Amounts written as arithmetic (taxpraben.parsing.arithmetic): the value of plain formulas,
computed exactly, and nothing read from what is not one."""

from __future__ import annotations

from decimal import Decimal, localcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxpraben.parsing.arithmetic import evaluate_expression


@pytest.mark.parametrize(("text", "expected"), [
    ("260000*0.0005*365", "47450"),
    ("260000×0.05%×365", "47450"),
    ("260,000 × 0.05% × 365 元", "47450"),
    ("(260000*0.0005)*365", "47450"),
    ("（1,000＋500）÷2", "750"),
    ("2260000÷(1+13%)×13%-156000", "104000"),
    ("0.1+0.2", "0.3"),
    ("-5*2", "-10"),
    ("100－30", "70"),
    ("960000x12%", "115200"),
])  # fmt: skip
def test_the_value_of_a_formula(text: str, expected: str) -> None:
    assert evaluate_expression(text) == Decimal(expected)


@pytest.mark.parametrize("text", [
    "47450", "47,450.00元", "5%",  # a number alone is no formula (parse_number reads it)
    "2024-06-30", "2024/6/30",  # dates
    "260000×0.05%×365=47450",  # the result written: the number readers take it
    "1/0", "2**10", "7//2", "1e5*2", "06*2",  # not the four operations on plain numbers
    "约260000×0.05%", "滞纳金：100+200", "", "(1+2", "max(1, 2)", "__import__('os')",
])  # fmt: skip
def test_what_is_no_formula(text: str) -> None:
    assert evaluate_expression(text) is None


amounts = st.decimals(min_value=-10**9, max_value=10**9, places=2, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(amounts, st.sampled_from(["+", "-", "×", "÷", "*", "/"]), amounts)
def test_two_amounts_and_an_operator(a: Decimal, op: str, b: Decimal) -> None:
    text = f"{a}{op}({b})" if b < 0 else f"{a}{op}{b}"
    got = evaluate_expression(text)
    if op in "÷/" and b == 0:
        assert got is None
        return
    operations = {"+": lambda: a + b, "-": lambda: a - b, "×": lambda: a * b, "*": lambda: a * b,
                  "÷": lambda: a / b, "/": lambda: a / b}  # fmt: skip
    with localcontext() as context:
        context.prec = 34  # the module's precision: the same digits
        assert got == operations[op]()
