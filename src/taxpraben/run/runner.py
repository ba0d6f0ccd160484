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

Time: the runner, its :class:`~taxpraben.run.pacing.RateLimiter` and :func:`~taxpraben.run.pacing.backoff_delay` read time and wait only
through a :class:`~taxpraben.clock.Clock` (``clock=``, the system clock by default) and draw
their jitter from ``rng=`` (the ``random`` module by default), so that tests run them on a
fake clock and assert exact times.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import sqlite3
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from taxpraben.clock import SYSTEM_CLOCK, Clock
from taxpraben.costs.budget import PROMPT_ESTIMATE_MARGIN, Budget, BudgetShare
from taxpraben.models.base import (
    Backend,
    BackendError,
    Completion,
    GenerationConfig,
    Request,
)
from taxpraben.models.defaults import (
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_BACKOFF_MAX_S,
    DEFAULT_CONCURRENCY,
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_RETRIES,
)
from taxpraben.run.cache import CacheError, CompletionCache, cache_key
from taxpraben.run.pacing import Jitter, RateLimiter, backoff_delay, estimate_tokens
from taxpraben.terminal.console import deferred_console
from taxpraben.terminal.deferred_bar import DeferredBar
from taxpraben.terminal.progress import RunStats

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.results.predictions import Prediction

__all__ = ["BudgetReached", "RunAborted", "RunStats", "Runner", "RunnerSettings", "generation_key"]

#: Requests read from a lazy feed between two turns of the event loop.
_CHUNK = 64
#: Requests read before the first is sent: the first requests need not wait for 64 records
#: read and checked (5-15 ms), the others are read while those are on the wire.
_FIRST_CHUNK = 8


@dataclass(frozen=True)
class RunnerSettings:
    """How hard to drive the backend and how patiently to retry."""

    concurrency: int = DEFAULT_CONCURRENCY
    #: Requests per minute / tokens per minute (None: unlimited).
    rpm: float | None = None
    tpm: float | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    #: Seconds from an item's first attempt after which it is not retried again.
    deadline: float = DEFAULT_DEADLINE_S
    #: Backoff before retry k (1-based) is about backoff_base * 2**(k-1), capped.
    backoff_base: float = DEFAULT_BACKOFF_BASE_S
    backoff_max: float = DEFAULT_BACKOFF_MAX_S
    progress: bool = True
    #: Ask the backend's ``preflight()`` (when it has one) before sending anything.
    preflight: bool = True
    #: While no request has ever been answered, stop once connections have been refused
    #: (or failed to resolve) for this many seconds.
    unreachable_grace: float = 5.0


class RunAborted(Exception):
    """The run was stopped because no further request could succeed (the message says why)."""


class BudgetReached(Exception):
    """The budget (``--budget-tokens``/``--budget-cost``) admits no further request: nothing
    more was sent; ``predictions`` are the generations answered (every run of each)."""

    def __init__(self, budget: Budget | BudgetShare, predictions: list[Prediction], unsent: int,
                 left: tuple[int, float] = (0, 0.0)) -> None:  # fmt: skip
        super().__init__(f"budget reached: {budget.describe()} spent; {unsent} generation(s) not sent")
        self.budget = budget
        self.predictions = predictions
        self.unsent = unsent
        #: The worst case of the unsent generations (tokens, cost): what a rerun may spend.
        self.left_tokens, self.left_cost = left


