"""Where a derivation closes (parsing/closing.py), and the number reader's fallback that
depends on it: the last number of a derivation is the answer only where the output closes on
it. Shapes from real outputs (truncated derivations, closing remarks, declines)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from taxpraben.parsing.closing import (
    closes_on_number,
    cut_by_limit,
    cut_off,
    stops_mid_sentence,
    unfinished,
    without_loop,
)
from taxpraben.parsing.numbers import find_numbers
from taxpraben.parsing.readers.number import read_final_number


@pytest.mark.parametrize("text", [
    "Average Growth Rate = (2.9",
    "Adjusted bond value = Bond value * (1 + Risk premium)\nAdjusted bond value =",
    "$$3^2 + 7^2 =$$",
    "Next, calculate (1 / (1 + 0.09)^4):\n(1 / (1 + 0.0",
    "净利润 = 100 ×",
    "The north and south walls are 80 square feet each. The total square footage of the walls is 80 + 80",  # never evaluated
    "6. We add the interest to the profit to get the total return: 18.0 + 1.2",
    "Beginning of the period: 121 * (81,500,000 / 81,500,000) = 121\n\n4.",  # an empty list item
    "$1^2 + 8^2 + 6^2 = 101$\n$1^2 + 0^2 + 1^2 = 2$\n$4",  # a formula opened and cut
])
def test_an_output_that_stops_on_an_operator_is_unfinished(text: str) -> None:
    assert unfinished(text)
    assert not closes_on_number(text)


@pytest.mark.parametrize("text", [
    "Step 5: Sum up all present values to find the present value of all",
    "Serene Vacation Corp has 1.2 million common shares outstanding.\n\n- Market value of equity = Number of shares",
])
def test_an_output_cut_mid_sentence_without_a_number_is_cut_off(text: str) -> None:
    assert cut_off(text)
    assert not closes_on_number(text)


@pytest.mark.parametrize("text", [
    "x = 9\n\nSam is 9 years old.",
    "| 3 | 应纳税额 | 45000 |\n\n最终应纳增值税见表中最后一行。",  # points back at the table
    "循环群Z/100Z的子群个数为 2。其中，一个是循环群本身，另一个是它的平凡子群。",  # a closing remark
    "4 necklaces x 5 beads/necklace = 20 beads",
    "P = 1.28 × 10^-5 V/K\n\nTherefore, the thermoelectric power is 1.28 × 10^-5 V/K.</s><s>",
    "经计算应纳税所得额为负数，因此无需缴纳企业所得税。",  # nothing is due: it closes on zero
    "Equal-weighted contribution of each stock = 1/3",  # a fraction is a value
    "Total = 400 + 60 = 460",
    "The price is\n$400",  # a currency sign, not a formula
    "The fiscal year is 2023-2024",
    "本月无需缴纳增值税",
])
def test_an_output_that_closes_on_its_result_keeps_it(text: str) -> None:
    assert closes_on_number(text)


@pytest.mark.parametrize("text", [
    "... = 0%\n\nTherefore, the answer is: The price elasticity of demand for bottled water is undefined.",
    "Without knowing these values, we cannot determine the exact period.",
    "It does not have a simple closed-form solution. However, it can be solved numerically.",
    "By step 3 the sum is 12.\n\nTherefore, the determinant of the sum is equal to the product of their determinants.",
])
def test_an_output_that_concludes_without_a_number_gives_none(text: str) -> None:
    assert not closes_on_number(text)


def test_the_number_reader_reads_no_answer_from_a_truncated_derivation() -> None:
    text = ("Step 1: Present value of the coupons: $50 / 1.036 = 48.26\n"
            "Step 2: Second year's discounted coupon: $50 / (1.037^2) = 46.50\n"
            "Step 3: Sum up all present values to find the price of the")
    reading = read_final_number(text)
    assert reading.value is None
    assert reading.rule == "veto.unfinished"


def test_the_number_reader_still_reads_the_number_a_derivation_closes_on() -> None:
    reading = read_final_number("57-27=30\n\nNext, 30/6=5\n\nHad could buy 5 toys with the money he had left.")
    assert reading.value is not None and str(reading.value.value) == "5"
    assert reading.rule == "number.last-number"


def test_a_consequence_drawn_on_the_way_is_no_answer_in_a_cut_off_output() -> None:
    text = ("On Tuesday, Peyton has a cooking class of 3 hours.\nOn Thursday, the museum tour takes half as long. "
            "So, we can say that the museum tour is 1.5 hours.\nOn Friday, Peyton has two hours of errands.\n\n"
            "Now that we have all the information, we can add")
    assert read_final_number(text).value is None


def test_a_sentence_that_announces_its_result_runs_on_to_the_next_line() -> None:
    text = ("一辆玩具车 4 美元，因此 5 辆玩具车的价格为 5 * 4 = 20 美元。\n\n因此，所有玩具的总价值为：\n\n"
            "15 美元 + 20 美元 + 3 * 5 = 50 美元")
    reading = read_final_number(text)
    assert reading.value is not None and reading.value.value == 50


def test_an_output_that_loops_closes_where_its_first_copy_ends() -> None:
    loop = "The stock price is $21.10 per share.\n\n"
    text = "The required rate of return is 17% per year.\n\n" + loop * 12 + "The stock price is"
    assert without_loop(text).rstrip().endswith("The stock price is $21.10 per share.")
    assert closes_on_number(text)
    formula = "x = \\int_0^1 f(x) dx\n" * 5 + "x = \\int_0"
    assert without_loop(formula) == formula  # a formula written again is no finished sentence


def test_a_long_derivation_stopped_mid_sentence_by_the_length_limit_has_no_answer() -> None:
    steps = "".join(f"Step {i}: the discounted coupon of year {i} is $50 / 1.05^{i} = {50 / 1.05 ** i:.2f}.\n" for i in range(1, 12))
    cut = steps + "Now we sum up all present values to find the price of the"
    assert cut_by_limit(cut)
    assert read_final_number(cut).value is None
    closed = steps + "Price = 415.32"  # a long output that stops on its result is not cut
    assert not cut_by_limit(closed)
    assert not cut_by_limit("Now we sum up the")  # short: no length limit reached


def test_a_consequence_drawn_on_the_way_gives_way_to_the_result_stated_after_it() -> None:
    text = ("她工作了40小时，因此她的工资为：40 * 10 = 400美元。\n她加班了5小时，因此她的加班工资为：5 * 10 * 1.2 = 60美元。\n"
            "她这周的总收入为：400 + 60 = 460美元。")
    reading = read_final_number(text)
    assert reading.value is not None and reading.value.value == 460
    # a check of the result states no new one: the conclusion stands
    reading = read_final_number("所以应纳税额为44000元。\n验算：104000 - 60000 = 44000，再乘以2 = 88000")
    assert reading.value is not None and reading.value.value == 44000 and reading.rule == "conclusion.statement"


def test_the_value_of_a_conclusion_follows_its_copula() -> None:
    reading = read_final_number("共有64种可能。\n\n所以乘积能被3整除的概率为$\\dfrac{37}{64}$。")
    assert reading.value is not None and round(reading.value.value, 6) == Decimal("0.578125")
    reading = read_final_number("实际税负率 = 5 ÷ 100 = 5%\n\n**答案：5%**（名义税率为20%）")  # a copula in an aside
    assert reading.value is not None and reading.value.value == 5 and reading.value.is_percent


def test_an_exponent_written_after_a_unit_is_no_number() -> None:
    reading = read_final_number("加速度 ≈ 7.22 m/s2\n\n因此,这辆车的加速度为 7.22 m/s2。")
    assert reading.value is not None and reading.value.value == Decimal("7.22")
    assert [n.text for n in find_numbers("房产面积为1000m2，体积为 5 cm3，H2O")] == ["1000", "5", "2"]


@pytest.mark.parametrize("text", [
    "因此，我们假设 |F1A| = 13，那么 |F1B| = 13 + 10 = 23。\n\n因此，我们无法根据题目中的条件计算出双曲线的离心率。这可能是一个错误。",
    "Step 7) Therefore, the answer is that the balance he still owes in 2015 is less than the loan, "
    "though we cannot determine an exact figure with the information provided.",
    "所以佢最初嘅重量應該係比70磅更重。\n但係，我唔知道佢最初係幾多磅，所以唔能確定答案。",
])
def test_a_statement_that_the_number_cannot_be_given_gives_none(text: str) -> None:
    reading = read_final_number(text)
    assert reading.value is None and reading.rule == "veto.declines", reading


def test_a_decline_of_one_step_is_not_a_decline_of_the_answer() -> None:
    reading = read_final_number("不能直接计算应纳税额，需要先求出销项税额：800000 × 13% = 104000元。\n因此应纳税额为104000 - 60000 = 44000元。")
    assert reading.value is not None and reading.value.value == 44000


@pytest.mark.parametrize(("text", "cut"), [
    ("Based on the information provided in the context, the apple is in the following location:", True),
    ("Based on the information provided in the context, Daniel is in the following locations:\n\n*", True),
    ('Based on the context provided, the answer to the question "What is west of the kitchen?"', True),
    ("根据上下文，小明现在所在的位置是：", True),
    ("The garden. Based on the context provided, the office is between the kitchen and the", False),  # answered first
    ('Bill (Document[129]):"Bill (Document[12', False),  # a bare answer, then its note
    ("Fred gave the apple to Bill", False),
    ("kitchen", False),
])
def test_a_preamble_cut_before_any_sentence_is_said_stops_mid_sentence(text: str, cut: bool) -> None:
    assert stops_mid_sentence(text) is cut


def test_a_limit_that_is_infinity_declines_and_a_limit_taken_as_n_grows_does_not() -> None:
    reading = read_final_number("Therefore, the answer is: \nthe limit of 3n(a_n)^3 as n goes to infinity is infinity.")
    assert reading.value is None and reading.rule == "veto.declines"
    reading = read_final_number("Step 4: Therefore, as R goes to infinity, the difference of the two integrals approaches 1.5.")
    assert reading.value is not None and reading.value.value == Decimal("1.5")


def test_one_value_written_as_a_fraction_and_a_percent_is_no_alternative() -> None:
    reading = read_final_number("所以，概率是：3/28 + 2/28 = 5/28 约等于 0.179或者17.9%。")
    assert reading.value is not None and reading.value.value == Decimal("0.179")
    reading = read_final_number("所以应纳税额为100或200元。")
    assert reading.value is None and reading.rule == "veto.alternatives"


def test_boxes_that_give_two_values_are_several_answers() -> None:
    reading = read_final_number("Thus, the possible values of $m$ are $\\boxed{2,3}.$")
    assert reading.value is None and reading.rule == "veto.several-answers"
    reading = read_final_number("$$k = \\frac{6 \\times 5}{2} = \\boxed{15}$$\n\n或者\n\n$$k = -\\frac{6 \\times 5}{2} = \\boxed{-15}$$")
    assert reading.value is None and reading.rule == "veto.several-answers"
    reading = read_final_number("The answer is $\\boxed{1,000}$")  # a thousands separator, not a list
    assert reading.value is not None and reading.value.value == 1000


def test_a_factorial_ends_no_sentence() -> None:
    reading = read_final_number("内部又可以有2！种排列方式。\n所以，总的排列方式为2 * 3! * 2! = 24种方式。")
    assert reading.value is not None and reading.value.value == 24
    reading = read_final_number("The answer is 24! That was easy.")
    assert reading.value is not None and reading.value.value == 24
