"""``--profile taxben`` against TaxBen's own ``process_results``, restated rule by rule (issue 10, item 8).

The reference below restates Yating-Chen/TaxBen, ``TaxBen/src/tasks/TaxBen.py`` (branch master,
commit 80c9f1c) in plain Python; each line cites the line of that file it follows. It works on
TaxBen's inputs (a ``doc`` dict and ``results = [raw output]``) and is written apart from
:mod:`taxpraben.parsing.readers.taxben`. Where TaxBen calls GPT-3.5 (TaxBen.py:424-436) the reference
calls :func:`gpt_stand_in`, the documented stand-in of the profile (our number reader), because
GPT-3.5 cannot run in a test; everything TaxBen does with GPT's reply is restated.

A seeded generator writes realistic outputs for every TaxBen task (verbose Chinese answers,
``\\boxed{}``, ``<think>`` blocks, full-width and zero-width characters, case changes, repeated
letters, 万元/元 amounts, thousands separators, negative zero, 2.675-style rounding edges, golds
``float()`` cannot read), and the profile must agree with the reference on every one: through
``prepare_item(..., profile="taxben")`` and through the pure functions.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from taxpraben.metrics.classification import classification_metrics
from taxpraben.parsing.readers import taxben
from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.records import Record
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)

# ------------------------------------------------------------------ the reference (TaxBen's code)


def ref_classification(doc: dict[str, Any], results: list[str]) -> tuple[float, str, str]:
    """Classification.process_results (TaxBen.py:59-89), LOWER_CASE = True (TaxBen.py:18).

    Returns (acc, result, gold): TaxBen's "f1" item is (result, gold) (TaxBen.py:82).
    """
    gold = doc["choices"][doc["gold"]]  # TaxBen.py:60
    gold = gold.lower()  # TaxBen.py:61-62
    ini_result = results[0].strip()  # TaxBen.py:63
    ini_result = ini_result.lower()  # TaxBen.py:64-65
    result = None  # TaxBen.py:67
    for choice in doc["choices"]:  # TaxBen.py:68
        choice = choice.lower()  # TaxBen.py:69-70
        if choice in ini_result:  # TaxBen.py:71
            result = choice  # TaxBen.py:72
            break  # TaxBen.py:73
    if result is None:  # TaxBen.py:74
        result = "missing"  # TaxBen.py:75
    acc = 1.0 if gold == result else 0.0  # TaxBen.py:77
    return acc, result, gold


def ref_weighted_f1(items: list[tuple[str, str]]) -> float:
    """Classification.weighted_f1 (TaxBen.py:102-108); items are (result, gold)."""
    preds, golds = zip(*items, strict=True)  # TaxBen.py:103
    labels = list(set(golds))  # TaxBen.py:104
    return float(f1_score(np.array(golds), np.array(preds), average="weighted", labels=labels))  # TaxBen.py:105-107


def ref_macro_f1(items: list[tuple[str, str]]) -> float:
    """Classification.macro_f1 (TaxBen.py:110-116)."""
    preds, golds = zip(*items, strict=True)  # TaxBen.py:111
    labels = list(set(golds))  # TaxBen.py:112
    return float(f1_score(np.array(golds), np.array(preds), average="macro", labels=labels))  # TaxBen.py:113-115


def ref_mcq(doc: dict[str, Any], results: list[str]) -> float:
    """MatchAnswer.process_results (TaxBen.py:319-330)."""
    gold = doc["answer"]  # TaxBen.py:320
    match = re.findall(r"[ABCDE](?:\W*[ABCDE]){1,4}", results[0])  # TaxBen.py:322
    pres = re.sub(r"[^A-Z]", "", match[0]) if match else "null"  # TaxBen.py:324
    return 1.0 if pres == gold else 0.0  # TaxBen.py:326


def gpt_stand_in(output: str) -> str:
    """What the profile puts where TaxBen asks GPT-3.5 (TaxBen.py:424-434): our number reader's
    expression as written, or "未知" (what TaxBen's prompt, TaxBen.py:420, asks for when there
    is no answer)."""
    found = extract_final_number(output)
    return "未知" if found is None else found.text


def ref_calc(doc: dict[str, Any], results: list[str]) -> float:
    """ComputeAnswer.process_results (TaxBen.py:389-469)."""
    try:
        gold = float(doc["answer"])  # TaxBen.py:392
        formatted_gold = f"{gold:.2f}"  # TaxBen.py:393
    except ValueError:  # TaxBen.py:394
        return 0.0  # TaxBen.py:396
    try:
        pres = round(float(results[0]), 2)  # TaxBen.py:407
        formatted_pres = f"{pres:.2f}"  # TaxBen.py:408
        return 1.0 if formatted_pres == formatted_gold else 0.0  # TaxBen.py:409-410
    except Exception:  # TaxBen.py:412
        pass
    re.search(r"问题为：(.+)", doc["query"]).group(1)  # type: ignore[union-attr]  # TaxBen.py:415 (crashes without it)
    answer = gpt_stand_in(results[0]).strip()  # TaxBen.py:427-436
    extracted_number = None  # TaxBen.py:441
    match_wan_yuan = re.search(r"([-+]?\d*\.?\d+)\s?(?=万元|元)", answer)  # TaxBen.py:444
    match_percent = re.search(r"(?<=百分之)\d*\.?\d+", answer)  # TaxBen.py:446
    if match_wan_yuan:  # TaxBen.py:448
        extracted_number = match_wan_yuan.group(1)  # TaxBen.py:449
    elif match_percent:  # TaxBen.py:450
        extracted_number = match_percent.group(0)  # TaxBen.py:451
    else:
        formatted_pres = "未知"  # TaxBen.py:452-454
    if extracted_number is not None:  # TaxBen.py:456
        pres = float(extracted_number)  # TaxBen.py:457
        formatted_pres = f"{pres:.2f}"  # TaxBen.py:458
    return 1.0 if formatted_pres == formatted_gold else 0.0  # TaxBen.py:463


def ref_read(doc: dict[str, Any], results: list[str]) -> float:
    """ReadComprehens.process_results (TaxBen.py:528-535)."""
    gold = doc["answer"]  # TaxBen.py:529
    return 1.0 if gold in results[0] else 0.0  # TaxBen.py:531


# ------------------------------------------------------------------ the generator

TOPICS = ["增值税", "企业所得税", "个人所得税", "消费税", "土地增值税", "印花税", "所得税", "关税", "VAT", "Stamp Duty"]
CRIMES = ["逃税罪", "抗税罪", "逃避追缴欠税罪", "骗取出口退税罪", "虚开增值税专用发票罪", "虚开发票罪"]
SCQ_TEXT = [
    ["有形动产租赁服务", "不动产租赁服务", "信息技术服务", "建筑服务"],
    ["42000元", "60000元", "72000元", "96000元"],
    ["年度利润总额的12%", "年度利润总额的10%", "应纳税所得额的12%", "Box 3"],
]
LETTERS = ["A", "B", "C", "D"]
NOISE = ["\u200b", "\u200c", "\u200d", "\ufeff", "\u3000", " "]
READ_GOLDS = ["三十日", "主管税务机关", "12000元", "B类企业", "Withholding Agent", "小规模纳税人", "十五日内", "0.13", " 三十日 "]


def fullwidth(text: str) -> str:
    """ASCII letters, digits and punctuation as their full-width forms (U+FF01-U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def sprinkle(rng: random.Random, text: str) -> str:
    """Insert a zero-width or wide space character somewhere in ``text``."""
    at = rng.randint(0, len(text))
    return text[:at] + rng.choice(NOISE) + text[at:]


def recase(rng: random.Random, text: str) -> str:
    return rng.choice([str.upper, str.lower, str.swapcase, str.title, str])(text)


def vary(rng: random.Random, text: str) -> str:
    """One of the surface changes TaxBen does not undo (and our default profile does)."""
    kind = rng.randrange(6)
    if kind == 0:
        return fullwidth(text)
    if kind == 1:
        return sprinkle(rng, text)
    if kind == 2:
        return recase(rng, text)
    return text


def think(rng: random.Random, inner: str) -> str:
    return rng.choice([f"<think>先分析：{inner}可能不对。</think>\n", f"<think>{inner}</think>", "<think>\n嗯，", ""])


@dataclass(frozen=True)
class Case:
    task: str
    doc: dict[str, Any]
    output: str


def classification_case(rng: random.Random, task: str) -> Case:
    if task == "TaxTopic":
        choices = rng.sample(TOPICS, rng.randint(4, 6))
        if rng.random() < 0.2:  # a label with stray spaces, as data files have
            at = rng.randrange(len(choices))
            choices[at] = rng.choice([" ", ""]) + choices[at] + rng.choice([" ", ""])
    elif task == "TaxCrime":
        choices = rng.sample(CRIMES, rng.randint(3, 6))
    else:
        choices = list(rng.choice([*SCQ_TEXT, LETTERS, [c.lower() for c in LETTERS]]))
    gold = rng.randrange(len(choices))
    target = choices[gold] if rng.random() < 0.75 else rng.choice(choices)
    other = rng.choice(choices)
    letter = "ABCD"[choices.index(target)] if len(choices) <= 4 else "A"
    shown = vary(rng, target)
    output = rng.choice(
        [
            shown,
            f"答案：{shown}",
            f"该问题属于{shown}。",
            f"根据题意，{other}并不适用，本题应选{shown}。",
            f"不属于{other}，属于{shown}",
            f"\\boxed{{{letter}}}",
            f"答案：{letter}",
            f"{recase(rng, letter)}. {shown}",
            f"{think(rng, other)}答案：{shown}",
            f"  {shown}\n",
            "我无法判断。",
            "",
            f"**{shown}**",
            f"The answer is {letter}",
            f"{other}{shown}",
        ]
    )
    query = "以下是中国税法考试中的单项选择题，请选出唯一正确的选项。答案："
    return Case(task, {"query": query, "choices": choices, "gold": gold, "answer": choices[gold]}, output)


def mcq_case(rng: random.Random) -> Case:
    gold = "".join(sorted(rng.sample("ABCDE", rng.choice([1, 2, 2, 3, 3, 4, 5]))))
    said = gold if rng.random() < 0.7 else "".join(sorted(rng.sample("ABCDE", rng.randint(1, 4))))
    sep = rng.choice(["", "、", ",", "，", " ", "和", "\u200b", "、 ", " and "])
    joined = sep.join(said)
    output = rng.choice(
        [
            said,
            f"答案：{joined}",
            f"本题选择{said}。{said[0]}项正确，{said[-1]}项也正确。",
            f"{think(rng, 'AB')}答案：{joined}",
            f"\\boxed{{{said}}}",
            f"正确选项为{joined}。",
            fullwidth(said),
            said.lower(),
            said[::-1],
            said[0] + said,
            f"CASE: {said}",
            f"The answer is {joined}.",
            f"选项{said[0]}错误，正确答案是{joined}",
            f"{joined}{joined}",
            sprinkle(rng, said),
            "我不确定。",
        ]
    )
    return Case("TaxMCQ", {"query": "以下是多项选择题。答案：", "answer": gold}, output)


def amount(rng: random.Random) -> float:
    return rng.choice(
        [
            round(rng.uniform(0, 2_000_000), 2),
            float(rng.randrange(0, 500_000, 100)),
            rng.choice([2.675, 1.005, 0.125, 2.665, 1234.565, 0.0, -0.0, 0.001, -0.004, 13.0]),
        ]
    )


def calc_gold(rng: random.Random, value: float) -> Any:
    return rng.choice(
        [
            value,
            f"{value:.2f}",
            str(value),
            int(value) if value.is_integer() else value,
            f"{value / 10000:g}万",  # float() cannot read it
            f"{value:,.2f}",  # nor this once it has a comma
            f"{value:.2f}元",  # nor this
            "-0",
            " 12.00 ",
        ]
    )


def calc_output(rng: random.Random, value: float) -> str:
    v2 = f"{value:.2f}"
    wan = f"{value / 10000:g}"
    pct = f"{rng.choice([3, 6, 9, 13, 20, 25])}"
    return rng.choice(
        [
            v2,
            str(value),
            f" {v2} \n",
            f"{value:.3f}",
            f"{value + rng.choice([0.004, 0.005, 0.006]):.3f}",  # a third decimal to round
            f"应纳税额为{v2}元。",
            f"应纳税额为{wan}万元",
            f"应缴纳{v2}万元",  # TaxBen keeps 10000.00 for "10000.00万元"
            f"共计{v2} 万元。",
            f"{value:,.2f}",
            f"应缴纳增值税{value:,.2f}元",
            f"\\boxed{{{v2}}}",
            f"{think(rng, '销项税额=100×13%=13元')}{v2}",
            f"{think(rng, '先算')}答案：{v2}元",
            fullwidth(v2),
            sprinkle(rng, v2),
            f"{value:e}",
            f"{value:_.2f}",
            "-0",
            "-0.00",
            "2.675",
            "nan",
            "inf",
            f"税率为百分之{pct}",
            f"税率为{pct}%",
            f"约为{v2} 元",
            f"负{v2}元",
            f"\u2212{v2}",
            f"{v2}元",
            f"计算过程：{v2}×13%={v2}元，合计{v2}元",
            "无法计算。",
            f"应纳税额={v2}-0={v2}",
            f'{{"答案": {v2}}}',
            f'{{"答案": "{v2}元"}}',
        ]
    )


def calc_case(rng: random.Random) -> Case:
    value = amount(rng)
    shown = value if rng.random() < 0.7 else amount(rng)
    query = "请根据以下资料计算。问题为：该公司应缴纳增值税多少元？答案："
    return Case("TaxCalc", {"query": query, "answer": calc_gold(rng, value)}, calc_output(rng, shown))


def read_case(rng: random.Random) -> Case:
    gold = rng.choice(READ_GOLDS)
    said = gold if rng.random() < 0.7 else rng.choice(READ_GOLDS)
    shown = vary(rng, said)
    output = rng.choice(
        [
            shown,
            f"答案：{shown}",
            f"根据材料，{shown}。依据如上所述。",
            f"{think(rng, said)}答：{shown}",
            f"答案：{shown.strip()}",
            f'{{"答案": "{shown}"}}',
            "材料中没有提到。",
        ]
    )
    return Case("TaxRead", {"query": "阅读材料并回答。答案：", "answer": gold}, output)


def generate(n_per_task: int, seed: int = 20260) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []
    for _ in range(n_per_task):
        cases.extend(classification_case(rng, task) for task in ("TaxTopic", "TaxSCQ", "TaxCrime"))
        cases += [mcq_case(rng), calc_case(rng), read_case(rng)]
    return cases


CASES = generate(300)  # 1,800 outputs, 300 per task


def reference_acc(case: Case) -> float:
    results = [case.output]
    if case.task == "TaxMCQ":
        return ref_mcq(case.doc, results)
    if case.task == "TaxCalc":
        return ref_calc(case.doc, results)
    if case.task == "TaxRead":
        return ref_read(case.doc, results)
    return ref_classification(case.doc, results)[0]


def record_of(case: Case, i: int) -> Record:
    doc = case.doc
    choices = tuple(doc["choices"]) if "choices" in doc else None
    return Record(case.task, str(i), doc["query"], doc["answer"], choices=choices, gold=doc.get("gold"))


def profile_score(case: Case, i: int) -> float:
    item = prepare_item(REGISTRY[case.task], record_of(case, i), 0, case.output, None, profile="taxben")
    return item.scores["acc" if "acc" in item.scores else "em"]


# ------------------------------------------------------------------ tests


def test_the_generator_is_large_varied_and_not_trivial() -> None:
    assert len(CASES) >= 1000
    per_task = Counter(c.task for c in CASES)
    assert set(per_task) == {"TaxTopic", "TaxSCQ", "TaxCrime", "TaxMCQ", "TaxCalc", "TaxRead"}
    # both outcomes occur often in every task, so agreement is not agreement on constants
    for task in per_task:
        accs = [reference_acc(c) for c in CASES if c.task == task]
        assert 0.1 < sum(accs) / len(accs) < 0.9, task
    outputs = "".join(c.output for c in CASES)
    for feature in ("<think>", "\\boxed{", "\u200b", "万元", "Ａ", "１", "-0", "2.675", "百分之"):
        assert feature in outputs, feature
    assert any(taxben.calc_gold(c.doc["answer"]) is None for c in CASES if c.task == "TaxCalc")


def test_prepare_item_agrees_with_taxben_on_every_generated_output() -> None:
    disagreements = [
        (c.task, c.output, c.doc["answer"], reference_acc(c), profile_score(c, i))
        for i, c in enumerate(CASES)
        if profile_score(c, i) != reference_acc(c)
    ]
    assert disagreements == []


def test_pure_functions_agree_with_taxben_on_every_generated_output() -> None:
    for case in CASES:
        doc, out = case.doc, case.output
        if case.task == "TaxMCQ":
            got = taxben.mcq_correct(out, doc["answer"])
        elif case.task == "TaxCalc":
            got = taxben.calc_correct(out, doc["answer"])
        elif case.task == "TaxRead":
            got = taxben.read_correct(out, doc["answer"])
        else:
            _, result, gold = ref_classification(doc, [out])
            label = taxben.classification_label(out, doc["choices"])
            label = "missing" if label is None else label  # TaxBen.py:74-75
            assert (label, taxben.classification_gold(doc["answer"])) == (result, gold), out
            got = label == taxben.classification_gold(doc["answer"])
        assert float(got) == reference_acc(case), (case.task, out, doc["answer"])


def test_classification_labels_and_f1_are_taxbens() -> None:
    """The labels prepare_item hands to the metrics are TaxBen's (lower-cased, "missing"), and
    our ACC / weighted F1 / Macro-F1 over them equal TaxBen's aggregation (TaxBen.py:102-116)."""
    for task in ("TaxTopic", "TaxSCQ", "TaxCrime"):
        golds, preds, ref_items, accs = [], [], [], []
        for i, case in enumerate(CASES):
            if case.task != task:
                continue
            item = prepare_item(REGISTRY[task], record_of(case, i), 0, case.output, None, profile="taxben")
            acc, result, gold = ref_classification(case.doc, [case.output])
            assert (item.label_pred, item.label_gold) == (result, gold)
            golds.append(item.label_gold)
            preds.append(item.label_pred)
            ref_items.append((result, gold))
            accs.append(acc)
        ours = classification_metrics(golds, preds)
        assert ours["acc"] == pytest.approx(sum(accs) / len(accs), abs=1e-12)
        assert ours["f1"] == pytest.approx(ref_weighted_f1(ref_items), abs=1e-12)
        assert ours["macro_f1"] == pytest.approx(ref_macro_f1(ref_items), abs=1e-12)
        assert ours["missing_rate"] == pytest.approx(sum(r == "missing" for r, _ in ref_items) / len(ref_items))


FRAGMENTS = [
    "A", "B", "C", "D", "E", "a", "b", "Ａ", "、", "，", ",", " ", "\u200b", "和", "。", "答案：", "选",
    "<think>", "</think>", "\\boxed{", "}", "1", "2", "0", ".", "-", "+", "e", "_", "万元", "元", "万",
    "百分之", "%", "１", "nan", "增值税", "所得税", "企业", "VAT", "vat", "\n", "逃税罪", "问题为：",
]  # fmt: skip
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.sampled_from(["增值税", "企业所得税", "所得税", "VAT", "vat", "B", "b", "", "逃税罪", " 增值税", "b "]), min_size=1, max_size=5), st.data())
def test_classification_agrees_on_arbitrary_text(text: str, choices: list[str], data: st.DataObject) -> None:
    gold = data.draw(st.integers(0, len(choices) - 1))
    _, result, gold_label = ref_classification({"choices": choices, "gold": gold}, [text])
    label = taxben.classification_label(text, choices)
    label = "missing" if label is None else label  # TaxBen.py:74-75
    assert (label, taxben.classification_gold(choices[gold])) == (result, gold_label)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(["AB", "ACD", "A", "ABCDE", "DA", "null", "acd"]))
