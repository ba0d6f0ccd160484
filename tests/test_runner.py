"""The runner against the mock server: retries, limits, cache, dedupe, interruption."""

from __future__ import annotations

import asyncio
import io
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from helpers.mock_openai_server import MockConfig, MockServer
from taxpraben.cache import CacheError, CompletionCache
from taxpraben.data.records import Record
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    Request,
    build_request,
)
from taxpraben.models.openai import OpenAIBackend
from taxpraben.predictions import Prediction
from taxpraben.runner import RateLimiter, Runner, RunnerSettings, backoff_delay

CONFIG = GenerationConfig(max_tokens=32)
FAST = RunnerSettings(concurrency=8, backoff_base=0.005, backoff_max=0.05, progress=False)


def make_requests(n: int = 30, runs: int = 2, config: GenerationConfig = CONFIG) -> list[Request]:
    records = [
        Record(task="TaxCalc", id=str(i), query=f"第{i}题：计算税额", answer="1") for i in range(n)
    ]
    return [build_request(r, run, config) for run in range(runs) for r in records]


def generate(
    server_config: MockConfig,
    requests: Sequence[Request],
    settings: RunnerSettings = FAST,
    cache: CompletionCache | None = None,
    timeout: float = 5.0,
    config: GenerationConfig = CONFIG,
    port: int = 0,
) -> tuple[list[Prediction], Runner, MockServer]:
    """Run ``requests`` against a fresh mock server (``port``: reuse an endpoint's cache keys)."""

    async def scenario() -> tuple[list[Prediction], Runner, MockServer]:
        server = MockServer(server_config, port=port)
        await server.start()
        try:
            backend = OpenAIBackend(
                "mock", base_url=server.base_url, concurrency=settings.concurrency, timeout=timeout
            )
            runner = Runner(backend, config, settings, cache=cache)
            return await runner.run(requests), runner, server
        finally:
            await server.stop()

    return asyncio.run(scenario())


def texts(preds: list[Prediction]) -> list[tuple[Any, ...]]:
    return [(p.task, p.id, p.run, p.prediction, p.usage, p.error) for p in preds]


def test_twenty_percent_failures_give_the_clean_predictions() -> None:
    reqs = make_requests()
    clean, _, clean_server = generate(MockConfig(latency=0.002), reqs)
    assert clean_server.stats.requests == len(reqs)
    faulty, runner, server = generate(
        MockConfig(latency=0.002, failure_rate=0.2, hang_s=0.5),
        reqs,
        RunnerSettings(
            concurrency=8, max_retries=12, backoff_base=0.005, backoff_max=0.05, progress=False
        ),
        timeout=0.3,
    )
    assert texts(faulty) == texts(clean)
    assert all(not p.error and p.prediction for p in faulty)
    injected = sum(server.stats.failures.values())
    assert injected > 0 and set(server.stats.failures) <= {
        "429",
        "500",
        "hang",
        "reset",
        "malformed",
    }
    assert runner.stats.retries == injected
    assert server.stats.completed == len(reqs)


def test_final_failures_are_errors_and_are_not_cached(tmp_path: Path) -> None:
    reqs = make_requests(n=4, runs=1)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        settings = RunnerSettings(concurrency=4, max_retries=2, backoff_base=0.001, progress=False)
        preds, runner, server = generate(
            MockConfig(failure_rate=1.0, failure_kinds=("500",)), reqs, settings, cache=cache
        )
        assert server.stats.requests == 4 * 3  # first attempt + 2 retries each
        assert all(p.prediction == "" for p in preds)
        assert all(p.error == "HTTP 500: internal error [after 3 attempts]" for p in preds)
        assert runner.stats.failed == 4 and len(cache) == 0
        # The rerun retries them, and now they pass.
        preds, _, server = generate(MockConfig(), reqs, settings, cache=cache)
        assert server.stats.requests == 4 and all(not p.error for p in preds)
        assert len(cache) == 4


