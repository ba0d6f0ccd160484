"""Driving requests through a backend: the one owner of concurrency, rate limits and retries.

:class:`Runner` takes the requests of a run (every record x every run index), looks each up
in the completion cache, and sends only what is missing, with at most ``concurrency``
requests in flight (for batched local backends: ``concurrency`` items per batch, one batch
at a time). Each completion is committed to the cache as it arrives (those that arrive in
the same turn of the event loop share one transaction), so an interrupted run (Ctrl-C,
``kill -9``, a lost machine) resumes where it stopped.

Retries: an attempt that fails with a retryable error (429, 5xx, timeout, dropped
connection, garbled body) is retried up to ``max_retries`` times, after the ``Retry-After``
the server asked for, else after an exponential backoff with jitter (none after an attempt
that was given up for want of a first token: its wait was the backoff); a ``Retry-After`` also
pauses every worker, since the server said it is saturated. An item stops being retried once its ``deadline``
(seconds since its first attempt) has passed. Items that still fail become predictions
with ``error`` set and an empty answer; they are never cached, so a rerun retries them.

Stopping early: a failure no request can get past (``BackendError.fatal``: a refused key,
a model or endpoint the server lacks) stops the whole run at the first one with
:class:`RunAborted`; so does a server that cannot be connected to while nothing has ever
answered, once ``unreachable_grace`` seconds have passed since the first refused
connection. Before sending anything, a backend that has a ``preflight()`` (the OpenAI one:
a ``GET /models``) is asked once, so that a wrong URL or key costs no generation at all.
Completions already received stay in the cache.

Requests that would get the same completion are sent once: identical cache keys (same
messages, config, seed and run) share one request, and when the backend says its runs
share one generation (greedy local decoding, deterministic baselines) only run 0 is made
and copied to the other runs.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from taxpraben.cache import CacheError, CompletionCache, cache_key
from taxpraben.models.base import (
    Backend,
    BackendError,
    Completion,
    GenerationConfig,
    Request,
)
from taxpraben.predictions import Prediction


@dataclass(frozen=True)
class RunnerSettings:
    """How hard to drive the backend and how patiently to retry."""

    concurrency: int = 16
    #: Requests per minute / tokens per minute (None: unlimited).
    rpm: float | None = None
    tpm: float | None = None
    max_retries: int = 6
    #: Seconds from an item's first attempt after which it is not retried again.
    deadline: float = 900.0
    #: Backoff before retry k (1-based) is about backoff_base * 2**(k-1), capped.
    backoff_base: float = 0.5
    backoff_max: float = 60.0
    progress: bool = True
    #: Ask the backend's ``preflight()`` (when it has one) before sending anything.
    preflight: bool = True
    #: While no request has ever been answered, stop once connections have been refused
    #: (or failed to resolve) for this many seconds.
    unreachable_grace: float = 5.0


class RunAborted(Exception):
    """The run was stopped because no further request could succeed (the message says why)."""


@dataclass
class RunStats:
    """Counters shown on the progress bar and in the command's summary."""

    predictions: int = 0
    #: Distinct generations the run needs, found in the cache, and sent.
    unique: int = 0
    cached: int = 0
    to_send: int = 0
    done: int = 0
    failed: int = 0
    #: Of ``failed``: those the server rejected as invalid (not retryable: a rerun won't help).
    rejected: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    shared_generation: bool = False
    first_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RateLimiter:
    """Token buckets for requests and tokens per minute, plus a shared pause after a 429.

    Each bucket holds one second's worth (at least one request's worth), so a limit of
    600 RPM sends about 10 requests a second rather than 600 at once.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self._rpm = _Bucket(rpm / 60.0) if rpm else None
        self._tpm = _Bucket(tpm / 60.0) if tpm else None
        self._paused_until = 0.0
        self._lock = asyncio.Lock()

    def pause(self, seconds: float) -> None:
        """Hold every acquirer for ``seconds`` (the server's Retry-After)."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def acquire(self, requests: int, tokens: int) -> None:
        if self._rpm is None and self._tpm is None and self._paused_until == 0.0:
            return
        async with self._lock:  # first come, first served
            while True:
                wait = self._paused_until - time.monotonic()
                for bucket, need in ((self._rpm, requests), (self._tpm, tokens)):
                    if bucket is not None:
                        wait = max(wait, bucket.wait_for(need))
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            if self._rpm is not None:
                self._rpm.take(requests)
            if self._tpm is not None:
                self._tpm.take(tokens)

    def settle_tokens(self, estimated: int, actual: int) -> None:
        """Give back (or charge) the difference between the estimate and the usage."""
        if self._tpm is not None:
            self._tpm.take(actual - estimated)


class _Bucket:
    def __init__(self, per_second: float) -> None:
        self.rate = per_second
        self.capacity = max(1.0, per_second)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
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
    attempt: int, settings: RunnerSettings, retry_after: float | None = None
) -> float:
    """Wait before retry number ``attempt`` (1-based).

    The server's ``Retry-After`` when it sent one (plus up to 10% jitter, so that the
    workers it stopped do not return in one burst); otherwise exponential backoff with
    "equal jitter": uniform in [d/2, d] for d = min(backoff_max, backoff_base * 2**(attempt-1)).
    """
    if retry_after is not None:
        return retry_after * (1 + random.uniform(0, 0.1))
    ceiling = min(settings.backoff_max, settings.backoff_base * 2 ** (attempt - 1))
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def estimate_tokens(request: Request, config: GenerationConfig) -> int:
    """A token estimate for the TPM limiter: one per prompt character plus max_tokens."""
    return sum(len(m.get("content") or "") for m in request.messages) + config.max_tokens


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "-/s", style="progress.data.speed")


