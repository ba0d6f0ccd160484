"""Tokens and markup are never content (issue 44, item 1): no letter, number or option is read
from inside a special token, a tag name or a LaTeX command, and the answer ends at the first
end-of-answer token that follows it (what a model writes after ``<eoa>`` or ``<|im_end|>`` is
not read).

Properties over generated outputs, read through the whole reading of a task (the kinds'
chains), so that no rule of any tier can take a letter or a number out of markup.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxpraben.data.checks import check_record
from taxpraben.parsing.clean import answer_region, clean_prediction
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

SETTINGS = settings(max_examples=200, deadline=None)
REGISTRY = load_registry(use_env=False)

RECORDS = {
    "TaxSCQ": {"id": "q", "query": "以下是单项选择题。\n题目：下列服务中，适用6%增值税税率的是（ ）。\nA. 有形动产租赁服务\n"
               "B. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：",
               "choices": ["有形动产租赁服务", "不动产租赁服务", "信息技术服务", "建筑服务"], "gold": 2,
               "answer": "信息技术服务"},
    "TaxMCQ": {"id": "q", "query": "以下是多项选择题。\n下列属于增值税应税行为的有（ ）。\nA. 销售货物\nB. 提供加工劳务\n"
               "C. 销售不动产\nD. 存款利息\n答案：", "answer": "ABC"},
    "TaxCalc": {"id": "q", "query": "某企业应纳税所得额100万元，税率25%，应纳企业所得税多少万元？", "answer": 25},
}

#: End-of-answer and turn tokens of real tokenizers (the answer region ends at each).
END_TOKENS = ["</s>", "<eoa>", "<eos>", "<EOS>", "<eoh>", "<eom>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>",
              "<|end|>", "<|end▁of▁sentence|>", "<｜end▁of▁sentence｜>", "<|user|>", "<|assistant|>",
              "<|im_start|>", "<end_of_turn>", "<|END_OF_TURN_TOKEN|>", "<|eom_id|>"]
NOISE_TOKENS = ["<s>", "<unk>", "<pad>", "<bos>", "<mask>", "<|begin_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|im_start|>assistant\n"]
#: Markup that holds option letters or digits in its name: never an answer by itself.
MARKUP = ["<answer>", "</answer>", "<Answer>", "[ANSWER]", "[/ANSWER]", "\\Delta", "\\cdot", "\\frac{}{}",
          "\\begin{aligned}", "\\end{aligned}", "\\mathrm{}", "\\text{}", "\\left(", "\\right)", "<br>", "<br/>",
          "<|reserved_special_token_3|>", "<extra_id_0>", "<eoa>", "</s>", "<div>", "</div>", "<p class=\"a1\">",
          "</p>", "<h2>", "<li>", "<td>", "&lt;", "&gt;"]
FILLER = [" ", "\n", "：", "。", "**", "#"]

TOKENS_ONLY = st.lists(st.sampled_from(END_TOKENS + NOISE_TOKENS + MARKUP + FILLER), min_size=1, max_size=12).map("".join)


def read(task: str, output: str) -> tuple[str, object, float | None, str | None]:
    spec = REGISTRY[task]
    record, _ = check_record(RECORDS[task], spec, Path("test"), 1, "line")
    item = prepare_item(spec, record, 0, output, None)
    got = item.scores.get("acc", item.scores.get("em"))
    return item.status, item.extracted, got, item.read_by


@pytest.mark.parametrize("task", sorted(RECORDS))
@SETTINGS
@given(output=TOKENS_ONLY)
def test_an_output_of_tokens_and_markup_has_no_answer(task: str, output: str) -> None:
    status, extracted, _, read_by = read(task, output)
    assert status == "format_failure", (output, extracted, read_by)


ANSWERS = {
    "TaxSCQ": ["C", "答案：C", "The answer is (C).", "C. 信息技术服务", "信息技术服务"],
    "TaxMCQ": ["ABC", "答案：ABC", "A、B、C", "The answer is A, B and C."],
    "TaxCalc": ["25", "答案：25万元", "应纳税额=100×25%=25（万元）", "The answer is 25."],
}
#: What a model invents after its answer: another question, another answer, the options again.
AFTER = st.lists(st.sampled_from(["问题：", "下列说法正确的是（ ）", "\nA. 甲\nB. 乙\n", "答案：", "A", "B", "D", "AB",
                                  "50", "100", "Question: why?", "Answer: (B)", "\n", " ", "。"]),
                 max_size=8).map("".join)


@pytest.mark.parametrize("task", sorted(RECORDS))
@SETTINGS
@given(data=st.data())
def test_what_follows_an_end_token_is_not_read(task: str, data: st.DataObject) -> None:
    answer = data.draw(st.sampled_from(ANSWERS[task]))
    token = data.draw(st.sampled_from(END_TOKENS))
    after = data.draw(AFTER)
    alone = read(task, answer)
    assert alone[0] == "ok" and alone[2] == 1.0, (answer, alone)
    assert read(task, answer + token + after) == alone


@pytest.mark.parametrize("task", sorted(RECORDS))
@SETTINGS
@given(data=st.data())
def test_noise_tokens_anywhere_change_nothing(task: str, data: st.DataObject) -> None:
    answer = data.draw(st.sampled_from(ANSWERS[task]))
    cut = data.draw(st.integers(0, len(answer)))
    token = data.draw(st.sampled_from(["<s>", "<unk>", "<pad>", "<bos>"]))
    at_edge = data.draw(st.booleans())
    noisy = token + answer if at_edge else answer[:cut] + token + answer[cut:]
    if at_edge or cut in (0, len(answer)):
        assert read(task, noisy) == read(task, answer)
    else:
        # inside the text a noise token is dropped as if it were not there
        assert clean_prediction(noisy) == clean_prediction(answer)


def test_the_region_ends_at_the_first_end_token_after_content() -> None:
    assert answer_region("C<eoa>B") == "C"
    assert answer_region("<|im_start|>assistant\nC<|im_end|>\n<|im_start|>user\nD") == "C"
    assert answer_region("<|begin_of_text|><|start_header_id|>assistant<|end_header_id|>\n\nB<|eot_id|>A") == "\n\nB"
    assert answer_region("</s>C</s>D") == "C"
    assert answer_region("答案：<unk>C<pad></s>问题：") == "答案：C"
    assert answer_region("no tokens at all") == "no tokens at all"
    assert answer_region("a < b and c > d") == "a < b and c > d"
