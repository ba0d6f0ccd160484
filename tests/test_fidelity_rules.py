"""The fidelity rules one by one, each tested on both sides: what it accepts, what it refuses.

A copy of the prompt is no answer; the first answer to this question counts, not one to an
invented question; several different answers are ambiguous; an answer must be asserted; and
the kinds of answer that real chat and reasoning models write are read as a grader reads them
(bold and LaTeX final values, 税额为零, tables in 万元, 答案如下, retractions, 只有X, 注意不是X,
per-option verdicts with 以上都对). End to end through ``prepare_item`` where the failure reason
matters; the readers directly elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taxpraben.data.checks import check_record
from taxpraben.parsing.prompt_copy import ANOTHER_QUESTION, COPY_OF_PROMPT, own_answer
from taxpraben.parsing.readers.label import read_choice
from taxpraben.parsing.readers.letters import read_letter_set
from taxpraben.parsing.readers.number import read_final_number
from taxpraben.parsing.region import AMBIGUOUS, HEDGED, NONE_CORRECT, NOT_AN_OPTION, NOT_ASSERTED
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)

SCQ = (
    "以下是中国税法考试中的单项选择题，请选出唯一正确的选项。\n"
    "题目：下列服务中，适用6%增值税税率的是（ ）。\n"
    "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n"
    "请直接输出正确选项的字母（A、B、C或D）。答案："
)
SCQ_CHOICES = ["有形动产租赁服务", "不动产租赁服务", "信息技术服务", "建筑服务"]
MCQ = (
    "以下是中国税法考试中的多项选择题，请选出全部正确选项。\n"
    "题目：下列各项所得中，属于居民个人综合所得的有（ ）。\n"
    "A. 工资、薪金所得\nB. 劳务报酬所得\nC. 稿酬所得\nD. 特许权使用费所得\nE. 经营所得\n"
    "请直接输出所有正确选项的字母，例如“ABD”。答案："
)
CALC = (
    "请根据以下资料完成税额计算。\n资料：某公司2024年5月销售货物取得不含税销售额800000元，适用税率13%，"
    "当月可抵扣进项税额60000元。\n问题：该公司当月应纳增值税多少元？\n答案："
)


def choice(output: str, query: str = SCQ, choices: list[str] | None = None) -> Any:
    return read_choice(output, choices or SCQ_CHOICES, option_letters=True, markers=[], query=query)


def item(task: str, raw: dict[str, Any], output: str) -> Any:
    spec = REGISTRY[task]
    record, problems = check_record(raw, spec, Path("t.jsonl"), 1, "line")
    assert record is not None and not [p for p in problems if p.severity == "error"]
    return prepare_item(spec, record, 0, output, None)


SCQ_RECORD = {"id": "1", "query": SCQ, "answer": "信息技术服务", "choices": SCQ_CHOICES, "gold": 2}
CALC_RECORD = {"id": "1", "query": CALC, "answer": 44000}


# ------------------------------------------------------------------ 1. a copy of the prompt


@pytest.mark.parametrize(
    "output",
    [
        SCQ,  # the whole prompt
        SCQ.split("\n", 1)[1],  # without its first line
        "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务",  # the option list
        "A. 有形动产租赁服务 B. 不动产租赁服务 C. 信息技术服务 D. 建筑服务",  # on one line
        "有形动产租赁服务、不动产租赁服务、信息技术服务",  # three option texts in order
        "题目：下列服务中，适用6%增值税税率的是（ ）。",  # the question
        "请直接输出正确选项的字母（A、B、C或D）。答案：",  # the instruction and the answer prefix
        "答案：",  # the prompt's answer prefix alone
        "B. 不动产租赁服务\nA. 有形动产租赁服务\nC. 信息技术服务\nD. 建筑服务",  # reordered
    ],
)
def test_a_copy_of_the_prompt_is_a_format_failure(output: str) -> None:
    got = item("TaxSCQ", SCQ_RECORD, output)
    assert (got.status, got.scores["acc"], got.failure) == ("format_failure", 0.0, COPY_OF_PROMPT)


@pytest.mark.parametrize(
    "output",
    [
        "C",
        "C. 信息技术服务",  # one option line written back is how an answer is given
        "信息技术服务",
        SCQ + "C",  # the prompt continued with its answer
        "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：C",
        "题目：下列服务中，适用6%增值税税率的是（ ）。\n分析：信息技术服务属于现代服务。\n答案：C",
    ],
)
def test_a_copy_followed_by_an_answer_is_read(output: str) -> None:
    got = item("TaxSCQ", SCQ_RECORD, output)
    assert (got.status, got.scores["acc"]) == ("ok", 1.0), got.failure


def test_the_amount_a_document_states_is_no_computed_answer() -> None:
    copy = "资料：某公司2024年5月销售货物取得不含税销售额800000元，适用税率13%，当月可抵扣进项税额60000元。"
    got = item("TaxCalc", {"id": "1", "query": CALC, "answer": 60000}, copy)
    assert (got.status, got.failure) == ("format_failure", COPY_OF_PROMPT)
    # a restated clause around a computed amount leaves the amount alone
    assert read_final_number("应纳增值税44,000元（适用税率13%）", query=CALC, expect_percent=False).value.value == 44000


def test_a_multiple_choice_selects_by_writing_options_back_but_not_all_of_them() -> None:
    assert read_letter_set("A. 工资、薪金所得\nC. 稿酬所得", query=MCQ).value == frozenset("AC")
    everything = "\n".join(MCQ.split("\n")[2:7])
    assert read_letter_set(everything, query=MCQ).failure == COPY_OF_PROMPT
    # some options and then the instruction: the prompt continued, not a selection
    continued = "A. 工资、薪金所得\nB. 劳务报酬所得\n请直接输出所有正确选项的字母，例如“ABD”。答案："
    assert read_letter_set(continued, query=MCQ).value is None


def test_a_span_answer_is_not_a_copy_of_its_document() -> None:
    query = "请阅读以下材料回答问题。\n材料：纳税人应当自纳税义务发生之日起十五日内申报纳税。\n问题：纳税人应当在多长期限内申报纳税？\n答案："
    raw = {"id": "1", "query": query, "text": "纳税人应当自纳税义务发生之日起十五日内申报纳税。", "answer": "十五日内"}
    assert item("TaxRead", raw, "十五日内").scores["em"] == 1.0
    copied = item("TaxRead", raw, "请阅读以下材料回答问题。\n问题：纳税人应当在多长期限内申报纳税？")
    assert (copied.status, copied.failure) == ("format_failure", COPY_OF_PROMPT)


def test_a_mixed_task_copy_of_its_json_template_is_no_answer() -> None:
    query = '请分析案例并按JSON输出：{"违法性质": "", "少缴税款": 0.00, "滞纳金": 0.00, "罚款": 0.00, "分析理由": ""}'
    raw = {"id": "1", "query": query, "answer": {"违法性质": "偷税", "少缴税款": 0.0, "滞纳金": 0.0, "罚款": 0.0}}
    got = item("TaxInspect", raw, '{"违法性质": "", "少缴税款": 0.00, "滞纳金": 0.00, "罚款": 0.00, "分析理由": ""}')
    assert (got.status, got.failure) == ("format_failure", COPY_OF_PROMPT)
    answered = item("TaxInspect", raw, '{"违法性质": "偷税", "少缴税款": 0.00, "滞纳金": 0.00, "罚款": 0.00}')
    assert answered.status == "ok" and answered.fields["少缴税款"]["score"] == 1.0


# ------------------------------------------------------------------ 2. the first answer to this question


@pytest.mark.parametrize(
    "tail",
    [
        "\n\n题目：下列税种中属于地方税的是（ ）。\nA. 增值税\nB. 消费税\nC. 房产税\nD. 关税\n答案：A",
        "\n问题2：下列哪项适用9%税率？\n答案：D",
        "\n\n第2题\n下列关于发票的说法，正确的是（ ）。\nA. 甲\nB. 乙\n答案：B",
        "\nQuestion: Which rate applies to construction?\nAnswer: D",
        "\n" + SCQ + "A",  # this prompt written again, answered otherwise
    ],
)
def test_an_invented_continuation_is_cut(tail: str) -> None:
    for head in ("C", "答案：C", "C. 信息技术服务"):
        got = choice(head + tail)
        assert got.value == 2, (head, tail, got)


def test_restating_this_question_is_no_continuation() -> None:
    out = "分析如下。\n问题：下列服务中，适用6%增值税税率的是哪一项？\n信息技术服务属于现代服务。\n答案：C"
    assert choice(out).value == 2


def test_an_output_that_opens_with_another_question_answers_nothing() -> None:
    own = own_answer("题目：下列税种中属于地方税的是（ ）。\nA. 增值税\nB. 消费税\n答案：A", SCQ, options=SCQ_CHOICES)
    assert own.failure == ANOTHER_QUESTION
    invented = "A. 尊重他人\nB. 保护环境\nC. 遵守交通规则\nD. 诚实守信\n答案：B"
    assert choice(invented).failure == ANOTHER_QUESTION


@pytest.mark.parametrize("output", ["答案：A\n\n抱歉，我刚才看错了题目，正确答案是C。",
                                    "答案是D。\n\n我再仔细想了一下，信息技术服务适用6%，所以答案是C。"])  # fmt: skip
def test_an_apology_or_a_second_look_after_an_answer_corrects_it(output: str) -> None:
    assert choice(output).value == 2, output


@pytest.mark.parametrize("output", ["选 c", "选c。", "本题选c", "选 c，因为信息技术服务适用6%"])
def test_a_lower_case_letter_picked_with_xuan(output: str) -> None:
    assert choice(output).value == 2, output


def test_an_apology_that_opens_the_output_corrects_nothing() -> None:
    from taxpraben.parsing.region import answer_statements

    assert [st.kind for st in answer_statements("抱歉，我无法回答这个问题。")] == []


def test_different_answers_without_a_correction_are_ambiguous() -> None:
    assert choice("答案：A\n答案：C\n答案：B").failure == AMBIGUOUS
    assert choice("答案：C\n解析：……\n正确答案是C").value == 2  # the same answer twice
    assert choice("答案：A\n不对，应该选C").value == 2  # a correction between them
    assert choice("答案：A。等等，重新考虑后答案：C").value == 2
    assert read_letter_set("答案：AB\n答案：CD", query=MCQ).failure == AMBIGUOUS
    assert read_letter_set("答案：ABCDE。\n**修正**：重新核对后，最终答案为**ABC**", query=MCQ).value == frozenset("ABC")


def test_several_letters_for_a_single_answer_hedge() -> None:
    assert choice("答案: C、D").failure == HEDGED
    assert choice("因此，选项A、B、C和D都是正确的答案。").failure == HEDGED


@pytest.mark.parametrize("output", [
    "A或C", "A或者C", "A 或 C", "C或A", "B或C", "答案：C，或者D", "C，也可能是D", "A和C", "选A和C",
    "信息技术服务或建筑服务", "信息技术服务和建筑服务",
])  # fmt: skip
def test_two_options_offered_together_are_no_single_answer(output: str) -> None:
    """Without an answer marker too: the letter after a hedge ("A或C") was read as the answer
    (the first one, before a Chinese character, is not a standalone letter)."""
    assert choice(output).failure == HEDGED, output


@pytest.mark.parametrize(("output", "expected"), [
    ("A、B、D都不适用6%，所以选C", 2),  # elimination, then the answer
    ("信息技术服务，而不是建筑服务或不动产租赁服务", 2),  # the others denied
    ("C或D中，应选C", 2),
    ("A、B都不对，选C", 2),  # those two are wrong, not every option
    ("A或B都不对，C正确", 2),
    ("A项和B项都不对，C正确。", 2),
    ("C正确，A或B都不对", 2),
    ("A不对，B不对，C对", 2),
    ("A是错误的，C是正确的", 2),  # the ruled-out letter that opens it is not the answer
    ("选C。A或B均适用9%", 2),
])  # fmt: skip
def test_options_ruled_out_beside_the_answer(output: str, expected: int) -> None:
    assert choice(output).value == expected, output


@pytest.mark.parametrize(("output", "expected"), [
    # the options written back with their texts on one line are the selection
    ("正确选项为：A. 工资、薪金所得；B. 劳务报酬所得；C. 稿酬所得；D. 特许权使用费所得。", "ABCD"),
    ("A. 工资、薪金所得；B. 劳务报酬所得；C. 稿酬所得；D. 特许权使用费所得", "ABCD"),
    # all of them written back, then the model's own answer: that answer
    ("A. 工资、薪金所得；B. 劳务报酬所得；C. 稿酬所得；D. 特许权使用费所得；E. 经营所得。其中E不属于综合所得，答案ABCD",
     "ABCD"),
    # the options named by their texts alone
    ("工资、薪金所得、劳务报酬所得、稿酬所得、特许权使用费所得", "ABCD"),
    ("答案：工资、薪金所得，稿酬所得和特许权使用费所得", "ACD"),
    ("稿酬所得", "C"),
])  # fmt: skip
def test_options_given_by_their_texts(output: str, expected: str) -> None:
    assert read_letter_set(output, query=MCQ).value == frozenset(expected), output


@pytest.mark.parametrize(("output", "expected"), [
    ("答案：ABCD，E不属于综合所得。", "ABCD"),  # the letters after the comma open another clause
    ("ABCD，E不是。", "ABCD"),
    ("选ABCD；E不适用。", "ABCD"),
    ("答案：AB, C D E都不是", "AB"),
    ("正确选项为A、B、C、D，E项不正确。", "ABCD"),
    ("答案：ABCD；E错误。", "ABCD"),
    ("A，B，C，D", "ABCD"),  # a list of letters
    ("答案：A，B，D项正确", "ABD"),  # said right together
    ("**Answer: A, C, D and E**", "ACDE"),
])  # fmt: skip
def test_letters_after_the_end_of_the_answers_clause_are_another_clause(output: str, expected: str) -> None:
    assert read_letter_set(output, query=MCQ).value == frozenset(expected), output


@pytest.mark.parametrize(("output", "expected"), [
    ("以上都对", "ABCDE"), ("以上都是", "ABCDE"), ("全选", "ABCDE"), ("答案：以上全部", "ABCDE"), ("所有选项都正确。", "ABCDE"),
    ("除E以外都是。", "ABCD"), ("除D项外都适用。", "ABCE"), ("C项说法错误，其余说法均正确。", "ABDE"),
    ("错误的是C，其余正确。", "ABDE"), ("E不属于，其他都属于。", "ABCD"),
])  # fmt: skip
def test_all_the_options_or_all_but_some(output: str, expected: str) -> None:
    assert read_letter_set(output, query=MCQ).value == frozenset(expected), output


@pytest.mark.parametrize("output", ["以上", "以上。", "答案：以上"])
def test_above_alone_says_nothing_of_the_options(output: str) -> None:
    assert read_letter_set(output, query=MCQ).value is None, output


def test_option_lines_judged_by_the_questions_own_predicate() -> None:
    lines = "A. 工资、薪金所得——属于\nB. 劳务报酬所得——属于\nC. 稿酬所得——属于\nD. 特许权使用费所得——属于\nE. 经营所得——不属于"
    assert read_letter_set(lines, query=MCQ).value == frozenset("ABCD")
    reasons = ("A. 工资、薪金所得：属于综合所得。\nB. 劳务报酬所得：属于综合所得。\nC. 稿酬所得：属于。\n"
               "D. 特许权使用费所得：属于，不属于经营所得。\nE. 经营所得：不属于综合所得，单独计税。")  # fmt: skip
    assert read_letter_set(reasons, query=MCQ).value == frozenset("ABCD")  # the first verdict word
    negative = MCQ.replace("属于居民个人综合所得的有", "不属于居民个人综合所得的有")
    assert read_letter_set(lines, query=negative).value == frozenset("E")  # asked which do not


@pytest.mark.parametrize("output", [
    "属于综合所得的有工资、薪金所得等，需要具体分析",  # named inside a sentence that answers nothing
    "工资、薪金所得、劳务报酬所得、稿酬所得、特许权使用费所得、经营所得",  # every option: a copy
])  # fmt: skip
def test_option_texts_in_a_sentence_or_all_of_them_select_nothing(output: str) -> None:
    assert read_letter_set(output, query=MCQ).value is None, output


@pytest.mark.parametrize(("output", "expected"), [
    ("104000元。注：如不考虑进项则为260000元。", 104000),  # the note supposes another case
    ("应纳增值税104000元。\n注意：进项税额156000元需认证。", 104000),  # the note gives no result
    ("104000元（注：已扣除进项156000元）", 104000),
    ("结果为104000元。备注：如果含税销售额为2000000元，则应纳税额为74000元", 104000),
    ("经计算，销项税额260000元。\n注：扣除进项后应纳税额为104000元", 104000),  # the note gives the result
])  # fmt: skip
def test_a_note_after_the_answer_is_commentary(output: str, expected: int) -> None:
    assert read_final_number(output).value.value == expected, output


@pytest.mark.parametrize(("output", "expected"), [
    # the answer first, then the working: "应纳X税" names the result, "应纳税所得额" a base
    ("应纳个人所得税为36,200元。\n\n计算过程：\n（1）劳务报酬收入额=50,000×(1-20%)=40,000元\n"
     "（3）应纳税所得额=400,000-60,000-38,400-36,000=265,600元\n（4）适用税率20%，速算扣除数16,920元", 36200),
    ("应纳增值税104000元。\n验算：104000+156000=260000元，260000÷13%×113%=2260000元，与资料一致。", 104000),
    ("销项税额=2260000×13%=293800元，应纳税额=137800元。\n不对，含税销售额需先价税分离：2260000÷1.13=2000000元，"
     "销项税额260000元，应纳增值税=260000-156000=104000元。", 104000),
    # a bracketed formula or supposition after the amount
    ("应纳增值税为104,000元（2,260,000÷1.13×13%−156,000）。", 104000),
    ("应纳增值税为104000元（若进项税额不得抵扣，则为260000元）。", 104000),
    ("43200\n（360000×12%）", 43200),
    ("应纳土地增值税37,800,000元。\n\n**说明**：增值率=84,000,000÷36,000,000×100%≈233.33%，超过200%。", 37800000),
])  # fmt: skip
def test_the_answer_before_its_working(output: str, expected: int) -> None:
    assert read_final_number(output, expect_percent=False).value.value == expected, output


def test_a_denied_amount_and_two_possible_amounts_are_no_answer() -> None:
    assert read_final_number("应纳税额不是104000元，而是137800元。").value.value == 137800
    hedged = read_final_number("应纳企业所得税可能为257.5万元，也可能为250万元，具体取决于口径。")
    assert hedged.value is None and hedged.failure == AMBIGUOUS
    beside = read_final_number("税率为3%或5%，应纳税额为4000元", expect_percent=False)
    assert beside.value.value == 4000  # alternatives of another thing are not the answer's


@pytest.mark.parametrize("output", ["4000元，而非12000元（按3%计算）", "4000元，而不是12,000元", "4000元并非12000元"])
def test_a_number_the_output_denies_is_not_its_answer(output: str) -> None:
    assert read_final_number(output, expect_percent=False).value.value == 4000, output


CRIMES = ["逃税罪", "抗税罪", "逃避追缴欠税罪", "骗取出口退税罪", "虚开增值税专用发票罪", "非法购买增值税专用发票罪"]


def crime(output: str) -> Any:
    return read_choice(output, CRIMES, option_letters=False, markers=["罪名", "构成", "认定为", "应认定为", "定性为"])


@pytest.mark.parametrize(("output", "expected"), [
    ("非法购买增值税专用发票罪。若其后虚开使用，则可能构成虚开增值税专用发票罪。", "非法购买增值税专用发票罪"),
    ("抗税罪。需要注意，若刘某仅以欺骗手段不缴税款，则应认定为逃税罪。", "抗税罪"),  # a supposition
    ("本案应定性为逃避追缴欠税罪，而不是逃税罪或抗税罪。", "逃避追缴欠税罪"),  # 或 continues the denial
    ("本案同时构成骗取出口退税罪和虚开增值税专用发票罪，应数罪并罚。", None),  # two answers to one question
])  # fmt: skip
def test_charges_beside_a_supposition_a_denial_or_another_charge(output: str, expected: str | None) -> None:
    got = crime(output)
    assert (CRIMES[got.value] if got.value is not None else None) == expected, (output, got)


@pytest.mark.parametrize("output", ["本题选B，C项20%为小型微利企业的法定税率", "答案：B，D项25%是基本税率。"])
def test_a_letter_after_a_comma_that_opens_a_clause_is_no_second_answer(output: str) -> None:
    choices = ["10%", "15%", "20%", "25%"]
    query = "高新技术企业适用的企业所得税税率是（ ）。\nA. 10%\nB. 15%\nC. 20%\nD. 25%\n答案："
    assert read_choice(output, choices, option_letters=True, markers=[], query=query).value == 1, output


def test_a_period_in_digits_names_the_option_in_chinese_numerals() -> None:
    choices = ["一年", "三年", "五年", "十年"]
    query = "税务机关追征税款的期限一般为（ ）。\nA. 一年\nB. 三年\nC. 五年\nD. 十年\n答案："
    assert read_choice("答案：3年", choices, option_letters=True, markers=[], query=query).value == 1
    assert read_choice("一般为10年", choices, option_letters=True, markers=[], query=query).value == 3


def test_two_answers_in_lines_or_a_list_or_two_sets_are_no_answer() -> None:
    assert choice("信息技术服务\n建筑服务").failure == AMBIGUOUS  # nothing but two different answers
    assert choice("C\n信息技术服务").value == 2  # the same one twice
    assert crime("罪名：\n1. 骗取出口退税罪\n2. 虚开增值税专用发票罪").failure == HEDGED
    assert read_letter_set("我认为是ABC，也可能是ABCD。", query=MCQ).failure == HEDGED
    assert read_letter_set("答案：AC, B, D and E are not included.", query=MCQ).value == frozenset("AC")


@pytest.mark.parametrize("output", ["以上选项都不对", "以上均不正确", "A、B、C、D均不正确", "ABCD都不对",
                                    "D. 以上选项均不正确。", "都不对"])  # fmt: skip
def test_every_option_said_wrong_is_none_correct(output: str) -> None:
    assert choice(output).failure == NONE_CORRECT, output


# ------------------------------------------------------------------ 3. an answer must be asserted


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("答案：C", 2),  # an answer marker
        ("综上所述，适用6%的是信息技术服务。", 2),  # a conclusion
        ("C", 2),  # a bare short answer
        ("**C. 信息技术服务**", 2),
        ("信息技术服务属于现代服务业，税率为6%。", 2),  # the conclusion sentence names one option
        ("C是正确答案。因为信息技术服务属于现代服务。", 2),  # the lead sentence answers first
        ("B. 不动产租赁服务。不动产租赁适用9%。", 1),
        ("最重要的是信息技术服务。其余三项都是9%或13%。", 2),  # an answer verb before the one option
    ],
)
def test_what_asserts_an_answer(output: str, expected: int) -> None:
    assert choice(output).value == expected


@pytest.mark.parametrize(
    "output",
    [
        "从前有一家软件公司，专门提供信息技术服务，老板每天都很忙，后来公司越做越大。员工们都很开心。",
        "增值税的税率分为13%、9%、6%和零税率几档，不同服务适用不同税率，需要具体分析。",
        "A company must pay VAT on its sales of services in China.",
        "上述说法中，C项不正确。",
        "印刷品中有有形动产租赁服务的说法，也有不动产租赁服务的说法，还有建筑服务的说法。",
    ],
)
def test_what_asserts_nothing(output: str) -> None:
    got = item("TaxSCQ", SCQ_RECORD, output)
    assert got.status == "format_failure" and got.scores["acc"] == 0.0, got.extracted


def test_a_boxed_value_that_is_no_option_is_no_answer() -> None:
    amounts = ["48°C", "58°C", "8°C", "76°C"]
    query = "有效积温为\nA. 48°C\nB. 58°C\nC. 8°C\nD. 76°C\n答案："
    assert read_choice("……= 76°C。因此为 \\boxed{39°C}。", amounts, option_letters=True, markers=[],
                       query=query).failure == NOT_AN_OPTION


# ------------------------------------------------------------------ 4. what real models write


def test_bold_and_latex_final_values() -> None:
    assert read_final_number("经分析，最大值是 **2**").value.value == 2
    assert read_final_number("所以答案为 $\\mathbf{2}$").value.value == 2
    assert read_final_number("答案：\\text{44000元}").value.value == 44000
    assert read_final_number("$-\\frac{1}{2}$").value.value == pytest.approx(-0.5)
    assert choice("经过分析，本题应当是 **C**，其余均不符合。").value == 2
    assert choice("\\boxed{\\text C}").value == 2


def test_an_answer_tag_followed_by_english() -> None:
    assert choice("答案：C. Information technology services are taxed at 6%.").value == 2
    assert choice("Answer: C because IT services are modern services.").value == 2


@pytest.mark.parametrize("said", ["税额为零。", "经计算应纳税所得额为负数，因此无需缴纳企业所得税。", "该企业不需要缴纳增值税。",
                                  "结论：免征增值税。"])
def test_nothing_due_is_zero(said: str) -> None:
    assert item("TaxCalc", {"id": "1", "query": CALC, "answer": 0}, said).scores["em"] == 1.0


def test_a_table_in_wan_yuan_is_read_in_the_gold_unit() -> None:
    table = "| 项目 | 金额（万元） |\n|---|---|\n| 销项税额 | 10.4 |\n| 应纳税额 | 4.4 |"
    assert item("TaxCalc", CALC_RECORD, table).scores["em"] == 1.0
    above = "单位：万元\n| 项目 | 金额 |\n|---|---|\n| 应纳税额 | 4.4 |"
    assert item("TaxCalc", CALC_RECORD, above).scores["em"] == 1.0
    assert item("TaxCalc", CALC_RECORD, "| 项目 | 金额（元） |\n|---|---|\n| 应纳税额 | 44000 |").scores["em"] == 1.0


def test_an_answer_header_with_the_answer_below() -> None:
    assert choice("答案如下：\n\n**C. 信息技术服务**\n\n解析：现代服务适用6%。").value == 2
    assert read_final_number("答案如下：\n44000元").value.value == 44000


@pytest.mark.parametrize(
    "output",
    ["答案：A。不对，应该选C。", "答案：A\n不，应该是C", "答案：A\n更正：正确答案是C", "我选A……等等，重新考虑后，应为C"],
)
def test_a_retraction_wins(output: str) -> None:
    assert choice(output).value == 2


def test_only_x_and_not_x() -> None:
    assert choice("四个选项中只有C正确。").value == 2
    assert choice("注意不是B，是C。").value == 2
    assert choice("选C，注意不是B").value == 2
    assert read_letter_set("只有C正确", query=MCQ).value == frozenset("C")


def test_per_option_verdicts_and_all_of_the_above() -> None:
    verdicts = "A：正确。\nB：正确。\nC：正确。\nD：正确。\nE：错误。"
    assert read_letter_set(verdicts, query=MCQ).value == frozenset("ABCD")
    everything = "A：正确。\nB：正确。\nC：正确。\nD：正确。\nE：正确。\n以上都对"
    assert read_letter_set(everything, query=MCQ).value == frozenset("ABCDE")
    query = "题目：下列说法正确的是（ ）。\nA. 甲\nB. 乙\nC. 丙\nD. 以上都对\n答案："
    assert read_choice("A正确，B正确，C正确，以上都对。", ["甲", "乙", "丙", "以上都对"], option_letters=True,
                       markers=[], query=query).value == 3


def test_a_declined_calculation_is_no_answer() -> None:
    out = "已知条件包括2024年的数据。由于题目没有提供全部信息，所以我们不能直接计算出应纳税额。"
    assert read_final_number(out).failure == NOT_ASSERTED
    assert read_final_number("因此，F中有6棵、15棵或20棵树。").failure == AMBIGUOUS


# ------------------------------------------------------------------ 5. both sides cleaned alike


def test_latex_in_option_texts_matches_the_cleaned_prediction() -> None:
    choices = ["$5\\%$", "收入额$\\times 20\\%$", "$\\frac{1}{2}$", "42000元"]
    query = "题目：税率为（ ）。\nA. $5\\%$\nB. 收入额$\\times 20\\%$\nC. $\\frac{1}{2}$\nD. 42000元\n答案："
    for index, text in enumerate(choices):
        got = read_choice(text, choices, option_letters=True, markers=[], query=query)
        assert got.value == index, (text, got)
    json_answer = '{"答案": "收入额$\\\\times 20\\\\%$"}'
    assert read_choice(json_answer, choices, option_letters=True, markers=[], query=query).value == 1
