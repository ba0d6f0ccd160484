"""The backend protocol and the values that cross it (requests, completions, errors).

A backend turns a batch of :class:`Request` into one :class:`Completion` or
:class:`BackendError` per request, in order, making exactly one attempt at each. Retries,
rate limits, deadlines and the cache belong to the runner (one owner each); a backend only
says whether a failure is worth retrying (``BackendError.retryable``) and how long the server
asked it to wait (``retry_after``).

This module imports no backend; the backends import it, and ``models.factory`` builds the
one a ``--model`` spec names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from taxpraben.models.defaults import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE
from taxpraben.prompts import Message, build_messages
from taxpraben.records import Record
from taxpraben.task_spec import TaskSpec

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject


class ModelSpecError(ValueError):
    """A ``--model`` value, base URL or backend option that cannot be used (user-facing)."""


@dataclass(frozen=True)
class GenerationConfig:
    """Decoding settings shared by every request of a run (part of the cache key)."""

    temperature: float = DEFAULT_TEMPERATURE
    top_p: float | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    #: Run ``r`` is sent seed ``seed_base + r``.
    seed_base: int = 0
    system_prompt: str | None = None
    #: Extra request fields passed through as they are (vendor options, hf generate kwargs).
    gen_kwargs: JSONObject = field(default_factory=dict)

    def seed_for(self, run: int) -> int:
        return self.seed_base + run

    @property
    def greedy(self) -> bool:
        """True when decoding picks the most likely token (no sampling)."""
        if "do_sample" in self.gen_kwargs:
            return not self.gen_kwargs["do_sample"]
        return self.temperature == 0

    def to_meta(self) -> JSONObject:
        """The form recorded in ``results.json`` (``meta.generation``)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed_base": self.seed_base,
            "system_prompt": self.system_prompt,
            "gen_kwargs": dict(self.gen_kwargs),
        }


@dataclass(frozen=True)
class Request:
    """One generation to make: a record, a run index, and the messages sent for it."""

    record: Record
    run: int
    messages: tuple[Message, ...]
    seed: int
    #: The record's task spec; baselines need it to shape their answer.
    spec: TaskSpec | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.record.task, self.record.id, self.run)


def build_request(
    record: Record, run: int, config: GenerationConfig, spec: TaskSpec | None = None
) -> Request:
    """The request for ``record`` in run ``run``: its query verbatim as the user message."""
    return Request(
        record=record,
        run=run,
        messages=tuple(build_messages(record, config.system_prompt)),
        seed=config.seed_for(run),
        spec=spec,
    )


@dataclass
class Completion:
    """What a backend returns for one request."""

    text: str
    reasoning: str | None = None
    #: ``prompt_tokens`` and ``completion_tokens`` when the backend knows them (and
    #: ``counted_by`` when taxpraben counted them: :func:`taxpraben.costs.tokens.counted_usage`).
    usage: JSONObject | None = None
    latency_s: float | None = None
    finish_reason: str | None = None


class BackendError(Exception):
    """One failed attempt at one request.

    ``retryable`` is True for failures that may pass on a later attempt (429, 5xx,
    timeouts, dropped connections, a garbled body); False for those that will not
    (other 4xx: the server's message says why). ``retry_after`` is the wait the server
    asked for, in seconds.

    ``fatal`` marks a failure that no other request of the run can escape (a refused key,
    a model or endpoint the server does not have): the runner stops the whole run at the
    first one. ``unreachable`` marks a connection that could not be opened at all (refused,
    DNS failure, connect timeout): retryable, but the runner stops when nothing has ever
    answered (see ``RunnerSettings.unreachable_grace``). ``waited`` marks an attempt given
    up after waiting out a deadline (no first token): that wait stands for its backoff.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        fatal: bool = False,
        unreachable: bool = False,
        waited: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable and not fatal
        self.retry_after = retry_after
        self.fatal = fatal
        self.unreachable = unreachable
        self.waited = waited


@runtime_checkable
class Backend(Protocol):
    """What the runner needs from a model backend.

    A remote backend may also define ``async def preflight(self) -> BackendError | None``:
    one cheap check of the endpoint before anything is generated (the OpenAI backend lists
    ``/models``); the runner stops the run when it returns a ``fatal`` error. Local backends
    have nothing to check and leave it out.
    """

    #: "openai", "hf", "replay" or "baseline" (part of the cache key).
    kind: str
    #: The model name or path, as given after the colon of the spec.
    model: str
    #: The endpoint without secrets (None for local backends).
    endpoint: str | None
    #: Requests per ``generate`` call the runner should group (1 for remote APIs).
    batch_size: int
    #: False for backends whose output is free to recompute (replay, baselines).
    cacheable: bool

    @property
    def spec(self) -> str:
        """The model spec as written, e.g. ``openai:deepseek-chat``."""
        ...

    def shares_runs(self, config: GenerationConfig) -> bool:
        """True when every run would produce the same text, so run 0 stands for all runs."""
        ...

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        """One attempt at each request, results in request order; never raises for one item."""
        ...

    async def aclose(self) -> None:
        """Release connections, models and threads."""
        ...


def redact_url(url: str) -> str:
    """``url`` without user info, query string or fragment (where keys tend to hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def parse_gen_kwargs(text: str | None) -> JSONObject:
    """Parse ``--gen-kwargs`` (a JSON object); raises ModelSpecError with the reason."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelSpecError(
            f"--gen-kwargs is not valid JSON: {exc.msg} at column {exc.colno}"
        ) from exc
    if not isinstance(value, dict):
        raise ModelSpecError(f"--gen-kwargs must be a JSON object, got {type(value).__name__}")
    return value
