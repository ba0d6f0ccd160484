"""The judge of ``run`` and ``score`` (``--judge``): built from its options, checked before
anything is generated, handed to scoring as its second reader (:mod:`taxpraben.judge`), and,
on ``run``, asked while generation goes on (:class:`JudgeAlongside`).

What is built before generation is light: the judge's backend, its prompt and one endpoint
check (a dead or refusing judge costs no generation). Its stage (:mod:`taxpraben.judge.stage`,
which loads the scoring pipeline) is imported on first use, on the scoring thread once the
first answers have arrived on ``run``, so that the judge delays no request of generation.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.costs.budget import BUDGET_EXIT, Budget, BudgetShare, CostOf
from taxpraben.jobs.common import JobError, costing, say
from taxpraben.jobs.completion import Entries
from taxpraben.models.base import Backend, BackendError, ModelSpecError, Request
from taxpraben.models.factory import create_backend
from taxpraben.options import BudgetOptions, JudgeOptions, PricingOptions
from taxpraben.run.cache import CacheError, CompletionCache
from taxpraben.run.runner import BudgetReached, RunnerSettings
from taxpraben.tasks import Registry

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.judge.prompt import JudgePrompt
    from taxpraben.judge.stage import AheadPlan, JudgeStage
    from taxpraben.records import Record
    from taxpraben.results.predictions import Prediction
    from taxpraben.results.samples import Sample
    from taxpraben.scoring.items import Readings
    from taxpraben.scoring.pipeline import SecondReader, SecondReading

#: What a judge that stops midway leaves, and how to go on (``run`` and ``score`` alike).
STOPPED_HINT = "Nothing was scored; what the judge answered is in the cache: rerun to go on."


@dataclass
class Judge:
    """The judge ``--judge`` names: its backend (its endpoint already checked), its prompt
    and how it reads; :meth:`stage` makes the second reader on first use."""

    backend: Backend
    prompt: JudgePrompt
    registry: Registry
    profile: str
    audit: int
    seed: int
    max_items: int | None
    runner: RunnerSettings
    cache_path: Path | None
    console: Console
    progress: Console | None = None
    #: Prices the judge's tokens (``--pricing`` with an entry for the judge model).
    cost_of: CostOf | None = None
    #: The run's ``--budget-*`` as the judge spends it (None without a budget).
    budget: BudgetShare | None = None
    _stage: JudgeStage | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def share(self, budget: Budget | None) -> None:
        """The judge's requests spend ``budget`` too (``run --budget-*``), at its own prices."""
        self.budget = BudgetShare(budget, self.cost_of) if budget is not None else None

    def stage(self) -> JudgeStage:
        """The judge stage (made once, from any thread; :attr:`cost_of` and :attr:`budget`
        as they are then)."""
        with self._lock:
            if self._stage is None:
                from taxpraben.judge.stage import JudgeStage

                self._stage = JudgeStage(self.backend, self.prompt, self.registry, profile=self.profile,
                                         audit=self.audit, seed=self.seed, max_items=self.max_items,
                                         runner=self.runner, cache_path=self.cache_path, console=self.console,
                                         progress=self.progress, cost_of=self.cost_of, budget=self.budget)  # fmt: skip
            return self._stage


def scoring_judge(
    options: JudgeOptions, pricing: PricingOptions, registry: Registry, *, profile: str, seed: int, console: Console
) -> Judge | None:
    """The judge of ``score`` and ``merge`` (:func:`judge_stage`, its endpoint asked now, its
    answers in the default cache), its tokens priced apart under ``--pricing``."""
    from taxpraben.run.cache import default_cache_path

    judge = judge_stage(options, registry, profile=profile, seed=seed, runner=RunnerSettings(),
                        cache_path=default_cache_path(), console=console)  # fmt: skip
    return priced_judge(judge, pricing, console)


def priced_judge(judge: Judge | None, pricing: PricingOptions, console: Console) -> Judge | None:
    """``judge`` with its tokens priced apart, at its own model's prices, under ``--pricing``."""
    if judge is not None and pricing.pricing is not None:
        judge.cost_of = costing(pricing, judge.backend.spec, console)[0]
    return judge


