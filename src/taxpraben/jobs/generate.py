"""The ``run`` job: generate with a model (every record x every run), then score.

Flow: load the registry and the data, build one request per (record, run) with the record's
``query`` verbatim as the user message, drive them through the backend (cache first, then
the endpoint), write ``OUT/predictions.jsonl``, score into ``OUT``. Items that still fail
after every retry are kept with their error (scored 0) and end the job with exit 1 unless
``--allow-failures``. Ctrl-C (or SIGTERM) stops at once; every completion received is already in
the cache, and rerunning the same command sends only what is missing; the answers so far are
also written to ``OUT/predictions.jsonl`` (with ``--no-cache``, all that is kept of them).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.config import CONFIG_FILE, job_groups, write_config_file
from taxpraben.costs.budget import Budget, CostOf
from taxpraben.data.loader import DataStream, LoadedData
from taxpraben.data.problems import DataError
from taxpraben.jobs.alongside import Alongside, alongside_stage
from taxpraben.jobs.batch_stage import batch_stage
from taxpraben.jobs.common import (
    JobError,
    benchmark_selection,
    costing,
    in_data_order,
    output_directory,
    ready_scorers,
    sample_note,
    say,
    score_and_report,
    scoring_settings,
    task_registry,
    warn,
    write_predictions_file,
)
from taxpraben.jobs.gates import apply_gates, refuse_unknown_gate_tasks
from taxpraben.jobs.judge import (
    Judge,
    as_second_reader,
    judge_stage,
    priced_judge,
    refuse_unpriced_judge,
)
from taxpraben.jobs.prompt_size import warn_long_prompts
from taxpraben.jobs.read_ahead import SpecCheck
from taxpraben.jobs.serving import serve_context
from taxpraben.jobs.stops import (
    budget_stop,
    failures_error,
    keep_answered,
    resume_hint,
    terminated_as_interrupted,
)
from taxpraben.jobs.trackers import log_to_trackers, require_trackers
from taxpraben.manifest import job_manifest
from taxpraben.models.base import (
    Backend,
    GenerationConfig,
    ModelSpecError,
    Request,
    build_request,
    parse_gen_kwargs,
)
from taxpraben.models.factory import create_backend
from taxpraben.options import (
    BatchOptions,
    BudgetOptions,
    DataOptions,
    EndpointOptions,
    GateOptions,
    GenerationOptions,
    JudgeOptions,
    ModelOptions,
    PricingOptions,
    RunOutputOptions,
    ScoringOptions,
    TrackerOptions,
)
from taxpraben.run.cache import CacheError, CompletionCache, default_cache_path
from taxpraben.run.locks import sole_cache_user
from taxpraben.run.runner import BudgetReached, RunAborted, Runner, RunnerSettings
from taxpraben.run.serve import (
    Server,
    served_base_url,
    watch_server,
)
from taxpraben.run.shards import SHARD_MANIFEST, Shard, parse_shard, write_manifest
from taxpraben.tasks import Registry, TaskSpecError
from taxpraben.terminal.collector import resume_collection
from taxpraben.terminal.console import deferred_console
from taxpraben.terminal.progress import RunStats

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.coverage import Selection
    from taxpraben.results.json_value import JSONObject
    from taxpraben.results.predictions import Prediction
    from taxpraben.scoring.pipeline import ScoredResults
    from taxpraben.scoring.settings import ScoringSettings

#: The unsharded run: every record.
WHOLE = Shard()


@dataclass(frozen=True)
class RunJob:
    """Everything ``run`` was asked: one option group each."""

    model: ModelOptions
    data: DataOptions
    generation: GenerationOptions
    endpoint: EndpointOptions
    scoring: ScoringOptions
    output: RunOutputOptions
    batch: BatchOptions = field(default_factory=BatchOptions)
    pricing: PricingOptions = field(default_factory=PricingOptions)
    budget: BudgetOptions = field(default_factory=BudgetOptions)
    gates: GateOptions = field(default_factory=GateOptions)
    trackers: TrackerOptions = field(default_factory=TrackerOptions)
    judge: JudgeOptions = field(default_factory=JudgeOptions)


def model_slug(spec: str) -> str:
    """``openai:deepseek-chat`` -> ``openai-deepseek-chat``; paths keep their last part."""
    kind, _, name = spec.partition(":")
    name = name.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or "model"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{kind}-{name}").strip("-")


def stream_requests(
    stream: DataStream,
    registry: Registry,
    config: GenerationConfig,
    runs: int,
    shard: Shard = WHOLE,
    fed: Callable[[str, int], None] | None = None,
) -> Iterator[Request]:
    """One request per (record, run), run-major (so a sampled local batch shares a seed),
    while the data is read: run 0 of each record as soon as it is read and checked, the
    other runs once every record is. Raises the data's DataError once every record has
    been read (the runner then stops). With a ``shard``, only the records it owns (by
    their position in their task, see taxpraben.run.shards) and every run of each. ``fed`` is
    told each task, with how many requests it has, once every one of them was handed out
    (its file read, its last run reached; the judge of ``run`` asks for a task's answers
    once the runner has read as many and they are answered), every task once."""
    told: set[str] = set()
    counts: dict[str, int] = {}

    def tell(task: str) -> None:
        if fed is not None and task not in told:
            told.add(task)
            fed(task, counts.get(task, 0))

    positions: dict[str, int] = {}
    last: str | None = None
    for record in stream:
        if runs == 1 and last is not None and record.task != last:
            tell(last)  # the stream has moved on to the next file
        last = record.task
        position = positions.get(record.task, 0)
        positions[record.task] = position + 1
        if shard.owns(record.task, position):
            counts[record.task] = counts.get(record.task, 0) + 1
            yield build_request(record, 0, config, registry[record.task])
    loaded = stream.result()
    for run in range(1, runs):
        for task, records in shard_records(loaded, shard).records.items():
            for record in records:
                yield build_request(record, run, config, registry[task])
            counts[task] = counts.get(task, 0) + len(records)
            if run == runs - 1:
                tell(task)
    for task in loaded.records:  # the last task of a single run, and those with no record
        tell(task)


def shard_records(loaded: LoadedData, shard: Shard) -> LoadedData:
    """``loaded`` with only the records ``shard`` owns (``loaded`` itself when whole); the
    data hash stays the hash of all the data, so that the shards' results name one data."""
    if shard.whole:
        return loaded
    owned = {
        task: [r for k, r in enumerate(records) if shard.owns(task, k)]
        for task, records in loaded.records.items()
    }
    return replace(loaded, records=owned)


