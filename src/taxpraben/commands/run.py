"""`taxpraben run`: generate with a model (every record x every run), then score.

Flow: load the registry and the data, build one request per (record, run) with the record's
``query`` verbatim as the user message, drive them through the backend (cache first, then
the endpoint), write ``OUT/predictions.jsonl``, score into ``OUT``. Items that still fail
after every retry are kept with their error (scored 0) and make the command exit 1 unless
``--allow-failures``. Ctrl-C stops at once; every completion received is already in the
cache, and rerunning the same command sends only what is missing.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import shlex
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from taxpraben.cache import CacheError, CompletionCache, default_cache_path
from taxpraben.commands.common import cli_console, use_local_models_if_hub_unreachable
from taxpraben.commands.inspect_data import registry_or_exit
from taxpraben.commands.options import (
    DATA_PANEL,
    ENDPOINT_PANEL,
    GENERATION_PANEL,
    MODEL_PANEL,
    OUTPUT_PANEL,
    SCORING_PANEL,
    DataOpt,
    LimitOpt,
    OutOpt,
    ScoringOptions,
    TaskDirOpt,
    TasksOpt,
    scoring_settings_or_exit,
    with_scoring_options,
)
from taxpraben.commands.score import score_and_report, split_tasks
from taxpraben.data.loader import DataError, DataStream, LoadedData
from taxpraben.locks import DirectoryLock, InUseError, sole_cache_user
from taxpraben.models.base import (
    DEFAULT_MAX_TOKENS,
    Backend,
    GenerationConfig,
    ModelSpecError,
    Request,
    build_request,
    parse_gen_kwargs,
)
from taxpraben.models.factory import create_backend
from taxpraben.models.streaming import IDLE_TIMEOUT_S
from taxpraben.predictions import Prediction, write_predictions
from taxpraben.runner import RunAborted, Runner, RunnerSettings
from taxpraben.shards import SHARD_MANIFEST, Shard, parse_shard, write_manifest
from taxpraben.tasks import Registry

#: The unsharded run: every record.
WHOLE = Shard()


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
) -> Iterator[Request]:
    """One request per (record, run), run-major (so a sampled local batch shares a seed),
    while the data is read: run 0 of each record as soon as it is read and checked, the
    other runs once every record is. Raises the data's DataError once every record has
    been read (the runner then stops). With a ``shard``, only the records it owns (by
    their position in their task, see taxpraben.shards) and every run of each."""
    positions: dict[str, int] = {}
    for record in stream:
        position = positions.get(record.task, 0)
        positions[record.task] = position + 1
        if shard.owns(record.task, position):
            yield build_request(record, 0, config, registry[record.task])
    loaded = stream.result()
    for run in range(1, runs):
        for task, records in shard_records(loaded, shard).records.items():
            for record in records:
                yield build_request(record, run, config, registry[task])


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


def in_data_order(predictions: list[Prediction], loaded: LoadedData) -> list[Prediction]:
    """Sort by task and record order of the data, then run."""
    position = {
        (task, record.id): i
        for i, (task, record) in enumerate(
            (task, record) for task, records in loaded.records.items() for record in records
        )
    }
    return sorted(predictions, key=lambda p: (position.get((p.task, p.id), -1), p.run))


def resume_hint(cache: CompletionCache | None, runner: Runner) -> str:
    s = runner.stats
    done = s.cached + s.done
    command = "taxpraben " + shlex.join(sys.argv[1:])
    if cache is None:
        return (
            f"Interrupted after {done} of {s.unique} generations; nothing was kept (--no-cache). "
            f"Run again without --no-cache to make a run resumable."
        )
    return (
        f"Interrupted: {done} of {s.unique} generations are stored in {cache.path}.\n"
        f"To resume, run the same command again; only the missing {s.unique - done} are sent:\n"
        f"  {command}"
    )


@with_scoring_options
def run(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="Model spec: openai:MODEL, hf:PATH_OR_ID, replay:PREDICTIONS.jsonl, "
            "baseline:oracle|first-choice|lead|echo|random.",
            rich_help_panel=MODEL_PANEL,
        ),
    ],
    data: DataOpt,
    tasks: TasksOpt = None,
    limit: LimitOpt = None,
    task_dir: TaskDirOpt = None,
    shard: Annotated[
        str,
        typer.Option(
            "--shard",
            envvar="TAXPRABEN_SHARD",
            help="Run only shard I of N (0-based, e.g. 2/3): a deterministic, balanced share of "
            "the records, every run of each; merge the shards with `taxpraben merge`.",
            rich_help_panel=DATA_PANEL,
        ),
    ] = "0/1",
    runs: Annotated[
        int,
        typer.Option(
            "--runs",
            min=1,
            help="Independent runs; run r is sent seed SEED+r.",
            rich_help_panel=GENERATION_PANEL,
        ),
    ] = 5,
    temperature: Annotated[
        float,
        typer.Option(
            "--temperature",
            min=0.0,
            help="Sampling temperature (TaxBen: 0).",
            rich_help_panel=GENERATION_PANEL,
        ),
    ] = 0.0,
    top_p: Annotated[
        float | None,
        typer.Option("--top-p", min=0.0, max=1.0, rich_help_panel=GENERATION_PANEL),
    ] = None,
    max_tokens: Annotated[
        int,
        typer.Option(
            "--max-tokens",
            min=1,
            help="Most tokens generated per answer.",
            rich_help_panel=GENERATION_PANEL,
        ),
    ] = DEFAULT_MAX_TOKENS,
    system_prompt: Annotated[
        str | None,
        typer.Option(
            "--system-prompt",
            help="System message (default: none, as TaxBen).",
            rich_help_panel=GENERATION_PANEL,
        ),
    ] = None,
    gen_kwargs: Annotated[
        str | None,
        typer.Option(
            "--gen-kwargs",
            help="Extra request fields as JSON, e.g. '{\"enable_thinking\": false}' "
            "(hf: extra generate() arguments).",
            rich_help_panel=GENERATION_PANEL,
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option("--seed", help="Seed base: run r uses SEED+r.", rich_help_panel=GENERATION_PANEL),
    ] = 0,
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--base-url",
            envvar="OPENAI_BASE_URL",
            help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
            "(default https://api.openai.com/v1). Several replicas of one model: repeat the "
            "option or separate their URLs with commas; each request goes to the one with the least expected "
            "wait, and one that stops answering is taken out and probed again later.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            help="Name of the environment variable holding the API key "
            "(default OPENAI_API_KEY; the key itself is never a flag).",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            min=1,
            help="Requests in flight (hf: items per batch).",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = 16,
    rpm: Annotated[
        float | None,
        typer.Option("--rpm", min=0.001, help="Limit requests per minute.", rich_help_panel=ENDPOINT_PANEL),
    ] = None,
    tpm: Annotated[
        float | None,
        typer.Option(
            "--tpm",
            min=1,
            help="Limit tokens per minute (estimate: prompt chars + max tokens).",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.001,
            help="Seconds per attempt. Streamed (the default): the longest wait for a first "
            "token; after a few answers the wait adapts to 5x the endpoint's usual first-token "
            "time (at least 5 s). With --no-stream: the whole answer's limit.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = 120.0,
    idle_timeout: Annotated[
        float,
        typer.Option(
            "--idle-timeout",
            min=0.001,
            help="Streamed: give an attempt up when no chunk arrives for this many seconds.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = IDLE_TIMEOUT_S,
    no_stream: Annotated[
        bool,
        typer.Option(
            "--no-stream",
            help="Send plain (unstreamed) requests, for servers without streaming; hangs are "
            "then caught only by --timeout.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = False,
    deadline: Annotated[
        float,
        typer.Option(
            "--deadline",
            min=0.001,
            help="Seconds from an item's first attempt to its last retry.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = 900.0,
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries",
            min=0,
            help="Retries on 429, 5xx, timeouts and dropped connections (backoff with jitter).",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = 6,
    retry_backoff: Annotated[
        float,
        typer.Option(
            "--retry-backoff",
            min=0.001,
            help="Base of the exponential backoff in seconds (retry k waits BASE*2^(k-2) to "
            "BASE*2^(k-1), "
            "at most 60 s); a Retry-After from the server takes precedence.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = 0.5,
    no_preflight: Annotated[
        bool,
        typer.Option(
            "--no-preflight",
            help="Skip the GET /models check of the endpoint and key before the first request.",
            rich_help_panel=ENDPOINT_PANEL,
        ),
    ] = False,
    *,
    scoring: ScoringOptions,
    no_score: Annotated[
        bool,
        typer.Option(
            "--no-score",
            help="Write predictions.jsonl only (for a shard: score later with `taxpraben merge`).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = False,
    out: OutOpt = None,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            envvar="TAXPRABEN_CACHE",
            help="Completion cache (default ~/.cache/taxpraben/completions.sqlite).",
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = None,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Neither read nor write the completion cache.",
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = False,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures",
            help="Exit 0 even if some items failed after all retries.",
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = False,
) -> None:
    """Generate with a model over the data (RUNS runs), then score; resumable through the cache."""
    console = cli_console()
    started = datetime.now(timezone.utc)
    try:
        part = parse_shard(shard)
    except ValueError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from exc
    registry = registry_or_exit(task_dir, console)
    # Checked before anything is sent (a light module: the pipeline is not imported here).
    settings = scoring_settings_or_exit(scoring, console, seed=seed, runs=runs)
    try:
        config = GenerationConfig(
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed_base=seed,
            system_prompt=system_prompt,
            gen_kwargs=parse_gen_kwargs(gen_kwargs),
        )
        backend: Backend = create_backend(
            model,
            base_url=",".join(base_url) if base_url else None,
            api_key_env=api_key_env,
            concurrency=concurrency,
            timeout=timeout,
            device=scoring.device,
            stream=not no_stream,
            idle_timeout=idle_timeout,
        )
    except ModelSpecError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from exc
    out_dir = out or Path("runs") / f"{model_slug(model)}-{started.strftime('%Y%m%d-%H%M%S')}"
    with ExitStack() as held:
        warm = held.enter_context(ThreadPoolExecutor(1, thread_name_prefix="taxpraben-scoring"))
        try:
            held.enter_context(DirectoryLock(out_dir))
        except (InUseError, OSError) as exc:
            console.print(str(exc), style="red", markup=False, highlight=False)
            raise typer.Exit(2) from exc
        try:  # the records are read while the first requests go out (stream_requests)
            stream = DataStream(data, registry, split_tasks(tasks), limit)
        except (DataError, KeyError) as exc:
            console.print(str(exc).strip("'\""), style="red", markup=False, highlight=False)
            raise typer.Exit(1) from exc
        requests = stream_requests(stream, registry, config, runs, part)

        store: CompletionCache | None = None
        if not no_cache and backend.cacheable:
            try:
                cache_path = cache or default_cache_path()
                store = CompletionCache(cache_path)
                if not held.enter_context(sole_cache_user(cache_path)):
                    console.print(
                        f"Another taxpraben run is using the cache {cache_path}: what it has stored "
                        "is reused, but a request it has in flight and this run also needs may be "
                        "sent twice.",
                        style="yellow", markup=False, highlight=False,
                    )  # fmt: skip
            except CacheError as exc:
                console.print(str(exc), style="red", markup=False, highlight=False)
                raise typer.Exit(2) from exc
        runner = Runner(
            backend,
            config,
            RunnerSettings(
                concurrency=concurrency,
                rpm=rpm,
                tpm=tpm,
                max_retries=max_retries,
                deadline=deadline,
                backoff_base=retry_backoff,
                preflight=not no_preflight,
            ),
            cache=store,
            console=cli_console(stderr=True),
        )
        if not no_score:  # the pipeline's imports (numpy, the parsers) load while requests go out
            warm.submit(importlib.import_module, "taxpraben.scoring.pipeline")
        try:
            predictions = asyncio.run(runner.run(requests))
        except DataError as exc:
            console.print(str(exc), style="red", markup=False, highlight=False)
            if runner.stats.done:
                console.print(f"The {runner.stats.done} completions received before the data was "
                              "found faulty are in the cache.", markup=False, highlight=False)  # fmt: skip
            raise typer.Exit(1) from exc
        except KeyboardInterrupt:
            hint = resume_hint(store, runner)
            console.print(hint, style="yellow", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None
        except RunAborted as exc:  # a refused key, an unknown model, nothing listening
            kept = f"; the {runner.stats.done} completions received are in the cache" if runner.stats.done else ""
            console.print(f"Stopped: {exc}", style="red", markup=False, highlight=False)
            console.print(f"Nothing was written{kept}.", markup=False, highlight=False)
            raise typer.Exit(2) from exc
        except (ModelSpecError, CacheError) as exc:  # a model that cannot load, a full disk
            console.print(str(exc), style="red", markup=False, highlight=False)
            raise typer.Exit(2) from exc
        finally:
            if store is not None:
                store.close()

        loaded = shard_records(stream.result(), part)
        for warning in loaded.warnings:
            console.print(str(warning), style="yellow", markup=False, highlight=False)
        stats = runner.stats
        predictions = in_data_order(predictions, loaded)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            write_predictions(out_dir / "predictions.jsonl", predictions)
        except OSError as exc:  # a full disk: every completion is in the cache; rerun later
            console.print(f"cannot write {out_dir / 'predictions.jsonl'}: {exc}", style="red", markup=False, highlight=False)
            raise typer.Exit(2) from exc
        shared = " (runs share one deterministic generation)" if stats.shared_generation else ""
        console.print(
            f"{len(predictions)} predictions{'' if part.whole else f' (shard {part})'}: "
            f"{stats.cached} generations from the cache, "
            f"{stats.done} generated, {stats.failed} failed{shared}; retries {stats.retries}; "
            f"tokens {stats.tokens:,} -> {out_dir / 'predictions.jsonl'}",
            markup=False,
            highlight=False,
        )
        meta = {
            "model": backend.spec,
            "endpoint": backend.endpoint,
            "generation": config.to_meta(),
            "runs": runs,
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
        if not part.whole:
            meta["shard"] = {**part.to_meta(), "records": loaded.n_records, "partial": True}
            try:
                write_manifest(out_dir, part, {
                    "model": backend.spec, "endpoint": backend.endpoint,
                    "generation": config.to_meta(), "runs": runs,
                    "data_hash": loaded.data_hash, "tasks": list(loaded.records),
                    "limit": loaded.limit, "records": loaded.n_records,
                })  # fmt: skip
            except OSError as exc:
                console.print(f"cannot write {out_dir / SHARD_MANIFEST}: {exc}", style="red", markup=False, highlight=False)
                raise typer.Exit(2) from exc
        if no_score:
            console.print(
                "Not scored (--no-score): score with `taxpraben "
                + ("merge` once every shard is done." if not part.whole else "score`."),
                markup=False, highlight=False,
            )  # fmt: skip
        else:
            if not part.whole:
                console.print(
                    f"Shard {part}: the scores below are of this shard's {loaded.n_records} "
                    "records only (partial); `taxpraben merge` scores the whole.",
                    style="yellow", markup=False, highlight=False,
                )  # fmt: skip
            if settings.semantic:  # only now: the probe must not delay the first request
                use_local_models_if_hub_unreachable(scoring.scorer_models, console)
            score_and_report(loaded, predictions, registry, out_dir, settings, meta, console)

        failed_items = sum(1 for p in predictions if p.error)
        if failed_items:
            advice = (
                "Rerun the same command to retry only those."
                if not stats.rejected
                else f"{stats.rejected} generation(s) were rejected by the server as invalid "
                "requests: a rerun will not help them; fix the request (see the error)."
            )
            console.print(
                f"{failed_items} of {len(predictions)} predictions failed after all retries and "
                f"score 0 as errors (first error: {stats.first_error}). {advice}",
                style="red",
                markup=False,
                highlight=False,
            )
            if not allow_failures:
                raise typer.Exit(1)
