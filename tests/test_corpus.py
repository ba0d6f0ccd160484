"""The realistic-output corpus: what a careful human grader reads in each output.

Each line of ``tests/corpus/*.jsonl`` is one model output in the style of a real model (Qwen,
DeepSeek, GLM, GPT-4o, reasoning models), the record it answers, the grader's verdict and a
one-line reason. The record goes through the real loader checks and the output through the real
item scorer (``prepare_item``), so a case checks the whole answer-resolution procedure, not one
helper. Schema of a line::

    {"id": "calc-001", "task": "TaxCalc", "style": "qwen", "rule": "self-correction",
     "record": {"query": "...", "answer": ..., "choices": [...], "gold": 0},
     "output": "...",
     "expect": {"status": "ok", "score": 1.0, "extracted": "..."},
     "reason": "..."}

Lines taken from real models' outputs (``real_outputs*.jsonl``) also carry ``source``
(repository, path, commit, item, model; see ``REAL_SOURCES.md``). A case the rules are known
to read otherwise than the grader carries ``known_miss`` (why): it is an expected failure,
strict, so that a rule that starts to read it right is noticed and the mark removed.

``expect`` keys, all optional but at least one:
- ``status``: ``ok`` or ``format_failure``;
- ``score``: the exact score (TaxCalc/TaxRead/TaxMCQ ``em``; classification ``acc``);
- ``extracted``: classification: the label read (``"missing"`` for none); TaxMCQ: the letters
  read, sorted (``"ABD"``); TaxRead: the span read;
- ``fields``: mixed tasks: ``{field: 0.0 | 1.0}`` for exact (number / category) fields;
- ``present`` / ``missing``: field or aspect names whose predicted value is found / not found;
- ``contains``: ``{field: substring}`` that the aligned predicted value must contain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taxpraben.data.checks import check_record
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

CORPUS_DIR = Path(__file__).parent / "corpus"
_EXPECT_KEYS = {"status", "score", "extracted", "fields", "present", "missing", "contains"}
_REQUIRED = {"id", "task", "style", "rule", "record", "output", "expect", "reason"}


def _load() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(CORPUS_DIR.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                cases.append((f"{path.name}:{number}", json.loads(line)))
    return cases


CASES = _load()
REGISTRY = load_registry(use_env=False)


def test_corpus_is_well_formed() -> None:
    ids = [case["id"] for _, case in CASES]
    assert len(ids) == len(set(ids)), "corpus ids must be unique"
    for where, case in CASES:
        assert case.keys() >= _REQUIRED, f"{where}: missing {_REQUIRED - case.keys()}"
        assert case["expect"] and set(case["expect"]) <= _EXPECT_KEYS, where
        assert case["reason"].strip(), where


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _params() -> list[Any]:
    return [
        pytest.param(where, case, id=case["id"], marks=pytest.mark.xfail(strict=True, reason=case["known_miss"]))
        if case.get("known_miss")
        else pytest.param(where, case, id=case["id"])
        for where, case in CASES
    ]


def test_known_misses_are_few() -> None:
    """At most 2% of the corpus may be known misses (each with its reason)."""
    misses = [case["id"] for _, case in CASES if case.get("known_miss")]
    assert len(misses) <= 0.02 * len(CASES), misses


@pytest.mark.parametrize(("where", "case"), _params())
def test_grader_agrees(where: str, case: dict[str, Any]) -> None:
    spec = REGISTRY[case["task"]]
    record, problems = check_record(
        case["record"], spec, Path(where), 1, "line"
    )
    errors = [p for p in problems if p.severity == "error"]
    assert record is not None and not errors, f"{where}: record refused: {errors}"
    item = prepare_item(spec, record, 0, case["output"], None)
    expect = case["expect"]
    why = f"{where} [{case['rule']}] {case['reason']}"
    if "status" in expect:
        assert item.status == expect["status"], why
    if "score" in expect:
        got = item.scores.get("acc", item.scores.get("em"))
        assert got == pytest.approx(expect["score"]), f"{why}; extracted {item.extracted!r}"
    if "extracted" in expect:
        assert item.extracted == expect["extracted"], why
    fields = item.fields or {}
    for name, score in expect.get("fields", {}).items():
        assert name in fields, f"{why}; no field {name!r} in {list(fields)}"
        assert fields[name]["score"] == pytest.approx(score), f"{why}; field {name}: {fields[name]}"
    for name in expect.get("present", []):
        assert name in fields and fields[name]["status"] == "ok", f"{why}; {name}: {fields.get(name)}"
    for name in expect.get("missing", []):
        assert name not in fields or fields[name]["status"] == "missing", f"{why}; {name}"
    for name, needle in expect.get("contains", {}).items():
        assert name in fields and needle in _text(fields[name]["pred"]), f"{why}; {name}: {fields.get(name)}"


def _shows_answer(shown: str, item: Any) -> bool:
    """The evidence shows the answer read: the label, its letter or its text; each letter of a
    set; a number's digits; the span. Answers said in words ("以上都对", "无需缴纳", "百分之二")
    are checked by the rule examples (tests/test_rules.py), not here."""
    value, folded = item.extracted, shown.upper().replace(",", "").replace("，", "")
    if item.task in ("TaxSCQ", "TaxTopic", "TaxCrime"):  # named by a letter, a text, an alias
        return bool(shown.strip())  # or a naming form ("城建税", "6万元"): the examples check those
    if item.task == "TaxMCQ":  # the letters, or all of them said in words ("以上都对", "全选")
        return set(str(value)) <= set(folded) or any(w in shown for w in ("以上", "全", "所有", "都", "均"))
    if item.task == "TaxCalc":  # a number as written ("4.4万元", "肆万伍仟元", "\\frac{1}{3}")
        from taxpraben.parsing.clean import clean_prediction
        from taxpraben.parsing.latex import strip_latex
        from taxpraben.parsing.numbers import find_numbers

        return bool(find_numbers(strip_latex(clean_prediction(shown))))
    return True


#: Readings whose answer the output says in words, not as its value.
_IN_WORDS = ("rule:letters.all-or-all-but", "rule:letters.all-options-concluded", "rule:letters.named-by-text",
             "rule:number.says-zero", "rule:choice.value-in-last-sentence", "rule:choice.named-in-last-sentence")


@pytest.mark.parametrize(("where", "case"), [pytest.param(w, c, id=c["id"]) for w, c in CASES])
def test_every_reading_names_its_rule_and_evidence(where: str, case: dict[str, Any]) -> None:
    """Every corpus output read by a rule says which (a registered one) and from which span of
    the raw output; a format failure names its veto and shows no evidence."""
    from taxpraben.parsing.rules import rule_named

    spec = REGISTRY[case["task"]]
    record, _ = check_record(case["record"], spec, Path(where), 1, "line")
    assert record is not None
    item = prepare_item(spec, record, 0, case["output"], None)
    if item.status == "format_failure":
        assert item.read_by is None and item.evidence is None and item.confidence is None
        assert item.veto is not None and rule_named(item.veto) is not None, where
        return
    assert item.read_by is not None and rule_named(item.read_by) is not None, (where, item.read_by)
    assert item.confidence in ("high", "low")
    assert item.evidence is not None, f"{where}: {item.read_by} without evidence"
    start, end = item.evidence
    assert 0 <= start < end <= len(case["output"])
    if item.read_by not in _IN_WORDS and not item.read_by.startswith("rule:fields."):
        shown = case["output"][start:end]
        assert _shows_answer(shown, item), f"{where}: {item.read_by} read {item.extracted!r} from {shown!r}"


#: Corpus tags that name how an output gives its answer, and the rules that must read it
#: (``veto.*``: any veto). The other tags name a style or a trap, not a rule.
TAG_RULES: dict[str, set[str]] = {
    "boxed": {"final.boxed"}, "boxed-latex": {"final.boxed"}, "boxed-letters": {"final.boxed"},
    "echoed-option-then-boxed": {"final.boxed"},
    "json-answer": {"json.answer-field"}, "fenced-json": {"fields.json"},
    "copy-options": {"veto.copy-of-prompt", "veto.no-answer"},
    "mcq-option-verdicts": {"letters.option-verdicts", "final.answer-statement"},
    "mcq-check-marks": {"letters.option-verdicts"}, "mcq-xiang-correct": {"letters.option-verdicts"},
    "refusal": {"veto.*"}, "unscoreable": {"veto.*"}, "truncated-think": {"veto.*"}, "multiple-answers": {"veto.*"},
    "no-correct-option": {"veto.none-correct", "veto.no-answer"},
    "bare-letter": {"choice.bare-answer", "letters.lead-sentence"},
    "letters-list": {"letters.lead-sentence"}, "bare-letters": {"letters.lead-sentence"},
    "number-sentence": {"number.last-number", "number.sole-number"},
    "number-with-period": {"number.last-number", "number.sole-number"},
    "latex-number": {"number.last-number", "number.sole-number"},
    "md-table-rows": {"fields.lines"}, "md-headings": {"fields.lines"}, "bold-key-lines": {"fields.lines"},
    "cn-numbered-heading": {"fields.lines"}, "bare-numbered-heading": {"fields.lines"},
    "md-table-entities": {"fields.lines"}, "unit-wan-header": {"fields.lines"},
    "mcq-self-correction": {"final.self-correction", "final.answer-statement"},
    "answer-prefix": {"final.answer-statement"}, "mcq-rejected-list": {"final.answer-statement"},
}


@pytest.mark.parametrize(("where", "case"), [pytest.param(w, c, id=c["id"]) for w, c in CASES if c["rule"] in TAG_RULES])
def test_a_case_tagged_with_a_rule_is_read_by_it(where: str, case: dict[str, Any]) -> None:
    spec = REGISTRY[case["task"]]
    record, _ = check_record(case["record"], spec, Path(where), 1, "line")
    assert record is not None
    item = prepare_item(spec, record, 0, case["output"], None)
    decided = (item.read_by or "").removeprefix("rule:") or item.veto or ""
    allowed = TAG_RULES[case["rule"]]
    assert decided in allowed or ("veto.*" in allowed and decided.startswith("veto.")), (
        f"{where} [{case['rule']}] read by {decided!r}, not {sorted(allowed)}")