def generation_config(generation: GenerationOptions) -> GenerationConfig:
    """The decoding settings of every request; JobError (exit 2) for bad --gen-kwargs."""
    try:
        return GenerationConfig(
            temperature=generation.temperature,
            top_p=generation.top_p,
            max_tokens=generation.max_tokens,
            seed_base=generation.seed,
            system_prompt=generation.system_prompt,
            gen_kwargs=parse_gen_kwargs(generation.gen_kwargs),
        )
    except ModelSpecError as exc:
        raise JobError(str(exc), code=2) from exc


def base_urls(endpoint: EndpointOptions) -> list[str] | None:
    """``--base-url``; with ``--serve`` and none given, the served command's own URL."""
    if endpoint.base_url:
        return list(endpoint.base_url)
    return [served_base_url(endpoint.serve)] if endpoint.serve else None


def backend_of(job: RunJob, console: Console | None = None, *, sends: bool | None = None) -> Backend:
    """The backend ``--model`` names (``--model-args`` checked by it; its notices, such as
    trust_remote_code's, printed on ``console``); JobError (exit 2) for a spec, URL or model
    argument that cannot be used. ``sends``: whether anything will be sent from here (then a
    hosted endpoint needs its API key); default: unless ``--batch-file-only``."""
    endpoint = job.endpoint
    if sends is None:
        sends = not job.batch.batch_file_only  # it writes a file: nothing is sent from here
    urls = base_urls(endpoint)
    try:
        backend = create_backend(
            job.model.model,
            base_url=",".join(urls) if urls else None,
            api_key_env=endpoint.api_key_env,
            concurrency=endpoint.concurrency,
            timeout=endpoint.timeout,
            device=job.scoring.device,
            stream=not endpoint.no_stream,
            idle_timeout=endpoint.idle_timeout,
            model_args=job.model.model_args,
            needs_key=sends,
            chat_template=job.model.chat_template,
        )
    except (ModelSpecError, ValueError) as exc:  # ValueError: a --serve command without a port
        raise JobError(str(exc), code=2) from exc
    for notice in getattr(backend, "notices", ()):
        if console is not None:
            warn(console, notice)
    return backend


