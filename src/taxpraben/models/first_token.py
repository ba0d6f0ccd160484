"""The deadlines of one backend's streamed attempts, and the watchdog that enforces them.

:mod:`taxpraben.models.streaming` explains the limits: each endpoint has its own adaptive
:class:`~taxpraben.models.streaming.FirstTokenDeadline` (replicas may differ in speed), a
request whose first token timed out before waits twice as long on each further attempt
(its strikes), and once tokens flow an attempt may go ``idle`` seconds without a chunk.

Time is read on a :class:`~taxpraben.clock.Clock` (the watchdog sleeps on it too), so that
tests drive these decisions on a fake clock. Every :data:`WATCH_INTERVAL_S` of the clock,
the watchdog gives up each attempt whose time is due (what the adaptive limit says now for
one still waiting for its first token; its last chunk plus ``idle`` for one that streams):
a hung attempt started before anything was learned is cut as soon as the endpoint's normal
first-token time is known, a stalled stream once it has been idle too long, each within
one interval of its due time. Each attempt runs under one ``asyncio.timeout`` that the
watchdog expires; it is also the backstop should the watchdog not run (set to the limit
when the attempt starts, to ``idle`` after each chunk, and by the watchdog to one interval
past the due time).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Hashable
from dataclasses import dataclass, field

from taxpraben.clock import SYSTEM_CLOCK, Clock
from taxpraben.models.streaming import FirstTokenDeadline

#: How often (clock seconds) the watchdog moves the deadlines of the attempts in flight.
WATCH_INTERVAL_S = 0.25


@dataclass(eq=False)
class StreamAttempt:
    """One streamed attempt: when it started, what it may wait for its first token, and
    when its last chunk came (compared and hashed by identity: each attempt is its own)."""

    key: Hashable
    start: float
    #: Earlier first-token timeouts of its request.
    strikes: int
    #: Its endpoint's adaptive deadline.
    deadline: FirstTokenDeadline
    #: Seconds it may wait for a first token, as the deadline said when it started.
    limit: float
    #: When its last chunk came (None: no token yet).
    last_chunk: float | None = field(default=None)

    @property
    def streaming(self) -> bool:
        return self.last_chunk is not None


class FirstTokenWatch:
    """The per-endpoint deadlines, the strikes per request and the attempts in flight."""

    def __init__(
        self, endpoints: int, *, cap: float, floor: float, idle: float | None = None, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.deadlines = [FirstTokenDeadline(cap=cap, floor=min(floor, cap)) for _ in range(endpoints)]
        self.idle = idle
        self.clock = clock
        #: Earlier first-token timeouts per request key (each doubles the next limit).
        self._strikes: dict[Hashable, int] = {}
        #: Attempts in flight, and the asyncio.Timeout each runs under.
        self._waiting: dict[StreamAttempt, asyncio.Timeout] = {}
        self._watchdog: asyncio.Task[None] | None = None

    def attempt(self, key: Hashable, endpoint: int) -> StreamAttempt:
        """A new attempt of request ``key`` on endpoint number ``endpoint``, starting now."""
        strikes = self._strikes.get(key, 0)
        deadline = self.deadlines[endpoint]
        return StreamAttempt(key, self.clock.now(), strikes, deadline, deadline.limit(strikes))

    def backstop(self, attempt: StreamAttempt) -> asyncio.Timeout:
        """The ``asyncio.timeout`` for ``attempt`` to run under, at its first-token limit
        (the watchdog moves it; :meth:`wait` hands it over)."""
        return asyncio.timeout(attempt.limit)

    def wait(self, attempt: StreamAttempt, timeout: asyncio.Timeout) -> None:
        """``attempt`` runs under ``timeout``: the watchdog moves it until the attempt is done."""
        self._waiting[attempt] = timeout
        if self._watchdog is None or self._watchdog.done():
            self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    def chunk(self, attempt: StreamAttempt, timeout: asyncio.Timeout) -> None:
        """Tokens came for ``attempt`` now. The first time, its first-token time is learned
        from and its request's strikes are forgiven; each time, its idle limit starts over."""
        now = self.clock.now()
        if attempt.last_chunk is None and attempt in self._waiting:
            attempt.deadline.observe(now - attempt.start)
            self._strikes.pop(attempt.key, None)
        attempt.last_chunk = now
        if self.idle is not None:
            timeout.reschedule(asyncio.get_running_loop().time() + self.idle)

    def done(self, attempt: StreamAttempt) -> None:
        """The attempt is over (answered, failed or cancelled)."""
        self._waiting.pop(attempt, None)

    def missed(self, attempt: StreamAttempt) -> None:
        """The attempt timed out before its first token: one strike more for its request."""
        self._strikes[attempt.key] = attempt.strikes + 1

    def waited(self, attempt: StreamAttempt) -> float:
        """Clock seconds since ``attempt`` started."""
        return self.clock.now() - attempt.start

    def due(self, attempt: StreamAttempt, limits: dict[tuple[int, int], float] | None = None) -> float | None:
        """The clock time at which ``attempt`` is to be given up (None: no limit applies)."""
        if attempt.last_chunk is not None:
            return None if self.idle is None else attempt.last_chunk + self.idle
        which = (id(attempt.deadline), attempt.strikes)
        if limits is None or which not in limits:
            limit = attempt.deadline.limit(attempt.strikes)
            if limits is not None:
                limits[which] = limit
        else:
            limit = limits[which]
        return attempt.start + limit

    async def _watch(self) -> None:
        """Give up every attempt in flight whose time is due; move the others' backstops to
        one interval past their due time (the module doc)."""
        loop = asyncio.get_running_loop()
        while self._waiting:
            await self.clock.sleep(WATCH_INTERVAL_S)
            limits: dict[tuple[int, int], float] = {}
            now, loop_now = self.clock.now(), loop.time()
            for attempt, timeout in list(self._waiting.items()):
                due = self.due(attempt, limits)
                if due is None:
                    continue
                when = loop_now if due <= now else loop_now + (due - now) + WATCH_INTERVAL_S
                # An expiring deadline refuses: its attempt is being given up anyway.
                with contextlib.suppress(RuntimeError):
                    timeout.reschedule(when)

    def close(self) -> None:
        """Stop the watchdog (the backend is closed)."""
        if self._watchdog is not None and not self._watchdog.done():
            self._watchdog.cancel()
        self._watchdog = None
