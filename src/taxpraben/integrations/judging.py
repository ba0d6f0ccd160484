"""The grounded judge of ``taxpraben score --judge`` asked from another harness's scorer, one
sample at a time (:class:`SampleJudge`).

A harness scores each sample as its output arrives: the rules read it first
(:func:`taxpraben.api.reading.read_answer`); when they could not, or read it only by a
fallback (low confidence), :meth:`SampleJudge.judged` asks the judge with the very stage
``score --judge`` uses (:class:`taxpraben.judge.stage.JudgeStage`: the same prompt, the same
request per distinct output, its reply read back by the task's own reader and kept only when
its quote is evidence in the output; the completion cache, so that a rescoring asks nothing
twice). The item keeps the rules' reading and the judge's edit side by side
(``judge_history``). The audit (``--judge-audit``) draws among a task's outputs, which a
harness scoring sample by sample does not hold: it is not offered here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from taxpraben.judge.prompt import JudgePromptError, load_prompt
from taxpraben.judge.reading import judged_task
from taxpraben.judge.stage import JudgeError, JudgeStage
from taxpraben.models.base import ModelSpecError
from taxpraben.models.defaults import DEFAULT_JUDGE_CONCURRENCY, DEFAULT_JUDGE_TIMEOUT_S
from taxpraben.models.factory import create_backend
from taxpraben.options import JudgeOptions
from taxpraben.records import Record
from taxpraben.results import Sample
from taxpraben.run.cache import CacheError, CompletionCache, default_cache_path
from taxpraben.run.runner import RunnerSettings
from taxpraben.tasks import Registry


class JudgeUnavailable(RuntimeError):
    """The judge cannot be used (its spec, prompt or key; a dead or refusing endpoint): the
    message says why and what to change."""


@dataclass
class SampleJudge:
    """The judge ``judge`` names, asked for one read sample at a time (:meth:`judged`). Its
    requests go out one sample after another (the stage's runner closes the backend when it
    is done), each looked up in the completion cache first."""

    stage: JudgeStage
    cache_path: Path | None
    _checked: bool = field(default=False, init=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def judged(self, sample: Sample, record: Record) -> Sample:
        """``sample`` (read by the rules, of ``record``) as the judge leaves it: unchanged when
        the rules read it with confidence or its task is not judged (generation), else with
        the judge's grounded reading adopted (or its reply recorded when it read none).
        JudgeUnavailable when the judge cannot be asked."""
        spec = self.stage.registry[sample.task]
        if not judged_task(spec):
            return sample
        asks = self.stage.task_asks(spec.name, [sample], {record.id: record})
        if not asks.unread and not asks.low:
            return sample
        async with self._lock:
            await self._check()
            store = self._store()
            try:
                await self.stage.send_ahead([self.stage.request_of(a) for a in asks.unread + asks.low], store)
            except JudgeError as exc:
                raise JudgeUnavailable(str(exc)) from exc
            finally:
                if store is not None:
                    store.close()
            prepared = {spec.name: [[sample]]}
            self.stage(prepared, {spec.name: [record]})  # every reply is answered: nothing is sent here
        return prepared[spec.name][0][0]

    async def _check(self) -> None:
        """Ask the judge's endpoint once (``GET /models``) before its first request."""
        if self._checked:
            return
        check = getattr(self.stage.backend, "preflight", None)
        if check is not None:
            error = await check()
            if error is not None and error.fatal:
                raise JudgeUnavailable(f"the judge {self.stage.backend.spec} cannot be used: {error.message}")
        self._checked = True

    def _store(self) -> CompletionCache | None:
        if self.cache_path is None:
            return None
        try:
            return CompletionCache(self.cache_path)
        except CacheError as exc:
            raise JudgeUnavailable(str(exc)) from exc


def sample_judge(
    judge: str,
    registry: Registry,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    prompt: str | Path | None = None,
    profile: str = "taxpraben",
    concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
    timeout: float = DEFAULT_JUDGE_TIMEOUT_S,
    cache: bool = True,
) -> SampleJudge:
    """The judge ``judge`` (``openai:NAME`` with ``base_url``, ``hf:PATH``) as ``score --judge``
    builds it: its key from ``api_key_env`` (for an ``openai:`` judge at another endpoint than
    OpenAI's, ``$OPENAI_API_KEY`` is not sent: name the variable), ``prompt`` a template file
    (default: the built-in one), its answers in the completion cache (``$TAXPRABEN_CACHE``)
    unless ``cache=False``. JudgeUnavailable for a judge, key or prompt that cannot be used."""
    from taxpraben.jobs.judge import judge_key

    template_file = Path(prompt) if prompt is not None else None
    options = JudgeOptions(judge=judge, judge_base_url=base_url, judge_api_key_env=api_key_env,
                           judge_prompt=template_file, judge_concurrency=concurrency, judge_timeout=timeout)  # fmt: skip
    try:
        template = load_prompt(template_file)
        key_env, needs_key = judge_key(options, None, None)
        backend = create_backend(judge, base_url=base_url, api_key_env=key_env, concurrency=concurrency,
                                 needs_key=needs_key, timeout=timeout)  # fmt: skip
    except (JudgePromptError, ModelSpecError, ValueError) as exc:
        raise JudgeUnavailable(f"judge: {exc}") from exc
    quiet = Console(quiet=True)  # a harness shows its own progress; the judge's warnings are in each sample
    stage = JudgeStage(backend, template, registry, profile=profile, runner=RunnerSettings(concurrency=concurrency),
                       console=quiet, progress=quiet)  # fmt: skip
    return SampleJudge(stage, default_cache_path() if cache else None)
