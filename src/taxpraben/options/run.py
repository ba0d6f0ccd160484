"""The options of generation: the model, the data, the generation settings, the endpoint and its
retries (``ModelOptions``, ``DataOptions``, ``GenerationOptions``, ``EndpointOptions``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taxpraben.models.defaults import (
    BASE_URL_ENV,
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_CONCURRENCY,
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RUNS,
    DEFAULT_SERVE_TIMEOUT_S,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    IDLE_TIMEOUT_S,
)
from taxpraben.options.checks import (
    check_gen_kwargs,
    check_limit,
    check_model_args,
    check_serve,
)
from taxpraben.options.declare import (
    DATA_PANEL,
    ENDPOINT_PANEL,
    GENERATION_PANEL,
    MODEL_PANEL,
    declare,
)

_DATA_HELP = (
    "Data directory (one file per dataset: NAME.jsonl/.json/.parquet or NAME/test.*), "
    "or 'sample' for the bundled sample."
)


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """Which model answers (``run``)."""

    model: str = declare(
        flag="--model", brief="Model spec: openai:MODEL, hf:PATH_OR_ID, replay:FILE, baseline:NAME.",
        short="-m",
        help="Model spec: openai:MODEL, hf:PATH_OR_ID, replay:PREDICTIONS.jsonl, "
        "baseline:oracle|first-choice|lead|echo|random.",
        panel=MODEL_PANEL,
    )
    model_args: str | None = declare(
        None,
        flag="--model-args", brief="KEY=VALUE,... for loading or serving the model.",
        check=check_model_args,
        help="How the model is loaded or served, as KEY=VALUE,KEY=VALUE (values read as JSON where they parse; "
        "a dotted key nests: chat_template_kwargs.enable_thinking=false). hf: dtype, device_map, revision, "
        "attn_implementation, max_memory, trust_remote_code, load_in_8bit, load_in_4bit; openai: extra "
        "request body fields (top_k, min_p, repetition_penalty, ...). Recorded, and part of the cache key.",
        panel=MODEL_PANEL,
    )
    chat_template: bool | None = declare(
        None,
        flag="--chat-template", brief="hf: apply the tokenizer's chat template, or send the raw query.",
        negative="--no-chat-template",
        help="hf: apply the tokenizer's chat template (refused when it has none) or send the raw query "
        "(--no-chat-template). Default: the template when the tokenizer has one, else the raw query, with a "
        "warning. Recorded as meta.chat_template.",
        panel=MODEL_PANEL,
    )


@dataclass(frozen=True, kw_only=True)
class DataOptions:
    """Which data, and which of its tasks and records (run, score, merge)."""

    data: str = declare(flag="--data", brief="Data directory (NAME.jsonl/.json/.parquet per dataset), or 'sample'.", help=_DATA_HELP, envvar="TAXPRABEN_DATA", panel=DATA_PANEL)
    tasks: str | None = declare(
        None, flag="--tasks", brief="Comma-separated task names (a subset: results marked partial).", panel=DATA_PANEL,
        help="Comma-separated task names: score this subset of the benchmark (the results are marked partial; "
        "default: all of its tasks, each of which must have a data file).",
    )  # fmt: skip
    allow_missing: bool = declare(
        False, flag="--allow-missing", brief="Score the tasks that have data when some have none (marked partial).", panel=DATA_PANEL,
        help="Score the tasks that have data when some task of the benchmark has none (by default refused, exit 2, "
        "naming each): the results name the missing tasks and are marked partial.",
    )  # fmt: skip
    limit: int | float | None = declare(
        None, flag="--limit", brief="First N records of each task, or a fraction (0.1 = first 10%).", check=check_limit,
        help="Use only the first N records of each task (an integer >= 1), or a fraction of each task: "
        "0.1 = the first 10% (rounded up).", panel=DATA_PANEL,
    )  # fmt: skip
    task_dir: list[Path] | None = declare(
        None,
        flag="--task-dir", brief="Extra directory of task spec files (repeatable).",
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
        None, flag="--system-prompt", brief="System message (default: none, as TaxBen).", help="System message (default: none, as TaxBen).", panel=GENERATION_PANEL
    )
    gen_kwargs: str | None = declare(
        None,
        flag="--gen-kwargs", brief="Extra request fields as JSON (hf: generate() arguments).",
        check=check_gen_kwargs,
        help="Extra request fields as JSON, e.g. '{\"enable_thinking\": false}' (hf: extra generate() arguments).",
        panel=GENERATION_PANEL,
    )
    seed: int = declare(0, flag="--seed", help="Seed base: run r uses SEED+r.", panel=GENERATION_PANEL)


@dataclass(frozen=True, kw_only=True)
class EndpointOptions:
    """Where requests go, how hard the endpoint is driven and how patiently retried."""

    base_url: list[str] | None = declare(
        None,
        flag="--base-url", brief="OpenAI-compatible endpoint (default https://api.openai.com/v1).",
        envvar=BASE_URL_ENV,
        help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default https://api.openai.com/v1). "
        "Several replicas of one model: repeat the option or separate their URLs with commas; each request "
        "goes to the one with the least expected wait, and one that stops answering is taken out and probed "
        "again later.",
        panel=ENDPOINT_PANEL,
    )
    api_key_env: str | None = declare(
        None,
        flag="--api-key-env", brief="Variable holding the API key (default OPENAI_API_KEY).",
        help="Name of the environment variable holding the API key (default OPENAI_API_KEY; the key itself "
        "is never a flag).",
        panel=ENDPOINT_PANEL,
    )
    concurrency: int = declare(
        DEFAULT_CONCURRENCY, flag="--concurrency", brief="Requests in flight (hf: items per batch).", min=1, help="Requests in flight (hf: items per batch).",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    rpm: float | None = declare(None, flag="--rpm", brief="Limit requests per minute.", min=0.001, help="Limit requests per minute.", panel=ENDPOINT_PANEL)
    tpm: float | None = declare(
        None, flag="--tpm", brief="Limit tokens per minute (estimated).", min=1, help="Limit tokens per minute (estimate: approximate prompt tokens + max tokens).",
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
        IDLE_TIMEOUT_S, flag="--idle-timeout", brief="Streamed: give up an attempt after this many silent seconds.", min=0.001,
        help="Streamed: give an attempt up when no chunk arrives for this many seconds.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    no_stream: bool = declare(
        False,
        flag="--no-stream", brief="Send unstreamed requests (hangs caught only by --timeout).",
        help="Send plain (unstreamed) requests, for servers without streaming; hangs are then caught only "
        "by --timeout.",
        panel=ENDPOINT_PANEL,
    )
    deadline: float = declare(
        DEFAULT_DEADLINE_S, flag="--deadline", brief="Seconds from an item's first attempt to its last retry.", min=0.001,
        help="Seconds from an item's first attempt to its last retry.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    max_retries: int = declare(
        DEFAULT_MAX_RETRIES, flag="--max-retries", brief="Retries on 429, 5xx, timeouts and dropped connections.", min=0,
        help="Retries on 429, 5xx, timeouts and dropped connections (backoff with jitter).", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    retry_backoff: float = declare(
        DEFAULT_BACKOFF_BASE_S,
        flag="--retry-backoff", brief="Base of the exponential backoff, in seconds.",
        min=0.001,
        help="Base of the exponential backoff in seconds (retry k waits BASE*2^(k-2) to BASE*2^(k-1), at "
        "most 60 s); a Retry-After from the server takes precedence.",
        panel=ENDPOINT_PANEL,
    )
    no_preflight: bool = declare(
        False, flag="--no-preflight", brief="Skip the GET /models check before the first request.",
        help="Skip the GET /models check of the endpoint and key before the first request.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
    serve: str | None = declare(
        None,
        flag="--serve", brief="Start this serving command first (log: OUT/serve.log), stop it after.",
        check=check_serve,
        help="run: start this serving command first (e.g. 'vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000'), "
        "its output in OUT/serve.log; wait until GET BASE_URL/models answers, generate, then stop it (also on "
        "errors and Ctrl-C). --base-url defaults to http://127.0.0.1:PORT/v1 with the command's --port "
        "(default 8000).",
        panel=ENDPOINT_PANEL,
    )
    serve_timeout: float = declare(
        DEFAULT_SERVE_TIMEOUT_S, flag="--serve-timeout", brief="--serve: seconds to wait for the server to answer.", min=0.001,
        help="--serve: seconds to wait for the server to answer GET /models.", panel=ENDPOINT_PANEL,
    )  # fmt: skip
