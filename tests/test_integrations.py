"""TaxPraBen inside Inspect AI and lm-evaluation-harness (issue 46, items 2-5): the same scripted
outputs scored by `taxpraben score`, by the Inspect tasks (its mock model answering from the
script) and by the lm-eval tasks (a scripted model) give the same readings item for item and the
same task figures to 1e-9, for every task of every kind; offline (the tiny scorer models)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import taxpraben

pytest.importorskip("inspect_ai")

RUNS = 2


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """predictions.jsonl of the random baseline over the sample, 2 runs: the script every
    harness answers from."""
    out = tmp_path_factory.mktemp("script") / "gen"
    taxpraben.evaluate("baseline:random", "sample", runs=RUNS, no_semantic=True, no_cache=True, no_score=True, out=out)
    return out / "predictions.jsonl"


@pytest.fixture
def tiny_scorers(monkeypatch: pytest.MonkeyPatch, tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> None:
    """The semantic scorers every harness uses: the tiny models, named by the environment."""
    monkeypatch.setenv("TAXPRABEN_BERTSCORE_MODEL", str(tiny_xlnet_dir))
    monkeypatch.setenv("TAXPRABEN_BERTSCORE_LAYER", "2")
    monkeypatch.setenv("TAXPRABEN_BARTSCORE_MODEL", str(tiny_bart_dir))


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


def test_inspect_tasks_read_and_figure_as_taxpraben_score(scripted: Path, tiny_scorers: None, tmp_path: Path) -> None:
    log = inspect_log(script_of(scripted), tmp_path / "logs")
    ours = scored_by_taxpraben(scripted)
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


def test_taxpraben_run_loads_no_integration() -> None:
    """The extras cost `taxpraben run` nothing: its command loads neither harness."""
    code = ("import sys\nfrom taxpraben.cli import build_app\nbuild_app('run')\nimport taxpraben.commands.run\n"
            "print(sorted(m for m in sys.modules if m.startswith(('inspect_ai', 'lm_eval', 'taxpraben.integrations'))))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
