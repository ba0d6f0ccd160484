"""The ``estimate`` job: what a ``run`` with the same options would send and cost, sending
nothing.

It reads the data and builds every request exactly as ``run`` does (``jobs.generate``:
``stream_requests``, ``generation_config``, ``backend_of``; creating a backend sends
nothing), groups them into the distinct generations exactly as the runner does
(``runner.generation_key``, with ``backend.shares_runs``), and looks each up in the completion
cache (read only; no cache file is created when there is none). Per task and in total:

- requests: predictions the run makes (records x runs), its distinct generations, how many
  the cache answers and how many are still to send;
- prompt tokens of the generations to send, by the counter of ``tokens.token_counter``
  (the approximation, an ``hf:`` model's own tokenizer, or ``--tokenizer``);
- output tokens as a range: from the mean ``completion_tokens`` of the task's cached
  completions times the generations to send (0 when none is cached) up to ``--max-tokens``
  times them;
- with ``--pricing``, the cost of both ends in the file's currency (prompt tokens at the
  ``input`` price: a provider's prompt cache is not counted on).

The figures are computed by :func:`tally` (pure), printed as a table and, with ``--json``,
written as JSON (:func:`estimate_json`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from taxpraben.atomic import write_text_atomically
from taxpraben.costs.pricing import ModelPrice, Pricing, PricingError, load_pricing, runs_locally
from taxpraben.costs.tokens import TokenCounter, TokenizerError, token_counter
from taxpraben.data.loader import DataError, DataStream
from taxpraben.jobs.common import JobError, benchmark_selection, say, task_registry, warn
from taxpraben.jobs.generate import RunJob, backend_of, generation_config, stream_requests
from taxpraben.models.base import Backend, Completion, Request
from taxpraben.options import (
    DataOptions,
    EndpointOptions,
    EstimateOptions,
    GenerationOptions,
    ModelOptions,
    PricingOptions,
    RunOutputOptions,
    ScoringOptions,
)
from taxpraben.run.cache import CacheError, CompletionCache, default_cache_path
from taxpraben.run.runner import generation_key
from taxpraben.run.shards import parse_shard

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue


@dataclass(frozen=True)
class EstimateJob:
    """Everything ``estimate`` was asked: ``run``'s groups that shape the requests, the
    prices and how to count."""

    model: ModelOptions
    data: DataOptions
    generation: GenerationOptions
    endpoint: EndpointOptions
    output: RunOutputOptions
    pricing: PricingOptions
    estimate: EstimateOptions

    def run_job(self) -> RunJob:
        """The ``run`` these options describe (scoring left at its defaults: it shapes no request)."""
        return RunJob(model=self.model, data=self.data, generation=self.generation, endpoint=self.endpoint,
                      scoring=ScoringOptions(), output=self.output)  # fmt: skip


@dataclass(frozen=True)
class Figures:
    """The estimate of one task, or of all of them."""

    #: Predictions the run makes (records x runs).
    requests: int
    #: Distinct generations those need; answered by the cache; still to send.
    generations: int
    cached: int
    to_send: int
    #: Prompt tokens of the generations to send.
    prompt_tokens: int
    #: Mean completion tokens of the cached completions that report usage (None: none do).
    output_mean: float | None
    #: Output tokens of the generations to send: measured mean x to_send .. max_tokens x to_send.
    output_low: int
    output_high: int
    #: The cost of both ends (None: no price known).
    cost_low: float | None
    cost_high: float | None


def output_mean(completions: Sequence[Completion]) -> float | None:
    """Mean ``completion_tokens`` of the completions whose usage reports it (None: none does)."""
    counts = [c.usage["completion_tokens"] for c in completions if c.usage and "completion_tokens" in c.usage]
    return sum(counts) / len(counts) if counts else None


def figures(
    requests: int,
    generations: int,
    cached: Sequence[Completion],
    prompt_tokens: int,
    to_send: int,
    max_tokens: int,
    price: ModelPrice | None,
) -> Figures:
    """One row: the output range from the cached completions' mean usage, and its cost."""
    mean = output_mean(cached)
    high = max_tokens * to_send
    low = min(high, round(mean * to_send)) if mean is not None else 0
    cost_low = price.cost(prompt_tokens, low) if price is not None else None
    cost_high = price.cost(prompt_tokens, high) if price is not None else None
    return Figures(requests, generations, len(cached), to_send, prompt_tokens, mean, low, high, cost_low, cost_high)


