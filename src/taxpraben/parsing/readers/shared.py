"""The rules that several reading kinds share, declared once: each kind's reader module
registers its own attempt of them (``@COPY_OF_PROMPT_RULE.reads("label")``).

The vetoes that come first (a copy of the prompt, an invented question, a hedge), the JSON
answer field, the final statements (answer markers, boxes, self-corrections), the
conclusions, and the vetoes that end a chain (several answers, no answer). The rules of one
kind only are declared in that kind's module.
"""

from __future__ import annotations

from taxpraben.parsing.prompt_copy import ANOTHER_QUESTION, COPY_OF_PROMPT
from taxpraben.parsing.region import AMBIGUOUS, HEDGED, NO_ANSWER, NONE_CORRECT, NOT_AN_OPTION
from taxpraben.parsing.registry import Example, register_rule

__all__ = [
    "ANOTHER_QUESTION_RULE",
    "ANSWER_STATEMENT_RULE",
    "BOXED_RULE",
    "CONCLUSION_RULE",
    "COPY_OF_PROMPT_RULE",
    "FINAL_RULES",
    "HEDGE_RULE",
    "JSON_ANSWER_RULE",
    "NONE_CORRECT_RULE",
    "NOT_AN_OPTION_RULE",
    "NO_ANSWER_RULE",
    "SELF_CORRECTION_RULE",
    "SEVERAL_ANSWERS_RULE",
]

COPY_OF_PROMPT_RULE = register_rule(
    "veto.copy-of-prompt", kinds=("label", "letters", "number", "span", "fields"), tier=0, confidence="high",
    description="The output only repeats its prompt (options, question, instruction): nothing of its own.",
    examples=(Example("label", "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：", None),
              Example("letters", "A. 交通运输服务\nB. 不动产租赁服务\nC. 有形动产租赁服务\nD. 建筑服务\nE. 金融服务", None)),
    leaves_alone=(Example("label", "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：C", "信息技术服务"),),
    decides=COPY_OF_PROMPT,
)

ANOTHER_QUESTION_RULE = register_rule(
    "veto.another-question", kinds=("label", "letters", "number"), tier=0, confidence="high",
    description="The output opens with a question of its own invention and answers that.",
    examples=(Example("label", "题目：下列税种中，属于地方税的是（ ）。\nA. 消费税\nB. 房产税\n答案：B", None),),
    decides=ANOTHER_QUESTION,
)

HEDGE_RULE = register_rule(
    "veto.hedge", kinds=("label", "letters"), tier=0, confidence="high",
    description="Two or more options offered as the answer together or as alternatives ('B或C', 'ABC，也可能是ABCD').",
    examples=(Example("label", "答案：B或C", None), Example("letters", "我认为是ABD，也可能是ABCD", None)),
    leaves_alone=(Example("label", "答案：C，而非B或D", "信息技术服务"),),
    decides=HEDGED,
)

JSON_ANSWER_RULE = register_rule(
    "json.answer-field", kinds=("label", "letters", "number", "span"), tier=1, confidence="high",
    description="An answer field of a JSON object in the output ('{\"answer\": \"C\"}').",
    examples=(Example("label", '{"answer": "C", "reason": "信息技术服务适用6%"}', "信息技术服务"),
              Example("letters", '```json\n{"答案": "ABD"}\n```', "ABD"),
              Example("number", '{"应纳增值税额": 44000, "答案": 44000}', "44000"),
              Example("span", '{"answer": "万分之五"}', "万分之五"),
              # read whole: its answer is no option list because its reasoning names other options' values
              Example("label", '{"reasoning": "由于5+10", "answer": "15"}', "15", "label-numbers")),
    leaves_alone=(Example("label", '{"reason": "信息技术服务适用6%"}\n答案：C', "信息技术服务"),),
)

ANSWER_STATEMENT_RULE = register_rule(
    "final.answer-statement", kinds=("label", "letters", "number"), tier=2, confidence="high",
    description="The statement after an answer marker (答案/正确答案/故选/the answer is), latest first; different "
                "answers in two strong statements are several answers.",
    examples=(Example("label", "信息技术服务属于现代服务，适用6%税率。\n\n**答案：C**", "信息技术服务"),
              Example("letters", "逐项分析后，答案：ABD", "ABD"),
              Example("number", "销项税额=800000×13%=104000元\n应纳税额=104000-60000=44000元\n答案：44000元", "44000"),
              # an answer in English naming an option's value
              Example("label", "The answer is: 3 months", "3个月", "label-months"),
              # options the prompt numbers are given by number, in the prompt's own answer tag, even
              # when the model's answer is the prompt's example ("for example: <ANSWER>1</ANSWER>")
              Example("label", "Danielle is Diane's parent, so Diane is her child.\n<ANSWER>2</ANSWER>", "child",
                      "label-numbered"),
              Example("label", "<ANSWER>1</ANSWER><|im_end|>", "parent", "label-numbered")),
    leaves_alone=(Example("label", "没有答案：题目有误", None),
                  # a number past the options names none of them
                  Example("label", "<ANSWER>3</ANSWER>", None, "label-numbered")),
)