def test_mcq_agrees_on_arbitrary_text(text: str, gold: str) -> None:
    assert float(taxben.mcq_correct(text, gold)) == ref_mcq({"answer": gold}, [text])


@settings(max_examples=300, deadline=None)
@given(texts, st.one_of(st.sampled_from(["1.00", "0", "-0", "12", "10000", "1.2万", "nan", "1e2"]), st.floats(allow_nan=False, width=32)))
def test_calc_agrees_on_arbitrary_text(text: str, gold: Any) -> None:
    doc = {"query": "问题为：应纳税额是多少？", "answer": gold}
    assert float(taxben.calc_correct(text, gold)) == ref_calc(doc, [text])


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_read_agrees_on_arbitrary_text(text: str, gold: str) -> None:
    assert float(taxben.read_correct(text, gold)) == ref_read({"answer": gold}, [text])


# --- the rules one by one, each with the example the README gives -------------------------------


@pytest.mark.parametrize(
    ("output", "choices", "expected"),
    [
        ("个人所得税与增值税", ["增值税", "个人所得税"], "增值税"),  # list order, not text order
        ("企业所得税", ["所得税", "企业所得税"], "所得税"),  # the substring flaw
        ("\\boxed{D}", ["A", "B", "C", "D"], "b"),  # "boxed" contains "b"
        ("答案：vat", ["VAT", "印花税"], "vat"),  # lower-cased on both sides
        ("<think>增值税</think>消费税", ["增值税", "消费税"], "增值税"),  # reasoning is read
        ("Ｂ", ["A", "B"], None),  # full-width is not folded
        ("增\u200b值税", ["增值税"], None),  # zero-width is not removed
        ("随便什么", ["", "增值税"], ""),  # an empty choice matches everything
        ("", ["增值税"], None),
    ],
)
def test_classification_rule(output: str, choices: list[str], expected: str | None) -> None:
    assert taxben.classification_label(output, choices) == expected


