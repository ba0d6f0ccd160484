"""What ``run`` does beside generation keeps off the event loop's way (issue: the bare
client's pace at high concurrency): the answers of one turn of the loop go to the scoring
thread as one job, the warm-up starts once the first request is read (not with the first
answer), and the interpreter switches threads more often than every 5 ms while the scoring thread works."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

from taxpraben.jobs.alongside import SWITCH_INTERVAL_S, WARM_UP_AFTER_READS, WarmUp, alongside_stage
from taxpraben.jobs.read_ahead import ReadAhead
from taxpraben.models.base import GenerationConfig, Request, build_request
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction
from taxpraben.scoring.settings import ScoringSettings
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)


class CountingPool(ThreadPoolExecutor):
    """The scoring thread, counting the jobs it is given (by function name)."""

    def __init__(self) -> None:
        super().__init__(1)
        self.jobs: list[str] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.jobs.append(getattr(fn, "__name__", repr(fn)))
        return super().submit(fn, *args, **kwargs)


def answered(n: int) -> list[tuple[Request, Prediction]]:
    records = [Record("TaxCalc", str(i), f"第{i}题", str(i)) for i in range(n)]
    return [
        (build_request(r, 0, GenerationConfig(), REGISTRY["TaxCalc"]), Prediction("TaxCalc", r.id, 0, f"应纳税额为{r.id}元"))
        for r in records
    ]


def test_the_answers_of_one_turn_of_the_loop_go_to_the_scoring_thread_as_one_job() -> None:
    pairs = answered(12)
    with CountingPool() as pool:
        ahead = ReadAhead(pool, "taxpraben")

        async def two_turns() -> None:
            for request, prediction in pairs[:10]:  # one turn: ten answers
                ahead(request, prediction)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            for request, prediction in pairs[10:]:  # the next: two
                ahead(request, prediction)

        asyncio.run(two_turns())
        readings = ahead.result()
    reads = [job for job in pool.jobs if job in ("_read", "_read_all")]
    assert reads == ["_read_all", "_read_all"]
    assert readings.ahead == 12  # every answer read, as one by one
    item = readings.read(REGISTRY["TaxCalc"], pairs[11][0].record, 0, pairs[11][1])
    assert item.status == "ok" and readings.taken == 1


def test_without_an_event_loop_each_answer_is_handed_over_at_once() -> None:
    pairs = answered(3)
    with CountingPool() as pool:
        ahead = ReadAhead(pool, "taxpraben")
        for request, prediction in pairs:
            ahead(request, prediction)
        readings = ahead.result()
    assert [job for job in pool.jobs if job in ("_read", "_read_all")] == ["_read"] * 3
    assert readings.ahead == 3


def test_the_warm_up_starts_once_the_runner_reads_past_its_first_chunk() -> None:
    started: list[str] = []
    with CountingPool() as pool:
        warm_up = WarmUp(pool, [lambda: started.append("check"), lambda: started.append("readings")])
        request = answered(1)[0][0]
        for k in range(WARM_UP_AFTER_READS):  # the runner's first chunk: read before anything is sent
            warm_up(f"k{k}", request)
        assert started == [] and pool.jobs == []
        for k in range(3):
            warm_up(f"later{k}", request)
    assert started == ["check", "readings"]
    assert pool.jobs == ["sleep", "prediction_model_built"]  # waits off the lock, then builds the model


def test_the_switch_interval_is_short_while_the_scoring_thread_works_and_restored_after() -> None:
    before = sys.getswitchinterval()
    with ExitStack() as held:
        along = alongside_stage(held, REGISTRY, ScoringSettings(), ["TaxCalc"], judge=None, scoring=True)
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S < before
        on_read = along.on_read()
        assert on_read is not None and along.warm_up is not None
        request = answered(1)[0][0]
        for k in range(WARM_UP_AFTER_READS + 1):
            on_read(f"k{k}", request)  # the warm-up (at the last), then the completion's own note
        along.spec_check.result()
        along.generation_over()  # the tail: Python's own pace again
        assert sys.getswitchinterval() == before
        sys.setswitchinterval(SWITCH_INTERVAL_S)  # (as if generation had not ended: the stack restores it too)
    assert sys.getswitchinterval() == before


def test_the_collector_collects_less_often_while_run_works_and_as_before_after() -> None:
    """Each answer makes thousands of short-lived objects: at Python's 700 the collector took
    0.16-0.29 s of a C = 256 run of 2,000 requests (GC_THRESHOLD's note); the job's stack
    restores the thresholds as they were."""
    import gc

    from taxpraben.jobs.alongside import GC_THRESHOLD

    before = gc.get_threshold()
    with ExitStack() as held:
        alongside_stage(held, REGISTRY, ScoringSettings(), ["TaxCalc"], judge=None, scoring=False)
        assert gc.get_threshold() == (GC_THRESHOLD, *before[1:])
        assert before[0] < GC_THRESHOLD
    assert gc.get_threshold() == before


def test_the_warm_up_waits_for_the_runners_first_chunk_exactly() -> None:
    from taxpraben.run import runner

    assert WARM_UP_AFTER_READS == runner._FIRST_CHUNK
