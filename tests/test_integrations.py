"""TaxPraBen inside Inspect AI and lm-evaluation-harness (issue 46, items 2-5): the same scripted
outputs scored by `taxpraben score`, by the Inspect tasks (its mock model answering from the
script) and by the lm-eval tasks (a scripted model) give the same readings item for item and the
same task figures to 1e-9, for every task of every kind; offline (the tiny scorer models)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import taxpraben
from taxpraben.jobs.common import JobError

pytest.importorskip("inspect_ai")

#: The runs of the paper: lm-eval's tasks repeat each request 5 times (``repeats: 5``).
RUNS = 5


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """predictions.jsonl of the random baseline over the sample, 5 runs: the script every
    harness answers from."""
    out = tmp_path_factory.mktemp("script") / "gen"
    taxpraben.evaluate("baseline:random", "sample", runs=RUNS, no_semantic=True, no_cache=True, no_score=True, out=out)
    return out / "predictions.jsonl"


@pytest.fixture(scope="module")
def tiny_scorers(tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> Iterator[None]:
    """The semantic scorers every harness uses: the tiny models, named by the environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TAXPRABEN_BERTSCORE_MODEL", str(tiny_xlnet_dir))
        patch.setenv("TAXPRABEN_BERTSCORE_LAYER", "2")
        patch.setenv("TAXPRABEN_BARTSCORE_MODEL", str(tiny_bart_dir))
        yield


@pytest.fixture(scope="module")
def ours(scripted: Path, tiny_scorers: None) -> dict[str, taxpraben.Results]:
    """The script scored by `taxpraben score`, task by task (:func:`scored_by_taxpraben`)."""
    return scored_by_taxpraben(scripted)


def script_of(predictions: Path) -> dict[tuple[str, int], str]:
    """(query, run) -> the scripted output (the queries of the sample are distinct)."""
    from taxpraben.data.files import sample_data_dir

    queries = {}
    for path in sample_data_dir().glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            queries[(path.stem, str(rec["id"]))] = rec["query"]
    assert len(set(queries.values())) == len(queries)
    lines = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    return {(queries[(p["task"], p["id"])], p["run"]): p["prediction"] for p in lines}


def scored_by_taxpraben(predictions: Path) -> dict[str, taxpraben.Results]:
    """`taxpraben score` of each task alone (a scorer's float32 value of a pair depends on the
    other texts of its batch: each harness scores a task's pairs together)."""
    from taxpraben.tasks import load_registry

    return {task: taxpraben.score(predictions, "sample", tasks=task) for task in load_registry()}


def inspect_log(script: dict[tuple[str, int], str], log_dir: Path) -> Any:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        assert len(messages) == 1 and messages[0].role == "user"  # the query verbatim, zero-shot
        output = ModelOutput.from_content("mockllm/model", script[(messages[0].text, config.seed)])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # counted without tiktoken
        return output

    model = get_model("mockllm/model", custom_outputs=answer)
    logs = inspect_eval("taxpraben/taxpraben", model=model, display="none", log_dir=str(log_dir),
                        task_args={"runs": RUNS}, max_connections=8)  # fmt: skip
    assert logs[0].status == "success", logs[0].error
    return logs[0]


