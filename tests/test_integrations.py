"""TaxPraBen inside Inspect AI and lm-evaluation-harness (issue 46, items 2-5): the same scripted
outputs scored by `taxpraben score`, by the Inspect tasks (its mock model answering from the
script) and by the lm-eval tasks (a scripted model) give the same readings item for item and the
same task figures to 1e-9, for every task of every kind; offline (the tiny scorer models)."""

from __future__ import annotations

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


def test_inspect_tasks_read_and_figure_as_taxpraben_score(scripted: Path, ours: dict[str, taxpraben.Results],
                                                          tmp_path: Path) -> None:  # fmt: skip
    log = inspect_log(script_of(scripted), tmp_path / "logs")
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


def test_lm_eval_tasks_read_and_figure_as_taxpraben_score(scripted: Path, ours: dict[str, taxpraben.Results]) -> None:
    from taxpraben.integrations.lm_eval_tasks import task_name

    results = lm_eval_results(script_of(scripted), ["taxpraben"])
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
    from taxpraben.integrations.lm_eval_tasks import metric_names, task_name
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
        assert all(m["aggregation"] == f"taxpraben.integrations.lm_eval_tasks.{m['metric']}" for m in config["metric_list"])
    group = yaml.load((folder / "taxpraben.yaml").read_text(encoding="utf-8"), Loader=loader)
    assert group["task"] == [task_name(t) for t in registry]
    assert group["aggregate_metric_list"] == [{"metric": "score", "aggregation": "mean", "weight_by_size": False}]
    shared = yaml.load((folder / "_default_template_yaml").read_text(encoding="utf-8"), Loader=loader)
    assert shared["generation_kwargs"]["until"] == [] and shared["repeats"] == RUNS
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


def test_taxpraben_run_loads_no_integration() -> None:
    """The extras cost `taxpraben run` nothing: its command loads neither harness."""
    code = ("import sys\nfrom taxpraben.cli import build_app\nbuild_app('run')\nimport taxpraben.commands.run\n"
            "print(sorted(m for m in sys.modules if m.startswith(('inspect_ai', 'lm_eval', 'taxpraben.integrations'))))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