def judge_stage(
    options: JudgeOptions,
    registry: Registry,
    *,
    profile: str,
    seed: int,
    runner: RunnerSettings,
    cache_path: Path | None,
    console: Console,
    progress: Console | None = None,
    generation_urls: Sequence[str] | None = None,
    generation_key_env: str | None = None,
) -> Judge | None:
    """The judge ``options`` ask for (None without ``--judge``), its endpoint asked once now
    (a dead or refusing judge ends the job before any generation is paid for); JobError
    (exit 2) for a judge, prompt or endpoint that cannot be used, and for a judge at another
    endpoint than the generation's (``generation_urls``, default ``$OPENAI_BASE_URL`` or the
    OpenAI API) without ``--judge-api-key-env``: the generation's key is not sent there."""
    if options.judge is None:
        for flag, value in (("--judge-base-url", options.judge_base_url), ("--judge-prompt", options.judge_prompt),
                            ("--judge-audit", options.judge_audit or None),
                            ("--judge-max-items", options.judge_max_items)):  # fmt: skip
            if value is not None:
                raise JobError(f"{flag} needs --judge MODEL (the judge model to ask)", code=2)
        return None
    from taxpraben.judge.prompt import JudgePromptError, load_prompt

    try:
        prompt = load_prompt(options.judge_prompt)
        key_env, needs_key = judge_key(options, generation_urls, generation_key_env)
        backend = create_backend(options.judge, base_url=options.judge_base_url, api_key_env=key_env,
                                 concurrency=options.judge_concurrency, needs_key=needs_key,
                                 timeout=options.judge_timeout)  # fmt: skip
    except (JudgePromptError, ModelSpecError, ValueError) as exc:
        raise JobError(f"--judge: {exc}", code=2) from exc
    refused = preflight(backend)
    if refused is not None:
        raise JobError(f"the judge {backend.spec} cannot be used: {refused}",
                       "Nothing was generated; fix --judge-base-url / the key, or drop --judge.", code=2)  # fmt: skip
    say(console, f"Judge: {backend.spec} (prompt {prompt.version}) reads what the rules cannot"
                 + (f"; audit of {options.judge_audit} answers per task" if options.judge_audit else ""))  # fmt: skip
    # The judge's own concurrency, in score and run alike (run's --concurrency is the model's).
    runner = replace(runner, concurrency=options.judge_concurrency)
    return Judge(backend, prompt, registry, profile, options.judge_audit, seed, options.judge_max_items, runner,
                 cache_path, console, progress)  # fmt: skip


def judge_key(
    options: JudgeOptions, generation_urls: Sequence[str] | None, generation_key_env: str | None
) -> tuple[str | None, bool]:
    """The variable an ``openai:`` judge's key is read from (``models.api_key.judge_key_env``),
    and whether a key is needed (not for a local judge: a variable that is unset sends none);
    ModelSpecError for the generation's key and another endpoint."""
    if not (options.judge or "").lower().startswith("openai:"):
        return options.judge_api_key_env, True
    from taxpraben.models.api_key import default_base_urls, is_local_endpoint, judge_key_env
    from taxpraben.models.endpoints import split_base_urls

    judged = split_base_urls(options.judge_base_url) if options.judge_base_url else default_base_urls()
    generating = list(generation_urls) if generation_urls else default_base_urls()
    names = [judge_key_env(url, generating, options.judge_api_key_env, generation_key_env) for url in judged]
    return names[0], not all(is_local_endpoint(url) for url in judged)  # one variable for every URL


def preflight(backend: Backend) -> str | None:
    """Ask the judge's endpoint once (``GET /models``); why it cannot be used (nothing
    listening, a refused key), or None."""
    check: Callable[[], Awaitable[BackendError | None]] | None = getattr(backend, "preflight", None)
    if check is None:
        return None

    async def probe() -> BackendError | None:
        try:
            return await check()
        finally:
            await backend.aclose()

    error = asyncio.run(probe())
    return error.message if error is not None and error.fatal else None


def refuse_unpriced_judge(judge: Judge | None, budget: BudgetOptions, pricing: Path | None) -> None:
    """JobError (exit 2) before anything is sent: a cost budget covers the judge's requests
    too, so the judge model needs prices as the model does (without ``--pricing`` at all,
    the model's own check says so)."""
    if judge is None or budget.budget_cost is None or pricing is None or judge.cost_of is not None:
        return
    raise JobError(f"--budget-cost covers the judge's requests too, and the judge {judge.backend.spec} has no "
                   f"price ({pricing} has no entry for it, nor a glob that matches it): add one, or budget tokens "
                   "(--budget-tokens)", code=2)  # fmt: skip