@pytest.fixture(scope="module")
def inspect_run(scripted: Path, tiny_scorers: None, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The Inspect log of the suite answered from the script (its file at ``log.location``)."""
    return inspect_log(script_of(scripted), tmp_path_factory.mktemp("inspect"))


def test_inspect_tasks_read_and_figure_as_taxpraben_score(inspect_run: Any, ours: dict[str, taxpraben.Results]) -> None:
    log = inspect_run
    assert log.eval.task.endswith("taxpraben") and log.eval.config.epochs == RUNS
    figures = {name: metric.value for name, metric in log.results.scores[0].metrics.items()}
    by_item = {(s.task, s.id, s.run): s for result in ours.values() for s in result.samples}
    seen = 0
    for sample in log.samples:
        for score in sample.scores.values():
            meta = score.metadata
            line = by_item[(sample.metadata["task"], sample.metadata["record"]["id"], meta["run"])]
            assert (meta["read_by"], meta["evidence"], meta["failure"]) == (line.read_by, line.evidence, line.failure)
            assert (score.reason == "invalid_response_format") == (line.status == "format_failure")
            seen += 1
    assert seen == len(by_item) == 186 * RUNS
    task_scores = []
    for task, result in ours.items():
        entry = result.tasks[task]
        assert entry.status == "ok", task
        for key, stat in entry.metrics.items():
            assert figures[f"{task}/{key}"] == pytest.approx(stat.mean, abs=1e-9), (task, key)
        assert entry.score is not None and entry.score.mean is not None
        assert figures[f"{task}/score"] == pytest.approx(entry.score.mean, abs=1e-9)
        task_scores.append(entry.score.mean)
    assert figures["overall"] == pytest.approx(sum(task_scores) / len(task_scores), abs=1e-9)


def lm_eval_results(script: dict[tuple[str, int], str], tasks: list[str], data: str = "sample") -> Any:
    """lm-eval's results of ``tasks`` (the shipped YAML; ``data`` through the metadata),
    answered by a scripted model: the r-th repeat of a request is run r."""
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    from taxpraben.integrations.lm_eval_tasks import include_path

    class Scripted(LM):  # type: ignore[misc]
        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            seen: dict[str, int] = {}
            answers = []
            for request in requests:
                query, settings = request.args
                assert settings["until"] == [] and not settings["do_sample"]  # the paper's settings, no stop
                run = seen[query] = seen.get(query, -1) + 1
                answers.append(script[(query, run)])
            return answers

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

    manager = TaskManager(include_path=str(include_path()), include_defaults=False, metadata={"data": data})
    return simple_evaluate(model=Scripted(), tasks=tasks, task_manager=manager, bootstrap_iters=0, log_samples=True)


@pytest.fixture(scope="module")
def lm_eval_run(scripted: Path, tiny_scorers: None) -> Any:
    """lm-eval's results of the group answered from the script, with its samples."""
    return lm_eval_results(script_of(scripted), ["taxpraben"])


def test_lm_eval_tasks_read_and_figure_as_taxpraben_score(lm_eval_run: Any, ours: dict[str, taxpraben.Results]) -> None:
    from taxpraben.integrations.lm_eval_tasks import task_name

    results = lm_eval_run
    by_item = {(s.task, s.id, s.run): s for result in ours.values() for s in result.samples}
    seen = 0
    for task, result in ours.items():
        name = task_name(task)
        for doc in results["samples"][name]:
            readings = doc["readings"]
            assert len(readings["runs"]) == RUNS and doc["filter"] == "all-runs"
            for run, state in enumerate(readings["runs"]):
                line = by_item[(task, readings["id"], run)]
                assert state["line"]["prediction"] == line.prediction
                assert (state["line"].get("read_by"), state["line"].get("evidence"), state["line"].get("failure")) == (
                    line.read_by, line.evidence, line.failure)
                seen += 1
        figures = results["results"][name]
        entry = result.tasks[task]
        for key, stat in entry.metrics.items():
            assert figures[f"{key},all-runs"] == pytest.approx(stat.mean, abs=1e-9), (task, key)
        assert entry.score is not None and entry.format_failure_rate is not None
        assert figures["score,all-runs"] == pytest.approx(entry.score.mean, abs=1e-9)
        assert figures["format_failure_rate,all-runs"] == pytest.approx(entry.format_failure_rate.mean, abs=1e-9)
        assert figures["readings,all-runs"] == entry.n * RUNS
    assert seen == len(by_item) == 186 * RUNS
    overall = [r.tasks[t].score.mean for t, r in ours.items()]  # type: ignore[union-attr]
    assert results["groups"]["taxpraben"]["score,all-runs"] == pytest.approx(sum(overall) / len(overall), abs=1e-9)


def readings_of(results: taxpraben.Results) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    """Per item what was read of it: the prediction, the reading, its rule, evidence, failure, status."""
    return {(s.task, s.id, s.run): (s.prediction, s.extracted, s.read_by, s.evidence, s.failure, s.status)
            for s in results.samples}  # fmt: skip


def all_readings(ours: dict[str, taxpraben.Results]) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    return {key: value for result in ours.values() for key, value in readings_of(result).items()}


def test_score_reads_back_an_inspect_log_and_lm_eval_samples_files(
    inspect_run: Any, lm_eval_run: Any, ours: dict[str, taxpraben.Results], tmp_path: Path
) -> None:
    """Another harness's outputs rescored by taxpraben's readers: item for item as `score` of the
    same outputs, from Inspect's own log file and from lm-eval's own samples files."""
    from lm_eval.loggers import EvaluationTracker

    expected = all_readings(ours)
    from_inspect = taxpraben.score(Path(inspect_run.location), "sample", no_semantic=True)
    assert readings_of(from_inspect) == expected
    tracker = EvaluationTracker(output_path=str(tmp_path / "lm-eval"))  # as lm_eval's command line writes them
    results = {key: value for key, value in lm_eval_run.items() if key != "samples"}
    samples = copy.deepcopy(lm_eval_run["samples"])  # the tracker rewrites the lines it writes
    tracker.save_results_aggregated(results=results, samples=samples)
    for name, lines in samples.items():
        tracker.save_results_samples(task_name=name, samples=lines)
    files = sorted((tmp_path / "lm-eval").rglob("samples_*.jsonl"))
    assert len(files) == 14
    from_lm_eval = taxpraben.score(files, "sample", no_semantic=True)
    assert readings_of(from_lm_eval) == expected
    assert {t: r.tasks[t].metrics["em"].mean for t, r in ours.items() if "em" in r.tasks[t].metrics} == {
        t: e.metrics["em"].mean for t, e in from_lm_eval.tasks.items() if "em" in e.metrics}


@pytest.fixture(scope="module")
def scored_out(scripted: Path, tiny_scorers: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`taxpraben score` of the script into an output directory (all tasks at once)."""
    out = tmp_path_factory.mktemp("scored") / "out"
    taxpraben.score(scripted, "sample", out=out)
    return out


def test_export_to_inspect_writes_a_log_inspect_reads_back_with_every_sample(scored_out: Path, inspect_run: Any) -> None:
    from inspect_ai.log import read_eval_log

    from taxpraben.cli import app
    from taxpraben.integrations.inspect_log import inspect_figures

    done = CliRunner().invoke(app, ["export", str(scored_out), "--to", "inspect"])
    assert done.exit_code == 0, done.output
    log = read_eval_log(done.output.strip())
    results = taxpraben.load_results(scored_out)
    assert (log.status, log.eval.task, log.eval.config.epochs) == ("success", "taxpraben/taxpraben", RUNS)
    assert len(log.samples) == len(results.samples) == 186 * RUNS
    # every sample as the Inspect tasks themselves score it: same answer, reading, rule and scores
    ran = {(s.id, s.epoch): s.scores["taxpraben_scorer"] for s in inspect_run.samples}
    for sample in log.samples:
        mine, theirs = sample.scores["taxpraben_scorer"], ran[(sample.id, sample.epoch)]
        assert (mine.answer, mine.explanation, mine.reason) == (theirs.answer, theirs.explanation, theirs.reason)
        assert mine.metadata == {k: v for k, v in theirs.metadata.items() if k != "sample"}
        assert all(mine.value[key] == value for key, value in theirs.value.items() if key in mine.value)  # exact scores
        assert sample.output.completion == sample.messages[-1].text
    metrics = {name: metric.value for name, metric in log.results.scores[0].metrics.items()}
    assert metrics == inspect_figures(results.tasks) and set(metrics) == set(inspect_run.results.scores[0].metrics)


def test_export_to_lm_eval_writes_what_lm_eval_writes(scored_out: Path, lm_eval_run: Any) -> None:
    from lm_eval.utils import (
        get_file_task_name,
        get_results_filenames,
        get_sample_results_filenames,
        make_table,
    )

    from taxpraben.cli import app

    done = CliRunner().invoke(app, ["export", str(scored_out), "--to", "lm-eval"])
    assert done.exit_code == 0, done.output
    written = [Path(line) for line in done.output.split()]
    names = [str(p) for p in written]  # as lm-eval's hub uploader finds the files of an output folder
    assert len(get_results_filenames(names)) == 1 and len(get_sample_results_filenames(names)) == 14
    samples_files = get_sample_results_filenames(names)
    assert {get_file_task_name(Path(n).name) for n in samples_files} == set(lm_eval_run["samples"])
    exported = json.loads(written[0].read_text(encoding="utf-8"))
    for key in ("group_subtasks", "higher_is_better", "n-samples", "n-shot", "versions"):
        assert exported[key] == {k: v for k, v in lm_eval_run[key].items() if k in exported[key]}, key
    results = taxpraben.load_results(scored_out)
    for name, figures in lm_eval_run["results"].items():
        assert set(exported["results"][name]) == set(figures) - {"sample_count"} | ({"sample_count"} & set(exported["results"][name]))
    for task, entry in results.tasks.items():
        assert exported["results"][f"taxpraben_{task.lower()}"]["score,all-runs"] == entry.score.mean  # type: ignore[union-attr]
    assert "taxpraben" in make_table(exported) and "taxpraben" in make_table(exported, "groups")  # lm-eval's own table
    for path in written[1:]:
        mine = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        theirs = lm_eval_run["samples"][get_file_task_name(path.name)]
        assert [m["resps"] for m in mine] == [t["resps"] for t in theirs]  # same records, same order, every run
        assert all(set(t) - {"doc"} <= set(m) for m, t in zip(mine, theirs, strict=True))
        def read_by(lines: list[Any]) -> list[list[Any]]:
            return [[r["line"].get("read_by") for r in line["readings"]["runs"]] for line in lines]

        assert read_by(mine) == read_by(theirs)


def test_the_inspect_scorer_asks_the_grounded_judge_as_score_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from helpers.cli_data import quarterly_calc_rows, scq_rows, write_data
    from helpers.mock_openai_server import MockConfig, MockServerThread
    from test_judge import ANSWERS as JUDGED  # TaxCalc 2, 3 and TaxSCQ s3 left unread by the rules
    from test_judge import REPLY_A  # A, quoting 答案是A (grounded in s3, no number for TaxCalc)

    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")
    rows = {"TaxCalc": quarterly_calc_rows(4), "TaxSCQ": scq_rows(4)}
    data = write_data(tmp_path / "data", rows)
    by_query = {row["query"]: JUDGED[(task, row["id"])] for task, task_rows in rows.items() for row in task_rows}
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"task": t, "id": i, "run": r, "prediction": text}, ensure_ascii=False)
                                   + "\n" for r in range(RUNS) for (t, i), text in JUDGED.items()), encoding="utf-8")  # fmt: skip

    def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", by_query[messages[0].text])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:
        args = {"data": str(data), "runs": RUNS, "judge": "openai:mock", "judge_base_url": judge.base_url,
                "judge_api_key_env": "JUDGE_KEY"}  # fmt: skip
        logs = inspect_eval(["taxpraben/taxcalc", "taxpraben/taxscq"], model=get_model("mockllm/model", custom_outputs=answer),
                            task_args=args, display="none", log_dir=str(tmp_path / "logs"))  # fmt: skip
        # One request per distinct unread output (TaxCalc 2 and 3: two records; TaxSCQ s3), the
        # second epoch's answered by the first's.
        assert judge.stats.requests == 3
        ours = taxpraben.score(predictions, data, no_semantic=True, judge="openai:mock", judge_base_url=judge.base_url,
                               judge_api_key_env="JUDGE_KEY")  # fmt: skip
        assert judge.stats.requests == 3  # score found every reply in the cache: the very requests Inspect's sent
    by_item = {(s.task, s.id, s.run): s for s in ours.samples}
    for log in logs:
        assert log.status == "success", log.error
        for sample in log.samples:
            score = sample.scores["taxpraben_scorer"]
            line = by_item[(sample.metadata["task"], sample.metadata["record"]["id"], score.metadata["run"])]
            assert (score.metadata["read_by"], score.answer, score.metadata["judge_reply"]) == (
                line.read_by, line.extracted if line.extracted != "missing" else None, line.judge_reply)
    s3 = by_item[("TaxSCQ", "s3", 1)]
    assert (s3.read_by, s3.extracted, s3.judge_reply) == ("judge:openai:mock", "13%", REPLY_A)
    figures = {log.eval.task.split("/")[-1]: {k: m.value for k, m in log.results.scores[0].metrics.items()} for log in logs}
    assert figures["taxscq"]["acc"] == pytest.approx(0.75, abs=1e-12) == ours.tasks["TaxSCQ"].metrics["acc"].mean
    assert figures["taxcalc"]["em"] == pytest.approx(0.5, abs=1e-12) == ours.tasks["TaxCalc"].metrics["em"].mean


def test_the_lm_eval_tasks_are_shipped_one_per_dataset_and_the_group() -> None:
    import yaml

    from taxpraben.cli import app
    from taxpraben.integrations.lm_eval_tasks import (
        GENERATION,
        LOWER_IS_BETTER,
        metric_names,
        task_name,
    )
    from taxpraben.tasks import load_registry

    printed = CliRunner().invoke(app, ["lm-eval-path"])
    assert printed.exit_code == 0, printed.output
    folder = Path(printed.output.strip())
    # inside the installed package (package data), beside the module whose functions the YAML names
    assert folder == Path(taxpraben.__file__).parent / "integrations" / "lm_eval" and folder.is_dir()
    registry = load_registry()
    names = {task_name(t) for t in registry}
    assert {p.stem for p in folder.glob("*.yaml")} == names | {"taxpraben"}
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!function", lambda load, node: load.construct_scalar(node))
    for task in registry:
        config = yaml.load((folder / f"{task_name(task)}.yaml").read_text(encoding="utf-8"), Loader=loader)
        assert (config["task"], config["dataset_kwargs"], config["include"]) == (task_name(task), {"task": task},
                                                                                   "_default_template_yaml")
        assert [m["metric"] for m in config["metric_list"]] == metric_names(task)
        assert all(m["higher_is_better"] == (m["metric"] not in LOWER_IS_BETTER) for m in config["metric_list"])
        assert all(m["aggregation"] == f"taxpraben.integrations.lm_eval_tasks.{m['metric']}" for m in config["metric_list"])
    group = yaml.load((folder / "taxpraben.yaml").read_text(encoding="utf-8"), Loader=loader)
    assert group["task"] == [task_name(t) for t in registry]
    assert group["aggregate_metric_list"] == [{"metric": "score", "aggregation": "mean", "weight_by_size": False}]
    shared = yaml.load((folder / "_default_template_yaml").read_text(encoding="utf-8"), Loader=loader)
    assert shared["generation_kwargs"] == dict(GENERATION) and GENERATION["until"] == [] and shared["repeats"] == RUNS
    assert shared["filter_list"] == [{"name": "all-runs", "filter": [{"function": "take_first_k", "k": RUNS}]}]


def test_lm_eval_runs_a_task_offline_with_its_dummy_model_and_the_data_of_the_metadata(tmp_path: Path) -> None:
    from helpers.cli_data import scq_rows, write_data

    data = write_data(tmp_path / "data", {"TaxSCQ": scq_rows(3)})
    path = subprocess.run([str(Path(sys.executable).parent / "taxpraben"), "lm-eval-path"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([str(Path(sys.executable).parent / "lm_eval"), "--tasks", "taxpraben_taxscq", "--include_path",
                           path, "--model", "dummy", "--metadata", json.dumps({"data": str(data)}), "--output_path",
                           str(tmp_path / "out"), "--log_samples"], capture_output=True, text=True, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next((tmp_path / "out").glob("*/results_*.json")).read_text(encoding="utf-8"))
    figures = results["results"]["taxpraben_taxscq"]
    # the dummy model answers "lol": 3 records x 5 runs, none read, all missing
    assert (figures["readings,all-runs"], figures["acc,all-runs"], figures["missing_rate,all-runs"]) == (15, 0.0, 1.0)
    lines = [json.loads(line) for line in next((tmp_path / "out").glob("*/samples_taxpraben_taxscq_*.jsonl")).read_text(
        encoding="utf-8").splitlines()]  # fmt: skip
    assert [line["doc"]["id"] for line in lines] == ["s0", "s1", "s2"]
    runs = lines[0]["readings"]["runs"]
    assert [r["line"]["status"] for r in runs] == ["format_failure"] * RUNS and lines[0]["acc"] == "see readings"


def test_a_samples_file_of_other_lm_eval_tasks_is_refused_naming_its_line(tmp_path: Path) -> None:
    line = {"doc_id": 0, "doc": {"question": "1+1?"}, "resps": [["2"]], "filtered_resps": ["2"]}
    path = tmp_path / "samples_gsm8k_2026-01-01T00-00-00.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(JobError, match=r"samples_gsm8k_.*\.jsonl:1: not a sample of TaxPraBen's lm-eval tasks"):
        taxpraben.score(path, "sample", no_semantic=True)


def test_export_of_generations_not_scored_says_to_score_them(tmp_path: Path) -> None:
    from taxpraben.cli import app

    (tmp_path / "predictions.jsonl").write_text("", encoding="utf-8")
    done = CliRunner().invoke(app, ["export", str(tmp_path), "--to", "lm-eval"])
    assert done.exit_code == 1 and "score them first" in done.output


def test_taxpraben_run_loads_no_integration() -> None:
    """The extras cost `taxpraben run` nothing: its command loads neither harness."""
    code = ("import sys\nfrom taxpraben.cli import build_app\nbuild_app('run')\nimport taxpraben.commands.run\n"
            "print(sorted(m for m in sys.modules if m.startswith(('inspect_ai', 'lm_eval', 'taxpraben.integrations'))))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
