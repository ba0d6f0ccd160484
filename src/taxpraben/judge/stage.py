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
judge nothing it has answered.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from taxpraben.cache import CacheError, CompletionCache
from taxpraben.judge.audit import Agreement, banner, draw
from taxpraben.judge.prompt import JudgePrompt, fill_prompt
from taxpraben.judge.reading import (
    OutputKey,
    ReplyReading,
    adopt,
    judged_task,
    read_outputs,
    read_reply,
    reader_counts,
    same_reading,
    unread_outputs,
)
from taxpraben.kinds import Item
from taxpraben.kinds.profiles import ScoringRules, scoring_rules
from taxpraben.ledger import CostOf, generation_tallies
from taxpraben.models.base import Backend, GenerationConfig, Request
from taxpraben.predictions import Prediction
from taxpraben.runner import RunAborted, Runner, RunnerSettings
from taxpraben.scoring.pipeline import SecondReading
from taxpraben.tasks import Registry

#: How the judge is asked: greedy, and a short answer (a letter, a number, a span).
JUDGE_CONFIG = GenerationConfig(temperature=0.0, max_tokens=256)


class JudgeError(Exception):
    """The judge cannot be used (a dead endpoint, a refused key): the message says why."""


@dataclass
class _Ask:
    """One distinct output to send: its task, the items that gave it, and why it is asked."""

    task: str
    key: OutputKey
    items: list[Item]
    audit: bool
    reply: Prediction | None = None


@dataclass
class _TaskTally:
    asked: int = 0
    no_answer: int = 0
    malformed: int = 0
    failed: int = 0
    capped: int = 0
    audited: int = 0
    agreed: int = 0
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    malformed_first: str | None = None
    failed_first: str | None = None


