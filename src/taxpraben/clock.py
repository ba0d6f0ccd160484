"""Time as the runner reads it: a :class:`Clock` gives monotonic seconds and sleeps.

The runner, its rate limiter and its retry backoff read time and wait only through a
clock, so that tests drive them on a fake one (``tests/helpers/fake_clock.py``: virtual
time that jumps to the next wake-up once every task waits) and assert exact times rather
than wall-clock bounds. Real runs use :data:`SYSTEM_CLOCK`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic time in seconds, and a sleep measured on the same time."""

    def now(self) -> float:
        """Seconds since an arbitrary origin; never goes back."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return after ``seconds`` of this clock's time (0 or less: yield to the loop once)."""
        ...


class SystemClock:
    """The machine's clock: ``time.monotonic()`` and ``asyncio.sleep()``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK: Clock = SystemClock()
