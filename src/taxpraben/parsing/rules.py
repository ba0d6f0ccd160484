"""The answer-reading rules as data: each rule's name, the kinds it reads, its place in the
order, its confidence, and examples of what it reads and what it must leave alone.

Every reading names the rule that made it (:attr:`taxpraben.parsing.region.Reading.rule`):
samples.jsonl writes it as ``read_by: "rule:<name>"``, ``taxpraben rules`` lists this
registry and ``taxpraben explain`` shows one output's reading against it. A format failure
names the veto that decided it (``veto.*``).

Each kind's reader is the execution of its chain: the chain of its reading kind in a *named
chain set* (:data:`NAMED_CHAINS`: ``taxpraben``, the default, :data:`CHAINS`; ``taxben``,
TaxBen's own rules, :data:`TAXBEN_CHAINS`), or a task spec's own ``reading.chain`` (a chain
set's name, or rule names in order): :mod:`~taxpraben.parsing.chain` runs the attempts of the rules in order
over one view of the output (each kind's attempts together: :mod:`~taxpraben.parsing.label_rules`,
:mod:`~taxpraben.parsing.letters_rules`, :mod:`~taxpraben.parsing.number_rules`,
:mod:`~taxpraben.parsing.span_rules`, :mod:`~taxpraben.parsing.fields_rules`,
:mod:`~taxpraben.parsing.text_rules`); a test runs every example through the
chain of its kind in every named set that holds the rule and checks that it is read by its
own rule, so a rule that an earlier one shadows fails.

What a rule reads is compared with the gold as its ``comparison`` says: ``taxpraben`` (this
project's: an option's label, a number in the gold's unit, a set of letters, a phrase) or
``taxben`` (TaxBen's, flaws included: lower-cased labels, the letter string in output order,
``"{:.2f}"`` strings, the gold as a substring, the raw output); a chain's reading rules share
one (:func:`chain_comparison`).

Confidence: ``high`` for an answer the output states (a marker, a box, a JSON field, a
line that is nothing but the answer); ``low`` for a fallback (a last number with no
statement, an option named only in passing, a span that is the whole output, a field
matched fuzzily): ``--judge`` reads low-confidence readings as it reads format failures.

The example questions (:data:`EXAMPLE_CONTEXT`) are fixed per kind, so an example is one
output and what a careful grader reads from it. Pure data; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = [
    "CHAINS",
    "DEFAULT_CHAIN",
    "EXAMPLE_CONTEXT",
    "NAMED_CHAINS",
    "RULES",
    "TAXBEN_CHAINS",
    "Example",
    "Rule",
    "chain_comparison",
    "chain_names",
    "confidence_of",
    "rule_named",
]

ReadingKind = Literal["label", "letters", "number", "span", "fields", "text"]
Confidence = Literal["high", "low"]
#: How what a rule reads is compared with the gold (see the module docstring).
Comparison = Literal["taxpraben", "taxben"]


@dataclass(frozen=True)
class Example:
    """An output and what its kind's whole chain must read from it (``expect``: the
    extracted value as samples.jsonl writes it, None for a format failure). ``kind``: the
    reading kind the example is for."""

    kind: ReadingKind
    output: str
    expect: str | None
    #: The question it answers, when not its kind's (a key of :data:`EXAMPLE_CONTEXT`).
    context: str | None = None


@dataclass(frozen=True)
class Rule:
    """One named reading rule (see the module docstring)."""

    name: str
    kinds: tuple[ReadingKind, ...]
    #: Its place among the rule classes: 0 vetoes that come first (copies, invented
    #: questions), 1 JSON answers, 2 final statements, 3 answer lines and bold answers,
    #: 4 conclusions, 5 lead sentences, 6 fallbacks, 7 the vetoes that end a chain.
    tier: int
    confidence: Confidence
    description: str
    #: Outputs this rule reads (the chain must read them by this rule, with ``expect``).
    examples: tuple[Example, ...]
    #: Outputs this rule must leave alone: the chain reads them otherwise (another rule or
    #: no answer), with ``expect``.
    leaves_alone: tuple[Example, ...] = ()
    #: How what it reads is compared with the gold (vetoes read nothing: any chain's).
    comparison: Comparison = "taxpraben"

    @property
    def veto(self) -> bool:
        return self.name.startswith("veto.")


def _ex(kind: ReadingKind, output: str, expect: str | None, context: str | None = None) -> Example:
    return Example(kind, output, expect, context)


#: The question every example of a kind answers: label (TaxSCQ), letters (TaxMCQ), number
#: (TaxCalc), span (TaxRead), fields (TaxInspect).
EXAMPLE_CONTEXT: dict[str, dict[str, object]] = {
    "label": {
        "query": "以下是中国税法考试中的单项选择题，请选出唯一正确的选项。\n题目：下列服务中，适用6%增值税税率的是（ ）。\n"
                 "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：",
        "choices": ["有形动产租赁服务", "不动产租赁服务", "信息技术服务", "建筑服务"],
    },
    "label-rates": {
        "query": "以下是中国税法考试中的单项选择题。\n题目：小规模纳税人销售自己使用过的固定资产，减按（ ）征收率征收增值税。\n"
                 "A. 2%\nB. 3%\nC. 5%\nD. 1%\n答案：",
        "choices": ["2%", "3%", "5%", "1%"],
    },
    "label-numbers": {
        "query": "以下是单项选择题。\n题目：某纳税人本月有几笔应税收入？\nA. 5\nB. 10\nC. 15\nD. 20\n答案：",
        "choices": ["5", "10", "15", "20"],
    },
    "label-months": {
        "query": "以下是单项选择题。\n题目：纳税人因有特殊困难不能按期缴纳税款的，经批准可以延期缴纳，但最长不得超过（ ）。\n"
                 "A. 1个月\nB. 3个月\nC. 6个月\nD. 15个月\n答案：",
        "choices": ["1个月", "3个月", "6个月", "15个月"],
    },
    "letters": {
        "query": "以下是中国税务考试中的多项选择题，请选出所有正确的选项。\n根据增值税法律制度的规定，一般纳税人提供的下列服务中，"
                 "适用9%税率的有（  ）。\nA. 交通运输服务\nB. 不动产租赁服务\nC. 有形动产租赁服务\nD. 建筑服务\nE. 金融服务",
    },
    "number": {
        "query": "某公司为增值税一般纳税人，2024年5月销售货物取得不含税销售额800000元，适用税率13%，当月取得增值税专用发票注明的"
                 "可抵扣进项税额60000元。请计算该公司当月应纳增值税额（单位：元）。",
    },
    "span": {
        "query": "请阅读以下税收法规材料，并简要回答问题。\n\n材料：纳税人未按照规定期限缴纳税款的，税务机关除责令限期缴纳外，"
                 "从滞纳税款之日起，按日加收滞纳税款万分之五的滞纳金。\n\n问题：税务机关按日加收滞纳金的比例是多少？",
        "text": "纳税人未按照规定期限缴纳税款的，税务机关除责令限期缴纳外，从滞纳税款之日起，按日加收滞纳税款万分之五的滞纳金。",
    },
    "fields": {
        "query": "请阅读以下税务稽查案例，判断违法行为的性质，计算少缴税款。\n案例：A公司通过个人账户收取货款，隐匿含税销售收入"
                 "2,260,000元，未申报纳税，适用13%的税率。\n请严格按照以下JSON格式输出：\n"
                 '{"违法性质": "", "少缴税款": 0.00}',
    },
    "text": {"query": "小规模纳税人的增值税征收率是多少？"},
}

_L: ReadingKind = "label"
_M: ReadingKind = "letters"
_N: ReadingKind = "number"
_S: ReadingKind = "span"
_F: ReadingKind = "fields"

RULES: tuple[Rule, ...] = (
    # ------------------------------------------------------------------ vetoes first
    Rule("veto.copy-of-prompt", (_L, _M, _N, _S, _F), 0, "high",
         "The output only repeats its prompt (options, question, instruction): nothing of its own.",
         (_ex(_L, "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：", None),
          _ex(_M, "A. 交通运输服务\nB. 不动产租赁服务\nC. 有形动产租赁服务\nD. 建筑服务\nE. 金融服务", None)),
         (_ex(_L, "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：C", "信息技术服务"),)),
    Rule("veto.another-question", (_L, _M, _N), 0, "high",
         "The output opens with a question of its own invention and answers that.",
         (_ex(_L, "题目：下列税种中，属于地方税的是（ ）。\nA. 消费税\nB. 房产税\n答案：B", None),)),
    Rule("veto.hedge", (_L, _M), 0, "high",
         "Two or more options offered as the answer together or as alternatives ('B或C', 'ABC，也可能是ABCD').",
         (_ex(_L, "答案：B或C", None), _ex(_M, "我认为是ABD，也可能是ABCD", None)),
         (_ex(_L, "答案：C，而非B或D", "信息技术服务"),)),
    # ------------------------------------------------------------------ JSON answers
    Rule("json.answer-field", (_L, _M, _N, _S), 1, "high",
         "An answer field of a JSON object in the output ('{\"answer\": \"C\"}').",
         (_ex(_L, '{"answer": "C", "reason": "信息技术服务适用6%"}', "信息技术服务"),
          _ex(_M, '```json\n{"答案": "ABD"}\n```', "ABD"),
          _ex(_N, '{"应纳增值税额": 44000, "答案": 44000}', "44000"),
          _ex(_S, '{"answer": "万分之五"}', "万分之五"),
          # read whole: its answer is no option list because its reasoning names other options' values
          _ex(_L, '{"reasoning": "由于5+10", "answer": "15"}', "15", "label-numbers")),
         (_ex(_L, '{"reason": "信息技术服务适用6%"}\n答案：C', "信息技术服务"),)),
    # ------------------------------------------------------------------ final statements
    Rule("final.answer-statement", (_L, _M, _N), 2, "high",
         "The statement after an answer marker (答案/正确答案/故选/the answer is), latest first; different "
         "answers in two strong statements are several answers.",
         (_ex(_L, "信息技术服务属于现代服务，适用6%税率。\n\n**答案：C**", "信息技术服务"),
          _ex(_M, "逐项分析后，答案：ABD", "ABD"),
          _ex(_N, "销项税额=800000×13%=104000元\n应纳税额=104000-60000=44000元\n答案：44000元", "44000"),
          # an answer in English naming an option's value
          _ex(_L, "The answer is: 3 months", "3个月", "label-months")),
         (_ex(_L, "没有答案：题目有误", None),)),
    Rule("final.boxed", (_L, _M, _N), 2, "high",
         "A LaTeX box (\\boxed{...}) holding the answer.",
         (_ex(_L, "信息技术服务适用6%，故为 $\\boxed{C}$", "信息技术服务"),
          _ex(_N, "应纳税额为 $\\boxed{44000}$ 元", "44000"),
          # a unit's exponent is never the number
          _ex(_N, "单位面积税额 $\\boxed{44000\\,\\text{元/m}^2}$", "44000")),),
    Rule("final.self-correction", (_L, _M, _N), 2, "high",
         "A correction after an answer ('不对，应为…', '更正：…') replaces it.",
         (_ex(_L, "答案：B\n\n不对，不动产租赁适用9%，应为C", "信息技术服务"),
          _ex(_N, "答案：104000元\n\n不对，漏减了进项税额。应纳税额应为44000元", "44000")),),
    # ------------------------------------------------------------------ answer lines
    Rule("choice.bare-answer", (_L,), 3, "high",
         "A line that is nothing but one option (its letter, its text, or both), the latest such line.",
         (_ex(_L, "C", "信息技术服务"), _ex(_L, "分析：6%适用于现代服务。\nC. 信息技术服务", "信息技术服务"),
          # a stray dialogue turn ends the answer: what the model writes for it is not read
          _ex(_L, "C\n### Human: 下一题\nA", "信息技术服务")),
         (_ex(_L, "C\nB", None),)),
    Rule("choice.bold-answer", (_L,), 3, "high",
         "A bold span that is nothing but an option ('**C**').",
         (_ex(_L, "信息技术服务适用的税率为6%，选项 **C** 符合题意，其余选项税率不同。", "信息技术服务"),),),
    Rule("letters.restated-option-lines", (_M,), 3, "high",
         "The options written back on lines of their own, as the answer (at least two, by letter and text).",
         (_ex(_M, "A. 交通运输服务\nB. 不动产租赁服务\nD. 建筑服务", "ABD"),),),
    Rule("letters.all-or-all-but", (_M,), 3, "high",
         "All the options, or all but some ('以上都对', '全选', '除E以外都是').",
         (_ex(_M, "除E以外都是", "ABCD"),),),
    Rule("letters.option-verdicts", (_M,), 3, "high",
         "A verdict on each option ('A正确；B正确；C错误；…'): the ones judged right.",
         (_ex(_M, "A. 正确\nB. 正确\nC. 错误，适用13%\nD. 正确\nE. 错误，适用6%", "ABD"),),),
    Rule("letters.all-options-concluded", (_M,), 3, "high",
         "Verdicts on the options closed by a conclusion that all are right ('以上选项均正确').",
         (_ex(_M, "A正确。B正确。C正确。D正确。E正确。\n综上，以上选项均正确。", "ABCDE"),),),
    # ------------------------------------------------------------------ conclusions
    Rule("conclusion.statement", (_L, _M, _N), 4, "high",
         "A conclusion (综上/因此/所以) that is no supposition: its answer before its first semicolon.",
         (_ex(_L, "有形动产租赁适用13%，不动产租赁和建筑服务适用9%，因此信息技术服务符合题意。", "信息技术服务"),
          _ex(_M, "有形动产租赁适用13%，金融服务适用6%。所以符合题意的是A、B、D", "ABD"),
          _ex(_N, "销项税额104000元，进项税额60000元，因此应纳增值税为44000元。", "44000")),),
    # ------------------------------------------------------------------ lead sentences
    Rule("choice.lead-sentence", (_L,), 5, "high",
         "The first sentence gives the option before its reasons ('C是正确答案。……').",
         (_ex(_L, "C项正确。信息技术服务属于现代服务业，适用6%的税率；B项不动产租赁服务适用9%。", "信息技术服务"),),),
    Rule("letters.lead-sentence", (_M,), 5, "high",
         "The first sentence gives the letters before the reasons ('ABD。交通运输……').",
         (_ex(_M, "ABD。交通运输服务、不动产租赁服务和建筑服务适用9%税率，有形动产租赁适用13%。", "ABD"),),),
    # ------------------------------------------------------------------ fallbacks
    Rule("choice.named-in-last-sentence", (_L,), 6, "low",
         "No statement: the option the last sentence affirms by its text.",
         (_ex(_L, "根据现行规定，现代服务适用较低税率。符合题意的是信息技术服务", "信息技术服务"),),),
    Rule("choice.value-in-last-sentence", (_L,), 6, "low",
         "No statement: the last sentence gives the value of one option, written otherwise (numeric options).",
         (_ex(_L, "征收率减按2.0%", "2%", "label-rates"),),),
    Rule("choice.letter-in-last-sentence", (_L,), 6, "low",
         "No statement: the only letter the last sentence affirms.",
         (_ex(_L, "有形动产租赁适用13%。不动产租赁适用9%。我倾向于C", "信息技术服务"),),),
    Rule("letters.last-group", (_M,), 6, "low",
         "No statement: the latest group of option letters on a line, not ruled out.",
         (_ex(_M, "交通运输服务、不动产租赁服务、建筑服务适用9%，对应 A、B、D", "ABD"),),),
    Rule("letters.named-by-text", (_M,), 6, "low",
         "No letter at all: the options named by their texts alone.",
         (_ex(_M, "交通运输服务、不动产租赁服务、建筑服务", "ABD"),),),
    Rule("number.says-zero", (_N,), 6, "high",
         "The last sentence says there is nothing to pay ('无需缴纳', '不需要缴纳').",
         (_ex(_N, "本月无需缴纳增值税", "0"),),),
    Rule("number.sole-number", (_N,), 6, "high",
         "No statement, but the output holds one number and only one ('44000', '应纳税额44000元。').",
         (_ex(_N, "44000", "44000"), _ex(_N, "**44000元**", "44000"), _ex(_N, "应纳增值税44000元。", "44000")),
         (_ex(_N, "104000-60000=44000", "44000"),)),
    Rule("number.last-number", (_N,), 6, "low",
         "No statement: the last number of the output, outside notes, bracketed formulas and suppositions.",
         (_ex(_N, "800000×13%=104000\n104000-60000=44000", "44000"),),),
    Rule("span.answer-statement", (_S,), 2, "high",
         "The first clause of an answer statement (答案/结论/综上).",
         (_ex(_S, "答案：万分之五。根据征管法第三十二条。", "万分之五"),),),
    Rule("span.marked", (_S,), 3, "high",
         "A bold, quoted or titled span of the output's first clause.",
         (_ex(_S, "比例为**万分之五**，从滞纳之日起按日计算", "万分之五"),),),
    Rule("span.bare-answer", (_S,), 3, "high",
         "No statement and nothing marked, but the output is one short sentence: the answer itself.",
         (_ex(_S, "万分之五", "万分之五"), _ex(_S, "按日加收万分之五。", "按日加收万分之五。")),),
    Rule("span.whole-output", (_S,), 6, "low",
         "No statement and nothing marked: the output itself (matched as a phrase).",
         (_ex(_S, "滞纳金的比例，根据征管法的规定，是从滞纳税款之日起按日加收滞纳税款的万分之五。这一比例自2001年起执行。",
               "滞纳金的比例，根据征管法的规定，是从滞纳税款之日起按日加收滞纳税款的万分之五。这一比例自2001年起执行。"),),),
    Rule("fields.json", (_F,), 1, "high",
         "The fields of a JSON object in the output (the largest one).",
         (_ex(_F, '{"违法性质": "偷税", "少缴税款": 260000}', '{"违法性质": "偷税", "少缴税款": 260000}'),),),
    Rule("fields.lines", (_F,), 3, "high",
         "Fields written as '字段：值' lines, headings or a Markdown table.",
         (_ex(_F, "违法性质：偷税\n少缴税款：260000", '{"违法性质": "偷税", "少缴税款": "260000"}'),),),
    Rule("text.whole-output", ("text",), 6, "high",
         "Generation tasks: the cleaned output is the answer (BERTScore and BARTScore read it whole).",
         (_ex("text", "小规模纳税人的增值税征收率为3%。", None),),),
    # ------------------------------------------------------------------ TaxBen's rules (chain set "taxben")
    # TaxBen's process_results (Yating-Chen/TaxBen, TaxBen/src/tasks/TaxBen.py, commit 80c9f1c),
    # flaws included: the rule ids are those of taxpraben.parsing.taxben. They read the RAW output.
    Rule("taxben.choice-substring", (_L,), 6, "high",
         "TaxBen C2-C4 (L63-75): the first choice, in list order, whose lower-cased text is a substring of the "
         "stripped, lower-cased raw output; its label is that choice lower-cased, compared with the gold choice "
         "lower-cased (C1, C5). The list order decides, not the output: a choice named in passing wins.",
         (_ex(_L, "答案：C. 信息技术服务", "信息技术服务"),
          # the first choice in list order that occurs anywhere, not the answer given
          _ex(_L, "信息技术服务适用6%，不动产租赁服务适用9%，故选C", "不动产租赁服务")),
         (_ex(_L, "答案：C", None),), comparison="taxben"),
    Rule("taxben.letter-run", (_M,), 6, "high",
         "TaxBen M1-M2 (L322-324): the first run of two to five option letters A-E (anything but word "
         "characters between them) in the raw output; the answer is its letters in output order, duplicates "
         "kept, compared as a string with the gold as written (M3).",
         (_ex(_M, "答案：ABD", "ABD"), _ex(_M, "本题选择ABD。A项正确", "ABDA")),
         (_ex(_M, "答案：A", None), _ex(_M, "A和D", None)), comparison="taxben"),
    Rule("taxben.whole-output-float", (_N,), 6, "high",
         "TaxBen K2 (L405-410): the whole raw output is a float to Python (spaces around it, 1e4, 1_000): "
         "the answer is '{:.2f}' of it rounded to 2 places, compared as a string with the gold's '{:.2f}' (K1, K5).",
         (_ex(_N, " 44000 ", "44000.00"), _ex(_N, "4.4e4", "44000.00")),
         (_ex(_N, "44000元", "44000.00"),), comparison="taxben"),
    Rule("taxben.yuan-amount", (_N,), 6, "high",
         "TaxBen K3-K5 (L412-458), our number reader standing in for its GPT-3.5 call: in the number "
         "expression the reader finds, the number before 万元/元 (unscaled), else the number after 百分之; "
         "'{:.2f}' of it. None there is TaxBen's '未知', a format failure.",
         (_ex(_N, "应纳税额=104000-60000=44000元", "44000.00"),
          # 万 is not scaled: TaxBen reads 4.4万元 as 4.40
          _ex(_N, "答案：4.4万元", "4.40")),
         (_ex(_N, "应纳税额为44000", None),), comparison="taxben"),
    Rule("taxben.gold-substring", (_S,), 6, "high",
         "TaxBen R1 (L531): the gold, as written, occurs in the raw output (case-sensitive, any length): "
         "the answer is the gold, right.",
         (_ex(_S, "<think>看材料</think>按日加收滞纳税款万分之五的滞纳金", "万分之五"),),
         (_ex(_S, "按日加收千分之五", None),), comparison="taxben"),
    Rule("taxben.gold-absent", (_S,), 6, "high",
         "TaxBen R1 (L531): a raw output that holds something but not the gold is read whole, and wrong "
         "(no answer extracted; not a format failure).",
         (_ex(_S, "按日加收千分之五", None),),
         (_ex(_S, "万分之五", "万分之五"),), comparison="taxben"),
    Rule("taxben.raw-output", ("text",), 6, "high",
         "TaxBen's generation tasks (L177-184): the raw output, unchanged (no <think> block removed, no "
         "character folded), is what BERTScore and BARTScore read.",
         (_ex("text", "<think>想一想</think>小规模纳税人的增值税征收率为3%。", None),), comparison="taxben"),
    # ------------------------------------------------------------------ vetoes last
    Rule("veto.several-answers", (_L, _M, _N), 7, "high",
         "Different answers in strong statements with no correction between, answer lines that differ, or "
         "two different values boxed on the last line that boxes one.",
         (_ex(_L, "答案：B\n\n答案：C", None), _ex(_L, "不动产租赁服务\n信息技术服务", None),
          _ex(_N, "应纳税额可能是 $\\boxed{44000}$ 或 $\\boxed{104000}$", None)),
         (_ex(_N, "先算销项 $\\boxed{104000}$\n最终应纳税额 $\\boxed{44000}$", "44000"),)),
    Rule("veto.several-letters", (_L,), 5, "high",
         "Several different option letters and nothing else for a question of one answer ('A, B, C, D', "
         "'C,D', 'B,D' then an explanation): several answers, not the first.",
         (_ex(_L, "A, B, C, D", None), _ex(_L, "C,D", None), _ex(_L, "B,D\n解析：B项不动产租赁适用9%", None)),
         (_ex(_L, "C. 信息技术服务", "信息技术服务"), _ex(_L, "(C)", "信息技术服务"))),
    Rule("veto.alternatives", (_N,), 7, "high",
         "The number read is one of alternatives the output offers ('可能为X，也可能为Y').",
         (_ex(_N, "应纳税额可能为44000元，也可能为104000元", None),),),
    Rule("veto.none-correct", (_L,), 7, "high",
         "The output says that no option is correct.",
         (_ex(_L, "以上选项都不正确", None),),),
    Rule("veto.not-an-option", (_L,), 7, "high",
         "The model boxed an answer that is none of the options.",
         (_ex(_L, "$\\boxed{13\\%}$", None),),),
    Rule("veto.declines", (_N,), 7, "high",
         "The output says the amount cannot be computed.",
         (_ex(_N, "题目条件不足，无法计算应纳税额。", None),),),
    Rule("veto.not-asserted", (_L,), 7, "high",
         "Options are discussed, but none is asserted as the answer.",
         (_ex(_L, "本题考查增值税税率，信息技术服务和建筑服务的税率不同，不能确定", None),),),
    Rule("veto.refusal", (_S,), 7, "high",
         "The output refuses or says it cannot answer.",
         (_ex(_S, "抱歉，我无法回答这个问题。", None),),),
    Rule("veto.no-field", (_F,), 7, "high",
         "The output parses into fields (a JSON object, key lines) but holds none of the task's.",
         (_ex(_F, '{"结论": "存在问题", "建议": "补缴"}', None),),
         (_ex(_F, '{"违法性质": "偷税"}', '{"违法性质": "偷税"}'),)),
    Rule("veto.no-answer", (_L, _M, _N, _S, _F), 7, "high",
         "Nothing that any rule reads: no answer found.",
         (_ex(_L, "这道题考查增值税税率。", None), _ex(_N, "这道题考查增值税。", None),
          _ex(_F, "该公司存在违法行为。", None)),),
)

#: The order in which each kind's reader tries the rules: the reader runs it
#: (:mod:`taxpraben.parsing.chain`).
CHAINS: dict[str, tuple[str, ...]] = {
    "label": ("veto.copy-of-prompt", "veto.another-question", "json.answer-field", "veto.hedge",
              "veto.none-correct", "final.self-correction", "final.answer-statement", "final.boxed",
              "veto.several-answers", "veto.not-an-option", "choice.bare-answer", "choice.bold-answer",
              "conclusion.statement", "veto.several-letters", "choice.lead-sentence", "choice.named-in-last-sentence",
              "choice.value-in-last-sentence", "choice.letter-in-last-sentence", "veto.not-asserted",
              "veto.no-answer"),
    "letters": ("veto.copy-of-prompt", "veto.another-question", "veto.hedge", "json.answer-field",
                "final.self-correction", "final.answer-statement", "final.boxed", "veto.several-answers",
                "letters.all-or-all-but", "letters.all-options-concluded", "letters.option-verdicts",
                "conclusion.statement", "letters.restated-option-lines", "letters.lead-sentence",
                "letters.last-group", "letters.named-by-text", "veto.no-answer"),
    "number": ("veto.copy-of-prompt", "veto.another-question", "json.answer-field", "veto.several-answers",
               "final.self-correction",
               "final.answer-statement", "final.boxed", "veto.declines",
               "conclusion.statement", "number.says-zero", "veto.alternatives", "number.sole-number", "number.last-number", "veto.no-answer"),
    "span": ("veto.copy-of-prompt", "veto.another-question", "json.answer-field", "span.answer-statement",
             "span.marked", "veto.refusal", "span.bare-answer", "span.whole-output", "veto.no-answer"),
    "fields": ("veto.copy-of-prompt", "fields.json", "fields.lines", "veto.no-field", "veto.no-answer"),
    "text": ("text.whole-output", "veto.no-answer"),
}

#: TaxBen's chains (``--profile taxben``, or a spec's ``reading: {chain: taxben}``): its rules
#: on the raw output. Kinds TaxBen never had read by this project's rules, the fields without
#: the copy veto (TaxBen would credit a copy of the prompt's JSON template).
TAXBEN_CHAINS: dict[str, tuple[str, ...]] = {
    "label": ("taxben.choice-substring", "veto.no-answer"),
    "letters": ("taxben.letter-run", "veto.no-answer"),
    "number": ("taxben.whole-output-float", "taxben.yuan-amount", "veto.no-answer"),
    "span": ("taxben.gold-substring", "taxben.gold-absent", "veto.no-answer"),
    "fields": ("fields.json", "fields.lines", "veto.no-field", "veto.no-answer"),
    "text": ("taxben.raw-output", "veto.no-answer"),
}

#: The name of the default chain set.
DEFAULT_CHAIN = "taxpraben"
#: The named chain sets: a chain per reading kind each. A spec's ``reading.chain`` may name one.
NAMED_CHAINS: dict[str, dict[str, tuple[str, ...]]] = {DEFAULT_CHAIN: CHAINS, "taxben": TAXBEN_CHAINS}

_BY_NAME = {rule.name: rule for rule in RULES}


def chain_names(chain: str | tuple[str, ...] | None, kind: str) -> tuple[str, ...]:
    """The rule names of the ``kind`` reader's chain: ``chain`` itself (rule names), the
    ``kind`` chain of the chain set it names, or of the default set (None). KeyError for an
    unknown set name (specs are checked when loaded)."""
    if chain is None or isinstance(chain, str):
        return NAMED_CHAINS[chain or DEFAULT_CHAIN][kind]
    return chain


@lru_cache(maxsize=256)
def chain_comparison(names: tuple[str, ...]) -> Comparison:
    """How the readings of the chain ``names`` compare with the gold: its reading rules'
    comparison (``taxpraben`` when it has none). ValueError for a chain whose reading rules
    compare differently."""
    found = {rule.comparison for name in names if (rule := rule_named(name)) is not None and not rule.veto}
    if len(found) > 1:
        raise ValueError(f"its reading rules compare with the gold in different ways ({', '.join(sorted(found))}): "
                         "TaxBen's rules (taxben.*) and this project's cannot share a chain")
    return found.pop() if found else "taxpraben"


def rule_named(name: str) -> Rule | None:
    """The rule of that name (``"rule:"`` prefix allowed), or None."""
    return _BY_NAME.get(name.removeprefix("rule:"))


def confidence_of(name: str | None) -> Confidence | None:
    """A rule's confidence (None for no rule or an unknown one)."""
    rule = rule_named(name) if name else None
    return rule.confidence if rule is not None else None