@pytest.mark.parametrize(
    ("output", "letters"),
    [
        ("本题选择ACD。A项正确", "ACDA"),  # output order, duplicates kept
        ("答案：A", None),  # one letter never matches
        ("A和D", None),  # Chinese characters are word characters
        ("A\u200bC", "AC"),  # zero-width is not a word character
        ("ＡＣ", None),  # full-width letters are no letters
        ("CASE: B", "CA"),  # capitals in English words
        ("D、A", "DA"),
        ("ABCDEABCDE", "ABCDE"),  # at most five
        ("<think>AB</think>答案：CD", "AB"),
    ],
)
def test_mcq_rule(output: str, letters: str | None) -> None:
    assert taxben.mcq_letters(output) == letters


def test_mcq_compares_strings() -> None:
    assert taxben.mcq_correct("答案：ACD", "ACD")
    assert not taxben.mcq_correct("答案：DCA", "ACD")  # same set, other order
    assert not taxben.mcq_correct("答案：A", "A")  # a one-letter gold is never right
    assert not taxben.mcq_correct("答案：acd", "ACD")


@pytest.mark.parametrize(
    ("output", "answer"),
    [
        ("13000", "13000.00"),
        (" 13000.5\n", "13000.50"),
        ("2.675", "2.67"),  # binary float rounding
        ("-0", "-0.00"),
        ("-0.004", "-0.00"),
        ("1e4", "10000.00"),
        ("1_000", "1000.00"),
        ("１２", "12.00"),  # float() reads full-width digits
        ("nan", "nan"),
        ("应纳税额为1.2万元", "1.20"),  # the number before 万元, unscaled
        ("应缴纳13,000.00元", "0.00"),  # the regex starts after the comma
        ("应纳税额为13000", taxben.UNKNOWN),  # no 元: nothing to keep
        ("税率为12%", taxben.UNKNOWN),
        ("税率为百分之十二", taxben.UNKNOWN),  # Arabic digits only
        ("答案：负300元", "300.00"),  # 负 is not a sign
        ("<think>先算</think>13000元", "13000.00"),
        ("无法计算。", taxben.UNKNOWN),
    ],
)
def test_calc_rule(output: str, answer: str) -> None:
    assert taxben.calc_answer(output) == answer


