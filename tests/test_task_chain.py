"""A task spec may name its own chain of reading rules (``reading: {chain: [...]}``), as
lm-evaluation-harness's ``filter_list`` does: adding a dataset read by its own chain is a
data change; a chain naming a rule its reader has not is refused when the spec is loaded,
naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.task_spec import spec_json
from taxpraben.tasks import load_registry
from taxpraben.tasks.registry import TaskSpecError

SPEC = """name: {name}
name_zh: 我的测验
description: Single-choice questions read by their own chain.
type: classification
bloom: apply
metrics: [acc]
classification:
  option_letters: true
reading:
  chain: [{chain}]
"""
RECORD = {"id": "q1", "query": "以下是单项选择题。\n题目：适用6%税率的是（ ）。\nA. 信息技术服务\nB. 建筑服务\n答案：",
          "choices": ["信息技术服务", "建筑服务"], "answer": "信息技术服务"}


def _task_dir(root: Path, chain: str, name: str = "MyQuiz") -> Path:
    tasks = root / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / f"{name}.yaml").write_text(SPEC.format(name=name, chain=chain), encoding="utf-8")
    return tasks


def test_a_dataset_with_its_own_chain_is_a_data_change(tmp_path: Path) -> None:
    tasks = _task_dir(tmp_path, "veto.copy-of-prompt, choice.lead-sentence, veto.no-answer")
    data = tmp_path / "data"
    data.mkdir()
    (data / "MyQuiz.jsonl").write_text(json.dumps(RECORD, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--model", "baseline:first-choice", "--task-dir", str(tasks),
                                      "--data", str(data), "--tasks", "MyQuiz", "--runs", "1", "--out", str(out),
                                      "--no-semantic"])
    assert result.exit_code in (0, 3, 4), result.output
    line = json.loads((out / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    # The default chain reads the bare answer "A" by choice.bare-answer; this one has no such rule.
    assert (line["prediction"], line["status"], line["read_by"]) == ("A", "ok", "rule:choice.lead-sentence")
    explained = CliRunner().invoke(app, ["explain", str(out), "MyQuiz", "q1", "--task-dir", str(tasks)],
                                   env={"COLUMNS": "200"})
    assert explained.exit_code == 0, explained.output
    assert "fired  choice.lead-sentence" in explained.output and "choice.bare-answer" not in explained.output


def test_the_default_chain_reads_the_same_output_otherwise(tmp_path: Path) -> None:
    from taxpraben.data.checks import check_record
    from taxpraben.scoring.items import prepare_item

    registry = load_registry([_task_dir(tmp_path, "veto.copy-of-prompt, choice.lead-sentence, veto.no-answer")],
                             use_env=False)
    own, default = registry["MyQuiz"], registry["TaxSCQ"]
    assert own.reading_chain == ("veto.copy-of-prompt", "choice.lead-sentence", "veto.no-answer")
    assert default.reading_chain is None
    record, _ = check_record(dict(RECORD), own, Path("MyQuiz.jsonl"), 1, "test")
    assert record is not None
    assert prepare_item(own, record, 0, "A").read_by == "rule:choice.lead-sentence"
    assert prepare_item(own, record, 0, "答案：A").veto == "veto.no-answer"


@pytest.mark.parametrize(("chain", "said"), [
    ("veto.copy-of-prompt, choice.guess", "'choice.guess' is no rule"),
    ("veto.copy-of-prompt, letters.last-group", "'letters.last-group' is not a rule of the label reader"),
    ("choice.bare-answer, choice.bare-answer", "choice.bare-answer named twice"),
])
def test_a_chain_with_a_rule_its_reader_has_not_is_refused_at_load(tmp_path: Path, chain: str, said: str) -> None:
    tasks = _task_dir(tmp_path, chain)
    with pytest.raises(TaskSpecError) as caught:
        load_registry([tasks], use_env=False)
    message = str(caught.value)
    assert str(tasks / "MyQuiz.yaml") in message and "reading.chain" in message and said in message


def test_a_spec_without_a_chain_keeps_its_json(tmp_path: Path) -> None:
    registry = load_registry(use_env=False)
    assert all("reading" not in spec_json(spec) for spec in registry.values())
    own = load_registry([_task_dir(tmp_path, "choice.bare-answer, veto.no-answer")], use_env=False)["MyQuiz"]
    assert spec_json(own)["reading"] == {"chain": ["choice.bare-answer", "veto.no-answer"]}
