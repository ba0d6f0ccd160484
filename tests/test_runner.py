"""The runner: retries, limits, cache, dedupe, interruption.

End to end against the mock server where HTTP matters (fault classification, caching, the
progress bar); on a fake clock with fake backends where time does (rate limits, backoff,
Retry-After, deadlines, the unreachable grace, interruption): those assert exact virtual
times, never wall-clock bounds.
"""

from __future__ import annotations

import asyncio
import io
import random
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from helpers.fake_clock import FakeClock, MaxJitter, MinJitter
from helpers.mock_openai_server import MockConfig, MockServer
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    Request,
    build_request,
)
from taxpraben.models.openai import OpenAIBackend
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction
from taxpraben.run.cache import CacheError, CompletionCache
from taxpraben.run.pacing import RateLimiter, backoff_delay
from taxpraben.run.runner import RunAborted, Runner, RunnerSettings
from taxpraben.terminal.console import deferred_console, is_made

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
    on_answer: Callable[[Request, Prediction], None] | None = None,
) -> tuple[list[Prediction], Runner, MockServer]:
    """Run ``requests`` against a fresh mock server (``port``: reuse an endpoint's cache keys)."""

    async def scenario() -> tuple[list[Prediction], Runner, MockServer]:
        server = MockServer(server_config, port=port)
        await server.start()
        try:
            backend = OpenAIBackend(
                "mock", base_url=server.base_url, concurrency=settings.concurrency, timeout=timeout
            )
            runner = Runner(backend, config, settings, cache=cache, on_answer=on_answer)
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


#: For request ``id`` at attempt ``n`` (1-based): how long it takes, and the error it ends in
#: (None: it is answered).
Plan = Callable[[str, int], tuple[float, BackendError | None]]


def answered_at_once(item: str, attempt: int) -> tuple[float, BackendError | None]:
    return 0.0, None


class TimedBackend:
    """A backend on a fake clock: each attempt takes and ends as ``plan`` says; it notes when
    each attempt started and how many were in flight at most."""

    kind = "fake"
    model = "timed"
    endpoint = None
    batch_size = 1
    cacheable = False
    spec = "fake:timed"

    def __init__(self, clock: FakeClock, plan: Plan = answered_at_once) -> None:
        self.clock = clock
        self.plan = plan
        self.starts: list[tuple[float, str]] = []
        self.in_flight = self.max_in_flight = 0

    def shares_runs(self, config: GenerationConfig) -> bool:
        return False

    def started(self, item: str) -> list[float]:
        return [t for t, i in self.starts if i == item]

    async def generate(self, requests: Sequence[Request], config: GenerationConfig) -> list[Completion | BackendError]:
        (request,) = requests
        item = request.record.id
        attempt = len(self.started(item)) + 1
        self.starts.append((self.clock.now(), item))
        latency, error = self.plan(item, attempt)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await (self.clock.sleep(latency) if latency else asyncio.sleep(0))
        finally:
            self.in_flight -= 1
        return [error or Completion(text=f"答案 {item}")]

    async def aclose(self) -> None:
        pass


def timed_run(
    plan: Plan, n: int, settings: RunnerSettings, *, clock: FakeClock | None = None
) -> tuple[list[Prediction], TimedBackend, FakeClock]:
    """Run ``n`` requests (ids "0".."n-1") through a TimedBackend; jitter at its maximum."""
    clock = clock or FakeClock()
    backend = TimedBackend(clock, plan)
    runner = Runner(backend, CONFIG, settings, clock=clock, rng=MaxJitter())
    preds = asyncio.run(runner.run(make_requests(n=n, runs=1)))
    return preds, backend, clock