def tally(
    requests: Sequence[Request],
    key_of: Callable[[Request], str],
    cached: Mapping[str, Completion],
    count_prompt: Callable[[Request], int],
    max_tokens: int,
    price: ModelPrice | None,
) -> tuple[dict[str, Figures], Figures]:
    """The figures per task (in the order the tasks come) and in total.

    ``key_of`` gives a request's generation key (requests of one key are one generation, the
    first of them standing for it); ``cached`` the completions found under those keys;
    ``count_prompt`` the prompt tokens of a request; ``price`` None when no price is known
    (a model that costs nothing is priced at 0)."""
    per_task: Counter[str] = Counter()
    firsts: dict[str, Request] = {}
    for request in requests:
        per_task[request.record.task] += 1
        firsts.setdefault(key_of(request), request)
    by_task: dict[str, list[tuple[str, Request]]] = {task: [] for task in per_task}
    for key, request in firsts.items():
        by_task[request.record.task].append((key, request))
    rows = {}
    for task, generations in by_task.items():
        hits = [cached[k] for k, _ in generations if k in cached]
        sending = [r for k, r in generations if k not in cached]
        prompt = sum(count_prompt(r) for r in sending)
        rows[task] = figures(per_task[task], len(generations), hits, prompt, len(sending), max_tokens, price)
    every = [cached[k] for k in firsts if k in cached]
    total = Figures(
        requests=len(requests),
        generations=len(firsts),
        cached=len(every),
        to_send=sum(f.to_send for f in rows.values()),
        prompt_tokens=sum(f.prompt_tokens for f in rows.values()),
        output_mean=output_mean(every),
        output_low=sum(f.output_low for f in rows.values()),
        output_high=sum(f.output_high for f in rows.values()),
        cost_low=None if price is None else sum(f.cost_low or 0.0 for f in rows.values()),
        cost_high=None if price is None else sum(f.cost_high or 0.0 for f in rows.values()),
    )
    return rows, total


def prompt_counter(counter: TokenCounter) -> Callable[[Request], int]:
    """``counter.count_prompt`` of a request's messages, each distinct prompt counted once
    (the runs of a record send the same messages)."""
    memo: dict[tuple[tuple[tuple[str, str], ...], ...], int] = {}

    def count(request: Request) -> int:
        key = tuple(tuple(sorted(m.items())) for m in request.messages)
        if key not in memo:
            memo[key] = counter.count_prompt(request.messages)
        return memo[key]

    return count


@dataclass(frozen=True)
class CacheLookup:
    """The cached completions among the generations' keys, and where they came from."""

    found: dict[str, Completion]
    #: The cache file read (None: none was).
    path: str | None
    #: What a user reads of it.
    note: str


def read_cached(job: EstimateJob, backend: Backend, keys: Sequence[str]) -> CacheLookup:
    """The cached completions among ``keys``, as the run would find them. Nothing is written
    and no cache file is created; JobError (exit 2) for a file that is not a cache."""
    if job.output.no_cache:
        return CacheLookup({}, None, "not read (--no-cache): every generation is sent")
    if not backend.cacheable:
        return CacheLookup({}, None, f"none ({backend.kind}: answers are free to recompute)")
    path = job.output.cache or default_cache_path()
    if not path.is_file():
        return CacheLookup({}, None, f"{path} does not exist yet: every generation is sent")
    try:
        with CompletionCache(path) as store:
            found = store.get_many(keys)
    except CacheError as exc:
        raise JobError(str(exc), code=2) from exc
    return CacheLookup(found, str(path), str(path))


def pricing_of(job: EstimateJob) -> Pricing | None:
    """The ``--pricing`` file, if any; JobError (exit 2) when it cannot be used."""
    if job.pricing.pricing is None:
        return None
    try:
        return load_pricing(job.pricing.pricing)
    except PricingError as exc:
        raise JobError(str(exc), code=2) from exc


def price_for(pricing: Pricing | None, spec: str, console: Console) -> ModelPrice | None:
    """The model's prices: 0 for a model that costs nothing, None (and a warning) for one the
    file does not price, None without a file."""
    if runs_locally(spec):
        return ModelPrice(input=0.0, output=0.0)
    if pricing is None:
        return None
    price = pricing.price_of(spec)
    if price is None:
        names = ", ".join(pricing.models) or "none"
        warn(console, f"{pricing.source}: no price for {spec} (its models: {names}); add an entry under "
                      "'models:' to see the cost.")  # fmt: skip
    return price


def estimate_json(
    job: EstimateJob, backend: Backend, counter: TokenCounter, pricing: Pricing | None, shared: bool,
    cache: CacheLookup, rows: Mapping[str, Figures], total: Figures,
) -> JSONObject:  # fmt: skip
    """The figures as ``--json`` writes them."""
    return {
        "model": backend.spec,
        "endpoint": backend.endpoint,
        "runs": job.generation.runs,
        "max_tokens": job.generation.max_tokens,
        "shard": job.output.shard,
        "shared_generation": shared,
        "counter": {"name": counter.name, "exact": counter.exact},
        "cache": {"path": cache.path, "note": cache.note},
        "pricing": pricing.to_meta(backend.spec) if pricing is not None else None,
        "currency": pricing.currency if pricing is not None else None,
        "tasks": {task: asdict(f) for task, f in rows.items()},
        "total": asdict(total),
        "nothing_left": total.generations > 0 and total.to_send == 0,
    }


def _money(value: float) -> str:
    """A cost: 4 significant digits below 1 (0.003125), cents above (1,234.57)."""
    return f"{value:.4g}" if value < 1 else f"{value:,.2f}"


