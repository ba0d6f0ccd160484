"""Principles of reading seen across the wide corpus's sources, each on an output of the shape
the sources show (benchmarks/wide): the prompt's own section labels end the answer, an English
superlative that names an option answers, a structured solution's own numbered parts are no
new question, and 选 answers only before an option letter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taxpraben.data.checks import check_record
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)


def _read(task: str, record: dict[str, Any], output: str) -> Any:
    spec = REGISTRY[task]
    checked, problems = check_record(record, spec, Path("test"), 1, "line")
    assert checked is not None, problems
    return prepare_item(spec, checked, 0, output, None)


def test_a_section_label_of_the_prompt_ends_the_answer() -> None:
    record = {"id": "r1", "query": "Answer the question from the facts.\nContext: [the facts given in text]\n\nQuestion: Where is Mary?",
              "text": "Mary went to the garden. Mary travelled to the office.", "answer": "office"}
    item = _read("TaxRead", record, "The most recent location of Mary is office.\n\nContext: John went back to the bedroom. Sandra")
    assert item.status == "ok" and item.scores["em"] == 1.0
    assert "Context" not in item.extracted


def test_an_english_superlative_that_names_an_option_is_the_answer() -> None:
    record = {"id": "r2", "query": "Which is the most likely diagnosis?\nA. Gout\nB. Lupus\nC. Rheumatoid arthritis\nD. Fibromyalgia\nAnswer:",
              "choices": ["Gout", "Lupus", "Rheumatoid arthritis", "Fibromyalgia"], "gold": 2, "answer": "Rheumatoid arthritis"}
    output = ("The most likely diagnosis for this patient is C: Rheumatoid arthritis.\n\nThe symmetric joint swelling fits it; "
              "gout (A) is monoarticular and fibromyalgia (D) has no swelling, so fibromyalgia is less likely.")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "Rheumatoid arthritis"
    assert item.read_by == "rule:final.answer-statement"


def test_a_structured_solutions_own_numbered_parts_are_no_new_question() -> None:
    record = {"id": "r3", "query": "已知二项展开式各项系数和为32，求x^2项的系数。", "answer": 10}
    output = ("## 问题分解\n这个问题可以分解为以下几个小问题：\n\n1. 求n。\n2. 求x^2项的系数。\n\n## 解决问题\n\n"
              "### 问题1：n是多少？\n\n$2^n = 32$，所以 $n = 5$。\n\n### 问题2：$x^2$ 项的系数是什么？\n\n"
              "$C(5, 2) = 10$\n\n## 解题答案\n所以，$x^2$ 项的系数为 $\\boxed{10}$。")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0
    assert item.read_by == "rule:final.boxed"


def test_an_invented_next_question_still_ends_the_answer() -> None:
    record = {"id": "r4", "query": "计算：某企业应纳增值税多少元？", "answer": 13000}
    item = _read("TaxCalc", record, "答案：13000元。\n\n问题2：某企业应纳消费税多少元？\n答案：5000元。")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_box_of_any_macro_name_holds_the_answer() -> None:
    record = {"id": "r5", "query": "求公比q的最大值。", "answer": 1.1447}
    item = _read("TaxCalc", record, "……所以 $q$ 的最大值为立方根。\n\n## 最终结果\n\n$$\\answer{\\sqrt[3]{\\dfrac{3}{2}}}$$")
    assert item.status == "ok" and item.scores["em"] == 1.0
    assert item.read_by == "rule:final.boxed"


def test_an_empty_gsm8k_marker_and_a_sum_in_brackets_leave_the_amount_standing() -> None:
    record = {"id": "r6", "query": "How much money do they have left?", "answer": 85}
    output = ("Maggie spent $15 and Riza spent $20, leaving them with $45 and $40 respectively. "
              "Together, they have $85 ($45 + $40) left. ####")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.extracted == "85"


def test_one_of_the_alternatives_the_prompt_offers_is_the_models_choice() -> None:
    record = {"id": "r7", "query": "Question: Is the identity matrix diagonalisable?\nPlease think step by step, and then "
              "conclude the answer as `therefore, the answer is True/False'", "choices": ["True", "False"], "gold": 0,
              "answer": "True"}
    item = _read("TaxSCQ", record, "Every vector is an eigenvector of I.\n\nTherefore, the answer is True.")
    assert item.status == "ok" and item.extracted == "True"
    copied = _read("TaxSCQ", record, "conclude the answer as `therefore, the answer is True/False'")
    assert copied.status == "format_failure"  # the prompt's template written back chooses nothing
