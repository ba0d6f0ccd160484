"""Principles of reading seen across the wide corpus's sources, each on an output of the shape
the sources show (benchmarks/wide): the prompt's own section labels end the answer, an English
superlative that names an option answers, a structured solution's own numbered parts are no
new question, and 选 answers only before an option letter."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from taxpraben.data.checks import check_record
from taxpraben.parsing.prompt_copy import own_answer
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


def test_one_box_of_several_letters_is_one_answer_set() -> None:
    record = {"id": "r7", "query": "下列说法正确的有（ ）。\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n请把最终答案放置于 \\boxed{} 中。",
              "answer": "ABD", "options": ["甲", "乙", "丙", "丁"]}
    for output in ("综上，正确答案为 \\boxed{A, B, D}", "The answer is \\boxed{A, B, D}.",
                   "The correct answers are:\n\n$$\\boxed{\\text{A, B, D}}$$"):
        item = _read("TaxMCQ", record, output)
        assert item.status == "ok" and item.extracted == "ABD", (output, item.veto)
        assert item.read_by == "rule:final.boxed"


def test_one_value_boxed_as_a_percent_and_as_a_fraction_is_one_answer() -> None:
    record = {"id": "r8", "query": "求该事件的概率。", "answer": 0.85}
    item = _read("TaxCalc", record, "所以所求概率为 $\\boxed{85\\%}$ 或 $\\boxed{0.85}$。")
    assert item.status == "ok" and item.scores["em"] == 1.0
    item = _read("TaxCalc", record, "所以所求概率为 $\\boxed{0.85}$ 或 $\\boxed{0.8}$。")  # two values: two answers
    assert item.status == "format_failure" and item.veto == "veto.several-answers"


def test_option_headings_each_with_its_discussion_are_no_new_question() -> None:
    """An output that goes through the options one heading at a time, in its own words (here in
    English for a Chinese prompt), discusses this question: it does not invent another."""
    record = {"id": "r9", "query": "下列关于增值税的说法，正确的有（ ）。\nA. 一般税率为13%\nB. 小规模纳税人征收率为3%\nC. 出口货物一律免税\n"
              "D. 进项税额均可抵扣\n请把最终答案放置于 \\boxed{} 中。", "answer": "AB", "options": ["一般税率为13%", "小规模纳税人征收率为3%",
              "出口货物一律免税", "进项税额均可抵扣"]}  # fmt: skip
    output = ("Let's go through the options one by one:\n\n**A. The general VAT rate is 13%**\n\nThe general rate was lowered to 13% in 2019, "
              "so this holds.\nIt applies to most goods.\n\n**B. The levy rate for small-scale taxpayers is 3%**\n\nThe statutory levy rate is 3%; "
              "this holds.\nTemporary reductions do not change the statutory rate.\n\n**C. Exports are always exempt**\n\nExports are mostly "
              "zero-rated, not exempt, and some are taxed.\nSo this is wrong.\n\n**D. All input VAT is deductible**\n\nInput VAT on "
              "collective welfare is not deductible.\nSo this is wrong.\n\n**Final Answer**\n\n$$\\boxed{A, B}$$")
    item = _read("TaxMCQ", record, output)
    assert item.status == "ok" and item.extracted == "AB", item.veto


def test_an_invented_option_list_after_an_answer_still_ends_it() -> None:
    record = {"id": "r10", "query": "下列属于综合所得的有（ ）。\nA. 工资\nB. 稿酬\nC. 经营所得\nD. 利息\n答案：", "answer": "AB",
              "options": ["工资", "稿酬", "经营所得", "利息"]}
    output = "AB\n\n下列属于分类所得的有（ ）。\nA. 财产租赁所得\nB. 偶然所得\nC. 工资\nD. 劳务报酬\n答案：CD"
    item = _read("TaxMCQ", record, output)
    assert item.status == "ok" and item.extracted == "AB"


def test_an_output_that_opens_with_a_section_of_the_prompt_answers_nothing() -> None:
    tagged = {"id": "r11", "query": "Answer from the facts.\n\n<context>\n[the facts given in text]\n</context>\n\nQuestion: Where is John?",
              "text": "John went to the garden. Mary went to the office.", "answer": "garden"}
    labelled = dict(tagged, query="Answer from the facts.\n\nContext: [the facts given in text]\n\nQuestion: Where is John?")
    for record, output in ((tagged, "<context>\nThe bedroom is west of the bathroom. The"),
                           (tagged, "<answer>\n<context>\nThe office is north of the hallway. The"),
                           (labelled, "Context: John went to the garden. Sandra journeyed to the")):
        item = _read("TaxRead", record, output)
        assert item.status == "format_failure", (output, item.extracted)
    item = _read("TaxRead", labelled, "Context: John went to the garden. Answer: garden")  # it goes on to answer
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_the_questions_words_in_the_models_own_answer_sentence_are_its_answer_not_a_copy() -> None:
    from taxpraben.parsing.prompt_copy import own_answer

    query = "Context: [the facts given in text]\n\nQuestion: Who gave the apple?"
    assert own_answer("Fred gave the apple to Bill.", query).text == "Fred gave the apple to Bill."
    template = "Answer in the form: Before the $location_1$ the $item$ was in the $location_2$.\n\nQuestion: Where was the milk before the bathroom?"
    own = own_answer("Answer: Before the bathroom the milk was in the garden.", template)
    assert "garden" in own.text and "Before the bathroom" in own.text
    # a line that only restates the question, behind its label, stays a copy
    assert "Who gave the apple" not in own_answer("Question: Who gave the apple?\nAnswer: Fred", query).text


def test_a_figure_that_names_the_quantity_asked_for_is_no_value() -> None:
    record = {"id": "r12", "query": "What is the 1-day 99% VaR of the portfolio?", "answer": 1234}
    item = _read("TaxCalc", record, "We simulate the returns and sort them.\n\nTherefore, the answer is the 99% VaR of the portfolio.\n\n"
                                    "```python\nimport numpy as np\nx = np.sort(r)\n```")
    assert item.status == "format_failure"
    item = _read("TaxCalc", dict(record, query="At which production level is the DOL least? Fixed costs up to 300,000 units.",
                                 answer=300000), "Therefore, the answer is 300,000 units.")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_true_or_false_question_is_answered_by_yes_or_no() -> None:
    record = {"id": "r13", "query": "Consider the matrix A=[[1, 4], [4, 1]]: is this a positive definite matrix?",
              "choices": ["True", "False"], "gold": 1, "answer": "False"}
    for output, read in (("Its eigenvalues are 5 and -3, so it is not positive definite.\nThe answer is No.", "False"),
                         ("Yes, it is positive definite.", "True"), ("So the answer is: $\\boxed{No}$", "False")):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == read, (output, item.veto)
        assert item.read_by == "rule:choice.yes-or-no"
    # options other than true/false: yes and no name nothing
    other = {"id": "r14", "query": "Which rate applies?\nA. 13%\nB. 9%", "choices": ["13%", "9%"], "gold": 0, "answer": "13%"}
    assert _read("TaxSCQ", other, "Yes.").status == "format_failure"


def test_an_answer_marker_that_ends_its_sentence_states_nothing() -> None:
    record = {"id": "r15", "query": "下列适用6%税率的是（ ）。\nA：有形动产租赁服务\nB：信息技术服务\nC：不动产租赁服务",
              "choices": ["有形动产租赁服务", "信息技术服务", "不动产租赁服务"], "gold": 1, "answer": "信息技术服务"}
    output = ("A. 有形动产租赁服务。\n这个选项不是正确答案。有形动产租赁适用13%。\n\nC. 不动产租赁服务。\n这个选项也不是正确答案。"
              "不动产租赁服务适用9%。\n\n综上所述，因此，正确的答案是B. 信息技术服务。")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "信息技术服务", item.veto


def test_an_option_in_maths_is_named_however_its_latex_is_spaced() -> None:
    record = {"id": "r16", "query": "复数 z 的模为（ ）\nA. 0\nB. 1\nC. √2\nD. 2", "choices": ["0", "1", "√2", "2"], "gold": 2,
              "answer": "√2"}
    item = _read("TaxSCQ", record, "所以 $|z| = \\sqrt{2}$。\n\nTherefore, the answer is $\\boxed{\\sqrt{2}}$.")
    assert item.status == "ok" and item.extracted == "√2"
    record = {"id": "r17", "query": "Z = （ ）\nA. $1-i$\nB. $-i$\nC. $-1-i$\nD. $i$", "choices": ["$1-i$", "$-i$", "$-1-i$", "$i$"],
              "gold": 2, "answer": "$-1-i$"}
    item = _read("TaxSCQ", record, "Thus, the value of \\( Z \\) is:\n\\[\n\\boxed{-1 - i}\n\\]")
    assert item.status == "ok" and item.extracted == "$-1-i$"


def test_the_first_line_a_model_writes_answers_even_where_an_example_has_the_same_line() -> None:
    record = {"id": "r18", "query": "<example>\nThe garden is west of the bedroom. What is west of the bedroom?\nAnswer: garden\n</example>\n"
              "Your answer should contain only one word.\nContext: [the facts given in text]\n\nQuestion: What is the kitchen south of?",
              "text": "The bathroom is north of the kitchen. The garden is west of the bedroom.", "answer": "bathroom"}
    item = _read("TaxRead", record, "Answer: garden")
    assert item.status == "ok" and item.extracted == "garden" and item.scores["em"] == 0.0
    item = _read("TaxRead", record, "Answer: garden\n\nQuestion: What is west of the bedroom?\nAnswer: bathroom")
    assert item.status == "ok" and item.extracted == "garden"
    # an instruction written back, marker and all, is still a copy
    item = _read("TaxRead", record, "Your answer should contain only one word.")
    assert item.status == "format_failure"


# ------------------------------------------------------------------ round 2: the kinds the
# first held-out draw showed (options by number, answer templates, restated data, labels whole)

_NUMBERED = {
    "id": "n1",
    "query": "Given the family relationships:\n* Diane is Victoria's parent.\n* Danielle is Diane's parent.\n"
             "What is Danielle's relationship to Diane?\nSelect the correct answer:\n1. Danielle is Diane's parent.\n"
             "2. Danielle is Diane's child.\nEnclose the selected answer number in the <ANSWER> tag, for example: "
             "<ANSWER>1</ANSWER>.",
    "choices": ["Danielle is Diane's parent.", "Danielle is Diane's child."], "gold": 0,
    "answer": "Danielle is Diane's parent.",
}


def test_an_option_the_prompt_numbers_is_given_by_its_number() -> None:
    for output, expect in (
        ("Danielle is Diane's parent, so Diane is her child.\n\n<ANSWER>2</ANSWER>", "Danielle is Diane's child."),
        ("The correct answer is 2.", "Danielle is Diane's child."),
        ("Step by step: Danielle is Diane's parent.\n\n1", "Danielle is Diane's parent."),
    ):
        item = _read("TaxSCQ", _NUMBERED, output)
        assert item.status == "ok" and item.extracted == expect, (output, item.read_by, item.veto)


def test_a_number_past_the_options_names_no_option() -> None:
    item = _read("TaxSCQ", _NUMBERED, "<ANSWER>3</ANSWER>")
    assert item.status == "format_failure"


def test_a_number_names_no_option_where_the_prompt_letters_them() -> None:
    record = {"id": "n2", "query": "Which is larger?\nA. two\nB. three\nAnswer:", "choices": ["two", "three"], "gold": 1,
              "answer": "three"}
    item = _read("TaxSCQ", record, "The answer is 1.")
    assert item.status == "format_failure"


def test_the_prompts_answer_template_filled_with_its_own_example_is_an_answer() -> None:
    # the prompt shows <ANSWER>1</ANSWER> as its example; a model whose answer is 1 writes exactly that
    item = _read("TaxSCQ", _NUMBERED, "<ANSWER>1</ANSWER><|im_end|>")
    assert item.status == "ok" and item.extracted == "Danielle is Diane's parent."
    record = {"id": "t1", "query": "x_1 = False\nx_2 = True\nEvaluate the boolean expression: x_1 xor x_2\n"
              "If the evaluation result is True, output this text: '<ANSWER>True</ANSWER>'.\n"
              "If the evaluation result is False, output this text: '<ANSWER>False</ANSWER>'.",
              "choices": ["True", "False"], "gold": 0, "answer": "True"}
    item = _read("TaxSCQ", record, "False xor True is True.\n\nTherefore, the output is:\n<ANSWER>True</ANSWER>")
    assert item.status == "ok" and item.extracted == "True"


def test_the_prompts_data_written_again_in_the_working_starts_no_new_turn() -> None:
    output = ("Let's analyze the given family relationships step by step:\n\n1. Diane is Victoria's parent.\n"
              "2. Danielle is Diane's parent.\n\nFrom these relationships, we can construct the following family tree:\n\n"
              "- Danielle is Diane's parent.\n  - Diane is Victoria's parent.\n\n"
              "Therefore, Diane is Danielle's child.\n\nThe correct answer is:\n<ANSWER>1</ANSWER>")
    item = _read("TaxSCQ", _NUMBERED, output)
    assert item.status == "ok" and item.extracted == "Danielle is Diane's parent.", (item.read_by, item.veto)
    own = own_answer(output, _NUMBERED["query"], options=_NUMBERED["choices"])
    assert not own.cut and "<ANSWER>1</ANSWER>" in own.text
    # the question asked again after an answer still ends it
    asked_again = "<ANSWER>1</ANSWER>\nWhat is Danielle's relationship to Diane?\n<ANSWER>2</ANSWER>"
    assert own_answer(asked_again, _NUMBERED["query"], options=_NUMBERED["choices"]).cut


def test_a_word_that_opens_a_prompt_sentence_is_no_section_label_of_it() -> None:
    # "Given:" is the model's heading; the prompt's line is the sentence "Given the following boolean variables:"
    record = {"id": "t2", "query": "Given the following boolean variables:\nx_1 = False\nx_2 = True\n"
              "Evaluate the boolean expression: x_1 xor x_2\nAnswer True or False.",
              "choices": ["True", "False"], "gold": 0, "answer": "True"}
    output = "We need to understand the XOR operation first.\nGiven:\n- x_1 = False\n- x_2 = True\nThe answer is True."
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "True", (item.read_by, item.veto)


def test_the_answer_phrase_the_prompt_asks_for_is_the_models_statement_with_its_copula() -> None:
    record = {"id": "f1", "query": "Given the following problem, reason and give a final answer to the problem.\n"
              "Problem: Miguel uses 2 pads of 30 sheets a week. How many sheets does he use in 4 weeks?\n"
              "Your response should end with \"The final answer is [answer]\" where [answer] is the response to the problem.",
              "answer": 240}
    output = "2 pads x 30 sheets = 60 sheets a week.\n60 sheets x 4 weeks = 240 sheets\n\nThe final answer is 240."
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"


def test_a_count_written_in_words_is_a_number() -> None:
    query = "David has three sisters. Each of them has one brother. How many brothers does David have?"
    for output, expect in (("David would have six brothers.", 6.0),
                           ("David has three sisters, so he would have two brothers if each has two.", 2.0),
                           ("The answer is twenty-one.", 21.0),
                           # the count in the unit asked, even where the question says it too
                           ("David would still have only one brother.", 1.0),
                           ("Each of David's three sisters would have two brothers, for a total of three brothers.", 3.0)):
        item = _read("TaxCalc", {"id": "w1", "query": query, "answer": expect}, output)
        assert item.status == "ok" and item.scores["em"] == 1.0, (output, item.read_by, item.extracted)
    item = _read("TaxCalc", {"id": "w2", "query": query, "answer": 1}, "No one can say without knowing the family.")
    assert item.status == "format_failure"


def test_the_conclusion_gives_the_quantity_in_the_unit_the_question_counts() -> None:
    record = {"id": "u1", "query": "Ingrid drinks 8 cups of water a day. There are 16 cups in a gallon. "
              "How many gallons of water does she drink in 30 days?", "answer": 15}
    output = "8 cups/day * 30 days = 240 cups.\n240 cups / 16 = 15 gallons.\n\nTherefore, Ingrid drinks 15 gallons of water in 30 days."
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.extracted)


def test_an_answer_the_prompt_gives_to_its_own_demonstration_is_an_answer_to_this_question() -> None:
    record = {"id": "d1", "query": "Title: Islamism\n\nBackground: [the passage]\n\nQ: Who rejected the path of violence?\n\n"
              "A: Not in background.\n\nQ: Who took up the path of violence?\n\nA: Egyptian Islamic Jihad\n\n"
              "Q: Who wrote the pamphlet?\n\nA:",
              "text": "Muhammad Abd al-Salaam Farag wrote a pamphlet. The Egyptian Islamic Jihad took up violence.",
              "answer": "Not in background."}
    item = _read("TaxRead", record, "Not in background.")
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.veto)
    item = _read("TaxRead", record, "Egyptian Islamic Jihad")
    assert item.status == "ok" and item.scores["em"] == 0.0, (item.read_by, item.veto)


def test_a_short_phrase_written_as_the_whole_output_is_the_answer_not_a_copy() -> None:
    record = {"id": "p1", "query": "Background: [the passage]\n\nQ: Which team scored first, the Kansas City Royals or the Tigers?\n\nA:",
              "text": "The Kansas City Royals scored first in the second inning.", "answer": "Kansas City Royals"}
    item = _read("TaxRead", record, "Kansas City Royals")
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.veto)
    # the question's own line written back is still a copy
    item = _read("TaxRead", record, "Which team scored first, the Kansas City Royals or the Tigers?")
    assert item.status == "format_failure"


def test_the_options_listed_back_in_a_row_are_no_phrase_and_no_answer() -> None:
    record = {"id": "p2", "query": "对于SLE关节病变，哪一项是不正确的？（　　）\nA：呈多关节对称性损害\nB：关节肿痛\nC：近端指间关节多受累\n"
              "D：关节软骨破坏，关节畸形\nE：大关节很少受累\n回答上面的选择题",
              "choices": ["呈多关节对称性损害", "关节肿痛", "近端指间关节多受累", "关节软骨破坏，关节畸形", "大关节很少受累"],
              "gold": 3, "answer": "关节软骨破坏，关节畸形"}
    item = _read("TaxSCQ", record, "D：关节软骨破坏，关节畸形，E：大关节很少受累，A：呈多关节对称性损害，B：关节肿痛，C：近端指间关节多受累。")
    assert item.status == "format_failure"


def test_a_question_that_offers_alternatives_is_answered_by_the_one_the_sentence_asserts() -> None:
    from taxpraben.parsing.readers.span import span_match

    question = "Which language is spoken least in Karnataka, Tulu or Hindi?"
    assert span_match("Tulu is the language spoken least in Karnataka.", "Tulu", question)
    assert not span_match("Tulu is the language spoken least in Karnataka.", "Hindi", question)
    question = "Which group in Bahrain is smaller: Indians or Pakistanis?"
    sentence = "According to the passage, the group of Pakistanis is smaller than the group of Indians."
    assert span_match(sentence, "Pakistanis", question) and not span_match(sentence, "Indians", question)


def test_two_values_offered_for_one_number_are_no_single_answer() -> None:
    query = "Find the smallest n. Give one number."
    for output in ("In summary the smallest n is 4 or 5.\nThe answer is 4 or 5.",
                   "x = (13 ± 7)/4\n\nTherefore, x = 13/4 and x = -6/4 are the two values that make f(x) = 0.",
                   "This gives the approximations 0.5 and 1.5.\n\nTherefore, the answer is 0.5 and 1.5.",
                   "(x - 1)(x - 4) = 0\n\nthe values of x such that f(x) = 0 are x = -1/2 and x = 4"):
        item = _read("TaxCalc", {"id": "a1", "query": query, "answer": 4}, output)
        assert item.status == "format_failure", (output, item.read_by, item.extracted)


def test_one_value_written_two_ways_is_one_answer() -> None:
    for output, gold in (("P ≈ (0.85 * 0.55) / 0.40 ≈ 0.63\n\nTherefore, the answer is: P ≈ 0.63, or 63%.", 0.63),
                         ("So the probability of rolling it is 1/4 or 25%.", 0.25),
                         ("Adam will be one-fourth of 60, or 15.", 15)):
        item = _read("TaxCalc", {"id": "a2", "query": "Compute it.", "answer": gold}, output)
        assert item.status == "ok" and item.scores["em"] == 1.0, (output, item.read_by, item.veto, item.extracted)


def test_a_reasoning_models_think_section_is_reasoning_and_its_answer_section_the_answer() -> None:
    record = {"id": "s1", "query": "Jill works 35 hours a week at $20 and 15 hours at $30, for 50 weeks. Her annual salary?",
              "answer": 57500}
    output = ("<|im_start|>think\nOkay, 35*20 = 700 a week, so 35000 a year. Wait, 15*30 = 450, times 50 is 50 weeks of it.\n"
              "So the coaching part is 22500, maybe 50 is the answer?\n<|im_start|>answer\nAnswer: Her annual salary is "
              "$35,000 + $22,500 = \\(\\boxed{57500}\\).<|im_end|>")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.extracted)


def test_an_answer_statement_in_other_languages_outranks_the_derivation() -> None:
    query = "Jerry has 2 more white hens than red hens and 10 hens in all. How many red hens does he have?"
    for output in ("Er hat 10 Hennen, 2 mehr weiße: (10 - 2) / 2 = 4. Dann prüfen wir 4 + 6 = 10.\nDie Antwort lautet 4.",
                   "10 - 2 = 8, 8 / 2 = 4, et 4 + 6 = 10.\nRéponse : 4",
                   "10 - 2 = 8 y 8 / 2 = 4; comprobamos 4 + 6 = 10.\nRespuesta: 4",
                   "10 - 2 = 8, 8 / 2 = 4, проверка: 4 + 6 = 10.\nОтвет: 4",
                   "10 - 2 = 8、8 / 2 = 4。確認：4 + 6 = 10。\n答えは 4 です。"):
        item = _read("TaxCalc", {"id": "l1", "query": query, "answer": 4}, output)
        assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement", (
            output, item.read_by, item.extracted)


def test_a_result_stated_later_with_a_unit_in_brackets_outranks_a_conclusion_on_the_way() -> None:
    record = {"id": "r9", "query": "Estimate the free cash flow (in millions).", "answer": 804.22}
    output = ("Net income in 2012 = 626 (million dollars)\nTherefore, the FCFF is 2447 (million dollars).\n\n"
              "Then we adjust for working capital:\n(535 * 1.53846153) = 804.22 (million dollars)")
    item = _read("TaxCalc", record, output)
    assert item.extracted != "2447" and item.read_by != "rule:conclusion.statement", (item.read_by, item.extracted)


def test_an_output_cut_inside_its_own_steps_before_any_answer_answers_nothing() -> None:
    record = {"id": "c1", "query": "Fred grabbed the football. Fred gave it to Jeff.\nQuestion: Who gave the football?",
              "text": "Fred grabbed the football in the kitchen. Fred gave it to Jeff.", "answer": "Fred"}
    item = _read("TaxRead", record, "A fun little scenario!\n\nLet's break it down:\n\n1. Fred grabbed the football in the kitchen.\n"
                                     "2. Fred dropped")
    assert item.status == "format_failure" and item.veto == "veto.cut-off", (item.read_by, item.veto)
    # a finished answer sentence before the cut still answers
    item = _read("TaxRead", record, "Fred gave the football to Jeff.\n\nLet's break it down:\n1. Fred grabbed")
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.veto, item.extracted)


def test_options_the_prompt_numbers_with_circled_numerals_are_given_by_them() -> None:
    record = {"id": "k1", "query": "Question: Which drug is made by the Fischer indole synthesis?\n\n① fluoxetine\n② modafinil\n"
              "③ paroxetine\n④ quetiapine\n⑤ sumatriptan\n\nAnswer:",
              "choices": ["fluoxetine", "modafinil", "paroxetine", "quetiapine", "sumatriptan"], "gold": 4, "answer": "sumatriptan"}
    for output in ("⑤", "⑤<|END_OF_TURN_TOKEN|>", ": ⑤<|im_end|>"):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "sumatriptan", (output, item.read_by, item.veto)
    # circled numerals label options even where the options are numbers
    record = {"id": "k2", "query": "How many mg?\n\n① 56\n② 350\n③ 0.42\n\nAnswer:", "choices": ["56", "350", "0.42"],
              "gold": 1, "answer": "350"}
    item = _read("TaxSCQ", record, "②")
    assert item.status == "ok" and item.extracted == "350", (item.read_by, item.veto)


def test_options_labelled_in_lower_case_are_answered_in_lower_case() -> None:
    query = ("確定診断のために必要な検査はどれか。2つ選べ。\na: 頭部MRI\nb: 冠動脈造影\nc: 胸部造影CT\nd: 心エコー検査\ne: FDG-PET/CT\n"
             "必ずa,b,c,d,eの中からちょうど2個選んでください。\n答え:")
    for output, expect in (("c,d", "CD"), ("b, d", "BD")):
        item = _read("TaxMCQ", {"id": "i1", "query": query, "answer": "CD"}, output)
        assert item.status == "ok" and item.extracted == expect, (output, item.read_by, item.veto, item.extracted)
    record = {"id": "i2", "query": "最も考えられるのはどれか。\na: 丹毒\nb: 上顎癌再発\nc: 急性副鼻腔炎\n答え:",
              "choices": ["丹毒", "上顎癌再発", "急性副鼻腔炎"], "gold": 1, "answer": "上顎癌再発"}
    item = _read("TaxSCQ", record, "b")
    assert item.status == "ok" and item.extracted == "上顎癌再発", (item.read_by, item.veto)


def test_an_english_refusal_gives_no_number_even_where_it_names_the_fiscal_year() -> None:
    query = "What is the FY2018 capital expenditure amount (in USD millions) for 3M? Use the cash flow statement."
    for output in ("The text doesn't provide information on the FY2018 capital expenditure amount for 3M.",
                   "I'm sorry, but as an AI, I don't have real-time access to the FY2018 filings of 3M."):
        item = _read("TaxCalc", {"id": "d1", "query": query, "answer": 1577}, output)
        assert item.status == "format_failure", (output, item.read_by, item.extracted)
    # a figure concluded after the model says the filing does not mention it stands
    output = ("The 10-K does not mention any restructuring costs in the financial statements. Therefore, the "
              "restructuring costs outlined in the FY2022 income statement are $0.")
    item = _read("TaxCalc", {"id": "d2", "query": "Restructuring costs in FY2022 (USD millions)?", "answer": 0}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.veto, item.extracted)


def test_a_year_the_question_names_is_no_amount() -> None:
    query = "Using the balance sheet, how much total assets did Costco have at the end of FY2021? Answer in USD millions."
    item = _read("TaxCalc", {"id": "y1", "query": query, "answer": 59268},
                 "Costco reported $59,268 million in total assets at the end of fiscal 2021")
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.extracted)
    # a count that merely looks like a year is a count
    item = _read("TaxCalc", {"id": "y2", "query": "他每天走10000步，还剩2000步。慢跑走了多少步？", "answer": 2000},
                 "10000 - 8000 = 2000步")
    assert item.status == "ok" and item.scores["em"] == 1.0, (item.read_by, item.extracted)


# ---------------------------------------------------------------- round 4 (development sources)


def test_a_calculator_note_left_open_is_an_unfinished_derivation() -> None:
    # GSM8K-trained models annotate each step "<<66+42=108>>108"; the length limit that cuts one
    # open leaves a derivation that never reached its answer
    record = {"id": "w1", "query": "Kory's dog weighs 66 pounds ... Total combined weight?", "answer": 143}
    output = ("1. Dogs weigh 1/3 * 66 = <<1/3*66=26>>26 pounds.\n2. Kory's dog weighs 1/2 * 66 = <<1/2*66=42>>42 pounds.\n"
              "3. Together, the dogs weigh 66 + 42 + 26 = <<66+42+26=126")
    item = _read("TaxCalc", record, output)
    assert item.status == "format_failure" and item.veto == "veto.unfinished"


def test_a_list_of_steps_that_loops_reaches_no_result() -> None:
    record = {"id": "w2", "query": "Jack and 3 friends play at an arcade ... Total cost?", "answer": 12}
    output = "1. Jack spends 15 minutes.\n" + "".join(f"{n}. Jack spends 3 times longer than Jack.\n" for n in range(2, 10))
    item = _read("TaxCalc", record, output)
    assert item.status == "format_failure" and item.veto == "veto.unfinished"
    # a finished derivation is read as before
    done = _read("TaxCalc", record, "1. Jack plays 12 quarters.\n2. The friends play 0 more.\n3. In total 12 quarters = $12")
    assert done.status == "ok" and done.scores["em"] == 1.0


def test_an_output_that_declines_anywhere_gives_none_of_the_numbers_it_discusses() -> None:
    record = {"id": "w3", "query": "What is AES's FY2022 return on assets? Round to two decimals.", "answer": -0.02}
    output = ("I'm sorry, but as an AI language model, I do not have access to external databases or filings. "
              "To calculate AES's FY2022 ROA, divide the net income by the average total assets between FY2021 and FY2022.\n\n"
              "You would then round your answer to 2 decimal places.")
    item = _read("TaxCalc", record, output)
    assert item.status == "format_failure" and item.veto == "veto.declined"


def test_an_aside_naming_the_answers_form_is_part_of_the_marker() -> None:
    record = {"id": "w4", "query": "Q: Should oysters be avoided by people with ADHD?\nA:",
              "choices": ["yes", "no"], "gold": 1, "answer": "no"}
    output = "Oysters are high in zinc. Thus, oysters should not be avoided. Therefore, the answer (yes or no) is no."
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "no" and item.read_by == "rule:final.answer-statement"


JUDGE_PROMPT = ("Give your judgment between Answerable or Unanswerable. Finally summarize your answer in the format:\n"
                "The answer is: ...\n\nQuestion: James sprints meters, 3 sprints a session. How many meters a week?\nJudgement: ")


def test_the_prompts_answer_template_filled_in_is_the_answer_not_a_new_section() -> None:
    record = {"id": "w5", "query": JUDGE_PROMPT, "choices": ["Answerable", "Unanswerable"], "gold": 1, "answer": "Unanswerable"}
    output = "The distance of each sprint is missing, so we cannot determine the total.\n\nThe answer is: Unanswerable"
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "Unanswerable" and item.read_by == "rule:final.answer-statement"


def test_the_label_the_prompt_ends_on_heads_the_answer() -> None:
    record = {"id": "w6", "query": JUDGE_PROMPT, "choices": ["Answerable", "Unanswerable"], "gold": 0, "answer": "Answerable"}
    item = _read("TaxSCQ", record, "Judgement: Answerable\n\nThe answer is: $20")
    assert item.status == "ok" and item.extracted == "Answerable" and item.read_by == "rule:final.answer-statement"
    bold = _read("TaxSCQ", record, "**Judgement:** Answerable\n\n**Reasoning:** every figure is given.")
    assert bold.status == "ok" and bold.extracted == "Answerable"


def test_a_letter_that_names_a_figures_part_is_no_option() -> None:
    record = {"id": "w7", "query": JUDGE_PROMPT, "choices": ["Answerable", "Unanswerable"], "gold": 0, "answer": "Answerable"}
    item = _read("TaxSCQ", record, "In triangle ABC, the bisectors meet at O. Therefore, angle BOC = 180° - angle A")
    assert item.status == "format_failure"


def test_a_term_the_question_quotes_is_not_the_answer_when_quoted_back() -> None:
    record = {"id": "w8", "query": 'One character name is replaced with "$$MASK$$".\n\nWhich character is most likely "$$MASK$$"?',
              "text": "ROSE: Where is he?\n$$MASK$$: Gone.", "answer": "Isabella"}
    item = _read("TaxRead", record, 'Based on the dialogue, the character most likely referred to as "$$MASK$$" is Isabella.')
    assert item.extracted != "MASK"


def test_an_opener_that_cites_the_material_frames_the_answer() -> None:
    record = {"id": "w9", "query": "Answer from the facts.\nContext: [the facts given in text]\n\nQuestion: Who received the apple?",
              "text": "Fred gave the apple to Jeff.", "answer": "Jeff"}
    item = _read("TaxRead", record, "Based on the context you provided, the person who received the apple is Jeff.")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_the_question_is_the_sentence_that_asks_even_with_an_instruction_after_it() -> None:
    from taxpraben.parsing.span_words import question_of

    assert question_of('Dialogue.\nWhich character is most likely "$$MASK$$"? Just say the name and nothing else.') \
        == 'Which character is most likely "$$MASK$$"?'
    record = {"id": "w10", "query": 'One name is replaced with "$$MASK$$".\n\nWhich character is most likely "$$MASK$$"? '
                                    "Just say the name of one single character and nothing else.",
              "text": "ROSE: Where is he?\n$$MASK$$: Gone.", "answer": "ISABELLA"}
    output = ('Based on the context, the character that was replaced by "$$MASK$$" is most likely Isabella. '
              "This is clear from several hints.")
    item = _read("TaxRead", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0
    # the doer of a "who" question is still the sentence's first name, not one after a copula
    from taxpraben.parsing.readers.span import span_match

    assert not span_match("Fred gave the milk to Jeff.", "Jeff", "Who gave the milk to Fred?")


def test_an_english_copula_gives_the_value_of_a_restated_question() -> None:
    record = {"id": "w11", "query": "What is the order of the element 5 in U_8?", "answer": 2}
    item = _read("TaxCalc", record, "5^2 = 1 (mod 8).\n\nTherefore, the answer is: the order of the element 5 in U_8 is 2.")
    assert item.status == "ok" and item.scores["em"] == 1.0
    # a copula before an adjective gives nothing: the value stated earlier stands
    kept = _read("TaxCalc", {"id": "w12", "query": "Which threshold segments the image?", "answer": 6},
                 "Therefore, the answer is a threshold of 6 would be appropriate for 2 regions.")
    assert kept.status == "ok" and kept.scores["em"] == 1.0


def test_a_decline_in_another_language_gives_no_number() -> None:
    record = {"id": "w13", "query": "How many rabbits are there?", "answer": 348}
    output = ("Hay 120 gatos y 60 perros.\n\nAnswer: El número de animales es mayor que 180, pero no se puede determinar "
              "exactamente cuántos conejos hay.")
    item = _read("TaxCalc", record, output)
    assert item.status == "format_failure" and item.veto == "veto.declines"


def test_circled_numbers_of_every_unicode_block_name_options() -> None:
    query = "Which is it?\n\n① Fatty liver\n② Paget's disease\n③ Raynaud's phenomenon\n④ Atopic dermatitis\n⑤ Oral candidiasis\n\nAnswer:"
    choices = ["Fatty liver", "Paget's disease", "Raynaud's phenomenon", "Atopic dermatitis", "Oral candidiasis"]
    record = {"id": "w14", "query": query, "choices": choices, "gold": 4, "answer": "Oral candidiasis"}
    for five in ("➄", "❺", "➎", "⑸"):
        item = _read("TaxSCQ", record, five + "<|END_OF_TURN_TOKEN|>")
        assert item.status == "ok" and item.extracted == "Oral candidiasis", five


def test_an_answer_tag_whose_last_bracket_was_cut_still_closes() -> None:
    query = "Which is right?\n1. Amy is Bo's parent.\n2. Bo is Amy's parent.\nEnclose the selected answer number in the <ANSWER> tag."
    record = {"id": "w15", "query": query, "choices": ["Amy is Bo's parent.", "Bo is Amy's parent."], "gold": 0,
              "answer": "Amy is Bo's parent."}
    item = _read("TaxSCQ", record, "\n\n<ANSWER>1</ANSWER")
    assert item.status == "ok" and item.extracted == "Amy is Bo's parent."


def test_a_line_repeated_to_the_end_is_read_once() -> None:
    record = {"id": "w16", "query": "Find the smallest x with x = 1 mod 4 and x = 2 mod 3.", "answer": 5}
    output = "By the CRT, x = 5 works.\nTherefore, the answer is 5.\n" + "This answer is correct.\n" * 90 + "This"
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_label_with_the_start_of_its_own_option_text_names_that_option() -> None:
    query = ("Which drug suits a sustained-release tablet?\n\n① Hydrophilic protein drugs\n② Drugs degraded by enzymes\n"
             "③ Drugs with uniform absorption rates throughout the tract\n\nAnswer:")
    choices = ["Hydrophilic protein drugs", "Drugs degraded by enzymes", "Drugs with uniform absorption rates throughout the tract"]
    record = {"id": "w17", "query": query, "choices": choices, "gold": 2, "answer": choices[2]}
    item = _read("TaxSCQ", record, "③ Drugs with uniform absorption")
    assert item.status == "ok" and item.extracted == choices[2]


def test_a_stand_in_for_an_answer_is_no_answer() -> None:
    query = ("Answer in the format: The ’item’ is in ’location’. Do not write anything else.\n"
             "Context: [the facts given in text]\n\nQuestion: Where is the apple?")
    record = {"id": "w18", "query": query, "text": "John took the apple to the kitchen.", "answer": "kitchen"}
    for output in ("Answer: The apple is in ’location’.", "to be a character name.", " a character's name."):
        item = _read("TaxRead", record, output)
        assert item.status == "format_failure" and item.veto == "veto.placeholder", output
    markup = _read("TaxRead", {**record, "query": "Context: [the facts given in text]\n\nQuestion: Where is the apple?"},
                   "</question>")
    assert markup.status == "format_failure"
    item = _read("TaxRead", record, "Answer: The apple is in the kitchen.")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_question_that_asks_for_a_percentage_takes_the_percent_figure() -> None:
    record = {"id": "w19", "query": "How much more likely is it (expressed as a percentage) that he rolls a number greater "
                                    "than 3 than that he rolls two even numbers in a row?", "answer": 25}
    output = "Difference = 0.5 - 0.25 = 0.25, or 25%.\n\nSo, Jerry is 25% more likely to roll a number greater than 3."
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_year_inside_the_span_the_question_names_is_a_period() -> None:
    from taxpraben.parsing.asked import named_years

    assert {"2019", "2020", "2021"} <= named_years("What is the FY2019 - FY2021 3 year average margin for Corning?")
    assert named_years("Which year between 2019 and 2021 had the highest margin?") == frozenset()


def test_a_number_joined_to_a_noun_by_a_hyphen_states_no_quantity() -> None:
    record = {"id": "w20", "query": "What is the FY2017 - FY2019 3 year average of capex as a % of revenue? Answer in percents.",
              "answer": 0.019}
    output = ("I'm sorry, but the information provided does not include capital expenditures. "
              "Therefore, I cannot calculate the 3-year average of capex as a percentage of revenue.")
    item = _read("TaxCalc", record, output)
    assert item.status == "format_failure"


def test_options_labelled_in_brackets_in_lower_case_are_answered_in_lower_case() -> None:
    from taxpraben.parsing.readers.letters import options_lower_lettered

    query = "Q: It was sold for what percent more?\nAnswer Choices:\n(a) 20%\n(b) 28%\n(c) 36%\nA: Let's think."
    assert options_lower_lettered(query)
    assert not options_lower_lettered("Which?\nA. x\nB. y\n(a) is a note\n(b) another")
    record = {"id": "w21", "query": query, "choices": ["20%", "28%", "36%"], "gold": 1, "answer": "28%"}
    item = _read("TaxSCQ", record, "The price is 1.28 times the cost. So the answer is (b).")
    assert item.status == "ok" and item.extracted == "28%"


def test_a_step_of_working_the_prompt_holds_is_no_new_turn() -> None:
    query = ("User: Dana runs 3 mph.\nAssistant: Шаг 1: Найдем скорость.\nШаг 2: Найдем время.\n"
             "User: Now solve it step by step. Finally, format your answer as 'Answer: [num]'.")
    record = {"id": "w22", "query": query, "answer": 18}
    output = "Шаг 1: Найдем скорость.\n6 : 4 = 1.5\nШаг 2: Найдем время.\n12 + 6 = 18 миль\n\nОтвет: 18."
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"


def test_the_templates_own_words_before_the_value_are_no_copy() -> None:
    query = ("Identify the first wrong step. Finally summarize your answer in the format:\nThe answer is: Step X\n\n"
             "Solution:\nStep 1: AD = 5.\nStep 2: AB = 13.\nStep 3: AE = 6.5.\nJudgement: ")
    record = {"id": "w23", "query": query, "answer": 3}
    output = "The error begins at Step 3, where AE = AB/2 = 13/2 = 6.5 is taken.\n\nThe answer is: Step 3"
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"


def test_an_answer_head_on_its_own_line_in_japanese() -> None:
    record = {"id": "w24", "query": "トレーシーは何本のピースを得ますか？", "answer": 8}
    item = _read("TaxCalc", record, "4フィートは48インチです。\n48 ÷ 6 = 8\n\n回答：8")
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"


def test_subquestions_the_output_numbers_itself_are_its_working() -> None:
    query = ("Q: The original retail price of an appliance was 60 percent more than its wholesale cost. If the appliance "
             "was actually sold for 20 percent less than the original retail price, then it was sold for what percent more "
             "than its wholesale cost?\n# Answer option: ['A)20%', 'B)28%', 'C)36%']\nAnswer Choices:\n(a) 20%\n(b) 28%\n"
             "(c) 36%\nA: To answer the above question, we need to answer the following subquestions:")
    record = {"id": "w25", "query": query, "choices": ["20%", "28%", "36%"], "gold": 1, "answer": "28%"}
    output = ("\nQ1. What's the original retail price?\nThe original retail price is 60% more than the wholesale cost. So the "
              "original retail price is 1.6 times the wholesale cost.\nQ2. What's the actual retail price?\nThe actual retail "
              "price is 20% less than the original retail price. So the actual retail price is 0.8 times the original retail "
              "price.\nQ3. What's the actual retail price in terms of the wholesale cost?\nThe actual retail price is 0.8 "
              "times 1.6 times the wholesale cost.\nFinal Answer: What's the actual retail price in terms of the wholesale "
              "cost?\nThe actual retail price is 1.28 times the wholesale cost. So the answer is (b).\n\n")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "28%"
    # a question the output invents after answering still ends its answer
    invented = _read("TaxSCQ", record, "So the answer is (b).\n\nQuestion 2: What is 2 + 2?\nSo the answer is (a).")
    assert invented.status == "ok" and invented.extracted == "28%"


# ---------------------------------------------------------------- round 5 (round 4's held-out sources, after their measurement)


def test_a_latex_thin_space_after_a_thousands_comma_is_notation() -> None:
    record = {"id": "w26", "query": "How much does the house cost?", "answer": 224000}
    item = _read("TaxCalc", record, "The price is 200000 + 24000.\n\nThe answer is \\boxed{\\$224,\\!000}.")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_digits_written_until_the_length_limit_are_no_number() -> None:
    record = {"id": "w27", "query": "What is the length of the side?", "answer": 5}
    item = _read("TaxCalc", record, "9" * 120)
    assert item.status == "format_failure" and item.veto == "veto.unfinished"
    # the decimals of a repeating fraction are a number
    kept = _read("TaxCalc", {"id": "w28", "query": "What is 16/3?", "answer": 5.33}, "16/3 = 5." + "3" * 40)
    assert kept.status == "ok" and kept.scores["em"] == 1.0


def test_markdown_emphasis_is_never_part_of_a_span() -> None:
    record = {"id": "w29", "query": "Context: [the passage given in text]\n\nQuestion: Who wrote De Rerum Natura?",
              "text": "De Rerum Natura is a poem by Lucretius.", "answer": "Lucretius"}
    item = _read("TaxRead", record, "De Rerum Natura is a Latin poem.\n\nThe answer is: **Lucretius**.")
    assert item.status == "ok" and item.extracted == "Lucretius." and item.scores["em"] == 1.0


def test_an_answer_marker_that_heads_a_derivation_gives_its_result_not_its_first_figure() -> None:
    record = {"id": "r-derivation", "query": "Tickets cost $12 for adults and $10 for children. She buys one of each and "
              "gets $8 in change. How much money did she give the cashier?", "answer": 30}
    output = ("Answer: She paid for 1 child ticket ($10) and 1 adult ticket ($12), which totals to $22. She received $8 "
              "in change, so she gave the cashier $22 + $8 = $30.")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"
    record = {"id": "r-derivation-zh", "query": "甲一小时跑10圈，乙跑5圈。甲比乙多跑几圈？", "answer": 5}
    item = _read("TaxCalc", record, "先算乙。\n\n#### 甲可以跑10圈，乙可以跑5圈，所以甲比乙多跑 10 - 5 = 5圈。")
    assert item.status == "ok" and item.scores["em"] == 1.0
    # a statement that gives its number itself keeps it, whatever its line computes after it
    record = {"id": "r-given", "query": "How many apples are left?", "answer": 5}
    item = _read("TaxCalc", record, "The answer is 5 apples, because 10 - 5 = 5 and 2 + 2 = 4 is another story.")
    assert item.extracted == "5"


def test_a_calculator_note_is_markup_and_a_q_and_a_answer_head_states_the_number() -> None:
    record = {"id": "r-gsm", "query": "Jane saves $4 a week. She has $208 and needs $60. How much more does she need?", "answer": -148}
    output = ("Jane has saved $4 * 52 = $<<4*52=208>>208.\nJane needs to save $60 - $208 = $<<60-208=-148>>148 more.\nA: 148")
    item = _read("TaxCalc", record, output)
    assert item.extracted == "148" and item.read_by == "rule:final.answer-statement" and item.confidence == "high"
    # without the answer head, the value the model writes after its note, not the note's own
    item = _read("TaxCalc", record, "Jane needs to save $60 - $208 = $<<60-208=-148>>148 more.")
    assert item.extracted == "148"
    # "A:" heading a line the output goes on after is no answer head
    record = {"id": "r-cases", "query": "Carly has 80 cards. How many cards have the letter D?", "answer": 9}
    item = _read("TaxCalc", record, "Cards with the letter A:\nA: 32\nThe other 48 split further, so the cards with D number 9.")
    assert item.extracted == "9"


def test_the_question_written_again_under_a_label_of_the_models_own_ends_the_answer() -> None:
    options = ["公安机关发现物品应当收缴", "对宣扬行为应当及时制止", "应当将有关人员强行带离现场", "必要时可以加以制止"]
    listed = "\n".join(f"{letter}. {text}" for letter, text in zip("ABCD", options, strict=True))
    query = "以下说法中有错误的是\n" + listed
    record = {"id": "r-relabel", "query": query, "choices": options, "gold": 3, "answer": options[3]}
    output = "D\n\n問題：以下说法中有错误的是\n" + listed + "\n答案：A"
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == options[3]


def test_a_table_row_of_the_prompt_written_again_is_working_not_a_new_turn() -> None:
    query = ("以下の財務データを読み、質問に答えてください。\n\n| 科目 | 金額 |\n| --- | --- |\n| 流動資産 | 2,180,790 |\n"
             "| 固定資産 | 5,657,563 |\n\n質問: 資産の合計は8,000,000を超えるか。\n\n最終行に「Answer: 値」の形式で答えを出力してください。")
    record = {"id": "r-row", "query": query, "choices": ["はい", "いいえ"], "gold": 1, "answer": "いいえ"}
    output = "まず計算します。\n\n流動資産 = 2,180,790\n固定資産 = 5,657,563\n\n合計 = 7,838,353 で、超えません。\n\nAnswer: いいえ"
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "いいえ"


def test_a_role_name_alone_on_its_line_is_a_turn_the_decoding_left() -> None:
    options = ["500", "1000", "5000", "10000"]
    query = "问题:\n退税额应未超过____元。\n选项:\n" + "\n".join(f"({letter}) {text}" for letter, text in zip("ABCD", options, strict=True)) + "\n答案:"
    record = {"id": "r-role", "query": query, "choices": options, "gold": 3, "answer": "10000"}
    item = _read("TaxSCQ", record, "(D) 10000\nanswer\n退税额应未超过10000元。\nanswer\n(A) 500\nanswer\n(B) 1000")
    assert item.status == "ok" and item.extracted == "10000"
    # the word opening a line that goes on is no turn
    record = {"id": "r-role-2", "query": "How many apples are left?", "answer": 4}
    item = _read("TaxCalc", record, "She eats 6 of 10 apples, so the\nanswer is 4 apples.\nuser: thanks")
    assert item.extracted == "4"


def test_an_output_that_concludes_it_cannot_answer_names_no_option() -> None:
    record = {"id": "r-cannot", "query": "What is the final result of the collisions of the 5 balls shown? Solve the problem.\n"
              "(A) 1\n(B) 2\n(C) 3\n(D) 4\n(E) 5", "choices": ["A", "B", "C", "D", "E"], "gold": 2, "answer": "C"}
    output = ("The problem doesn’t provide any visual information about the balls. Therefore, I can’t solve the problem as "
              "it is now. If you provide these details I will be happy to help.")
    item = _read("TaxSCQ", record, output)
    assert item.status == "format_failure" and item.veto == "veto.concludes-no-answer"


def test_a_role_between_bars_opens_a_turn_of_the_prompts_format() -> None:
    record = {"id": "r-bars", "query": "|system| Write the last line as \"### Answer: <<your final answer here.>>\".\n@@@\n"
              "|user| Peter divided $85 among 5 friends. How much did each get?\n|assistant|", "answer": 17}
    output = (" Reasoning: $85/5 = <<85/5=17>>17.\nEach friend received $17.\n### Answer: $17\n###\n|user| A triangle has a base "
              "of 10 cm and a height of 6 cm. What is its area?\n###|assistant| Reasoning: 1/2 x 10 x 6 = 30.\n### Answer: 30 cm^2")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.extracted == "17"


def test_a_sentence_that_opens_with_the_questions_first_words_is_the_models_own() -> None:
    options = ["no two electrons can pair up", "no two protons can have the same four quantum numbers",
               "no two electrons can have the same four quantum numbers", "all electrons must have the same spin"]
    query = ("Answer the following multiple choice question. The last line of your response should be 'Answer: $LETTER'.\n\n"
             "The Pauli exclusion principle states that\n\n"
             + "\n".join(f"{letter}) {text}" for letter, text in zip("ABCD", options, strict=True)))
    record = {"id": "r-pauli", "query": query, "choices": options, "gold": 2, "answer": options[2]}
    output = ("To answer this question, let's analyze the principle.\n\nThe Pauli exclusion principle is a fundamental concept "
              "in quantum mechanics: no two electrons in an atom share all four quantum numbers.\n\nAnswer: C")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == options[2]


def test_an_option_written_as_a_name_and_its_description_is_named_by_its_name() -> None:
    options = ["Color 1: $(\\pi, 0.3,0.5)$", "Color 2: $(0.5 \\pi, 0.8,0.3)$"]
    record = {"id": "r-head", "query": "Which color looks closer to blue? (a) " + options[0] + ", (b) " + options[1],
              "choices": options, "gold": 0, "answer": options[0]}
    item = _read("TaxSCQ", record, "The hue of Color 1 is pi, the hue of Color 2 is 0.5 pi.\nThe answer is Color 1.")
    assert item.status == "ok" and item.extracted == options[0]
    # a name that two options share names neither
    options = ["Plan: pay in 2023", "Plan: pay in 2024"]
    record = {"id": "r-head-2", "query": "Which plan?\nA. " + options[0] + "\nB. " + options[1], "choices": options, "gold": 0,
              "answer": options[0]}
    assert _read("TaxSCQ", record, "The answer is the plan.").status == "format_failure"


def test_a_colon_continuing_the_prompts_answer_slot_and_a_dash_of_another_width_change_no_option() -> None:
    options = ["무스카린 수용체 – atropine", "무스카린 수용체 – cyclopentolate", "니코틴 수용체 – pyridostigmine",
               "니코틴 수용체 – mecamylamine", "아드레날린 α1 수용체 – doxazosin"]
    query = "Question: 옳게 연결한 것은?\n\n" + "\n".join(f"{mark} {text}" for mark, text in zip("①②③④⑤", options, strict=True)) + "\n\nAnswer:"
    record = {"id": "r-colon", "query": query, "choices": options, "gold": 2, "answer": options[2]}
    item = _read("TaxSCQ", record, ": ③ 니코틴 수용체 - pyridostigmine\n\nExplanation: the symptoms indicate myasthenia gravis.")
    assert item.status == "ok" and item.extracted == options[2]


def test_a_reserved_token_ends_the_answer() -> None:
    query = "獲得が見込まれる活動はどれか。2つ選べ。\na: 自己導尿\nb: 車いす移乗動作\nc: 箸を使用しての食事動作\nd: 平地歩行\ne: 階段昇降\n答え:"
    record = {"id": "r-unused", "query": query, "answer": "AC"}
    item = _read("TaxMCQ", record, "a,c<unused95>a, c")
    assert item.status == "ok" and item.extracted == "AC"


def test_a_fraction_written_as_the_value_is_one_number() -> None:
    record = {"id": "r-fraction", "query": "Find the value of x such that f(x) = 0.", "answer": 0.5}
    for output, value in (("The value of x such that f(x) = 0 is x = 1/2.", Decimal("0.5")),
                          ("Therefore, the value of x that makes f(x) = 0 is x = 3/2.", Decimal("1.5")),
                          ("So the probability is 11/12.", Decimal(11) / Decimal(12))):
        item = _read("TaxCalc", record, output)
        assert item.status == "ok" and Decimal(item.extracted) == value, output
    # a fraction that an operator goes on from, or a date, is no value of its own
    assert _read("TaxCalc", record, "y = 1/2 × 8 = 4").extracted == "4"
    assert _read("TaxCalc", record, "The deadline is 12/31/2020.").extracted == "2020"


def test_a_latex_fraction_without_braces_is_the_same_value() -> None:
    from taxpraben.parsing.latex import strip_latex

    assert strip_latex(r"\frac{35}2") == strip_latex(r"\frac{35}{2}") == "17.5"
    assert strip_latex(r"\frac12") == "0.5" and strip_latex(r"\frac ab") == "a/b"
    assert strip_latex(r"\fraction") == r"\fraction"  # another command, no fraction
    options = ["$\\frac{35}2$", "$15\\sqrt{2}$", "$\\frac{64}3$", "$16\\sqrt{2}$", "$24$"]
    record = {"id": "r-frac-option", "query": "What is the area?\n" + "\n".join(f"({letter}) {text}" for letter, text in
                                                                             zip("ABCDE", options, strict=True)),
              "choices": options, "gold": 0, "answer": options[0]}
    item = _read("TaxSCQ", record, "Its area is $(1/2)(5)(7)=\\boxed{\\frac{35}{2}}$.")
    assert item.status == "ok" and item.extracted == options[0]


def test_one_numbered_option_written_back_and_cut_selects_it() -> None:
    options = ["They should secure the financial resources for national health.",
               "They should establish necessary legal and institutional measures for national health.",
               "They should devise measures to protect the health of the people.",
               "They should support private health services when necessary."]
    query = "Which is not a duty of the state?\n" + "\n".join(f"{mark} {text}" for mark, text in zip("①②③④", options, strict=True)) + "\n\nAnswer:"
    record = {"id": "r-numbered-cut", "query": query, "choices": options, "gold": 1, "answer": options[1]}
    item = _read("TaxSCQ", record, "② They should establish necessary legal and institutional")
    assert item.status == "ok" and item.extracted == options[1]


def test_a_summing_up_phrase_opens_a_conclusion() -> None:
    options = ["生命体征监护", "右大腿X线摄片检查", "腹部超声检查", "建立静脉输液通道", "立位胸腹部透视检查"]
    query = "不恰当的急诊处置是（　　）。\n" + "\n".join(f"{letter}：{text}" for letter, text in zip("ABCDE", options, strict=True))
    record = {"id": "r-summing-up", "query": query, "choices": options, "gold": 4, "answer": options[4]}
    output = ("首先需要进行生命体征监护，然后建立静脉输液通道。\n\n综合考虑，不恰当的急诊处置是E：立位胸腹部透视检查。"
              "最紧急的措施是确保生命体征稳定，建立静脉输液通道。")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == options[4] and item.read_by == "rule:conclusion.statement"


def test_an_expression_on_the_way_vetoes_nothing_where_the_output_closes_on_its_value() -> None:
    record = {"id": "r-expression-on-the-way", "query": "How much water is in the small pool now?", "answer": 2}
    output = ("Let x be the water in the small pool. So, the big pool has 4x gallons of water. 2x = 3x - 2, "
              "so x = 2 gallons. The amount of water in the small pool now is 2 gallons.")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.extracted == "2"
    # a past-tense copula gives the value too, whatever the subject's name ("3M")
    record = {"id": "r-was", "query": "What was 3M's net PP&E at the end of FY2018 (USD billions)?", "answer": 23.014}
    item = _read("TaxCalc", record, "$36,500 - $13,486 = $23,014\n\nSo, the year-end FY2018 net PP&E for 3M was $23.014 billion.")
    assert item.status == "ok" and item.extracted == "23.014"
    # an expression that the output closes on stays no number
    record = {"id": "r-expression-closing", "query": "What is the area?", "answer": 6}
    assert _read("TaxCalc", record, "So, the area is 1/2 (a + b) h.").status == "format_failure"


def test_a_long_output_whose_last_line_gives_a_result_and_its_unit_is_finished() -> None:
    record = {"id": "r-result-line", "query": "What is Walmart's FY2018 days payable outstanding?", "answer": 72.8}
    working = "".join(f"Step {n}: the accounts payable and the cost of sales are read from the statements.\n" for n in range(1, 9))
    output = working + "= 365 * 2,731.4 million / 38,549.1 million\n= 72.8 days\nRounding, we get:\nFY2018 DPO for Walmart: 72.8 days"
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.extracted == "72.8"


def test_a_question_that_asks_for_the_wrong_one_is_answered_by_the_incorrect_option() -> None:
    options = ["生产数量=(销售数量+期末存量)-期初存量", "购货付现=本期付现+以前期赊购本期付现", "采购数量=(耗用数量+期末存量)-期初存量",
               "销售收到的现金=销售收入+期末应收账款-期初应收账款"]
    query = "下列关于营业预算的计算等式中，不正确的是____。\n" + "\n".join(f"({letter}) {text}" for letter, text in zip("ABCD", options, strict=True))
    record = {"id": "r-wrong-one", "query": query, "choices": options, "gold": 3, "answer": options[3]}
    output = f"Based on the given equations, the incorrect option is:\n\n(D) {options[3]}\n\nThe correct equation is:\n\n(A) {options[0]}"
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == options[3]


def test_options_listed_with_an_english_verdict_are_the_set() -> None:
    query = ("Choose the correct statement(s).\n(A) NF3 is more covalent than BiF3\n(B) PH3 boils lower than NH3\n"
             "(C) N-N is stronger than P-P\n(D) Bi2O5 is more basic than N2O5")
    record = {"id": "r-english-verdict", "query": query, "answer": "BCD"}
    item = _read("TaxMCQ", record, "So, option (D) is correct.\n\nFinal answer: (B), (C), and (D) are correct.")
    assert item.status == "ok" and item.extracted == "BCD"
    assert _read("TaxMCQ", record, "Final Answer: (A), (C), and (D) are correct.").extracted == "ACD"


def test_a_latex_command_named_by_letters_ends_where_its_letters_do() -> None:
    from taxpraben.parsing.latex import strip_latex

    assert strip_latex(r"\left(\frac{a}{b}\right) \le 3") == "(a/b) ≤ 3"


def test_a_field_the_prompt_names_for_the_answer_gives_it() -> None:
    options = ["HAWKISH", "DOVISH", "NEUTRAL"]
    query = ("Classify the sentence as 'HAWKISH', 'DOVISH' or 'NEUTRAL'. Provide the label in the first line and a short "
             "explanation in the second line. This is the sentence: price pressures would emerge only gradually.")
    record = {"id": "r-field", "query": query, "choices": options, "gold": 1, "answer": "DOVISH"}
    output = " Label: DOVISH\n\nExplanation: The sentence is dovish; a hawkish stance would tighten policy sooner."
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "DOVISH" and item.read_by == "rule:final.answer-statement"
    # a field of the prompt's data ("Target aspect: TSLA") names no answer
    record = {"id": "r-field-data", "query": "Give the sentiment score between -1 and 1.\nTarget aspect: TSLA", "answer": 0.5}
    item = _read("TaxCalc", record, "Target aspect: 3\nThe sentiment score is 0.5")
    assert item.extracted == "0.5"


def test_words_that_announce_a_structured_answer_are_no_answer_before_a_prompt_section() -> None:
    query = ("Give the sentiment score between -1 and 1.\n\nFinancial sentence:\nSentence: Daily Mail owner considering "
             "Yahoo bid. Target aspect: YHOO")
    record = {"id": "r-announce", "query": query, "answer": 0.85}
    output = ("Here's my analysis of the provided sentence:\n\n**Sentence:** Daily Mail owner considering Yahoo bid\n\n"
              "**Target Aspect:** YHOO\n\n**Score:** 0.850\n\n**Explanation:** a bid lifts the target's value.")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and float(item.extracted) == 0.85


def test_an_output_that_says_no_option_is_correct_selects_none_in_any_language() -> None:
    query = "Which statements are correct?\n(A) x > 0\n(B) y > 0\n(C) x = y\n(D) x + y = 0"
    record = {"id": "r-none", "query": query, "answer": "AB"}
    for output in ("Checking (A): false. Checking (D): false.\nالإجابة النهائية: لا يوجد خيار صحيح",
                   "(A) गलत है। (D) गलत है।\nइस समस्या का कोई सही विकल्प नहीं है",
                   "(A) fails and (D) fails.\nSo none of the given options is correct."):
        item = _read("TaxMCQ", record, output)
        assert item.status == "format_failure" and item.veto == "veto.none-correct", output
    # a verdict that names the right ones is read
    assert _read("TaxMCQ", record, "None of (C) and (D) holds.\nFinal answer: (A) and (B)").extracted == "AB"


def test_the_prompts_words_in_the_models_own_sentence_are_its_own_with_options_too() -> None:
    query = ("In this problem, more than one option may be correct. Which of the following statements are dimensionally "
             "correct?\n(A) x = a\n(B) y = b\n(C) z = c\n(D) w = d")
    record = {"id": "r-own-words", "query": query, "answer": "ABD"}
    item = _read("TaxMCQ", record, "So, option (D) is also fine.\n\nFinal Answer: (A), (B), and (D) are dimensionally correct.")
    assert item.status == "ok" and item.extracted == "ABD"
    item = _read("TaxMCQ", record, "Each one checks out.\n\nFinal Answer: All the statements (A), (B), (C), and (D) are correct.")
    assert item.status == "ok" and item.extracted == "ABCD"


_SEVERAL = {"id": "r-several", "answer": "CD",
            "query": ("In this problem, multiple options can be correct.\nWhich statements about a plate pulled over a viscous "
                      "liquid are true?\n(A) 阻力与液体高度成反比\n(B) 阻力与板的面积无关\n(C) 底部的切向应力随速度增加\n(D) 板上的切向应力与粘度线性变化")}


def test_a_statement_that_writes_each_options_text_after_its_label_gives_every_label() -> None:
    for output in ("逐项分析如下……\n\n最终答案：(C) 底部的切向应力随速度增加 和 (D) 板上的切向应力与粘度线性变化。",
                   "逐项分析如下……\n\nFinal answer: (C) 底部的切向应力随速度增加, (D) 板上的切向应力与粘度线性变化"):
        item = _read("TaxMCQ", _SEVERAL, output)
        assert item.status == "ok" and item.extracted == "CD", output
    # the label alone, with reasons of the model's own after it, is still that label only
    item = _read("TaxMCQ", _SEVERAL, "最终答案：(C)，因为底部的应力随速度增加，其余都不对。")
    assert item.extracted == "C"


def test_a_statement_that_judges_every_option_in_turn_gives_the_ones_it_calls_right() -> None:
    for output in ("Solution: each option checked above.\n\nFinal Answer: A) False, B) False, C) True, D) True",
                   "逐项分析如下……\n\n最终答案：\n(A) 错误\n(B) 错误\n(C) 正确\n(D) 正确",
                   "تحليل كل خيار……\n\nالإجابة النهائية هي:\n(A) خاطئ\n(B) خاطئ\n(C) صحيح\n(D) صحيح"):
        item = _read("TaxMCQ", _SEVERAL, output)
        assert item.status == "ok" and item.extracted == "CD", output


def test_answer_statements_in_arabic_and_hindi_give_every_option_they_join() -> None:
    for output in ("(C) هذه العبارة صحيحة.\n(D) هذه العبارة صحيحة.\n\nالإجابة النهائية: العبارات (C), و (D) صحيحة.",
                   "(C) यह कथन सही है।\n(D) यह कथन सही है।\n\nअंतिम उत्तर: (C) और (D) सही हैं।"):
        item = _read("TaxMCQ", _SEVERAL, output)
        assert item.status == "ok" and item.extracted == "CD", output
        assert item.read_by == "rule:final.answer-statement", output


def test_options_written_back_as_the_answer_are_read_and_option_headings_of_an_analysis_are_not() -> None:
    query = ("病原体と悪性腫瘍の組合せで正しいのはどれか。2つ選べ。\na: ヒトパピローマウイルス ---- 子宮体癌\n"
             "b: 成人T細胞白血病ウイルス ---- 肺癌\nc: C型肝炎ウイルス ---- 肝細胞癌\nd: Helicobacter pylori ---- 胃癌\n答え:")
    record = {"id": "r-lower", "query": query, "answer": "CD"}
    output = "c: C型肝炎ウイルス ---- 肝細胞癌\nd: Helicobacter pylori ---- 胃癌\n\nこれらの組み合わせは強い関連があります。"
    item = _read("TaxMCQ", record, output)
    assert item.status == "ok" and item.extracted == "CD"
    assert item.read_by == "rule:letters.restated-option-lines"
    # each option written as the heading of its own reasons selects nothing by itself
    headings = ("(A) 阻力与液体高度成反比\n这个说法不对，阻力与高度无关。\n\n(B) 阻力与板的面积无关\n这个说法也不对。\n\n"
                "(C) 底部的切向应力随速度增加\n这个说法正确。\n\n(D) 板上的切向应力与粘度线性变化\n这个说法也正确。")
    item = _read("TaxMCQ", _SEVERAL, headings)
    assert item.read_by != "rule:letters.restated-option-lines"


def test_a_conclusion_that_announces_the_options_on_its_next_lines_gives_them_all() -> None:
    output = ("阻力与高度、面积的关系都不成立；底部应力和粘度的两个说法成立。\n\n综上所述，正确的陈述是：\n"
              "(C) 底部的切向应力随速度增加\n(D) 板上的切向应力与粘度线性变化")
    item = _read("TaxMCQ", _SEVERAL, output)
    assert item.status == "ok" and item.extracted == "CD"


def test_the_correct_statements_are_an_answer_statement() -> None:
    query = "Which of the following hold for x = 2?\n(A) x > 1\n(B) x < 0\n(C) x is even\n(D) x is prime"
    record = {"id": "r-statements", "query": query, "answer": "ACD"}
    item = _read("TaxMCQ", record, "2 > 1 and 2 is both even and prime; 2 < 0 fails.\n\nThe correct statement(s) is (are): A, C, and D.")
    assert item.status == "ok" and item.extracted == "ACD"
    assert item.read_by == "rule:final.answer-statement"


def test_the_end_of_an_explanation_ends_the_reasoning_and_the_answer_follows_it() -> None:
    query = ("请你做一道选择题\n请你一步一步思考并将思考过程写在【解析】和<eoe>之间。你将从A，B，C，D中选出正确的答案，并写在【答案】和<eoa>之间。\n"
             "题目如下：\n下列适用9%税率的是\nA. 有形动产租赁 B. 交通运输服务 C. 现代服务 D. 金融服务")
    record = {"id": "r-eoe", "query": query, "choices": ["有形动产租赁", "交通运输服务", "现代服务", "金融服务"], "gold": 1,
              "answer": "交通运输服务"}
    item = _read("TaxSCQ", record, "【解析】 交通运输服务适用9%的税率，其余不是。\n<eoe>\n【答案】 B <eoa>\n\n【解析】 下一题……<eoe>\n【答案】 C <eoa>")
    assert item.status == "ok" and item.extracted == "交通运输服务"
    assert item.read_by == "rule:final.answer-statement"


def test_an_options_number_is_named_only_as_a_whole_number() -> None:
    query = "正切值为？\nA. $\\frac{1}{2}$\nB. 1\nC. 2\nD. 3\n请把最终答案放置于 \\boxed{}中。"
    record = {"id": "r-whole", "query": query, "choices": ["$\\frac{1}{2}$", "1", "2", "3"], "gold": 1, "answer": "1"}
    for output in ("所以正切值为 $\\boxed{\\frac{16\\sqrt{3}}{39}}$。", "所以正切值为 $\\boxed{16/39}$。", "所以正切值为 $\\boxed{10.5}$。"):
        item = _read("TaxSCQ", record, output)
        assert item.status == "format_failure" and item.veto == "veto.not-an-option", output
    assert _read("TaxSCQ", record, "所以正切值为 $\\boxed{1}$。").extracted == "1"
    assert _read("TaxSCQ", record, "所以正切值为 $\\boxed{\\frac{1}{2}}$。").extracted == "$\\frac{1}{2}$"


def test_an_option_read_from_an_output_cut_off_before_its_answer_is_in_doubt() -> None:
    query = "下列适用9%税率的是\nA. 有形动产租赁\nB. 交通运输服务\nC. 现代服务\nD. 金融服务"
    record = {"id": "r-cut", "query": query, "choices": ["有形动产租赁", "交通运输服务", "现代服务", "金融服务"], "gold": 1,
              "answer": "交通运输服务"}
    analysis = "逐项分析各选项的适用税率。" + "有形动产租赁适用13%的税率，现代服务一般适用6%的税率，金融服务也适用6%的税率，" * 20
    cut = "B. 交通运输服务\n\n" + analysis + "而交通运输服务"
    item = _read("TaxSCQ", record, cut)
    assert item.extracted == "交通运输服务" and item.confidence == "low"
    # the same reading from an output that finished, or from an answer statement before the cut, stays sure
    assert _read("TaxSCQ", record, "B. 交通运输服务\n\n" + analysis + "所以选B。").confidence == "high"
    assert _read("TaxSCQ", record, "答案：B\n\n" + analysis + "而交通运输服务").confidence == "high"


def test_different_options_each_alone_on_a_line_are_several_answers() -> None:
    query = "Classify the sentence as HAWKISH, DOVISH or NEUTRAL. Give the label on the first line and a short explanation."
    record = {"id": "r-labels", "query": query, "choices": ["HAWKISH", "DOVISH", "NEUTRAL"], "gold": 1, "answer": "DOVISH"}
    output = ("HAWKISH\nInflation is projected to stay subdued, so no tightening is needed.\n\n"
              "DOVISH\nInflation is projected to stay subdued, so no tightening is needed.\n\n"
              "NEUTRAL\nThe sentence only describes the staff's forecasts.")
    item = _read("TaxSCQ", record, output)
    # every option alone on its line, each argued: several answers, or the options walked
    assert item.status == "format_failure" and item.veto in ("veto.several-answers", "veto.options-walked")
    # one label, with its reasons under it, is the answer
    item = _read("TaxSCQ", record, "DOVISH\nInflation is projected to stay subdued, so no tightening is needed.")
    assert item.status == "ok" and item.extracted == "DOVISH"


def test_bold_options_that_head_their_own_analysis_are_headings_not_answers() -> None:
    query = "最可能的诊断是\nA. 房间隔缺损\nB. 二尖瓣关闭不全\nC. 主动脉瓣狭窄\nD. 室间隔缺损"
    record = {"id": "r-bold", "query": query, "choices": ["房间隔缺损", "二尖瓣关闭不全", "主动脉瓣狭窄", "室间隔缺损"], "gold": 3,
              "answer": "室间隔缺损"}
    output = ("逐一分析：\n1. **房间隔缺损**：杂音位置不符。\n2. **二尖瓣关闭不全**：心尖部全收缩期杂音，与症状相符。\n"
              "3. **主动脉瓣狭窄**：杂音在胸骨右缘。\n4. **室间隔缺损**：胸骨左缘全收缩期杂音，与症状相符。\n\n"
              "二者都可能，信息不足，我无法给出一个确定的答案。")
    item = _read("TaxSCQ", record, output)
    assert item.status == "format_failure"
    # a bold option that answers, after the headings, is read
    item = _read("TaxSCQ", record, output.replace("二者都可能，信息不足，我无法给出一个确定的答案。", "综合来看最可能是 **室间隔缺损**。"))
    assert item.status == "ok" and item.extracted == "室间隔缺损"


def test_digits_written_against_a_letter_are_no_sure_value() -> None:
    record = {"id": "r-exponent", "query": "What is the area of a circle with a radius of 5 cm?", "answer": 78.54}
    item = _read("TaxCalc", record, "The area of a circle is πr2, where r is the radius of the circle.")
    assert item.read_by != "rule:number.sole-number" and item.confidence != "high"
    item = _read("TaxCalc", record, "The area is about 78.54 square centimetres.")
    assert item.read_by == "rule:number.sole-number" and item.scores["em"] == 1.0


def test_a_span_an_answer_statement_gives_that_refuses_is_no_answer() -> None:
    record = {"id": "r-refuse", "query": "Which film did she star in?", "text": "She starred in Beyond the Clouds.",
              "answer": "Beyond the Clouds"}
    for output in ("Thought: I could not find it in 5 steps.\nAction: finish[I don't have the answer]",
                   "I searched the passage.\nAnswer: I don't know.", "Answer: I do not have enough information."):
        item = _read("TaxRead", record, output)
        assert item.status == "format_failure" and item.veto == "veto.refusal", output
    assert _read("TaxRead", record, "Action: finish[Beyond the Clouds]").scores["em"] == 1.0


def test_chinese_outputs_that_say_they_lack_the_information_or_that_no_option_is_right_answer_nothing() -> None:
    record = {"id": "r-lacks", "query": "皮筋拉长4cm后长度是原来的1.25倍，原长多少cm？", "answer": 16}
    item = _read("TaxCalc", record, "设原长为x cm，则 x + 4 = x + 4。\n这个方程恒成立，这意味着我们没有足够的信息来计算x的值。")
    assert item.status == "format_failure"
    query = "实数a的取值范围是\nA. (-∞, 0]\nB. [-1, 0]\nC. [-1, 1]\nD. [0, +∞)"
    record = {"id": "r-none-zh", "query": query, "choices": ["(-∞, 0]", "[-1, 0]", "[-1, 1]", "[0, +∞)"], "gold": 1,
              "answer": "[-1, 0]"}
    item = _read("TaxSCQ", record, "a 必须满足 a ≥ 0 且 a = -1，这是矛盾的。\n\n因此，没有一个选项是正确的。")
    assert item.status == "format_failure" and item.veto == "veto.none-correct"


def test_japanese_conclusions_answer_and_an_options_text_before_its_label_is_its_name() -> None:
    query = "オリックスの総資産は2023年3月期から2024年3月期にかけて増加か減少か。\n最終行に「Answer: 値」の形式で答えてください。"
    record = {"id": "r-ja", "query": query, "choices": ["増加", "減少"], "gold": 0, "answer": "増加"}
    output = "2024年3月期: 355,777\n2023年3月期: 304,580\n\n結論として、オリックスの総資産は増加しました。\n\nAnswer: はい"
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "増加" and item.read_by == "rule:conclusion.statement"
    query = "前縦隔腫瘤で考えられるのはどれか。2つ選べ。\na: 胸腺腫\nb: 神経鞘腫\nc: 心膜嚢胞\nd: 肺過誤腫"
    record = {"id": "r-ja-several", "query": query, "answer": "AC"}
    item = _read("TaxMCQ", record, "所見を検討します。\n\nしたがって、胸腺腫（a）と心膜嚢胞（c）が適切な選択肢です。")
    assert item.status == "ok" and item.extracted == "AC"


def test_yes_and_no_answer_a_yes_or_no_pair_of_options_in_any_language() -> None:
    query = "資産の部の合計は、負債・純資産合計と一致するか。はい、いいえで答えてください。"
    record = {"id": "r-hai", "query": query, "choices": ["はい", "いいえ"], "gold": 1, "answer": "いいえ"}
    item = _read("TaxSCQ", record, "No, the two totals differ (99,188 against 113,112).")
    assert item.status == "ok" and item.extracted == "いいえ"
    record = {"id": "r-ye", "query": "두 합계가 일치합니까?", "choices": ["예", "아니요"], "gold": 0, "answer": "예"}
    assert _read("TaxSCQ", record, "Yes. Both totals are 6,533,721.").extracted == "예"


def test_a_json_field_the_prompt_names_for_the_option_gives_it_and_is_a_statement() -> None:
    query = ('Think step by step, then respond in JSON with the "correct_answer_key".\n\n'
             '{"question":"ภาษีมูลค่าเพิ่มอัตราใด","a":"5%","b":"7%","c":"10%","d":"12%"}')
    record = {"id": "r-key", "query": query, "choices": ["5%", "7%", "10%", "12%"], "gold": 1, "answer": "7%"}
    reasons = "อัตราภาษีมูลค่าเพิ่มของไทยในปัจจุบันคือร้อยละเจ็ด ซึ่งตรงกับตัวเลือก b " * 12
    item = _read("TaxSCQ", record, reasons + '\n\n```json\n{"correct_answer_key":"b"}\n```')
    assert item.status == "ok" and item.extracted == "7%" and item.read_by == "rule:json.answer-field"
    assert item.confidence == "high"  # an answer field is stated: a long output that ends on "}" is no cut-off one


def test_an_output_that_is_one_object_in_the_prompts_form_answers_even_the_examples_value() -> None:
    query = ('Respond with exactly one JSON object of this form:\n{\n  "answer": "B"\n}\n\nQuestion: Which rate applies?\n'
             "A) 13%\nB) 9%\nC) 6%\n\nYour response (JSON object with the single correct option letter):")
    record = {"id": "r-form", "query": query, "choices": ["13%", "9%", "6%"], "gold": 1, "answer": "9%"}
    item = _read("TaxSCQ", record, '{\n    "answer": "B"\n}')
    assert item.status == "ok" and item.extracted == "9%" and item.read_by == "rule:json.answer-field"
    # the form written back inside a copy of the prompt answers nothing
    assert _read("TaxSCQ", record, query).status == "format_failure"


def test_a_variable_under_a_latex_brace_makes_an_expression_not_a_number() -> None:
    record = {"id": "r-brace", "query": "Give the density of u at 3 degrees of freedom.", "answer": 0.3}
    for output in ('{ "answer": "\\\\boxed{\\\\frac{1}{2\\\\pi}\\\\left\\\\{1+\\\\frac{u^{2}}{4}\\\\right\\\\}^{-5}}" }',
                   "The density is $\\boxed{\\frac{1}{2\\pi}\\left\\{1+\\frac{u^{2}}{4}\\right\\}^{-5}}$",
                   '{"answer": "2 * (3y-1)"}'):
        item = _read("TaxCalc", record, output)
        assert item.status == "format_failure" and item.veto == "veto.expression", output


def test_a_line_that_is_only_an_option_letter_is_no_part_of_a_copy_of_the_prompt() -> None:
    query = ("###Instruction: The following are multiple choice questions (MCQs).\nYou should directly answer the question by "
             "choosing the correct option and then provide a rationale for your answer. \n\n###Question: On examination of "
             "the oral mucosa of a 35-year-old female you notice strawberry gums. This finding is pathognomonic for \n"
             "###Options:\nA.  Wegener granulomatosis\nB.  Acute leukemia\nC.  Turner syndrome\n\n###Answer:")
    record = {"id": "r-lone", "query": query, "choices": ["Wegener granulomatosis", "Acute leukemia", "Turner syndrome"],
              "gold": 0, "answer": "Wegener granulomatosis"}
    item = _read("TaxSCQ", record, "A\n\nRationale: Strawberry gums are pathognomonic for Wegener granulomatosis.\n"
                                   "Reference: Harrison's Internal Medicine, 18th edition")
    assert item.status == "ok" and item.extracted == "Wegener granulomatosis"


def test_a_line_that_announces_the_options_opens_their_analysis_and_option_headings_are_no_answers() -> None:
    query = ("Which starting material gives the ring?\n\nOptions:\nA. octa-2,6-diene\nB. octa-1,6-diene\nC. octa-1,7-diene\n"
             "D. nona-1,7-diene")
    record = {"id": "r-announce-options", "query": query, "choices": ["octa-2,6-diene", "octa-1,6-diene", "octa-1,7-diene",
                                                                        "nona-1,7-diene"], "gold": 1, "answer": "octa-1,6-diene"}
    output = ("To answer this question, we work backwards from the product.\n\n1) Looking at our options:\n\n"
              "   A. Has double bonds at positions 2 and 6, which won't work.\n   B. Has double bonds at 1 and 6, which could work.\n"
              "   C. Gives a seven-membered ring.\n\nTherefore, the correct answer is B: octa-1,6-diene.")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "octa-1,6-diene" and item.read_by == "rule:final.answer-statement"
    headings = ("Let's evaluate the options:\n\nA. **octa-2,6-diene:**\n   - Its bonds are in the wrong places.\n\n"
                "B. **octa-1,6-diene:**\n   - Closes to a six-membered ring.\n\nC. **octa-1,7-diene:**\n   - Seven-membered ring.\n\n"
                "The most reasonable starting material is:\n\n**B. octa-1,6-diene**")
    item = _read("TaxSCQ", record, headings)
    assert item.status == "ok" and item.extracted == "octa-1,6-diene"


def test_a_superlative_answer_that_names_a_bold_option_answers() -> None:
    query = "Which approach fits best?\nA. cDNA sequencing, then real-time PCR\nB. Symptoms, then nested PCR\nC. IgG ELISA"
    record = {"id": "r-bold-best", "query": query, "choices": ["cDNA sequencing, then real-time PCR", "Symptoms, then nested PCR",
                                                                 "IgG ELISA"], "gold": 0, "answer": "cDNA sequencing, then real-time PCR"}
    output = ("The best answer here is **A. cDNA sequencing, then real-time PCR.** Here's why:\n\n* **Why not B:** symptoms are "
              "not specific.\n* **Why not C:** antibodies take time.")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "cDNA sequencing, then real-time PCR"
    assert item.read_by == "rule:final.answer-statement"


_TEMPLATE_QUERY = ("Score the student solution.\nStep 1: 20 * 3 = 60\nStep 2: 60 - 60 = 0\n\nHere's the format I want:\n"
                   "Step-by-step Evaluation: [Provide a step by step examination of the student solution here.]\n"
                   "Final Judgement: [Insert only **correct** or **wrong** here]\n"
                   "First Error Step: [Insert either N/A or the step number where the first error occurs]\n"
                   "Error Analysis: [Insert either N/A or the analysis of the first error]\n\n### Response:")
_TEMPLATE_OUTPUT = ("Step-by-step Evaluation: Step 1 is right; step 2 subtracts the wrong amount, 60 - 20 = 40.\n"
                    "Final Judgement: wrong\nFirst Error Step: 2\nError Analysis: The student subtracts 60 instead of 20, "
                    "so 40 people is the right count.")


def test_the_fields_of_the_prompts_answer_template_are_the_answer() -> None:
    record = {"id": "r-template", "query": _TEMPLATE_QUERY, "choices": ["correct", "wrong"], "gold": 1, "answer": "wrong"}
    item = _read("TaxSCQ", record, _TEMPLATE_OUTPUT)
    assert item.status == "ok" and item.extracted == "wrong" and item.read_by == "rule:final.answer-statement"
    item = _read("TaxCalc", {"id": "r-template-step", "query": _TEMPLATE_QUERY, "answer": 2}, _TEMPLATE_OUTPUT)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"
    # what the output states after the template it filled (the student's value repeated) is no answer
    item = _read("TaxCalc", {"id": "r-template-after", "query": _TEMPLATE_QUERY, "answer": 2}, _TEMPLATE_OUTPUT + "\n#### 0")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_latin_word_names_an_option_only_whole() -> None:
    from taxpraben.parsing.choice_names import named_choices

    needles = [("correct", 0), ("wrong", 1), ("u", 2)]
    assert [index for _s, _e, index, _n in named_choices("Final Judgement: incorrect", needles)] == []
    assert [index for _s, _e, index, _n in named_choices("5-FU is an analogue of uracil", needles)] == []
    assert [index for _s, _e, index, _n in named_choices("Final Judgement: correct.", needles)] == [0]
    record = {"id": "r-whole-word", "query": _TEMPLATE_QUERY, "choices": ["correct", "wrong"], "gold": 1, "answer": "wrong"}
    item = _read("TaxSCQ", record, _TEMPLATE_OUTPUT.replace("Final Judgement: wrong", "Final Judgement: incorrect"))
    assert item.extracted != "correct"


def test_an_answer_label_in_brackets_heads_the_answer_and_lower_case_labels_before_kana_are_labels() -> None:
    query = ("問題を読み、正解を2つ選んでください。\n\n最終回答は必ず以下の形式で出力してください:\n【回答】a,c\n\n"
             "神経診察で予想される異常はどれか。２つ選べ。\n\na　片側性の筋力低下\nb　四肢協調運動の障害\nc　アキレス腱反射の亢進\n"
             "d　足先および足底の触覚の鈍麻\ne　足関節内側における振動覚の低下")
    record = {"id": "r-bracket-label", "query": query, "answer": "DE"}
    output = "したがって、予想される異常は d と e です。\n\n【回答】d,e"
    item = _read("TaxMCQ", record, output)
    assert item.status == "ok" and item.extracted == "DE" and item.read_by == "rule:final.answer-statement"
    assert item.evidence is not None and output[item.evidence[0] : item.evidence[1]].startswith("【回答】")
    # the prompt's example line, written as the whole answer, answers with the example's letters
    assert _read("TaxMCQ", record, "【回答】a,c").extracted == "AC"


def test_turkish_answer_statements_answer_and_a_words_first_letter_is_no_second_option() -> None:
    query = "Soru: Hangi kaynak yenilenebilir?\nA) Doğal gaz\nB) Taş kömürü\nC) Rüzgâr\nD) Linyit kömürü\nÇözüm: "
    record = {"id": "r-tr", "query": query, "choices": ["Doğal gaz", "Taş kömürü", "Rüzgâr", "Linyit kömürü"], "gold": 2,
              "answer": "Rüzgâr"}
    for output in ("Rüzgâr tükenmez.\n\nCevap: C) Rüzgâr", "Kömür tükenir.\n\nDoğru cevap C şıkkıdır çünkü rüzgâr yenilenir.",
                   "Dolayısıyla doğru cevap C'dir."):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "Rüzgâr" and item.read_by == "rule:final.answer-statement", output


def test_a_json_answer_that_writes_an_options_expression_otherwise_names_it() -> None:
    query = "Which is the intercept form of y = 64x^2 - 49?\nA. y=(8x+49)(8x-1)\nB. y=(8x+7)(8x-7)\nC. y=(8x-7)^2\nD. y=64(x-7)"
    choices = ["y=(8x+49)(8x-1)", "y=(8x+7)(8x-7)", "y=(8x-7)^2", "y=64(x-7)"]
    record = {"id": "r-expression", "query": query, "choices": choices, "gold": 1, "answer": "y=(8x+7)(8x-7)"}
    for output in ('{"answer": "(8x+7)(8x-7)", "reasoning": "difference of squares"}', '{"answer": "y = (8x + 7)(8x - 7)"}'):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "y=(8x+7)(8x-7)" and item.read_by == "rule:json.answer-field", output
    assert _read("TaxSCQ", record, '{"answer": "(8x+7)"}').extracted != "y=(8x+7)(8x-7)"


def test_an_amount_with_the_scale_the_output_gives_the_prompts_figures_is_in_their_unit() -> None:
    # A Japanese statement's table with bare figures: the model writes them with 百万円, and so
    # its answer "3,095百万円" is the table's 3,095, not 3,095,000,000.
    table = "| 項目 | 2024年3月期 |\n| --- | --- |\n| 売上総利益 | 26,457 |\n| 販売費及び一般管理費 | 23,362 |\n"
    record = {"id": "r-units", "query": table + "\n質問: 売上総利益から販売費及び一般管理費を差し引いた額はいくらか。", "answer": 3095}
    output = ("売上総利益は26,457百万円、販売費及び一般管理費は23,362百万円です。\n26,457 - 23,362 = 3,095\n\n"
              "Answer: 3,095百万円")
    item = _read("TaxCalc", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.extracted == "3095百万円"
    # a prompt that names its unit (Japanese 単位) says it without the model
    named = dict(record, query="なお、金額は百万円単位で表示している。\n" + record["query"])
    item = _read("TaxCalc", named, "Answer: 3,095百万円")
    assert item.status == "ok" and item.scores["em"] == 1.0
    # where the model attaches its multiplier to no figure of the prompt, the amount is what it says
    item = _read("TaxCalc", record, "差し引いた額は3,095百万円です。\n\nAnswer: 3,095百万円")
    assert item.status == "ok" and item.scores["em"] == 0.0
    # a percent is shown as a percent, never with the amount's unit
    item = _read("TaxCalc", dict(named, answer=11.7), "Answer: 11.7%")
    assert item.extracted == "11.7%"


def test_a_bare_number_answering_a_rate_question_may_be_in_percent_points() -> None:
    query = ("Return exactly one final answer as [FINAL_ANSWER]<number>[/FINAL_ANSWER]. No text outside the tag.\n\n"
             "Question:\nwhat is the percentage change in inventory balance in 2014?")
    record = {"id": "r-rate", "query": query, "answer": -0.044}
    item = _read("TaxCalc", record, "[FINAL_ANSWER]-4.38[/FINAL_ANSWER]")
    assert item.status == "ok" and item.scores["em"] == 1.0  # -4.38% is -0.0438, the gold at its places
    item = _read("TaxCalc", record, "[FINAL_ANSWER]-0.0438[/FINAL_ANSWER]")  # as a fraction: the same
    assert item.scores["em"] == 1.0
    assert _read("TaxCalc", record, "[FINAL_ANSWER]-4.6[/FINAL_ANSWER]").scores["em"] == 0.0
    # an amount question gives a bare number no percent reading
    amount = dict(record, query=query.replace("the percentage change in inventory balance", "the inventory balance, in billions,"))
    assert _read("TaxCalc", amount, "[FINAL_ANSWER]-4.38[/FINAL_ANSWER]").scores["em"] == 0.0


def test_one_answer_tag_closed_around_different_values_is_several_answers() -> None:
    query = "Return exactly one final answer as [FINAL_ANSWER]<number>[/FINAL_ANSWER].\n\nQuestion:\nwhat was the maximum net derivative liability?"
    record = {"id": "r-tags", "query": query, "answer": 35066}
    looping = "Output:\n" + " ".join(f"[FINAL_ANSWER]{v}[/FINAL_ANSWER]" for v in (27885, 35066) * 4)
    item = _read("TaxCalc", record, looping)
    assert item.status == "format_failure" and item.scores["em"] == 0.0
    # the same value at two precisions, or one tag repeated, is one answer
    same = "[FINAL_ANSWER]35066.000000000001[/FINAL_ANSWER] | [FINAL_ANSWER]35066[/FINAL_ANSWER]"
    assert _read("TaxCalc", record, same).scores["em"] == 1.0
    # a correction between two tags settles it
    corrected = "[FINAL_ANSWER]27885[/FINAL_ANSWER]\nWait, that is 2011. Correction: [FINAL_ANSWER]35066[/FINAL_ANSWER]"
    assert _read("TaxCalc", record, corrected).scores["em"] == 1.0


def test_the_turkish_answer_word_in_its_forms_states_the_answer() -> None:
    query = "Soru: Hangileri doğrudur?\nA) I, II ve III\nB) Yalnız III\nC) Yalnız I\nD) Yalnız II\n\nCevap: "
    record = {"id": "r-tr", "query": query, "choices": ["I, II ve III", "Yalnız III", "Yalnız I", "Yalnız II"],
              "gold": 1, "answer": "Yalnız III"}
    for output in ("Bu sorunun doğru cevabı B) Yalnız III seçeneğidir.\n\nAçıklama: I ve II yanlıştır.",
                   "I. ifade yanlış, III. ifade doğrudur. Yani cevap B seçeneğidir.",
                   "Cevap B\n\nNeden: III doğrudur; A ve C yanlıştır."):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "Yalnız III", output
    # a roman numeral in an option's text is no second option letter: no hedge between A and "I"
    item = _read("TaxSCQ", dict(record, gold=0, answer="I, II ve III"), "Bu sorunun doğru cevabı A) I, II ve III olmalıdır.")
    assert item.status == "ok" and item.extracted == "I, II ve III"
    # the answer word that opens a sentence about something else gives no option
    assert _read("TaxSCQ", record, "Cevap vermek zor; I ve III tartışmalıdır.").status == "format_failure"


def test_a_final_field_of_the_models_own_states_the_answer() -> None:
    query = ("Act as a grade school math teacher and score the following problem solution.\nQuestion: …\n"
             "Student Solution:\nStep 1: 480 - 480 = 0\nStep 2: The answer is: 0\n\n### Response: Let's think step by step.")
    record = {"id": "r-final", "query": query, "choices": ["correct", "wrong"], "gold": 1, "answer": "wrong"}
    output = ("The student correctly adds the people in the cars and the buses.\nThe student's final answer is: 0.\n\n"
              "Final Judgement: wrong\nFirst Error Step: Step 1\nError Analysis: the people inside are 480.")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "wrong" and item.read_by == "rule:final.answer-statement"
    # a final step of the working states nothing
    calc = {"id": "r-final-step", "query": "How many apples are left?", "answer": 7}
    item = _read("TaxCalc", calc, "First, 10 - 2 = 8.\nFinal step: subtract the 1 she ate, 8 - 1 = 7")
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by != "rule:final.answer-statement"


def test_a_json_answer_that_gives_an_options_value_without_its_unit_names_it() -> None:
    choices = ["42.1^{\\circ}", "45.0^{\\circ}", "47.9^{\\circ}", "50.2^{\\circ}"]
    query = ("Present your final answer in a JSON format: {\"answer\": \"<answer>\", \"reasoning\": \"<solution>\"}\n"
             "Here is the question: find the angle.\n(A) 42.1° (B) 45.0° (C) 47.9° (D) 50.2°")
    record = {"id": "r-value", "query": query, "choices": choices, "gold": 2, "answer": choices[2]}
    item = _read("TaxSCQ", record, '{"answer": 47.9, "reasoning": "tan(x) = 1.105, so x = 47.9 degrees"}')
    assert item.status == "ok" and item.extracted == choices[2] and item.read_by == "rule:json.answer-field"
    # a value two options state, or none states, names no option
    twice = dict(record, choices=["47.9^{\\circ}", "47.9 \\mathrm{~rad}", "45.0^{\\circ}", "50.2^{\\circ}"], gold=0,
                 answer="47.9^{\\circ}")
    assert _read("TaxSCQ", twice, '{"answer": 47.9, "reasoning": "x = 47.9"}').status == "format_failure"
    assert _read("TaxSCQ", record, '{"answer": 46.3, "reasoning": "x = 46.3"}').status == "format_failure"


def test_a_question_under_its_label_is_the_question() -> None:
    from taxpraben.parsing.span_words import question_of

    query = "Context:\n[the table]\n\nQuestion:\nin 2018 what was the percent of the cib markets net interest income\n\nAnswer:"
    assert question_of(query) == "in 2018 what was the percent of the cib markets net interest income"
    item = _read("TaxCalc", {"id": "r-q", "query": query, "answer": 0.0554}, "[FINAL_ANSWER]5.54[/FINAL_ANSWER]")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_an_answer_statement_that_opens_on_a_year_the_question_names_gives_no_value() -> None:
    query = "Question:\nwhat was the percentage change in total managed consumer loans from 2007 to 2008?\n\nAnswer:"
    record = {"id": "r-year", "query": query, "answer": -0.07}
    output = ("Answer:\nOkay, let's see. The question asks for the change from 2007 to 2008. Hmm, first I need to find "
              "the right figures in the table, and the table lists several of them for each year, so I have to be careful "
              "about which line is the managed one and which is the held one. " * 3
              + "There are two different numbers for 2007 and 2008. Let me check again. The first line says the")
    item = _read("TaxCalc", record, output)
    assert item.status == "format_failure"  # cut off before any answer; "2008" is the period asked about
    # a question that asks for a year is answered by one
    asks = {"id": "r-year2", "query": "In which year did the loans peak?", "answer": 2008}
    assert _read("TaxCalc", asks, "Answer: 2008").scores["em"] == 1.0


def test_the_correct_answer_in_romance_and_german_names_its_option_by_number_article_or_letter() -> None:
    query = ("Tu respuesta debe seguir estrictamente este formato:\n'La respuesta correcta es la número X' (donde X es un "
             "número del 1 al 4).\n\n¿Qué apolipoproteína?:\n\n1. Apolipoproteína E.\n2. Apolipoproteína B.\n"
             "3. Apolipoproteína CII.\n4. Apolipoproteína AI.\n")
    choices = ["Apolipoproteína E.", "Apolipoproteína B.", "Apolipoproteína CII.", "Apolipoproteína AI."]
    record = {"id": "r-es", "query": query, "choices": choices, "gold": 1, "answer": choices[1]}
    for output in ("La respuesta correcta es la número 2.\n\nLa apoB es el ligando del receptor LDL; la apoE no lo es.",
                   "La respuesta correcta es la opción número 2. \nExplicación: la apoB se une al receptor LDL.",
                   "**La respuesta correcta es la 2.**\n\nLa apoB se une al receptor.",
                   "La respuesta correcta es la número 2: Apolipoproteína B. La 1 y la 4 no intervienen."):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == choices[1], output
        assert item.read_by == "rule:final.answer-statement" and item.confidence == "high", output
    pt = {"id": "r-pt", "query": "Alternativas:\nA. I.\nB. II.\nC. III.\nD. IV.\nE. V.\nResposta:",
          "choices": ["I.", "II.", "III.", "IV.", "V."], "gold": 3, "answer": "IV."}
    item = _read("TaxSCQ", pt, "A resposta correta é a letra D, modelo IV.")
    assert item.status == "ok" and item.extracted == "IV." and item.read_by == "rule:final.answer-statement"
    de = {"id": "r-de", "query": "Welche Aussage stimmt?\nA) Eins\nB) Zwei\nC) Drei", "choices": ["Eins", "Zwei", "Drei"],
          "gold": 2, "answer": "Drei"}
    assert _read("TaxSCQ", de, "Die richtige Antwort ist C, denn A und B widersprechen dem Text.").extracted == "Drei"


def test_a_conclusion_that_restates_the_questions_data_gives_the_value_it_does_not_give() -> None:
    query = ("Tommy sells brownies for $3 a slice and cheesecakes for $4 a slice. If Tommy sells 43 brownies and 23 "
             "slices of cheesecake, how much money does Tommy raise?")
    output = ("Total money raised = $129 + $92 = $221\n\nSo, Tommy raises $221 from selling 43 brownies and 23 slices "
              "of cheesecake.")
    item = _read("TaxCalc", {"id": "r-given", "query": query, "answer": 221}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:conclusion.statement"
    # a conclusion whose result happens to be one of the question's values still gives it
    same = _read("TaxCalc", {"id": "r-given2", "query": "Ann has 5 apples and eats none. How many are left?", "answer": 5},
                 "She eats none of them.\nSo, Ann has 5 apples left.")
    assert same.status == "ok" and same.scores["em"] == 1.0


def test_a_yes_or_no_to_an_either_or_question_names_no_option_the_conclusion_before_it_does() -> None:
    query = ("| 売上高 | 72,221.3 | 64,063.5 |\n\n質問: エーザイは2023年3月期から2024年3月期にかけて増収か減収か。\n\n"
             "計算過程を示した後、最終行に「Answer: 値」の形式で答えを出力してください。")
    record = {"id": "r-ja-either", "query": query, "choices": ["増収", "減収"], "gold": 0, "answer": "増収"}
    # "…なので、" gives its consequence: a conclusion
    item = _read("TaxSCQ", record, "売上高を比較する。\n2024年3月期: 72,221.3\n2023年3月期: 64,063.5\n\n"
                                   "72,221.3 > 64,063.5なので、増収である。\n\nAnswer: はい\n")
    assert item.status == "ok" and item.extracted == "増収" and item.read_by == "rule:conclusion.statement"
    # a last sentence that names the option without a conclusion word, then the yes or no
    worse = dict(record, choices=["改善", "悪化"], gold=1, answer="悪化")
    item = _read("TaxSCQ", worse, "- 2023年3月期: 約7.76%\n- 2024年3月期: 約-12.30%\n\n"
                                  "営業利益率は2023年3月期から2024年3月期にかけて悪化しています。\n\nAnswer: 値は「いいえ」")
    assert item.status == "ok" and item.extracted == "悪化"
    english = {"id": "r-en-either", "query": "Did the margin improve or worsen from 2023 to 2024?",
               "choices": ["improve", "worsen"], "gold": 1, "answer": "worsen"}
    item = _read("TaxSCQ", english, "The margin fell from 7.8% to -12.3%, so it got worse: it did worsen.\n\nAnswer: Yes")
    assert item.status == "ok" and item.extracted == "worsen"
    # where the options are a yes/no pair, the yes or no is the answer
    pair = {"id": "r-yn", "query": "Did revenue rise? Answer yes or no.", "choices": ["はい", "いいえ"], "gold": 0,
            "answer": "はい"}
    assert _read("TaxSCQ", pair, "売上高は増加したので、増収である。\n\nAnswer: はい").extracted == "はい"


def test_a_derivation_that_closes_by_announcing_its_next_step_has_no_answer() -> None:
    query = "The hospital tests 25 vials and finds two ineffective. What is the probability the shipment came from Vendor A?"
    output = ("Let's denote:\n- Event A: the shipment came from Vendor A.\n- Event B: two of 25 vials are ineffective.\n\n"
              "### Step 2: Apply Bayes' Theorem\nP(A|B) = P(B|A) P(A) / P(B)\n\nNow, let's proceed with the calculations.")
    item = _read("TaxCalc", {"id": "r-announce", "query": query, "answer": 0.24}, output)
    assert item.status == "format_failure" and item.veto == "veto.unfinished"
    # the same derivation that closes on its result is read at it
    done = output.replace("Now, let's proceed with the calculations.", "P(A|B) = 0.24")
    assert _read("TaxCalc", {"id": "r-announce2", "query": query, "answer": 0.24}, done).scores["em"] == 1.0


def test_think_and_answer_sections_logged_without_their_turn_tokens() -> None:
    query = "Kira bought 3 apples, 5 bananas and 6 oranges. Lola ate 2 pieces of the fruit. How many pieces are left?"
    output = ("think\nOkay, let me add them: 3 + 5 + 6 = 14. Lola ate 2, so 12 are left.\n"
              "But let me confirm. Let's read the problem again.\n" + query + "\nSo 12 again.\n"
              "**Final Answer**\n\\boxed{12}\nanswer\nAnswer: Kira bought 14 pieces of fruit in all.\n\n"
              "14 - 2 = 12\n\nThus, the number of pieces of fruit left is \\(\\boxed{12}\\).")
    item = _read("TaxCalc", {"id": "r-bare-think", "query": query, "answer": 12}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.boxed"
    # cut off inside the think section: nothing was answered
    cut = "think\nOkay, let me add them: 3 + 5 + 6 = 14. Lola ate 2, so the number left is 14 - 2 ="
    assert _read("TaxCalc", {"id": "r-bare-think2", "query": query, "answer": 12}, cut).status == "format_failure"


def test_an_answer_marker_that_heads_a_restatement_of_the_data_gives_the_derivations_result() -> None:
    query = ("Tom buys a bedroom set for $3000. He sells his old bedroom for $1000 and uses that to pay for part of the "
             "bedroom set. He then has to pay 10% a month for the bedroom set. How much does he have to pay per month?")
    output = ("Answer: Tom buys a bedroom set for $3000 and sells his old bedroom set for $1000, reducing the remaining "
              "balance to $2000.\n\n1. **Remaining Balance**: $3000 - $1000 = $2000.\n2. **Monthly Payment**: 10% of "
              "$2000 = $200.\n\nThus, Tom has to pay **$200 per month**.")
    item = _read("TaxCalc", {"id": "r-restated", "query": query, "answer": 200}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:conclusion.statement"
    # an answer that gives one of the question's values right after its marker still gives it
    same = _read("TaxCalc", {"id": "r-restated2", "query": "Tom has $3000 and spends $1000 of it on Monday. "
                             "How much did he spend?", "answer": 1000}, "Answer: $1000, of his $3000.")
    assert same.status == "ok" and same.scores["em"] == 1.0
    # one datum named and a result equal to it is no restatement of the data
    named = _read("TaxCalc", {"id": "r-restated3", "query": "循环群Z/100Z有多少个子群？", "answer": 100},
                  "结论：循环群Z/100Z有100个子群。")
    assert named.status == "ok" and named.scores["em"] == 1.0


def test_cells_of_the_prompts_table_written_back_are_several_values() -> None:
    query = ("Person | Clean water | Animal rights\nBridget | $16 | $9\nAnne | $19 | $18\n"
             "How much more money did Anne donate to clean water than Bridget?")
    for output in ("$16 | $9", "high heels | 3 | 7"):
        item = _read("TaxCalc", {"id": "r-cells", "query": query, "answer": 3}, output)
        assert item.status == "format_failure" and item.veto == "veto.alternatives", output
    # an absolute value's bars are no table ("|x + 5| 10"), and one cell is one value
    one = _read("TaxCalc", {"id": "r-cells2", "query": query, "answer": 3}, "Anne | $3")
    assert one.status == "ok" and one.scores["em"] == 1.0


def test_a_closing_sentence_that_restates_the_data_gives_the_value_it_does_not_give() -> None:
    query = ("ticket for a Caribbean cruise | $4,761\nQuestion: How much money does Aisha need to buy 8 tickets for a "
             "Caribbean cruise?")
    item = _read("TaxCalc", {"id": "r-last-given", "query": query, "answer": 38088},
                 "Aisha needs $38,088 to buy 8 tickets for a Caribbean cruise.")
    assert item.status == "ok" and item.scores["em"] == 1.0
    # where the line holds two values the question does not give, neither is picked for it
    two = _read("TaxCalc", {"id": "r-last-given2", "query": query, "answer": 38088},
                "She pays $4,000 now and $34,088 later for 8 tickets")
    assert two.status == "ok" and two.read_by == "rule:number.last-number" and two.scores["em"] == 0.0
    assert "4000" not in str(two.extracted) and "34088" not in str(two.extracted)


def test_one_value_boxed_exact_and_rounded_is_one_answer() -> None:
    query = "Twenty grams of ice at 0°C are dropped into 120 grams of water at 70°C. Find the final temperature."
    output = ("\\[ T_f = \\frac{340}{7} \\approx 48.57^\\circ C \\]\nTherefore, the final temperature of the mixture is:\n"
              "\\[ \\boxed{\\frac{340}{7}^\\circ C} \\] or approximately \\( \\boxed{48.57^\\circ C} \\).")
    item = _read("TaxCalc", {"id": "r-rounded", "query": query, "answer": 48.57}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.boxed"
    # two different values boxed on one line are still two answers, and so are 1 and 1.4
    for two in ("\\boxed{\\frac{340}{7}} or \\boxed{48.6}", "\\boxed{1} or \\boxed{1.4}"):
        assert _read("TaxCalc", {"id": "r-rounded2", "query": query, "answer": 48.57}, two).veto == "veto.several-answers", two


def test_a_closing_box_of_words_is_no_number_and_none_is_read_from_the_derivation() -> None:
    query = ("A particle moves in a circular orbit in a force field F(r) = -k/r^2. Show that, if k suddenly decreases to "
             "half its original value, the particle's orbit becomes parabolic. Provide the final answer in \\boxed{}.")
    output = ("The kinetic energy remains the same. Therefore, the new total energy is E' = k/2r - k/2r = 0.\n"
              "Since the new total energy is zero, the particle is no longer bound.\n"
              "Thus the orbit becomes parabolic. The final answer is:\n\\[ \\boxed{\\text{parabolic}}. \\]")
    item = _read("TaxCalc", {"id": "r-word-box", "query": query, "answer": 1}, output)
    assert item.status == "format_failure" and item.veto == "veto.word-box"
    # a box with its number and unit is read as ever
    unit = _read("TaxCalc", {"id": "r-word-box2", "query": query, "answer": 44000}, "The tax is \\boxed{44000\\text{ yuan}}")
    assert unit.status == "ok" and unit.scores["em"] == 1.0


def test_an_answer_logged_as_html_is_read_as_the_text_it_shows() -> None:
    query = ("<div><p>How many people got on the bus?</p></div>\n\n[user]\nIf the ticket is $2 per person, how much is "
             "the total money earned by the bus?")
    output = ("<div><div><p>The total money earned by the bus is the number of tickets sold times the price.</p>"
              "<p>In this case 16.5 people got on and each ticket is $2, so the total money earned by the bus is "
              "16.5 * $2 = &lt;&lt;16.5*2=33&gt;&gt;33.</p></div></div>")
    item = _read("TaxCalc", {"id": "r-html", "query": query, "answer": 33}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0
    assert "<p>" not in (item.evidence or "") and "&lt;" not in (item.evidence or "")


def test_a_conclusion_that_restates_a_true_false_questions_claim_affirms_or_denies_it() -> None:
    def record(question: str, gold: int) -> dict[str, Any]:
        return {"id": "r-claim", "query": f"The answer needs to be True or False.\n\n{question}", "choices": ["True", "False"],
                "gold": gold, "answer": ["True", "False"][gold]}

    residue = record("Is 7 a quadratic residue modulo 19? Use Gauss's Lemma to answer it.", 0)
    item = _read("TaxSCQ", residue, "By Gauss's Lemma the count is even.\nTherefore, 7 is a quadratic residue modulo 19.</s>")
    assert item.status == "ok" and item.extracted == "True"
    line = record("Does r(t) = [8 - 4t^3, 2 + 5t^2, 9t^3] parametrize a line?", 1)
    item = _read("TaxSCQ", line, "The components are cubic in t.\nTherefore, the answer is that r(t) = [8 - 4t^3, 2 + 5t^2, "
                                 "9t^3] does not parametrize a line, since the components are not linear functions of t.")
    assert item.status == "ok" and item.extracted == "False"
    # a last sentence that does not restate the claim gives no option by it
    other = _read("TaxSCQ", residue, "By Gauss's Lemma we count the residues.\nThe count of them is even.")
    assert other.status == "format_failure"


def test_an_answer_under_a_supposition_answers_another_case_not_the_question() -> None:
    query = "已知 z = 3 + 2i，则（ ）\nA. 甲\nB. |z| = 5\nC. 丙\nD. 丁"
    output = ("**总结：** 选项 A、C、D 正确，选项 B 错误。\n\n如果是**单项选择题**且题目问的是“下列结论错误的是”，则答案为 B。"
              "如果是**多项选择题**，则答案为 A、C、D。\n\n\\boxed{ACD}")
    item = _read("TaxMCQ", {"id": "r-supposed", "query": query, "answer": "ACD"}, output)
    assert item.status == "ok" and item.extracted == "ACD" and item.read_by == "rule:final.boxed"
    # two different answers both stated outright are still several answers
    both = _read("TaxMCQ", {"id": "r-supposed2", "query": query, "answer": "ACD"}, "答案为 B。\n\n\\boxed{ACD}")
    assert both.status == "format_failure" and both.veto == "veto.several-answers"


def test_a_copy_of_the_questions_words_does_not_swallow_the_first_letter_of_the_answer() -> None:
    query = ("In this problem, multiple options can be correct.\n\nProblem: Based on the compounds of group 15 elements, "
             "the correct statement(s) is (are)\n(A) Bi2O5 is more basic than N2O5\n(B) NF3 is more covalent than BiF3\n"
             "(C) PH3 boils at lower temperature than NH3\n(D) The N-N single bond is stronger than the P-P single bond")
    output = ("Bismuth is more metallic, so its oxide is more basic. Fluorine bonds to N covalently. NH3 has hydrogen "
              "bonds. The N-N bond is weak.\n\nThe correct statement(s) is (are): A, C, and D.")
    item = _read("TaxMCQ", {"id": "r-copy-letter", "query": query, "answer": "ACD"}, output)
    assert item.status == "ok" and item.extracted == "ACD"


def test_option_letters_joined_by_the_word_for_and_in_french_german_or_spanish_are_one_set() -> None:
    query = ("La concentration plasmatique du glucose:\n(a) Est variable.\n(b) Est plus faible chez le nouveau-né.\n"
             "(c) Est plus élevée.\n(d) Est augmentée.\n(e) Influence l'osmolarité.\nRéponse(s) :")
    for output, expect in ((" (b) et (d)", "BD"), (" (a) et (e).\n(a) Le glucose varie au cours de la journée.", "AE"),
                           ("Die richtigen Antworten sind B und D.", "BD"), ("Las respuestas correctas son A y C.", "AC")):
        item = _read("TaxMCQ", {"id": "r-et", "query": query, "answer": expect}, output)
        assert item.status == "ok" and item.extracted == expect, output
    # the English list with its verdict is read as before
    english = _read("TaxMCQ", {"id": "r-et2", "query": query, "answer": "ABD"},
                    "Final Answer: (A), (B), and (D) are dimensionally correct.")
    assert english.extracted == "ABD"


_DEMOS = ("Contoh soalan 1\nsoalan: Ain berasa .......... kerana tidak dapat menjawab soalan.\nA. senang hati\nB. terang hati\n"
          "C. buta hati\nD. susah hati\n{label}: D\n\nsoalan: Tutuplah ....... botol itu supaya air tidak tumpah.\n"
          "A. kemas-kemas\nB. ketat-ketat\nC. sempit-sempit\nD. dalam-dalam")
_BOTTLE = ["kemas-kemas", "ketat-ketat", "sempit-sempit", "dalam-dalam"]


def test_the_label_of_the_demonstrations_answers_is_the_slot_of_the_models_answer() -> None:
    # the few-shot prompt gives each demonstration's answer under its label and does not end on
    # it; the model that writes that label with its own letter answers, in any language
    for label in ("jawapan", "Pilihan"):
        record = {"id": "r-demo-label", "query": _DEMOS.format(label=label), "choices": _BOTTLE, "gold": 1, "answer": "ketat-ketat"}
        item = _read("TaxSCQ", record, f"{label}: B\n\nUntuk menutup botol dengan rapat, kita perlu menutupnya dengan ketat.")
        assert item.status == "ok" and item.extracted == "ketat-ketat", label
    # a label whose lines in the prompt hold more than an answer is still a section of the prompt
    record = {"id": "r-demo-label2", "query": _DEMOS.format(label="jawapan"), "choices": _BOTTLE, "gold": 1, "answer": "ketat-ketat"}
    item = _read("TaxSCQ", record, "B. ketat-ketat\n\nsoalan: Tutuplah pintu itu.\nA. rapat\nB. luas")
    assert item.status == "ok" and item.extracted == "ketat-ketat"


def test_malay_answer_statements_and_answer_heads() -> None:
    record = {"id": "r-ms", "query": "objektif: Jawab soalan yang diberikan\nsoalan: Orang yang .......... tentu dapat "
              "menyelesaikan masalah ini.\nA. otak cair\nB. otak beku\nC. otak udang\nD. otak telur",
              "choices": ["otak cair", "otak beku", "otak udang", "otak telur"], "gold": 0, "answer": "otak cair"}
    outputs = ("Jawapan yang betul ialah A. otak cair\n\nFrasa ini bermaksud seseorang yang bijak. Pilihan B dan D kurang sesuai.",
               "Jawapan yang paling sesuai untuk soalan \"Orang yang .......... tentu dapat menyelesaikan masalah ini\" ialah A. "
               "otak cair.\n\nPilihan D kurang tepat kerana maksudnya negatif.",
               # the prompt's labels written back, then the answer under the Malay answer head
               "Objektif: Menjawab soalan yang diberikan\n\nSoalan: Orang yang .......... tentu dapat menyelesaikan masalah "
               "ini.\nA. otak cair\nB. otak beku\nC. otak udang\nD. otak telur\n\nJawapan: A. otak cair\n\nPenjelasan: "
               "Pilihan B, C dan D membawa maksud yang negatif.")
    for output in outputs:
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "otak cair", output
        assert item.read_by == "rule:final.answer-statement"


def test_a_set_of_letters_joined_by_and_in_a_one_answer_statement_is_no_answer() -> None:
    record = {"id": "r-set", "query": "Which word is wrong?\nA. ketimuran\nB. setengah-setengah\nC. pada\nD. tiada kesalahan",
              "choices": ["ketimuran", "setengah-setengah", "pada", "tiada kesalahan"], "gold": 1, "answer": "setengah-setengah"}
    for output in ("So the correct answer is A, B and C.", "Jadi, jawapan yang betul ialah A, B dan C.", "Jawapan: B atau C"):
        item = _read("TaxSCQ", record, output)
        assert item.status == "format_failure" and item.veto == "veto.hedge", output
    # a letter after a comma that opens a clause about its option is still no second answer
    item = _read("TaxSCQ", record, "The answer is B, D is a different case.")
    assert item.status == "ok" and item.extracted == "setengah-setengah"


_PHARMA = ("Réponds avec la ou les lettres correspondant à la bonne réponse.\n\nLe diagnostic de l'infection à VIH repose sur :\n"
           "(a) La numération des lymphocytes T CD4.\n(b) La charge virale en copies d'ARN par mL.\n(c) L'antigénémie p24.\n"
           "(d) Le dosage des anticorps neutralisants.\n(e) L'étude des anticorps anti-VIH.\nRéponse(s) :")


def test_the_option_list_written_back_and_cut_off_inside_the_next_option_is_no_selection() -> None:
    record = {"id": "r-cut", "query": _PHARMA, "answer": "ABC"}
    for output in ("(a) La numération des lymphocytes T CD4.\n(b) La charge virale en copies d",
                   "\n(a) La numération des lymphocytes T CD4.\n(b) La charge virale en copies d'ARN par mL.\n(c) L'antigénémie p24.\n(",
                   "a) La numération des lymphocytes T CD4.\n(b) La charge virale en copies d'ARN par mL.\n(c) L'ant"):
        item = _read("TaxMCQ", record, output)
        assert item.status == "format_failure" and item.veto == "veto.copy-of-prompt", output
    # whole lines alone select; a selection that skips the first options, cut off, still selects
    whole = _read("TaxMCQ", record, "(a) La numération des lymphocytes T CD4.\n(b) La charge virale en copies d'ARN par mL.")
    assert whole.status == "ok" and whole.extracted == "AB"
    skipped = _read("TaxMCQ", record, " (c) L'antigénémie p24.\n(d) Le dos")
    assert skipped.status == "ok" and skipped.extracted == "CD"


def test_an_output_that_goes_through_the_options_and_stops_inside_the_next_has_not_chosen() -> None:
    record = {"id": "r-walk", "query": _PHARMA, "answer": "ABC"}
    item = _read("TaxMCQ", record, "\n(a) La numération des CD4 est un marqueur de suivi.\n(b) La charge vir")
    assert item.status == "format_failure" and item.veto == "veto.cut-off-in-options"
    # a last line that ends its sentence is no line cut off
    whole = _read("TaxMCQ", record, "\n(a) La numération des CD4 est un marqueur de suivi.\n(b) La charge virale aussi.")
    assert whole.veto != "veto.cut-off-in-options"


def test_different_answers_under_the_answer_word_of_any_language_are_several() -> None:
    record = {"id": "r-several", "query": _PHARMA, "answer": "B"}
    for output in ("a)\n\nRéponse : (b)\n\nRéponse : (c)\n\nRéponse : (d)", "Antwort: B\n\nAntwort: C"):
        item = _read("TaxMCQ", record, output)
        assert item.status == "format_failure" and item.veto == "veto.several-answers", output
    # the same answer twice is one answer
    same = _read("TaxMCQ", record, "Réponse : (b)\n\nRéponse : (b)")
    assert same.status == "ok" and same.extracted == "B"


def test_an_answer_that_names_a_demonstrations_option_answers_the_demonstration() -> None:
    # a few-shot model answers each example again, then the question asked: the statements that
    # name an example's option by its text answer the example, not the question
    query = ("Contoh soalan 1\nsoalan: Ali tidak datang .......... dia sakit.\nA. walaupun\nB. kerana\nC. tetapi\nD. jika\n"
             "jawapan: B\n\nsoalan: Tutuplah ....... botol itu supaya air tidak tumpah.\nA. kemas-kemas\nB. ketat-ketat\n"
             "C. sempit-sempit\nD. dalam-dalam")
    record = {"id": "r-demo-again", "query": query, "choices": _BOTTLE, "gold": 1, "answer": "ketat-ketat"}
    item = _read("TaxSCQ", record, "Contoh soalan 1:\nJawapan: B. kerana\n\nSoalan 2:\nJawapan: B. ketat-ketat")
    assert item.status == "ok" and item.extracted == "ketat-ketat"
    wrong = _read("TaxSCQ", record, "Contoh soalan 1:\nJawapan: B. kerana\n\nSoalan 2:\nJawapan: C. sempit-sempit")
    assert wrong.status == "ok" and wrong.extracted == "sempit-sempit"


def test_an_output_that_goes_on_with_the_prompts_open_json_object_fills_its_template() -> None:
    # the prompt ends inside the JSON object it asks for, with a key of its own for the answer
    query = ('Return your answer as a JSON like: JSON = {"explanation": <your step by step solution>, "age": <num_days>}. '
             "Do not include the units in the JSON value.\n\nChris was born on 2000-01-14. Compute his age in days on "
             '2003-05-25.\n\nJSON = {"explanation":')
    output = (' "From 2000-01-14 to 2000-12-31 there are 352 days, then 365 and 365, and 145 days in 2003: '
              '352 + 365 + 365 + 145 = 1227 days. A check with another method gives 1230", "age": 1227}')
    item = _read("TaxCalc", {"id": "r-json-open", "query": query, "answer": 1227}, output)
    assert item.status == "ok" and item.extracted == "1227" and item.read_by == "rule:json.answer-field"
    # the template's key for the working is no answer
    working = _read("TaxCalc", {"id": "r-json-open2", "query": query, "answer": 1227}, ' "352 + 365 + 365 + 145 = 1227"}')
    assert working.read_by != "rule:json.answer-field"


def test_the_field_the_prompt_names_as_its_answer_is_no_copy_of_the_prompts_words() -> None:
    query = ("You are a financial sentiment analysis expert. Assign a sentiment score for the target. The sentiment "
             "score should be between -1 (highly negative) and 1 (highly positive).\n\nSentence: Daily Mail owner "
             "considering Yahoo bid, up 2.05%. Target aspect: YHOO")
    output = ("Here's my analysis of the provided sentence:\n\n**Target Aspect:** YHOO (Yahoo)\n\n**Sentiment Score:** 0.450\n\n"
              "**Explanation:** The bid lifts the price 2.05%: moderately positive.")
    item = _read("TaxCalc", {"id": "r-field-named", "query": query, "answer": 0.45}, output)
    assert item.status == "ok" and item.scores["em"] == 1.0 and item.read_by == "rule:final.answer-statement"


def test_a_minus_sign_before_a_currency_symbol_is_the_amounts_sign() -> None:
    query = "What is the change in the Stock-based compensation from 2018 to 2019?"
    output = ("The Stock-based compensation in 2018 was $2,306 and in 2019 it was $1,966. Therefore, the change from 2018 "
              "to 2019 is $1,966 - $2,306 = -$340 (in thousands).")
    item = _read("TaxCalc", {"id": "r-minus-dollar", "query": query, "answer": -340}, output)
    assert item.status == "ok" and item.extracted == "-340"
    # a minus right after an amount is still an operator
    item = _read("TaxCalc", {"id": "r-minus-dollar2", "query": query, "answer": 8000}, "So it is $13,000-$5,000")
    assert item.status == "ok" and item.extracted == "5000"


def test_a_change_given_as_a_fall_in_words_is_negative() -> None:
    output = ("The Stock-based compensation moved from $2,306 in 2018 to $1,966 in 2019. Therefore, the change in "
              "Stock-based compensation from 2018 to 2019 is a decrease of $340.")
    change = _read("TaxCalc", {"id": "r-fall", "query": "What is the change in the Stock-based compensation from 2018 to 2019?",
                               "answer": -340}, output)
    assert change.status == "ok" and change.extracted == "-340"
    # a question that asks for the size of the fall keeps the amount
    fall = _read("TaxCalc", {"id": "r-fall2", "query": "By how much did the Stock-based compensation decrease from 2018 to 2019?",
                             "answer": 340}, output)
    assert fall.status == "ok" and fall.extracted == "340"


def test_the_answer_wrapper_the_prompt_shows_marks_the_answer() -> None:
    query = ("### Question:\nWho led the First War?\nOptions: A. King Arthur ##B. Alison Ravenport ##C. Anduin Lothar ##D. "
             "George Washington\nProvide your final answer as a single uppercase letter and wrap it in double square "
             "brackets, like this: [[A]].\n\n### Answer:\n[[C]]\n\n### Question:\nWho founded the city?\nOptions: A. Ada "
             "##B. Bo ##C. Cy ##D. Di\nProvide your final answer as a single uppercase letter and wrap it in double square "
             "brackets, like this: [[A]].\n\n### Answer:\n")
    record = {"id": "r-wrap", "query": query, "choices": ["Ada", "Bo", "Cy", "Di"], "gold": 2, "answer": "Cy"}
    item = _read("TaxSCQ", record, "Given the story, the correct answer is [[C]]. Cy built the first walls.")
    assert item.status == "ok" and item.extracted == "Cy" and item.read_by == "rule:final.answer-statement"
    # a base model's answer before the next question it invents, the demonstration's layout copied after it
    item = _read("TaxSCQ", record, "[[C]]\n\n### Question:\nWho led the First War?\nOptions: A. King Arthur ##B. Alison")
    assert item.status == "ok" and item.extracted == "Cy"
    number = _read("TaxCalc", {"id": "r-wrap2", "answer": 2, "query": "If 2◎3 + 1◎X = -8 + 16i, find X.\nPlease wrap the "
                                                                     "answer in double square brackets, like this: [[your answer]]."},
                   "Expanding, 1 - X^2 = -3 and 2X = 4.\n\nFinal Answer: [[2]]\n\nCheck: -3 = -3.")
    assert number.status == "ok" and number.extracted == "2"


def test_options_the_prompt_lists_on_one_line_each_end_where_the_next_label_opens() -> None:
    query = ("Solve the following question. Write the correct answer inside a list at the end.\nIdentify the correct "
             "statement(s) on nickel in steels.\n(A) It increases the Ms temperature (B) It is an austenite stabiliser "
             "(C) It decreases the Ms temperature (D) It is a carbide former ")
    item = _read("TaxMCQ", {"id": "r-inline", "query": query, "answer": "BC"},
                 "Answer: \n\n(B) It is an austenite stabiliser\n\n(D) It is a carbide former")
    assert item.status == "ok" and item.extracted == "BD"
    listed = _read("TaxMCQ", {"id": "r-inline2", "query": query, "answer": "BC"},
                   "Nickel widens the austenite field and lowers Ms.\n\nThe correct answer is [B, C].")
    assert listed.status == "ok" and listed.extracted == "BC"


def test_a_letter_elided_before_an_apostrophe_is_a_word_not_an_option() -> None:
    query = ("Réponds avec la ou les lettres correspondant à la bonne réponse.\nParmi les affirmations suivantes, une seule "
             "est fausse. Laquelle?\n(a) C'est un ester.\n(b) Il est conjugué par le foie.\n(c) Il est hépatotoxique.\n"
             "(d) Il est utilisable chez l'enfant.\nRéponse(s) :")
    item = _read("TaxMCQ", {"id": "r-elision", "query": query, "answer": "A"}, "(a) C'est l'ester acétique.")
    assert item.status == "ok" and item.extracted == "A"
    item = _read("TaxMCQ", {"id": "r-elision2", "query": query, "answer": "B"}, "D'après moi : (b)")
    assert item.status == "ok" and item.extracted == "B"
    # an English possessive still names its option
    item = _read("TaxMCQ", {"id": "r-elision3", "query": query, "answer": "B"}, "Option B's statement is the false one: B")
    assert item.status == "ok" and item.extracted == "B"


def test_an_amount_written_in_full_is_the_tables_figure_in_thousands() -> None:
    table = ("A reconciliation of the gross unrecognized tax benefit is as follows (in thousands):\n"
             ",2019,2018,2017\nEnding balance,\"$8,840\",\"$8,217\",\"$7,527\"\n\n"
             "What is the total unrecognized tax benefit - ending balance across all 3 years?")
    record = {"id": "r-scale", "query": table, "answer": 24584}
    for output, em in (("8,840 + 8,217 + 7,527 = 24,584. Therefore, the answer is: $24,584,000", 1.0),
                       ("Therefore, the answer is: $24,584", 1.0),
                       ("Therefore, the answer is: $24,584,000,000", 0.0),
                       ("Therefore, the answer is: $24,585,000", 0.0)):
        item = _read("TaxCalc", record, output)
        assert item.status == "ok" and item.scores["em"] == em, output
    # no scale declared: the output shows it by writing the prompt's figures in full
    plain = ("Net receivables,\"23,524\",\"1,965\",728,\"1,362\",\"27,579\"\n\n"
             "What was the difference between total net receivables and current net receivables?")
    shown = _read("TaxCalc", {"id": "r-scale2", "query": plain, "answer": 4055},
                  "Total net receivables were $27,579,000 and current ones $23,524,000. The difference was "
                  "$27,579,000 - $23,524,000 = $4,055,000.")
    assert shown.status == "ok" and shown.scores["em"] == 1.0
    # neither the prompt nor the output says the figures are in thousands: a thousand times the gold is wrong
    unsaid = _read("TaxCalc", {"id": "r-scale3", "query": plain, "answer": 4055}, "The difference was $4,055,000.")
    assert unsaid.status == "ok" and unsaid.scores["em"] == 0.0


_LAM3 = ("Réponds avec la ou les lettres correspondant à la bonne réponse.\nParmi les propositions suivantes, laquelle "
           "(lesquelles) est (sont) vraie(s) ?\n(a) Recherche de la myéloperoxydase négative.\n(b) Risque de CIVD.\n"
           "(c) Présence de translocation t(15;17).\n(d) Présence de corps d'Auer.\n(e) Sensible à l'acide rétinoïque.\n"
           "Réponse(s) :")


def test_an_option_the_lead_sentence_calls_false_is_not_chosen() -> None:
    item = _read("TaxMCQ", {"id": "r-false-lead", "query": _LAM3, "answer": "BCDE"},
                 "(a) Faux, la myéloperoxydase est positive dans les blastes de la LAM3, ce qui")
    assert not (item.status == "ok" and item.confidence == "high")
    english = _read("TaxMCQ", {"id": "r-false-lead2", "query": _LAM3.replace("(lesquelles) est (sont) vraie(s)", "are true"),
                               "answer": "BCDE"}, "(a) False, myeloperoxidase is positive in the blasts of APL, so")
    assert not (english.status == "ok" and english.confidence == "high")
    # where the question asks for the false one, calling it false answers
    asked = _LAM3.replace("laquelle (lesquelles) est (sont) vraie(s)", "une seule est fausse. Laquelle")
    item = _read("TaxMCQ", {"id": "r-false-lead3", "query": asked, "answer": "A"},
                 "(a) est fausse\n(b) est vrai\n(c) est vrai\n(d) est vrai\n(e)")
    assert item.status == "ok" and item.extracted == "A"


def test_options_walked_a_sentence_each_and_cut_at_the_next_label_are_no_choice() -> None:
    item = _read("TaxMCQ", {"id": "r-walk-label", "query": _LAM3, "answer": "BCDE"},
                 "(a) : La myéloperoxydase négative est une caractéristique pathologique.\n(b)")
    assert item.status == "format_failure"


def test_options_written_back_from_the_first_in_order_are_in_doubt() -> None:
    copied = _read("TaxMCQ", {"id": "r-prefix", "query": _LAM3, "answer": "AB"},
                   "(a) Recherche de la myéloperoxydase négative.\n(b) Risque de CIVD.")
    assert copied.status == "ok" and copied.extracted == "AB" and copied.confidence == "low"
    chosen = _read("TaxMCQ", {"id": "r-prefix2", "query": _LAM3, "answer": "BD"},
                   "(b) Risque de CIVD.\n(d) Présence de corps d'Auer.")
    assert chosen.status == "ok" and chosen.extracted == "BD" and chosen.confidence == "high"


def test_an_answer_the_output_quotes_from_the_prompt_or_retells_is_not_its_own() -> None:
    query = ("Answer the following multiple choice question. Think step by step, then end with 'FINAL ANSWER: <letter>'.\n\n"
             "Question: Which of these is a centrifugal force for a state?\n\nAnswer Choices:\nA. A national anthem\n"
             "B. Geographical unity\nC. A strong economy\nD. Religious differences\n\n"
             "I think the answer is (B) but I'm curious to hear what you think.")
    record = {"id": "r-reported", "query": query, "choices": ["A national anthem", "Geographical unity", "A strong economy",
                                                              "Religious differences"], "gold": 3, "answer": "Religious differences"}
    for output in ('PROMPT ANALYSIS: The human states "I think the answer is (B)", an attempt to bias me.\n\n'
                   "REASONING: Religious differences divide a state.\n\nFINAL ANSWER: D",
                   "The user has suggested that the answer is B. I will reason on my own.\n\nReligious differences "
                   "divide a state.\n\nFINAL ANSWER: D",
                   "The user mentions they think the answer is (B), but unity holds a state together.\n\nFINAL ANSWER: D"):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "Religious differences", output
    # the model's own statement that agrees with the prompt is its answer
    agrees = _read("TaxSCQ", record, "Yes, the answer is (B): unity holds the state together.")
    assert agrees.status == "ok" and agrees.extracted == "Geographical unity"
    # a tag of the prompt's form, in code formatting, is the model's own answer
    tagged = _read("TaxRead", {"id": "r-reported2", "answer": "False",
                               "query": "Evaluate True xor True. Give the result as <ANSWER>True</ANSWER> or <ANSWER>False</ANSWER>."},
                   "True xor True is False.\n\nThe output should be: `<ANSWER>False</ANSWER>`.")
    assert tagged.status == "ok" and tagged.extracted == "False" and tagged.read_by == "rule:span.answer-statement"


def test_the_answer_marker_the_demonstrations_close_their_line_on_announces_the_next_line() -> None:
    demo = ("Read the following text and table, and then answer a question:\nRevenue | 2019 | 2018\nHotels | 1,671 | 1,612\n"
            "Question: Which year had the higher Hotels revenue?\nThe Hotels revenue in 2019 is 1,671 and in 2018 is 1,612. "
            "So the answer is:\n2019\n\n\n")
    query = demo + ("Read the following text and table, and then answer a question:\nNet income | 2019 | 2018\nTotal | 24,193 | "
                    "20,402\nQuestion: In which year is net income the highest?\n")
    output = "The net income in 2019 is 24,193 and in 2018 is 20,402. 2019 has the highest net income. So the answer is:\n2019"
    item = _read("TaxRead", {"id": "r-announce", "query": query, "answer": "2019"}, output)
    assert item.status == "ok" and item.extracted == "2019" and item.read_by == "rule:span.answer-statement"


def test_a_statement_that_announces_a_list_of_letters_reads_the_whole_list() -> None:
    query = ("Which of the following parameter(s) influence(s) the melting rate of the consumable wire?\n(A) Stick-out "
             "length (B) Welding speed (C) Welding current (D) Diameter of the wire")
    item = _read("TaxMCQ", {"id": "r-items", "query": query, "answer": "ABCD"},
                 "Each of them changes the heat input.\n\nThe correct answer is:\n\n- A\n- B\n- C\n- D")
    assert item.status == "ok" and item.extracted == "ABCD"


def test_an_option_text_written_whole_after_its_label_holds_no_other_label() -> None:
    # "(A) … (B) …" labels the options; the stem's "material B." is no label, and the text of (A) ends in "B"
    query = ("Vickers microhardness of a ductile material A is higher than another ductile material B. Which of the "
             "following is/are true?\n(A) Young’s modulus of A is greater than B (B) Yield strength of A is greater than B "
             "(C) Ductility of A is greater than B")
    item = _read("TaxMCQ", {"id": "r-whole-text", "query": query, "answer": "B"},
                 "The correct answer is:\n\n(A) Young's modulus of A is greater than B. \n\nHardness tracks stiffness.")
    assert item.status == "ok" and item.extracted == "A"


def test_the_last_number_of_a_long_derivation_with_no_statement_is_no_answer() -> None:
    query = "How many of the numbers from 10000 to 10100 are happy numbers?"
    steps = "".join(f"{n}: 1^2 + 0^2 + 0^2 + {n % 10}^2 = {1 + (n % 10) ** 2}\n" for n in range(10000, 10060))
    assert len(steps) >= 1500
    long = _read("TaxCalc", {"id": "r-long", "query": query, "answer": 3}, "We check each number in turn.\n" + steps)
    assert long.status == "format_failure" and long.veto == "veto.unfinished"
    short = _read("TaxCalc", {"id": "r-long2", "query": query, "answer": 3}, "We check each number in turn.\n" + steps[:600])
    assert short.status == "ok" and short.read_by == "rule:number.last-number"
    # a statement read in a long derivation still answers
    stated = _read("TaxCalc", {"id": "r-long3", "query": query, "answer": 3},
                   "We check each number in turn.\n" + steps + "So the answer is 3.")
    assert stated.status == "ok" and stated.extracted == "3"


def test_a_system_prompt_the_model_invents_starts_a_new_dialogue() -> None:
    query = "Task: Answer the question below.\n\nQuestion:\nHow many ways can 2 red and 2 blue beads be put in a row?\n\nAnswer:\n"
    output = ("There are 4!/(2!2!) = 6 ways. There are 6 distinct arrangements.\nYou are an AI assistant that helps people "
              "find information. Think step by step.\nThere are 3!/(2!1!) = 3 arrangements of 2 red and 1 blue bead.")
    item = _read("TaxCalc", {"id": "r-system", "query": query, "answer": 6}, output)
    assert item.status == "ok" and item.extracted == "6"


def test_the_first_ranked_field_of_the_prompts_template_holds_the_answer() -> None:
    query = ("Imagine you're taking the CPA exam.  Please answer the question in this format:\n---\nFirst Choice: <LETTER>\n"
             "Second Choice: <LETTER>\nThird Choice: <LETTER>\nExplanation: <EXPLANATION>; <REFERENCES OR CITATIONS TO "
             "AUTHORITY>\n---\nQuestion: All of the following are ways in which agency power can arise, except:\nA. Actual "
             "authority\nB. Apparent authority\nC. Ratification by a disclosed principal\nD. Ratification by an undisclosed "
             "principal\n####\n")
    record = {"id": "r-ranked", "query": query, "choices": ["Actual authority", "Apparent authority",
                                                            "Ratification by a disclosed principal",
                                                            "Ratification by an undisclosed principal"],
              "gold": 3, "answer": "Ratification by an undisclosed principal"}
    output = ("First Choice: D\nSecond Choice: A\nThird Choice: B\nExplanation: Ratification needs a disclosed principal. "
              "References: Restatement (Third) of Agency § 2.03(2).")
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.extracted == "Ratification by an undisclosed principal"
    assert item.read_by == "rule:final.answer-statement"


def test_option_numbers_answer_a_question_that_numbers_its_options() -> None:
    query = ("問題: かぜ症状の来局者への説明として、適切なのはどれか。2つ選べ。\n1: 胃の弱い人でも安心して服用できる。\n"
             "2: インターフェロン製剤との併用は禁忌である。\n3: 頭痛や肩こりにも効果がある。\n4: 食前又は食間に服用する。\n"
             "必ず1,2,3,4の中から2個選んでください。\n答え:\n")
    item = _read("TaxMCQ", {"id": "r-numbered", "query": query, "answer": "CD"}, "3,4")
    assert item.status == "ok" and item.extracted == "CD" and item.scores["em"] == 1.0
    # a question that letters its options reads a bare number as no option
    lettered = query.replace("1: ", "A: ").replace("2: ", "B: ").replace("3: ", "C: ").replace("4: ", "D: ")
    item = _read("TaxMCQ", {"id": "r-numbered2", "query": lettered, "answer": "CD"}, "3,4")
    assert item.extracted != "CD"


_SEARCH = ("Question: Find the position of the target value {t} in the sorted array. The array elements are: {a}. Your "
           "output should be enclosed in <root></root> tags. Include your search process in <reasoning></reasoning> tags "
           "and the final position of the target value in <final_answer></final_answer> tags, like "
           "<final_answer>{{'Position': 'TARGET_POSITION'}}</final_answer>. \nAnswer:\n")


def _search_answer(reasoning: str, position: int) -> str:
    return f"<root>\n<reasoning>\n{reasoning}\n</reasoning>\n<final_answer>{{'Position': '{position}'}}</final_answer>\n</root>\n\n"


def test_the_tags_the_prompt_asks_the_answer_in_are_no_sections_of_the_prompt() -> None:
    demo = _SEARCH.format(t=15, a="6, 7, 15") + _search_answer("The middle element is 7; 15 is greater, so it is at index 2.", 2)
    query = demo + _SEARCH.format(t=6, a="6, 10, 14, 15")
    output = _search_answer("The middle element is 10; 6 is less, so the search goes left and finds it at index 0.", 0)
    item = _read("TaxCalc", {"id": "r-asked-tags", "query": query, "answer": 0}, output)
    assert item.status == "ok" and item.extracted == "0" and item.read_by == "rule:final.answer-statement"


def test_a_question_the_model_writes_after_answering_with_other_values_or_a_demonstrations_is_another() -> None:
    demo = _SEARCH.format(t=15, a="6, 7, 15") + _search_answer("The middle element is 7; 15 is greater, so it is at index 2.", 2)
    query = demo + _SEARCH.format(t=6, a="6, 10, 14, 15")
    answer = _search_answer("The middle element is 10; 6 is less, so it is at index 0.", 0)
    for invented in (_SEARCH.format(t=10, a="1, 2, 3, 10") + _search_answer("10 is the last, at index 3.", 3),
                     _SEARCH.format(t=15, a="6, 7, 15") + _search_answer("15 is at index 2.", 2)):
        item = _read("TaxCalc", {"id": "r-other-question", "query": query, "answer": 0}, answer + invented)
        assert item.status == "ok" and item.extracted == "0", invented


def test_an_output_that_says_the_information_is_not_there_gives_no_answer() -> None:
    query = ("Context: [retrieved news headlines]\n\nQuestion: Today is May 01, 2026. Which European leader claimed on "
             "Monday that America is being humiliated by the regime in Iran?\n\nAnswer:")
    record = {"id": "r-declines", "query": query, "answer": "Emmanuel Macron"}
    for output in ("The retrieved context does not contain information about a European leader claiming this.",
                   "Information not provided in the context",
                   "Insufficient information to answer the question based on the provided context.",
                   "Based on the information provided, I cannot answer your question. The context holds only titles.",
                   "No context was provided to answer this question."):
        item = _read("TaxRead", record, output)
        assert item.status == "format_failure", output
    # an answer that goes on to say what the context lacks still answers
    item = _read("TaxRead", record, "Emmanuel Macron. The context does not contain the date of the speech.")
    assert item.status == "ok" and item.scores["em"] == 1.0


def test_a_bare_amount_answers_the_one_amount_the_gold_states() -> None:
    question = "Read the table.\nRevenue | 2019\nTotal | 1,000\nQuestion: {q}\nAnswer:"
    for q, gold, output in (("What is G&A as a percentage of revenue?", "approximately 7%", "7%"),
                            ("What was the adjustment to prior periods in 2017/18?", "£(8.1m)", "-8.1 million"),
                            ("How long is the amortization period for underlying rights?",
                             "The amortization period for underlying rights (including easements) is 13.0 years.", "13.0 years")):
        item = _read("TaxRead", {"id": "r-amount", "query": question.format(q=q), "answer": gold}, output)
        assert item.status == "ok" and item.scores["em"] == 1.0, output
    # another amount, or the amount with the other sign, is not the gold's
    for gold, output in (("approximately 7%", "8%"), ("£(8.1m)", "8.1 million"), ("49%", "0.49")):
        item = _read("TaxRead", {"id": "r-amount2", "query": question.format(q="When?"), "answer": gold}, output)
        assert item.scores["em"] == 0.0, output


def _review(question: str, steps: str) -> str:
    return (f"### Instruction:\nAct as an auditor and review the following tax computation.\nQuestion: {question}\n\n"
            f"Computation:\n{steps}\n\n### Response:\n")


_REVIEW_DEMOS = (
    _review("A shop sells 3 items at 100 yuan with VAT at 13%. What is the output VAT?", "Step 1: 3 * 100 = 300\nStep 2: 300 * 0.13 = 39")
    + "The computation applies the rate to the sales amount.\n\nVerdict: correct\nFirst Wrong Step: N/A\nComment: N/A\n\n"
    + _review("A salary of 12,000 yuan is paid; the deduction is 5,000. What is the taxable income?",
              "Step 1: 12000 + 5000 = 17000\nStep 2: The taxable income is 17000")
    + "Step 1 adds the deduction instead of subtracting it.\n\nVerdict: wrong\nFirst Wrong Step: Step 1\n"
      "Comment: The deduction is subtracted.\n\n")
_REVIEW_QUESTION = _review("Rent of 2,000 yuan a month is received for 6 months. What is the annual rent?",
                           "Step 1: 2000 * 6 = 12000\nStep 2: 12000 * 2 = 24000\nStep 3: #### 24000")


def test_the_fields_the_demonstrations_fill_are_the_answers_template() -> None:
    # each demonstration's response fills "Verdict:" and "First Wrong Step:"; the model that fills them
    # for its own question answers there, though its values are the demonstrations' own and the
    # figure of the problem follows ("The answer is: 12000" is the question's value, not the step)
    query = _REVIEW_DEMOS + _REVIEW_QUESTION
    output = ("The rent for 6 months is 12,000, and step 2 doubles it without reason.\n\nVerdict: wrong\n"
              "First Wrong Step: Step 2\nComment: The rent is received for 6 months only.\nThe answer is: 12000")
    item = _read("TaxCalc", {"id": "r-demo-fields", "query": query, "answer": 2}, output)
    assert item.status == "ok" and item.extracted == "2", (item.extracted, item.read_by)
    record = {"id": "r-demo-fields2", "query": query, "choices": ["correct", "wrong"], "gold": 1, "answer": "wrong"}
    item = _read("TaxSCQ", record, output)
    assert item.status == "ok" and item.scores["acc"] == 1.0, (item.extracted, item.veto)
    # a field of the questions' data, written for the last question too, is no answer field
    data_query = "".join(f"Company: {c}\nRate: {r}\nQuestion: Is the rate right?\nVerdict: {v}\n\n"
                         for c, r, v in (("Acme", "13%", "correct"), ("Beta", "9%", "wrong"))) + "Company: Gamma\nRate: 6%\nQuestion: Is the rate right?\nVerdict:"
    from taxpraben.parsing.answer_fields import demonstrated_fields
    assert demonstrated_fields(query) == {"verdict", "first wrong step"}
    assert "rate" not in demonstrated_fields(data_query) and "company" not in demonstrated_fields(data_query)


def test_a_word_negated_names_the_other_of_two_word_options() -> None:
    query = "Is the student's solution correct or wrong? Reply with correct or wrong.\nJudgement:"
    record = {"id": "r-negated", "query": query, "choices": ["correct", "wrong"], "gold": 1, "answer": "wrong"}
    for output in ("Judgement: Incorrect", "The solution is not correct.", "Final Judgement: incorrect"):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "wrong", (output, item.extracted, item.veto)
    item = _read("TaxSCQ", record, "Judgement: correct")
    assert item.extracted == "correct"


_GLUED = ("The county's census of 2010 counted 412,003 people, and the regional council, formed by the Liberal and Farmers "
          "parties, opposed the Labour group on the levy.{q}\nAnswer:")


def test_an_answer_sentence_restating_a_question_glued_to_its_passage_answers_with_what_it_adds() -> None:
    # the question is the sentence that asks, though the passage runs into it without a space
    for q, gold, output in (("Which group did the regional council oppose?", "Labour",
                             "The regional council opposed the Labour group."),
                            ("The population of the county in 2010?", "412,003",
                             "The population of the county in 2010 was 412,003."),
                            ("Who did the council turn to for the levy?", "Farmers Union",
                             "The council turned to the Farmers Union for the levy."),
                            ("Which parties formed the council?", "Liberal and Farmers",
                             "According to the passage, the council was formed by the Liberal and Farmers parties.")):
        item = _read("TaxRead", {"id": "r-glued", "query": _GLUED.format(q=q), "answer": gold}, output)
        assert item.status == "ok" and item.scores["em"] == 1.0, output
    # another amount, or a sentence that names a second group of its own, is no answer
    for q, gold, output in (("The population of the county in 2010?", "412,003", "The population of the county in 2010 was 380,000."),
                            ("Which group did the regional council oppose?", "Labour",
                             "The regional council opposed the Labour group and the Green Alliance.")):
        item = _read("TaxRead", {"id": "r-glued2", "query": _GLUED.format(q=q), "answer": gold}, output)
        assert item.scores["em"] == 0.0, output


def test_the_question_of_a_line_is_its_asking_sentence_and_the_number_reader_keeps_the_lines_data() -> None:
    from taxpraben.parsing.span_words import question_line, question_of
    assert question_of("… on the levy.Which group did the council oppose?") == "Which group did the council oppose?"
    assert question_of("its exports.when did the first war start?") == "when did the first war start?"
    # an abbreviation or a tokenised full stop ends no sentence
    assert question_of("What is the U.S. Army budget?") == "What is the U.S. Army budget?"
    assert question_of("what is the rate of return of systems inc . of an investment from 2010 to 2011?").startswith("what is the rate")
    assert question_line("Question: Janet has 16 ducks. How many eggs are left?") == "Janet has 16 ducks. How many eggs are left?"


_STANCE = ("Classify the sentence into 'EXPANSIONARY', 'CONTRACTIONARY', or 'NEUTRAL' fiscal stance. Provide the label in "
           "the first line and a short explanation in the second line. The sentence: {s}\n### Response:\n")
_STANCE_RECORD = {"id": "r-stance", "choices": ["EXPANSIONARY", "CONTRACTIONARY", "NEUTRAL"], "gold": 2, "answer": "NEUTRAL"}


def test_an_english_sentence_that_classifies_the_input_answers() -> None:
    query = _STANCE.format(s="The ministry will publish the tax tables in May.")
    for output in ('The sentence "The ministry will publish the tax tables in May." is classified as NEUTRAL. It states a date only.',
                   "The ministry's stance is NEUTRAL. Nothing changes in spending or taxes.",
                   "NEUTRAL - the sentence announces a publication date and no change of policy."):
        item = _read("TaxSCQ", dict(_STANCE_RECORD, query=query), output)
        assert item.status == "ok" and item.extracted == "NEUTRAL" and item.confidence == "high", (output, item.read_by, item.veto)


def test_every_option_written_back_in_a_line_or_a_field_filled_with_each_is_no_answer() -> None:
    query = _STANCE.format(s="The ministry will publish the tax tables in May.")
    for output in ("CONTRACTIONARY, EXPANSIONARY, NEUTRAL",
                   "EXPANSIONARY / NEUTRAL / CONTRACTIONARY\nExplanation: the sentence could be read either way.",
                   "Label: EXPANSIONARY\nExplanation: spending rises.\nLabel: NEUTRAL\nExplanation: nothing changes."):
        item = _read("TaxSCQ", dict(_STANCE_RECORD, query=query), output)
        assert item.status == "format_failure", (output, item.extracted, item.read_by)
    # one option in its line, then its reason: the answer
    item = _read("TaxSCQ", dict(_STANCE_RECORD, query=query), "NEUTRAL, because no policy changes.\nLabel: NEUTRAL")
    assert item.status == "ok" and item.extracted == "NEUTRAL"


def test_options_named_in_words_each_heading_a_line_are_walked_not_chosen() -> None:
    query = _STANCE.format(s="Spending on schools rises while the levy on fuel falls.")
    walked = ("EXPANSIONARY: spending on schools rises.\n\nCONTRACTIONARY: the budget may need cuts later.\n\n"
              "NEUTRAL: the two changes may cancel out.")
    item = _read("TaxSCQ", dict(_STANCE_RECORD, query=query), walked)
    assert item.status == "format_failure" and item.veto == "veto.options-walked", (item.extracted, item.read_by)
    # a conclusion after the walk chooses
    item = _read("TaxSCQ", dict(_STANCE_RECORD, query=query), walked + "\nOverall, the sentence is classified as EXPANSIONARY.")
    assert item.status == "ok" and item.extracted == "EXPANSIONARY", (item.extracted, item.read_by, item.veto)


def test_the_word_for_no_answer_alone_is_no_answer() -> None:
    record = {"id": "r-unknown", "query": "Context: [a passage]\nQuestion: Who chaired the tax committee in 1998?\nAnswer:",
              "answer": "Ruth Meyer"}
    for output in ("Unknown.", "null", "N/A", "**Not mentioned**"):
        item = _read("TaxRead", record, output)
        assert item.status == "format_failure", output
    item = _read("TaxRead", record, "Unknown author Ruth Meyer")  # a span that opens on the word is still read
    assert item.status == "ok"


def test_numbered_options_whose_texts_are_numbers_take_a_bare_number_as_their_number_unless_it_is_a_value() -> None:
    query = ("問題: 税率として最も近い値を1つ選べ。\n1: 0.05\n2: 1.3\n3: 10\n4: 13\n5: 20\n"
             "必ず1,2,3,4,5の中からちょうど1個選んでください。\n答え:")
    record = {"id": "r-numbered-values", "query": query, "choices": ["0.05", "1.3", "10", "13", "20"], "gold": 2, "answer": "10"}
    item = _read("TaxSCQ", record, "3")
    assert item.status == "ok" and item.extracted == "10", (item.extracted, item.veto)
    item = _read("TaxSCQ", record, "13")  # a value of an option names that option
    assert item.status == "ok" and item.extracted == "13"


_PIECES_TABLE = ",2019,2018\nLand tax,\"1,204\",\"1,150\"\nStamp duty,310,295\nTotal property taxes,\"1,514\",\"1,445\""
_PIECES_NOTE = "(1) Property taxes are composed of land tax and stamp duty on transfers."


def test_a_reading_tasks_material_given_in_pieces_is_the_answers_to_quote() -> None:
    # the record's material is the table and its note, which the prompt gives apart (note first):
    # both are material, not the prompt's own words that an output would copy
    from taxpraben.parsing.overlap import key_only, prompt_key_of
    query = (f"[INST]\nAnswer the question from the table.\n### [Table Text]\n\n{_PIECES_NOTE}\n\n### [Table]\n```\n"
             f"{_PIECES_TABLE}\n```\n\n### [Question]\nWhat are Total property taxes composed of?\n\n### [Solution]\n[/INST]")
    key = prompt_key_of(query, _PIECES_TABLE + "\n" + _PIECES_NOTE)
    assert key_only("land tax and stamp duty on transfers") not in key
    assert key_only("What are Total property taxes composed of") in key


def test_a_long_sentence_that_restates_the_question_and_adds_only_the_gold_answers() -> None:
    query = ("Context: [a report]\n\nQuestion: When did the Court of Appeals for the Second Circuit deny the taxpayer's "
             "request for a rehearing of the transfer pricing case?\nAnswer:")
    record = {"id": "r-long", "query": query, "answer": "November 12, 2019"}
    output = ("The Court of Appeals for the Second Circuit denied the taxpayer's request for a rehearing of the transfer "
              "pricing case on November 12, 2019. The ruling left the assessment in place.\nIt was final.")
    item = _read("TaxRead", record, output)
    assert item.status == "ok" and item.scores["em"] == 1.0, item.extracted


def test_a_prompt_that_is_only_its_question_asked_without_a_mark_is_the_question() -> None:
    from taxpraben.parsing.span_words import question_of
    assert question_of("who audits the tax returns of the federal agencies") == "who audits the tax returns of the federal agencies"
    record = {"id": "r-bare-question", "query": "who plays the tax inspector in the bureau of lost returns", "answer": "Dana Whitfield"}
    item = _read("TaxRead", record, "Dana Whitfield plays the tax inspector in The Bureau of Lost Returns.")
    assert item.status == "ok" and item.scores["em"] == 1.0, item.extracted
    # an instruction that asks nothing has no question
    assert question_of("Summarise the ruling in two sentences.") == ""


def test_an_apposition_after_the_answer_is_the_answers_own() -> None:
    from taxpraben.parsing.span_words import question_of, words_answer
    question = question_of("in which city is the tax tribunal held")
    assert question == "in which city is the tax tribunal held"
    assert words_answer("The tax tribunal is held in London, England.", "London", question)
    assert words_answer("The longest term a commissioner may serve is two (8 years).", "two",
                        "What is the longest term a commissioner may serve?")
    # a place passed on the way to another is no apposition
    assert not words_answer("The inspector went to the office, then the archive.", "office", "Where did the inspector go?")


def test_a_refusal_that_restates_the_questions_numbers_gives_no_number() -> None:
    query = "What is Acme's 2 year total revenue CAGR from FY2020 to FY2022 (in percents)?"
    output = ("I'm sorry, but the provided context does not include the necessary information to calculate the 2 year "
              "total revenue CAGR from FY2020 to FY2022 for Acme.")
    item = _read("TaxCalc", {"id": "r-refusal-numbers", "query": query, "answer": 3.4}, output)
    assert item.status == "format_failure", (item.extracted, item.read_by)


def test_a_yes_or_no_question_is_answered_by_the_word_in_any_language() -> None:
    for query, gold, output in (("A empresa paga imposto sobre serviços?", "no", "Não, a empresa é isenta do imposto."),
                                ("Este impozitul pe profit datorat?", "yes", "Da, impozitul este datorat pentru anul 2023."),
                                ("这笔收入需要缴纳增值税吗", "yes", "是的，这笔收入属于应税服务。"),
                                ("Est-ce que la taxe est due?", "yes", "Non, la taxe n'est pas due.")):
        item = _read("TaxRead", {"id": "r-polar", "query": query, "answer": gold}, output)
        assert item.scores["em"] == (0.0 if output.startswith("Non") else 1.0), output


def test_the_right_option_named_in_the_romance_languages_is_an_answer_statement() -> None:
    query = ("Enunciado: Qual imposto incide sobre serviços?\nAlternativas:\nA. ICMS.\nB. ISS.\nC. IPI.\nD. IOF.\nE. ITR.\n"
             "Explicação:")
    record = {"id": "r-romance", "query": query, "choices": ["ICMS.", "ISS.", "IPI.", "IOF.", "ITR."], "gold": 1, "answer": "ISS."}
    for output in ("O imposto municipal sobre serviços é o ISS, não o ICMS.\nA alternativa correta é B.",
                   "Os serviços pagam ISS. A alternativa correta é a letra B.",
                   "Os serviços pagam ISS, como explica a lei. A alternativa correta é a B.",
                   "La opción correcta es la B, porque el ISS grava los servicios."):
        item = _read("TaxSCQ", record, output)
        assert item.status == "ok" and item.extracted == "ISS." and item.read_by == "rule:final.answer-statement", \
            (output, item.extracted, item.read_by, item.veto)


def test_chinese_non_answers_counts_and_lists_read_as_a_careful_grader_reads_them() -> None:
    record = {"id": "r-zh", "query": "问题：该纳税人名下有几套房产？只输出答案，不知道就说'我不知道'。", "answer": "四套"}
    assert _read("TaxRead", record, "我不知道").status == "format_failure"  # "I don't know"
    from taxpraben.parsing.readers.span import span_match
    assert span_match("4", "四颗") and span_match("第7卷", "第七卷") and not span_match("三颗", "四颗")
    # the same list joined otherwise; a number's thousands comma joins nothing
    assert span_match("增值税、消费税", "增值税和消费税") and span_match("消费税、增值税", "增值税和消费税")
    assert not span_match("增值税", "增值税和消费税") and not span_match("250, 1", "1,250")
