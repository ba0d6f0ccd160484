"""Answer statements in the forms models use across languages and prompt styles (issue 44,
item 1): an explicit statement outranks anything read from a derivation, whatever its language
or bracket family, and is read with high confidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxpraben.data.checks import check_record
from taxpraben.parsing.region import answer_statements
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)
EN_SCQ = {"id": "q", "query": "Question: Which gas do plants absorb?\n(A) Oxygen (B) Nitrogen (C) Carbon dioxide (D) Helium\n"
          "Answer:", "choices": ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"], "gold": 2, "answer": "Carbon dioxide"}
CALC = {"id": "q", "query": "某企业应纳税所得额100万元，税率25%，应纳企业所得税多少万元？", "answer": 25}


def read(task: str, record: dict[str, object], output: str) -> tuple[str, float | None, str | None, str | None]:
    spec = REGISTRY[task]
    checked, _ = check_record(record, spec, Path("test"), 1, "line")
    item = prepare_item(spec, checked, 0, output, None)
    return item.status, item.scores.get("acc", item.scores.get("em")), item.read_by, item.confidence


@pytest.mark.parametrize("output", [
    "The correct option is (C) Carbon dioxide.",
    "Oxygen is released by plants. The best choice is C.",
    "[ANSWER]C[/ANSWER]",
    "[answer] C [/answer]",
    "<answer>C</answer>",
    "<Answer>(C)</Answer> Plants take in CO2; (A) is what they release.",
    "Plants absorb carbon dioxide; oxygen (A) is released.\n#### C",
    "Oxygen (A) is released, not absorbed. I would choose (C).",
    "Oxygen (A) is what animals need. The answer should be C.",
])
def test_an_explicit_statement_is_read_with_high_confidence(output: str) -> None:
    assert read("TaxSCQ", EN_SCQ, output) == ("ok", 1.0, "rule:final.answer-statement", "high")


@pytest.mark.parametrize("output", ["应纳税所得额100万元，税率25%，20万元是错的。\n#### 25", "<answer>25万元</answer>",
                                    "Step 1: 100 × 25% = 25.\nThe answer should be 25."])
def test_a_number_stated_so_is_read_with_high_confidence(output: str) -> None:
    assert read("TaxCalc", CALC, output) == ("ok", 1.0, "rule:final.answer-statement", "high")


@pytest.mark.parametrize("text", ["#### Step 1\nPlants absorb CO2.", "#### 1. 计算应纳税所得额\n100万元",
                                  "<b>C</b>", "[INST] answer [/INST]"])
def test_markdown_headings_and_other_tags_are_no_statements(text: str) -> None:
    assert [s for s in answer_statements(text) if s.kind == "answer"] == []


def test_a_tagged_statement_is_what_the_tags_hold() -> None:
    (statement,) = [s for s in answer_statements("So <answer> (C) </answer> because ...") if s.kind == "answer"]
    assert statement.text == " (C) " and statement.full_text == "<answer> (C) "


@pytest.mark.parametrize("output", ["B or C.", "The answer is (B) or (C).", "Answer: B or possibly C."])
def test_a_hedge_between_options_in_english_is_no_answer(output: str) -> None:
    assert read("TaxSCQ", EN_SCQ, output)[:3] == ("format_failure", 0.0, None)


@pytest.mark.parametrize("output", ["The answer is C, not A or B.", "Answer: C. Options A or B are wrong.",
                                    "Answer: C, since A and B are wrong.", "Not A or B; the answer is C."])
def test_options_ruled_out_in_english_are_no_hedge(output: str) -> None:
    assert read("TaxSCQ", EN_SCQ, output)[:3] == ("ok", 1.0, "rule:final.answer-statement")