class Runner:
    """Generates the predictions of a run; ``stats`` stays readable after an interruption.

    ``clock`` is what deadlines, the unreachable grace, backoff waits and rate limits are
    measured on; ``rng`` gives the backoff jitter (see :func:`backoff_delay`); ``on_answer``
    is handed each generation's prediction as soon as it is known (from the cache, received,
    or failed for good), with the request it answers (once per generation: runs that share
    one get it once), so that a job can read answers while the rest are still out; ``on_read``
    is handed each request as it is read from the feed, with its generation key (the key
    ``on_answer``'s request has), so that a job can tell when every request of a task is
    answered (the judge of ``run``: :mod:`taxpraben.jobs.judge`). ``budget`` may be shared
    with another runner (:class:`~taxpraben.costs.budget.BudgetShare`): once it refused either,
    neither sends more.
    """

    def __init__(
        self,
        backend: Backend,
        config: GenerationConfig,
        settings: RunnerSettings | None = None,
        *,
        cache: CompletionCache | None = None,
        console: Console | None = None,
        clock: Clock = SYSTEM_CLOCK,
        rng: Jitter | None = None,
        on_answer: Callable[[Request, Prediction], None] | None = None,
        budget: Budget | BudgetShare | None = None,
        on_read: Callable[[str, Request], None] | None = None,
    ) -> None:
        self.backend = backend
        self.config = config
        self.settings = settings or RunnerSettings()
        self.cache = cache if backend.cacheable else None
        self.console = console or deferred_console(stderr=True)
        self.clock = clock
        self._rng = rng
        self._on_answer = on_answer
        self._on_read = on_read
        self._budget = budget
        #: Set when the budget refused an attempt: nothing more is sent.
        self._over_budget = False
        self.stats = RunStats(started=clock.now())
        self._limiter = RateLimiter(self.settings.rpm, self.settings.tpm, clock=clock)
        self._results: dict[str, Completion | BackendError] = {}
        #: The keys whose completion came from the cache (their predictions say so).
        self._from_cache: set[str] = set()
        #: Keys answered into the cache earlier in this run (a batch): paid for here, so not
        #: marked as taken from the cache.
        self.paid_here: set[str] = set()
        #: The prediction handed to ``on_answer`` per key.
        self._handed: dict[str, Prediction] = {}
        #: Every request read so far with its group key; the distinct ones; those to send.
        self._order: list[tuple[str, Request]] = []
        self._unique: dict[str, Request] = {}
        self._queue: deque[tuple[str, Request]] = deque()
        #: Resolved when more requests were read (see _wait_fed); the feed is exhausted.
        self._fed: asyncio.Future[None] | None = None
        self._exhausted = False
        self._unsaved: list[tuple[str, Completion, Request]] = []
        self._save_error: CacheError | None = None
        self._progress = DeferredBar(self.backend.spec, self.stats, self.console, self.clock, self.settings.progress)
        #: True once the endpoint answered anything (a completion or an HTTP error).
        self._answered = False
        self._first_unreachable: float | None = None

    def _group_key(self, request: Request) -> str:
        """Requests with the same group key get one generation."""
        return generation_key(self.backend, self.config, request, self.stats.shared_generation)

    async def run(self, requests: Iterable[Request]) -> list[Prediction]:
        """Predictions for ``requests``, in their order (failed items carry ``error``).

        ``requests`` may be a lazy iterable (the records still being read and checked): it
        is read in chunks between turns of the event loop, so the first requests are on the
        wire while the rest is still being produced; an exception it raises (a
        ``DataError``) stops the run and propagates. A batched backend (``batch_size`` > 1)
        gets the whole list first, so that its batches do not depend on reading speed.
        """
        self.stats.shared_generation = self.backend.shares_runs(self.config)
        self._order, self._unique, self._queue = [], {}, deque()
        self._fed, self._exhausted = None, False
        feed = iter(requests)
        try:
            if self.backend.batch_size > 1:
                self._take(feed, None)
            await self._drive(feed)
        finally:
            self._save()
            await self.backend.aclose()
            self._progress.stop()
        if self._save_error is not None:
            raise self._save_error
        if self._over_budget:
            unsent = [r for k, r in self._unique.items() if k not in self._results]
            assert self._budget is not None
            worst = [self._worst_case(estimate_tokens(r, self.config)) for r in unsent]
            worst = [(math.ceil(p * PROMPT_ESTIMATE_MARGIN), c) for p, c in worst]
            left = (sum(p + c for p, c in worst), sum(self._budget.price(p, c) for p, c in worst))
            raise BudgetReached(self._budget, self.answered(), len(unsent), left)
        return [self._final(k, r) for k, r in self._order]

    def answered(self) -> list[Prediction]:
        """The predictions of the requests read so far whose generation has its outcome (an
        answer, or a failure for good), in the order read: what a stopped run keeps."""
        return [self._final(k, r) for k, r in self._order if k in self._results]

    def _take(self, feed: Iterator[Request], count: int | None) -> bool:
        """Read up to ``count`` requests (None: all) from ``feed``; look their keys up in the
        cache and queue what is missing. True when ``feed`` is exhausted."""
        stats = self.stats
        new: dict[str, Request] = {}
        read_before = len(self._order)
        for request in feed if count is None else itertools.islice(feed, count):
            key = self._group_key(request)
            self._order.append((key, request))
            if self._on_read is not None:
                self._on_read(key, request)
            if key not in self._unique and key not in new:
                # For shared generation the representative is the run-0 request.
                new[key] = (
                    replace(request, run=0, seed=self.config.seed_for(0))
                    if stats.shared_generation
                    else request
                )
        exhausted = count is None or len(self._order) - read_before < count
        self._unique.update(new)
        stats.predictions = len(self._order)
        stats.unique = len(self._unique)
        if self.cache is not None and new:
            found = self.cache.get_many(new)
            self._results.update(found)
            self._from_cache.update(k for k in found if k not in self.paid_here)
            stats.cached += len(found)
            for key, outcome in found.items():
                self._answer(key, new[key], outcome)
        missing = [(k, r) for k, r in new.items() if k not in self._results]
        self._queue.extend(missing)
        stats.to_send += len(missing)
        if missing:
            self._progress.set_total(stats.to_send)
        self._exhausted = exhausted
        if self._fed is not None:  # wake every worker waiting for work
            self._fed.set_result(None)
            self._fed = None
        return exhausted

    async def _produce(self, feed: Iterator[Request]) -> None:
        """Read the rest of ``feed`` chunk by chunk, letting the workers send in between.

        It yields first, twice: the workers started beside it hand their first requests to
        aiohttp in the first turn, and on Python 3.11 aiohttp writes a request's body on a task
        of its own (eager from 3.12), queued behind this one; the second turn lets those go on
        the wire before a chunk (its records checked, their readers imported) holds the loop."""
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        while not self._take(feed, _CHUNK):
            await asyncio.sleep(0)

    async def _drive(self, feed: Iterator[Request]) -> None:
        """Read, look up and send: a first few requests (:data:`_FIRST_CHUNK`) at once, the
        rest while sending.

        With something to send in the first chunk, the endpoint is asked (preflight) before
        the producer starts: its chunks (records read and checked, their readers imported)
        would otherwise hold the loop while the listing waits for an answer, and the first
        request with it."""
        if not self._exhausted:
            self._take(feed, _FIRST_CHUNK)
        asked = bool(self._queue)
        if asked:
            await self._preflight()
        producer = asyncio.ensure_future(self._produce(feed)) if not self._exhausted else None
        try:
            while not self._queue and not self._exhausted:  # nothing to send yet: read on
                await self._wait_fed(producer)
            if producer is not None and producer.done():
                producer.result()  # a DataError ends the run here
            if self._queue:
                if not asked:
                    await self._preflight()
                await self._send_all(producer)
            if producer is not None:
                await producer
        finally:
            if producer is not None and not producer.done():
                producer.cancel()
                await asyncio.gather(producer, return_exceptions=True)

    async def _wait_fed(self, producer: asyncio.Future[None] | None) -> None:
        """Until the producer has read more requests or ended (its exception propagates).

        One future per round, resolved by the next :meth:`_take`: every waiter holds the
        same one, so no wake-up can be missed.
        """
        if self._fed is None:
            self._fed = asyncio.get_running_loop().create_future()
        waiting: set[asyncio.Future[None]] = {self._fed} if producer is None else {self._fed, producer}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if producer is not None and producer.done():
            producer.result()

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
        now = self.clock.now()
        if self._first_unreachable is None:
            self._first_unreachable = now
        elif now - self._first_unreachable >= self.settings.unreachable_grace:
            raise RunAborted(
                f"{error.message}; nothing has answered for "
                f"{now - self._first_unreachable:.1f} s: stopped"
            )

    async def _send_all(self, producer: asyncio.Future[None] | None) -> None:
        """Send the queue with ``concurrency`` items in flight until the feed is exhausted."""
        size = max(1, self.backend.batch_size)
        workers = max(1, self.settings.concurrency // size or 1)
        if self._exhausted:
            workers = min(workers, -(-len(self._queue) // size))

        async def worker() -> None:
            while True:
                if self._over_budget:
                    return  # the budget admits nothing more: what is in flight finishes
                if self._queue:  # one shared queue: each batch goes to one worker
                    batch = [self._queue.popleft() for _ in range(min(size, len(self._queue)))]
                    await self._process(batch)
                elif self._exhausted:
                    return
                else:
                    await self._wait_fed(producer)

        tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
        # The producer is watched too: a data error stops the sending at once.
        watched: set[asyncio.Future[None]] = set(tasks) if producer is None else {*tasks, producer}
        try:
            while not all(t.done() for t in tasks):
                done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_EXCEPTION)
                for t in done:
                    t.result()  # re-raises a worker's or the producer's exception
                watched -= done
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _process(self, batch: list[tuple[str, Request]]) -> None:
        """Send one batch, retrying the items that failed in a retryable way."""
        settings = self.settings
        pending = batch
        clock = self.clock
        first_attempt = clock.now()
        attempt = 0
        while pending:
            if self._save_error is not None:
                raise self._save_error
            attempt += 1
            # Only a TPM limit or a budget reads the estimates: without either, the ~70 us of
            # each prompt's estimate (a regex pass over its text) is spared the event loop.
            counted = self._budget is not None or self._limiter.counts_tokens
            estimates = [estimate_tokens(r, self.config) if counted else 0 for _, r in pending]
            if self._budget is not None:
                pending, estimates = self._admitted(pending, estimates)
                if not pending:
                    return
            await self._limiter.acquire(len(pending), sum(estimates))
            self._progress.soon()
            outcomes = await self._generate([r for _, r in pending])
            retry: list[tuple[str, Request, BackendError]] = []
            retry_after: float | None = None
            for (key, request), outcome, estimate in zip(pending, outcomes, estimates, strict=True):
                if isinstance(outcome, Completion):
                    self._answered = True
                    self._limiter.settle_tokens(estimate, _usage_total(outcome, estimate))
                    if self._budget is not None:
                        self._budget.settle(*self._worst_case(estimate), outcome.usage)
                    self._succeed(key, request, outcome)
                    continue
                self._limiter.settle_tokens(estimate, 0)
                if self._budget is not None:
                    self._budget.release(*self._worst_case(estimate))
                self._check_abort(outcome)
                out_of_time = clock.now() - first_attempt >= settings.deadline
                if outcome.retryable and attempt <= settings.max_retries and not out_of_time:
                    retry.append((key, request, outcome))
                    if outcome.retry_after is not None:
                        retry_after = max(retry_after or 0.0, outcome.retry_after)
                else:
                    self._fail(key, outcome, attempt, out_of_time)
            if not retry:
                return
            self.stats.retries += len(retry)
            delay = backoff_delay(attempt, settings, retry_after, rng=self._rng)
            if retry_after is None and all(error.waited for _, _, error in retry):
                delay = 0.0  # the attempt already waited out its deadline: that was the backoff
            if self._first_unreachable is not None and not self._answered:
                # Nothing has answered yet: do not sleep past the point of giving up.
                left = self._first_unreachable + settings.unreachable_grace - clock.now()
                delay = min(delay, max(left, 0.0) + 0.01)
            remaining = settings.deadline - (clock.now() - first_attempt)
            if retry_after is not None and retry_after < remaining:  # waited on: its jitter stays within
                delay = min(delay, (retry_after + remaining) / 2)
            if delay >= remaining:
                for key, _, error in retry:
                    self._fail(key, error, attempt, True, (error.retry_after or 0) >= remaining)
                return
            if retry_after:
                self._limiter.pause(retry_after)
            await clock.sleep(delay)
            pending = [(key, request) for key, request, _ in retry]

    async def _generate(self, requests: list[Request]) -> list[Completion | BackendError]:
        """One call of the backend; one with ``generate_live`` (a local model: many batches a
        call) reports items finished during it, from its thread, and the bar shows them."""
        live: Callable[..., Awaitable[list[Completion | BackendError]]] | None = getattr(self.backend, "generate_live", None)
        if live is None:
            return await self.backend.generate(requests, self.config)
        loop = asyncio.get_running_loop()
        shown = 0

        def show(finished: int) -> None:
            nonlocal shown
            shown += finished
            self._progress.live(finished)

        try:
            return await live(requests, self.config, lambda n: loop.call_soon_threadsafe(show, n))
        finally:  # the call's answers, handed over next, stand for what was shown
            self._progress.live(-shown, refresh=False)

    def _worst_case(self, estimate: int) -> tuple[int, int]:
        """(prompt, completion) tokens an attempt may spend: its prompt estimate, max_tokens."""
        return max(estimate - self.config.max_tokens, 0), self.config.max_tokens

    def _admitted(
        self, pending: list[tuple[str, Request]], estimates: list[int]
    ) -> tuple[list[tuple[str, Request]], list[int]]:
        """The attempts the budget admits, in order, up to the first it refuses; once one is
        refused the run sends nothing more (the refused ones stay unsent: a rerun with a
        larger budget sends them); nor once the budget refused another runner sharing it."""
        assert self._budget is not None
        kept: list[tuple[str, Request]] = []
        kept_estimates: list[int] = []
        for item, estimate in zip(pending, estimates, strict=True):
            if self._over_budget or self._budget.refused or not self._budget.admit(*self._worst_case(estimate)):
                self._over_budget = True
                continue
            kept.append(item)
            kept_estimates.append(estimate)
        return kept, kept_estimates

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
        self._answer(key, request, completion)
        self._progress.advance()

    def _save(self) -> None:
        """Commit the completions received since the last commit (one transaction)."""
        if self.cache is not None and self._unsaved:
            entries, self._unsaved = self._unsaved, []
            try:
                self.cache.put_many(entries, backend=self.backend.kind, model=self.backend.model)
            except sqlite3.Error as exc:  # disk full, file removed...: stop, loudly
                self._save_error = CacheError(f"{self.cache.path}: cannot write: {exc}")

    def _fail(self, key: str, error: BackendError, attempts: int, out_of_time: bool, asked: bool = False) -> None:
        if error.unreachable and not self._answered:
            # Out of retries and nothing has ever answered: every other item would follow.
            raise RunAborted(f"{error.message}; nothing has answered after {attempts} attempt(s): stopped")
        message = error.message
        if attempts > 1 or out_of_time:
            why = f", deadline of {self.settings.deadline:g} s reached" if out_of_time else ""
            if asked:  # the server's own wait is what did not fit
                why = f", the server asked to wait {error.retry_after:g} s (Retry-After), past the --deadline of " \
                      f"{self.settings.deadline:g} s"
            message = f"{message} [after {attempts} attempt{'s' if attempts > 1 else ''}{why}]"
        final = BackendError(message, retryable=error.retryable)
        self._results[key] = final
        self.stats.failed += 1
        self.stats.rejected += 0 if error.retryable else 1
        self.stats.first_error = self.stats.first_error or final.message
        self._answer(key, self._unique[key], final)
        self._progress.advance()

    def _answer(self, key: str, request: Request, outcome: Completion | BackendError) -> None:
        if self._on_answer is not None:
            prediction = self._prediction(request, outcome, key in self._from_cache)
            self._handed[key] = prediction  # the run's own list reuses it (see _final)
            self._on_answer(request, prediction)

    def _final(self, key: str, request: Request) -> Prediction:
        """The prediction of ``request``: the one handed to ``on_answer`` when it was this
        request's, else made now."""
        handed = self._handed.get(key)
        if handed is not None and handed.key == request.key:
            return handed
        return self._prediction(request, self._results[key], key in self._from_cache)

    def _prediction(self, request: Request, outcome: Completion | BackendError, cached: bool = False) -> Prediction:
        # Imported with the first answer: the typed results (pydantic classes built at
        # import) are not needed to send the first request (start-up, issue 24).
        from taxpraben.results.predictions import Prediction

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
            finish_reason=outcome.finish_reason,
            cached=True if cached else None,
        )


def generation_key(backend: Backend, config: GenerationConfig, request: Request, shared: bool) -> str:
    """The key of the generation that answers ``request``: requests with one key get one
    generation (the runner's grouping, and the cache key of a cacheable backend).

    ``shared`` is ``backend.shares_runs(config)``: every run then stands for run 0 (its seed
    too), so the runs of a record share one key. Module-level so that the batch stage
    (``jobs.batch``) computes exactly the keys the runner will look up.
    """
    if shared:
        request = replace(request, run=0, seed=config.seed_for(0))
    if backend.cacheable:
        return cache_key(
            backend=backend.kind,
            model=backend.model,
            endpoint=backend.endpoint,
            request=request,
            config=config,
            # --model-args (hf:, openai:; hf: --no-chat-template too); backends without them: the old keys
            model_args=getattr(backend, "key_args", getattr(backend, "model_args", None)),
        )
    task, item, run = request.key
    return f"{task}\x00{item}\x00{run}"


def _usage_total(completion: Completion, default: int) -> int:
    if not completion.usage:
        return default
    return cast("int", completion.usage.get("prompt_tokens", 0) + completion.usage.get("completion_tokens", 0))
