"""How fast and how patiently requests go out: rate limits and the retry back-off.

:class:`RateLimiter` holds token buckets for requests and tokens per minute and the shared
pause after a 429; :func:`backoff_delay` is the wait before a retry. Both read time and wait
only through a :class:`~taxpraben.clock.Clock` and draw their jitter from an injected source,
so that tests run them on a fake clock and assert exact times.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from taxpraben.clock import SYSTEM_CLOCK, Clock
from taxpraben.costs.tokens import approximate_prompt_tokens

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue


class _Prompted(Protocol):
    """A request as the limiter reads it (``models.base.Request`` is one)."""

    @property
    def messages(self) -> Sequence[Mapping[str, JSONValue]]: ...


class _Budgeted(Protocol):
    """Decoding settings as the limiter reads them (``models.base.GenerationConfig`` is one)."""

    @property
    def max_tokens(self) -> int: ...


class Jitter(Protocol):
    """Where backoff jitter comes from: ``random.Random`` or anything with its ``uniform``."""

    def uniform(self, a: float, b: float, /) -> float: ...


class BackoffSettings(Protocol):
    """The settings :func:`backoff_delay` reads (``runner.RunnerSettings`` has them)."""

    @property
    def backoff_base(self) -> float: ...

    @property
    def backoff_max(self) -> float: ...


class RateLimiter:
    """Token buckets for requests and tokens per minute, plus a shared pause after a 429.

    Each bucket holds one second's worth (at least one request's worth), so a limit of
    600 RPM sends about 10 requests a second rather than 600 at once. Time is read from, and
    waited on, ``clock``.
    """

    def __init__(
        self, rpm: float | None = None, tpm: float | None = None, *, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self._clock = clock
        self._rpm = _Bucket(rpm / 60.0, clock) if rpm else None
        self._tpm = _Bucket(tpm / 60.0, clock) if tpm else None
        #: Until when every acquirer waits; None: never paused.
        self._paused_until: float | None = None
        self._lock = asyncio.Lock()

    @property
    def counts_tokens(self) -> bool:
        """Whether :meth:`acquire` and :meth:`settle_tokens` use the token counts (a TPM limit)."""
        return self._tpm is not None

    def pause(self, seconds: float) -> None:
        """Hold every acquirer for ``seconds`` (the server's Retry-After)."""
        until = self._clock.now() + seconds
        self._paused_until = until if self._paused_until is None else max(self._paused_until, until)

    async def acquire(self, requests: int, tokens: int) -> None:
        if self._rpm is None and self._tpm is None and self._paused_until is None:
            return
        async with self._lock:  # first come, first served
            while True:
                wait = -1.0 if self._paused_until is None else self._paused_until - self._clock.now()
                for bucket, need in ((self._rpm, requests), (self._tpm, tokens)):
                    if bucket is not None:
                        wait = max(wait, bucket.wait_for(need))
                if wait <= 0:
                    break
                await self._clock.sleep(wait)
            if self._rpm is not None:
                self._rpm.take(requests)
            if self._tpm is not None:
                self._tpm.take(tokens)

    def settle_tokens(self, estimated: int, actual: int) -> None:
        """Give back (or charge) the difference between the estimate and the usage."""
        if self._tpm is not None:
            self._tpm.take(actual - estimated)


class _Bucket:
    def __init__(self, per_second: float, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self.rate = per_second
        self.capacity = max(1.0, per_second)
        self.level = self.capacity
        self.stamp = clock.now()

    def _refill(self) -> None:
        now = self._clock.now()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, need: float) -> float:
        """Seconds until ``need`` may be taken (a need above capacity waits for a full bucket)."""
        self._refill()
        need = min(need, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float) -> None:
        self._refill()
        self.level -= amount  # may go negative: a debt later requests wait out


def backoff_delay(
    attempt: int,
    settings: BackoffSettings,
    retry_after: float | None = None,
    *,
    rng: Jitter | None = None,
) -> float:
    """Wait before retry number ``attempt`` (1-based).

    The server's ``Retry-After`` when it sent one (plus up to 10% jitter, so that the
    workers it stopped do not return in one burst); otherwise exponential backoff with
    "equal jitter": uniform in [d/2, d] for d = min(backoff_max, backoff_base * 2**(attempt-1)).
    The jitter is drawn from ``rng`` (default: the ``random`` module's shared generator).
    """
    uniform = random.uniform if rng is None else rng.uniform
    if retry_after is not None:
        return retry_after * (1 + uniform(0, 0.1))
    ceiling = min(settings.backoff_max, settings.backoff_base * float(2 ** (attempt - 1)))
    return ceiling / 2 + uniform(0, ceiling / 2)


def estimate_tokens(request: _Prompted, config: _Budgeted) -> int:
    """A token estimate for the TPM limiter: the prompt's approximate tokens
    (``tokens.approximate_prompt_tokens``, calibrated on Qwen2.5) plus max_tokens."""
    return approximate_prompt_tokens(request.messages) + config.max_tokens