def test_calc_post_processing_of_the_extracted_answer() -> None:
    assert taxben.calc_from_reader_answer("10.00万元") == "10.00"
    assert taxben.calc_from_reader_answer("-5 元") == "-5.00"
    assert taxben.calc_from_reader_answer("百分之13") == "13.00"
    assert taxben.calc_from_reader_answer("13%") == taxben.UNKNOWN
    assert taxben.calc_reader_answer("应纳税额为1.2万元。") == "1.2万元"
    assert taxben.calc_reader_answer("没有数字") == taxben.UNKNOWN


@pytest.mark.parametrize(
    ("answer", "gold"),
    [(104000.0, "104000.00"), ("104000", "104000.00"), (" 12 ", "12.00"), ("-0", "-0.00"), (0, "0.00"),
     ("1.2万", None), ("12,000", None), ("104000元", None), (None, None), ({"a": 1}, None), (10**400, None)],
)  # fmt: skip
def test_calc_gold(answer: Any, gold: str | None) -> None:
    assert taxben.calc_gold(answer) == gold


def test_calc_gold_float_cannot_read_scores_zero() -> None:
    assert not taxben.calc_correct("12000", "1.2万")
    assert not taxben.calc_correct("-0", 0)  # "-0.00" != "0.00"
    assert taxben.calc_correct("0", 0)


