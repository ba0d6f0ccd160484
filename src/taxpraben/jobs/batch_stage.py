"""The batch stage of ``run`` (``--batch``, ``--batch-file-only``): the missing requests answered
by a provider's batch API at half price, before the runner sends the rest one by one.

:func:`batch_stage` runs just before the runner. It reads every request, computes each one's
cache key as the runner does (:func:`taxpraben.run.runner.generation_key`: runs that share one
generation make one request) and leaves out those in the cache. Then:

- ``--batch``: an open batch of an earlier, interrupted run whose keys cover some of what is
  missing is polled again (the cache's ``batches`` table); the rest is uploaded as new batches
  (``models.batch``: at most 50,000 requests and 190 MB each). Every answer is put in the cache
  and the batch marked collected; the runner then finds those in the cache and sends only what
  the batch did not answer (failed lines, and the lines an expired or cancelled batch never
  ran). Ctrl-C while polling leaves the batch open: a rerun of the same command resumes
  polling it and creates none.
- ``--batch-file-only``: ``OUT/batch_input.jsonl`` is written (one line per missing
  (task, id, run), so that ``score --batch-output`` finds every item in the answers) and the
  job ends (exit 0) saying how to run it and read it back.

The batch modules (aiohttp, the client) are imported only when a batch is asked for.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.clock import SYSTEM_CLOCK, Clock
from taxpraben.data.loader import DataError
from taxpraben.jobs.common import JobError, say, warn
from taxpraben.models.base import Completion, ModelSpecError
from taxpraben.models.factory import split_spec
from taxpraben.options import BatchOptions, EndpointOptions
from taxpraben.run.cache import CacheError, CompletionCache
from taxpraben.run.runner import generation_key

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.models.base import Backend, BackendError, GenerationConfig, Request
    from taxpraben.models.openai import OpenAIBackend
    from taxpraben.results.json_value import JSONObject
    from taxpraben.run.batch_api import BatchClient, BatchProgress
    from taxpraben.run.cache import BatchRecord

#: The file ``--batch-file-only`` writes into the output directory.
BATCH_INPUT = "batch_input.jsonl"
#: ``batches.status`` of an open batch the endpoint no longer knows.
LOST = "lost"


class BatchFileWritten(JobError):
    """Not a failure: ``--batch-file-only`` wrote its file, and the job ends here (exit 0)."""

    def __init__(self, *lines: str) -> None:
        super().__init__(*lines, code=0, style="green")


@dataclass(frozen=True)
class BatchOutcome:
    """How one batch ended, counted over the requests it was sent."""

    batch_id: str
    status: str
    completed: int
    failed: int
    not_done: int
    errors: tuple[str, ...] = ()

    def line(self) -> str:
        """The summary line the run prints for it."""
        why = f" ({self.status})" if self.not_done else ""
        rest = ": sent through the normal path" if self.failed or self.not_done else ""
        return f"batch {self.batch_id}: {self.completed} completed, {self.failed} failed, {self.not_done} not done{why}{rest}"


def wants_batch(options: BatchOptions) -> bool:
    return options.batch or options.batch_file_only


def refuse_batch_without_openai(options: BatchOptions, spec: str) -> None:
    """JobError (exit 2) when --batch or --batch-file-only comes with a backend other than
    ``openai:`` (the batch format is OpenAI's chat completions); checked before anything
    is loaded or sent."""
    if not wants_batch(options):
        return
    try:
        kind, _ = split_spec(spec)
    except ModelSpecError as exc:
        raise JobError(str(exc), code=2) from exc
    if kind != "openai":
        flag = "--batch" if options.batch else "--batch-file-only"
        raise JobError(
            f"{flag} needs an openai: model (a batch is a file of OpenAI chat completions requests); "
            f"--model {spec} is a {kind}: backend: run it without {flag}",
            code=2,
        )


def representative(request: Request, config: GenerationConfig, shared: bool) -> Request:
    """The request that is sent for ``request``'s generation (run 0 when runs share one)."""
    return replace(request, run=0, seed=config.seed_for(0)) if shared else request


def generations(
    backend: Backend, config: GenerationConfig, requests: Iterable[Request], shared: bool
) -> dict[str, Request]:
    """Cache key -> the request sent for it, one per distinct generation, in request order."""
    found: dict[str, Request] = {}
    for request in requests:
        key = generation_key(backend, config, request, shared)
        if key not in found:
            found[key] = representative(request, config, shared)
    return found


def missing_generations(unique: Mapping[str, Request], store: CompletionCache | None) -> dict[str, Request]:
    """Those of ``unique`` that the cache does not hold (all of them without a cache)."""
    present = store.get_many(unique) if store is not None else {}
    return {key: request for key, request in unique.items() if key not in present}


def file_requests(
    backend: Backend, config: GenerationConfig, requests: Iterable[Request], store: CompletionCache | None
) -> list[Request]:
    """The requests of ``--batch-file-only``: one per (task, id, run) whose generation is not
    in the cache (two items with one generation both get a line: the answers file must name
    every item)."""
    shared = backend.shares_runs(config)
    requests = list(requests)
    missing = missing_generations(generations(backend, config, requests, shared), store)
    chosen: dict[tuple[str, str, int], Request] = {}
    for request in requests:
        if generation_key(backend, config, request, shared) in missing:
            sent = representative(request, config, shared)
            chosen.setdefault(sent.key, sent)
    return list(chosen.values())


def input_lines(backend: OpenAIBackend, config: GenerationConfig, requests: Iterable[Request]) -> list[JSONObject]:
    """The batch input lines of ``requests``: exactly the body a plain request would send."""
    from taxpraben.run.batch_api import custom_id, input_line

    return [input_line(custom_id(r.key), backend.request_body(r, config)) for r in requests]


def _materialise(requests: Iterator[Request]) -> list[Request]:
    try:
        return list(requests)
    except DataError as exc:
        raise JobError(str(exc), code=1) from exc


def _openai_backend(backend: Backend, flag: str) -> OpenAIBackend:
    from taxpraben.models.openai import OpenAIBackend

    if not isinstance(backend, OpenAIBackend):
        raise JobError(f"{flag} needs an openai: model; {backend.spec} is not one", code=2)
    if len(backend.pool) > 1:
        raise JobError(f"{flag} sends its batch to one endpoint: give one --base-url, not {len(backend.pool)}",
                       code=2)  # fmt: skip
    return backend


def batch_stage(
    options: BatchOptions,
    endpoint: EndpointOptions,
    backend: Backend,
    config: GenerationConfig,
    requests: Iterator[Request],
    store: CompletionCache | None,
    out_dir: Path,
    console: Console,
    progress: Console,
    *,
    data: str = "DIR",
    clock: Clock = SYSTEM_CLOCK,
    paid: set[str] | None = None,
) -> Iterator[Request]:
    """The requests for the runner: ``requests`` untouched without a batch option; with
    ``--batch``, all of them (read into a list) once the batch has answered what it could
    into the cache. ``--batch-file-only`` ends the job with :class:`BatchFileWritten`.
    ``paid`` is given the cache keys the batch answered (paid for in this run, not taken
    from an earlier one: the run's ledger counts them as generated here)."""
    if not wants_batch(options):
        return requests
    flag = "--batch-file-only" if options.batch_file_only else "--batch"
    refuse_batch_without_openai(options, backend.spec)
    openai = _openai_backend(backend, flag)
    listed = _materialise(requests)
    if options.batch_file_only:
        write_file_only(openai, config, listed, store, out_dir, data)
    if store is None:
        raise JobError("--batch needs the completion cache (it keeps the batch and its answers): "
                       "run without --no-cache", code=2)  # fmt: skip
    missing = missing_generations(generations(backend, config, listed, backend.shares_runs(config)), store)
    if missing:
        for outcome in run_batches(openai, config, missing, store, options, endpoint, console, progress, clock):
            say(console, outcome.line())
        if paid is not None:
            paid.update(store.get_many(missing))
    return iter(listed)


def write_file_only(
    backend: OpenAIBackend,
    config: GenerationConfig,
    requests: list[Request],
    store: CompletionCache | None,
    out_dir: Path,
    data: str,
) -> None:
    """Write ``OUT/batch_input.jsonl`` and end the job (BatchFileWritten) with how to go on."""
    from taxpraben.run.batch_api import write_batch_input

    chosen = file_requests(backend, config, requests, store)
    path = out_dir / BATCH_INPUT
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        n = write_batch_input(path, input_lines(backend, config, chosen))
    except OSError as exc:
        raise JobError(f"cannot write {path}: {exc}", code=2) from exc
    answers = out_dir / "batch_output.jsonl"
    cached = len({r.key for r in requests}) - n
    raise BatchFileWritten(
        f"Wrote {n} requests to {path} (OpenAI batch format){f'; {cached} answered in the cache are not in it' if cached else ''}.",
        "Run it offline with vLLM: python -m vllm.entrypoints.openai.run_batch "
        f"-i {shlex.quote(str(path))} -o {shlex.quote(str(answers))} --model {shlex.quote(backend.model)}",
        "or upload it in a provider's batch console (OpenAI, DashScope, ...) and download its output and error files.",
        f"Then score the answers: taxpraben score --data {shlex.quote(data)} --batch-output {shlex.quote(str(answers))}",
    )


def run_batches(
    backend: OpenAIBackend,
    config: GenerationConfig,
    missing: dict[str, Request],
    store: CompletionCache,
    options: BatchOptions,
    endpoint: EndpointOptions,
    console: Console,
    progress: Console,
    clock: Clock = SYSTEM_CLOCK,
) -> list[BatchOutcome]:
    """Answer ``missing`` by batch (resumed or new) into the cache; JobError for a batch that
    failed, a refused call, or Ctrl-C (the batch stays open for the rerun)."""
    from taxpraben.run.batch_api import BatchClient, BatchError, BatchFileError, BatchRetry

    polling: list[str] = []
    retry = BatchRetry(max_retries=endpoint.max_retries, backoff_base=endpoint.retry_backoff)
    try:
        client = BatchClient.for_backend(backend, api_key_env=endpoint.api_key_env, clock=clock, retry=retry,
                                         timeout=endpoint.timeout)  # fmt: skip
        outcomes = asyncio.run(collect(client, backend, config, missing, store, options.batch_poll, console,
                                       progress, polling))  # fmt: skip
    except KeyboardInterrupt:
        raise JobError(interrupted(polling, store), code=130, style="yellow") from None
    except BatchError as exc:
        open_ones = f" Batch {', '.join(polling)} stays open in {store.path}: a rerun resumes polling it." if polling else ""
        raise JobError(f"Stopped: {exc.message}.{open_ones}", code=2 if exc.fatal else 1) from exc
    except (BatchFileError, ModelSpecError, CacheError) as exc:
        raise JobError(str(exc), code=2) from exc
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        lines = [f"batch {o.batch_id} failed: {'; '.join(o.errors) or 'the endpoint gave no reason'}" for o in failed]
        raise JobError(*lines, "Its requests were not answered. Fix the cause and rerun (a new batch is sent), "
                       "or run without --batch to send them one by one.")  # fmt: skip
    return outcomes


def interrupted(polling: list[str], store: CompletionCache) -> str:
    """What Ctrl-C during the batch stage left, and how to go on."""
    if not polling:
        return "Interrupted before a batch was created: nothing was sent. Run the same command again to start."
    ids = ", ".join(polling)
    return (
        f"Interrupted while polling batch {ids}: it stays open (kept in the cache {store.path}) and the "
        f"provider goes on answering it. Run the same command again: a rerun resumes polling batch {ids} "
        "and creates no new one (nothing is paid twice)."
    )


async def collect(
    client: BatchClient,
    backend: OpenAIBackend,
    config: GenerationConfig,
    missing: dict[str, Request],
    store: CompletionCache,
    poll_s: float,
    console: Console,
    progress_console: Console | None,
    polling: list[str],
) -> list[BatchOutcome]:
    """Resume the open batches that answer some of ``missing``, send the rest as new ones,
    poll them all to their end and put their answers into the cache. ``polling`` gets each
    batch id as soon as it is kept open in the cache (what Ctrl-C leaves behind)."""
    from taxpraben.run.batch_api import BatchProgress

    async with client:
        records = await resume_open(client, backend, missing, store, console)
        polling.extend(r.batch_id for r in records)
        covered = {key for record in records for key in record.keys}
        left = {k: r for k, r in missing.items() if k not in covered}
        for record in await send_new(client, backend, config, left, store):
            records.append(record)
            polling.append(record.batch_id)
        bar: BatchProgress | None = BatchProgress(progress_console) if progress_console is not None else None
        try:
            states = await client.wait(polling, poll_s=poll_s, on_state=bar.update if bar is not None else None)
        finally:
            if bar is not None:
                bar.stop()
        outcomes = []
        for record in records:
            state = states[record.batch_id]
            answers = await client.answers(state) if state.status != "failed" else {}
            outcomes.append(settle(store, backend, record, answers, missing, state.status, state.errors))
        return outcomes


async def resume_open(
    client: BatchClient, backend: OpenAIBackend, missing: Mapping[str, Request], store: CompletionCache, console: Console
) -> list[BatchRecord]:
    """The open batches of this model and endpoint that answer some of ``missing`` and that
    the endpoint still knows (one it does not is marked lost: its requests are sent anew)."""
    from taxpraben.run.batch_api import BatchNotFound

    wanted = set(missing)
    resumed: list[BatchRecord] = []
    for record in store.open_batches(backend=backend.kind, model=backend.model, endpoint=backend.endpoint):
        if not wanted & set(record.keys):
            continue
        try:
            await client.retrieve(record.batch_id)
        except BatchNotFound as exc:
            store.finish_batch(record.batch_id, LOST)
            warn(console, f"{exc.message}: its requests are sent again")
            continue
        say(console, f"Resuming batch {record.batch_id} ({len(record.keys)} requests), kept open by an earlier run.")
        resumed.append(record)
        wanted -= set(record.keys)
    return resumed


async def send_new(
    client: BatchClient,
    backend: OpenAIBackend,
    config: GenerationConfig,
    requests: Mapping[str, Request],
    store: CompletionCache,
) -> list[BatchRecord]:
    """Upload ``requests`` (cache key -> request) as batches within the provider's limits,
    create each and keep it open in the cache at once."""
    from taxpraben.run.batch_api import custom_id, encode_line, split_input

    if not requests:
        return []
    keys = list(requests)
    lines = [encode_line(line) for line in input_lines(backend, config, requests.values())]
    records: list[BatchRecord] = []
    start = 0
    for part in split_input(lines):
        part_keys = keys[start : start + len(part)]
        start += len(part)
        ids = {custom_id(requests[k].key): k for k in part_keys}
        file_id = await client.upload("".join(part).encode("utf-8"), "taxpraben_batch_input.jsonl")
        metadata = {"created_by": "taxpraben", "description": f"taxpraben run: {len(part)} requests to {backend.spec}"[:512]}
        state = await client.create(file_id, metadata)
        records.append(store.record_batch(state.id, ids, backend=backend.kind, model=backend.model,
                                          endpoint=backend.endpoint, input_file_id=file_id))  # fmt: skip
    return records


def settle(
    store: CompletionCache,
    backend: OpenAIBackend,
    record: BatchRecord,
    answers: Mapping[str, Completion | BackendError],
    requests: Mapping[str, Request],
    status: str,
    errors: tuple[str, ...] = (),
) -> BatchOutcome:
    """Put a finished batch's completions into the cache (those not there already), mark it
    collected, and count its requests: completed, failed, not done."""
    from taxpraben.run.batch_api import BatchLineError

    completed: dict[str, Completion] = {}
    failed = not_done = 0
    for cid, key in record.custom_ids.items():
        outcome = answers.get(cid)
        if isinstance(outcome, Completion):
            completed.setdefault(key, outcome)
        elif outcome is None or (isinstance(outcome, BatchLineError) and outcome.not_done):
            not_done += 1
        else:
            failed += 1
    present = store.get_many(completed)
    fresh = [(k, c, requests.get(k)) for k, c in completed.items() if k not in present]
    store.put_many(fresh, backend=backend.kind, model=backend.model)
    store.finish_batch(record.batch_id, status)
    return BatchOutcome(record.batch_id, status, len(completed), failed, not_done, errors)