def open_cache(job: RunJob, backend: Backend, held: ExitStack, console: Console) -> CompletionCache | None:
    """The completion cache (None with --no-cache or a backend not worth caching); JobError
    (exit 2) when it cannot be opened; a warning when another run is using it."""
    if job.output.no_cache or not backend.cacheable:
        return None
    cache_path = job.output.cache or default_cache_path()
    try:
        store = CompletionCache(cache_path)
        # Closing starts in the background as soon as generation ends (generate); this waits
        # for it (or closes it, when generation never started).
        held.callback(store.close)
        alone = held.enter_context(sole_cache_user(cache_path))
    except CacheError as exc:
        raise JobError(str(exc), code=2) from exc
    if not alone:
        warn(console, f"Another taxpraben run is using the cache {cache_path}: what it has stored is reused, "
                      "but a request it has in flight and this run also needs may be sent twice.")  # fmt: skip
    return store


def runner_settings(endpoint: EndpointOptions) -> RunnerSettings:
    return RunnerSettings(
        concurrency=endpoint.concurrency,
        rpm=endpoint.rpm,
        tpm=endpoint.tpm,
        max_retries=endpoint.max_retries,
        deadline=endpoint.deadline,
        backoff_base=endpoint.retry_backoff,
        preflight=not endpoint.no_preflight,
    )


def checked_specs(check: SpecCheck, runner: Runner) -> None:
    """The specs' check done (:class:`SpecCheck`); JobError (exit 2) for a spec found wrong."""
    try:
        check.result()
    except TaskSpecError as exc:
        raise spec_stop(exc, runner) from exc


def spec_stop(exc: TaskSpecError, runner: Runner) -> JobError:
    kept = f"The {runner.stats.done} completions received are in the cache." if runner.stats.done else None
    return JobError(str(exc), *([kept] if kept else []), code=2)


def generate(
    runner: Runner, requests: Iterator[Request], store: CompletionCache | None,
    alongside: Callable[[Coroutine[object, None, list[Prediction]]], Coroutine[object, None, list[Prediction]]] | None = None,
    out_dir: Path | None = None,
    server: Server | None = None,
) -> list[Prediction]:  # fmt: skip
    """Drive every request through the runner (with ``alongside``, the judge of ``run``
    beside it on the same loop: :class:`~taxpraben.jobs.judge.JudgeAlongside`); each way a
    run stops early becomes a JobError with what was kept and how to go on. Interrupted
    (Ctrl-C, SIGTERM), the answers so far are written to ``out_dir`` (cache or not). With
    ``server`` (``--serve``), a served command that exits stops generation (ServerExited)."""
    try:
        generation = runner.run(requests)
        work = generation if alongside is None else alongside(generation)
        with terminated_as_interrupted():
            return asyncio.run(work if server is None else watch_server(work, server.process.poll))
    except DataError as exc:
        kept = (f"The {runner.stats.done} completions received before the data was found faulty are in the cache."
                if runner.stats.done else None)  # fmt: skip
        raise JobError(str(exc), *([kept] if kept else []), code=1) from exc
    except TaskSpecError as exc:  # a spec's value found wrong while generating (SpecCheck)
        raise spec_stop(exc, runner) from exc
    except KeyboardInterrupt:
        written = keep_answered(runner, out_dir) if out_dir is not None else ""
        raise JobError(resume_hint(store, runner.stats, written), code=130, style="yellow") from None
    except RunAborted as exc:  # a refused key, an unknown model, nothing listening
        kept = f"; the {runner.stats.done} completions received are in the cache" if runner.stats.done else ""
        raise JobError(f"Stopped: {exc}", f"Nothing was written{kept}.", code=2) from exc
    except (ModelSpecError, CacheError) as exc:  # a model that cannot load, a full disk
        raise JobError(str(exc), code=2) from exc
    finally:
        if store is not None:
            store.close_in_background()


