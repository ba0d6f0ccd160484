"""Every option of a job, declared once: name, type, default, help, panel and check.

Why one module of over 600 lines: every option of every command is declared here, once, so
that the command line, configuration files and manifests derive from one place.

An option is a field of one of the option groups below (frozen dataclasses): its type is
the field's annotation, its default the field's default (taken from ``models.defaults`` and
``scoring.settings``, the one place each is spelled), and everything else a user sees is its
:class:`Declared` metadata. From these declarations derive:

- the command line (``commands.options.with_options`` turns a group parameter of a command
  into its typer options, with their ``--help`` panels, bounds and checks: a value out of
  range is refused when parsed, exit 2, naming the option);
- the keys of a configuration file and of a run's manifest (:func:`option_values`,
  :func:`declared_options`: ``group.field`` per option).

This module needs neither typer nor the pipeline: the jobs (``taxpraben.jobs``) take the
groups as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from taxpraben.devices import parse_devices
from taxpraben.metrics.defaults import (
    ENV_BARTSCORE_MODEL,
    ENV_BARTSCORE_WEIGHTS,
    ENV_BERTSCORE_LAYER,
    ENV_BERTSCORE_MODEL,
    PROFILES,
    SCORER_DTYPES,
)
from taxpraben.models.defaults import (
    BASE_URL_ENV,
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_BATCH_POLL_S,
    DEFAULT_CONCURRENCY,
    DEFAULT_DEADLINE_S,
    DEFAULT_JUDGE_CONCURRENCY,
    DEFAULT_JUDGE_TIMEOUT_S,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RUNS,
    DEFAULT_SERVE_TIMEOUT_S,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    IDLE_TIMEOUT_S,
)
from taxpraben.scoring.settings import ScoringSettings

# The help panels, in the order a reader of `run --help` needs them.
MODEL_PANEL = "Model"
DATA_PANEL = "Data"
GENERATION_PANEL = "Generation"
ENDPOINT_PANEL = "Endpoint and retries"
SCORING_PANEL = "Scoring"
COST_PANEL = "Cost and budget"
OUTPUT_PANEL = "Output"

#: Options whose value is run as a shell command: a configuration file gives them only with
#: ``--trust-config`` (``commands.options``).
EXECUTED_KEYS = ("serve",)


@dataclass(frozen=True)
class Declared:
    """What a user sees of one option besides its type and default."""

    flag: str
    help: str
    panel: str
    short: str | None = None
    envvar: str | None = None
    #: Inclusive bounds of a number.
    min: float | None = None
    max: float | None = None
    #: Raises ValueError (its message says why) for a value that cannot be used.
    check: Callable[[Any], object] | None = None
    #: A positional argument rather than an option (``merge SOURCES...``).
    argument: bool = False
    #: The flag that sets a true/false/unset option false (``--no-chat-template``).
    negative: str | None = None


def declare(default: Any = dataclasses.MISSING, **declared: Any) -> Any:
    """A dataclass field whose metadata is the option's :class:`Declared`; no default: required."""
    return field(default=default, metadata={"option": Declared(**declared)})


def declared_options(group: type) -> Iterator[tuple[dataclasses.Field[Any], Declared, Any]]:
    """(field, declaration, resolved type) of every option of an option group, in order."""
    hints = get_type_hints(group)
    for f in dataclasses.fields(group):
        yield f, f.metadata["option"], hints[f.name]


def is_option_group(annotation: object) -> bool:
    """True for a class whose every field is a declared option."""
    if not (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)):
        return False
    return all("option" in f.metadata for f in dataclasses.fields(annotation))


