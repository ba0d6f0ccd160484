"""The runner reading its requests while it sends them (issue 12: a start-up that is instant).

A fake backend records, at each ``generate`` call, how many requests the lazy feed had
produced so far: the first call must come before the feed is exhausted, the answers must be
those of a plain list, in the same order, and an exception raised by the feed (a data
error) must stop the sending at once rather than after the queue drains.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from helpers.fake_clock import FakeClock
from taxpraben.models.base import BackendError, Completion, GenerationConfig, Request, build_request
from taxpraben.records import Record
from taxpraben.run.cache import CompletionCache
from taxpraben.run.runner import Runner, RunnerSettings

CONFIG = GenerationConfig(max_tokens=8)
SETTINGS = RunnerSettings(concurrency=4, progress=False)


class CountingBackend:
    """Answers each request with its query reversed; notes the feed's progress per call."""

    kind = "fake"
    model = "fake"
    endpoint = None
    cacheable = True

    def __init__(
        self, produced: list[int], batch_size: int = 1, delay: float = 0.0, clock: FakeClock | None = None
    ) -> None:
        self.produced = produced
        self.batch_size = batch_size
        self.delay = delay
        self.clock = clock
        self.calls: list[int] = []
        self.sent: list[tuple[str, str, int]] = []

    @property
    def spec(self) -> str:
        return "fake:fake"

    def shares_runs(self, config: GenerationConfig) -> bool:
        return False

    async def generate(self, requests: Sequence[Request], config: GenerationConfig) -> list[Completion | BackendError]:
        self.calls.append(self.produced[0])
        self.sent.extend(r.key for r in requests)
        await (self.clock.sleep(self.delay) if self.clock is not None else asyncio.sleep(self.delay))
        return [Completion(text=r.messages[-1]["content"][::-1]) for r in requests]

    async def aclose(self) -> None:
        pass


def requests_for(n: int, runs: int = 1) -> list[Request]:
    records = [Record(task="TaxCalc", id=str(i), query=f"第{i}题", answer="1") for i in range(n)]
    return [build_request(r, run, CONFIG) for run in range(runs) for r in records]


def counted(requests: list[Request], produced: list[int], fail_after: int | None = None) -> Iterator[Request]:
    for i, request in enumerate(requests):
        if fail_after is not None and i == fail_after:
            raise ValueError(f"record {i} is faulty")
        produced[0] += 1
        yield request


def test_first_request_goes_out_before_the_feed_is_read_and_answers_match_a_list() -> None:
    requests = requests_for(600, runs=2)
    produced = [0]
    backend = CountingBackend(produced)
    streamed = asyncio.run(Runner(backend, CONFIG, SETTINGS).run(counted(requests, produced)))
    assert produced[0] == len(requests)
    assert backend.calls[0] < len(requests) // 2, backend.calls[:5]
    listed = asyncio.run(Runner(CountingBackend([0]), CONFIG, SETTINGS).run(requests))
    assert streamed == listed
    assert [(p.task, p.id, p.run) for p in streamed] == [r.key for r in requests]
    assert [p.prediction for p in streamed] == [r.messages[-1]["content"][::-1] for r in requests]
    assert sorted(backend.sent) == sorted(r.key for r in requests)


def test_an_error_of_the_feed_stops_the_sending_at_once() -> None:
    requests = requests_for(1000)
    produced = [0]
    clock = FakeClock()
    backend = CountingBackend(produced, delay=0.01, clock=clock)
    with pytest.raises(ValueError, match="record 900 is faulty"):
        asyncio.run(Runner(backend, CONFIG, SETTINGS, clock=clock).run(counted(requests, produced, fail_after=900)))
    assert produced[0] == 900
    # On the fake clock no time passes while the feed is read: each of the 4 workers has its
    # first request out when the error stops them. Without the producer watched, they would
    # have gone on to send all 900 queued requests.
    assert len(backend.sent) == SETTINGS.concurrency and clock.now() == 0.0


def test_cached_requests_are_looked_up_as_they_are_read(tmp_path: Path) -> None:
    requests = requests_for(300)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        first = asyncio.run(Runner(CountingBackend([0]), CONFIG, SETTINGS, cache=cache).run(requests[:200]))
        produced = [0]
        backend = CountingBackend(produced)
        runner = Runner(backend, CONFIG, SETTINGS, cache=cache)
        again = asyncio.run(runner.run(counted(requests, produced)))
    assert again[:200] == [p.model_copy(update={"cached": True}) for p in first]
    assert runner.stats.cached == 200 and runner.stats.done == 100 and runner.stats.unique == 300
    assert sorted(backend.sent) == sorted(r.key for r in requests[200:])


def test_a_batched_backend_gets_the_batches_of_the_whole_list() -> None:
    requests = requests_for(100)
    produced = [0]
    backend = CountingBackend(produced, batch_size=16)
    asyncio.run(Runner(backend, CONFIG, RunnerSettings(concurrency=16, progress=False)).run(counted(requests, produced)))
    assert backend.calls == [100] * 7  # read whole first: 6 batches of 16 and one of 4
    assert backend.sent == [r.key for r in requests]