def run_meta(job: RunJob, backend: Backend, config: GenerationConfig, stats: RunStats, started: datetime) -> JSONObject:
    """What results.json's ``meta`` says of the generation."""
    meta: JSONObject = {
        "model": backend.spec,
        "endpoint": backend.endpoint,
        "generation": config.to_meta(),
        "model_args": dict(getattr(backend, "model_args", None) or {}) or None,
        "chat_template": backend.chat_template_meta() if hasattr(backend, "chat_template_meta") else None,
        "runs": job.generation.runs,
        "shared_generation": stats.shared_generation,
        "started_at": started.isoformat(timespec="seconds"),
        "generation_stats": {
            "generations": stats.unique,
            "cached": stats.cached,
            "generated": stats.done,
            "failed": stats.failed,
            "retries": stats.retries,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
        },
    }
    pool = getattr(backend, "pool", None)
    if pool is not None and len(pool) > 1:
        meta["endpoints"] = pool.to_meta()
    return meta


def write_shard_manifest(out_dir: Path, part: Shard, meta: JSONObject, loaded: LoadedData) -> None:
    """``OUT/shard.json`` and the shard in ``meta``; JobError (exit 2) when it cannot be written."""
    meta["shard"] = {**part.to_meta(), "records": loaded.n_records, "partial": True}
    facts = {key: meta[key] for key in ("model", "endpoint", "generation", "runs")}
    try:
        write_manifest(out_dir, part, {**facts, "data_hash": loaded.data_hash, "tasks": list(loaded.records),
                                       "limit": loaded.limit, "records": loaded.n_records})  # fmt: skip
    except OSError as exc:
        raise JobError(f"cannot write {out_dir / SHARD_MANIFEST}: {exc}", code=2) from exc


def write_run_config(job: RunJob, out_dir: Path) -> Path:
    """``OUT/config.yaml``: the run's options with their effective values (``out`` the
    directory chosen), so that ``run --config OUT/config.yaml`` replays it; JobError (exit 2)
    when it cannot be written."""
    try:
        return write_config_file(out_dir, "run", job_groups(replace(job, output=replace(job.output, out=out_dir))))
    except OSError as exc:
        raise JobError(f"cannot write {out_dir / CONFIG_FILE}: {exc}", code=2) from exc


def summary_line(predictions: list[Prediction], part: Shard, stats: RunStats, path: Path) -> str:
    shared = " (runs share one deterministic generation)" if stats.shared_generation else ""
    return (
        f"{len(predictions)} predictions{'' if part.whole else f' (shard {part})'}: "
        f"{stats.cached} generations from the cache, "
        f"{stats.done} generated, {stats.failed} failed{shared}; retries {stats.retries}; "
        f"tokens {stats.tokens:,} -> {path}"
    )


def run_budget(budget: BudgetOptions, cost_of: CostOf | None, batch: BatchOptions) -> Budget | None:
    """The run's spending limit (None without one); JobError (exit 2) for a cost budget
    without prices, and for a budget with --batch."""
    if budget.budget_tokens is None and budget.budget_cost is None:
        return None
    if batch.batch:
        raise JobError("--batch sends every missing request at once, so a budget cannot stop it partway: "
                       "see what it would cost with `taxpraben estimate`, or drop --batch", code=2)  # fmt: skip
    if budget.budget_cost is not None and cost_of is None:
        raise JobError("--budget-cost needs prices: pass --pricing FILE with an entry for the model", code=2)
    return Budget(tokens=budget.budget_tokens, cost=budget.budget_cost, cost_of=cost_of)


@dataclass(frozen=True)
class RunPlan:
    """What ``run`` settled before anything is sent: each check that can refuse the job done."""

    job: RunJob
    started: datetime
    part: Shard
    registry: Registry
    selection: Selection
    settings: ScoringSettings
    config: GenerationConfig
    backend: Backend
    judge: Judge | None
    out_dir: Path

    @property
    def scoring(self) -> bool:
        return not self.job.output.no_score


@dataclass(frozen=True)
class Generation:
    """Generation set up: the data read as it goes, the cache, the prices, the work beside it,
    the requests (checked, warned of, fed to the completion) and the runner."""

    stream: DataStream
    store: CompletionCache | None
    cost_of: CostOf | None
    pricing: JSONObject | None
    alongside: Alongside
    requests: Iterator[Request]
    runner: Runner


@dataclass(frozen=True)
class Generated:
    """What generation gave: the predictions in data order, of the records the shard owns."""

    predictions: list[Prediction]
    loaded: LoadedData
    stats: RunStats
    #: What ``/models`` of the server started by ``--serve`` listed (None without --serve).
    served_models: tuple[str, ...] | None = None


