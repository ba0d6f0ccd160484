"""Bad input: the data loader, the predictions reader and every parser, fuzzed (issue 7, item 6).

Each target is a (strategy, check) pair in :data:`TARGETS`: the check must not raise for
any input (or raise only the documented, user-facing error with a message that says what
is wrong) and must return what its contract says. CI runs each with
a short budget; ``benchmarks/fuzz_parsers.py`` runs the same targets for minutes.

Huge inputs (a 10 MB prediction, JSON nested a million levels deep, in a prediction and in
a data file) are checked to finish with bounded output; their time and peak memory are
benchmark figures (``benchmarks/fuzz_parsers.py``), not assertions here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxpraben.data.checks import check_record, iter_checked
from taxpraben.data.loader import load_data
from taxpraben.data.problems import DataError, Problem
from taxpraben.parsing.clean import clean_prediction, normalize_text
from taxpraben.parsing.field_match import align_fields, field_value_matches
from taxpraben.parsing.jsonish import find_json_values
from taxpraben.parsing.numbers import NumberMatch, numbers_equal, parse_gold_number, parse_number
from taxpraben.parsing.readers import taxben
from taxpraben.parsing.readers.fields import parse_fields
from taxpraben.parsing.readers.label import extract_choice
from taxpraben.parsing.readers.letters import extract_letter_set
from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.parsing.readers.span import extract_span, span_match
from taxpraben.records import Record
from taxpraben.results.predictions import PredictionFileError, read_predictions
from taxpraben.scoring.items import PROFILES, prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)
#: Slowest acceptable call on a fuzzed input of a few kilobytes.

# ---------------------------------------------------------------------------- strategies

#: Pieces that steer inputs into the parsers' interesting paths.
FRAGMENTS = [
    "答案：", "答案是", "最终答案", "结论：", "属于", "选", "A", "B", "C", "D", "E", "AB", "A、B和D",
    "A,B,D", "{", "}", "[", "]", '"', "'", ":", "：", ",", "，", "“", "”", "\\", '\\"', "```json\n",
    "```", "<think>", "</think>", "\n", " ", "\u3000", "１２３", "1,234.56", "-5", "（12）", "12%",
    "万", "亿", "元", "一千二百", "两万", "零点五", "1e309", "NaN", "\\boxed{42}", "null", "true",
    '{"答案": "B"}', '{"answer": 12.5}', '{"少缴税款": "12,000元", "分析理由": "偷税"}',
    "违法性质：偷税\n", "少缴税款：", "方案一税负", "推荐方案：方案二", "风险识别：", "增值税",
    "企业所得税", "所得税", "逃税罪", "\x00", "\ud7ff", "😀", "\u200b", "\r\n",
]  # fmt: skip

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=40).map("".join)
labels = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


# ---------------------------------------------------------------------------- checks


def check_clean(text: str) -> None:
    assert isinstance((clean_prediction(text)), str)
    assert isinstance((normalize_text(text)), str)


def check_choice(args: tuple[str, list[str], bool]) -> None:
    text, choices, letters = args
    markers = ["答案", "结论", "属于"]
    got = (extract_choice(text, choices, option_letters=letters, markers=markers))
    assert got is None or got in choices
    got = (taxben.classification_label(text, choices))
    assert got is None or got in [c.lower() for c in choices]


def check_letters(text: str) -> None:
    got = (extract_letter_set(text))
    assert got is None or (isinstance(got, frozenset) and got <= set("ABCDE"))
    letters = (taxben.mcq_letters(text))
    assert letters is None or (2 <= len(letters) <= 5 and set(letters) <= set("ABCDE"))


def check_numbers(args: tuple[str, Any]) -> None:
    text, gold = args
    found = (extract_final_number(text))
    assert found is None or isinstance(found, NumberMatch)
    parsed = (parse_number(text))
    assert parsed is None or isinstance(parsed.value, Decimal)
    try:
        value = parse_gold_number(gold)
    except ValueError as exc:  # the documented rejection, with the value in the message
        assert str(exc) and "not" in str(exc)
        return
    assert value.is_finite()
    assert (numbers_equal(found, value)) in (True, False)
    assert isinstance((taxben.calc_answer(text)), str)
    assert (taxben.calc_correct(text, gold)) in (True, False)


def check_spans(args: tuple[str, str]) -> None:
    text, gold = args
    span = (extract_span(text))
    assert isinstance(span, str)
    assert (span_match(span, gold)) in (True, False)
    assert (taxben.read_correct(text, gold)) in (True, False)


def check_fields(text: str) -> None:
    for task in ("TaxInspect", "TaxPlan", "TaxRisk"):
        spec = REGISTRY[task]
        assert spec.fields is not None
        parsed = (parse_fields(text))
        assert parsed is None or isinstance(parsed, dict)
        if parsed:
            aligned = (align_fields(parsed, spec.field_rules, spec.fields.fuzzy_threshold))
            assert list(aligned) == [r.name for r in spec.field_rules]
            for rule in spec.field_rules:
                if rule.kind != "text":  # text fields go to the semantic scorer
                    value = aligned[rule.name].value
                    assert field_value_matches(value, "12000", rule) in (True, False)


def check_json(text: str) -> None:
    values = (find_json_values(text))
    assert all(isinstance(v, (dict, list)) and v for v in values)


#: One realistic record per task, the gold each prediction is scored against.
RECORDS: dict[str, Record] = {}


def _records() -> dict[str, Record]:
    if not RECORDS:
        sample = Path(__file__).resolve().parents[1] / "src" / "taxpraben" / "data" / "sample"
        loaded = load_data(sample, REGISTRY)
        RECORDS.update({task: recs[0] for task, recs in loaded.records.items()})
    return RECORDS


def check_item(args: tuple[str, str, str]) -> None:
    """Every task's whole exact scoring path: a status, JSON-safe output, never an exception."""
    task, text, profile = args
    record = _records()[task]
    item = (prepare_item(REGISTRY[task], record, 0, text, None, profile))  # type: ignore[arg-type]
    assert item.status in ("ok", "format_failure")
    json.dumps({"extracted": item.extracted, "scores": item.scores}, ensure_ascii=False, allow_nan=False)
    for value in item.scores.values():
        assert value is None or (isinstance(value, float) and math.isfinite(value))