def option_values(group: Any) -> dict[str, Any]:
    """The values of an option group by field name, paths as text (a manifest's form)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(group):
        value = getattr(group, f.name)
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, (list, tuple)):
            value = [str(v) if isinstance(v, Path) else v for v in value]
        out[f.name] = value
    return out


def check_options(group: Any) -> None:
    """Run every declared check and bound of ``group``; ValueError naming the option.

    The command line checks as it parses; this is for groups built in Python (a test, a
    configuration file)."""
    for f, declared, _ in declared_options(type(group)):
        value = getattr(group, f.name)
        if value is None or isinstance(value, bool):
            continue
        try:
            check_value(declared, value)
        except ValueError as exc:
            raise ValueError(f"{declared.flag}: {exc}") from exc


def check_value(declared: Declared, value: Any) -> None:
    """ValueError when ``value`` is out of the declared bounds or fails the declared check."""
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if declared.min is not None and isinstance(v, (int, float)) and v < declared.min:
            raise ValueError(f"{v} is below the minimum {declared.min:g}")
        if declared.max is not None and isinstance(v, (int, float)) and v > declared.max:
            raise ValueError(f"{v} is above the maximum {declared.max:g}")
        if declared.check is not None:
            declared.check(v)


def _one_of(choices: tuple[str, ...], what: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value not in choices:
            raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")

    return check


def _shard(text: str) -> None:
    from taxpraben.shards import parse_shard

    parse_shard(text)


def _gen_kwargs(text: str) -> None:
    from taxpraben.models.base import parse_gen_kwargs

    parse_gen_kwargs(text)


def _model_args(text: str) -> None:
    from taxpraben.models.model_args import parse_model_args

    parse_model_args(text)


def _serve(text: str) -> None:
    from taxpraben.serve import served_port

    served_port(text)


def _devices(text: str) -> None:
    parse_devices(text)


def _limit(value: float) -> None:
    """``--limit``: a count (an integer >= 1) or a fraction in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number; give a count such as 50 or a fraction such as 0.1")
    if value <= 0:
        raise ValueError(f"{value:g} is not a count (an integer >= 1) nor a fraction in (0, 1)")
    if value >= 1 and value != int(value):
        raise ValueError(f"{value:g} is neither a count (an integer >= 1) nor a fraction in (0, 1)")


_DATA_HELP = (
    "Data directory (one file per dataset: NAME.jsonl/.json/.parquet or NAME/test.*), "
    "or 'sample' for the bundled sample."
)


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """Which model answers (``run``)."""

    model: str = declare(
        flag="--model",
        short="-m",
        help="Model spec: openai:MODEL, hf:PATH_OR_ID, replay:PREDICTIONS.jsonl, "
        "baseline:oracle|first-choice|lead|echo|random.",
        panel=MODEL_PANEL,
    )
    model_args: str | None = declare(
        None,
        flag="--model-args",
        check=_model_args,
        help="How the model is loaded or served, as KEY=VALUE,KEY=VALUE (values read as JSON where they parse; "
        "a dotted key nests: chat_template_kwargs.enable_thinking=false). hf: dtype, device_map, revision, "
        "attn_implementation, max_memory, trust_remote_code, load_in_8bit, load_in_4bit; openai: extra "
        "request body fields (top_k, min_p, repetition_penalty, ...). Recorded, and part of the cache key.",
        panel=MODEL_PANEL,
    )
    chat_template: bool | None = declare(
        None,
        flag="--chat-template",
        negative="--no-chat-template",
        help="hf: apply the tokenizer's chat template (refused when it has none) or send the raw query "
        "(--no-chat-template). Default: the template when the tokenizer has one, else the raw query, with a "
        "warning. Recorded as meta.chat_template.",
        panel=MODEL_PANEL,
    )