def plan_run(job: RunJob, console: Console, progress: Console | None) -> RunPlan:
    """Every check made before anything is sent; JobError to refuse the job."""
    started = datetime.now(timezone.utc)
    part = parse_shard(job.output.shard)  # checked when parsed
    registry = task_registry(job.data.task_dir, checked=False)  # checked as the first answers come in (SpecCheck)
    refuse_unknown_gate_tasks(job.gates, registry, scoring=not job.output.no_score)
    require_trackers(job.trackers, scoring=not job.output.no_score)  # a missing library: before anything is sent
    selection = benchmark_selection(job.data, registry)  # a task without data: refused before anything is sent
    for line in sample_note(job.data.data):
        warn(console, line)
    # Checked before anything is sent (a light module: the pipeline is not imported here).
    settings = scoring_settings(job.scoring, seed=job.generation.seed, runs=job.generation.runs)
    config = generation_config(job.generation)
    backend = backend_of(job, console)
    # The judge's endpoint is asked now: a dead judge costs no generation.
    judge = priced_judge(None if job.output.no_score else judge_stage(
        job.judge, registry, profile=settings.profile, seed=job.generation.seed, runner=runner_settings(job.endpoint),
        cache_path=None if job.output.no_cache else job.output.cache or default_cache_path(), console=console,
        progress=progress, generation_urls=base_urls(job.endpoint) if backend.kind == "openai" else None,
        generation_key_env=job.endpoint.api_key_env), job.pricing, console)  # fmt: skip
    refuse_unpriced_judge(judge, job.budget, job.pricing.pricing)
    out_dir = job.output.out or Path("runs") / f"{model_slug(job.model.model)}-{started.strftime('%Y%m%d-%H%M%S')}"
    return RunPlan(job, started, part, registry, selection, settings, config, backend, judge, out_dir)


def set_up_generation(plan: RunPlan, held: ExitStack, console: Console, progress: Console | None) -> Generation:
    """The data stream, the cache, the work beside generation and the runner (nothing sent yet)."""
    job = plan.job
    try:  # every record of every task is checked before the first request: a bad one costs nothing
        stream = DataStream(job.data.data, plan.registry, plan.selection.tasks or job.data.task_names, job.data.limit,
                            plan.selection.left_out)  # fmt: skip
        stream.read_all()
    except (DataError, KeyError) as exc:
        raise JobError(str(exc).strip("'\"")) from exc
    store = open_cache(job, plan.backend, held, console)
    cost_of, pricing = costing(job.pricing, plan.backend.spec, console)
    try:
        beside = alongside_stage(held, plan.registry, plan.settings, [f.task for f in stream.files], judge=plan.judge,
                                 scoring=plan.scoring, cost_of=cost_of)  # fmt: skip
    except ValueError as exc:  # $TAXPRABEN_READINGS
        raise JobError(str(exc), code=2) from exc
    feed = stream_requests(stream, plan.registry, plan.config, job.generation.runs, plan.part, fed=beside.fed())
    feed = warn_long_prompts(feed, lambda text: warn(console, text), getattr(plan.backend, "context_tokens", None))
    budget = run_budget(job.budget, cost_of, job.batch)
    if plan.judge is not None:
        plan.judge.share(budget)  # the judge's requests spend the same budget, at the judge's prices
    runner = Runner(plan.backend, plan.config, runner_settings(job.endpoint), cache=store,
                    console=progress or deferred_console(stderr=True), budget=budget,
                    on_answer=beside.on_answer(), on_read=beside.on_read())  # fmt: skip
    return Generation(stream, store, cost_of, pricing, beside, beside.spec_check.feed(feed), runner)


