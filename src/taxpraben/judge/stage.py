"""The judge stage: the prepared items of a scoring, the judge asked through the runner and
the completion cache, its replies read back into the items (see :mod:`.reading`), and the
audit (:mod:`.audit`).

One :class:`JudgeStage` is the scoring pipeline's second reader
(``scoring.pipeline.SecondReader``): called between the reading of every item and their
finishing, it sends one request per distinct output (the runs of a record that gave the
same output share it), every request of every task at once through one :class:`Runner`
(its concurrency, retries, rate limits and fail-fast rules), each looked up in the
completion cache first: the cache key covers the judge model and endpoint and the filled
prompt (the template, hence its version, and the output it reads), so a rescoring asks the
judge nothing it has answered. A task's asks are, in this order, the outputs the rules left
unread, those they read only by a fallback (low confidence, :func:`low_confidence_outputs`:
asked, counted apart, and replaced only where the judge reads a value) and the audit's draw
among the others; ``--judge-max-items`` keeps them in that order over every task.

On ``run`` most of those requests go out before scoring, while generation goes on
(:mod:`taxpraben.jobs.judge`): once a task's generation is complete, :class:`AheadPlan` says
which of its asks are certain to be made at scoring (with ``--judge-max-items``, only those
its cap is sure to keep) and :meth:`JudgeStage.send_ahead` sends them; scoring then takes
those replies (:attr:`JudgeStage.answered`) instead of asking again, and counts them as it
counts its own. The asks are computed by the same functions at both times, so the replies,
the readings and ``meta.judge`` are those of asking everything at scoring.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rich.console import Console

from taxpraben.costs.budget import Budget, BudgetShare
from taxpraben.costs.ledger import CostOf, generation_tallies
from taxpraben.judge.audit import Agreement, banner, draw
from taxpraben.judge.field_judge import JUDGE
from taxpraben.judge.grounding import NOT_GROUNDED, prompt_examples
from taxpraben.judge.prompt import JudgePrompt, fill_prompt
from taxpraben.judge.reading import (
    OutputKey,
    ReplyReading,
    adopt,
    field_disagreements,
    fields_to_ask,
    judged_task,
    low_confidence_outputs,
    read_outputs,
    read_reply,
    reader_counts,
    same_reading,
    unanswered_reader,
    unread_outputs,
)
from taxpraben.kinds.profiles import ScoringRules, scoring_rules
from taxpraben.models.base import Backend, GenerationConfig, Request
from taxpraben.results.predictions import Prediction
from taxpraben.results.samples import Sample
from taxpraben.run.cache import CacheError, CompletionCache
from taxpraben.run.runner import RunAborted, Runner, RunnerSettings, generation_key
from taxpraben.scoring.pipeline import SecondReading
from taxpraben.tasks import Registry

if TYPE_CHECKING:
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.task_spec import TaskSpec

#: How the judge is asked: greedy, and a short answer (a letter, a number, a span, and its quote;
#: for a field task one quote per field).
JUDGE_CONFIG = GenerationConfig(temperature=0.0, max_tokens=512)


class JudgeError(Exception):
    """The judge cannot be used (a dead endpoint, a refused key): the message says why."""


@dataclass
class _Ask:
    """One distinct output to send: its task, the items that gave it, their record, and why
    it is asked (the audit; ``low_confidence``: the rules read it, some field only by a fallback)."""

    task: str
    key: OutputKey
    items: list[Sample]
    record: Record
    audit: bool
    reply: Prediction | None = None
    low_confidence: bool = False


class TaskAsks(NamedTuple):
    """The asks of one task, each list in its items' order: its distinct unread outputs, its
    low-confidence ones, then its audit draw (among the outputs read with confidence)."""

    unread: list[_Ask]
    low: list[_Ask]
    audit: list[_Ask]


def records_by_id(records: Iterable[Record]) -> dict[str, Record]:
    """A task's records by id: what the judge's prompt of an output and its reading take (a
    sample names its record by task and id)."""
    return {record.id: record for record in records}


def capped_asks(per_task: Sequence[TaskAsks], cap: int | None) -> tuple[list[_Ask], list[_Ask]]:
    """What is sent of every task's asks (``per_task`` in task order): the unread outputs of
    all tasks, then their low-confidence ones, then the audits, the first ``cap`` of them
    (all when None); and the unread and low-confidence ones left out by the cap (the audits
    past it are simply not drawn)."""
    unread = [ask for asks in per_task for ask in asks.unread]
    low = [ask for asks in per_task for ask in asks.low]
    audit = [ask for asks in per_task for ask in asks.audit]
    ordered = unread + low + audit
    cap = len(ordered) if cap is None else cap
    return ordered[:cap], (unread + low)[cap:]


@dataclass
class _TaskTally:
    """What the judge did on one task: the unread outputs asked and how their replies ended,
    the low-confidence ones (counted apart), the cap, the audit; the first of each problem
    for its warning."""

    asked: int = 0
    no_answer: int = 0
    malformed: int = 0
    failed: int = 0
    capped: int = 0
    low_confidence: int = 0
    low_malformed: int = 0
    low_capped: int = 0
    #: Replies that read some asked fields and not others (the others stay as the rules read them).
    partial: int = 0
    #: Replies to unread or low-confidence outputs whose reading (or some field of it) was
    #: rejected, its quote no evidence; by why; and those of the audit (left out of it).
    not_grounded: int = 0
    not_grounded_whys: dict[str, int] = field(default_factory=dict)
    audit_not_grounded: int = 0
    not_grounded_first: str | None = None
    audited: int = 0
    agreed: int = 0
    disagreements: list[JSONObject] = field(default_factory=list)
    malformed_first: str | None = None
    low_malformed_first: str | None = None
    partial_first: str | None = None
    failed_first: str | None = None


@dataclass
class JudgeStage:
    """The second reader of ``--judge``: ``backend`` answers ``prompt`` for the outputs the
    rules of ``profile`` could not read or read with low confidence, and for ``audit``
    outputs per task they did read with confidence (drawn with ``seed``); ``max_items`` caps
    the distinct requests (format failures first, then low confidence, then the audit)."""

    backend: Backend
    prompt: JudgePrompt
    registry: Registry
    profile: str = "taxpraben"
    audit: int = 0
    seed: int = 0
    max_items: int | None = None
    runner: RunnerSettings = field(default_factory=RunnerSettings)
    cache_path: Path | None = None
    console: Console = field(default_factory=lambda: Console(stderr=True))
    progress: Console | None = None
    #: Prices the judge's tokens (``--pricing`` with an entry for the judge model).
    cost_of: CostOf | None = None
    #: The run's ``--budget-*``, which the judge's requests spend too (its share: its prices).
    budget: Budget | BudgetShare | None = None
    #: Filled by each call: the distinct requests of the last scoring, those the cache
    #: answered (from an earlier job) and those sent in this job, and the judge's tokens.
    requests: int = 0
    from_cache: int = 0
    sent: int = 0
    tokens: dict[str, JSONObject] = field(default_factory=dict)
    #: The replies received in this job, by request key: those sent ahead of scoring (run,
    #: while generation goes on) are taken by scoring instead of being asked again.
    answered: dict[str, Prediction] = field(default_factory=dict)

    def key_of(self, request: Request) -> str:
        """The runner's (and the cache's) key of one of the judge's requests."""
        return generation_key(self.backend, JUDGE_CONFIG, request, self.backend.shares_runs(JUDGE_CONFIG))

    def plan_ahead(self, tasks: Sequence[str]) -> AheadPlan:
        """The plan of what may be asked before scoring, for ``tasks`` (every task of the job,
        in the order scoring takes them)."""
        return AheadPlan(self, [t for t in tasks if judged_task(self.registry[t])])

    def __call__(self, prepared: dict[str, list[list[Sample]]], records: Mapping[str, Sequence[Record]]) -> SecondReading:
        """The judge's reading of ``prepared`` (each task's samples run by run, each run in
        the order of its ``records``)."""
        rules = scoring_rules(self.profile)
        tasks = [t for t in prepared if judged_task(self.registry[t])]
        items = {t: [it for row in prepared[t] for it in row] for t in tasks}
        before = {t: sum(it.status == "format_failure" for it in items[t]) for t in tasks}
        tallies = {t: _TaskTally() for t in tasks}
        asks = self._asks(tasks, items, {t: records_by_id(records[t]) for t in tasks}, tallies)
        self._send(asks)
        edited: dict[int, Sample] = {}  # id of an item the judge edited -> its new item
        for ask in asks:
            self._apply(ask, self.registry[ask.task], rules, tallies[ask.task], edited)
        if edited:  # the edited items take their old ones' places
            for t in tasks:
                for row in prepared[t]:
                    row[:] = [edited.get(id(it), it) for it in row]
            items = {t: [it for row in prepared[t] for it in row] for t in tasks}
        return self._reading(tasks, items, before, tallies)

    # ------------------------------------------------------------------ steps

    def task_asks(self, task: str, items: Sequence[Sample], records: Mapping[str, Record]) -> TaskAsks:
        """One task's asks (``items``: its items run by run, each run in record order; ``records``
        by id, :func:`records_by_id`): its
        distinct unread outputs, its low-confidence ones, then its seeded audit draw among the
        outputs the rules read with confidence (:func:`read_outputs` leaves the low-confidence
        ones out: the judge reads those, it does not audit them)."""
        unread = [_Ask(task, k, its, records[k[1]], False) for k, its in unread_outputs(items).items()]
        low = [_Ask(task, k, its, records[k[1]], False, low_confidence=True)
               for k, its in low_confidence_outputs(items).items()]  # fmt: skip
        candidates = list(read_outputs(items).items())
        audit = [_Ask(task, k, its, records[k[1]], True) for k, its in draw(candidates, self.audit, self.seed, task)]
        return TaskAsks(unread, low, audit)

    def _asks(self, tasks: Sequence[str], items: dict[str, list[Sample]], records: dict[str, dict[str, Record]],
              tallies: dict[str, _TaskTally]) -> list[_Ask]:  # fmt: skip
        """Every distinct unread output, then every low-confidence one, then each task's
        audit draw; past ``max_items`` the rest is left unasked (counted as capped)."""
        asks, capped = capped_asks([self.task_asks(t, items[t], records[t]) for t in tasks], self.max_items)
        for ask in capped:
            if ask.low_confidence:
                tallies[ask.task].low_capped += 1
            else:
                tallies[ask.task].capped += 1
        return asks

    def _send(self, asks: list[_Ask]) -> None:
        """The judge's replies: those received ahead (:attr:`answered`), the rest through the
        runner and the cache, all at once; the figures count every distinct request once,
        from the cache (an earlier job's) or sent in this job, however early it went out."""
        requests = [self.request_of(ask) for ask in asks]
        keys = [self.key_of(request) for request in requests]
        missing = {key: request for key, request in zip(keys, requests, strict=True) if key not in self.answered}
        if missing:
            self._ask_now(missing)
        for ask, key in zip(asks, keys, strict=True):
            ask.reply = self.answered[key]
        distinct = [self.answered[key] for key in dict.fromkeys(keys)]
        self.requests = len(distinct)
        self.from_cache = sum(bool(reply.cached) for reply in distinct)
        self.sent = sum(not reply.cached and not reply.error for reply in distinct)
        # The judge's tokens, apart from the model's: every ask's reply, as the runner hands them.
        self.tokens = generation_tallies([ask.reply for ask in asks if ask.reply is not None], self.cost_of)

    def _ask_now(self, requests: dict[str, Request]) -> None:
        """``requests`` (by key) asked now, on a loop of their own, into :attr:`answered`;
        BudgetReached passes through (the run stops on it)."""
        store = None
        try:
            store = CompletionCache(self.cache_path) if self.cache_path is not None else None
        except CacheError as exc:
            raise JudgeError(str(exc)) from exc
        runner = Runner(self.backend, JUDGE_CONFIG, self.runner, cache=store,
                        console=self.progress or Console(stderr=True), budget=self.budget)  # fmt: skip
        try:
            replies = asyncio.run(runner.run(list(requests.values())))
        except RunAborted as exc:
            raise JudgeError(f"the judge {self.backend.spec} stopped: {exc}") from exc
        except CacheError as exc:
            raise JudgeError(str(exc)) from exc
        finally:
            if store is not None:
                store.close()
        self.answered.update(zip(requests, replies, strict=True))

    async def send_ahead(self, requests: Sequence[Request], store: CompletionCache | None) -> None:
        """``requests`` (the planned asks of a task whose generation is complete) asked now,
        on the running loop, those not yet answered in this job; their replies kept for
        scoring (:attr:`answered`). One runner per call, with the judge's settings (its
        concurrency, retries, fail-fast) and :attr:`budget`, without its progress bar (the
        generation's is on screen) or a second endpoint check (the job made it before
        generating). JudgeError when the judge stops answering or refuses the key, or its
        answers cannot be stored; BudgetReached passes through."""
        todo: dict[str, Request] = {}
        for request in requests:
            key = self.key_of(request)
            if key not in self.answered:
                todo.setdefault(key, request)
        if not todo:
            return
        settings = replace(self.runner, preflight=False, progress=False)
        runner = Runner(self.backend, JUDGE_CONFIG, settings, cache=store, console=self.console, budget=self.budget)
        try:
            replies = await runner.run(list(todo.values()))
        except RunAborted as exc:
            raise JudgeError(f"the judge {self.backend.spec} stopped: {exc}") from exc
        except CacheError as exc:
            raise JudgeError(str(exc)) from exc
        self.answered.update(zip(todo, replies, strict=True))

    def request_of(self, ask: _Ask) -> Request:
        """The judge's request for ``ask``: its prompt filled with the output asked about and,
        for a field task, the fields this stage's reading of it asks (:func:`fields_to_ask`:
        under the default profile those the prompt would name for the output alone)."""
        first = ask.items[0]
        fields = fields_to_ask(first) or None  # None: not a field item (the prompt asks its task's form)
        text = fill_prompt(self.prompt, self.registry[ask.task], ask.record, first.text, fields=fields)
        # Run 0 and one seed for all: the same output of a record is one request (and one cache key).
        return Request(record=ask.record, run=0, messages=({"role": "user", "content": text},), seed=0)

    def _apply(self, ask: _Ask, spec: TaskSpec, rules: ScoringRules, tally: _TaskTally, edited: dict[int, Sample]) -> None:
        """The judge's reply to ``ask`` applied: its asked items' new items put in ``edited``."""
        reply = ask.reply
        if reply is None:
            return
        first = ask.items[0]
        if reply.error:
            tally.failed += 0 if ask.audit else 1
            tally.failed_first = tally.failed_first or reply.error
            return
        reading = read_reply(spec, ask.record, first, reply.prediction, rules, prompt_examples(self.prompt.template))
        if ask.audit:
            self._audited(ask, reading, reply.prediction, tally, edited)
            return
        self._count(ask, reading, reply.prediction, tally)
        by = f"judge:{self.backend.spec}"
        for asked in ask.items:
            item = edited.get(id(asked), asked).edited("replied", by, judge_reply=reply.prediction,
                                                       judge_rejected=reading.rejection)  # fmt: skip
            if reading.outcome == "answer" and reading.item is not None:
                item = adopt(item, copy.deepcopy(reading.item), reading.evidence, self.backend.spec)
            elif not ask.low_confidence:  # a low-confidence item stays as the rules read it
                failure = NOT_GROUNDED if reading.outcome == "not_grounded" and item.status == "format_failure" else item.failure
                item = item.edited("unanswered", by, extracted_by=unanswered_reader(item), failure=failure)
            edited[id(asked)] = item

    @staticmethod
    def _count(ask: _Ask, reading: ReplyReading, reply: str, tally: _TaskTally) -> None:
        """One reply to an unread or low-confidence output, counted (each kind apart)."""
        first = ask.items[0]
        quoted = f"id {first.id}: {reply[:80]!r}"
        if reading.outcome == "answer" and reading.unreadable:
            tally.partial += 1
            tally.partial_first = tally.partial_first or f"id {first.id}: {', '.join(reading.unreadable)}"
        if reading.rejection is not None:
            tally.not_grounded += 1
            whys = list(reading.rejected.values()) or [reading.why or ""]
            for why in dict.fromkeys(whys):
                tally.not_grounded_whys[why] = tally.not_grounded_whys.get(why, 0) + 1
            tally.not_grounded_first = tally.not_grounded_first or f"id {first.id}: {reading.rejection}"
        if ask.low_confidence:
            tally.low_confidence += 1
            if reading.outcome == "malformed":
                tally.low_malformed += 1
                tally.low_malformed_first = tally.low_malformed_first or quoted
            return
        tally.asked += 1
        if reading.outcome == "no_answer":
            tally.no_answer += 1
        elif reading.outcome == "malformed":
            tally.malformed += 1
            tally.malformed_first = tally.malformed_first or quoted

    def _audited(self, ask: _Ask, reading: ReplyReading, reply: str, tally: _TaskTally,
                 edited: dict[int, Sample]) -> None:  # fmt: skip
        first = ask.items[0]
        by = f"judge:{self.backend.spec}"
        if reading.rejection is not None:  # only grounded readings are compared with the rules'
            tally.audit_not_grounded += 1
            for asked in ask.items:
                edited[id(asked)] = edited.get(id(asked), asked).edited("audited", by, judge_reply=reply,
                                                                        judge_rejected=reading.rejection)
            return
        judge_item = reading.item if reading.outcome == "answer" else None
        agrees = same_reading(first, judge_item)
        judge_value = judge_reading(first, judge_item)
        tally.audited += 1
        tally.agreed += agrees
        if not agrees:
            tally.disagreements.append(_disagreement(first, judge_item, judge_value, reply))
        for asked in ask.items:
            edited[id(asked)] = edited.get(id(asked), asked).edited(
                "audited", by, judge_reply=reply, judge_extracted=copy.deepcopy(judge_value), judge_agrees=agrees)

    def _reading(self, tasks: Sequence[str], items: dict[str, list[Sample]], before: dict[str, int],
                 tallies: dict[str, _TaskTally]) -> SecondReading:  # fmt: skip
        out = SecondReading()
        total = Agreement(0, 0)
        judged = 0
        for t in tasks:
            tally, its = tallies[t], items[t]
            counts = reader_counts(its)
            judged += counts["judge"]
            after = sum(it.status == "format_failure" for it in its)
            entry: JSONObject = {
                "items": len(its), "read_by_rule": counts["rule"], "read_by_judge": counts["judge"],
                "unread": counts["none"] - sum(it.status == "error" for it in its),
                "asked": tally.asked, "no_answer": tally.no_answer, "malformed": tally.malformed,
                "failed": tally.failed, "capped": tally.capped, "low_confidence": tally.low_confidence,
                "not_grounded": tally.not_grounded, "not_grounded_whys": dict(tally.not_grounded_whys),
                "format_failure_rate_before": before[t] / len(its) if its else None,
                "format_failure_rate_after": after / len(its) if its else None,
            }  # fmt: skip
            if self.audit:
                agreement = Agreement(tally.audited, tally.agreed)
                total = Agreement(total.audited + tally.audited, total.agreed + tally.agreed)
                entry["audit"] = {**agreement.to_json(), "not_grounded": tally.audit_not_grounded,
                                  "disagreements": tally.disagreements}  # fmt: skip
            out.tasks[t] = entry
            out.warnings += self._task_warnings(t, tally)
        if any(tally.capped for tally in tallies.values()):
            capped = sum(tally.capped for tally in tallies.values())
            out.warnings.append(f"--judge-max-items {self.max_items}: {capped} output(s) the rules could not read "
                                "were not sent to the judge and stay format failures")  # fmt: skip
        if any(tally.low_capped for tally in tallies.values()):
            low = sum(tally.low_capped for tally in tallies.values())
            out.warnings.append(f"--judge-max-items {self.max_items}: {low} low-confidence output(s) were not sent "
                                "to the judge and keep the rules' reading")  # fmt: skip
        out.meta = {
            "model": self.backend.spec, "endpoint": self.backend.endpoint, **self.prompt.to_meta(),
            "max_items": self.max_items, "requests": self.requests, "from_cache": self.from_cache,
            "sent": self.sent, "read_by_judge": judged, "tokens": self.tokens,
        }  # fmt: skip
        if self.audit:
            rejected = sum(tally.audit_not_grounded for tally in tallies.values())
            out.meta.update(audit={**total.to_json(), "not_grounded": rejected}, audit_per_task=self.audit,
                            audit_seed=self.seed)  # fmt: skip
            warning = banner(total)
            if warning is not None:
                out.meta["banner"] = warning
        for line in out.warnings:
            self.console.print(line, style="yellow", markup=False, highlight=False)
        return out

    @staticmethod
    def _task_warnings(task: str, tally: _TaskTally) -> list[str]:
        lines = []
        if tally.malformed:
            lines.append(f"{task}: the judge's reply to {tally.malformed} output(s) could not be read by the task's "
                         f"reader (first: {tally.malformed_first}); they stay format failures")  # fmt: skip
        if tally.low_malformed:
            lines.append(f"{task}: the judge's reply to {tally.low_malformed} low-confidence output(s) could not be "
                         f"read by the task's reader (first: {tally.low_malformed_first}); they keep the rules' "
                         "reading")  # fmt: skip
        if tally.not_grounded:
            lines.append(f"{task}: the judge's reading of {tally.not_grounded} output(s) was rejected, its quote no "
                         f"evidence in the output (first: {tally.not_grounded_first}); they stay as the rules read "
                         "them")  # fmt: skip
        if tally.partial:
            lines.append(f"{task}: the judge's reply to {tally.partial} output(s) did not read every field it was "
                         f"asked for (first: {tally.partial_first}); those fields stay as the rules read them")  # fmt: skip
        if tally.failed_first is not None:
            lines.append(f"{task}: judge requests failed ({tally.failed_first}); those outputs stay as the rules read "
                         "them: rerun to ask again")  # fmt: skip
        return lines