@dataclass(frozen=True, kw_only=True)
class DataOptions:
    """Which data, and which of its tasks and records (run, score, merge)."""

    data: str = declare(flag="--data", help=_DATA_HELP, envvar="TAXPRABEN_DATA", panel=DATA_PANEL)
    tasks: str | None = declare(
        None, flag="--tasks", panel=DATA_PANEL,
        help="Comma-separated task names: score this subset of the benchmark (the results are marked partial; "
        "default: all of its tasks, each of which must have a data file).",
    )  # fmt: skip
    allow_missing: bool = declare(
        False, flag="--allow-missing", panel=DATA_PANEL,
        help="Score the tasks that have data when some task of the benchmark has none (by default refused, exit 2, "
        "naming each): the results name the missing tasks and are marked partial.",
    )  # fmt: skip
    limit: int | float | None = declare(
        None, flag="--limit", check=_limit,
        help="Use only the first N records of each task (an integer >= 1), or a fraction of each task: "
        "0.1 = the first 10% (rounded up).", panel=DATA_PANEL,
    )  # fmt: skip
    task_dir: list[Path] | None = declare(
        None,
        flag="--task-dir",
        help="Extra directory of task spec files (repeatable); also $TAXPRABEN_TASK_DIR.",
        panel=DATA_PANEL,
    )

    @property
    def task_names(self) -> list[str] | None:
        """``--tasks`` as a list (None: the whole benchmark)."""
        if not self.tasks:
            return None
        return [t.strip() for t in self.tasks.split(",") if t.strip()] or None


@dataclass(frozen=True, kw_only=True)
class GenerationOptions:
    """Decoding: what every request of a run asks for."""

    runs: int = declare(
        DEFAULT_RUNS, flag="--runs", min=1, help="Independent runs; run r is sent seed SEED+r.", panel=GENERATION_PANEL
    )
    temperature: float = declare(
        DEFAULT_TEMPERATURE, flag="--temperature", min=0.0, help="Sampling temperature (TaxBen: 0).",
        panel=GENERATION_PANEL,
    )  # fmt: skip
    top_p: float | None = declare(None, flag="--top-p", min=0.0, max=1.0, help="Nucleus sampling.", panel=GENERATION_PANEL)
    max_tokens: int = declare(
        DEFAULT_MAX_TOKENS, flag="--max-tokens", min=1, help="Most tokens generated per answer.",
        panel=GENERATION_PANEL,
    )  # fmt: skip
    system_prompt: str | None = declare(
        None, flag="--system-prompt", help="System message (default: none, as TaxBen).", panel=GENERATION_PANEL
    )
    gen_kwargs: str | None = declare(
        None,
        flag="--gen-kwargs",
        check=_gen_kwargs,
        help="Extra request fields as JSON, e.g. '{\"enable_thinking\": false}' (hf: extra generate() arguments).",
        panel=GENERATION_PANEL,
    )
    seed: int = declare(0, flag="--seed", help="Seed base: run r uses SEED+r.", panel=GENERATION_PANEL)


