"""Doubts that lower a sure rule's confidence (parsing/doubt.py), through the structured kind."""

from __future__ import annotations

from pathlib import Path

from taxpraben.data.checks import check_record
from taxpraben.parsing.doubt import SPAN_WORDS, doubt
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)


def test_doubts() -> None:
    assert doubt("number", "Step 1: 5 + 3 = 8\nSo the subtotal is 8.\nNext we add the", "8") is not None
    assert doubt("number", "5 + 3 = 8\nSo the total is 8.", "8") is None
    assert doubt("span", "", " ".join(["word"] * (SPAN_WORDS + 1))) is not None
    assert doubt("span", "", "十五日内") is None
    assert doubt("letters", "anything", "AB") is None


def test_a_sure_rule_on_a_cut_off_output_reads_with_low_confidence() -> None:
    spec = REGISTRY["TaxCalc"]
    record, _ = check_record({"id": "d1", "query": "计算应纳税额。", "answer": 8}, spec, Path("t"), 1, "line")
    assert record is not None
    sure = prepare_item(spec, record, 0, "5 + 3 = 8\n所以，应纳税额为8元。", None)
    cut = prepare_item(spec, record, 0, "5 + 3 = 8\n答案：8元。\n接下来计算附加税，附加税 =", None)
    assert sure.confidence == "high" and sure.extracted == "8"
    assert cut.status == "ok" and cut.extracted == "8" and cut.confidence == "low"


def test_a_conclusion_of_a_long_derivation_is_in_doubt() -> None:
    from taxpraben.parsing.doubt import LONG_DERIVATION

    long = "Step: 5 + 3 = 8.\n" * (LONG_DERIVATION // 16 + 1) + "So the total is 8."
    assert doubt("number", long, "8", "rule:conclusion.statement") is not None
    assert doubt("number", long, "8", "rule:final.answer-statement") is None
    assert doubt("number", "5 + 3 = 8\nSo the total is 8.", "8", "rule:conclusion.statement") is None


def test_a_conclusion_after_an_opening_sentence_that_states_another_number_is_in_doubt() -> None:
    query = "A startup invests $8000 in the first year and half of that each year after. How much in three years?"
    output = ("They will invest $2200 in the third year.\n\nIn the second year they invested half of $8000, which is "
              "$4000, and in the third year $2000.\n\nTherefore, the total amount invested is $14000")
    rule = "rule:conclusion.statement"
    assert doubt("number", output, "14000", rule, query) is not None
    # an opening that states the same number, only the question's numbers, or a step of working is no doubt
    assert doubt("number", output.replace("$2200 in the third year", "$14000 in all"), "14000", rule, query) is None
    assert doubt("number", output.replace("$2200 in the third year", "$8000 in the first year"), "14000", rule, query) is None
    assert doubt("number", output.replace("$2200 in the third year", "8000 / 2 = 4000 in the second year"), "14000", rule,
                 query) is None
    assert doubt("number", output, "14000", "rule:final.answer-statement", query) is None  # stated: no doubt
    spec = REGISTRY["TaxCalc"]
    record, _ = check_record({"id": "d-open", "query": query, "answer": 14000}, spec, Path("t"), 1, "line")
    assert record is not None
    item = prepare_item(spec, record, 0, output, None)
    assert item.status == "ok" and item.extracted == "14000" and item.confidence == "low"