def judge_reading(rule: Sample, judge: Sample | None) -> JSONValue:
    """What the judge read of an audited item, in the form of the rules' reading beside it:
    for a field item the asked fields only (never the rationale), each None where the judge
    read none; else its one value. None when the judge read nothing."""
    if judge is None:
        return None
    names = fields_to_ask(rule)
    if not names:  # an item read whole: its reading is one value
        return judge.extracted
    judged = {name: info.get("pred") for name, info in (judge.fields or {}).items() if info.get("matched_by") == JUDGE}
    return {name: judged.get(name) for name in names}


def _disagreement(rule: Sample, judge: Sample | None, judge_value: JSONValue, reply: str) -> JSONObject:
    """One audit disagreement: the two readings (:func:`judge_reading`) and the reply; for a
    field item ``fields`` holds the fields on which the two differ (:func:`field_disagreements`)."""
    names = fields_to_ask(rule)
    if not names:
        return {"id": rule.id, "run": rule.run, "rule": rule.extracted, "judge": judge_value, "reply": reply}
    rule_fields = rule.fields or {}
    return {"id": rule.id, "run": rule.run, "rule": {name: rule_fields[name].get("pred") for name in names},
            "judge": judge_value, "fields": field_disagreements(rule, judge), "reply": reply}  # fmt: skip


