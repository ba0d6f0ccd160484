"""Data loading and validation: every layout of the contract and every problem, precisely."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.data.loader import load_data, validate_data
from taxpraben.data.problems import DataError, Problem
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)

CALC = [
    {"id": "c1", "query": "计算增值税：...", "answer": 13000.0, "source_doc": "练习册"},
    {"id": "c2", "query": "计算印花税：...", "answer": "1,560.50"},
]
TOPIC = [
    {"Id": 7, "query": "判断主题", "answer": "增值税", "choices": ["增值税", "企业所得税"], "gold": 0},
    {"data_id": "t2", "query": "判断主题", "answer": "企业所得税", "choices": ["增值税", "企业所得税"]},
    {"query": "判断主题", "answer": "增值税", "choices": ["增值税", "企业所得税"], "gold": 0},
]


def write_jsonl(path: Path, rows: list, bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def errors_of(data_dir: Path) -> list[Problem]:
    _, problems, _ = validate_data(data_dir, REG)
    return [p for p in problems if p.severity == "error"]


@pytest.mark.parametrize("layout", ["jsonl", "json", "parquet", "dir-jsonl", "dir-json", "dir-parquet", "bom"])
def test_every_layout_loads_the_same_records(tmp_path: Path, layout: str) -> None:
    base = tmp_path / "TaxTopic" / "test" if layout.startswith("dir-") else tmp_path / "TaxTopic"
    fmt = layout.removeprefix("dir-")
    if fmt in ("jsonl", "bom"):
        write_jsonl(base.with_suffix(".jsonl"), TOPIC, bom=fmt == "bom")
    elif fmt == "json":
        base.parent.mkdir(parents=True, exist_ok=True)
        base.with_suffix(".json").write_text(json.dumps(TOPIC, ensure_ascii=False), encoding="utf-8")
    else:
        base.parent.mkdir(parents=True, exist_ok=True)
        rows = [{**r, "Id": str(r.get("Id", "")), "data_id": r.get("data_id", ""), "gold": r.get("gold")} for r in TOPIC]
        pq.write_table(pa.Table.from_pylist(rows), base.with_suffix(".parquet"))
    loaded = load_data(tmp_path, REG)
    recs = loaded.records["TaxTopic"]
    assert [r.id for r in recs] == ["7", "t2", "2"]  # Id, data_id, else the index
    assert [r.gold for r in recs] == [0, 1, 0]  # answer-in-choices gives gold 1
    assert recs[1].gold_label == "企业所得税"
    assert loaded.data_hash.startswith("sha256:")


def test_unknown_fields_are_kept_and_numbers_typed(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "TaxCalc.jsonl", CALC)
    recs = load_data(tmp_path, REG).records["TaxCalc"]
    assert recs[0].extra == {"source_doc": "练习册"}
    assert recs[0].answer == 13000.0 and recs[0].answer_text == "13000"
    assert recs[0].source.endswith("TaxCalc.jsonl") and recs[0].line == 1


def test_task_selection_and_limit(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "TaxCalc.jsonl", CALC)
    write_jsonl(tmp_path / "TaxTopic.jsonl", TOPIC)
    loaded = load_data(tmp_path, REG, tasks=["taxtopic"], limit=2)
    assert list(loaded.records) == ["TaxTopic"] and len(loaded.records["TaxTopic"]) == 2
    with pytest.raises(DataError, match=r"no data file for task\(s\) \['TaxMCQ'\]"):
        load_data(tmp_path, REG, tasks=["TaxMCQ"])


def test_mixed_gold_may_be_an_object_or_a_json_string(tmp_path: Path) -> None:
    gold = {"违法性质": "偷税", "少缴税款": 1000, "滞纳金": 50, "罚款": 500, "分析理由": "..."}
    write_jsonl(tmp_path / "TaxInspect.jsonl", [
        {"id": "1", "query": "q", "answer": gold},
        {"id": "2", "query": "q", "answer": json.dumps(gold, ensure_ascii=False)},
    ])
    recs = load_data(tmp_path, REG).records["TaxInspect"]
    assert recs[0].answer == recs[1].answer == gold


BAD_CASES = [
    # (file name, content rows or raw bytes, expected (line, field, message part))
    ("TaxCalc.jsonl", b'{"id": "1", "query": "q", "answer": 1}\n{"id": "2", "query": "q",\n', (2, None, "malformed JSON")),
    ("TaxCalc.jsonl", [{"id": "1", "answer": 1}], (1, "query", "required field is missing")),
    ("TaxCalc.jsonl", [{"id": "1", "query": "   ", "answer": 1}], (1, "query", "non-empty string")),
    ("TaxCalc.jsonl", [{"id": "1", "query": "q"}], (1, "answer", "required field is missing")),
    ("TaxCalc.jsonl", [{"id": "1", "query": "q", "answer": "about 5"}], (1, "answer", "must be a number")),
    ("TaxCalc.jsonl", [["not", "an", "object"]], (1, None, "must be a JSON object")),
    ("TaxCalc.jsonl", [{"id": "1", "query": "q", "answer": 1}, {"id": "1", "query": "q", "answer": 2}], (2, "id", "duplicate id '1' (first at line 1)")),
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "增值税"}], (1, "choices", "needs a list of choices")),
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "增值税", "choices": ["增值税"], "gold": 3}], (1, "gold", "out of range")),
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "增值税", "choices": ["增值税"], "gold": "0"}], (1, "gold", "integer index")),
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "消费税", "choices": ["增值税", "房产税"]}], (1, "answer", "not one of the choices")),
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "房产税", "choices": ["增值税", "房产税"], "gold": 0}], (1, "answer", "disagrees with choices[gold]")),
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "增值税", "choices": []}], (1, "choices", "non-empty list")),
    ("TaxMCQ.jsonl", [{"id": "1", "query": "q", "answer": "ACF"}], (1, "answer", "option letters")),
    ("TaxPlan.jsonl", [{"id": "1", "query": "q", "answer": {"方案一税负": "很多", "方案二税负": 1, "推荐方案": "方案二", "节税金额": 1, "筹划理由": "x"}}], (1, "answer", "gold field '方案一税负' must be a number")),
    ("TaxRead.jsonl", [{"id": "1", "query": "q", "answer": "x", "text": 5}], (1, "text", "must be a string")),
    ("TaxCalc.jsonl", b"", (None, None, "file is empty")),
    ("TaxCalc.jsonl", b"\n\n", (None, None, "holds no records")),
    ("TaxCalc.jsonl", '{"id": "1", "query": "计算", "answer": 1}\n'.encode("gbk") + '{"id": "2", "query": "税额", "answer": 1}\n'.encode("gbk"), (1, None, "not UTF-8")),
    ("TaxCalc.json", b'{"id": "1"}', (None, None, "JSON array")),
    ("TaxCalc.json", b'[{"id": "1", "query": "q", "answer": 1}, {"id": ', (1, None, "malformed JSON")),
]


@pytest.mark.parametrize(("name", "content", "expected"), BAD_CASES, ids=[f"{c[0]}:{c[2][2]}" for c in BAD_CASES])
def test_each_problem_is_reported_with_file_line_and_field(tmp_path: Path, name: str, content, expected) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        write_jsonl(path, content)
    errors = errors_of(tmp_path)
    assert len(errors) == 1, errors
    line, fld, message = expected
    err = errors[0]
    assert err.path == str(path)
    assert err.line == line
    assert err.field == fld
    assert message in err.message
    with pytest.raises(DataError):
        load_data(tmp_path, REG)  # run and score use the same checks


def test_all_problems_at_once_and_unmatched_file_warning(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "TaxCalc.jsonl", [{"id": "1", "query": "q"}, {"id": "2", "answer": 3}])
    write_jsonl(tmp_path / "TaxTopc.jsonl", TOPIC)
    (tmp_path / "TaxMCQ.jsonl").write_bytes(b"")
    _, problems, counts = validate_data(tmp_path, REG)
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity == "warning"]
    assert len(errors) == 3
    assert len(warnings) == 1 and "did you mean 'TaxTopic'" in warnings[0].message
    assert counts["TaxCalc"] == 0


def test_two_files_for_one_task(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "TaxCalc.jsonl", CALC)
    write_jsonl(tmp_path / "TaxCalc" / "test.jsonl", CALC)
    assert any("a second file for task TaxCalc" in p.message for p in errors_of(tmp_path))


def test_json_array_is_streamed_not_loaded_whole(tmp_path: Path) -> None:
    """Records come out before the end of the file is read: a file whose tail is broken
    still yields its first records, then a problem (a whole-file parse would yield nothing)."""
    from taxpraben.data.checks import iter_checked

    rows = [{"id": str(i), "query": "计算" * 200, "answer": i} for i in range(2000)]
    path = tmp_path / "TaxCalc.json"
    body = json.dumps(rows, ensure_ascii=False)
    path.write_text(body[:-1] + ', {"id": "x", "query": "q", "answer": 1', encoding="utf-8")
    items = iter(iter_checked(path, REG["TaxCalc"]))
    first = [next(items) for _ in range(2000)]
    assert [r.id for r in first] == [str(i) for i in range(2000)]  # type: ignore[union-attr]
    rest = list(items)
    assert rest and all(not hasattr(p, "query") for p in rest)


def test_validate_cli_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["validate", "--data", "sample"])
    assert ok.exit_code == 0, ok.output
    assert "0 error(s)" in ok.output
    write_jsonl(tmp_path / "TaxCalc.jsonl", [{"id": "1", "query": "q"}])
    bad = runner.invoke(app, ["validate", "--data", str(tmp_path)])
    assert bad.exit_code == 1
    # Not a terminal: the CLI prints one problem per line, never hard-wrapped.
    problem = "TaxCalc.jsonl:1 field 'answer': required field is missing"
    assert any(problem in line for line in bad.output.splitlines()), bad.output


def test_sample_loads_every_task() -> None:
    loaded = load_data("sample", REG)
    assert list(loaded.records) == list(REG)
    assert all(len(v) >= 12 for v in loaded.records.values())


# --- data as real sets ship it ----------------------------------------------------------------


def warnings_of(data_dir: Path) -> list[Problem]:
    _, problems, _ = validate_data(data_dir, REG)
    return [p for p in problems if p.severity == "warning"]


def test_calc_golds_with_units_load_as_written(tmp_path: Path) -> None:
    rows = [
        {"id": "1", "query": "计算应纳税额", "answer": "76000元"},
        {"id": "2", "query": "计算应纳税额", "answer": "17.14万元"},
        {"id": "3", "query": "计算应纳税额", "answer": "¥1,560.50"},
    ]
    write_jsonl(tmp_path / "TaxCalc.jsonl", rows)
    assert errors_of(tmp_path) == []
    recs = load_data(tmp_path, REG).records["TaxCalc"]
    # kept as written, so the scorer sees the unit
    assert [r.answer for r in recs] == ["76000元", "17.14万元", "¥1,560.50"]


def test_repeated_option_texts_warn_and_keep_the_record(tmp_path: Path) -> None:
    choices = ["增值税", "以上都不对", "消费税", "以上都不对"]
    write_jsonl(tmp_path / "TaxSCQ.jsonl", [
        {"id": "1", "query": "下列属于流转税的是？", "answer": "消费税", "choices": choices},
        {"id": "2", "query": "下列说法正确的是？", "answer": "以上都不对", "choices": choices, "gold": 3},
    ])
    assert errors_of(tmp_path) == []
    warnings = warnings_of(tmp_path)
    assert [(Path(w.path).name, w.line, w.field) for w in warnings] == [
        ("TaxSCQ.jsonl", 1, "choices"), ("TaxSCQ.jsonl", 2, "choices"),
    ]
    assert all("'以上都不对'" in w.message for w in warnings)
    recs = load_data(tmp_path, REG).records["TaxSCQ"]
    assert [r.choices for r in recs] == [tuple(choices), tuple(choices)]
    assert [r.gold for r in recs] == [2, 3]
    assert load_data(tmp_path, REG).warnings == warnings


SCQ_QUERY = "下列税种中，属于中央税的是（ ）。\nA. 消费税\nB. 房产税\nC. 契税\nD. 土地增值税"


@pytest.mark.parametrize(
    ("choices", "answer", "gold"),
    [
        (["A", "B", "C", "D"], "A", 0),  # letters as choices, the answer a letter
        (["A", "B", "C", "D"], "房产税", 1),  # letters as choices, the answer the text in the query
        (["消费税", "房产税", "契税", "土地增值税"], "C", 2),  # texts as choices, the answer a letter
        (["消费税", "房产税", "契税", "土地增值税"], "D. 土地增值税", 3),
        (["消费税", "房产税", "契税", "土地增值税"], "（B）", 1),
        (["消费税", "房产税", "契税", "土地增值税"], "契税", 2),  # the query lists the options too
    ],
)
def test_choices_as_letters_or_texts_set_gold(tmp_path: Path, choices: list[str], answer: str, gold: int) -> None:
    write_jsonl(tmp_path / "TaxSCQ.jsonl", [{"id": "1", "query": SCQ_QUERY, "answer": answer, "choices": choices}])
    assert errors_of(tmp_path) == []
    rec = load_data(tmp_path, REG).records["TaxSCQ"][0]
    assert rec.gold == gold
    assert rec.gold_label == choices[gold]


@pytest.mark.parametrize(
    ("choices", "answer", "gold", "message"),
    [
        (["A", "B", "C", "D"], "印花税", None, "not one of the choices"),  # not listed in the query
        (["消费税", "房产税"], "F", None, "not one of the choices"),  # no option F
        (["消费税", "房产税"], "B. 契税", None, "not one of the choices"),  # letter and text disagree
        (["消费税", "房产税"], "A", 1, "disagrees with choices[gold]"),
    ],
)
def test_answers_naming_no_choice_are_refused(
    tmp_path: Path, choices: list[str], answer: str, gold: int | None, message: str
) -> None:
    row = {"id": "1", "query": SCQ_QUERY, "answer": answer, "choices": choices}
    if gold is not None:
        row["gold"] = gold
    write_jsonl(tmp_path / "TaxSCQ.jsonl", [row])
    errors = errors_of(tmp_path)
    assert len(errors) == 1 and message in errors[0].message, errors


def test_letter_answer_agreeing_with_gold_index_is_fine(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "TaxSCQ.jsonl", [
        {"id": "1", "query": SCQ_QUERY, "answer": "B", "choices": ["消费税", "房产税", "契税"], "gold": 1},
    ])
    assert errors_of(tmp_path) == []
    assert load_data(tmp_path, REG).records["TaxSCQ"][0].gold_label == "房产税"


def test_spec_number_field_of_a_text_gold_must_be_a_number(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "TaxInspect.jsonl", [
        {"id": "1", "query": "q", "answer": "违法性质：偷税\n罚款：待定\n分析理由：隐匿收入，构成偷税。"},
    ])
    errors = errors_of(tmp_path)
    assert [(e.line, e.field) for e in errors] == [(1, "answer")]
    assert "gold field '罚款' must be a number" in errors[0].message


def test_data_stream_yields_what_load_data_keeps_and_the_same_errors(tmp_path: Path) -> None:
    """`run` reads the data as a DataStream while it sends: same records, same order, same
    problems as load_data once read to the end."""
    from taxpraben.data.loader import DataStream

    write_jsonl(tmp_path / "d" / "TaxCalc.jsonl", CALC)
    write_jsonl(tmp_path / "d" / "TaxTopic.jsonl", TOPIC)
    stream = DataStream(tmp_path / "d", REG, None, 2)
    with pytest.raises(RuntimeError):
        stream.result()  # not read yet
    streamed = list(stream)
    loaded = load_data(tmp_path / "d", REG, None, 2)
    assert streamed == [r for records in loaded.records.values() for r in records]
    assert [r.id for r in streamed] == ["7", "t2", "c1", "c2"]  # registry order of tasks
    assert stream.result() == loaded

    bad = [*CALC, {"id": "c3", "query": "计算", "answer": "很多"}]
    write_jsonl(tmp_path / "e" / "TaxCalc.jsonl", bad)
    stream = DataStream(tmp_path / "e", REG)
    assert [r.id for r in stream] == ["c1", "c2"]  # the good records come first...
    with pytest.raises(DataError) as streamed_error:
        stream.result()  # ...and the faulty one is refused at the end, as load_data does
    with pytest.raises(DataError) as loaded_error:
        load_data(tmp_path / "e", REG)
    assert str(streamed_error.value) == str(loaded_error.value)
    assert "TaxCalc.jsonl:3" in str(streamed_error.value)


def test_run_stops_on_faulty_data_and_keeps_what_it_received(tmp_path: Path) -> None:
    bad = [*CALC, {"id": "c3", "query": "计算", "answer": "很多"}]
    write_jsonl(tmp_path / "e" / "TaxCalc.jsonl", bad)
    res = CliRunner().invoke(app, ["run", "--model", "baseline:oracle", "--data", str(tmp_path / "e"), "--tasks", "TaxCalc",
                                   "--runs", "2", "--no-semantic", "--out", str(tmp_path / "o")])  # fmt: skip
    assert res.exit_code == 1, res.output
    assert "TaxCalc.jsonl:3" in res.output and "a TaxCalc gold must be a number" in res.output
    assert not (tmp_path / "o" / "results.json").exists()
