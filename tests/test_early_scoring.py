"""Tasks scored while the later ones generate (``taxpraben.scoring.early``): the same figures
and the same samples.jsonl as scoring them all at the end, taken only when they were scored
from the very predictions the end scores; a run scores every task early when each completes
in order, and ``score`` of its predictions.jsonl agrees with it."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taxpraben.cli import build_app
from taxpraben.data.loader import LoadedData, load_data
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import Hooks, ScoringSettings, score_predictions
from taxpraben.scoring.early import EarlyScores
from taxpraben.scoring.items import Readings
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
RUNS = 2


@pytest.fixture(scope="module")
def sample() -> LoadedData:
    return load_data("sample", REG)


def answers(sample: LoadedData, seed: int = 7) -> list[Prediction]:
    """Answers right, wrong, unreadable and failed, run by run: every status and a bootstrap
    that the order of its draws would change."""
    rng = random.Random(seed)
    out = []
    for run in range(RUNS):
        for task, recs in sample.records.items():
            for rec in recs:
                roll = rng.random()
                if roll < 0.1:
                    out.append(Prediction(task, rec.id, run, "", error="HTTP 500"))
                    continue
                right = rec.gold_label if REG[task].type == "classification" else rec.answer_text
                text = str(right) if roll < 0.6 else ("我不确定" if roll < 0.8 else "答案：42")
                out.append(Prediction(task, rec.id, run, text))
    return out


def entries_of(sample: LoadedData, preds: list[Prediction], task: str) -> list[tuple[Record, int, Prediction]]:
    by_key = {(p.task, p.id, p.run): p for p in preds}
    return [(rec, run, by_key[(task, rec.id, run)]) for run in range(RUNS) for rec in sample.records[task]]


def settings() -> ScoringSettings:
    return ScoringSettings(semantic=False, bootstrap=50, seed=3, runs=RUNS)


def scored_at_the_end(sample: LoadedData, preds: list[Prediction]) -> tuple[dict[str, Any], list[str]]:
    lines: list[str] = []
    scored = score_predictions(sample, preds, REG, settings(), hooks=Hooks(sample_sink=lines.append))
    return scored.results, lines


def scored_early(
    sample: LoadedData, preds: list[Prediction], order: list[str], given: list[Prediction] | None = None,
) -> tuple[dict[str, Any], list[str], list[str] | None]:  # fmt: skip
    """Tasks completed in ``order`` (each scored early as far as the data's order allows),
    then the end scored with ``given`` (the same predictions unless said)."""
    readings = Readings(settings().profile)
    early = EarlyScores(REG, settings(), readings, list(sample.records))
    for task in order:
        early.complete(task, entries_of(sample, preds, task))
    seen: list[list[str] | None] = []
    taken = early.taken

    def spy(*args: Any, **kwargs: Any) -> Any:
        result = taken(*args, **kwargs)
        seen.append(None if result is None else list(result.tasks))
        return result

    early.taken = spy  # type: ignore[method-assign]
    lines: list[str] = []
    scored = score_predictions(sample, given or preds, REG, settings(),
                               hooks=Hooks(sample_sink=lines.append, readings=readings, early=early))
    return scored.results, lines, seen[0]


def same(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in ("tasks", "groups", "overall", "ledger"):
        assert a[key] == b[key], key
    assert a["meta"]["counts"] == b["meta"]["counts"]


def test_tasks_scored_early_give_what_the_end_gives(sample: LoadedData) -> None:
    preds = answers(sample)
    results, lines = scored_at_the_end(sample, preds)
    tasks = list(sample.records)
    early_results, early_lines, taken = scored_early(sample, preds, tasks)
    assert taken == tasks
    same(early_results, results)
    assert "".join(early_lines) == "".join(lines)


def test_a_task_completed_out_of_order_waits_for_the_ones_before_it(sample: LoadedData) -> None:
    preds = answers(sample)
    results, lines = scored_at_the_end(sample, preds)
    tasks = list(sample.records)
    # the third task first, then the first: the first is scored, the second is not complete
    _, _, taken = scored_early(sample, preds, [tasks[2], tasks[0]])
    assert taken == [tasks[0]]
    # every task but the second: only the first, the rest at the end, the same figures
    early_results, early_lines, taken = scored_early(sample, preds, [t for t in tasks if t != tasks[1]])
    assert taken == [tasks[0]]
    same(early_results, results)
    assert "".join(early_lines) == "".join(lines)


def test_a_generation_shared_between_runs_is_left_to_the_end(sample: LoadedData) -> None:
    preds = answers(sample)
    tasks = list(sample.records)
    readings = Readings(settings().profile)
    early = EarlyScores(REG, settings(), readings, tasks)
    early.complete(tasks[0], entries_of(sample, preds, tasks[0]))
    shared = [(rec, run, p if run == 0 else entries_of(sample, preds, tasks[1])[i % len(sample.records[tasks[1]])][2])
              for i, (rec, run, p) in enumerate(entries_of(sample, preds, tasks[1]))]  # fmt: skip
    early.complete(tasks[1], shared)  # run 1 handed run 0's prediction: not its own
    early.complete(tasks[2], entries_of(sample, preds, tasks[2]))
    by_key = {(p.task, p.id, p.run): p for p in preds}
    taken = early.taken(sample, list(range(RUNS)), by_key)
    assert taken is not None and list(taken.tasks) == [tasks[0]]


def test_what_was_not_scored_from_these_predictions_is_not_taken(sample: LoadedData) -> None:
    preds = answers(sample)
    results, lines = scored_at_the_end(sample, preds)
    tasks = list(sample.records)
    # The end is handed equal predictions, but not the ones the tasks were scored from.
    copies = [p.model_copy() for p in preds]
    early_results, early_lines, taken = scored_early(sample, preds, tasks, given=copies)
    assert taken is None
    same(early_results, results)
    assert "".join(early_lines) == "".join(lines)


def test_scorers_to_load_or_runs_unknown_turn_it_off() -> None:
    tasks = list(REG)
    assert EarlyScores.applies(REG, settings(), tasks)
    assert not EarlyScores.applies(REG, ScoringSettings(runs=RUNS), tasks)  # BERTScore to load
    assert EarlyScores.applies(REG, ScoringSettings(runs=RUNS), ["TaxTopic", "TaxSCQ"])  # none needed
    assert not EarlyScores.applies(REG, ScoringSettings(semantic=False), tasks)  # runs unknown


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.output


def test_a_run_scores_every_task_early_and_as_score_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str] | None] = []
    taken = EarlyScores.taken

    def spy(self: EarlyScores, *args: Any, **kwargs: Any) -> Any:
        result = taken(self, *args, **kwargs)
        seen.append(None if result is None else list(result.tasks))
        return result

    monkeypatch.setattr(EarlyScores, "taken", spy)
    common = ["--data", "sample", "--no-semantic", "--runs", str(RUNS)]
    code, output = invoke("run", "--model", "baseline:random", *common, "--no-cache", "--concurrency", "1",
                          "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, output
    assert seen == [list(load_data("sample", REG).records)]  # each task completed in order: all early
    code, output = invoke("score", "--predictions", str(tmp_path / "run" / "predictions.jsonl"), *common,
                          "--out", str(tmp_path / "score"))  # fmt: skip
    assert code == 0, output
    assert len(seen) == 1  # score has nothing early
    ran, rescored = (json.loads((tmp_path / d / "results.json").read_text(encoding="utf-8")) for d in ("run", "score"))
    for key in ("tasks", "groups", "overall"):
        assert ran[key] == rescored[key], key
    assert (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8") == (
        tmp_path / "score" / "samples.jsonl"
    ).read_text(encoding="utf-8")


def test_the_browser_parts_made_ahead_give_the_browser_data_of_adding_every_item(
    sample: LoadedData, tiny_xlnet_dir: Path, tiny_bart_dir: Path,
) -> None:  # fmt: skip
    from taxpraben.report.samples import BrowserData, prepare_task

    items: list[Any] = []
    semantic = ScoringSettings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2, bartscore_model=str(tiny_bart_dir),
                               device="cpu", bootstrap=0, runs=RUNS)  # fmt: skip
    score_predictions(sample, answers(sample), REG, semantic, hooks=Hooks(item_sink=items.append))  # histograms' values too
    order = list(sample.records)
    whole = BrowserData(items, order)
    by_task = {task: [it for it in items if it.task == task] for task in order}
    with BrowserData() as mixed:
        for index, task in enumerate(order):
            if index < 5:
                mixed.adopt(prepare_task(task, index, by_task[task]))
            elif index == 5:
                mixed.adopt(prepare_task(task, 9, by_task[task]))  # made for another position: made again
            else:
                for it in by_task[task]:
                    mixed.add(it)
        mixed.finish(order)
        assert b"".join(mixed.json_chunks()) == b"".join(whole.json_chunks())
        assert (mixed.n_samples, mixed.metrics, mixed.cut_predictions, mixed.tasks) == (
            whole.n_samples, whole.metrics, whole.cut_predictions, whole.tasks)  # fmt: skip
        assert list(mixed.scores.items()) == list(whole.scores.items())
        assert len({task for task, _ in whole.scores}) > 2
        with pytest.raises(RuntimeError):
            mixed.adopt(prepare_task(order[0], 0, by_task[order[0]]))
    whole.close()
    with BrowserData() as twice:
        twice.add(by_task[order[0]][0])
        with pytest.raises(ValueError, match="already has items"):
            twice.adopt(prepare_task(order[0], 0, by_task[order[0]]))
