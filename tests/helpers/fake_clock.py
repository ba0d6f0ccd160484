"""A virtual clock for asyncio tests of timing logic (rate limits, backoff, deadlines).

:class:`FakeClock` implements :class:`taxpraben.clock.Clock`. Its time stands still while
any task can run; once every task of the loop waits (nothing is ready to run) and some wait
on ``clock.sleep()``, time jumps to the earliest wake-up and the sleepers due then wake, in
the order they went to sleep. So a test asserts exact virtual times ("the 21st request at
20 per second starts at t=0.05") and takes no wall-clock time at all.

It watches the default asyncio event loop's ready queue (``loop._ready``, a CPython detail)
to know when every task waits. Tasks that wait on real I/O or real timers do not hold time
back: a test on a fake clock should use neither (fake backends, not the mock HTTP server).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math


class FakeClock:
    """Virtual monotonic seconds, starting at ``start``; see the module's docstring."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watching = False
        #: Every duration passed to :meth:`sleep`, in order (0 and below included).
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        wake = loop.create_future()
        # Time moves on even for a sleep too short to change the float (a rate limiter's
        # rounding remainder): one that did not would be asked for again and again.
        when = max(self._now + seconds, math.nextafter(self._now, math.inf))
        heapq.heappush(self._sleepers, (when, next(self._order), wake))
        self._watch(loop)
        await wake  # a cancelled sleep leaves a cancelled future: skipped when due

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds`` by hand, waking the sleepers due by then."""
        if seconds < 0:
            raise ValueError("time does not go back")
        self._wake_until(self._now + seconds)

    @property
    def pending(self) -> list[float]:
        """The wake-up times of the sleepers still waiting, earliest first."""
        return sorted(when for when, _, fut in self._sleepers if not fut.done())

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        if not hasattr(loop, "_ready"):
            raise TypeError(f"FakeClock needs the default asyncio event loop, not {type(loop).__name__}")
        if loop is not self._loop:  # a new asyncio.run(): what the old loop had is gone
            self._loop, self._watching = loop, False
            self._sleepers = [s for s in self._sleepers if not s[2].done() and s[2].get_loop() is loop]
            heapq.heapify(self._sleepers)
        if not self._watching:
            self._watching = True
            loop.call_soon(self._tick)

    def _tick(self) -> None:
        """Once per turn of the loop while anyone sleeps: jump ahead when nothing can run."""
        loop = self._loop
        assert loop is not None
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
        if not self._sleepers or loop.is_closed():
            self._watching = False
            return
        if not loop._ready:  # type: ignore[attr-defined]  # every task waits
            self._wake_until(self._sleepers[0][0])
        loop.call_soon(self._tick)

    def _wake_until(self, when: float) -> None:
        self._now = max(self._now, when)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, wake = heapq.heappop(self._sleepers)
            if not wake.done():
                wake.set_result(None)


class MaxJitter:
    """A ``Jitter`` that always draws the top of the range (``random.Random.uniform``'s ``b``)."""

    def uniform(self, a: float, b: float, /) -> float:
        return b


class MinJitter:
    """A ``Jitter`` that always draws the bottom of the range."""

    def uniform(self, a: float, b: float, /) -> float:
        return a
