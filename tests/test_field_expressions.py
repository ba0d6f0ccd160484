"""A number field written as a formula (issue 45, item 9: "a number field written as an
expression (``"少缴税款": 2260000 * 13%``) is scored 0 as an answer, not counted as a format
failure").

Plain arithmetic is where the amount goes, every operand given: a grader computes it, and so
does the matcher (2260000 × 13% = 293800, by hand). A formula with a word or a variable among its
terms states no number: the field is a format failure (counted in the field's format-failure
rate, and said so), not a wrong answer read from one of its operands (13% or 2260000).
"""

from __future__ import annotations

import pytest

from taxpraben.kinds import kind_of
from taxpraben.parsing.field_match import computed_value, unreadable_number
from taxpraben.records import Record
from taxpraben.report.explain import field_lines
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
SPEC = REG["TaxInspect"]
RECORD = Record("TaxInspect", "i1", "分析以下稽查案件。", {"违法性质": "偷税", "少缴税款": 293800, "分析理由": "隐匿收入。"})


#: Written bare in JSON (as models write arithmetic there); anything else is a JSON string.
BARE = frozenset({"2260000 * 13%", "2260000 * 0.13"})


def _read(amount: str, json: bool = True, gold: int = 293800) -> dict:
    value = amount if amount in BARE else f'"{amount}"'
    output = (f'{{"违法性质": "偷税", "少缴税款": {value}, "分析理由": "隐匿收入。"}}' if json
              else f"违法性质：偷税\n少缴税款：{amount}\n分析理由：隐匿收入。")  # fmt: skip
    record = Record("TaxInspect", "i1", "分析以下稽查案件。", {**RECORD.answer, "少缴税款": gold})
    item = prepare_item(SPEC, record, 0, output, None)
    assert item.status == "ok" and item.fields is not None  # the other fields are read
    assert item.fields["违法性质"]["score"] == 1.0
    return item.fields["少缴税款"]


@pytest.mark.parametrize("amount", ["2260000 * 13% - 进项税额", "应纳税额 × 13%", "销售额2260000 × 13%",
                                    "(2260000-x)*13%", "2260000*13%+"])  # fmt: skip
@pytest.mark.parametrize("json", [True, False], ids=["json", "lines"])
def test_a_formula_in_words_or_variables_is_a_format_failure_of_the_field(amount: str, json: bool) -> None:
    field = _read(amount, json)
    assert field["pred"] == amount  # read as written
    assert field["status"] == "format_failure" and field["score"] == 0.0
    assert field["failure"].startswith("an expression, not a number: ")
    assert unreadable_number(amount) is not None


@pytest.mark.parametrize(("amount", "value"), [
    ("2260000 * 13%", 293800),  # the issue's
    ("2260000 * 0.13", 293800),
    ("226万×13%", 293800),  # 2,260,000 × 0.13
    ("2260000元×13%", 293800),
    ("1.2万+3000", 15000),
])  # fmt: skip
def test_plain_arithmetic_is_computed_as_a_grader_would(amount: str, value: int) -> None:
    assert computed_value(amount) == value
    for json in (True, False):
        field = _read(amount, json, gold=value)
        assert (field["status"], field["score"]) == ("ok", 1.0), field


@pytest.mark.parametrize("amount", ["2260000×13%=293800", "按2260000×13%计算，少缴税款为293800元", "293800元（2260000×13%）",
                                    "10-20万", "5000元/吨", "293800"])  # fmt: skip
def test_a_stated_number_beside_a_formula_or_a_range_is_no_formula(amount: str) -> None:
    assert unreadable_number(amount) is None
    assert _read(amount, json=False)["status"] == "ok"


def test_the_formula_is_counted_in_the_fields_format_failure_rate_and_shown() -> None:
    read = prepare_item(SPEC, RECORD, 0, '{"违法性质": "偷税", "少缴税款": 293800, "分析理由": "隐匿收入。"}', None)
    formula = prepare_item(SPEC, RECORD, 0, '{"违法性质": "偷税", "少缴税款": "应纳税额*13%", "分析理由": "隐匿收入。"}',
                           None)  # fmt: skip
    figures = kind_of(SPEC).field_figures(SPEC, [[read, formula]])
    assert figures is not None
    assert figures["少缴税款"]["format_failure_rate"].mean == 0.5  # one of the two records
    assert figures["违法性质"]["format_failure_rate"].mean == 0.0
    shown = {line.name: line for line in field_lines(formula)}["少缴税款"]
    assert shown.status == "format_failure" and shown.failure is not None and "expression" in shown.failure