BOXED_RULE = register_rule(
    "final.boxed", kinds=("label", "letters", "number"), tier=2, confidence="high",
    description="A LaTeX box (\\boxed{...}) holding the answer.",
    examples=(Example("label", "信息技术服务适用6%，故为 $\\boxed{C}$", "信息技术服务"),
              Example("number", "应纳税额为 $\\boxed{44000}$ 元", "44000"),
              # a unit's exponent is never the number
              Example("number", "单位面积税额 $\\boxed{44000\\,\\text{元/m}^2}$", "44000")),
)

SELF_CORRECTION_RULE = register_rule(
    "final.self-correction", kinds=("label", "letters", "number"), tier=2, confidence="high",
    description="A correction after an answer ('不对，应为…', '更正：…') replaces it.",
    examples=(Example("label", "答案：B\n\n不对，不动产租赁适用9%，应为C", "信息技术服务"),
              Example("number", "答案：104000元\n\n不对，漏减了进项税额。应纳税额应为44000元", "44000")),
)

CONCLUSION_RULE = register_rule(
    "conclusion.statement", kinds=("label", "letters", "number"), tier=4, confidence="high",
    description="A conclusion (综上/因此/所以) that is no supposition: its answer before its first semicolon.",
    examples=(Example("label", "有形动产租赁适用13%，不动产租赁和建筑服务适用9%，因此信息技术服务符合题意。", "信息技术服务"),
              Example("letters", "有形动产租赁适用13%，金融服务适用6%。所以符合题意的是A、B、D", "ABD"),
              Example("number", "销项税额104000元，进项税额60000元，因此应纳增值税为44000元。", "44000")),
)

SEVERAL_ANSWERS_RULE = register_rule(
    "veto.several-answers", kinds=("label", "letters", "number"), tier=7, confidence="high",
    description="Different answers in strong statements with no correction between, different options each alone on "
                "its line (reasons between them or not), or "
                "two different values boxed on the last line that boxes one, or one answer tag closed "
                "around different values.",
    examples=(Example("label", "答案：B\n\n答案：C", None), Example("label", "不动产租赁服务\n信息技术服务", None),
              Example("number", "应纳税额可能是 $\\boxed{44000}$ 或 $\\boxed{104000}$", None),
              Example("number", "[FINAL_ANSWER]27885[/FINAL_ANSWER] [FINAL_ANSWER]35066[/FINAL_ANSWER]", None)),
    leaves_alone=(Example("number", "先算销项 $\\boxed{104000}$\n最终应纳税额 $\\boxed{44000}$", "44000"),
                  Example("number", "[FINAL_ANSWER]16.500000000000001[/FINAL_ANSWER] | [FINAL_ANSWER]16.5[/FINAL_ANSWER]",
                          "16.5")),
    decides=AMBIGUOUS,
)

NO_ANSWER_RULE = register_rule(
    "veto.no-answer", kinds=("label", "letters", "number", "span", "fields"), tier=7, confidence="high",
    description="Nothing that any rule reads: no answer found.",
    examples=(Example("label", "这道题考查增值税税率。", None), Example("number", "这道题考查增值税。", None),
              Example("fields", "该公司存在违法行为。", None)),
    decides=NO_ANSWER,
)

NOT_AN_OPTION_RULE = register_rule(
    "veto.not-an-option", kinds=("label", "letters"), tier=7, confidence="high",
    description="The model boxed an answer that is none of the options (no option's letter or text in the box).",
    examples=(Example("label", "$\\boxed{13\\%}$", None),
              Example("letters", "逐项分析后，没有一个选项完全符合题意。\n\n$\\boxed{无直接适用选项}$", None)),
    decides=NOT_AN_OPTION,
)


#: The rule each final statement kind reads by, and the veto of several different ones
#: (:func:`~taxpraben.parsing.region.settle_final`).
FINAL_RULES: dict[str, str] = {
    "correction": SELF_CORRECTION_RULE.name,
    "boxed": BOXED_RULE.name,
    "answer": ANSWER_STATEMENT_RULE.name,
    "several": SEVERAL_ANSWERS_RULE.name,
}


NONE_CORRECT_RULE = register_rule(
    "veto.none-correct", kinds=("label", "letters"), tier=7, confidence="high",
    description="The output says that no option is correct ('以上选项都不正确', 'none of the options is correct', "
                "'لا يوجد خيار صحيح', 'कोई सही विकल्प नहीं है').",
    examples=(Example("label", "以上选项都不正确", None),
              Example("letters", "After checking each of them:\nFinal answer: none of the given options is correct.", None)),
    decides=NONE_CORRECT,
)