@dataclass
class AheadPlan:
    """Which asks of a job can go out before scoring, told task by task as each one's
    generation completes (from one thread: the job's scoring thread).

    Without ``--judge-max-items`` every ask of a complete task is certain, and goes at once.
    With a cap, scoring keeps the first N of every task's unread outputs in task order, then
    the low-confidence ones, then the audits (:func:`capped_asks`): so the unread outputs of
    the complete tasks at the head of the order (every task before them complete too) go out
    as far as the cap reaches, and the low-confidence ones and the audits once every task is
    complete (only then is the number of unread outputs known) as far as the cap has room
    left; nothing else, so that exactly what scoring asks is sent."""

    stage: JudgeStage
    #: The judged tasks, in scoring's order.
    tasks: list[str]
    planned: dict[str, TaskAsks] = field(default_factory=dict)
    #: Tasks at the head of the order whose unread asks were released; how many they were.
    settled: int = 0
    released: int = 0
    #: Whether the low-confidence asks and the audits (released together, at the end) went.
    audits_released: bool = False

    def judged(self, task: str) -> bool:
        return task in self.tasks

    def task_done(self, task: str, items: Sequence[Sample], records: Mapping[str, Record]) -> list[Request]:
        """The requests to send now that ``task``'s generation is complete (``items``: its
        items run by run, each run in record order, as scoring will hold them; ``records`` by id)."""
        if not self.judged(task) or task in self.planned:
            return []
        self.planned[task] = asks = self.stage.task_asks(task, items, records)
        cap = self.stage.max_items
        if cap is None:
            return [self.stage.request_of(ask) for ask in asks.unread + asks.low + asks.audit]
        out: list[_Ask] = []
        while self.settled < len(self.tasks) and self.tasks[self.settled] in self.planned:
            unread = self.planned[self.tasks[self.settled]].unread
            room = max(cap - self.released, 0)
            out += unread[:room]
            self.released += min(len(unread), room)
            self.settled += 1
        if self.settled == len(self.tasks) and not self.audits_released:
            self.audits_released = True
            room = max(cap - sum(len(asks.unread) for asks in self.planned.values()), 0)
            rest = [ask for t in self.tasks for ask in self.planned[t].low]
            rest += [ask for t in self.tasks for ask in self.planned[t].audit]
            out += rest[:room]
        return [self.stage.request_of(ask) for ask in out]