def test_client_errors_fail_at_once_with_the_server_message() -> None:
    reqs = make_requests(n=3, runs=1)
    preds, runner, server = generate(MockConfig(failure_rate=1.0, failure_kinds=("400",)), reqs)
    assert server.stats.requests == 3 and runner.stats.retries == 0
    assert preds[0].error == "HTTP 400: Invalid parameter: max_tokens is too large"


def test_retry_after_is_honoured() -> None:
    reqs = make_requests(n=1, runs=1)
    start = time.monotonic()

    async def scenario() -> tuple[list[Prediction], MockServer]:
        server = MockServer(MockConfig(failure_rate=1.0, failure_kinds=("429",), retry_after=0.3))
        await server.start()
        backend = OpenAIBackend("mock", base_url=server.base_url)
        runner = Runner(backend, CONFIG, FAST)
        task = asyncio.ensure_future(runner.run(reqs))
        await asyncio.sleep(0.1)
        server.config.failure_rate = 0.0  # the second attempt passes
        preds = await task
        await server.stop()
        return preds, server

    preds, server = asyncio.run(scenario())
    assert not preds[0].error and server.stats.requests == 2
    assert time.monotonic() - start >= 0.3


def test_deadline_stops_retrying() -> None:
    reqs = make_requests(n=2, runs=1)
    settings = RunnerSettings(max_retries=100, deadline=0.2, backoff_base=0.05, progress=False)
    preds, _, server = generate(MockConfig(failure_rate=1.0, failure_kinds=("500",)), reqs, settings)
    # Backoffs of 0.05, 0.1, 0.2 s reach the 0.2 s deadline within a few attempts, not 101
    # (a slower machine only makes fewer attempts fit).
    assert server.stats.requests <= 2 * 5
    assert all("deadline of 0.2 s reached" in (p.error or "") for p in preds)


def test_concurrency_is_bounded() -> None:
    reqs = make_requests(n=24, runs=1)
    settings = RunnerSettings(concurrency=4, progress=False)
    start = time.monotonic()
    generate(MockConfig(latency=0.05), reqs, settings)
    # 24 requests, 4 at a time, 0.05 s each: at least 6 waves.
    assert time.monotonic() - start >= 0.3


def test_rpm_limit_spaces_requests() -> None:
    reqs = make_requests(n=30, runs=1)
    settings = RunnerSettings(concurrency=16, rpm=1200, progress=False)  # 20 per second
    start = time.monotonic()
    generate(MockConfig(), reqs, settings)
    # A bucket of one second's worth (20) goes at once, the other 10 at 20 per second.
    assert time.monotonic() - start >= 0.45


def test_rate_limiter_tokens_and_pause() -> None:
    async def scenario() -> float:
        limiter = RateLimiter(tpm=6000)  # 100 tokens per second, bucket of 100
        start = time.monotonic()
        await limiter.acquire(1, 100)
        await limiter.acquire(1, 50)  # waits ~0.5 s
        limiter.settle_tokens(50, 0)  # refund
        limiter.pause(0.1)
        await limiter.acquire(1, 10)
        return time.monotonic() - start

    assert asyncio.run(scenario()) >= 0.55  # no upper bound: a loaded machine is slower


def test_backoff_grows_with_jitter_and_respects_retry_after() -> None:
    s = RunnerSettings(backoff_base=1.0, backoff_max=8.0)
    d1 = [backoff_delay(1, s) for _ in range(50)]
    d4 = [backoff_delay(4, s) for _ in range(50)]
    d9 = [backoff_delay(9, s) for _ in range(50)]
    assert all(0.5 <= d <= 1.0 for d in d1) and len(set(d1)) > 1
    assert all(4.0 <= d <= 8.0 for d in d4)
    assert all(d <= 8.0 for d in d9)
    assert all(5.0 <= backoff_delay(1, s, retry_after=5.0) <= 5.5 for _ in range(20))
    assert backoff_delay(3, s, retry_after=0.0) == 0.0


