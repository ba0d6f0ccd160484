"""The first-token deadlines of one backend's streamed attempts, and the watchdog that moves them.

:mod:`taxpraben.models.streaming` explains the limits: each endpoint has its own adaptive
:class:`~taxpraben.models.streaming.FirstTokenDeadline` (replicas may differ in speed), and a
request whose first token timed out before waits twice as long on each further attempt
(its strikes). An attempt runs under one ``asyncio.timeout`` set to its limit when it
starts; while it waits, a watchdog task moves that timeout to what the adaptive limit says
now, so that a hung attempt started before anything was learned is cut as soon as the
endpoint's normal first-token time is known.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from taxpraben.models.streaming import FirstTokenDeadline

#: How often the first-token watchdog tightens (or relaxes) the deadlines of waiting attempts.
WATCH_INTERVAL_S = 0.25


@dataclass(frozen=True, eq=False)
class FirstTokenAttempt:
    """One attempt waiting for its first token: when it started and what it may wait
    (compared and hashed by identity: each attempt is its own)."""

    key: Hashable
    start: float
    #: Earlier first-token timeouts of its request.
    strikes: int
    #: Its endpoint's adaptive deadline.
    deadline: FirstTokenDeadline
    #: Seconds it may wait, as the deadline said when it started.
    limit: float


class FirstTokenWatch:
    """The per-endpoint deadlines, the strikes per request and the waiting attempts."""

    def __init__(self, endpoints: int, *, cap: float, floor: float) -> None:
        self.deadlines = [FirstTokenDeadline(cap=cap, floor=min(floor, cap)) for _ in range(endpoints)]
        #: Earlier first-token timeouts per request key (each doubles the next limit).
        self._strikes: dict[Hashable, int] = {}
        #: Attempts waiting for their first token, and the asyncio.Timeout each runs under.
        self._waiting: dict[FirstTokenAttempt, asyncio.Timeout] = {}
        self._watchdog: asyncio.Task[None] | None = None

    def attempt(self, key: Hashable, endpoint: int, start: float) -> FirstTokenAttempt:
        """A new attempt of request ``key`` on endpoint number ``endpoint``."""
        strikes = self._strikes.get(key, 0)
        deadline = self.deadlines[endpoint]
        return FirstTokenAttempt(key, start, strikes, deadline, deadline.limit(strikes))

    def wait(self, attempt: FirstTokenAttempt, timeout: asyncio.Timeout) -> None:
        """``attempt`` waits under ``timeout``: the watchdog moves it until it is answered."""
        self._waiting[attempt] = timeout
        if self._watchdog is None or self._watchdog.done():
            self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    def arrived(self, attempt: FirstTokenAttempt, now: Callable[[], float]) -> None:
        """The attempt's first token came (at ``now()``): it is learned from, once, and its
        request's strikes are forgiven."""
        if attempt in self._waiting:
            del self._waiting[attempt]
            attempt.deadline.observe(now() - attempt.start)
            self._strikes.pop(attempt.key, None)

    def done(self, attempt: FirstTokenAttempt) -> None:
        """The attempt no longer waits (answered, failed or cancelled)."""
        self._waiting.pop(attempt, None)

    def missed(self, attempt: FirstTokenAttempt) -> None:
        """The attempt timed out before its first token: one strike more for its request."""
        self._strikes[attempt.key] = attempt.strikes + 1

    async def _watch(self) -> None:
        """Move the deadline of every attempt still waiting for its first token to what the
        adaptive limit says now (the module doc)."""
        while self._waiting:
            await asyncio.sleep(WATCH_INTERVAL_S)
            limits: dict[tuple[int, int], float] = {}
            for attempt, timeout in list(self._waiting.items()):
                which = (id(attempt.deadline), attempt.strikes)
                if which not in limits:
                    limits[which] = attempt.deadline.limit(attempt.strikes)
                # An expiring deadline refuses: its attempt is being given up anyway.
                with contextlib.suppress(RuntimeError):
                    timeout.reschedule(attempt.start + limits[which])

    def close(self) -> None:
        """Stop the watchdog (the backend is closed)."""
        if self._watchdog is not None and not self._watchdog.done():
            self._watchdog.cancel()
        self._watchdog = None