@dataclass(frozen=True, kw_only=True)
class EndpointOptions:
    """Where requests go, how hard the endpoint is driven and how patiently retried."""

    base_url: list[str] | None = declare(
        None,
        flag="--base-url",
        envvar=BASE_URL_ENV,
        help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default https://api.openai.com/v1). "
        "Several replicas of one model: repeat the option or separate their URLs with commas; each request "
        "goes to the one with the least expected wait, and one that stops answering is taken out and probed "
        "again later.",
        panel=ENDPOINT_PANEL,
    )
    api_key_env: str | None = declare(
        None,
        flag="--api-key-env",
        help="Name of the environment variable holding the API key (default OPENAI_API_KEY; the key itself "
        "is never a flag).",
        panel=ENDPOINT_PANEL,
    )
    concurrency: int = declare(
        DEFAULT_CONCURRENCY, flag="--concurrency", min=1, help="Requests in flight (hf: items per batch).",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    rpm: float | None = declare(None, flag="--rpm", min=0.001, help="Limit requests per minute.", panel=ENDPOINT_PANEL)
    tpm: float | None = declare(
        None, flag="--tpm", min=1, help="Limit tokens per minute (estimate: approximate prompt tokens + max tokens).",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    timeout: float = declare(
        DEFAULT_TIMEOUT_S,
        flag="--timeout",
        min=0.001,
        help="Seconds per attempt. Streamed (the default): the longest wait for a first token; after a few "
        "answers the wait adapts to 5x the endpoint's usual first-token time (at least 5 s). With "
        "--no-stream: the whole answer's limit.",
        panel=ENDPOINT_PANEL,
    )
    idle_timeout: float = declare(
        IDLE_TIMEOUT_S, flag="--idle-timeout", min=0.001,
        help="Streamed: give an attempt up when no chunk arrives for this many seconds.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    no_stream: bool = declare(
        False,
        flag="--no-stream",
        help="Send plain (unstreamed) requests, for servers without streaming; hangs are then caught only "
        "by --timeout.",
        panel=ENDPOINT_PANEL,
    )
    deadline: float = declare(
        DEFAULT_DEADLINE_S, flag="--deadline", min=0.001,
        help="Seconds from an item's first attempt to its last retry.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    max_retries: int = declare(
        DEFAULT_MAX_RETRIES, flag="--max-retries", min=0,
        help="Retries on 429, 5xx, timeouts and dropped connections (backoff with jitter).", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    retry_backoff: float = declare(
        DEFAULT_BACKOFF_BASE_S,
        flag="--retry-backoff",
        min=0.001,
        help="Base of the exponential backoff in seconds (retry k waits BASE*2^(k-2) to BASE*2^(k-1), at "
        "most 60 s); a Retry-After from the server takes precedence.",
        panel=ENDPOINT_PANEL,
    )
    no_preflight: bool = declare(
        False, flag="--no-preflight",
        help="Skip the GET /models check of the endpoint and key before the first request.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    serve: str | None = declare(
        None,
        flag="--serve",
        check=_serve,
        help="run: start this serving command first (e.g. 'vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000'), "
        "its output in OUT/serve.log; wait until GET BASE_URL/models answers, generate, then stop it (also on "
        "errors and Ctrl-C). --base-url defaults to http://127.0.0.1:PORT/v1 with the command's --port "
        "(default 8000).",
        panel=ENDPOINT_PANEL,
    )
    serve_timeout: float = declare(
        DEFAULT_SERVE_TIMEOUT_S, flag="--serve-timeout", min=0.001,
        help="--serve: seconds to wait for the server to answer GET /models.", panel=ENDPOINT_PANEL,
    )  # fmt: skip


#: The defaults of every scoring option.
_SCORING = ScoringSettings()


@dataclass(frozen=True, kw_only=True)
class ScoringOptions:
    """The scoring options of ``run``, ``score`` and ``merge``; defaults are ScoringSettings'
    own. :meth:`settings` turns them into the job's ScoringSettings."""

    profile: str = declare(
        _SCORING.profile, flag="--profile", check=_one_of(PROFILES, "scoring profile"),
        help="Scoring profile: 'taxpraben' (default) or 'taxben' (TaxBen's exact rules).", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_model: str = declare(
        _SCORING.bertscore_model, flag="--bertscore-model", envvar=ENV_BERTSCORE_MODEL,
        help="BERTScore model: hub id or local directory.", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_layer: int = declare(
        _SCORING.bertscore_layer, flag="--bertscore-layer", envvar=ENV_BERTSCORE_LAYER, min=0,
        help="BERTScore layer (0 is the embeddings).", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_max_tokens: int | None = declare(
        _SCORING.bertscore_max_tokens, flag="--bertscore-max-tokens", min=1,
        help="Cap BERTScore inputs at N tokens to bound memory (default: no cap, as the reference).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_idf: bool = declare(
        _SCORING.bertscore_idf, flag="--bertscore-idf",
        help="Weight BERTScore tokens by idf over the references (not the protocol: off in TaxBen/TaxPraBen; "
        "recorded in results.json).", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_batch_size: int = declare(
        _SCORING.bertscore_batch_size, flag="--bertscore-batch-size", min=1,
        help="Texts per BERTScore forward pass on CPU (on CUDA, batches are sized by free memory).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    bartscore_model: str = declare(
        _SCORING.bartscore_model, flag="--bartscore-model", envvar=ENV_BARTSCORE_MODEL,
        help="BARTScore model: hub id or local directory.", panel=SCORING_PANEL,
    )  # fmt: skip
    bartscore_weights: Path | None = declare(
        None, flag="--bartscore-weights", envvar=ENV_BARTSCORE_WEIGHTS,
        help="Optional bart_score.pth state dict (ParaBank2-tuned weights used by TaxBen).", panel=SCORING_PANEL,
    )  # fmt: skip
    device: str = declare(
        _SCORING.device, flag="--device", check=_devices,
        help="Device(s) for the scorer models (and an hf: model): auto, cpu, mps, cuda (every visible GPU), "
        "cuda:N, or a list such as cuda:0,cuda:1 that scoring is split across (an hf: model runs on the "
        "first).", panel=SCORING_PANEL,
    )  # fmt: skip
    scorer_dtype: str = declare(
        _SCORING.scorer_dtype, flag="--scorer-dtype", check=_one_of(SCORER_DTYPES, "scorer dtype"),
        help="BERTScore/BARTScore arithmetic: float32 (default, equal to the reference code), tf32 or bf16 "
        "(faster on a GPU, not exact; recorded in results.json).", panel=SCORING_PANEL,
    )  # fmt: skip
    no_semantic: bool = declare(
        not _SCORING.semantic, flag="--no-semantic",
        help="Skip BERTScore/BARTScore: their tasks are marked 'not computed' and the overall partial.",
        panel=SCORING_PANEL,
    )  # fmt: skip

    def settings(self, *, seed: int, runs: int | None) -> ScoringSettings:
        """The ScoringSettings of these options (progress shown); ValueError if not valid."""
        values = dataclasses.asdict(self)
        semantic = not values.pop("no_semantic")
        return ScoringSettings(**values, semantic=semantic, seed=seed, runs=runs, progress=True)

    @property
    def scorer_models(self) -> list[str]:
        """The semantic scorers' models (hub ids or local directories)."""
        return [self.bertscore_model, self.bartscore_model]


@dataclass(frozen=True, kw_only=True)
class RunOutputOptions:
    """Where ``run`` writes, what it keeps, and what ends it with an error."""

    out: Path | None = declare(
        None, flag="--out", short="-o", help="Output directory (default: runs/MODEL-YYYYMMDD-HHMMSS, MODEL the "
        "--model spec made a file name).", panel=OUTPUT_PANEL,
    )  # fmt: skip
    shard: str = declare(
        "0/1",
        flag="--shard",
        envvar="TAXPRABEN_SHARD",
        check=_shard,
        help="Run only shard I of N (0-based, e.g. 2/3): a deterministic, balanced share of the records, "
        "every run of each; merge the shards with `taxpraben merge`.",
        panel=DATA_PANEL,
    )
    no_score: bool = declare(
        False, flag="--no-score",
        help="Write predictions.jsonl only (for a shard: score later with `taxpraben merge`).", panel=SCORING_PANEL,
    )  # fmt: skip
    cache: Path | None = declare(
        None, flag="--cache", envvar="TAXPRABEN_CACHE",
        help="Completion cache (default ~/.cache/taxpraben/completions.sqlite).", panel=OUTPUT_PANEL,
    )  # fmt: skip
    no_cache: bool = declare(
        False, flag="--no-cache", help="Neither read nor write the completion cache.", panel=OUTPUT_PANEL
    )
    allow_failures: bool = declare(
        False, flag="--allow-failures", help="Exit 0 even if some items failed after all retries.",
        panel=OUTPUT_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class ScoreInputOptions:
    """What ``score`` reads besides the data, and where it writes."""

    predictions: list[Path] | None = declare(
        None,
        flag="--predictions",
        short="-p",
        help="Predictions file (JSON Lines, one per task/id/run); repeat the option, or give a glob "
        "('runs/*/predictions.jsonl'), to read several. Only the tasks they hold are scored unless --tasks "
        "says otherwise.",
        panel=DATA_PANEL,
    )
    batch_output: list[Path] | None = declare(
        None,
        flag="--batch-output",
        help="Output (or error) file of a batch job on the file of `run --batch-file-only` (OpenAI batch "
        "format, e.g. from vLLM's run_batch); repeatable, globs accepted; read as predictions, alone or "
        "beside --predictions.",
        panel=DATA_PANEL,
    )
    runs: int | None = declare(
        None, flag="--runs", min=1, help="Expected runs 0..N-1 (default: the runs present in the file).",
        panel=DATA_PANEL,
    )  # fmt: skip
    seed: int = declare(0, flag="--seed", help="Seed for bootstrap intervals.", panel=SCORING_PANEL)
    out: Path | None = declare(
        None, flag="--out", short="-o", help="Output directory (default: 'scored' beside the first predictions file).",
        panel=OUTPUT_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class MergeInputOptions:
    """What ``merge`` combines, how strictly, and where it writes."""

    sources: list[Path] = declare(
        flag="SOURCES",
        argument=True,
        help="Shard output directories (predictions.jsonl + shard.json) or predictions files.",
        panel=DATA_PANEL,
    )
    runs: int | None = declare(
        None, flag="--runs", min=1,
        help="Runs 0..N-1 every item must have (default: the shards' manifests, else the highest run present + 1).",
        panel=DATA_PANEL,
    )  # fmt: skip
    force: bool = declare(
        False, flag="--force",
        help="Score despite gaps (they score 0 as errors) and manifest differences; overlaps are always refused.",
        panel=DATA_PANEL,
    )  # fmt: skip
    seed: int = declare(0, flag="--seed", help="Seed for bootstrap intervals.", panel=SCORING_PANEL)
    out: Path = declare(flag="--out", short="-o", help="Output directory of the merged run.", panel=OUTPUT_PANEL)


@dataclass(frozen=True, kw_only=True)
class PricingOptions:
    """What answers cost (``run``, ``score``, ``estimate``): the prices of a pricing file."""

    pricing: Path | None = declare(
        None, flag="--pricing", envvar="TAXPRABEN_PRICING",
        help="Pricing file (YAML): per model, input and output prices per million tokens and a currency "
        "(README, 'What a run costs'); the cost then appears in results.json and the reports.",
        panel=COST_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class BudgetOptions:
    """What ``run`` may spend before it stops sending."""

    budget_tokens: int | None = declare(
        None, flag="--budget-tokens", min=1,
        help="Stop sending before the tokens spent (prompt + completion, as reported; a request in flight "
        "counts its prompt estimate + --max-tokens) would exceed N; the run exits with status 3 and resumes "
        "from the cache when run again with a larger budget.",
        panel=COST_PANEL,
    )  # fmt: skip
    budget_cost: float | None = declare(
        None, flag="--budget-cost", min=0.0,
        help="As --budget-tokens, in the pricing file's currency (needs --pricing).", panel=COST_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """``run`` through a provider's batch API (openai: models only): half price, within 24 hours."""

    batch: bool = declare(
        False, flag="--batch",
        help="Send the missing requests as one batch job (OpenAI Batch API: /v1/files, /v1/batches; half "
        "price, answered within 24 h), poll it, cache its answers; what it did not answer goes the normal "
        "way. Interrupted, a rerun resumes polling the same batch. openai: models only.",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    batch_file_only: bool = declare(
        False, flag="--batch-file-only",
        help="Write OUT/batch_input.jsonl (the requests not in the cache, OpenAI batch format) and stop: run it "
        "with vLLM's run_batch or a provider's console, then `taxpraben score --batch-output FILE`.",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    batch_poll: float = declare(
        DEFAULT_BATCH_POLL_S, flag="--batch-poll", min=0.001,
        help="--batch: seconds between two polls of the batch's status.", panel=ENDPOINT_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class EstimateOptions:
    """How ``estimate`` counts prompt tokens, and where it writes its figures."""

    tokenizer: str | None = declare(
        None, flag="--tokenizer",
        help="Count prompt tokens with this Hugging Face tokenizer and its chat template: a local directory "
        "(or a hub id already in the local cache). Default: an hf: model's own tokenizer, else an approximation "
        "calibrated on Qwen2.5 (README, 'What a run costs').",
        panel=COST_PANEL,
    )  # fmt: skip
    json_out: Path | None = declare(
        None, flag="--json", help="Also write the estimate's figures to this JSON file.", panel=OUTPUT_PANEL
    )


def parse_threshold(text: str) -> tuple[str | None, float]:
    """``--fail-under``'s value: ``X`` (the Overall Average) or ``TASK=X``, X in [0, 1] (the
    results' own scale, not points); ValueError saying what is wrong."""
    task, sep, number = text.rpartition("=")
    task = task.strip()
    if sep and not task:
        raise ValueError(f"{text!r}: give TASK=X (e.g. TaxCalc=0.8) or X alone for the Overall Average")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{text!r}: {number.strip()!r} is not a number; give X or TASK=X, X in [0, 1]") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(
            f"{text!r}: {value:g} is out of range: a threshold is in the results' 0-1 scale (0.8, not 80)"
        )
    return (task or None), value


def _threshold(text: str) -> None:
    parse_threshold(text)


@dataclass(frozen=True, kw_only=True)
class GateOptions:
    """CI gates of ``run``, ``score`` and ``merge``: after the results and reports are written,
    a figure below its threshold ends the command with exit status 4."""

    fail_under: list[str] | None = declare(
        None,
        flag="--fail-under",
        check=_threshold,
        help="CI gate: exit 4 (after writing every file) when the Overall Average is below X, or with "
        "TASK=X when that task's score is; X in the results' 0-1 scale. Repeatable.",
        panel=OUTPUT_PANEL,
    )
    allow_partial: bool = declare(
        False, flag="--allow-partial", panel=OUTPUT_PANEL,
        help="Accept partial results: without it a task of the benchmark missing or not computed fails every "
        "--fail-under gate (exit 4), and results partial for a reason not chosen (a scorer model that could not "
        "be loaded) end the command with exit 6, after writing every file.",
    )  # fmt: skip

    @property
    def thresholds(self) -> list[tuple[str | None, float]]:
        """Each ``--fail-under`` as (task, X); task None: the Overall Average."""
        return [parse_threshold(text) for text in self.fail_under or []]


@dataclass(frozen=True, kw_only=True)
class RegressionGateOptions:
    """The CI gate of ``diff``: B significantly worse than A."""

    fail_over_regression: float | None = declare(
        None,
        flag="--fail-over-regression",
        min=0.0,
        max=1.0,
        help="CI gate: exit 5 when B is worse than A by more than X (0-1 scale) on the Overall Average or "
        "a task score and the paired test is significant at 95%; a task of the benchmark missing or not "
        "computed in A or B fails it too (unless --allow-partial).",
        panel=OUTPUT_PANEL,
    )
    allow_partial: bool = declare(
        False, flag="--allow-partial", panel=OUTPUT_PANEL,
        help="With --fail-over-regression: accept A or B partial (some task of the benchmark missing or not computed).",
    )  # fmt: skip


#: The experiment trackers ``--log`` can name (``taxpraben.jobs.trackers``).
TRACKERS = ("wandb", "mlflow")


def parse_trackers(values: list[str] | None) -> list[str]:
    """``--log``'s values (repeated, or comma-separated) as tracker names, each once, in
    order; ValueError naming an unknown one and the choices."""
    names: list[str] = []
    for value in values or []:
        for name in (part.strip().lower() for part in value.split(",")):
            if not name:
                continue
            if name not in TRACKERS:
                raise ValueError(f"unknown tracker {name!r}; choose one of {', '.join(TRACKERS)} "
                                 "(repeat --log, or separate them by commas)")  # fmt: skip
            if name not in names:
                names.append(name)
    return names


def _trackers(value: str) -> None:
    parse_trackers([value])


@dataclass(frozen=True, kw_only=True)
class TrackerOptions:
    """Experiment trackers of ``run``, ``score`` and ``merge``: once the results and reports are
    written, the options, the manifest, every figure and the report files are logged."""

    log: list[str] | None = declare(
        None,
        flag="--log",
        check=_trackers,
        help="Log the run to an experiment tracker: wandb or mlflow (repeatable, or comma-separated): the "
        "options, the manifest, every figure (0-1 scale) and the report files. Needs the extra: "
        "pip install 'taxpraben[wandb]' / 'taxpraben[mlflow]'.",
        panel=OUTPUT_PANEL,
    )
    log_project: str = declare(
        "taxpraben", flag="--log-project",
        help="--log: the W&B project, the MLflow experiment.", panel=OUTPUT_PANEL,
    )  # fmt: skip
    log_uri: str | None = declare(
        None, flag="--log-uri",
        help="--log mlflow: the tracking URI (default $MLFLOW_TRACKING_URI, else the local file store ./mlruns).",
        panel=OUTPUT_PANEL,
    )  # fmt: skip

    @property
    def trackers(self) -> list[str]:
        """The trackers ``--log`` names, each once, in order."""
        return parse_trackers(self.log)


def _judge_spec(text: str) -> None:
    kind, sep, name = text.partition(":")
    if not sep or not kind.strip() or not name.strip():
        raise ValueError(f"{text!r}: give a model spec KIND:NAME, e.g. openai:qwen2.5-72b-instruct or hf:PATH")


@dataclass(frozen=True, kw_only=True)
class JudgeOptions:
    """The second reader of ``run`` and ``score``: a judge model reads the answers the rules
    cannot (README, "A second reader")."""

    judge: str | None = declare(
        None, flag="--judge", check=_judge_spec,
        help="A judge model (openai:NAME with --judge-base-url, hf:PATH) reads the answers the rules left as "
        "format failures (classification and structured tasks); its reply is read by the task's own reader. "
        "It never sees the gold. Cached like a generation.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_base_url: str | None = declare(
        None, flag="--judge-base-url", help="--judge openai:NAME: its OpenAI-compatible endpoint.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_api_key_env: str | None = declare(
        None, flag="--judge-api-key-env",
        help="--judge: the environment variable holding its API key (default OPENAI_API_KEY).", panel=SCORING_PANEL,
    )  # fmt: skip
    judge_audit: int = declare(
        0, flag="--judge-audit", min=0,
        help="--judge: also ask it for N answers per task the rules did read (seeded by --seed) and report how "
        "often both agree, with a 95% Wilson interval.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_max_items: int | None = declare(
        None, flag="--judge-max-items", min=0,
        help="--judge: send at most N distinct requests (format failures first, then the audit); the rest stay "
        "as the rules read them.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_concurrency: int = declare(
        DEFAULT_JUDGE_CONCURRENCY, flag="--judge-concurrency", min=1,
        help="--judge: its requests in flight, in score and run alike (the default suits a judge served locally on "
        "one slot; raise it for a hosted API or a server with several slots).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_timeout: float = declare(
        DEFAULT_JUDGE_TIMEOUT_S, flag="--judge-timeout", min=0.001,
        help="--judge: seconds per attempt of its requests (streamed: the longest wait for a first token, which "
        "on a local server includes the answers queued before it).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_prompt: Path | None = declare(
        None, flag="--judge-prompt",
        help="--judge: a prompt template replacing the built-in one (placeholders {question}, {options}, "
        "{answer_form}, {output}; a '#version: NAME' line).",
        panel=SCORING_PANEL,
    )  # fmt: skip