def as_second_reader(judge: Judge | None) -> SecondReader | None:
    """``judge`` as scoring's second reader, a judge that stops midway (it stopped answering,
    it refused the key) ending the job with JobError (exit 2): what it answered is cached;
    one the budget stops (``run --budget-*``) ending it with exit 3, not scored."""
    if judge is None:
        return None
    from taxpraben.judge.stage import JudgeError

    def read(prepared: dict[str, list[list[Sample]]], records: Mapping[str, Sequence[Record]]) -> SecondReading:
        try:
            return judge.stage()(prepared, records)
        except JudgeError as exc:
            raise JobError(str(exc), STOPPED_HINT, code=2) from exc
        except BudgetReached as exc:
            raise JobError(
                f"Budget reached: {exc.budget.describe()} spent; {exc.unsent} judge request(s) were not sent, so "
                "the run is not scored.",
                "The predictions are written; what the judge answered is in the cache.",
                "To go on, run the same command with a larger budget: what is in the cache is not paid for again:",
                "  taxpraben " + shlex.join(sys.argv[1:]),
                code=BUDGET_EXIT, style="yellow",
            ) from exc

    return read


class JudgeBudgetReached(BudgetReached):
    """The budget refused a request of the judge sent during generation: ``predictions``
    are the generations answered, ``unsent`` the generations, ``judge_unsent`` the judge's
    requests that were not sent."""

    def __init__(self, budget: Budget | BudgetShare, predictions: list[Prediction], unsent: int,
                 judge_unsent: int) -> None:  # fmt: skip
        super().__init__(budget, predictions, unsent)
        self.judge_unsent = judge_unsent


def unsent_words(exc: BudgetReached) -> str:
    """What a budget stop left unsent, in words: "3 generation(s) and 2 judge request(s)"."""
    judge = exc.judge_unsent if isinstance(exc, JudgeBudgetReached) else 0
    parts = [f"{exc.unsent} generation(s)"] if exc.unsent or not judge else []
    return " and ".join(parts + ([f"{judge} judge request(s)"] if judge else []))


#: Runs a job on the scoring thread with the readings made so far (``ReadAhead.after_readings``).
AfterReadings = Callable[[Callable[["Readings"], "list[Request]"]], "Future[list[Request]]"]


