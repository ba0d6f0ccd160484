"""The sample browser's data made task by task as ``score`` finishes each task
(``BrowserData.add_task``, through the pipeline's ``task_sink``): the same bytes as adding every
item, whatever order the tasks come in; and the prompt-copy check of a generation output made
once per distinct prediction of an item."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxpraben.data.loader import LoadedData, load_data
from taxpraben.report.samples import BrowserData, browser_entry, prepare_task
from taxpraben.results import Sample
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import Hooks, ScoringSettings, score_predictions, score_to_dir
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
RUNS = 3


@pytest.fixture(scope="module")
def sample() -> LoadedData:
    return load_data("sample", REG)


def _predictions(sample: LoadedData) -> list[Prediction]:
    """Right, unreadable, long (cut in the page), failed and prompt-copying answers; a run
    that repeats another's answer (a reference in the page); one prediction missing."""
    out = []
    for run in range(RUNS):
        for task, recs in sample.records.items():
            for k, rec in enumerate(recs):
                if k == 1 and run == 2:
                    continue
                right = rec.gold_label if REG[task].type == "classification" else rec.answer_text
                texts = [str(right), "我不确定", "应纳税额为 1,200 元。" * 200, rec.query, str(right)]
                error = "HTTP 500" if k == 2 else None
                out.append(Prediction(task, rec.id, run, texts[(k + run) % len(texts)], error=error))
    return out


@pytest.fixture(scope="module")
def finished(sample: LoadedData) -> list[Sample]:
    """Every finished sample, in scoring's order; the generation tasks' with semantic scores
    (set here: the histograms' values), as the scorers would give them."""
    items: list[Sample] = []
    settings = ScoringSettings(semantic=False, bootstrap=0, runs=RUNS)
    score_predictions(sample, _predictions(sample), REG, settings, hooks=Hooks(item_sink=items.append))
    return [
        it.evolve(scores={**it.scores, "bertscore": 0.5 + n % 7 / 20, "bartscore": 0.25})
        if it.status == "ok" and "bertscore" in it.scores else it
        for n, it in enumerate(items)
    ]


def test_tasks_added_whole_in_any_order_give_the_data_of_adding_every_item(
    sample: LoadedData, finished: list[Sample]
) -> None:
    order = list(sample.records)
    by_task = {task: [it for it in finished if it.task == task] for task in order}
    whole = BrowserData(finished, order)
    with whole, BrowserData() as made:
        # Backwards: each task added whole is made for position 0 and moved to its own.
        for index, task in reversed(list(enumerate(order))):
            if index == 1:
                made.adopt(prepare_task(task, index, by_task[task]))
            elif index == 2:
                for it in by_task[task]:
                    made.add(it)
            else:
                made.add_task(task, by_task[task])
        made.finish(order)
        assert b"".join(made.json_chunks()) == b"".join(whole.json_chunks())
        assert (made.n_samples, made.metrics, made.cut_predictions, made.tasks) == (
            whole.n_samples, whole.metrics, whole.cut_predictions, whole.tasks)  # fmt: skip
        assert list(made.scores.items()) == list(whole.scores.items())
        assert made.cut_predictions > 0 and len({task for task, _ in whole.scores}) > 2
        assert b'"cp":1' in b"".join(whole.json_chunks())  # a copy of the prompt scored as text is in


def test_a_task_added_whole_takes_no_more_items(finished: list[Sample]) -> None:
    task = finished[0].task
    items = [it for it in finished if it.task == task]
    with BrowserData() as data:
        data.add_task(task, items)
        with pytest.raises(ValueError, match="made already"):
            data.add(items[0])
        with pytest.raises(ValueError, match="already has items"):
            data.add_task(task, items)
        with pytest.raises(ValueError, match="already has items"):
            data.adopt(prepare_task(task, 0, items))
        data.finish([task])
        with pytest.raises(RuntimeError, match="finished"):
            data.add_task("TaxCalc", [])
    with BrowserData() as added:
        added.add(items[0])
        with pytest.raises(ValueError, match="already has items"):
            added.add_task(task, items)


def test_scoring_hands_each_task_whole_to_the_task_sink(sample: LoadedData, tmp_path: Path) -> None:
    """``score`` gives the browser each task's finished samples at once (task_sink ->
    BrowserData.add_task); the page is the one read back from the files, byte for byte."""
    from taxpraben.report import write_reports
    from taxpraben.report.view import view_of

    handed: list[tuple[str, list[Sample]]] = []
    settings = ScoringSettings(semantic=False, bootstrap=0, runs=RUNS)
    with BrowserData() as browser:

        def sink(task: str, items: list[Sample]) -> None:
            handed.append((task, items))
            browser.add_task(task, items)

        scored = score_to_dir(sample, _predictions(sample), REG, tmp_path, settings, hooks=Hooks(task_sink=sink))
        assert scored.typed is not None
        write_reports(tmp_path, view_of(scored.typed, tmp_path, written_here=True), browser=browser)
    assert [task for task, _ in handed] == list(sample.records)
    for task, items in handed:
        n = len(sample.records[task])
        assert [(it.task, it.run) for it in items] == [(task, run) for run in range(RUNS) for _ in range(n)]
    in_memory = (tmp_path / "report.html").read_text(encoding="utf-8")
    write_reports(tmp_path)  # results.json and samples.jsonl read back
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == in_memory


def test_the_copy_check_runs_once_per_distinct_prediction_of_an_item(monkeypatch: pytest.MonkeyPatch) -> None:
    import taxpraben.parsing.prompt_copy as prompt_copy

    query = "请概述增值税小规模纳税人的征收率及适用范围，并说明其与一般纳税人的区别。"
    texts = [query, query, "小规模纳税人适用3%征收率。", query]
    rows = [Sample.of("TaxQA", "1", run, Prediction("TaxQA", "1", run, text), gold="金句") for run, text in
            enumerate(texts)]  # fmt: skip
    rows = [it.evolve(query=query if it.run == 0 else None, read_by="rule:text.whole-output") for it in rows]
    asked: list[str] = []
    real = prompt_copy.own_answer

    def counted(text: str, prompt: str, **kwargs: object) -> prompt_copy.OwnAnswer:
        asked.append(text)
        return real(text, prompt, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(prompt_copy, "own_answer", counted)
    entry, _, _ = browser_entry(0, "1", rows)
    assert [run.get("cp") for run in entry["r"]] == [1, 1, None, 1]  # type: ignore[union-attr]
    assert asked == [query, "小规模纳税人适用3%征收率。"]