def test_retry_after_is_honoured_and_pauses_every_worker() -> None:
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        if item == "0" and attempt == 1:
            return 0.0, BackendError("HTTP 429: slow down", retryable=True, retry_after=1.0)
        return (0.5 if item == "1" else 0.0), None

    settings = RunnerSettings(concurrency=2, progress=False)
    preds, backend, _ = timed_run(plan, 3, settings)
    assert all(not p.error for p in preds)
    # Item 1 ends at 0.5; item 2 then waits out the pause to t=1.0; item 0 retries after
    # Retry-After plus its (maximal, 10%) jitter.
    assert backend.starts == [(0.0, "0"), (0.0, "1"), (1.0, "2"), (pytest.approx(1.1), "0")]


def test_a_long_retry_after_that_fits_the_deadline_is_waited_on() -> None:
    """Retry-After 600 s with a 900 s deadline: waited on (its jitter kept inside the
    deadline: with the maximal 10% it would end at 660 s, still inside), then answered."""
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        if attempt == 1:
            return 0.0, BackendError("HTTP 429: slow down", retryable=True, retry_after=600.0)
        return 0.0, None

    preds, backend, _ = timed_run(plan, 1, RunnerSettings(deadline=900.0, progress=False))
    assert not preds[0].error and backend.started("0") == [0.0, pytest.approx(660.0)]
    # 850 s: the maximal jitter (935 s) would pass the deadline; the wait ends inside it.
    def later(item: str, attempt: int) -> tuple[float, BackendError | None]:
        if attempt == 1:
            return 0.0, BackendError("HTTP 429: slow down", retryable=True, retry_after=850.0)
        return 0.0, None

    preds, backend, _ = timed_run(later, 1, RunnerSettings(deadline=900.0, progress=False))
    assert not preds[0].error and backend.started("0") == [0.0, pytest.approx(875.0)]


def test_a_retry_after_past_the_deadline_is_named_in_the_error() -> None:
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        return 0.0, BackendError("HTTP 429: slow down", retryable=True, retry_after=3600.0)

    preds, backend, clock = timed_run(plan, 1, RunnerSettings(deadline=900.0, progress=False))
    assert backend.started("0") == [0.0] and clock.now() < 900.0  # not waited on in vain
    assert preds[0].error == ("HTTP 429: slow down [after 1 attempt, the server asked to wait 3600 s "
                              "(Retry-After), past the --deadline of 900 s]")  # fmt: skip


def test_rate_limiter_waits_for_the_pause_and_the_buckets() -> None:
    clock = FakeClock()

    async def scenario() -> list[float]:
        limiter = RateLimiter(tpm=6000, clock=clock)  # 100 tokens per second, bucket of 100
        times = []
        await limiter.acquire(1, 100)
        times.append(clock.now())
        await limiter.acquire(1, 50)  # the bucket is empty: 50 tokens take 0.5 s
        times.append(clock.now())
        limiter.settle_tokens(50, 0)  # refunded: 50 in the bucket
        limiter.pause(0.1)
        await limiter.acquire(1, 10)  # only the pause holds it; 50 left
        times.append(clock.now())
        await limiter.acquire(1, 250)  # above capacity: waits for a full bucket, owes 150
        times.append(clock.now())
        await limiter.acquire(1, 10)  # the debt and 10 more: 1.6 s
        times.append(clock.now())
        return times

    assert asyncio.run(scenario()) == pytest.approx([0.0, 0.5, 0.6, 1.1, 2.7])


def test_rate_limiter_requests_per_minute() -> None:
    clock = FakeClock()

    async def scenario() -> list[float]:
        limiter = RateLimiter(rpm=600, clock=clock)  # 10 per second, a bucket of 10
        times = []
        for _ in range(13):
            await limiter.acquire(1, 0)
            times.append(clock.now())
        return times

    # The first 10 at once, the 11th at t=0.1, then one every 0.1 s.
    assert asyncio.run(scenario()) == pytest.approx([0.0] * 10 + [0.1, 0.2, 0.3])


def test_rpm_limit_spaces_requests() -> None:
    settings = RunnerSettings(concurrency=16, rpm=1200, progress=False)  # 20 per second
    _, backend, _ = timed_run(answered_at_once, 30, settings)
    # A bucket of one second's worth (20) goes at once, the other 10 at 20 per second.
    assert [t for t, _ in backend.starts] == pytest.approx([0.0] * 20 + [0.05 * k for k in range(1, 11)])