@pytest.mark.parametrize(
    ("output", "gold", "match"),
    [
        ("根据规定，应在三十日内申报。", "三十日", True),
        ("企业所得税", "所得税", True),
        ("答案：１２０００元", "12000元", False),  # full-width is not folded
        ("答案：12,000元", "12000元", False),
        ("三十日", " 三十日 ", False),  # the gold is not stripped
        ("<think>三十日</think>十日", "三十日", True),  # reasoning is read
        ("Withholding agent", "Withholding Agent", False),  # case-sensitive
        ("anything", "", True),  # an empty gold is in every output
    ],
)
def test_read_rule(output: str, gold: str, match: bool) -> None:
    assert taxben.read_correct(output, gold) is match


def test_statuses_and_extracted_values() -> None:
    def item(task: str, output: str, answer: Any, choices: tuple[str, ...] | None = None, gold: int | None = None):
        rec = Record(task, "1", "问题为：多少？", answer, choices=choices, gold=gold)
        return prepare_item(REGISTRY[task], rec, 0, output, None, profile="taxben")

    it = item("TaxCalc", "应纳税额为13000", 13000)
    assert (it.status, it.extracted, it.scores) == ("format_failure", "未知", {"em": 0.0})
    it = item("TaxCalc", " 13000 ", 13000)
    assert (it.status, it.extracted, it.scores) == ("ok", "13000.00", {"em": 1.0})
    it = item("TaxMCQ", "本题选择ACD。A项正确", "ACD")
    assert (it.status, it.extracted, it.scores) == ("ok", "ACDA", {"em": 0.0})
    it = item("TaxMCQ", "答案：A", "A")
    assert (it.status, it.extracted, it.scores) == ("format_failure", None, {"em": 0.0})
    it = item("TaxRead", "<think>三十日</think>", "三十日")
    assert (it.status, it.extracted, it.scores) == ("ok", "三十日", {"em": 1.0})
    it = item("TaxRead", "材料中没有提到。", "三十日")
    assert (it.status, it.extracted, it.scores) == ("ok", None, {"em": 0.0})
    it = item("TaxRead", " \n", "三十日")
    assert (it.status, it.extracted, it.scores) == ("format_failure", None, {"em": 0.0})
    it = item("TaxTopic", "不知道", "增值税", ("增值税", "消费税"), 0)
    assert (it.status, it.label_pred, it.label_gold, it.scores) == ("format_failure", "missing", "增值税", {"acc": 0.0})
    it = item("TaxSCQ", "\\boxed{D}", "D", ("A", "B", "C", "D"), 3)
    assert (it.label_pred, it.label_gold, it.scores) == ("b", "d", {"acc": 0.0})
    assert item("TaxCalc", None, 13000).status == "error"  # type: ignore[arg-type]


def test_generation_scores_the_raw_output_in_this_profile_only() -> None:
    rec = Record("TaxQA", "1", "问：", "增值税是流转税。")
    raw = "<think>想一想</think>增值税是\u200b流转税。"
    taxben_item = prepare_item(REGISTRY["TaxQA"], rec, 0, raw, None, profile="taxben")
    ours = prepare_item(REGISTRY["TaxQA"], rec, 0, raw, None, profile="taxpraben")
    assert [p.candidate for p in taxben_item.pairs] == [raw]
    assert [p.candidate for p in ours.pairs] == ["增值税是流转税。"]
