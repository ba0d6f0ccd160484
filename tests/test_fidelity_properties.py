"""Scoring fidelity, as properties: the gold in any shape a model writes it scores full marks;
a copy of the prompt (whole or in part) is never credited; a copy followed by the gold is;
an invented follow-up question with a wrong answer does not undo the answer given first;
``baseline:echo`` scores 0 and the oracle 1.0.

End to end only (``check_record`` -> ``prepare_item``), on three data sources: the bundled
sample, the synthetic benchmark (benchmarks/make_synthetic.py, scale 0.05) and records built
here (lettered single-choice questions with LaTeX and amount option texts and a repeated
option text, questions whose choices are the letters themselves, TaxMCQ, TaxCalc with units).
Tasks: TaxSCQ, TaxTopic, TaxCrime (classification, ``acc``), TaxMCQ and TaxCalc (``em``).
TaxRead is left out: a span answer is a copy of the document by nature.

Every property runs 100 examples per task (or generated family), derandomized. A failure is
reported as the first example found; ``FIDELITY_SHRINK=1`` shrinks it to the shortest one
(seconds per failing test, hence off by default).
"""

from __future__ import annotations

import atexit
import json
import os
import random
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from taxpraben.data.checks import check_record
from taxpraben.data.loader import load_data
from taxpraben.models.baselines import BASELINES, oracle
from taxpraben.records import Record
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import TaskSpec, load_registry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from make_synthetic import write_data  # noqa: E402

REGISTRY = load_registry(use_env=False)
SAMPLE_DIR = ROOT / "src" / "taxpraben" / "data" / "sample"
TASKS = ("TaxSCQ", "TaxTopic", "TaxCrime", "TaxMCQ", "TaxCalc")
#: Generated record families: the task each belongs to.
FAMILIES = {"TaxSCQ/texts": "TaxSCQ", "TaxSCQ/letters": "TaxSCQ", "TaxMCQ": "TaxMCQ", "TaxCalc": "TaxCalc"}

