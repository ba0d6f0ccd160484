"""A run's progress where stderr is no terminal (``nohup``, CI, a scheduler's ``> log 2>&1``).

rich's bar draws only on a terminal; redirected, a long run's log stayed empty until it ended.
:class:`PlainProgress` prints one plain line instead, at a steady pace: every
:data:`EVERY_S` seconds (answers or not), or once another :data:`EVERY_SHARE` of the
generations is done, whichever comes first, no two lines within :data:`FLOOR_S` seconds for
the share (a run of seconds writes a few lines, not twenty), and a last line when sending ends::

    openai:qwen: 120/400 (30%) · 2.4/s · failed 0 · ETA 1m57s · tokens 84,210

A slow model's rate reads in seconds per item (``42.0 s/item``), not ``0.0/s``. Time is the
runner's :class:`~taxpraben.clock.Clock`, so that tests run the pace on a fake one.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.clock import Clock
    from taxpraben.terminal.progress import RunStats

#: Seconds between two lines at most.
EVERY_S = 30.0
#: Share of the generations after which a line is printed (sooner than EVERY_S).
EVERY_SHARE = 0.05
#: Seconds between two lines at least, for the share's lines.
FLOOR_S = 1.0


def rate_text(done: int, seconds: float) -> str:
    """``2.4/s``, or ``42.0 s/item`` below one item a second; ``-/s`` before anything is done."""
    if done <= 0 or seconds <= 0:
        return "-/s"
    rate = done / seconds
    return f"{rate:.1f}/s" if rate >= 1 else f"{seconds / done:.1f} s/item"


def duration_text(seconds: float) -> str:
    """``1h02m``, ``1m57s``, ``9s``."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def progress_line(spec: str, stats: RunStats, done: int, total: int, seconds: float) -> str:
    """One line of progress: done/total, share, rate, failures, time left, tokens."""
    share = f" ({100 * done / total:.0f}%)" if total else ""
    left = total - done
    eta = duration_text(left * seconds / done) if done and left > 0 else ("0s" if done else "?")
    return (f"{spec}: {done}/{total}{share} · {rate_text(done, seconds)} · failed {stats.failed} · "
            f"ETA {eta} · tokens {stats.tokens:,}")  # fmt: skip


class PlainProgress:
    """The bar's interface (``set_total``, ``show_completed``, ``stop``) as plain lines on
    ``console`` at the pace of the module doc, on ``clock``; started with ``completed`` done."""

    def __init__(self, spec: str, stats: RunStats, console: Console, total: int, clock: Clock,
                 completed: int = 0) -> None:  # fmt: skip
        self._spec, self._stats, self._console, self._clock = spec, stats, console, clock
        self._total, self._done = total, completed
        self._started = clock.now()
        self._last_at = self._started
        self._last_done = completed
        self._ticker: asyncio.Future[None] | None = None
        with suppress(RuntimeError):  # no running loop: lines at answers only
            asyncio.get_running_loop()
            self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        while True:
            await self._clock.sleep(max(0.0, self._last_at + EVERY_S - self._clock.now()))
            if self._clock.now() - self._last_at >= EVERY_S:
                self._print()

    def _print(self) -> None:
        now = self._clock.now()
        self._last_at, self._last_done = now, self._done
        line = progress_line(self._spec, self._stats, self._done, self._total, now - self._started)
        self._console.print(line, markup=False, highlight=False, soft_wrap=True)

    def set_total(self, total: int) -> None:
        self._total = total

    def show_completed(self, completed: int) -> None:
        self._done = completed
        since = self._clock.now() - self._last_at
        step = max(1.0, EVERY_SHARE * self._total)
        if since >= EVERY_S or (completed - self._last_done >= step and since >= FLOOR_S):
            self._print()

    def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self._print()
