"""One sample, one frozen value from the reader to the report (issue 38): the sample a kind
reads is the :class:`taxpraben.results.Sample` samples.jsonl holds and the report reads back; a
kind's prepare returns what it read (``Prepared``), its finish what it scored (``Finished``),
the judge's edit a new sample with the edit in its history; no assignment to a sample anywhere
in src/, and no other shape of a sample (``Item``, ``SampleLine``, ``Shown``) left."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from taxpraben.kinds import kind_of
from taxpraben.kinds.base import Finished, Prepared, SemanticValues
from taxpraben.records import Record
from taxpraben.results import Prediction, Sample
from taxpraben.scoring.items import finalize_item, prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)
SRC = Path(__file__).resolve().parents[1] / "src" / "taxpraben"
NO_SEMANTIC = SemanticValues(None, None)

RECORDS = {
    "TaxSCQ": Record("TaxSCQ", "1", "题目：适用6%税率的是（ ）。\nA. 建筑服务\nB. 信息技术服务\n答案：", "信息技术服务",
                     choices=("建筑服务", "信息技术服务"), gold=1),
    "TaxMCQ": Record("TaxMCQ", "1", "多选题：\nA. 甲\nB. 乙\nC. 丙", "AB"),
    "TaxCalc": Record("TaxCalc", "1", "计算应纳税额（元）。", "44000"),
    "TaxQA": Record("TaxQA", "1", "问：", "增值税是流转税。"),
    "TaxInspect": Record("TaxInspect", "1", "请输出JSON", {"违法性质": "偷税", "少缴税款": 260000, "分析理由": "隐匿收入。"}),
}
OUTPUTS = {"TaxSCQ": "答案：B", "TaxMCQ": "答案：AB", "TaxCalc": "答案：44000元", "TaxQA": "增值税是流转税。",
           "TaxInspect": '{"违法性质": "偷税", "少缴税款": 260000, "分析理由": "隐匿收入"}'}


def test_a_sample_cannot_be_assigned() -> None:
    item = prepare_item(REGISTRY["TaxCalc"], RECORDS["TaxCalc"], 0, "答案：44000元")
    assert type(item) is Sample
    with pytest.raises(ValidationError, match="frozen"):
        item.status = "format_failure"  # type: ignore[misc]  # the point: a frozen sample refuses it


@pytest.mark.parametrize("task", sorted(RECORDS))
def test_each_kind_returns_what_it_read_and_scored(task: str) -> None:
    spec, record = REGISTRY[task], RECORDS[task]
    blank = Sample.of(task, "1", 0, Prediction(task, "1", 0, OUTPUTS[task]), gold=record.gold_label)
    prepared = kind_of(spec).prepare(spec, record, blank, OUTPUTS[task], False)
    assert isinstance(prepared, Prepared) and prepared.status == "ok"
    assert (blank.status, blank.extracted, blank.scores, blank.read_by) == ("ok", None, {}, None)  # left as it was
    item = prepare_item(spec, record, 0, OUTPUTS[task])
    assert (item.status, item.extracted, item.scores) == (prepared.status, prepared.extracted, prepared.scores)
    assert item.read_by == prepared.reading.read_by and item.read_by is not None
    finished = kind_of(spec).finish(spec, item, NO_SEMANTIC)
    assert isinstance(finished, Finished)
    assert item.score is None  # finishing makes a new sample
    done = finalize_item(spec, item, NO_SEMANTIC)
    assert done is not item and (done.scores, done.score) == (finished.scores, finished.score)


def test_a_judge_edit_makes_a_new_item_with_its_history() -> None:
    item = prepare_item(REGISTRY["TaxCalc"], RECORDS["TaxCalc"], 0, "这道题考查增值税。")
    assert item.status == "format_failure"
    edited = item.edited("adopted", "judge:m", status="ok", extracted="44000", read_by="judge:m")
    again = edited.edited("audited", "judge:m", judge_reply="44000")
    assert (item.status, item.extracted, item.judge_history) == ("format_failure", None, None)
    assert (edited.status, edited.extracted) == ("ok", "44000")
    assert again.judge_history is not None and edited.judge_history is not None
    assert [h["edit"] for h in again.judge_history] == ["adopted", "audited"]
    assert again.judge_history[0]["before"] == {"status": "format_failure", "extracted": None, "read_by": None}
    assert edited.judge_history == again.judge_history[:1]
    line = again.to_json()  # the history is written with the sample, and read back as it was
    assert Sample.model_validate(json.loads(json.dumps(line))).judge_history == again.judge_history


@pytest.mark.parametrize("task", sorted(RECORDS))
def test_the_scored_sample_is_the_line_and_the_line_reads_back_the_same(task: str, tmp_path: Path) -> None:
    """The finished sample is written as it is, and the report's reader of samples.jsonl gives
    back a sample of the same class holding the same values: one shape in memory, on disk and
    in the report."""
    from taxpraben.report.load import iter_samples
    from taxpraben.scoring.task_scores import sample_text

    spec, record = REGISTRY[task], RECORDS[task]
    done = finalize_item(spec, prepare_item(spec, record, 0, OUTPUTS[task]), NO_SEMANTIC)
    (tmp_path / "samples.jsonl").write_text(sample_text([done]), encoding="utf-8")
    [back] = iter_samples(tmp_path)
    line = done.to_json()
    assert type(back) is Sample and list(line)[:4] == ["task", "id", "run", "status"]
    assert back.to_json() == json.loads(json.dumps(line)) and list(back.to_json()) == list(line)
    for name in Sample.model_fields:  # every value the line holds, the same in memory
        if name in line:
            assert json.loads(json.dumps(getattr(done, name))) == getattr(back, name), name
    assert done.generation is not None and done.generation.prediction == OUTPUTS[task] and back.generation is None
    assert (done.query, back.query) == (None, None)  # the prompt goes on the first run's line (score_task)


def test_evolve_refuses_an_unknown_name_and_leaves_the_sample() -> None:
    item = prepare_item(REGISTRY["TaxCalc"], RECORDS["TaxCalc"], 0, "答案：44000元")
    with pytest.raises(TypeError, match="no field colour"):
        item.evolve(colour="red")
    moved = item.evolve(status="error", pairs=())
    assert (item.status, moved.status, moved.extracted, moved.generation) == ("ok", "error", item.extracted, item.generation)
    assert item.pairs == () or moved.pairs == ()  # what scoring works with changes by name too


def test_no_other_shape_of_a_sample_is_left() -> None:
    """``Item`` (scoring's working state), ``SampleLine`` and the report's ``Shown`` are gone:
    no class of those names in src/."""
    gone = {"Item", "SampleLine", "Shown"}
    found = {(path.relative_to(SRC).as_posix(), node.name) for path in SRC.rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ClassDef) and node.name in gone}  # fmt: skip
    assert found == set()


def _item_fields() -> set[str]:
    working = {name.lstrip("_") for name in Sample.__private_attributes__}
    return set(Sample.model_fields) | working


def test_no_module_assigns_to_a_sample() -> None:
    """Every ``x.<sample field> = ...`` in src/ is on an object that is no sample (a view, an
    accumulator) — those listed here; a sample is made new, never assigned."""
    allowed = {("parsing/readers/number.py", "failure"), ("parsing/readers/fields.py", "failure"),
               ("parsing/readers/span.py", "failure"), ("parsing/readers/span.py", "gold"),
               ("report/samples.py", "scores"),
               ("models/openai.py", "usage"),  # a backend's Completion, counted when the server sent none
               ("run/runner.py", "cached")}  # the run's counters (RunStats.cached += ...)
    found = set()
    names = _item_fields()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else []
            flat = [t for target in targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
            for target in flat:
                if isinstance(target, ast.Attribute) and target.attr in names and not (
                        isinstance(target.value, ast.Name) and target.value.id == "self" and path.name != "base.py"):
                    found.add((path.relative_to(SRC).as_posix(), target.attr))
    assert found - allowed == set()


def _held(sample: Sample) -> str:
    """Everything a sample holds, its working values too, as one text (to compare later)."""
    working = {"generation": sample.generation.to_json() if sample.generation is not None else None,
               "pairs": [list(vars(p).values()) for p in sample.pairs],
               "labels": [sample.label_gold, sample.label_pred]}  # fmt: skip
    return json.dumps([sample.__dict__, working], ensure_ascii=False, sort_keys=True, default=repr)


def test_scoring_never_changes_a_sample_it_was_given() -> None:
    """Every sample read ahead (the readings a run hands to scoring) holds exactly what it
    held once scoring has read, finished and written them all: each step made new samples."""
    from taxpraben.data.loader import load_data
    from taxpraben.scoring import ScoringSettings, score_predictions
    from taxpraben.scoring.items import Readings
    from taxpraben.scoring.pipeline import Hooks

    loaded = load_data("sample", REGISTRY, None, 1)
    texts = ["答案是B。", "应纳税额为 1,200 元", '```json\n{"结论": "补税"}\n```', "不知道", ""]
    preds = [Prediction(task, rec.id, run, texts[(k + run) % len(texts)])
             for run in range(2) for task, recs in loaded.records.items() for k, rec in enumerate(recs)]  # fmt: skip
    settings = ScoringSettings(semantic=False)
    readings = Readings(settings.profile)
    for p in preds:
        rec = next(r for r in loaded.records[p.task] if r.id == p.id)
        readings.read_ahead(REGISTRY[p.task], rec, p)
    given = [readings.peek(REGISTRY[p.task], next(r for r in loaded.records[p.task] if r.id == p.id), p) for p in preds]
    before = [_held(s) for s in given if s is not None]
    finished: list[Sample] = []
    score_predictions(loaded, preds, REGISTRY, settings, hooks=Hooks(readings=readings, item_sink=finished.append))
    assert len(finished) == len(preds) and not {id(s) for s in finished} & {id(s) for s in given}
    assert [_held(s) for s in given if s is not None] == before


def test_no_module_writes_into_a_samples_values() -> None:
    """No ``x.scores[k] = v``, ``x.fields.update(...)``, ``x.judge_history.append(...)`` (or any
    in-place change of a sample's dict or list value) in src/, but on the objects listed (the
    report browser's accumulator of per-metric scores, which is no sample)."""
    containers = {"scores", "fields", "judge_history", "usage", "extracted", "evidence", "judge_extracted"}
    mutators = {"append", "extend", "insert", "update", "pop", "popitem", "setdefault", "clear", "remove", "sort"}
    allowed = {("report/samples.py", "self.scores")}
    found = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in mutators:
                targets = [node.func.value]
            for target in targets:
                inner = target.value if isinstance(target, ast.Subscript) else target
                if isinstance(inner, ast.Attribute) and inner.attr in containers and (
                        isinstance(target, ast.Subscript) or isinstance(node, ast.Call)):
                    found.add((path.relative_to(SRC).as_posix(), ast.unparse(inner)))
    assert found - allowed == set()