@pytest.mark.parametrize(
    ("latency", "starts", "attempts"),
    [
        # Backoffs of 0.05 and 0.1 s; the next (0.2 s) would end past the deadline.
        (0.0, [0.0, 0.05, 0.15], 3),
        # The second attempt ends at 0.25, past the deadline: no third.
        (0.1, [0.0, 0.15], 2),
    ],
)
def test_deadline_stops_retrying(latency: float, starts: list[float], attempts: int) -> None:
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        return latency, BackendError("HTTP 500: internal error", retryable=True)

    settings = RunnerSettings(max_retries=100, deadline=0.2, backoff_base=0.05, progress=False)
    preds, backend, _ = timed_run(plan, 2, settings)
    assert backend.started("0") == backend.started("1") == pytest.approx(starts)
    assert all(
        p.error == f"HTTP 500: internal error [after {attempts} attempts, deadline of 0.2 s reached]"
        for p in preds
    )


def test_concurrency_is_bounded() -> None:
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        return 0.05, None

    settings = RunnerSettings(concurrency=4, progress=False)
    _, backend, clock = timed_run(plan, 24, settings)
    # 24 requests, 4 at a time, 0.05 s each: 6 waves, done at t=0.3.
    assert backend.max_in_flight == 4
    assert [t for t, _ in backend.starts] == pytest.approx([0.05 * (k // 4) for k in range(24)])
    assert clock.now() == pytest.approx(0.3)


def test_an_attempt_that_waited_out_its_deadline_is_retried_at_once() -> None:
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        if attempt == 1:
            return 2.0, BackendError("no first token after 2.0 s", retryable=True, waited=True)
        return 0.0, None

    preds, backend, _ = timed_run(plan, 1, RunnerSettings(progress=False))
    assert not preds[0].error
    assert backend.started("0") == [0.0, 2.0]  # the 2 s wait was the backoff


def test_nothing_answering_stops_once_the_grace_has_passed() -> None:
    def plan(item: str, attempt: int) -> tuple[float, BackendError | None]:
        return 0.0, BackendError("cannot connect to http://x/v1", retryable=True, unreachable=True)

    settings = RunnerSettings(concurrency=1, max_retries=100, backoff_base=0.5, unreachable_grace=5.0, progress=False)
    clock = FakeClock()
    with pytest.raises(RunAborted, match=r"nothing has answered for 5\.0 s: stopped"):
        timed_run(plan, 1, settings, clock=clock)
    # Backoffs of 0.5, 1, 2 s; the 4 s one is cut to end just past the grace.
    assert clock.now() == pytest.approx(5.01)
    assert clock.sleeps == pytest.approx([0.5, 1.0, 2.0, 1.51])


def test_the_run_starts_on_the_runner_clock() -> None:
    clock = FakeClock(start=100.0)
    runner = Runner(TimedBackend(clock), CONFIG, RunnerSettings(progress=False), clock=clock)
    assert runner.stats.started == 100.0


def test_backoff_grows_with_jitter_and_respects_retry_after() -> None:
    s = RunnerSettings(backoff_base=1.0, backoff_max=8.0)
    low, high = MinJitter(), MaxJitter()
    assert [backoff_delay(a, s, rng=low) for a in (1, 2, 3, 4, 9)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [backoff_delay(a, s, rng=high) for a in (1, 2, 3, 4, 9)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff_delay(1, s, retry_after=5.0, rng=low) == 5.0
    assert backoff_delay(1, s, retry_after=5.0, rng=high) == pytest.approx(5.5)
    assert backoff_delay(3, s, retry_after=0.0) == 0.0
    # A real generator jitters within [d/2, d]; the default is the random module's.
    for rng in (random.Random(7), None):
        drawn = [backoff_delay(1, s, rng=rng) for _ in range(50)]
        assert all(0.5 <= d <= 1.0 for d in drawn) and len(set(drawn)) > 1


def test_cache_hits_send_nothing_and_keep_predictions(tmp_path: Path) -> None:
    reqs = make_requests(n=10, runs=2)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        first, _, server = generate(MockConfig(reasoning=True), reqs, cache=cache)
        assert server.stats.requests == 20 and len(cache) == 20
        port = server.port  # the endpoint is part of the key
        again, runner, server = generate(MockConfig(reasoning=True), reqs, cache=cache, port=port)
        assert server.stats.requests == 0 and runner.stats.cached == 20
        # The same answers, each marked as taken from the cache (nothing paid for it).
        assert [p.to_json() for p in again] == [{**p.to_json(), "cached": True} for p in first]
        assert not any(p.cached for p in first)
        assert all(p.reasoning for p in again)
        # Another config is another key: everything is sent again.
        hot = GenerationConfig(max_tokens=32, temperature=0.7)
        _, _, server = generate(
            MockConfig(), make_requests(10, 2, hot), cache=cache, config=hot, port=port
        )
        assert server.stats.requests == 20


def test_each_generation_is_handed_over_once_as_soon_as_it_is_known(tmp_path: Path) -> None:
    """on_answer gets every generation once (cache hits, completions, final failures), with
    the prediction the run returns for its request."""
    reqs = make_requests(n=6, runs=2)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        _, _, server = generate(MockConfig(), reqs[:4], cache=cache)
        handed: list[tuple[Request, Prediction]] = []
        failing = MockConfig(failure_rate=0.5, failure_kinds=("400",))
        settings = RunnerSettings(concurrency=4, max_retries=0, progress=False)
        preds, runner, _ = generate(failing, reqs, settings, cache=cache, port=server.port,
                                    on_answer=lambda r, p: handed.append((r, p)))  # fmt: skip
    assert runner.stats.cached == 4 and runner.stats.failed > 0
    assert sorted(r.key for r, _ in handed) == sorted(r.key for r in reqs)
    returned = {(p.task, p.id, p.run): p.to_json() for p in preds}
    assert all(returned[r.key] == p.to_json() for r, p in handed)
    assert {r.key for r, _ in handed[:4]} == {r.key for r in reqs[:4]}  # the cache first


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


class _WatchedBackend:
    """Answers after ``seconds`` of ``clock``; notes whether the console was made (rich
    imported for the progress bar) when each request was handed to it and half-way."""

    kind = "openai"
    model = "watched"
    endpoint = "http://watched/v1"
    batch_size = 1
    cacheable = True
    spec = "openai:watched"

    def __init__(self, clock: FakeClock, seconds: float, console: object) -> None:
        self.clock, self.seconds, self.console = clock, seconds, console
        self.made_at_send: list[bool] = []
        self.made_half_way: list[bool] = []

    def shares_runs(self, config: GenerationConfig) -> bool:
        return False

    async def generate(self, requests: Sequence[Request], config: GenerationConfig) -> list[Completion | BackendError]:
        self.made_at_send.append(is_made(self.console))
        await self.clock.sleep(self.seconds / 2)
        self.made_half_way.append(is_made(self.console))
        await self.clock.sleep(self.seconds / 2)
        return [Completion(text=f"答案 {r.record.id}") for r in requests]

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize(
    ("seconds", "made_half_way"),
    [(1.0, [True, True, True]),  # the bar's timer (0.1 s) comes before the first answer
     (0.04, [False, False, True])],  # the first answer shows it, counted
)
def test_the_progress_bar_waits_for_the_first_request(seconds: float, made_half_way: list[bool]) -> None:
    """The bar (and rich, for its console) comes after the first request is handed to the
    backend: 0.1 s after it on the runner's clock, or at the first answer if that is sooner,
    with the answers so far counted (start-up, issue 24)."""
    clock, buf = FakeClock(), io.StringIO()
    console = deferred_console(file=buf, force_terminal=True, width=140)
    backend = _WatchedBackend(clock, seconds, console)
    runner = Runner(backend, CONFIG, RunnerSettings(concurrency=2, progress=True), console=console, clock=clock)
    asyncio.run(runner.run(make_requests(n=3, runs=1)))
    assert backend.made_at_send == [False, False, True]  # the third went after the first answer
    assert backend.made_half_way == made_half_way
    assert "3/3" in buf.getvalue() and "openai:watched" in buf.getvalue()


def test_a_run_with_nothing_to_send_still_shows_its_bar(tmp_path: Path) -> None:
    """Everything from the cache: no request, and the bar shows where the run ended."""
    clock, buf = FakeClock(), io.StringIO()
    reqs = make_requests(n=2, runs=1)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        asyncio.run(Runner(_WatchedBackend(clock, 0.01, None), CONFIG, cache=cache, clock=clock).run(reqs))
        backend = _WatchedBackend(clock, 0.01, None)
        console = Console(file=buf, force_terminal=True, width=140)
        runner = Runner(backend, CONFIG, RunnerSettings(progress=True), cache=cache, console=console, clock=clock)
        asyncio.run(runner.run(reqs))
    assert backend.made_at_send == [] and runner.stats.cached == 2
    assert "0/0" in buf.getvalue() and "(2 cached)" in buf.getvalue()


class _SlowBackend:
    """Completes one request per 0.02 s of ``clock``, so a run can be interrupted half-way."""

    kind = "openai"
    model = "slow"
    endpoint = "http://slow/v1"
    batch_size = 1
    cacheable = True
    spec = "openai:slow"

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def shares_runs(self, config: GenerationConfig) -> bool:
        return False

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        await self.clock.sleep(0.02)
        return [Completion(text=f"答案 {r.record.id}") for r in requests]

    async def aclose(self) -> None:
        self.closed = True


def test_cancellation_keeps_what_arrived(tmp_path: Path) -> None:
    reqs = make_requests(n=100, runs=1)
    clock = FakeClock()
    backend = _SlowBackend(clock)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        runner = Runner(backend, CONFIG, RunnerSettings(concurrency=2, progress=False), cache=cache, clock=clock)

        async def scenario() -> None:
            task = asyncio.ensure_future(runner.run(reqs))
            await clock.sleep(0.25)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(scenario())
        assert backend.closed
        # Two at a time, 0.02 s each: 24 arrived by t=0.25, all of them committed.
        assert len(cache) == runner.stats.done == 24
        # Resume: only the rest is generated.
        runner2 = Runner(
            _SlowBackend(clock), CONFIG, RunnerSettings(concurrency=50, progress=False), cache=cache, clock=clock
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
        clock = FakeClock()
        runner = Runner(
            _SlowBackend(clock), CONFIG, RunnerSettings(concurrency=2, progress=False), cache=cache, clock=clock
        )
        with pytest.raises(CacheError, match="cannot write: database or disk is full"):
            asyncio.run(runner.run(make_requests(n=20, runs=1)))
        assert runner.stats.done < 20  # it stopped early rather than generate into the void


@pytest.mark.parametrize(("settings", "estimated"), [
    (FAST, 0),  # no TPM limit, no budget: nothing reads an estimate, none is made
    (RunnerSettings(concurrency=8, tpm=10**9, progress=False), 10),  # the limiter counts tokens
])  # fmt: skip
def test_prompts_are_estimated_only_where_a_limit_reads_the_estimate(
    monkeypatch: pytest.MonkeyPatch, settings: RunnerSettings, estimated: int
) -> None:
    import taxpraben.run.runner as runner_module

    made: list[int] = []
    real = runner_module.estimate_tokens

    def counting(request: Request, config: GenerationConfig) -> int:
        made.append(1)
        return real(request, config)

    monkeypatch.setattr(runner_module, "estimate_tokens", counting)
    preds, _, _ = generate(MockConfig(), make_requests(10, runs=1), settings)
    assert all(not p.error for p in preds) and len(preds) == 10
    assert len(made) == estimated