class _StatsColumn(ProgressColumn):
    def __init__(self, stats: RunStats) -> None:
        super().__init__()
        self._stats = stats

    def render(self, task: Task) -> Text:
        s = self._stats
        style = "red" if s.failed else "dim"
        return Text(f"retries {s.retries} · failed {s.failed} · tokens {s.tokens:,}", style=style)


class Runner:
    """Generates the predictions of a run; ``stats`` stays readable after an interruption."""

    def __init__(
        self,
        backend: Backend,
        config: GenerationConfig,
        settings: RunnerSettings | None = None,
        *,
        cache: CompletionCache | None = None,
        console: Console | None = None,
    ) -> None:
        self.backend = backend
        self.config = config
        self.settings = settings or RunnerSettings()
        self.cache = cache if backend.cacheable else None
        self.console = console or Console(stderr=True)
        self.stats = RunStats()
        self._limiter = RateLimiter(self.settings.rpm, self.settings.tpm)
        self._results: dict[str, Completion | BackendError] = {}
        self._unsaved: list[tuple[str, Completion, Request]] = []
        self._save_error: CacheError | None = None
        self._progress: Progress | None = None
        self._task_id: int | None = None
        #: True once the endpoint answered anything (a completion or an HTTP error).
        self._answered = False
        self._first_unreachable: float | None = None

    def _group_key(self, request: Request) -> str:
        """Requests with the same group key get one generation."""
        if self.stats.shared_generation:
            request = replace(request, run=0, seed=self.config.seed_for(0))
        if self.backend.cacheable:
            return cache_key(
                backend=self.backend.kind,
                model=self.backend.model,
                endpoint=self.backend.endpoint,
                request=request,
                config=self.config,
            )
        task, item, run = request.key
        return f"{task}\x00{item}\x00{run}"

    async def run(self, requests: Sequence[Request]) -> list[Prediction]:
        """Predictions for ``requests``, in their order (failed items carry ``error``)."""
        stats = self.stats
        stats.predictions = len(requests)
        stats.shared_generation = self.backend.shares_runs(self.config)
        keys = [self._group_key(r) for r in requests]
        unique: dict[str, Request] = {}
        for key, request in zip(keys, requests, strict=True):
            if key not in unique:
                # For shared generation the representative is the run-0 request.
                unique[key] = (
                    replace(request, run=0, seed=self.config.seed_for(0))
                    if stats.shared_generation
                    else request
                )
        stats.unique = len(unique)
        if self.cache is not None:
            self._results.update(self.cache.get_many(unique))
        stats.cached = len(self._results)
        missing = [(k, r) for k, r in unique.items() if k not in self._results]
        stats.to_send = len(missing)
        try:
            if missing:
                await self._preflight()
                await self._send_all(missing)
        finally:
            self._save()
            await self.backend.aclose()
            self._stop_progress()
        if self._save_error is not None:
            raise self._save_error
        return [self._prediction(r, self._results[k]) for k, r in zip(keys, requests, strict=True)]

    async def _preflight(self) -> None:
        check = getattr(self.backend, "preflight", None) if self.settings.preflight else None
        if check is None:
            return
        error = await check()
        if error is not None and error.fatal:
            raise RunAborted(error.message)

    def _check_abort(self, error: BackendError) -> None:
        """Raise RunAborted for a fatal error, or for connections refused for too long."""
        if error.fatal:
            raise RunAborted(error.message)
        if not error.unreachable:
            self._answered = True
            return
        if self._answered:
            return
        now = time.monotonic()
        if self._first_unreachable is None:
            self._first_unreachable = now
        elif now - self._first_unreachable >= self.settings.unreachable_grace:
            raise RunAborted(
                f"{error.message}; nothing has answered for "
                f"{now - self._first_unreachable:.1f} s: stopped"
            )

    async def _send_all(self, missing: list[tuple[str, Request]]) -> None:
        size = max(1, self.backend.batch_size)
        batches = [missing[i : i + size] for i in range(0, len(missing), size)]
        workers = max(1, min(len(batches), self.settings.concurrency // size or 1))
        self._start_progress(len(missing))
        feed = iter(batches)

        async def worker() -> None:
            for batch in feed:  # one shared iterator: each batch goes to one worker
                await self._process(batch)

        tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _process(self, batch: list[tuple[str, Request]]) -> None:
        """Send one batch, retrying the items that failed in a retryable way."""
        settings = self.settings
        pending = batch
        first_attempt = time.monotonic()
        attempt = 0
        while pending:
            if self._save_error is not None:
                raise self._save_error
            attempt += 1
            estimates = [estimate_tokens(r, self.config) for _, r in pending]
            await self._limiter.acquire(len(pending), sum(estimates))
            outcomes = await self.backend.generate([r for _, r in pending], self.config)
            retry: list[tuple[str, Request, BackendError]] = []
            retry_after: float | None = None
            for (key, request), outcome, estimate in zip(pending, outcomes, estimates, strict=True):
                if isinstance(outcome, Completion):
                    self._answered = True
                    self._limiter.settle_tokens(estimate, _usage_total(outcome, estimate))
                    self._succeed(key, request, outcome)
                    continue
                self._limiter.settle_tokens(estimate, 0)
                self._check_abort(outcome)
                out_of_time = time.monotonic() - first_attempt >= settings.deadline
                if outcome.retryable and attempt <= settings.max_retries and not out_of_time:
                    retry.append((key, request, outcome))
                    if outcome.retry_after is not None:
                        retry_after = max(retry_after or 0.0, outcome.retry_after)
                else:
                    self._fail(key, outcome, attempt, out_of_time)
            if not retry:
                return
            self.stats.retries += len(retry)
            delay = backoff_delay(attempt, settings, retry_after)
            if retry_after is None and all(error.waited for _, _, error in retry):
                delay = 0.0  # the attempt already waited out its deadline: that was the backoff
            if self._first_unreachable is not None and not self._answered:
                # Nothing has answered yet: do not sleep past the point of giving up.
                left = self._first_unreachable + settings.unreachable_grace - time.monotonic()
                delay = min(delay, max(left, 0.0) + 0.01)
            if time.monotonic() + delay - first_attempt >= settings.deadline:
                for key, _, error in retry:
                    self._fail(key, error, attempt, True)
                return
            if retry_after:
                self._limiter.pause(retry_after)
            await asyncio.sleep(delay)
            pending = [(key, request) for key, request, _ in retry]

    def _succeed(self, key: str, request: Request, completion: Completion) -> None:
        self._results[key] = completion
        if self.cache is not None:
            # Committed on the next turn of the event loop, together with whatever else
            # arrived in this one: no network wait lies between arrival and commit, so a
            # kill still loses only what is in flight, at a fraction of the commits.
            if not self._unsaved:
                asyncio.get_running_loop().call_soon(self._save)
            self._unsaved.append((key, completion, request))
        stats = self.stats
        stats.done += 1
        if completion.usage:
            stats.prompt_tokens += completion.usage.get("prompt_tokens", 0)
            stats.completion_tokens += completion.usage.get("completion_tokens", 0)
        self._advance()

    def _save(self) -> None:
        """Commit the completions received since the last commit (one transaction)."""
        if self.cache is not None and self._unsaved:
            entries, self._unsaved = self._unsaved, []
            try:
                self.cache.put_many(entries, backend=self.backend.kind, model=self.backend.model)
            except sqlite3.Error as exc:  # disk full, file removed...: stop, loudly
                self._save_error = CacheError(f"{self.cache.path}: cannot write: {exc}")

    def _fail(self, key: str, error: BackendError, attempts: int, out_of_time: bool) -> None:
        if error.unreachable and not self._answered:
            # Out of retries and nothing has ever answered: every other item would follow.
            raise RunAborted(f"{error.message}; nothing has answered after {attempts} attempt(s): stopped")
        message = error.message
        if attempts > 1 or out_of_time:
            why = f", deadline of {self.settings.deadline:g} s reached" if out_of_time else ""
            message = f"{message} [after {attempts} attempts{why}]"
        final = BackendError(message, retryable=error.retryable)
        self._results[key] = final
        self.stats.failed += 1
        self.stats.rejected += 0 if error.retryable else 1
        self.stats.first_error = self.stats.first_error or final.message
        self._advance()

    def _prediction(self, request: Request, outcome: Completion | BackendError) -> Prediction:
        task, item, run = request.key
        if isinstance(outcome, BackendError):
            return Prediction(
                task=task, id=item, run=run, prediction="", model=self.backend.spec,
                error=outcome.message,
            )  # fmt: skip
        return Prediction(
            task=task,
            id=item,
            run=run,
            prediction=outcome.text,
            model=self.backend.spec,
            usage=outcome.usage,
            latency_s=outcome.latency_s,
            reasoning=outcome.reasoning,
        )

    def _start_progress(self, total: int) -> None:
        if not self.settings.progress:
            return
        cached = f" ({self.stats.cached} cached)" if self.stats.cached else ""
        self._progress = Progress(
            TextColumn(f"[bold]{self.backend.spec}[/]{cached}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeRemainingColumn(),
            _StatsColumn(self.stats),
            console=self.console,
            transient=False,
        )
        self._progress.start()
        self._task_id = self._progress.add_task("generate", total=total)

    def _advance(self) -> None:
        if self._progress is not None and self._task_id is not None:
            self._progress.advance(self._task_id)  # type: ignore[arg-type]

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _usage_total(completion: Completion, default: int) -> int:
    if not completion.usage:
        return default
    return completion.usage.get("prompt_tokens", 0) + completion.usage.get("completion_tokens", 0)
