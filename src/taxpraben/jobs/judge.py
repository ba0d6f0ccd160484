"""The judge of ``run`` and ``score`` (``--judge``): built from its options, checked before
anything is generated, and handed to scoring as its second reader (:mod:`taxpraben.judge`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from taxpraben.jobs.common import JobError, say
from taxpraben.models.base import ModelSpecError
from taxpraben.models.factory import create_backend
from taxpraben.options import JudgeOptions
from taxpraben.runner import RunnerSettings
from taxpraben.tasks import Registry

if TYPE_CHECKING:
    from taxpraben.judge.stage import JudgeStage
    from taxpraben.kinds import Item
    from taxpraben.scoring.pipeline import SecondReader, SecondReading


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
) -> JudgeStage | None:
    """The second reader ``options`` ask for (None without ``--judge``), its endpoint asked
    once now (a dead or refusing judge ends the job before any generation is paid for);
    JobError (exit 2) for a judge, prompt or endpoint that cannot be used."""
    if options.judge is None:
        for flag, value in (("--judge-base-url", options.judge_base_url), ("--judge-prompt", options.judge_prompt),
                            ("--judge-audit", options.judge_audit or None),
                            ("--judge-max-items", options.judge_max_items)):  # fmt: skip
            if value is not None:
                raise JobError(f"{flag} needs --judge MODEL (the judge model to ask)", code=2)
        return None
    from taxpraben.judge.prompt import JudgePromptError, load_prompt
    from taxpraben.judge.stage import JudgeError, JudgeStage

    try:
        prompt = load_prompt(options.judge_prompt)
        backend = create_backend(options.judge, base_url=options.judge_base_url,
                                 api_key_env=options.judge_api_key_env, concurrency=runner.concurrency)  # fmt: skip
    except (JudgePromptError, ModelSpecError, ValueError) as exc:
        raise JobError(f"--judge: {exc}", code=2) from exc
    stage = JudgeStage(backend, prompt, registry, profile=profile, audit=options.judge_audit, seed=seed,
                       max_items=options.judge_max_items, runner=runner, cache_path=cache_path, console=console,
                       progress=progress)  # fmt: skip
    try:
        stage.preflight()
    except JudgeError as exc:
        raise JobError(str(exc), "Nothing was generated; fix --judge-base-url / the key, or drop --judge.",
                       code=2) from exc  # fmt: skip
    say(console, f"Judge: {backend.spec} (prompt {prompt.version}) reads what the rules cannot"
                 + (f"; audit of {options.judge_audit} answers per task" if options.judge_audit else ""))  # fmt: skip
    return stage


def as_second_reader(stage: JudgeStage | None) -> SecondReader | None:
    """``stage`` as scoring's second reader, a judge that stops midway (it stopped answering,
    it refused the key) ending the job with JobError (exit 2): what it answered is cached."""
    if stage is None:
        return None
    from taxpraben.judge.stage import JudgeError

    def read(prepared: dict[str, list[list[Item]]]) -> SecondReading:
        try:
            return stage(prepared)
        except JudgeError as exc:
            raise JobError(str(exc), "Nothing was scored; what the judge answered is in the cache: rerun to go on.",
                           code=2) from exc  # fmt: skip

    return read