def _range(low: float | None, high: float | None, money: bool = False, measured: bool = True) -> str:
    """``low to high``, or ``up to high`` when nothing measured the low end (no cached answer
    of the task to take a mean length from: 0 would read as a prediction)."""
    if low is None or high is None:
        return "-"
    shown = _money if money else (lambda value: f"{value:,.0f}")
    if not measured or low == high:
        return f"up to {shown(high)}" if not measured and high else shown(high)
    return f"{shown(low)} to {shown(high)}"


def figures_table(rows: Mapping[str, Figures], total: Figures, currency: str | None) -> Table:
    """The per-task table, the total as its last row."""
    table = Table(title="What the run would send", title_justify="left")
    for name in ("Task", "Predictions", "Generations", "Cached", "To send", "Prompt tokens", "Output tokens"):
        table.add_column(name, justify="left" if name == "Task" else "right")
    if currency is not None:
        table.add_column(f"Cost ({currency})", justify="right")
    for i, (task, f) in enumerate([*rows.items(), ("Total", total)]):
        cells = [task, f"{f.requests:,}", f"{f.generations:,}", f"{f.cached:,}", f"{f.to_send:,}",
                 f"{f.prompt_tokens:,}", _range(f.output_low, f.output_high, measured=f.output_mean is not None)]  # fmt: skip
        if currency is not None:
            cells.append(_range(f.cost_low, f.cost_high, money=True))
        table.add_row(*cells, end_section=i == len(rows) - 1, style="bold" if task == "Total" else None)
    return table


def estimate_job(job: EstimateJob, console: Console) -> JSONObject:
    """Print what the run would send and cost (and write ``--json``); sends nothing.
    Returns the figures (the JSON form); JobError to stop."""
    part = parse_shard(job.output.shard)  # checked when parsed
    registry = task_registry(job.data.task_dir)
    config = generation_config(job.generation)
    run_job = job.run_job()
    backend = backend_of(run_job, sends=False)  # an estimate sends nothing: no key needed for it
    try:
        backend_of(run_job)
    except JobError as exc:  # built without a key, refused with one: the key is what run lacks
        warn(console, f"run would stop before sending: {exc}")
    pricing = pricing_of(job)
    try:
        counter = token_counter(job.model.model, job.estimate.tokenizer)
    except TokenizerError as exc:
        raise JobError(str(exc), code=2) from exc
    selection = benchmark_selection(job.data, registry)  # as `run` would: a task without data is refused
    try:
        stream = DataStream(job.data.data, registry, selection.tasks or job.data.task_names, job.data.limit)
        requests = list(stream_requests(stream, registry, config, job.generation.runs, part))
    except (DataError, KeyError) as exc:
        raise JobError(str(exc).strip("'\"")) from exc
    for warning in stream.result().warnings:
        warn(console, str(warning))
    shared = backend.shares_runs(config)
    keys = {id(r): generation_key(backend, config, r, shared) for r in requests}
    cache = read_cached(job, backend, list(dict.fromkeys(keys.values())))
    price = price_for(pricing, backend.spec, console)
    rows, total = tally(requests, lambda r: keys[id(r)], cache.found, prompt_counter(counter),
                        job.generation.max_tokens, price)  # fmt: skip
    figures_json = estimate_json(job, backend, counter, pricing, shared, cache, rows, total)
    report(console, figures_json, rows, total, pricing)
    if job.estimate.json_out is not None:
        try:
            write_text_atomically(job.estimate.json_out, json.dumps(figures_json, ensure_ascii=False, indent=1) + "\n")
        except OSError as exc:
            raise JobError(f"cannot write {job.estimate.json_out}: {exc}", code=2) from exc
        say(console, f"figures -> {job.estimate.json_out}")
    return figures_json


def report(console: Console, facts: Mapping[str, JSONValue], rows: Mapping[str, Figures], total: Figures,
           pricing: Pricing | None) -> None:  # fmt: skip
    """The estimate on the console: what counts, the table, and what is left to send."""
    exact = "exact" if facts["counter"]["exact"] else "not exact"
    say(console, f"{facts['model']}: {facts['runs']} run(s), at most {facts['max_tokens']:,} output tokens per "
                 f"answer; prompt tokens: {facts['counter']['name']}, {exact}; cache: {facts['cache']['note']}")  # fmt: skip
    if facts["shared_generation"]:
        say(console, f"The runs share one deterministic generation: {total.generations:,} generations for "
                     f"{total.requests:,} predictions.")  # fmt: skip
    console.print(figures_table(rows, total, pricing.currency if pricing is not None else None))
    say(console, "Output tokens: up to --max-tokens per generation to send; where the cache has answers of a task, "
                 "from their mean length times the generations to send.")  # fmt: skip
    if total.generations and not total.to_send:
        say(console, f"nothing left to send: all {total.generations:,} generations are in the cache")
    else:
        say(console, f"{total.to_send:,} requests to send ({total.cached:,} of {total.generations:,} "
                     f"generations answered by the cache).")  # fmt: skip
    if pricing is not None and total.cost_high is not None:
        say(console, f"cost: {_range(total.cost_low, total.cost_high, money=True)} {pricing.currency} "
                     f"(prices of {pricing.source})")  # fmt: skip