def test_cache_hits_send_nothing_and_keep_predictions(tmp_path: Path) -> None:
    reqs = make_requests(n=10, runs=2)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        first, _, server = generate(MockConfig(reasoning=True), reqs, cache=cache)
        assert server.stats.requests == 20 and len(cache) == 20
        port = server.port  # the endpoint is part of the key
        again, runner, server = generate(MockConfig(reasoning=True), reqs, cache=cache, port=port)
        assert server.stats.requests == 0 and runner.stats.cached == 20
        assert [p.to_json() for p in again] == [p.to_json() for p in first]
        assert all(p.reasoning for p in again)
        # Another config is another key: everything is sent again.
        hot = GenerationConfig(max_tokens=32, temperature=0.7)
        _, _, server = generate(
            MockConfig(), make_requests(10, 2, hot), cache=cache, config=hot, port=port
        )
        assert server.stats.requests == 20


def test_identical_requests_are_sent_once() -> None:
    records = [Record(task="TaxQA", id=str(i), query="同一个问题", answer="") for i in range(5)]
    reqs = [build_request(r, 0, CONFIG) for r in records]
    preds, runner, server = generate(MockConfig(), reqs)
    assert server.stats.requests == 1 and runner.stats.unique == 1
    assert [p.id for p in preds] == ["0", "1", "2", "3", "4"]
    assert len({p.prediction for p in preds}) == 1


def test_progress_bar_shows_counters() -> None:
    buf = io.StringIO()
    reqs = make_requests(n=5, runs=1)

    async def scenario() -> None:
        server = MockServer(MockConfig(failure_rate=0.3, failure_kinds=("500",)))
        await server.start()
        backend = OpenAIBackend("mock", base_url=server.base_url)
        console = Console(file=buf, force_terminal=True, width=140)
        settings = RunnerSettings(max_retries=20, backoff_base=0.001, progress=True)
        await Runner(backend, CONFIG, settings, console=console).run(reqs)
        await server.stop()

    asyncio.run(scenario())
    out = buf.getvalue()
    assert "openai:mock" in out and "5/5" in out
    assert "retries" in out and "failed 0" in out and "tokens" in out


class _SlowBackend:
    """Completes one request per 0.02 s, so a run can be interrupted half-way."""

    kind = "openai"
    model = "slow"
    endpoint = "http://slow/v1"
    batch_size = 1
    cacheable = True
    spec = "openai:slow"

    def shares_runs(self, config: GenerationConfig) -> bool:
        return False

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        await asyncio.sleep(0.02)
        return [Completion(text=f"答案 {r.record.id}") for r in requests]

    async def aclose(self) -> None:
        self.closed = True


def test_cancellation_keeps_what_arrived(tmp_path: Path) -> None:
    reqs = make_requests(n=100, runs=1)
    backend = _SlowBackend()
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        runner = Runner(backend, CONFIG, RunnerSettings(concurrency=2, progress=False), cache=cache)

        async def scenario() -> None:
            task = asyncio.ensure_future(runner.run(reqs))
            await asyncio.sleep(0.25)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(scenario())
        assert backend.closed
        assert 5 <= len(cache) == runner.stats.done < 100
        # Resume: only the rest is generated.
        runner2 = Runner(
            _SlowBackend(), CONFIG, RunnerSettings(concurrency=50, progress=False), cache=cache
        )
        preds = asyncio.run(runner2.run(reqs))
        assert runner2.stats.cached == runner.stats.done
        assert runner2.stats.done == 100 - runner.stats.done
        assert [p.prediction for p in preds] == [f"答案 {i}" for i in range(100)]


def test_a_cache_that_cannot_be_written_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(*args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    with CompletionCache(tmp_path / "c.sqlite") as cache:
        monkeypatch.setattr(cache, "put_many", disk_full)
        runner = Runner(
            _SlowBackend(), CONFIG, RunnerSettings(concurrency=2, progress=False), cache=cache
        )
        with pytest.raises(CacheError, match="cannot write: database or disk is full"):
            asyncio.run(runner.run(make_requests(n=20, runs=1)))
        assert runner.stats.done < 20  # it stopped early rather than generate into the void
