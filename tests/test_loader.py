"""Data loading and validation: every layout of the contract and every problem, precisely."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.data.loader import DataError, Problem, load_data, validate_data
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
    ("TaxTopic.jsonl", [{"id": "1", "query": "q", "answer": "增值税", "choices": ["增值税", "增值税"]}], (1, "choices", "distinct")),
    ("TaxMCQ.jsonl", [{"id": "1", "query": "q", "answer": "ACF"}], (1, "answer", "option letters")),
    ("TaxInspect.jsonl", [{"id": "1", "query": "q", "answer": "偷税，补税1000元"}], (1, "answer", "must be a JSON object")),
    ("TaxPlan.jsonl", [{"id": "1", "query": "q", "answer": {"方案一税负": 1}}], (1, "answer", "lacks field(s)")),
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
    import tracemalloc

    rows = [{"id": str(i), "query": "计算" * 200, "answer": i} for i in range(20000)]
    path = tmp_path / "TaxCalc.json"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    size = path.stat().st_size
    from taxpraben.data.loader import iter_checked

    tracemalloc.start()
    n = sum(1 for _ in iter_checked(path, REG["TaxCalc"]))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert n == 20000
    assert peak < size / 4, (peak, size)


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