class JudgeAlongside:
    """The judge of ``run``, asked while generation goes on: once every generation of a task
    (all its runs) is answered or failed for good and its data file is read, the requests
    scoring would send for it go out, while the later tasks are still generating; scoring
    then takes their replies (:attr:`JudgeStage.answered`).

    The concurrency model: one coroutine on generation's own event loop (:meth:`alongside`),
    not a thread with a loop of its own. The harness stays one async process; the judge's
    runner, the completion cache (its own connection, used from that one thread: no write of
    one connection can wait on the other's) and the budget (shared, :class:`BudgetShare`)
    are used from one thread, with no lock; a Ctrl-C cancels both at once; and the loop
    does not end before the judge: generation's coroutine is awaited with it. The work that
    is not I/O (which items a task has, their readings, the judge's prompts) is done on the
    scoring thread, after the readings of that task's answers (the runner's ``on_answer``
    hands each answer to ``ReadAhead`` first, then to the
    :class:`~taxpraben.jobs.completion.TaskCompletion` that tells this judge of each task
    complete, :meth:`complete`), and the stage itself is imported there.

    A judge that stops answering or refuses the key while generation goes on stops it too
    (exit 2: the job could not be scored; what both received is in the cache); once
    generation has ended, what was not asked is left to scoring, which asks again and
    fails as ``score`` does. A budget that refuses a judge's request stops both (exit 3).
    """

    def __init__(self, judge: Judge, after: AfterReadings, tasks: Sequence[str]) -> None:
        self._judge = judge
        self._after = after
        self._tasks = list(tasks)
        self._queue: asyncio.Queue[Future[list[Request]] | None] | None = None
        self._early: list[Future[list[Request]]] = []
        self._plan: AheadPlan | None = None
        #: The judge's requests the budget refused (and those left unsent after).
        self.judge_unsent = 0

    # ------------------------------------------------------------ the loop thread

    def complete(self, task: str, entries: Entries) -> None:
        """``task``'s generation is complete (a :class:`~taxpraben.jobs.completion.TaskCompletion`
        listener): its plan is made on the scoring thread, after the readings of its answers,
        and queued for :meth:`_session`."""
        future: Future[list[Request]] = self._after(lambda readings: self._planned(task, entries, readings))
        if self._queue is None:
            self._early.append(future)
        else:
            self._queue.put_nowait(future)

    # ------------------------------------------------------------ the scoring thread

    def _planned(self, task: str, entries: list[tuple[Record, int, Prediction]], readings: Readings) -> list[Request]:
        """What to ask now for ``task`` (on the scoring thread: the stage is made here)."""
        if self._plan is None:
            self._plan = self._judge.stage().plan_ahead(self._tasks)
        if not self._plan.judged(task):
            return []
        return self._plan.task_done(task, task_items(self._judge.registry, task, entries, readings),
                                    {record.id: record for record, _, _ in entries})  # fmt: skip

    # ------------------------------------------------------------ the loop

    async def alongside(self, generation: Coroutine[object, None, list[Prediction]]) -> list[Prediction]:
        """``generation`` (the runner's ``run``) with the judge beside it, on this loop; its
        predictions once both are done. JobError (exit 2) when the judge stops while
        generation goes on (generation is stopped with it); :class:`JudgeBudgetReached` when
        the budget refused the judge; generation's own errors as they are."""
        self._queue = asyncio.Queue()
        for future in self._early:
            self._queue.put_nowait(future)
        self._early = []
        generating = asyncio.ensure_future(generation)
        session = asyncio.ensure_future(self._session())
        try:
            await asyncio.wait({generating, session}, return_when=asyncio.FIRST_COMPLETED)
            if not generating.done():  # the session ends before generation only when the judge stopped
                generating.cancel()
                await asyncio.gather(generating, return_exceptions=True)
                self._stopped(session)
            self._queue.put_nowait(None)  # no task after these: the last plans, then the session ends
            error = generating.exception()
            if error is not None and not isinstance(error, BudgetReached):
                raise error
            await asyncio.wait({session})
            failed = session.exception()
            if failed is not None and not isinstance(failed, _JudgeStopped):
                raise failed
            # A judge that stopped once generation had ended: scoring asks what it did not answer.
            if self.judge_unsent:
                assert self._judge.budget is not None
                stopped = error if isinstance(error, BudgetReached) else None
                predictions = stopped.predictions if stopped is not None else generating.result()
                raise JudgeBudgetReached(self._judge.budget, predictions, stopped.unsent if stopped else 0,
                                         self.judge_unsent)  # fmt: skip
            return generating.result()
        finally:
            for task in (generating, session):
                task.cancel()
            await asyncio.gather(generating, session, return_exceptions=True)

    @staticmethod
    def _stopped(session: asyncio.Future[None]) -> None:
        """The session's error, as the job's (exit 2 for a judge that stopped answering)."""
        failed = session.exception()
        if isinstance(failed, _JudgeStopped):
            raise JobError(str(failed), STOPPED_HINT, "Generation was stopped with it: what it received is in the "
                           "cache too.", code=2) from failed  # fmt: skip
        session.result()

    async def _session(self) -> None:
        """Send each complete task's planned requests, task after task, until told that no
        task comes after (None); :class:`_JudgeStopped` when the judge stops answering,
        refuses the key or its answers cannot be stored. Once the budget refused one of its
        requests it sends nothing more (counting what it leaves unsent)."""
        assert self._queue is not None
        store: CompletionCache | None = None
        try:
            while (future := await self._queue.get()) is not None:
                try:
                    requests = await asyncio.wrap_future(future)
                except Exception:  # a plan that could not be made: scoring asks for that task
                    continue
                if not requests:
                    continue
                if self.judge_unsent:
                    self.judge_unsent += len(requests)
                    continue
                if store is None and self._judge.cache_path is not None:
                    try:
                        store = CompletionCache(self._judge.cache_path)
                    except CacheError as exc:
                        raise _JudgeStopped(str(exc)) from exc
                try:
                    await self._judge.stage().send_ahead(requests, store)  # made by the plan, on the scoring thread
                except BudgetReached as exc:
                    self.judge_unsent = max(exc.unsent, 1)
                except Exception as exc:
                    from taxpraben.judge.stage import JudgeError  # loaded: the stage raised it

                    if isinstance(exc, JudgeError):
                        raise _JudgeStopped(str(exc)) from exc
                    raise
        finally:
            if store is not None:
                store.close()


class _JudgeStopped(Exception):
    """The judge stopped during generation (the message says why)."""


def task_items(registry: Registry, task: str, entries: Sequence[tuple[Record, int, Prediction]],
               readings: Readings) -> list[Sample]:  # fmt: skip
    """One task's items as scoring will hold them (run by run, each run in record order), for
    planning: the readings made ahead where there are (left as they are), else read here
    (an answer the read-ahead did not read: a generation shared with another record)."""
    from taxpraben.scoring.items import prepare_item

    spec = registry[task]
    position: dict[str, int] = {}
    for record, run, _ in entries:
        if run == 0:
            position.setdefault(record.id, len(position))
    ordered = sorted(entries, key=lambda e: (e[1], position.get(e[0].id, len(position))))
    items = []
    for record, run, prediction in ordered:
        item = readings.peek(spec, record, prediction)
        if item is None:
            item = prepare_item(spec, record, run, prediction, prediction.error, readings.rules)
        items.append(item)
    return items