def generate_stage(plan: RunPlan, gen: Generation, console: Console, progress: Console | None) -> Generated:
    """Every request driven (with --serve, while the server runs; with --batch, through the
    batch API first); JobError to stop, a budget's stop with the predictions written."""
    job, runner, along = plan.job, gen.runner, gen.alongside.judge
    resume_collection()  # loaded: from here on objects come and go (taxpraben.terminal.collector)
    with serve_context(job.endpoint, plan.backend, plan.out_dir, console) as server:  # stopped before scoring
        requests = batch_stage(job.batch, job.endpoint, plan.backend, plan.config, gen.requests, gen.store,
                               plan.out_dir, console, progress or deferred_console(stderr=True), data=job.data.data,
                               paid=runner.paid_here)  # fmt: skip
        try:
            predictions = generate(runner, requests, gen.store, along.alongside if along is not None else None,
                                   plan.out_dir, server)  # fmt: skip
            gen.alongside.generation_over()
            checked_specs(gen.alongside.spec_check, runner)
        except BudgetReached as exc:
            stop = budget_stop(exc, plan.out_dir, shard_records(gen.stream.result(), plan.part), gen.store)
            write_run_config(job, plan.out_dir)  # the command to go on with
            raise stop from None
    loaded = shard_records(gen.stream.result(), plan.part)
    for warning in loaded.warnings:
        warn(console, str(warning))
    return Generated(in_data_order(predictions, loaded), loaded, runner.stats,
                     server.models if server is not None else None)  # fmt: skip


def write_generation(plan: RunPlan, gen: Generation, done: Generated, console: Console) -> JSONObject:
    """predictions.jsonl, config.yaml (and shard.json) written; results.json's ``meta``."""
    job = plan.job
    path = write_predictions_file(plan.out_dir, done.predictions)
    write_run_config(job, plan.out_dir)  # only once there is something to replay (nothing left behind before)
    say(console, summary_line(done.predictions, plan.part, done.stats, path))
    ahead = gen.alongside.ahead
    if ahead is not None and ahead.fallback is not None:
        warn(console, f"The answers were read on the scoring thread ({ahead.fallback}); the readings are the same.")
    meta = run_meta(job, plan.backend, plan.config, done.stats, plan.started)
    manifest = job_manifest(loaded=done.loaded, registry=plan.registry, scoring=job.scoring,
                            started_at=meta["started_at"], generation=meta["generation"],
                            model_args=meta.get("model_args"))  # fmt: skip
    if done.served_models is not None:
        manifest["served_models"] = list(done.served_models)
    meta["manifest"] = manifest
    if gen.pricing is not None:
        meta["pricing"] = gen.pricing
    if not plan.part.whole:
        write_shard_manifest(plan.out_dir, plan.part, meta, done.loaded)
    return meta


def score_stage(plan: RunPlan, gen: Generation, done: Generated, meta: JSONObject, console: Console) -> ScoredResults | None:
    """Scored and reported (None with --no-score: what to do instead is said)."""
    job, part = plan.job, plan.part
    if not plan.scoring:
        say(console, "Not scored (--no-score): score with `taxpraben "
            + ("merge` once every shard is done." if not part.whole else "score`."))  # fmt: skip
        return None
    if not part.whole:
        warn(console, f"Shard {part}: the scores below are of this shard's {done.loaded.n_records} records only "
                      "(partial); `taxpraben merge` scores the whole.")  # fmt: skip
    ready_scorers(job.scoring, plan.settings, console)  # only now: the probe must not delay the first request
    ahead, scores = gen.alongside.ahead, gen.alongside.scores
    scored = score_and_report(done.loaded, done.predictions, plan.registry, plan.out_dir, plan.settings, meta, console,
                              ahead.result() if ahead is not None else None, gen.cost_of, as_second_reader(plan.judge),
                              scores.result() if scores is not None else None)  # fmt: skip
    log_to_trackers(job.trackers, "run", job_groups(job), plan.out_dir, scored.results, console)  # before the gates
    return scored


def run_job(job: RunJob, console: Console, progress: Console | None = None) -> Path:
    """Generate, write predictions.jsonl, score (unless --no-score); JobError to stop. The
    output directory written."""
    plan = plan_run(job, console, progress)
    with ExitStack() as held:
        held.enter_context(output_directory(plan.out_dir))
        gen = set_up_generation(plan, held, console, progress)
        done = generate_stage(plan, gen, console, progress)
        meta = write_generation(plan, gen, done, console)
        scored = score_stage(plan, gen, done, meta, console)
        failure = failures_error(done.predictions, done.stats)
        if failure is not None and not job.output.allow_failures:
            raise failure
        if failure is not None:
            say(console, failure.lines[0], "red")
        if scored is not None:
            apply_gates(job.gates, scored, console)
    return plan.out_dir
