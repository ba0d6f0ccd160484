"""The typed output files (taxpraben.results): faithful writing, lenient reading, clear refusals,
the predictions contract, and docs/results-schema.md kept in sync with the models."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from rich.console import Console

from taxpraben.data.loader import LoadedData, load_data
from taxpraben.report import print_summary
from taxpraben.report.load import ReportError, iter_samples, load_results, read_results, reported
from taxpraben.results import (
    SCHEMA_VERSION,
    FieldFigures,
    GenerationMeta,
    Results,
    Sample,
    ScorerInfo,
    Stat,
)
from taxpraben.results.predictions import (
    Prediction,
    PredictionFileError,
    read_predictions,
    write_predictions,
)
from taxpraben.results.schema_doc import schema_markdown
from taxpraben.scoring import ScoringSettings, score_predictions, score_to_dir
from taxpraben.scoring.pipeline import _results_text
from taxpraben.scoring.task_scores import sample_text
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DOC = ROOT / "docs" / "results-schema.md"


@pytest.fixture(scope="module")
def sample() -> LoadedData:
    return load_data("sample", REG)


def _mixed_predictions(sample: LoadedData) -> list[Prediction]:
    """Golds, unreadable answers, failed generations and one missing item, over two runs."""
    out = []
    for run in range(2):
        for task, recs in sample.records.items():
            spec = REG[task]
            for k, rec in enumerate(recs):
                if run == 1 and k == 0:
                    continue  # missing: scored as an error
                if k % 5 == 1:
                    out.append(Prediction(task, rec.id, run, "", error="HTTP 500"))
                elif k % 5 == 2:
                    out.append(Prediction(task, rec.id, run, "我不知道"))
                else:
                    gold = rec.gold_label if spec.type == "classification" else rec.answer_text
                    out.append(Prediction(task, rec.id, run, gold))
    return out


@pytest.fixture(scope="module")
def scored_without_scorers(sample: LoadedData):
    settings = ScoringSettings(semantic=False, bootstrap=50)
    meta = {"predictions_file": "p.jsonl", "started_at": "2026-11-30T00:00:00+00:00",
            "generation": {"temperature": 0, "top_p": 0.9, "max_tokens": 64}}
    return score_predictions(sample, _mixed_predictions(sample), REG, settings, meta)


# ---------------------------------------------------------------------------- writing


def test_writer_output_is_the_plain_json_of_what_the_pipeline_built(scored_without_scorers) -> None:
    """Validating through the models changes no key, order, value or number type."""
    results = scored_without_scorers.results
    assert _results_text(results) == json.dumps(results, ensure_ascii=False, indent=2) + "\n"
    for line in scored_without_scorers.samples:
        assert sample_text([Sample.trusted(line)]) == json.dumps(line, ensure_ascii=False) + "\n"
    # the caller's meta keys come first, as given; an integer stays an integer
    meta = json.loads(_results_text(results))["meta"]
    assert list(meta)[:3] == ["model", "endpoint", "generation"]
    assert list(meta)[3:5] == ["predictions_file", "started_at"]
    assert meta["generation"] == {"temperature": 0, "top_p": 0.9, "max_tokens": 64}
    assert isinstance(meta["generation"]["temperature"], int)


def test_writer_output_with_semantic_scores_is_unchanged(
    sample: LoadedData, tiny_xlnet_dir: Path, tiny_bart_dir: Path, tmp_path: Path
) -> None:
    """With real (tiny) scorers: fields with aspect scores, mixed items, bootstrap intervals."""
    settings = ScoringSettings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2,
                               bartscore_model=str(tiny_bart_dir), device="cpu", bootstrap=50)
    scored = score_to_dir(sample, _mixed_predictions(sample), REG, tmp_path, settings)
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert text == json.dumps(scored.results, ensure_ascii=False, indent=2) + "\n"
    lines = (tmp_path / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert any(json.loads(line).get("fields") for line in lines)
    again = [sample_text([Sample.model_validate_json(line)]).rstrip("\n") for line in lines]
    assert again == lines
    assert read_results(tmp_path).to_json() == json.loads(text)


def test_sample_lines_are_checked_where_they_are_read(scored_without_scorers, tmp_path: Path) -> None:
    """An item writes its own line (typed by construction); the reader checks every line."""

    lines = scored_without_scorers.samples
    assert all(Sample.model_validate(line).to_json() == line for line in lines)
    (tmp_path / "samples.jsonl").write_text(
        sample_text([Sample.trusted(lines[0])]) + sample_text([Sample.trusted({**lines[1], "status": "fine"})]), encoding="utf-8"
    )
    with pytest.raises(ReportError, match=r"samples.jsonl:2: not a samples line .*status"):
        list(iter_samples(tmp_path))


def test_writer_refuses_what_breaks_the_schema(scored_without_scorers) -> None:
    results = copy.deepcopy(scored_without_scorers.results)
    results["tasks"]["TaxCalc"]["per_run"][0]["run"] = "first"
    with pytest.raises(ValidationError, match=r"tasks\.TaxCalc\.per_run\.0\.run"):
        _results_text(results)


# ---------------------------------------------------------------------------- reading


def _write(out: Path, results: dict) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (None, r"results\.json: no schema_version: not a results\.json written by taxpraben"),
        (SCHEMA_VERSION + 1, r"schema_version 2 is not supported \(this version reads 1\); written by a newer"),
        (0, r"schema_version 0 is not supported \(this version reads 1\); written by an older"),
        ("1", r"schema_version '1' is not supported \(this version reads 1\); expected the integer 1"),
        (True, r"schema_version True is not supported"),
    ],
)
def test_reader_refuses_another_schema_version(scored_without_scorers, tmp_path: Path, version, expected) -> None:
    results = copy.deepcopy(scored_without_scorers.results)
    if version is None:
        del results["schema_version"]
    else:
        results["schema_version"] = version
    out = _write(tmp_path / "old", results)
    with pytest.raises(ReportError, match=expected) as caught:
        read_results(out)
    assert str(out / "results.json") in str(caught.value)


def test_reader_names_the_key_of_the_wrong_type(scored_without_scorers, tmp_path: Path) -> None:
    results = copy.deepcopy(scored_without_scorers.results)
    results["tasks"]["TaxCalc"]["n"] = "twelve"
    results["overall"]["runs"] = "none"
    out = _write(tmp_path / "bad", results)
    with pytest.raises(ReportError, match=r"does not match results schema 1 \(tasks\.TaxCalc\.n: .*overall\.runs"):
        read_results(out)


def test_reader_accepts_an_older_file_and_keeps_what_it_does_not_know(scored_without_scorers, tmp_path: Path) -> None:
    """Counters added later are absent from old files; unknown keys (a plugin's) are kept."""
    results = copy.deepcopy(scored_without_scorers.results)
    for key in ("scored_predictions", "format_failures"):
        del results["meta"]["counts"][key]
    del results["meta"]["warnings"]
    for figures in results["tasks"]["TaxInspect"]["fields"].values():
        del figures["n"], figures["inferred"]
    results["meta"]["plugin"] = {"name": "x", "figures": [1, 2.5]}
    results["tasks"]["TaxCalc"]["metrics"]["rouge_l"] = results["tasks"]["TaxCalc"]["metrics"]["em"]
    model = read_results(_write(tmp_path / "older", results))
    assert model.meta.counts.scored_predictions is None and model.meta.warnings == []
    assert model.to_json() == results
    assert list(model.to_json()["meta"]) == list(results["meta"])
    assert isinstance(model.tasks["TaxCalc"].metrics["rouge_l"], Stat)


def test_field_metrics_are_typed_as_figures() -> None:
    """A field's metric keys are open, but each is a Stat."""
    good = FieldFigures.model_validate({"kind": "number", "em": {"mean": 0.5, "runs": [0.5]}})
    assert isinstance((good.model_extra or {})["em"], Stat)
    with pytest.raises(ValidationError, match="rouge_l"):
        FieldFigures.model_validate({"kind": "text", "rouge_l": {"mean": "high"}})


def test_field_metric_figures_are_its_open_keys_in_the_order_given() -> None:
    figures = FieldFigures.model_validate(
        {"kind": "text", "bertscore": {"mean": 0.7}, "n": 3, "em": None, "format_failure_rate": {"mean": 0.1}}
    )
    assert list(figures.metric_figures) == ["bertscore", "em"]
    assert figures.metric_figures["bertscore"] == Stat(mean=0.7)
    assert figures.metric_figures["em"] is None


def test_given_items_tell_a_key_written_as_null_from_one_never_written() -> None:
    scorer = ScorerInfo.model_validate({"model": "m", "weights": None, "layer": 5, "idf": False})
    keys = ("layer", "idf", "max_tokens", "weights")
    assert scorer.given_items(keys) == [("layer", 5), ("idf", False), ("weights", None)]
    assert ScorerInfo().given_items(keys) == []
    generation = GenerationMeta.model_validate({"top_p": None, "temperature": 0})
    assert generation.given_items(("temperature", "top_p", "seed_base")) == [("temperature", 0), ("top_p", None)]


def test_the_summary_of_the_pipelines_results_is_the_summary_of_the_written_file(
    sample: LoadedData, tmp_path: Path
) -> None:
    """`run` and `score` print the summary from the pipeline's results (through the model),
    `report` from results.json: the same text."""
    settings = ScoringSettings(semantic=False, bootstrap=50)
    scored = score_to_dir(sample, _mixed_predictions(sample), REG, tmp_path, settings)

    def summary(results: Results) -> str:
        out = io.StringIO()
        print_summary(results, [tmp_path / "report.md"], Console(file=out, width=150, color_system=None))
        return out.getvalue()

    text = summary(Results.model_validate(scored.results))
    assert text == summary(load_results(tmp_path))
    assert "not computed" in text and "Scorer unavailable: bertscore: semantic metrics turned off" in text


def test_reported_nulls_the_figures_of_an_unavailable_scorer(scored_without_scorers) -> None:
    results = scored_without_scorers.results
    model = Results.model_validate(results)
    before = model.model_copy(deep=True)
    shown = reported(model).to_json()
    for name, task in results["tasks"].items():
        for key, figure in task["metrics"].items():
            semantic = key in {"bertscore", "bartscore", "bartscore_raw"}
            expected = {"mean": None, "std": None, "ci95": None, "bootstrap_ci95": None,
                        "runs": [None] * len(figure["runs"])} if semantic else figure
            assert shown["tasks"][name]["metrics"][key] == expected
    assert model == before  # the input is not modified


def test_samples_are_read_through_the_model(tmp_path: Path) -> None:
    line = {"task": "TaxCalc", "id": "1", "run": 0, "status": "ok", "prediction": "1", "gold": "1",
            "extracted": 1.0, "scores": {"em": 1.0}, "score": 1.0, "error": None,
            "read_by": "rule:number.last-number", "evidence": [0, 1], "confidence": "low", "extra_key": [1]}
    (tmp_path / "samples.jsonl").write_text(
        json.dumps(line) + "\n\n" + json.dumps({**line, "run": "x"}) + "\n", encoding="utf-8"
    )
    read = iter_samples(tmp_path)
    item = next(read)  # read into its sample: it writes the line it was read from, extra keys kept
    assert isinstance(item, Sample) and item.to_json() == line
    with pytest.raises(ReportError, match=r"samples\.jsonl:3: not a samples line \(run: "):
        next(read)
    (tmp_path / "samples.jsonl").write_text("{oops\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"samples\.jsonl:1: not JSON"):
        list(iter_samples(tmp_path))


def test_sample_line_model_declares_every_key_the_pipeline_writes(scored_without_scorers) -> None:
    declared = set(Sample.model_fields)
    written = {key for line in scored_without_scorers.samples for key in line}
    assert written <= declared


def test_results_model_declares_every_meta_and_task_key_the_pipeline_writes(scored_without_scorers) -> None:
    results = scored_without_scorers.results
    model = Results.model_validate(results)
    assert not model.model_extra and not model.meta.model_extra and not model.meta.counts.model_extra
    assert all(not task.model_extra for task in model.tasks.values())


# ---------------------------------------------------------------------------- predictions


def test_prediction_is_built_positionally_or_by_name() -> None:
    assert Prediction("TaxCalc", "1", 0, "12") == Prediction(task="TaxCalc", id="1", run=0, prediction="12")
    assert Prediction("TaxCalc", "1", 2, "x").key == ("TaxCalc", "1", 2)
    # equal by value, whatever order the keys came in
    assert Prediction.model_validate({"run": 0, "prediction": "12", "id": "1", "task": "TaxCalc"}) == Prediction(
        "TaxCalc", "1", 0, "12"
    )
    assert Prediction("TaxCalc", "1", 0, "12") != Prediction("TaxCalc", "1", 0, "13")
    with pytest.raises(ValidationError, match="prediction"):
        Prediction("TaxCalc", "1", 0)


def test_predictions_file_round_trip_keeps_the_contract(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    lines = [
        '{"task": "TaxCalc", "id": 17, "prediction": {"答案": 5}, "note": null, "tags": ["a"]}',
        '{"task": "TaxQA", "id": "q1", "run": 3, "prediction": null, "error": "timeout", "latency_s": 2}',
        '{"task": "TaxSCQ", "id": "s", "run": 1, "prediction": "B", "model": "openai:m", '
        '"usage": {"prompt_tokens": 3, "completion_tokens": 1}, "latency_s": 0.25, "reasoning": "因为"}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    preds = list(read_predictions(path))
    assert preds[0].id == "17" and preds[0].run == 0 and preds[0].prediction == '{"答案": 5}'
    assert preds[0].extra == {"note": None, "tags": ["a"]}
    written = tmp_path / "out.jsonl"
    write_predictions(written, preds)
    assert [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()] == [
        {"task": "TaxCalc", "id": "17", "run": 0, "prediction": '{"答案": 5}', "note": None, "tags": ["a"]},
        {"task": "TaxQA", "id": "q1", "run": 3, "prediction": "", "latency_s": 2, "error": "timeout"},
        {"task": "TaxSCQ", "id": "s", "run": 1, "prediction": "B", "model": "openai:m",
         "usage": {"prompt_tokens": 3, "completion_tokens": 1}, "latency_s": 0.25, "reasoning": "因为"},
    ]
    assert list(json.loads(written.read_text(encoding="utf-8").splitlines()[2])) == [
        "task", "id", "run", "prediction", "model", "usage", "latency_s", "reasoning",
    ]


def test_predictions_read_share_their_key_order_task_and_id(tmp_path: Path) -> None:
    """A scoring job holds every prediction of the file: lines with the same keys in the same
    order hold one tuple of key names, and a task's or an id's text is one object (a full
    benchmark's 36.5K predictions held 13 MB of key names and copies of them); a line with
    its keys in another order keeps its own order."""
    path = tmp_path / "in.jsonl"
    lines = [json.dumps({"task": "TaxCalc", "id": "7", "run": run, "prediction": f"{run}元"}) for run in range(3)]
    lines.append(json.dumps({"id": "7", "task": "TaxCalc", "run": 3, "prediction": "3元"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    preds = list(read_predictions(path))
    assert preds[0]._order is preds[1]._order is preds[2]._order
    assert preds[0].task is preds[3].task and preds[0].id is preds[2].id is preds[3].id
    assert preds[3]._order == ("id", "task", "run", "prediction")
    assert preds[0]._order == ("task", "id", "run", "prediction")


def test_predictions_file_names_the_line_and_field_of_a_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task": "TaxCalc", "id": "1", "prediction": "1"}\n'
                    '{"task": "TaxCalc", "id": "2", "prediction": "1", "latency_s": "slow"}\n', encoding="utf-8")
    with pytest.raises(PredictionFileError, match=r"bad\.jsonl:2: field 'latency_s'"):
        list(read_predictions(path))


# ---------------------------------------------------------------------------- docs


def test_schema_doc_is_generated_from_the_models() -> None:
    regenerate = "python -m taxpraben.results --markdown > docs/results-schema.md"
    assert SCHEMA_DOC.read_text(encoding="utf-8") == schema_markdown(), (
        f"docs/results-schema.md differs from the models in src/taxpraben/results/; regenerate it: {regenerate}"
    )


def test_schema_doc_lists_every_counter_the_pipeline_writes(scored_without_scorers) -> None:
    doc = schema_markdown()
    counters = doc.split("## Counts", 1)[1].split("## ", 1)[0]
    for key in scored_without_scorers.results["meta"]["counts"]:
        assert f"| `{key}` |" in counters


def test_a_sample_reads_back_the_line_it_wrote(scored_without_scorers) -> None:
    """One shape from scoring to report: every line of a scoring is its sample's own line, and
    the sample read back from it (checked, or trusted) writes it again unchanged, keys in order."""
    lines = scored_without_scorers.samples
    assert {line["status"] for line in lines} >= {"ok", "error"}
    for line in lines:
        for again in (Sample.model_validate(line), Sample.model_validate_json(json.dumps(line)), Sample.trusted(line)):
            assert again.to_json() == line and list(again.to_json()) == list(line)


def test_a_sample_is_frozen_and_new_values_make_a_new_one() -> None:
    line = {"task": "TaxCalc", "id": "1", "run": 0, "status": "ok", "prediction": "答案是1", "gold": "1",
            "extracted": 1.0, "scores": {"em": 1.0}, "score": 1.0, "error": None, "evidence": [3, 4]}
    sample = Sample.model_validate(line)
    with pytest.raises(ValidationError, match="frozen"):
        sample.score = 0.0  # type: ignore[misc]  # the assignment the test shows refused
    edited = sample.model_copy(update={"score": 0.0})
    assert (sample.score, edited.score) == (1.0, 0.0) and edited.span == (3, 4) and sample.span == (3, 4)
    assert edited.to_json() == {**line, "score": 0.0}