@dataclass
class JudgeStage:
    """The second reader of ``--judge``: ``backend`` answers ``prompt`` for the outputs the
    rules of ``profile`` could not read, and for ``audit`` outputs per task they did read
    (drawn with ``seed``); ``max_items`` caps the distinct requests (format failures first)."""

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
    #: Filled by each call: the runner's figures of the last scoring, and the judge's tokens.
    requests: int = 0
    from_cache: int = 0
    sent: int = 0
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)

    def preflight(self) -> None:
        """Ask the judge's endpoint once (``GET /models``) before anything is generated;
        JudgeError when it cannot answer (nothing listening, a refused key)."""
        check = getattr(self.backend, "preflight", None)
        if check is None:
            return

        async def probe() -> Any:
            try:
                return await check()
            finally:
                await self.backend.aclose()

        error = asyncio.run(probe())
        if error is not None and error.fatal:
            raise JudgeError(f"the judge {self.backend.spec} cannot be used: {error.message}")

    def __call__(self, prepared: dict[str, list[list[Item]]]) -> SecondReading:
        rules = scoring_rules(self.profile)
        tasks = [t for t in prepared if judged_task(self.registry[t])]
        items = {t: [it for row in prepared[t] for it in row] for t in tasks}
        before = {t: sum(it.status == "format_failure" for it in items[t]) for t in tasks}
        tallies = {t: _TaskTally() for t in tasks}
        asks = self._asks(tasks, items, tallies)
        self._send(asks)
        for ask in asks:
            self._apply(ask, self.registry[ask.task], rules, tallies[ask.task])
        return self._reading(tasks, items, before, tallies)

    # ------------------------------------------------------------------ steps

    def _asks(self, tasks: Sequence[str], items: dict[str, list[Item]], tallies: dict[str, _TaskTally]) -> list[_Ask]:
        """Every distinct unread output, then each task's audit draw; past ``max_items`` the
        rest is left unasked (counted as capped)."""
        unread = [_Ask(t, k, its, False) for t in tasks for k, its in unread_outputs(items[t]).items()]
        audit = []
        for t in tasks:
            candidates = list(read_outputs(items[t]).items())
            audit += [_Ask(t, k, its, True) for k, its in draw(candidates, self.audit, self.seed, t)]
        cap = len(unread) + len(audit) if self.max_items is None else self.max_items
        for ask in unread[cap:]:
            tallies[ask.task].capped += 1
        return (unread + audit)[:cap]

    def _send(self, asks: list[_Ask]) -> None:
        """The judge's replies, through the runner and the cache, all at once."""
        if not asks:
            self.requests = self.from_cache = self.sent = 0
            self.tokens = generation_tallies([], self.cost_of)
            return
        requests = [self._request(ask) for ask in asks]
        store = None
        try:
            store = CompletionCache(self.cache_path) if self.cache_path is not None else None
        except CacheError as exc:
            raise JudgeError(str(exc)) from exc
        runner = Runner(self.backend, JUDGE_CONFIG, self.runner, cache=store,
                        console=self.progress or Console(stderr=True))  # fmt: skip
        try:
            replies = asyncio.run(runner.run(requests))
        except RunAborted as exc:
            raise JudgeError(f"the judge {self.backend.spec} stopped: {exc}") from exc
        finally:
            if store is not None:
                store.close()
        for ask, reply in zip(asks, replies, strict=True):
            ask.reply = reply
        self.requests, self.from_cache, self.sent = runner.stats.unique, runner.stats.cached, runner.stats.done
        self.tokens = generation_tallies(replies, self.cost_of)  # the judge's tokens, apart from the model's

    def _request(self, ask: _Ask) -> Request:
        first = ask.items[0]
        text = fill_prompt(self.prompt, self.registry[ask.task], first.record, first.prediction)
        # Run 0 and one seed for all: the same output of a record is one request (and one cache key).
        return Request(record=first.record, run=0, messages=({"role": "user", "content": text},), seed=0)

    def _apply(self, ask: _Ask, spec: Any, rules: ScoringRules, tally: _TaskTally) -> None:
        reply = ask.reply
        if reply is None:
            return
        first = ask.items[0]
        if reply.error:
            tally.failed += 0 if ask.audit else 1
            tally.failed_first = tally.failed_first or reply.error
            return
        reading = read_reply(spec, first, reply.prediction, rules)
        if ask.audit:
            self._audited(ask, reading, reply.prediction, tally)
            return
        tally.asked += 1
        if reading.outcome == "no_answer":
            tally.no_answer += 1
        elif reading.outcome == "malformed":
            tally.malformed += 1
            tally.malformed_first = tally.malformed_first or f"id {first.id}: {reply.prediction[:80]!r}"
        for item in ask.items:
            item.judge_reply = reply.prediction
            if reading.outcome == "answer" and reading.item is not None:
                adopt(item, copy.deepcopy(reading.item))
            else:
                item.extracted_by = "none"

    def _audited(self, ask: _Ask, reading: ReplyReading, reply: str, tally: _TaskTally) -> None:
        first = ask.items[0]
        judge_item = reading.item if reading.outcome == "answer" else None
        agrees = same_reading(first, judge_item)
        judge_value = judge_item.extracted if judge_item is not None else None
        tally.audited += 1
        tally.agreed += agrees
        if not agrees:
            tally.disagreements.append({"id": first.id, "run": first.run, "rule": first.extracted,
                                        "judge": judge_value, "reply": reply})  # fmt: skip
        for item in ask.items:
            item.judge_reply = reply
            item.judge_extracted = copy.deepcopy(judge_value)
            item.judge_agrees = agrees

    def _reading(self, tasks: Sequence[str], items: dict[str, list[Item]], before: dict[str, int],
                 tallies: dict[str, _TaskTally]) -> SecondReading:  # fmt: skip
        out = SecondReading()
        total = Agreement(0, 0)
        judged = 0
        for t in tasks:
            tally, its = tallies[t], items[t]
            counts = reader_counts(its)
            judged += counts["judge"]
            after = sum(it.status == "format_failure" for it in its)
            entry: dict[str, Any] = {
                "items": len(its), "read_by_rule": counts["rule"], "read_by_judge": counts["judge"],
                "unread": counts["none"] - sum(it.status == "error" for it in its),
                "asked": tally.asked, "no_answer": tally.no_answer, "malformed": tally.malformed,
                "failed": tally.failed, "capped": tally.capped,
                "format_failure_rate_before": before[t] / len(its) if its else None,
                "format_failure_rate_after": after / len(its) if its else None,
            }  # fmt: skip
            if self.audit:
                agreement = Agreement(tally.audited, tally.agreed)
                total = Agreement(total.audited + tally.audited, total.agreed + tally.agreed)
                entry["audit"] = {**agreement.to_json(), "disagreements": tally.disagreements}
            out.tasks[t] = entry
            out.warnings += self._task_warnings(t, tally)
        if any(tally.capped for tally in tallies.values()):
            capped = sum(tally.capped for tally in tallies.values())
            out.warnings.append(f"--judge-max-items {self.max_items}: {capped} output(s) the rules could not read "
                                "were not sent to the judge and stay format failures")  # fmt: skip
        out.meta = {
            "model": self.backend.spec, "endpoint": self.backend.endpoint, **self.prompt.to_meta(),
            "max_items": self.max_items, "requests": self.requests, "from_cache": self.from_cache,
            "sent": self.sent, "read_by_judge": judged, "tokens": self.tokens,
        }  # fmt: skip
        if self.audit:
            out.meta.update(audit=total.to_json(), audit_per_task=self.audit, audit_seed=self.seed)
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
        if tally.failed_first is not None:
            lines.append(f"{task}: judge requests failed ({tally.failed_first}); those outputs stay as the rules read "
                         "them: rerun to ask again")  # fmt: skip
        return lines
