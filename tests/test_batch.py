"""`--batch`, `--batch-file-only` and `score --batch-output`: the OpenAI batch file format, the
batch client, the cache's batches, and whole runs against the mock's Batch API."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from rich.console import Console
from typer.testing import CliRunner

from helpers.cli_data import quarterly_calc_rows, scq_rows, write_data
from helpers.fake_clock import FakeClock, MinJitter
from helpers.mock_openai_server import MockConfig, MockServer, MockServerThread, request_digest
from taxpraben.cli import app
from taxpraben.jobs.batch_stage import collect, generations
from taxpraben.models.base import BackendError, Completion, GenerationConfig, build_request
from taxpraben.models.openai import OpenAIBackend
from taxpraben.records import Record
from taxpraben.run.batch_api import (
    BatchClient,
    BatchError,
    BatchFileError,
    BatchLineError,
    BatchProgress,
    BatchRetry,
    BatchState,
    batch_predictions,
    custom_id,
    parse_batch_output,
    parse_custom_id,
    read_batch_output,
    split_input,
)
from taxpraben.run.cache import CompletionCache

TAXCALC = quarterly_calc_rows(6)
TAXSCQ = scq_rows(4)
#: Every (record, run) of the data below over two runs.
N_REQUESTS = 2 * (len(TAXCALC) + len(TAXSCQ))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxCalc": TAXCALC, "TaxSCQ": TAXSCQ})


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def run_args(server: MockServer, data_dir: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:mock", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--runs", "2",
            "--out", str(out), "--no-semantic", "--cache", str(cache), "--batch-poll", "0.005", "--retry-backoff",
            "0.001", *extra]  # fmt: skip


def all_digests(model: str = "mock") -> set[str]:
    """The mock's digest of every request of the data (model, the query as the user message,
    seed = run), computed from the rows themselves."""
    return {
        request_digest({"model": model, "messages": [{"role": "user", "content": row["query"]}], "seed": run})
        for row in [*TAXCALC, *TAXSCQ] for run in range(2)
    }  # fmt: skip


def lines_of(path: Path, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in row.items() if k not in drop} for row in rows]


def batch_rows(cache: Path) -> list[tuple[str, str, int]]:
    """(batch_id, status, number of keys) of every batch the cache file keeps."""
    conn = sqlite3.connect(cache)
    try:
        rows = conn.execute("SELECT batch_id, status, keys FROM batches ORDER BY created_at").fetchall()
    finally:
        conn.close()
    return [(b, s, len(json.loads(k))) for b, s, k in rows]


# ---------------------------------------------------------------- the file format


def test_custom_ids_carry_any_id_and_read_back() -> None:
    odd = ["17", 'a"b', "逗号,括号]", "line\nbreak", "[\"TaxCalc\",\"1\",0]", ""]
    for item in odd:
        text = custom_id(("TaxCalc", item, 3))
        assert parse_custom_id(text) == ("TaxCalc", item, 3)
    assert custom_id(("TaxCalc", "17", 0)) == '["TaxCalc","17",0]'
    for bad in ["17", '["TaxCalc","17"]', '["TaxCalc",17,0]', '["TaxCalc","17",-1]', '["TaxCalc","17",true]', "{"]:
        with pytest.raises(ValueError, match="is not a taxpraben id"):
            parse_custom_id(bad)


def ok_line(cid: str, content: str, finish: str = "stop", reasoning: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}  # fmt: skip
    return {"id": "batch_req_1", "custom_id": cid, "response": {"status_code": 200, "body": body}, "error": None}


def status_line(cid: str, status: int, message: str) -> dict[str, Any]:
    return {"id": "batch_req_2", "custom_id": cid,
            "response": {"status_code": status, "body": {"error": {"message": message}}}, "error": None}  # fmt: skip


def test_output_and_error_lines_are_read_as_completions_and_errors() -> None:
    lines = [
        ok_line("a", "答案：130", reasoning="想一想"),
        ok_line("b", "答案：1", finish="length"),
        status_line("c", 400, "Invalid parameter: max_tokens"),
        status_line("d", 500, "internal error"),
        status_line("e", 429, "Rate limit reached"),
        {"id": "x", "custom_id": "f", "response": None,
         "error": {"code": "batch_expired", "message": "This request could not be executed before the window"}},
        {"id": "y", "custom_id": "g", "response": None, "error": {"code": "server_error", "message": "lost"}},
    ]  # fmt: skip
    read = parse_batch_output([json.dumps(line, ensure_ascii=False) for line in lines] + [""], "out.jsonl")
    a, b = read["a"], read["b"]
    assert isinstance(a, Completion) and isinstance(b, Completion)
    assert (a.text, a.reasoning, a.usage, a.finish_reason, a.latency_s) == (
        "答案：130", "想一想", {"prompt_tokens": 11, "completion_tokens": 7}, "stop", None
    )  # fmt: skip
    assert b.finish_reason == "length"
    errors = {cid: read[cid] for cid in "cdefg"}
    assert all(isinstance(e, BatchLineError) for e in errors.values())
    assert {cid: (e.message, e.retryable) for cid, e in errors.items() if isinstance(e, BackendError)} == {
        "c": ("HTTP 400: Invalid parameter: max_tokens", False),
        "d": ("HTTP 500: internal error", True),
        "e": ("HTTP 429: Rate limit reached", True),
        "f": ("batch: batch_expired: This request could not be executed before the window", True),
        "g": ("batch: server_error: lost", True),
    }
    assert [cid for cid, e in errors.items() if isinstance(e, BatchLineError) and e.not_done] == ["f"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"custom_id": "b", "response": {"status_code": 2', "out.jsonl:3: malformed JSON"),
        ("[1, 2]", "out.jsonl:3: expected a JSON object, got list"),
        ('{"response": {"status_code": 200, "body": {}}}', "out.jsonl:3: 'custom_id' is missing"),
        ('{"custom_id": "b", "error": null}', "out.jsonl:3: the line has neither a 'response' object nor an 'error'"),
        ('{"custom_id": "b", "response": {"status_code": "200"}}', "out.jsonl:3: 'response.status_code' is missing"),
        (json.dumps(ok_line("a", "again")), "out.jsonl:3: custom_id 'a' was already given on line 1"),
    ],
)
def test_a_malformed_line_names_the_file_and_line(line: str, message: str) -> None:
    lines = [json.dumps(ok_line("a", "x")), "", line]
    with pytest.raises(BatchFileError) as caught:
        parse_batch_output(lines, "out.jsonl")
    assert str(caught.value).startswith(message)


def test_a_file_is_read_with_its_path_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(ok_line('["TaxCalc","0",1]', "答案：5")) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(BatchFileError, match=rf"^{path}:2: malformed JSON"):
        read_batch_output(path)
    path.write_text(json.dumps(ok_line("not-ours", "答案：5")) + "\n", encoding="utf-8")
    assert isinstance(read_batch_output(path)["not-ours"], Completion)
    with pytest.raises(BatchFileError, match=rf"^{path}:1: custom_id 'not-ours' is not a taxpraben id"):
        batch_predictions(path)


def test_batch_predictions_read_items_answers_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
    lines = [ok_line('["TaxCalc","7",1]', "答案：130", finish="length"), status_line('["TaxSCQ","s1",0]', 400, "bad")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    first, second = batch_predictions(path)
    assert first.to_json() == {"task": "TaxCalc", "id": "7", "run": 1, "prediction": "答案：130", "model": "openai:m",
                               "usage": {"prompt_tokens": 11, "completion_tokens": 7}, "finish_reason": "length"}
    assert second.to_json() == {"task": "TaxSCQ", "id": "s1", "run": 0, "prediction": "", "error": "HTTP 400: bad"}


def test_input_is_split_within_the_limits() -> None:
    lines = [f"{i:03d}\n" for i in range(10)]  # 4 bytes each
    assert [len(p) for p in split_input(lines, max_lines=4, max_bytes=10**6)] == [4, 4, 2]
    assert [len(p) for p in split_input(lines, max_lines=100, max_bytes=12)] == [3, 3, 3, 1]
    assert [len(p) for p in split_input(["x" * 50], max_lines=5, max_bytes=10)] == [1]  # never split a line
    assert [line for part in split_input(lines, max_lines=3, max_bytes=9) for line in part] == lines


def test_the_batch_object_is_read_with_its_counts_and_errors() -> None:
    state = BatchState.from_json({
        "id": "batch_1", "status": "failed", "input_file_id": "file-1", "output_file_id": None,
        "request_counts": {"total": 9, "completed": 4, "failed": 2},
        "errors": {"object": "list", "data": [{"code": "invalid_json_line", "message": "bad line", "line": 3}]},
    }, "here")  # fmt: skip
    assert (state.terminal, state.completed, state.failed, state.total) == (True, 4, 2, 9)
    assert state.errors == ("line 3: invalid_json_line: bad line",)
    with pytest.raises(BatchError, match="here did not answer a batch object"):
        BatchState.from_json({"status": "completed"}, "here")


# ---------------------------------------------------------------- the cache


def test_the_cache_keeps_batches_and_an_old_cache_file_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)  # the schema before the batches table
    conn.executescript(
        "CREATE TABLE completions (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, task TEXT, "
        "item_id TEXT, run INTEGER, text TEXT NOT NULL, reasoning TEXT, usage TEXT, latency_s REAL, "
        "finish_reason TEXT, created_at REAL NOT NULL); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);"
        "INSERT INTO meta VALUES ('schema_version', '1');"
        "INSERT INTO completions VALUES ('k0', 'openai', 'm', 'TaxCalc', '0', 0, 'old', NULL, NULL, 0.1, 'stop', 0);"
    )
    conn.commit()
    conn.close()
    with CompletionCache(path) as store:
        assert store.get_many(["k0"])["k0"].text == "old"
        first = store.record_batch("b1", {'["T","1",0]': "k1", '["T","2",0]': "k2"}, backend="openai", model="m",
                                   endpoint="http://x/v1", input_file_id="file-1")  # fmt: skip
        store.record_batch("b2", {'["T","3",0]': "k3"}, backend="openai", model="m", endpoint="http://x/v1",
                           input_file_id="file-2")  # fmt: skip
        store.record_batch("b3", {'["T","4",0]': "k4"}, backend="openai", model="other", endpoint="http://x/v1",
                           input_file_id="file-3")  # fmt: skip
        assert first.keys == ("k1", "k2") and first.status == "open"
        opened = store.open_batches(backend="openai", model="m", endpoint="http://x/v1")
        assert [b.batch_id for b in opened] == ["b2", "b1"]  # newest first
        assert opened[1].custom_ids == {'["T","1",0]': "k1", '["T","2",0]': "k2"}
        assert store.open_batches(backend="openai", model="m", endpoint="http://y/v1") == []
        store.finish_batch("b2", "expired")
        assert [b.batch_id for b in store.open_batches(backend="openai", model="m", endpoint="http://x/v1")] == ["b1"]
    assert batch_rows(path) == [("b1", "open", 2), ("b2", "expired", 1), ("b3", "open", 1)]


# ---------------------------------------------------------------- the client


async def scripted_server(statuses: list[int]) -> tuple[web.AppRunner, str, list[int]]:
    """A server whose POST /v1/files answers the given statuses in turn, then a file object."""
    seen: list[int] = []

    async def upload(request: web.Request) -> web.Response:
        await request.post()
        seen.append(1)
        if len(seen) <= len(statuses):
            status = statuses[len(seen) - 1]
            return web.json_response({"error": {"message": f"scripted {status}"}}, status=status,
                                     headers={"Retry-After": "2"} if status == 429 else None)  # fmt: skip
        return web.json_response({"id": "file-9", "object": "file"})

    application = web.Application()
    application.router.add_post("/v1/files", upload)
    runner = web.AppRunner(application)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1", seen


def test_429_and_5xx_are_retried_with_the_backoff_on_the_clock() -> None:
    async def scenario() -> tuple[str, list[float], int]:
        runner, url, seen = await scripted_server([429, 503])
        clock = FakeClock()
        retry = BatchRetry(max_retries=3, backoff_base=1.0, backoff_max=60.0)
        try:
            async with BatchClient(url, None, clock=clock, retry=retry, rng=MinJitter()) as client:
                return await client.upload(b"{}\n", "in.jsonl"), clock.sleeps, len(seen)
        finally:
            await runner.cleanup()

    file_id, sleeps, calls = asyncio.run(scenario())
    # Retry-After 2 s (no jitter drawn), then 2**1 * 1.0 / 2 (the bottom of equal jitter).
    assert (file_id, sleeps, calls) == ("file-9", [2.0, 1.0], 3)


def test_out_of_retries_and_client_errors_stop_with_the_message() -> None:
    async def scenario(statuses: list[int], retries: int) -> BatchError:
        runner, url, _ = await scripted_server(statuses)
        try:
            async with BatchClient(url, None, clock=FakeClock(), retry=BatchRetry(max_retries=retries)) as client:
                with pytest.raises(BatchError) as caught:
                    await client.upload(b"{}\n", "in.jsonl")
                return caught.value
        finally:
            await runner.cleanup()

    tired = asyncio.run(scenario([500, 500, 500], 2))
    assert "answered HTTP 500: scripted 500 [after 3 attempts]" in tired.message and not tired.fatal
    refused = asyncio.run(scenario([400], 5))
    assert refused.message.endswith("/files answered HTTP 400: scripted 400") and not refused.fatal
    missing = asyncio.run(scenario([404], 5))
    assert missing.fatal and "this endpoint has no batch API" in missing.message


def test_a_refused_key_is_fatal_and_never_shown() -> None:
    async def scenario(base_url: str) -> BatchError:
        async with BatchClient(base_url, "sk-wrong-key-123", "MY_KEY") as client:
            with pytest.raises(BatchError) as caught:
                await client.upload(b"{}\n", "in.jsonl")
            return caught.value

    with MockServerThread(MockConfig(api_key="sk-right")) as server:
        error = asyncio.run(scenario(server.base_url))
    assert error.fatal and "refused the API key read from $MY_KEY" in error.message
    assert "sk-wrong-key-123" not in error.message


def test_a_failed_batch_names_its_errors() -> None:
    async def scenario(base_url: str) -> BatchState:
        async with BatchClient(base_url, None) as client:
            file_id = await client.upload(b'{"custom_id": "a", "method": "GET"}\n', "in.jsonl")
            created = await client.create(file_id, {"created_by": "test"})
            states = await client.wait([created.id], poll_s=0.005)
            return states[created.id]

    with MockServerThread() as server:
        state = asyncio.run(scenario(server.base_url))
    assert state.status == "failed" and state.errors == (
        "line 1: invalid_request: Each line must be a request object for the batch's endpoint",
    )


def test_a_cancelled_batch_keeps_what_it_did_and_the_rest_is_not_done() -> None:
    lines = "".join(
        json.dumps({"custom_id": custom_id(("TaxCalc", str(i), 0)), "method": "POST", "url": "/v1/chat/completions",
                    "body": {"model": "mock", "messages": [{"role": "user", "content": f"第{i}题"}], "seed": 0}}) + "\n"
        for i in range(5)
    )  # fmt: skip

    async def scenario(base_url: str) -> tuple[BatchState, dict[str, Completion | BackendError]]:
        async with BatchClient(base_url, None) as client:
            created = await client.create(await client.upload(lines.encode(), "in.jsonl"), {})
            cancelling = await client.cancel(created.id)
            assert cancelling.status == "cancelling"
            state = (await client.wait([created.id], poll_s=0.005))[created.id]
            return state, await client.answers(state)

    with MockServerThread(MockConfig(batch_line_s=0.5)) as server:
        state, answers = asyncio.run(scenario(server.base_url))
        ran = server.stats.batch_lines
    assert state.status == "cancelled" and len(answers) == 5
    done = [cid for cid, a in answers.items() if isinstance(a, Completion)]
    not_done = [cid for cid, a in answers.items() if isinstance(a, BatchLineError) and a.not_done]
    assert len(done) == ran == state.completed and len(done) + len(not_done) == 5


def test_the_progress_bar_shows_the_request_counts() -> None:
    out = io.StringIO()
    bar = BatchProgress(Console(file=out, width=160, force_terminal=False))
    bar.update(BatchState("batch_7", "in_progress", completed=3, failed=1, total=9))
    bar.update(BatchState("batch_7", "finalizing", completed=7, failed=2, total=9))
    bar.stop()
    text = out.getvalue()
    assert "batch batch_7 finalizing" in text and "9/9" in text
    assert "completed 7 · failed 2 · total 9" in text


# ---------------------------------------------------------------- whole runs


def test_a_batch_run_scores_as_a_normal_run(data_dir: Path, tmp_path: Path) -> None:
    mock = MockConfig(reasoning=True, truncate_rate=0.3)
    with MockServerThread(mock) as server:
        code, output = invoke(*run_args(server, data_dir, tmp_path / "plain", tmp_path / "a.sqlite"))
        assert code == 0, output
        plain_requests = server.stats.completed
        server.reset()
        code, output = invoke(*run_args(server, data_dir, tmp_path / "batch", tmp_path / "b.sqlite", "--batch"))
        assert code == 0, output
        stats = server.stats
    assert plain_requests == N_REQUESTS
    # Every request answered by the batch, none by the chat endpoint.
    assert (stats.batches_created, stats.files_uploaded, stats.batch_lines, stats.requests) == (1, 1, N_REQUESTS, 0)
    assert set(stats.batch_answered) == all_digests() and len(stats.batch_answered) == N_REQUESTS
    assert f"batch batch_000001: {N_REQUESTS} completed, 0 failed, 0 not done\n" in output
    assert batch_rows(tmp_path / "b.sqlite") == [("batch_000001", "completed", N_REQUESTS)]
    # The same items, scores, finish reasons, usage and reasoning; the batch's answers were paid
    # for in this run, so neither says they came from the cache, and the ledgers agree.
    assert lines_of(tmp_path / "batch" / "samples.jsonl") == lines_of(tmp_path / "plain" / "samples.jsonl")
    assert any(s["finish_reason"] == "length" for s in lines_of(tmp_path / "batch" / "samples.jsonl"))
    assert not any(s.get("cached") for s in lines_of(tmp_path / "batch" / "samples.jsonl"))
    for name in ("plain", "batch"):
        assert all(p.get("reasoning") for p in lines_of(tmp_path / name / "predictions.jsonl"))
    plain, batch = (json.loads((tmp_path / n / "results.json").read_text(encoding="utf-8"))["tasks"]
                    for n in ("plain", "batch"))  # fmt: skip
    assert plain == batch and batch["TaxCalc"]["ledger"]["generated"]["generations"] == 12


def test_an_expired_batch_sends_the_rest_the_normal_way_and_nothing_is_paid_twice(data_dir: Path, tmp_path: Path) -> None:
    mock = MockConfig(batch_expire_after=0.5, failure_rate=0.2, failure_kinds=("500", "malformed"))
    cache = tmp_path / "c.sqlite"
    with MockServerThread(mock) as server:
        code, output = invoke(*run_args(server, data_dir, tmp_path / "out", cache, "--batch", "--no-stream",
                                        "--max-retries", "30"))  # fmt: skip
        stats = server.stats
    assert code == 0, output
    half = N_REQUESTS // 2
    failed = stats.batch_failed
    assert stats.batch_lines == half and 0 < failed < half  # the mock's seeded failures hit some lines
    assert len(stats.batch_answered) == half - failed
    assert (f"batch batch_000001: {half - failed} completed, {failed} failed, {half} not done (expired): "
            "sent through the normal path") in output  # fmt: skip
    # Each request answered exactly once, by the batch or by the chat endpoint.
    answered = stats.batch_answered + stats.answered
    assert len(answered) == N_REQUESTS and set(answered) == all_digests()
    assert stats.completed == half + failed
    predictions = lines_of(tmp_path / "out" / "predictions.jsonl")
    assert len(predictions) == N_REQUESTS and not any(p.get("error") for p in predictions)
    assert not any(p.get("cached") for p in predictions)  # the batch's answers were paid for in this run
    assert batch_rows(cache) == [("batch_000001", "expired", N_REQUESTS)]


def test_an_interrupted_poll_is_resumed_by_the_rerun(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "c.sqlite"
    polls: list[BatchState] = []

    def interrupt(self: BatchProgress, state: BatchState) -> None:
        polls.append(state)
        raise KeyboardInterrupt

    with MockServerThread(MockConfig(batch_line_s=0.001)) as server:
        args = run_args(server, data_dir, tmp_path / "out", cache, "--batch")
        with monkeypatch.context() as patched:
            patched.setattr(BatchProgress, "update", interrupt)
            code, output = invoke(*args)
        assert code == 130, output
        assert "Interrupted while polling batch batch_000001" in output
        assert "a rerun resumes polling batch batch_000001 and creates no new one" in output
        assert [s.id for s in polls] == ["batch_000001"]
        assert batch_rows(cache) == [("batch_000001", "open", N_REQUESTS)]
        code, output = invoke(*args)
        stats = server.stats
    assert code == 0, output
    assert "Resuming batch batch_000001" in output
    assert (stats.batches_created, stats.files_uploaded, stats.batch_lines, stats.requests) == (1, 1, N_REQUESTS, 0)
    assert batch_rows(cache) == [("batch_000001", "completed", N_REQUESTS)]


def test_a_cancelled_polling_task_leaves_the_batch_open_for_the_next_one(tmp_path: Path) -> None:
    config = GenerationConfig(max_tokens=64)
    requests = [build_request(Record("TaxCalc", str(i), f"第{i}题", str(i)), run, config)
                for i in range(3) for run in range(2)]  # fmt: skip

    async def scenario(base_url: str, store: CompletionCache) -> tuple[list[str], list[str]]:
        backend = OpenAIBackend("mock", base_url=base_url)
        missing = generations(backend, config, requests, shared=False)
        quiet = Console(file=io.StringIO())
        first: list[str] = []
        task = asyncio.ensure_future(collect(BatchClient.for_backend(backend), backend, config, missing, store,
                                             0.005, quiet, None, first))  # fmt: skip
        while not first:  # until the batch is kept open in the cache
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        second: list[str] = []
        outcomes = await collect(BatchClient.for_backend(backend), backend, config, missing, store, 0.005, quiet,
                                 None, second)  # fmt: skip
        assert [(o.completed, o.failed, o.not_done) for o in outcomes] == [(6, 0, 0)]
        assert len(store.get_many(missing)) == 6
        return first, second

    with MockServerThread(MockConfig(batch_line_s=0.01)) as server, CompletionCache(tmp_path / "c.sqlite") as store:
        first, second = asyncio.run(scenario(server.base_url, store))
        assert first == second == ["batch_000001"]
        assert (server.stats.batches_created, server.stats.batch_lines) == (1, 6)


def test_file_only_writes_what_the_runner_would_send(data_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    extra = ("--no-stream", "--temperature", "0.3", "--max-tokens", "77", "--system-prompt", "你是税务专家",
             "--gen-kwargs", '{"enable_thinking": false}')  # fmt: skip
    with MockServerThread() as server:
        sent: list[dict[str, Any]] = []
        answer = server.chat_payload

        def recording(body: dict[str, Any]) -> dict[str, Any]:
            sent.append(body)
            return answer(body)

        server.chat_payload = recording  # type: ignore[method-assign]
        code, output = invoke(*run_args(server, data_dir, tmp_path / "calc", cache, "--tasks", "TaxCalc", *extra))
        assert code == 0, output
        code, output = invoke(*run_args(server, data_dir, tmp_path / "file", cache, "--batch-file-only", *extra))
        assert code == 0, output
        assert server.stats.files_uploaded == 0 and server.stats.batches_created == 0
        sent.clear()
        code, output_all = invoke(*run_args(server, data_dir, tmp_path / "all", cache, *extra))
        assert code == 0, output_all
    path = tmp_path / "file" / "batch_input.jsonl"
    lines = lines_of(path)
    # Only what the cache lacks (TaxSCQ's), with exactly the bodies the runner then sent.
    assert sorted(parse_custom_id(line["custom_id"]) for line in lines) == sorted(
        ("TaxSCQ", row["id"], run) for row in TAXSCQ for run in range(2)
    )
    assert {(line["method"], line["url"]) for line in lines} == {("POST", "/v1/chat/completions")}
    assert sorted(json.dumps(line["body"], sort_keys=True, ensure_ascii=False) for line in lines) == sorted(
        json.dumps(body, sort_keys=True, ensure_ascii=False) for body in sent
    )
    assert len(sent) == 2 * len(TAXSCQ) and all(b["max_tokens"] == 77 and b["enable_thinking"] is False for b in sent)
    assert f"Wrote {2 * len(TAXSCQ)} requests to {path}" in output
    assert "python -m vllm.entrypoints.openai.run_batch -i" in output
    assert f"taxpraben score --data {data_dir} --batch-output {tmp_path / 'file' / 'batch_output.jsonl'}" in output


def test_score_of_a_batch_output_scores_like_its_predictions(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(failure_rate=0.25, failure_kinds=("400",), truncate_rate=0.3)) as server:
        code, output = invoke(*run_args(server, data_dir, tmp_path / "file", tmp_path / "c.sqlite", "--batch-file-only"))
        assert code == 0, output

        async def through_the_batch_api() -> tuple[bytes, bytes]:
            async with BatchClient(server.base_url, None) as client:
                content = (tmp_path / "file" / "batch_input.jsonl").read_bytes()
                created = await client.create(await client.upload(content, "in.jsonl"), {})
                state = (await client.wait([created.id], poll_s=0.005))[created.id]
                assert state.output_file_id and state.error_file_id
                return await client.content(state.output_file_id), await client.content(state.error_file_id)

        out, err = asyncio.run(through_the_batch_api())
    (tmp_path / "output.jsonl").write_bytes(out)
    (tmp_path / "errors.jsonl").write_bytes(err)
    # The same answers written by hand as predictions.
    predictions = []
    for line in [*lines_of(tmp_path / "output.jsonl"), *lines_of(tmp_path / "errors.jsonl")]:
        task, item, run = json.loads(line["custom_id"])
        status, body = line["response"]["status_code"], line["response"]["body"]
        if status != 200:
            predictions.append({"task": task, "id": item, "run": run, "prediction": "",
                                "error": f"HTTP {status}: {body['error']['message']}"})  # fmt: skip
            continue
        choice = body["choices"][0]
        predictions.append({"task": task, "id": item, "run": run, "prediction": choice["message"]["content"],
                            "model": "openai:mock", "finish_reason": choice["finish_reason"],
                            "usage": {k: body["usage"][k] for k in ("prompt_tokens", "completion_tokens")}})  # fmt: skip
    assert len(predictions) == N_REQUESTS and any("error" in p for p in predictions)
    preds_file = tmp_path / "by_hand.jsonl"
    preds_file.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions), encoding="utf-8")
    common = ["score", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--no-semantic", "--runs", "2"]
    code, output = invoke(*common, "--batch-output", str(tmp_path / "output.jsonl"), "--batch-output",
                          str(tmp_path / "errors.jsonl"), "--out", str(tmp_path / "from_batch"))  # fmt: skip
    assert code == 0, output
    code, output = invoke(*common, "--predictions", str(preds_file), "--out", str(tmp_path / "from_preds"))
    assert code == 0, output
    by_item = sorted(lines_of(tmp_path / "from_batch" / "samples.jsonl"), key=lambda s: (s["task"], s["id"], s["run"]))
    expected = sorted(lines_of(tmp_path / "from_preds" / "samples.jsonl"), key=lambda s: (s["task"], s["id"], s["run"]))
    assert by_item == expected
    assert sum(1 for s in by_item if s["status"] == "error") == sum(1 for p in predictions if "error" in p)
    tasks = [json.loads((tmp_path / n / "results.json").read_text(encoding="utf-8"))["tasks"]
             for n in ("from_batch", "from_preds")]  # fmt: skip
    assert tasks[0] == tasks[1]


def test_a_failed_batch_stops_the_run_with_its_errors(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import taxpraben.run.batch_api as batch_module

    def wrong_url(cid: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": cid, "method": "POST", "url": "/v1/completions", "body": body}

    monkeypatch.setattr(batch_module, "input_line", wrong_url)
    cache = tmp_path / "c.sqlite"
    with MockServerThread() as server:
        code, output = invoke(*run_args(server, data_dir, tmp_path / "out", cache, "--batch"))
        requests = server.stats.requests
    assert code == 1
    assert "batch batch_000001 failed: line 1: invalid_request: Each line must be a request object" in output
    assert "rerun (a new batch is sent)" in output and requests == 0
    assert batch_rows(cache) == [("batch_000001", "failed", N_REQUESTS)]


def test_batch_needs_an_openai_model_and_the_cache(data_dir: Path, tmp_path: Path) -> None:
    code, output = invoke("run", "--model", "baseline:oracle", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--batch",
                          "--out", str(tmp_path / "a"))  # fmt: skip
    assert code == 2 and "--batch needs an openai: model" in output and "baseline: backend" in output
    code, output = invoke("run", "--model", "hf:some/model", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--batch-file-only",
                          "--out", str(tmp_path / "b"))  # fmt: skip
    assert code == 2 and "--batch-file-only needs an openai: model" in output
    with MockServerThread() as server:
        code, output = invoke("run", "--model", "openai:mock", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
                              "--batch", "--no-cache", "--out", str(tmp_path / "c"))  # fmt: skip
        assert server.stats.requests == 0
    assert code == 2 and "--batch needs the completion cache" in output
    code, output = invoke("run", "--model", "openai:m", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--batch-poll", "0")
    assert code == 2 and "--batch-poll" in output


def test_score_needs_predictions_or_a_batch_output(data_dir: Path) -> None:
    code, output = invoke("score", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--no-semantic")
    assert code == 2 and "give --predictions FILE or --batch-output FILE" in output


def test_the_mock_answers_a_batch_line_as_its_chat_endpoint(tmp_path: Path) -> None:
    """The batch's 200 bodies are the chat endpoint's answers to the same bodies."""
    body = {"model": "mock", "messages": [{"role": "user", "content": "问"}], "seed": 3, "max_tokens": 9}

    async def scenario(base_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        async with aiohttp.ClientSession() as session, session.post(base_url + "/chat/completions", json=body) as resp:
            chat = await resp.json()
        async with BatchClient(base_url, None) as client:
            line = json.dumps({"custom_id": "x", "method": "POST", "url": "/v1/chat/completions", "body": body})
            created = await client.create(await client.upload(line.encode(), "in.jsonl"), {})
            state = (await client.wait([created.id], poll_s=0.005))[created.id]
            assert state.output_file_id is not None
            out = json.loads(await client.content(state.output_file_id))
        return chat, out["response"]["body"]

    with MockServerThread(MockConfig(reasoning=True, truncate_rate=1.0)) as server:
        chat, batch = asyncio.run(scenario(server.base_url))
        assert (server.stats.requests, server.stats.batch_lines) == (1, 1)
    assert chat == batch and chat["choices"][0]["finish_reason"] == "length"


def test_a_batch_file_needs_no_api_key(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--batch-file-only sends nothing (the file goes to another machine or a provider's
    console): a hosted endpoint's missing key is no error there, and is one for a run that
    sends. ``.invalid`` never resolves: nothing could be reached if something were sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    common = ["run", "--model", "openai:gpt-4o-mini", "--base-url", "https://batch.invalid/v1", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
              "--runs", "1", "--cache", str(tmp_path / "c.sqlite")]  # fmt: skip
    code, output = invoke(*common, "--out", str(tmp_path / "file"), "--batch-file-only")
    assert code == 0, output
    lines = lines_of(tmp_path / "file" / "batch_input.jsonl")
    assert lines and all(line["body"]["model"] == "gpt-4o-mini" for line in lines)
    code, output = invoke(*common, "--out", str(tmp_path / "sent"))
    assert code == 2 and "no API key for https://batch.invalid/v1" in output
