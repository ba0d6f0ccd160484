"""`taxpraben run` end to end: baselines, an API model behind the mock, failures, Ctrl-C, secrets."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.cli_data import (
    RUN_SCRIPT,
    cached_rows,
    cli_app,
    quarterly_calc_rows,
    scq_rows,
    write_data,
)
from helpers.mock_openai_server import MockConfig, MockServerThread, server_call, spawn
from taxpraben.commands.run import model_slug, run

APP = cli_app(run=run)


#: A standalone `taxpraben run` for subprocess tests (the real CLI is wired by cli.py).
TAXCALC = quarterly_calc_rows(8)
TAXSCQ = scq_rows(4)


#: The tasks of ``data_dir``: a subset of the benchmark, named (a run refuses data lacking tasks otherwise).
TASKS = "TaxCalc,TaxSCQ"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxCalc": TAXCALC, "TaxSCQ": TAXSCQ})


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(APP, ["run", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_oracle_scores_one_on_every_exact_and_classification_task(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, output = invoke(
        "--model", "baseline:oracle", "--data", "sample", "--limit", "3", "--runs", "2",
        "--no-semantic", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["meta"]["model"] == "baseline:oracle"
    assert results["meta"]["shared_generation"] is True
    scored = {
        t: e for t, e in results["tasks"].items() if e["type"] in ("classification", "structured")
    }
    assert scored
    for task, entry in scored.items():
        assert entry["score"]["mean"] == 1.0, task
        for metric in ("acc", "f1", "macro_f1", "em"):
            if metric in entry["metrics"]:
                assert entry["metrics"][metric]["mean"] == 1.0, (task, metric)
    n_items = sum(e["n"] for e in results["tasks"].values())
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * n_items


def test_api_model_with_failures_and_the_key_never_written(data_dir: Path, tmp_path: Path) -> None:
    key = "sk-" + secrets.token_hex(16)
    out, cache = tmp_path / "out", tmp_path / "cache" / "c.sqlite"
    # 429s are retried after their Retry-After, 400s fail their item at once.
    mock = MockConfig(failure_rate=0.3, failure_kinds=("429", "400"), reasoning=True)
    with MockServerThread(mock) as server:
        env = {**os.environ, "OPENAI_API_KEY": key, "TAXPRABEN_CACHE": str(cache)}
        with open(tmp_path / "stdout.log", "wb") as so, open(tmp_path / "stderr.log", "wb") as se:
            done = subprocess.run(
                [sys.executable, "-c", RUN_SCRIPT, "--model", "openai:mock-model",
                 "--base-url", server.base_url, "--data", str(data_dir), "--tasks", TASKS, "--runs", "2",
                 "--out", str(out), "--no-semantic", "--allow-failures", "--max-retries", "8",
                 "--temperature", "0.3"],
                stdout=so, stderr=se, env={**env, "COLUMNS": "200"}, timeout=120,
            )  # fmt: skip
        sent_auth = server.stats.auth_headers
    log = (tmp_path / "stdout.log").read_text(encoding="utf-8")
    assert done.returncode == 0, log + (tmp_path / "stderr.log").read_text(encoding="utf-8")
    assert sent_auth == {f"Bearer {key}"}  # the key was used...
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {
        "predictions.jsonl", "results.json", "samples.jsonl", "report.md", "report.html",
        "c.sqlite", "stdout.log", "stderr.log",
    }  # fmt: skip
    for path in written:  # ...and never written anywhere
        assert key.encode() not in path.read_bytes(), path
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    meta = results["meta"]
    assert meta["endpoint"] == server.base_url and meta["model"] == "openai:mock-model"
    assert meta["generation"]["temperature"] == 0.3 and meta["shared_generation"] is False
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 2 * (len(TAXCALC) + len(TAXSCQ))
    assert [(p["task"], p["id"], p["run"]) for p in preds[:3]] == [
        ("TaxCalc", "0", 0), ("TaxCalc", "0", 1), ("TaxCalc", "1", 0)
    ]  # fmt: skip
    failed = [p for p in preds if p.get("error")]
    assert all(p["error"].startswith("HTTP 400") and p["prediction"] == "" for p in failed)
    assert all(p.get("reasoning") for p in preds if not p.get("error"))
    if failed:
        assert f"{len(failed)} of {len(preds)} predictions failed" in log
    assert meta["generation_stats"]["failed"] == len(failed)


def test_failed_items_exit_non_zero_unless_allowed(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(failure_rate=1.0, failure_kinds=("400",))) as server:
        common = ["--model", "openai:m", "--base-url", server.base_url, "--data", str(data_dir),
                  "--tasks", "TaxCalc", "--runs", "1", "--no-semantic", "--no-cache"]  # fmt: skip
        code, output = invoke(*common, "--out", str(tmp_path / "a"))
        assert code == 1
        assert "8 of 8 predictions failed after all retries" in output
        assert "HTTP 400: Invalid parameter" in output
        code, _ = invoke(*common, "--out", str(tmp_path / "b"), "--allow-failures")
        assert code == 0
        samples = (tmp_path / "b" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        assert all(json.loads(s)["status"] == "error" for s in samples)


def test_bad_options_are_user_errors(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = invoke("--model", "gpt-4o", "--data", str(data_dir), "--tasks", TASKS)
    assert code == 2 and "KIND:NAME" in output
    code, output = invoke("--model", "openai:m", "--data", str(data_dir), "--tasks", TASKS, "--gen-kwargs", "{x")
    assert code == 2 and "--gen-kwargs is not valid JSON" in output
    monkeypatch.delenv("NOPE_KEY", raising=False)
    code, output = invoke(
        "--model", "openai:m", "--data", str(data_dir), "--tasks", TASKS, "--api-key-env", "NOPE_KEY"
    )
    assert code == 2 and "NOPE_KEY is not set" in output


def test_model_slug() -> None:
    assert model_slug("openai:deepseek-chat") == "openai-deepseek-chat"
    assert model_slug("hf:/models/Qwen2.5-7B-Instruct/") == "hf-Qwen2.5-7B-Instruct"
    assert model_slug("baseline:first-choice") == "baseline-first-choice"


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(data_dir: Path, tmp_path: Path) -> None:
    proc_server, root = spawn("--latency", "0.15")
    cache = tmp_path / "c.sqlite"
    args = [sys.executable, "-c", RUN_SCRIPT, "--model", "openai:m", "--base-url", root + "/v1",
            "--data", str(data_dir), "--tasks", TASKS, "--runs", "3", "--concurrency", "2", "--no-semantic",
            "--cache", str(cache), "--out", str(tmp_path / "out")]  # fmt: skip
    total = 3 * (len(TAXCALC) + len(TAXSCQ))
    try:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while cached_rows(cache) < 4:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, stdout + stderr
        assert "Traceback" not in stderr
        kept = cached_rows(cache)
        assert f"Interrupted: {kept} of {total} generations are stored in {cache}" in stdout
        assert "To resume, run the same command again" in stdout
        written = (tmp_path / "out" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(written) == kept and f"their {kept} predictions are written to" in stdout
        assert not (tmp_path / "out" / "results.json").exists()  # a part is not scored

        server_call(root, "/reset", "POST")
        done = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert server_call(root, "/stats")["requests"] == total - kept
    finally:
        proc_server.kill()
        proc_server.wait()


def test_sigterm_with_no_cache_keeps_the_answers_in_predictions_jsonl(data_dir: Path, tmp_path: Path) -> None:
    """Stopped by SIGTERM (a scheduler's stop) with nothing cached: the answers received are
    not lost, they are written to predictions.jsonl, and the run says so (exit 130)."""
    proc_server, root = spawn("--latency", "0.15")
    out = tmp_path / "out"
    args = [sys.executable, "-c", RUN_SCRIPT, "--model", "openai:m", "--base-url", root + "/v1",
            "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--runs", "3", "--concurrency", "2",
            "--no-semantic", "--no-cache", "--out", str(out)]  # fmt: skip
    try:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while server_call(root, "/stats")["requests"] < 7:  # 2 in flight at most: 5 answered
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, stdout + stderr
        assert "Traceback" not in stderr
        lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(lines) >= 5 and all(p["prediction"] and not p.get("error") for p in lines)
        assert f"their {len(lines)} predictions are written to {out / 'predictions.jsonl'}" in " ".join(stdout.split())
        assert "nothing is cached (--no-cache)" in stdout
    finally:
        proc_server.kill()
        proc_server.wait()


def test_run_refuses_a_bad_scoring_option_with_exit_2(tmp_path: Path) -> None:
    """The scoring settings are checked before anything is sent: a bad option ends the command
    with exit 2 and the message, and writes no results."""
    from taxpraben.cli import app

    cases = [(["--profile", "helm"], "unknown scoring profile 'helm'"), (["--scorer-dtype", "fp8"], "'fp8'")]
    for option, message in cases:
        res = CliRunner().invoke(app, ["run", "--model", "baseline:oracle", "--data", "sample", "--runs", "1",
                                       "--no-semantic", "--out", str(tmp_path / "o"), *option])  # fmt: skip
        assert res.exit_code == 2, res.output
        assert message in res.output, res.output
        assert not (tmp_path / "o" / "results.json").exists()


def test_a_bad_scoring_option_sends_no_request(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig()) as server:
        code, output = invoke("--model", "openai:m", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", TASKS,
                              "--runs", "1", "--no-cache", "--profile", "helm", "--out", str(tmp_path / "o"))  # fmt: skip
        assert (code, server.stats.requests) == (2, 0), output
    assert "unknown scoring profile 'helm'" in output


def test_a_run_reads_its_answers_as_they_come_and_scores_as_score_would(data_dir: Path, tmp_path: Path) -> None:
    """The run reads each answer while the others are out (ReadAhead) and writes its report
    from the items in memory; `score` of its predictions.jsonl gives the same samples, task
    figures and sample browser."""
    from taxpraben.cli import app

    out, rescored = tmp_path / "out", tmp_path / "rescored"
    mock = MockConfig(failure_rate=0.2, failure_kinds=("400",))
    with MockServerThread(mock) as server:
        done = CliRunner().invoke(app, [
            "run", "--model", "openai:mock-model", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", TASKS,
            "--runs", "2", "--temperature", "0.5", "--out", str(out), "--no-semantic", "--allow-failures",
            "--no-cache",
        ], catch_exceptions=False)  # fmt: skip
    assert done.exit_code == 0, done.output
    again = CliRunner().invoke(app, [
        "score", "--data", str(data_dir), "--tasks", TASKS, "--predictions", str(out / "predictions.jsonl"),
        "--runs", "2", "--out", str(rescored), "--no-semantic",
    ], catch_exceptions=False)  # fmt: skip
    assert again.exit_code == 0, again.output
    assert (out / "samples.jsonl").read_text(encoding="utf-8") == (rescored / "samples.jsonl").read_text(encoding="utf-8")
    run_tasks = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]
    assert run_tasks == json.loads((rescored / "results.json").read_text(encoding="utf-8"))["tasks"]

    def browser(path: Path) -> str:
        page = path.read_text(encoding="utf-8")
        return page[page.index('id="sample-data"'):page.index("</script>", page.index('id="sample-data"'))]

    assert browser(out / "report.html") == browser(rescored / "report.html")



def test_the_cache_closes_beside_the_scoring_and_is_closed_before_the_run_returns(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing the cache folds its write-ahead log into the file (tens of ms): it starts when
    generation ends, goes on while the run scores, and is over when the command returns."""
    import threading

    import taxpraben.jobs.generate as generate_module
    from taxpraben.cli import app
    from taxpraben.run.cache import CompletionCache

    events: list[str] = []
    real_close, real_score = CompletionCache.close_in_background, generate_module.score_and_report

    def closing(self: CompletionCache) -> None:
        events.append("closing")
        real_close(self)

    def scoring(*args: object, **kwargs: object) -> object:
        events.append("scoring")
        return real_score(*args, **kwargs)

    monkeypatch.setattr(CompletionCache, "close_in_background", closing)
    monkeypatch.setattr(generate_module, "score_and_report", scoring)
    cache = tmp_path / "c.sqlite"
    with MockServerThread(MockConfig()) as server:
        done = CliRunner().invoke(app, [
            "run", "--model", "openai:mock-model", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", TASKS,
            "--runs", "2", "--out", str(tmp_path / "out"), "--no-semantic", "--cache", str(cache),
        ], catch_exceptions=False)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert events == ["closing", "scoring"]
    assert not [t for t in threading.enumerate() if t.name == "taxpraben-cache-close"]
    assert not cache.with_name("c.sqlite-wal").exists()  # closed: the log is folded in
    assert cached_rows(cache) == 2 * (len(TAXCALC) + len(TAXSCQ))  # every completion, of both runs


def test_read_ahead_reads_on_its_worker_and_hands_over_the_readings() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from taxpraben.jobs.read_ahead import ReadAhead
    from taxpraben.models.base import GenerationConfig, build_request
    from taxpraben.records import Record
    from taxpraben.results.predictions import Prediction
    from taxpraben.tasks import load_registry

    registry = load_registry(use_env=False)
    records = [Record("TaxCalc", str(i), f"第{i}题", str(i)) for i in range(5)]
    with ThreadPoolExecutor(1) as worker:
        ahead = ReadAhead(worker, "taxpraben")
        for record in records:
            request = build_request(record, 0, GenerationConfig(), registry["TaxCalc"])
            ahead(request, Prediction("TaxCalc", record.id, 0, f"应纳税额为{record.id}元"))
        ahead(build_request(records[0], 0, GenerationConfig()), Prediction("TaxCalc", "0", 0, "x"))  # no spec: skipped
        readings = ahead.result()
    assert readings.ahead == 5 and readings.rules.name == "taxpraben"
    item = readings.read(registry["TaxCalc"], records[3], 0, Prediction("TaxCalc", "3", 0, "应纳税额为3元"))
    assert item.status == "ok" and readings.taken == 1  # the reading made on the worker


def test_the_scoring_warm_up_goes_on_past_a_module_it_cannot_import(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private module a newer library no longer has costs its warm-up, not the rest of it."""
    import sys

    import taxpraben.jobs.read_ahead as read_ahead

    monkeypatch.setattr(read_ahead, "SCORING_IMPORTS", ("taxpraben_no_such_module", "colorsys"))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    read_ahead._import_for_scoring()
    assert "colorsys" in sys.modules


@pytest.mark.parametrize("warmed", [False, True])
def test_the_scoring_warm_up_leaves_the_tail_no_validator_to_build_nor_version_to_look_up(warmed: bool) -> None:
    """After the warm-up (run beside generation) the typed results the tail validates have
    their validators, and the manifest's package versions are known: the tail builds and
    reads none of them. In a fresh interpreter; without the warm-up, it would."""
    from helpers.probes import probe
    from taxpraben.jobs.read_ahead import TAIL_MODELS
    from taxpraben.manifest import PACKAGES

    code = (
        "import json, sys\n"
        "import importlib.metadata as metadata\n"
        "from pydantic._internal._mock_val_ser import MockValSer\n"
        "from taxpraben.jobs import read_ahead\n"
        "if sys.argv[1] == 'warm':\n"
        "    read_ahead._import_for_scoring()\n"
        "looked_up = []\n"
        "version = metadata.version\n"
        "metadata.version = lambda name: looked_up.append(name) or version(name)\n"
        "from taxpraben import results\n"
        "from taxpraben.manifest import package_versions\n"
        "unbuilt = [n for n in read_ahead.TAIL_MODELS if isinstance(getattr(results, n).__pydantic_validator__, MockValSer)]\n"
        "package_versions()\n"
        "import taxpraben\n"
        "taxpraben.__version__\n"
        "print(json.dumps({'unbuilt': unbuilt, 'looked_up': looked_up}))\n"
    )
    seen = probe(code, "warm" if warmed else "cold")
    assert seen == ({"unbuilt": [], "looked_up": []} if warmed else {"unbuilt": list(TAIL_MODELS), "looked_up": [*PACKAGES, "taxpraben"]})


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_a_spec_value_found_wrong_while_generating_stops_run(tmp_path: Path, data_dir: Path, cached: bool) -> None:
    """``run`` builds the specs without pydantic and has them checked as the first answers come
    in (start-up, issue 24): a value out of range still stops it, exit 2, naming the file and
    the key, before anything is scored; the answers received are kept in the cache."""
    specs = tmp_path / "specs"
    specs.mkdir()
    bundled = Path(__file__).parents[1] / "src/taxpraben/tasks/specs/TaxCalc.yaml"
    (specs / "TaxCalc.yaml").write_text(bundled.read_text(encoding="utf-8").replace("decimals: 2", "decimals: 9"),
                                        encoding="utf-8")  # fmt: skip
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    with MockServerThread(MockConfig(latency=0.0)) as server:
        code, output = invoke("--model", "openai:m", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", TASKS,
                              "--task-dir", str(specs), "--no-semantic", "--runs", "2", "--out", str(out),
                              *(["--cache", str(cache)] if cached else ["--no-cache"]))  # fmt: skip
    assert code == 2, output
    flat = " ".join(output.split())
    assert f"{specs / 'TaxCalc.yaml'}: invalid task spec" in flat
    assert "key structured.decimals: Input should be less than or equal to 8" in flat
    assert not (out / "results.json").exists() and not (out / "predictions.jsonl").exists()
    if cached:
        assert cached_rows(cache) > 0 and "completions received are in the cache" in flat
    else:
        assert not cache.exists()


def test_a_prompt_past_the_warning_size_is_said_before_it_is_sent(tmp_path: Path) -> None:
    """A 300,000-character record, a model of unknown context: one warning for its task,
    naming the item and the size; the prompt is still sent (the run goes on)."""
    data = write_data(tmp_path / "data", {"TaxQA": [
        {"id": "small", "query": "增值税怎么交？", "answer": "按月申报。"},
        {"id": "big", "query": "增值税" * 100_000, "answer": "按月申报。"},
        {"id": "big2", "query": "消费税" * 100_000, "answer": "按月申报。"},
    ]})  # fmt: skip
    code, output = invoke("--model", "baseline:lead", "--data", str(data), "--tasks", "TaxQA", "--runs", "2",
                          "--no-score", "--out", str(tmp_path / "out"))  # fmt: skip
    said = " ".join(output.split())
    assert code == 0, output
    assert "TaxQA item big: its prompt is about" in said and "(300,000 characters), past 128,000 tokens, the size taxpraben warns at" in said
    assert said.count("its prompt is about") == 1  # once per task, not per item or run
    assert len((tmp_path / "out" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()) == 6


def test_the_model_s_context_is_the_limit_when_known() -> None:
    from taxpraben.jobs.prompt_size import warn_long_prompts
    from taxpraben.models.base import GenerationConfig, build_request
    from taxpraben.records import Record

    config = GenerationConfig()
    requests = [build_request(Record(task="TaxQA", id=str(n), query="税" * n, answer=""), 0, config)
                for n in (100, 20_000)]  # fmt: skip
    warned: list[str] = []
    assert list(warn_long_prompts(requests, warned.append, context_tokens=4_096)) == requests
    assert len(warned) == 1 and warned[0].startswith("TaxQA item 20000: ") and "past the model's context of 4,096 tokens" in warned[0]
    warned.clear()
    list(warn_long_prompts(requests, warned.append))
    assert warned == []  # 20,000 characters: under the 128,000-token size