SHRINK = os.environ.get("FIDELITY_SHRINK") == "1"
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    report_multiple_bugs=False,
    phases=tuple(Phase) if SHRINK else (Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------------------ data sources


@cache
def sample_records(task: str) -> list[Record]:
    return list(load_data(SAMPLE_DIR, REGISTRY).records[task])


@cache
def _synthetic_dir() -> Path:
    out = Path(tempfile.mkdtemp(prefix="taxpraben-fidelity-"))
    atexit.register(shutil.rmtree, out, True)
    write_data(out, seed=0, scale=0.05)
    return out


@cache
def synthetic_records(task: str) -> list[Record]:
    return list(load_data(_synthetic_dir(), REGISTRY).records[task])


def sampled(source: str, task: str) -> st.SearchStrategy[Record]:
    """One record of ``task`` from a fixed data set, read when first drawn."""
    records = sample_records if source == "sample" else synthetic_records
    return st.deferred(lambda: st.sampled_from(records(task)))


def checked(raw: dict[str, Any], task: str) -> Record:
    """A generated record, which must pass the loader's checks (a bad generator fails here)."""
    record, problems = check_record(raw, REGISTRY[task], Path("gen.jsonl"), 1, "line")
    errors = [p for p in problems if p.severity == "error"]
    assert record is not None and not errors, (raw, errors)
    return record


# ------------------------------------------------------------------------------ generated records

SCQ_HEAD = "以下是中国税法考试中的单项选择题，请选出唯一正确的选项。"
SCQ_TAIL = "请直接输出正确选项的字母（A、B、C或D）。答案："
MCQ_HEAD = "以下是中国税法考试中的多项选择题，每题有两个或两个以上正确选项，请选出全部正确选项。"
MCQ_TAIL = "请直接输出所有正确选项的字母，例如“ABD”。答案："
#: Option texts: LaTeX rates and formulas, amounts with units (no two of equal value), words.
OPTION_TEXTS = (
    r"$5\%$",
    r"$3\%$",
    r"$20\%$",
    r"$\frac{1}{2}$",
    r"$\frac{1}{3}$",
    r"收入额$\times 20\%$",
    r"应纳税所得额$\times$适用税率",
    "42000元",
    "6万元",
    "72000元",
    "9.6万元",
    "3,600元",
    "不动产租赁服务",
    "信息技术服务",
    "减半征收企业所得税",
    "免征增值税",
    "以上都不对",
)
SCQ_QUESTIONS = (
    "根据个人所得税法的规定，居民个人综合所得的基本减除费用标准为每年（ ）。",
    "某企业2024年取得不含税收入200万元，其适用的征收率或计税方法为（ ）。",
    "下列关于增值税一般纳税人计税方法的表述中，正确的是（ ）。",
    "小型微利企业年应纳税所得额不超过300万元的部分，其税收优惠为（ ）。",
)
MCQ_QUESTIONS = (
    "下列各项中，属于企业所得税优惠政策的有（ ）。",
    "某公司2024年发生下列业务，其中适用税率或计算方法正确的有（ ）。",
    "根据税收征收管理法，下列表述正确的有（ ）。",
)


def _money(value: Decimal) -> str:
    """``value`` as a plain decimal without exponent or trailing zeros: 104000, 77649.6."""
    return format(value.normalize(), "f")


@st.composite
def option_list(draw: st.DrawFn, n: int, repeat: bool) -> list[str]:
    texts = draw(st.lists(st.sampled_from(OPTION_TEXTS), min_size=n, max_size=n, unique=True))
    if repeat:
        i, j = draw(st.sampled_from(list(combinations(range(n), 2))))
        texts[j] = texts[i]
    return texts


def _shown(texts: list[str]) -> str:
    return "\n".join(f"{chr(65 + k)}. {t}" for k, t in enumerate(texts))


@st.composite
def scq_record(draw: st.DrawFn, letter_choices: bool) -> Record:
    """TaxSCQ: options listed in the query; ``choices`` their texts (gold an index, answer
    the text, letter or "B. text"), or the letters themselves (answer the gold letter)."""
    repeat = draw(st.booleans())
    texts = draw(option_list(4, repeat))
    if repeat:  # the gold is on one of the two options that share a text
        twins = [k for k, t in enumerate(texts) if texts.count(t) > 1]
        gold = draw(st.sampled_from(twins))
    else:
        gold = draw(st.integers(0, 3))
    letter = chr(65 + gold)
    query = f"{SCQ_HEAD}\n题目：{draw(st.sampled_from(SCQ_QUESTIONS))}\n{_shown(texts)}\n{SCQ_TAIL}"
    raw: dict[str, Any] = {"id": "g1", "query": query}
    if letter_choices:
        raw |= {"choices": ["A", "B", "C", "D"], "answer": letter}
    else:
        answer = draw(st.sampled_from([texts[gold], letter, f"{letter}. {texts[gold]}"]))
        raw |= {"choices": texts, "gold": gold, "answer": answer}
    return checked(raw, "TaxSCQ")


@st.composite
def mcq_record(draw: st.DrawFn) -> Record:
    n = draw(st.sampled_from([4, 5]))
    texts = draw(option_list(n, False))
    size = draw(st.integers(2, n))
    answer = "".join(sorted(draw(st.lists(st.sampled_from("ABCDE"[:n]), min_size=size, max_size=size, unique=True))))
    query = f"{MCQ_HEAD}\n题目：{draw(st.sampled_from(MCQ_QUESTIONS))}\n{_shown(texts)}\n{MCQ_TAIL}"
    return checked({"id": "g1", "query": query, "answer": answer, "options": texts}, "TaxMCQ")


@st.composite
def calc_record(draw: st.DrawFn) -> Record:
    """TaxCalc: a calculation problem full of other numbers (sometimes the gold itself);
    the gold a JSON number, or a string with its unit ("76000元", "17.14万元")."""
    style = draw(st.sampled_from(["number", "yuan", "wan"]))
    # In the gold's unit, from 100.00元 or 1.00万元 up (a gold of at most 1 may be read as a rate).
    value = Decimal(draw(st.integers(10**4 if style != "wan" else 10**2, 10**9 if style != "wan" else 10**6))) / 100
    unit = "万元" if style == "wan" else "元"
    answer: Any = {"number": float(value), "yuan": f"{_money(value)}元", "wan": f"{_money(value)}万元"}[style]
    figures = draw(st.lists(st.integers(1000, 9_000_000), min_size=2, max_size=3))
    said = [f"{f:,}元" for f in figures]
    if draw(st.booleans()):  # the gold appears among the figures of the problem
        said.insert(draw(st.integers(0, len(said))), f"{_money(value)}{unit}")
    facts = "；".join(f"第{k + 1}项业务涉及金额{s}" for k, s in enumerate(said))
    rate = draw(st.sampled_from(["13%", "9%", "6%", "3%"]))
    query = (
        "请根据以下资料和计算规则完成税额计算。\n"
        f"资料：某公司为增值税一般纳税人，2024年{draw(st.integers(1, 12))}月{facts}。\n"
        f"计算规则：适用{rate}的税率；应纳税额=计税依据×税率-可抵扣税额。\n"
        f"问题：该公司当月应缴纳增值税多少{unit}？\n"
        f"请给出最终计算结果，单位为{unit}，保留两位小数，只输出一个数值。答案："
    )
    return checked({"id": "g1", "query": query, "answer": answer}, "TaxCalc")


def generated(family: str) -> st.SearchStrategy[Record]:
    return {
        "TaxSCQ/texts": scq_record(False),
        "TaxSCQ/letters": scq_record(True),
        "TaxMCQ": mcq_record(),
        "TaxCalc": calc_record(),
    }[family]


# ------------------------------------------------------------------------------ the gold, written


_OPTION_LINE = re.compile(r"^\s*[(（]?([A-H])[)）]?\s*[.．、:：)）]\s*(.+?)\s*$")


def listed_options(query: str) -> dict[str, str]:
    """letter -> text of the options the query lists one per line."""
    found: dict[str, str] = {}
    for line in query.split("\n"):
        m = _OPTION_LINE.match(line)
        if m and m.group(1) not in found:
            found[m.group(1)] = m.group(2)
    return found


@dataclass(frozen=True)
class Gold:
    """The gold and a few wrong answers as a model writes them.

    ``atoms``: the answer alone (text, letter, "B. text", "ACD", "171,400元"); ``boxed``: what
    goes in ``\\boxed{}``; ``picks``: the conclusion sentences ("因此，应选B。"); ``numbers``:
    JSON numbers (TaxCalc); ``wrong``: wrong answers in the task's own terms.
    """

    atoms: tuple[str, ...]
    boxed: tuple[str, ...]
    picks: tuple[str, ...]
    numbers: tuple[str, ...]
    wrong: tuple[str, ...]
    avoid: tuple[str, ...]  # option texts, which a neutral sentence must not contain
    kind: str  # "letters" (lettered options), "text" (choice texts) or "number"


def gold_of(spec: TaskSpec, record: Record) -> Gold:
    if spec.type == "classification":
        return _classification_gold(spec, record)
    assert spec.structured is not None
    if spec.structured.kind == "letters":
        return _letters_gold(record)
    return _number_gold(record)


def _classification_gold(spec: TaskSpec, record: Record) -> Gold:
    assert record.choices is not None and record.gold is not None
    letters_are_choices = all(c.strip() == chr(65 + i) for i, c in enumerate(record.choices))
    lettered = spec.classification_options.option_letters or letters_are_choices
    if not lettered:
        text = record.choices[record.gold]
        others = tuple(c for c in record.choices if c != text)
        return Gold((text,), (text,), (f"因此，答案为{text}。",), (), others, record.choices, "text")
    texts = listed_options(record.query) if letters_are_choices else {
        chr(65 + i): c for i, c in enumerate(record.choices)
    }
    letter = chr(65 + record.gold)
    text = texts[letter]
    repeated = list(texts.values()).count(text) > 1
    atoms = (letter, f"{letter}. {text}") + (() if repeated else (text,))
    wrong = tuple(k for k in texts if k != letter)
    wrong += tuple(f"{k}. {t}" for k, t in texts.items() if t != text)
    return Gold(atoms, (letter,), (f"因此，应选{letter}。",), (), wrong, tuple(texts.values()), "letters")


def _letters_gold(record: Record) -> Gold:
    gold = str(record.answer).strip().upper()
    listed = "".join(sorted(listed_options(record.query))) or "ABCDE"
    atoms = (gold, "、".join(gold), ",".join(gold))
    wrong = tuple(
        "".join(c) for k in range(1, len(listed) + 1) for c in combinations(listed, k) if "".join(c) != gold
    )
    options = tuple(listed_options(record.query).values())
    return Gold(atoms, (gold,), (f"因此，应选{gold}。",), (), wrong, options, "letters")


def _gold_value(record: Record) -> tuple[Decimal, str]:
    """The gold's value in its own unit, and that unit ("元" or "万元")."""
    answer = record.answer
    if isinstance(answer, str) and answer.endswith("万元"):
        return Decimal(answer[:-2].replace(",", "")), "万元"
    if isinstance(answer, str):
        return Decimal(answer.removesuffix("元").replace(",", "")), "元"
    unit = "万元" if "单位为万元" in record.query else "元"
    return Decimal(repr(answer)), unit


def _figures(value: Decimal) -> list[str]:
    """``value`` written plainly, at 2 decimals, and with thousands separators."""
    return list(dict.fromkeys([_money(value), f"{value:.2f}", f"{value.normalize():,f}", f"{value:,.2f}"]))


def _number_gold(record: Record) -> Gold:
    value, unit = _gold_value(record)
    plain = _figures(value)  # in the gold's unit, which the query asks for
    with_unit = [f"{f}{unit}" for f in plain]
    if unit == "万元":
        with_unit += [f"{f}元" for f in _figures(value * 10000)]
    atoms = tuple(dict.fromkeys(plain + with_unit))
    picks = tuple(f"应纳税额为{a}。" for a in with_unit)
    numbers = (_money(value), f"{value:.2f}")
    wrong_values = [value + 1, value * 2 + Decimal("0.5"), value + 100]
    wrong = tuple(f"{_money(w)}{unit}" for w in wrong_values) + tuple(_money(w) for w in wrong_values)
    return Gold(atoms, tuple(plain[:2]), picks, numbers, wrong, (), "number")


NEUTRAL = (
    "根据现行法律法规的规定，结合题干所给条件进行判断。",
    "逐项对照相关条款的适用条件后，可以得出结论。",
    "本题考查基本规则的理解与运用，需要结合题意分析。",
    "依据有关规定并结合事实综合判断即可。",
)


def neutral_sentences(gold: Gold) -> list[str]:
    """Reasoning that names no option and no number."""
    found = [s for s in NEUTRAL if not any(t and t in s for t in gold.avoid)]
    assert found
    return found


def gold_statements(gold: Gold, neutral: str) -> list[str]:
    """The gold written the ways a model writes it: bare, after reasoning, boxed, in a
    sentence, in JSON (bare and in a ```json fence)."""
    out: list[str] = list(gold.atoms)
    out += [f"分析：{neutral}\n答案：{a}" for a in gold.atoms]
    out += [f"$\\boxed{{{b}}}$" for b in gold.boxed] + [f"\\boxed{{{b}}}" for b in gold.boxed]
    out += [f"正确答案是{a}。" for a in gold.atoms]
    out += list(gold.picks)
    objects = [json.dumps({"答案": a}, ensure_ascii=False) for a in gold.atoms]
    objects += [f'{{"答案": {n}}}' for n in gold.numbers]
    out += objects + [f"```json\n{o}\n```" for o in objects]
    return out


def explicit_statements(gold: Gold) -> list[str]:
    """What (c) appends to a copy of the prompt: an explicit statement of the gold."""
    out = [f"\n答案：{a}" for a in gold.atoms]
    out += [f"\n正确答案是{a}" for a in gold.atoms]
    out += [f"\n\\boxed{{{b}}}" for b in gold.boxed]
    return out


# ------------------------------------------------------------------------------ copies of the prompt

_QUESTION_PREFIXES = ("题目：", "资料：", "问题：", "文本：", "案情：", "材料：")
_RULE_PREFIXES = ("计算规则：",)


def _is_option(line: str) -> bool:
    return _OPTION_LINE.match(line) is not None


def _several(spec: TaskSpec) -> bool:
    return spec.structured is not None and spec.structured.kind == "letters"


def _subsets(indices: list[int]) -> list[tuple[int, ...]]:
    return [c for k in range(1, len(indices) + 1) for c in combinations(indices, k)]


def draw_copy(data: st.DataObject, query: str, several: bool = False) -> str:
    """A copy of the prompt, whole or in part, optionally followed by "答案：" or the
    prompt's own last line (hypothesis draws the kind and the boundaries).

    ``several`` (a multiple choice): some of its options written back on their own, and
    nothing else, select those options (README, "How answers are scored"); such a block is a
    copy here only with the prompt's answer prefix or last line after it."""
    lines = query.split("\n")
    n = len(lines)
    options = [i for i, line in enumerate(lines) if _is_option(line)]
    questions = [i for i, line in enumerate(lines) if line.startswith(_QUESTION_PREFIXES)]
    instructions = [
        i for i in range(n) if i not in options and i not in questions and not lines[i].startswith(_RULE_PREFIXES)
    ]
    pieces: dict[str, list[str]] = {"whole": [query], "minus first line": ["\n".join(lines[1:])]}
    if len(options) >= 2:
        runs = [(i, j) for i in options for j in options if j - i >= 2 and all(k in options for k in range(i, j + 1))]
        pieces["all options"] = ["\n".join(lines[i] for i in options)]
        if runs:
            pieces["options run"] = ["\n".join(lines[i : j + 1]) for i, j in runs]
    if questions:
        pieces["question"] = ["\n".join(lines[i] for i in s) for s in _subsets(questions)]
    if instructions:
        pieces["instruction"] = ["\n".join(lines[i] for i in s) for s in _subsets(instructions)]
    blocks = [
        "\n".join(lines[i:j])
        for i in range(n)
        for j in range(i + 2, n + 1)
        if not (all(k in options for k in range(i, j)) and j - i < 3)  # two option lines may be an answer
    ]
    if blocks:
        pieces["block"] = blocks
    single = [line for line in lines if len(line) >= 12 and not _is_option(line)]
    if single:
        pieces["line"] = single
    kind = data.draw(st.sampled_from(sorted(pieces)), label="copy kind")
    body = data.draw(st.sampled_from(pieces[kind]), label="copy")
    suffixes = ["", "答案：", "\n答案：", "\n" + lines[-1]]
    body_lines = body.split("\n")
    if several and all(_is_option(line) for line in body_lines) and len(body_lines) < len(options):
        suffixes = suffixes[1:]  # a selection on its own: a copy only with the prompt's tail
    suffix = data.draw(st.sampled_from(suffixes), label="suffix")
    return body + suffix


# ------------------------------------------------------------------------------ invented follow-ups

HEADINGS = ("题目：", "问题2：", "第2题：", "第2题\n", "Question: ", "2. ")
OTHER_QUESTIONS = (
    "下列关于纳税申报期限的说法中，正确的是（ ）。",
    "下列关于发票管理的表述中，符合规定的是（ ）。",
    "下列情形中，乙公司2023年应缴纳的税额为多少？",
)
OTHER_OPTIONS = ("按月申报缴纳", "可以享受减免", "不得抵扣进项税额", "适用简易计税方法", "由扣缴义务人代扣代缴")


def draw_follow_up(data: st.DataObject, record: Record, gold: Gold) -> str:
    """After the answer: an invented question with a wrong answer, or the prompt again
    followed by a wrong answer."""
    wrong = data.draw(st.sampled_from(gold.wrong), label="wrong answer")
    if data.draw(st.booleans(), label="query again"):
        return "\n" + record.query + wrong
    heading = data.draw(st.sampled_from(HEADINGS), label="heading")
    question = data.draw(st.sampled_from(OTHER_QUESTIONS), label="other question")
    if gold.kind == "letters":  # options of its own, lettered like the prompt's
        count = len(listed_options(record.query)) or 4
        options = "\n" + _shown([OTHER_OPTIONS[k % len(OTHER_OPTIONS)] for k in range(count)])
    elif gold.kind == "text":  # the record's own choices, under letters
        options = "\n" + _shown(list(gold.avoid)[:4])
    else:
        options = ""
    return f"\n\n{heading}{question}{options}\n答案：{wrong}"


# ------------------------------------------------------------------------------ scoring


def score(spec: TaskSpec, record: Record, output: str) -> tuple[str, float, Any]:
    item = prepare_item(spec, record, 0, output, None)
    metric = "acc" if spec.type == "classification" else "em"
    return item.status, item.scores[metric], item.extracted


def assert_full_marks(spec: TaskSpec, record: Record, output: str) -> None:
    status, value, extracted = score(spec, record, output)
    assert (status, value) == ("ok", 1.0), f"{output!r} -> status {status}, score {value}, read {extracted!r}"


def assert_no_credit(spec: TaskSpec, record: Record, output: str) -> None:
    status, value, extracted = score(spec, record, output)
    assert (status, value) == ("format_failure", 0.0), (
        f"{output!r} -> status {status}, score {value}, read {extracted!r}"
    )


def draw_statement(data: st.DataObject, gold: Gold) -> str:
    neutral = data.draw(st.sampled_from(neutral_sentences(gold)), label="neutral")
    return data.draw(st.sampled_from(gold_statements(gold, neutral)), label="statement")


def check_gold_scores(data: st.DataObject, spec: TaskSpec, record: Record) -> None:
    """(a) the gold, written as a model would, scores full marks."""
    assert_full_marks(spec, record, draw_statement(data, gold_of(spec, record)))


def check_gold_after_think(data: st.DataObject, spec: TaskSpec, record: Record) -> None:
    """(a') the same after a <think> block (which may muse over a wrong answer or restate
    the prompt)."""
    gold = gold_of(spec, record)
    statement = draw_statement(data, gold)
    neutral = data.draw(st.sampled_from(neutral_sentences(gold)), label="think")
    musing = data.draw(
        st.sampled_from(["", *(f"也许是{w}？再核对一下。" for w in gold.wrong[:3]), f"题目是：\n{record.query}\n"]),
        label="musing",
    )
    assert_full_marks(spec, record, f"<think>\n{neutral}{musing}\n</think>\n\n{statement}")


def check_copy_scores_nothing(data: st.DataObject, spec: TaskSpec, record: Record) -> None:
    """(b) a copy of the prompt, whole or in part, scores 0 and is a format failure."""
    assert_no_credit(spec, record, draw_copy(data, record.query, several=_several(spec)))


def check_copy_then_gold(data: st.DataObject, spec: TaskSpec, record: Record) -> None:
    """(c) a copy of the prompt followed by an explicit statement of the gold scores full marks."""
    copy = draw_copy(data, record.query, several=_several(spec))
    statement = data.draw(st.sampled_from(explicit_statements(gold_of(spec, record))), label="statement")
    assert_full_marks(spec, record, copy + statement)


def check_follow_up_keeps_gold(data: st.DataObject, spec: TaskSpec, record: Record) -> None:
    """(d) the right answer followed by an invented question with a wrong answer stays right."""
    gold = gold_of(spec, record)
    statement = draw_statement(data, gold)
    assert_full_marks(spec, record, statement + draw_follow_up(data, record, gold))


# ------------------------------------------------------------------------------ (a) gold scores 1


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_gold_scores_full_marks_sample(task: str, data: st.DataObject) -> None:
    check_gold_scores(data, REGISTRY[task], data.draw(sampled("sample", task), label="record"))


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_gold_scores_full_marks_synthetic(task: str, data: st.DataObject) -> None:
    check_gold_scores(data, REGISTRY[task], data.draw(sampled("synthetic", task), label="record"))


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_gold_scores_full_marks_generated(family: str, data: st.DataObject) -> None:
    check_gold_scores(data, REGISTRY[FAMILIES[family]], data.draw(generated(family), label="record"))


# ------------------------------------------------------------------------------ (a') after <think>


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_gold_after_think_sample(task: str, data: st.DataObject) -> None:
    check_gold_after_think(data, REGISTRY[task], data.draw(sampled("sample", task), label="record"))


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_gold_after_think_synthetic(task: str, data: st.DataObject) -> None:
    check_gold_after_think(data, REGISTRY[task], data.draw(sampled("synthetic", task), label="record"))


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_gold_after_think_generated(family: str, data: st.DataObject) -> None:
    check_gold_after_think(data, REGISTRY[FAMILIES[family]], data.draw(generated(family), label="record"))


# ------------------------------------------------------------------------------ (b) copies score 0


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_prompt_copy_scores_nothing_sample(task: str, data: st.DataObject) -> None:
    check_copy_scores_nothing(data, REGISTRY[task], data.draw(sampled("sample", task), label="record"))


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_prompt_copy_scores_nothing_synthetic(task: str, data: st.DataObject) -> None:
    check_copy_scores_nothing(data, REGISTRY[task], data.draw(sampled("synthetic", task), label="record"))


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_prompt_copy_scores_nothing_generated(family: str, data: st.DataObject) -> None:
    check_copy_scores_nothing(data, REGISTRY[FAMILIES[family]], data.draw(generated(family), label="record"))


# ------------------------------------------------------------------------------ (c) copy + gold scores 1


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_prompt_copy_then_gold_scores_full_marks_sample(task: str, data: st.DataObject) -> None:
    check_copy_then_gold(data, REGISTRY[task], data.draw(sampled("sample", task), label="record"))


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_prompt_copy_then_gold_scores_full_marks_synthetic(task: str, data: st.DataObject) -> None:
    check_copy_then_gold(data, REGISTRY[task], data.draw(sampled("synthetic", task), label="record"))


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_prompt_copy_then_gold_scores_full_marks_generated(family: str, data: st.DataObject) -> None:
    check_copy_then_gold(data, REGISTRY[FAMILIES[family]], data.draw(generated(family), label="record"))


# ------------------------------------------------------------------------------ (d) invented follow-ups


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_invented_follow_up_keeps_gold_sample(task: str, data: st.DataObject) -> None:
    check_follow_up_keeps_gold(data, REGISTRY[task], data.draw(sampled("sample", task), label="record"))


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(data=st.data())
def test_invented_follow_up_keeps_gold_synthetic(task: str, data: st.DataObject) -> None:
    check_follow_up_keeps_gold(data, REGISTRY[task], data.draw(sampled("synthetic", task), label="record"))


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_invented_follow_up_keeps_gold_generated(family: str, data: st.DataObject) -> None:
    check_follow_up_keeps_gold(data, REGISTRY[FAMILIES[family]], data.draw(generated(family), label="record"))


# ------------------------------------------------------------------------------ (e) baseline:echo


def _echo_failures(records: dict[str, list[Record]]) -> list[str]:
    if "echo" not in BASELINES:
        pytest.skip("baseline:echo does not exist yet")
    echo = BASELINES["echo"]
    failures = []
    for task, recs in records.items():
        spec = REGISTRY[task]
        for record in recs:
            status, value, extracted = score(spec, record, echo(record, spec, random.Random(0)))
            if (status, value) != ("format_failure", 0.0):
                failures.append(f"{task} {record.id}: status {status}, score {value}, read {extracted!r}")
    return failures


def test_echo_scores_nothing_sample() -> None:
    failures = _echo_failures({task: sample_records(task) for task in TASKS})
    assert not failures, "\n".join(failures)


def test_echo_scores_nothing_synthetic() -> None:
    failures = _echo_failures({task: synthetic_records(task) for task in TASKS})
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_echo_scores_nothing_generated(family: str, data: st.DataObject) -> None:
    record = data.draw(generated(family), label="record")
    failures = _echo_failures({FAMILIES[family]: [record]})
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------ (f) the oracle


def _oracle_failures(records: dict[str, list[Record]]) -> list[str]:
    failures = []
    for task, recs in records.items():
        spec = REGISTRY[task]
        for record in recs:
            answer = oracle(record, spec, random.Random(0))
            status, value, extracted = score(spec, record, answer)
            if (status, value) != ("ok", 1.0):
                failures.append(f"{task} {record.id}: {answer!r} -> status {status}, score {value}, read {extracted!r}")
    return failures


def test_oracle_scores_full_marks_sample() -> None:
    failures = _oracle_failures({task: sample_records(task) for task in TASKS})
    assert not failures, "\n".join(failures)


def test_oracle_scores_full_marks_synthetic() -> None:
    failures = _oracle_failures({task: synthetic_records(task) for task in TASKS})
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_oracle_scores_full_marks_generated(family: str, data: st.DataObject) -> None:
    record = data.draw(generated(family), label="record")
    failures = _oracle_failures({FAMILIES[family]: [record]})
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------ (b') the material written back


@pytest.mark.parametrize("source", ["sample", "synthetic"])
@SETTINGS
@given(data=st.data())
def test_material_restated_scores_nothing(source: str, data: st.DataObject) -> None:
    """A reading task's material written back whole (after the prompt's 答案：, after a copy of
    the prompt, or alone, in any of the prompt's layouts) is no answer, even where its first
    sentence holds the gold: a format failure, the copy veto named."""
    spec = REGISTRY["TaxRead"]
    record = data.draw(sampled(source, "TaxRead"), label="record")
    assume(bool(record.text))
    lead = data.draw(st.sampled_from(["", "答案：", record.query, record.query + "\n", "材料：", "**答案**：\n"]),
                     label="lead")
    tail = data.draw(st.sampled_from(["", "\n", "。"]), label="tail")
    assert_no_credit(spec, record, lead + record.text + tail)


@pytest.mark.parametrize("source", ["sample", "synthetic"])
@SETTINGS
@given(data=st.data())
def test_answer_then_the_material_as_support_scores_full_marks(source: str, data: st.DataObject) -> None:
    """The gold stated first, then the material written back as its support, is an answer."""
    spec = REGISTRY["TaxRead"]
    record = data.draw(sampled(source, "TaxRead"), label="record")
    assume(bool(record.text))
    gold = record.answer_text
    statement = data.draw(st.sampled_from([f"答案：{gold}", f"**答案**：{gold}", f"{gold}"]), label="statement")
    support = data.draw(st.sampled_from(["\n依据材料：", "\n原文：", "。根据材料，"]), label="support")
    assert_full_marks(spec, record, statement + support + record.text)
