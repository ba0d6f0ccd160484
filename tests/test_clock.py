"""The clocks: the system one the runner uses by default, and the fake one its tests use."""

from __future__ import annotations

import asyncio

import pytest

from helpers.fake_clock import FakeClock
from taxpraben.clock import SYSTEM_CLOCK, Clock, SystemClock


def test_the_system_clock_is_monotonic_and_sleeps() -> None:
    assert isinstance(SYSTEM_CLOCK, SystemClock)
    first = SYSTEM_CLOCK.now()
    asyncio.run(SYSTEM_CLOCK.sleep(0))
    assert SYSTEM_CLOCK.now() >= first


def test_sleepers_wake_at_their_times_in_order() -> None:
    clock: Clock = FakeClock(start=10.0)
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.now()))

    async def scenario() -> None:
        await asyncio.gather(sleeper("b", 2.0), sleeper("a", 0.5), sleeper("c", 2.0), sleeper("d", 0.0))

    asyncio.run(scenario())
    # Concurrent sleeps overlap (2 s in all, not 4.5); equal wake-ups keep their order.
    assert woke == [("d", 10.0), ("a", 10.5), ("b", 12.0), ("c", 12.0)]
    assert clock.now() == 12.0


def test_time_stands_still_while_a_task_can_run() -> None:
    clock = FakeClock()
    seen: list[float] = []

    async def busy() -> None:
        for _ in range(1000):
            seen.append(clock.now())
            await asyncio.sleep(0)  # yields, but stays ready to run

    async def scenario() -> None:
        await asyncio.gather(clock.sleep(1.0), busy())

    asyncio.run(scenario())
    assert set(seen) == {0.0} and clock.now() == 1.0


def test_a_cancelled_sleep_does_not_move_time() -> None:
    clock = FakeClock()

    async def scenario() -> float:
        long = asyncio.ensure_future(clock.sleep(100.0))
        await clock.sleep(1.0)
        long.cancel()
        await asyncio.gather(long, return_exceptions=True)
        await clock.sleep(1.0)
        return clock.now()

    assert asyncio.run(scenario()) == 2.0
    assert clock.pending == [] and clock.sleeps == [1.0, 100.0, 1.0]


def test_advance_by_hand_and_reuse_across_event_loops() -> None:
    clock = FakeClock()
    clock.advance(3.0)
    assert clock.now() == 3.0
    with pytest.raises(ValueError):
        clock.advance(-1.0)
    for _ in range(2):  # one clock, two asyncio.run()s: time carries on
        asyncio.run(clock.sleep(0.5))
    assert clock.now() == 4.0