def check_record_obj(args: tuple[str, Any]) -> None:
    """Any decoded JSON value as a record: a Record or problems that say what is wrong."""
    task, obj = args
    record, problems = check_record(obj, REGISTRY[task], Path(f"{task}.jsonl"), 1, "line")
    # Warnings (repeated option texts) come with a record; any error comes without one.
    assert (record is None) == any(p.severity == "error" for p in problems)
    for problem in problems:
        assert_clear(problem)


def assert_clear(problem: Problem) -> None:
    assert isinstance(problem, Problem) and problem.message.strip()
    text = str(problem)
    assert problem.path in text and "Traceback" not in text


def check_data_file(args: tuple[str, bytes]) -> None:
    """Arbitrary bytes as a data file: records or problems, never an exception."""
    suffix, content = args
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"TaxCalc{suffix}"
        path.write_bytes(content)
        for item in (list(iter_checked(path, REGISTRY["TaxCalc"]))):
            if isinstance(item, Problem):
                assert_clear(item)
            else:
                assert isinstance(item, Record)


def check_predictions_file(content: bytes) -> None:
    """Arbitrary bytes as a predictions file: predictions or PredictionFileError, with the line."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.jsonl"
        path.write_bytes(content)
        try:
            (list(read_predictions(path)))
        except PredictionFileError as exc:
            assert str(path) in str(exc)


jsonl_lines = st.lists(
    st.one_of(
        json_values.map(lambda v: json.dumps(v)),
        st.fixed_dictionaries(
            {"query": st.text(max_size=20), "answer": json_values},
            optional={"id": json_values, "choices": json_values, "gold": json_values, "text": json_values},
        ).map(lambda v: json.dumps(v, ensure_ascii=False)),
        st.text(max_size=30),
    ),
    max_size=6,
).map(lambda lines: "\n".join(lines).encode("utf-8"))
file_bytes = st.one_of(st.binary(max_size=300), jsonl_lines)

TARGETS: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], None]]] = {
    "clean": (texts, check_clean),
    "choice": (st.tuples(texts, st.lists(labels, min_size=1, max_size=6, unique=True), st.booleans()), check_choice),
    "letters": (texts, check_letters),
    "numbers": (st.tuples(texts, json_values | texts), check_numbers),
    "spans": (st.tuples(texts, texts), check_spans),
    "fields": (texts, check_fields),
    "json": (texts, check_json),
    "item": (st.tuples(st.sampled_from(sorted(REGISTRY)), texts, st.sampled_from(PROFILES)), check_item),
    "record": (st.tuples(st.sampled_from(sorted(REGISTRY)), json_values | st.dictionaries(
        st.sampled_from(["id", "query", "answer", "choices", "gold", "text"]), json_values)), check_record_obj),
    "data_file": (st.tuples(st.sampled_from([".jsonl", ".json"]), file_bytes), check_data_file),
    "predictions_file": (file_bytes, check_predictions_file),
}  # fmt: skip


def fuzz(name: str, max_examples: int) -> None:
    """Run one target for ``max_examples`` inputs (fresh randomness each call)."""
    strategy, check = TARGETS[name]
    test = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )(given(strategy)(check))
    test()


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz(name: str) -> None:
    fuzz(name, max_examples=120)


# ---------------------------------------------------------------------------- huge inputs


HUGE = {
    "prose": ("增值税" * 10 + "答案：B，合计1,234.56元。ABD\n") * 80_000,  # 10.2 MB as UTF-8
    "json": '{"违法性质": "偷税", "分析理由": "' + "理由" * 1_700_000 + '"}',
    "deep_array": "[" * 1_000_000 + "]" * 1_000_000,
    "deep_object": '{"a":' * 200_000 + "1" + "}" * 200_000,
    "unclosed": "{" * 1_000_000,
}


#: Every output type on 10 MB of prose; the parsers that read JSON (numbers, fields) on
#: JSON nested a million levels deep. benchmarks/fuzz_parsers.py times the whole matrix.
HUGE_CASES = [(task, "prose") for task in ("TaxTopic", "TaxCalc", "TaxMCQ", "TaxRead", "TaxInspect", "TaxQA")] + [
    (task, shape) for task in ("TaxCalc", "TaxInspect") for shape in ("json", "deep_array", "deep_object", "unclosed")
]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "shape"), HUGE_CASES)
def test_huge_prediction_is_bounded(task: str, shape: str) -> None:
    """Huge inputs finish and what scoring keeps of them is no larger than the input.

    No wall-clock or memory bound here (it would pass or fail with the machine's load):
    ``benchmarks/fuzz_parsers.py`` times the same matrix and reports its peak RSS.
    """
    text = HUGE[shape]
    assert len(text.encode("utf-8")) >= 1_000_000
    item = prepare_item(REGISTRY[task], _records()[task], 0, text, None)
    assert item.status in ("ok", "format_failure")
    # Bounded output: the extraction, the fields and the semantic pairs hold at most one
    # copy of the input (plus the field names and statuses), never a blown-up structure.
    slack = 4096
    assert len(repr(item.extracted)) <= len(text) + slack
    assert len(repr(item.fields)) <= len(text) + slack
    assert sum(len(pair.candidate) for pair in item.pairs) <= len(text)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_deeply_nested_data_file_is_a_clear_problem(tmp_path: Path, suffix: str) -> None:
    deep = "[" * 1_000_000 + "]" * 1_000_000
    if suffix == ".jsonl":
        body = json.dumps({"id": "1", "query": "q", "answer": 1.0}) + "\n" + deep + "\n"
    else:
        body = "[" + json.dumps({"id": "1", "query": "q", "answer": 1.0}) + "," + deep + "]"
    (tmp_path / f"TaxCalc{suffix}").write_text(body, encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_data(tmp_path, REGISTRY)
    assert str(tmp_path) in str(err.value)
    assert "Traceback" not in str(err.value)


def test_huge_data_record_loads(tmp_path: Path) -> None:
    big = {"id": "1", "query": "请计算。" + "资料" * 5_000_000, "answer": 1.0}
    (tmp_path / "TaxCalc.jsonl").write_text(json.dumps(big, ensure_ascii=False) + "\n", encoding="utf-8")
    loaded = load_data(tmp_path, REGISTRY)
    assert len(loaded.records["TaxCalc"][0].query) > 10_000_000


