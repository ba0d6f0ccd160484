"""``openai:MODEL``: any OpenAI-compatible chat completions endpoint, over aiohttp directly.

Why aiohttp and not the ``openai`` SDK: measured on 2 cores against a 0.2 s mock, a bare
aiohttp client holds 0.96 of the ideal request rate at 64 in flight and 0.88 at 256, the SDK
on its aiohttp transport 0.86 and 0.37, and the SDK's default httpx pool 0.15 at 64 (see
``benchmarks/api_throughput.py``). One POST and one JSON decode per request is all we need;
what is sent and how an answer is read is ``taxpraben.models.openai_wire``.

Answers are streamed by default (``stream: true``, OpenAI server-sent events): a request
that shows no first token within an adaptive deadline, or whose chunks stop for
``--idle-timeout`` seconds, is given up and retried, so a hung request costs seconds while a
long generation is never cut (``taxpraben.models.streaming`` explains the limits,
``taxpraben.models.first_token`` keeps them per endpoint).
``--no-stream`` sends plain requests with ``--timeout`` as the whole answer's limit, for
servers without streaming. Both modes give the same text, usage and cache key.

Several replicas of one model: ``base_url`` may list several base URLs separated by commas.
Each attempt goes to the endpoint an :class:`~taxpraben.models.endpoints.EndpointPool`
chooses (fewest outstanding requests, weighted by measured throughput); an endpoint that
refuses connections or times out repeatedly is taken out and probed again later. The cache
key's ``endpoint`` is then the sorted, comma-joined list of the redacted URLs (one URL: the
URL itself, as before, so existing caches stay valid): runs over the same replica set share
cache entries.

``--model-args`` (``model_args``) are extra fields of every request body, sent as given
(``top_k``, ``min_p``, ``chat_template_kwargs``, ...) where neither taxpraben nor
``--gen-kwargs`` sets the field; the fields taxpraben sets itself (:data:`SET_BY_TAXPRABEN`)
are refused when the backend is built, naming the option that sets them.

The API key is read from the environment (``OPENAI_API_KEY`` or the variable named by
``--api-key-env``: ``taxpraben.models.api_key``), sent only in the ``Authorization`` header,
and never kept anywhere else: ``endpoint`` is the base URL without user info or query
string, and server error messages are scrubbed of the key before they are recorded.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import aiohttp

from taxpraben.clock import SYSTEM_CLOCK, Clock
from taxpraben.costs.tokens import ApproximateCounter, TokenCounter, counted_usage
from taxpraben.models.api_key import DEFAULT_KEY_ENV, key_refused, read_api_key
from taxpraben.models.base import BackendError, Completion, GenerationConfig, Request, redact_url
from taxpraben.models.defaults import (
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    IDLE_TIMEOUT_S,
)
from taxpraben.models.endpoints import Endpoint, EndpointPool, split_base_urls
from taxpraben.models.first_token import FirstTokenWatch
from taxpraben.models.model_args import FLAG as MODEL_ARGS_FLAG
from taxpraben.models.model_args import ModelArgsError
from taxpraben.models.openai_wire import (
    chat_body,
    encode_body,
    model_ids,
    parse_completion,
    parse_retry_after,
    server_message,
)
from taxpraben.models.streaming import (
    FIRST_TOKEN_FLOOR_S,
    StreamAccumulator,
    StreamError,
)

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

#: Seconds the preflight (and the model listing after a 404) may take: a server that does
#: not open a connection in this time is reported as unreachable.
PROBE_TIMEOUT_S = 10.0

#: The body fields taxpraben sets itself, and what to use instead of ``--model-args`` for
#: them; every other ``--model-args`` key is an extra body field, sent as given (``top_k``,
#: ``min_p``, ``repetition_penalty``, ``chat_template_kwargs.enable_thinking``, ...).
SET_BY_TAXPRABEN: dict[str, str] = {
    "model": "--model openai:NAME",
    "messages": "the data's query and --system-prompt",
    "stream": "--no-stream",
    "stream_options": "nothing: taxpraben asks for the usage of a stream itself",
    "max_tokens": "--max-tokens",
    "temperature": "--temperature",
    "top_p": "--top-p",
    "seed": "--seed (run r is sent SEED+r)",
}


def check_body_args(model_args: Mapping[str, JSONValue]) -> JSONObject:
    """``--model-args`` as extra body fields; ModelArgsError for a field taxpraben sets
    itself, naming the option that sets it."""
    for key in model_args:
        if key in SET_BY_TAXPRABEN:
            raise ModelArgsError(
                f"{MODEL_ARGS_FLAG}: {key!r} is set by taxpraben for openai: models; use "
                f"{SET_BY_TAXPRABEN[key]} instead"
            )
    return copy.deepcopy(dict(model_args))


def merge_under(body: JSONObject, extra: Mapping[str, JSONValue]) -> None:
    """Add ``extra``'s fields to ``body`` where it has none; objects on both sides are merged
    the same way, key by key (so the body's own fields and ``--gen-kwargs`` win)."""
    for key, value in extra.items():
        if key not in body:
            body[key] = copy.deepcopy(value)
        elif isinstance(body[key], dict) and isinstance(value, Mapping):
            merge_under(body[key], value)


class OpenAIBackend:
    """Chat completions over one pooled aiohttp session, one attempt per ``generate`` call."""

    kind = "openai"
    batch_size = 1
    cacheable = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT_S,
        key_env: str = DEFAULT_KEY_ENV,
        stream: bool = True,
        idle_timeout: float = IDLE_TIMEOUT_S,
        first_token_floor: float = FIRST_TOKEN_FLOOR_S,
        clock: Clock = SYSTEM_CLOCK,
        model_args: Mapping[str, JSONValue] | None = None,
    ) -> None:
        urls = split_base_urls(base_url)
        self.model = model
        #: ``--model-args``: extra body fields of every request (part of the cache key).
        self.model_args = check_body_args(model_args or {})
        self.pool = EndpointPool([(u, redact_url(u)) for u in urls])
        #: The first endpoint: where ``/models`` is asked after a 404.
        self._base = urls[0]
        #: The environment variable the key was read from (named in messages; never the key).
        self.key_env = key_env
        self._models: list[str] | None = None
        self._models_lock = asyncio.Lock()
        #: Streaming: the first-token deadlines (``timeout`` is their cap) and the idle limit.
        self.stream = stream
        self._idle = idle_timeout
        self._clock = clock
        self._first_tokens = FirstTokenWatch(len(urls), cap=timeout, floor=first_token_floor,
                                             idle=idle_timeout, clock=clock)  # fmt: skip
        # One URL keeps the cache key it always had; several share one key (module doc).
        self.endpoint: str | None = (
            redact_url(base_url)
            if len(urls) == 1
            else ",".join(sorted(ep.name for ep in self.pool.endpoints))
        )
        self._api_key = api_key or None
        #: Counts the tokens of an answer sent without ``usage``: no tokenizer of an ``openai:``
        #: model is known, so the approximation calibrated on Qwen2.5 (``taxpraben.costs.tokens``).
        self.counter: TokenCounter = ApproximateCounter()
        self._concurrency = max(1, concurrency)
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._headers = {"Content-Type": "application/json"}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"

    @classmethod
    def from_env(
        cls,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT_S,
        stream: bool = True,
        idle_timeout: float = IDLE_TIMEOUT_S,
        model_args: Mapping[str, JSONValue] | None = None,
        needs_key: bool = True,
    ) -> OpenAIBackend:
        """Take the key from ``$api_key_env`` (default ``OPENAI_API_KEY``); a missing key is
        an error here, before anything is sent, unless every endpoint is local
        (:func:`~taxpraben.models.api_key.read_api_key`) or nothing will be sent
        (``needs_key=False``: ``--batch-file-only`` writes a file for another machine)."""
        args = check_body_args(model_args or {})  # refused before the key is looked for
        url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        if needs_key:
            key, env_name = read_api_key(api_key_env, url)
        else:
            env_name = api_key_env or DEFAULT_KEY_ENV
            key = os.environ.get(env_name) or None
        return cls(
            model, base_url=url, api_key=key, concurrency=concurrency, timeout=timeout,
            key_env=env_name, stream=stream, idle_timeout=idle_timeout, model_args=args,
        )  # fmt: skip

    @property
    def spec(self) -> str:
        return f"openai:{self.model}"

    def shares_runs(self, config: GenerationConfig) -> bool:
        # Hosted endpoints vary between calls even at temperature 0: every run is sent.
        return False

    def _session_or_new(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._concurrency, limit_per_host=0, ttl_dns_cache=300, keepalive_timeout=60
            )
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeout, headers=self._headers
            )
        return self._session

    def request_body(self, request: Request, config: GenerationConfig) -> JSONObject:
        """The JSON body for one request: ours, the extra ``gen_kwargs`` fields over them, and
        the ``--model-args`` fields where neither sets one."""
        body = chat_body(self.model, request, config)
        merge_under(body, self.model_args)
        return body

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        return [await self.complete(r, config) for r in requests]

    async def complete(
        self, request: Request, config: GenerationConfig
    ) -> Completion | BackendError:
        """One attempt; the outcome as a Completion or a BackendError (never raises for I/O).
        An answer sent without ``usage`` (llama.cpp's server streams none) is counted here
        (:func:`~taxpraben.costs.tokens.counted_usage`, by :attr:`counter`), marked as such."""
        if self.stream:
            outcome = await self._complete_streamed(request, config)
        else:
            outcome = await self._complete_whole(request, config)
        if isinstance(outcome, Completion) and not outcome.usage:
            outcome.usage = counted_usage(request.messages, (outcome.reasoning or "") + outcome.text, self.counter)
        return outcome

    async def _complete_streamed(
        self, request: Request, config: GenerationConfig
    ) -> Completion | BackendError:
        """One streamed POST under the first-token and idle deadlines."""
        body = self.request_body(request, config)
        body["stream"] = True
        body.setdefault("stream_options", {"include_usage": True})
        data = encode_body(body)
        session = self._session_or_new()
        clock = self._clock
        ep = self.pool.choose(clock.now())
        in_flight = ep.outstanding
        first = self._first_tokens.attempt(request.key, ep.index)
        stream = StreamAccumulator()
        status, raw, retry_after = 200, b"", None
        # No total limit from aiohttp: our deadlines govern; only the connect is bounded.
        no_total = aiohttp.ClientTimeout(total=None, sock_connect=PROBE_TIMEOUT_S)
        try:
            async with self._first_tokens.backstop(first) as deadline:
                self._first_tokens.wait(first, deadline)
                try:
                    url = ep.url + "/chat/completions"
                    async with session.post(url, data=data, timeout=no_total) as resp:
                        status = resp.status
                        if status != 200:
                            raw = await resp.read()
                            retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                        else:
                            # Whatever has arrived, split into lines here: one await per
                            # network read rather than one per line keeps streaming's CPU
                            # cost near that of a plain request.
                            pending = b""
                            async for chunk in resp.content.iter_any():
                                *lines, pending = (pending + chunk).split(b"\n")
                                finished = stream.feed_lines(lines)
                                if stream.started:
                                    self._first_tokens.chunk(first, deadline)
                                if finished:
                                    break
                            else:
                                stream.feed(pending)  # a last line without its newline
                finally:
                    self._first_tokens.done(first)
        except asyncio.CancelledError:
            self.pool.finish(ep, clock.now())  # the run stopped: no longer outstanding
            raise
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            return self._connection_failed(exc, ep, clock.now())
        except TimeoutError:
            self.pool.finish(ep, clock.now(), connection_failed=not stream.started)
            if not stream.started:
                self._first_tokens.missed(first)
                waited = self._first_tokens.waited(first)
                return BackendError(
                    f"no first token after {waited:.1f} s (first-token deadline; capped by --timeout "
                    f"{first.deadline.cap:g} s){self._at(ep)}",
                    retryable=True,
                    waited=True,
                )
            return BackendError(
                f"stream stalled: no chunk for {self._idle:g} s (--idle-timeout)", retryable=True
            )
        except StreamError as exc:
            self.pool.finish(ep, clock.now(), answered=True)
            return BackendError(self._scrub(str(exc)), retryable=True)
        except aiohttp.ClientError as exc:
            return self._connection_failed(exc, ep, clock.now())
        if status != 200:
            self.pool.finish(ep, clock.now(), answered=True)
            return await self._http_error(status, raw, retry_after, ep)
        if not stream.complete:
            self.pool.finish(ep, clock.now(), answered=True)
            return BackendError(
                "stream ended before the answer was complete (no finish reason, no [DONE])",
                retryable=True,
            )
        latency = clock.now() - first.start
        self.pool.finish(ep, clock.now(), latency=latency, in_flight=in_flight)
        return Completion(
            text=stream.text,
            reasoning=stream.reasoning_text,
            usage=stream.usage,
            latency_s=round(latency, 4),
            finish_reason=stream.finish_reason,
        )

    async def _complete_whole(
        self, request: Request, config: GenerationConfig
    ) -> Completion | BackendError:
        """One plain POST under the per-attempt ``--timeout``."""
        data = encode_body(self.request_body(request, config))
        session = self._session_or_new()
        clock = self._clock
        start = clock.now()
        ep = self.pool.choose(start)
        in_flight = ep.outstanding
        try:
            async with session.post(ep.url + "/chat/completions", data=data) as resp:
                raw = await resp.read()
                status = resp.status
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
        except asyncio.CancelledError:
            self.pool.finish(ep, clock.now())  # the run stopped: no longer outstanding
            raise
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            return self._connection_failed(exc, ep, clock.now())
        except asyncio.TimeoutError:
            self.pool.finish(ep, clock.now(), connection_failed=True)
            return BackendError(
                f"timed out after {self._timeout.total:g} s (per-attempt --timeout){self._at(ep)}",
                retryable=True,
            )
        except aiohttp.ClientError as exc:
            return self._connection_failed(exc, ep, clock.now())
        latency = clock.now() - start
        if status != 200:
            self.pool.finish(ep, clock.now(), answered=True)
            return await self._http_error(status, raw, retry_after, ep)
        outcome = parse_completion(raw, latency, self._scrub)
        if isinstance(outcome, Completion):
            self.pool.finish(ep, clock.now(), latency=latency, in_flight=in_flight)
        else:
            self.pool.finish(ep, clock.now(), answered=True)
        return outcome

    def _at(self, ep: Endpoint) -> str:
        """`` at URL`` naming the endpoint of a failed attempt when there are several."""
        return f" at {ep.name}" if len(self.pool) > 1 else ""

    def _connection_failed(self, exc: aiohttp.ClientError, ep: Endpoint, now: float) -> BackendError:
        """An attempt that got no answer from ``ep`` (counted towards its ejection): a refused
        connection or connect timeout is :meth:`_unreachable`, anything else is retried."""
        self.pool.finish(ep, now, connection_failed=True)
        if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):
            return self._unreachable(exc, ep)
        return BackendError(
            f"connection failed: {type(exc).__name__}: {exc}{self._at(ep)}", retryable=True
        )

    def _unreachable(self, exc: Exception, ep: Endpoint) -> BackendError:
        """A refused connection: ``unreachable`` (the runner's give-up rule) only when no
        other endpoint of the pool has answered and is in service."""
        reason = getattr(exc, "os_error", None) or exc
        name = ep.name if len(self.pool) > 1 else self.endpoint
        return BackendError(
            f"cannot connect to {name}: {type(exc).__name__}: {reason}",
            retryable=True,
            unreachable=not self.pool.others_live(ep),
        )

    async def _http_error(
        self, status: int, raw: bytes, retry_after: float | None, ep: Endpoint
    ) -> BackendError:
        """The BackendError for a non-200 answer: 401/403 and 404 stop the run (``fatal``),
        from any endpoint of a pool (replicas serve one model with one key)."""
        message = f"HTTP {status}: {self._server_message(raw)}"
        if status in (401, 403):
            return BackendError(self._key_problem(message, ep), retryable=False, fatal=True)
        if status == 404:
            return BackendError(await self._not_found(message, ep), retryable=False, fatal=True)
        retryable = status == 429 or status >= 500
        return BackendError(message + self._at(ep), retryable=retryable, retry_after=retry_after)

    def _key_problem(self, message: str, ep: Endpoint | None = None) -> str:
        """Why a 401/403 happened, naming the variable the key came from (never the key)."""
        where = ep.name if ep is not None and len(self.pool) > 1 else self.endpoint
        return key_refused(where, message, self.key_env, key_sent=bool(self._api_key))

    async def _not_found(self, message: str, ep: Endpoint) -> str:
        """A 404 names the model, and the server's models when ``/models`` lists them."""
        models = await self.list_models(ep.url)
        base = ep.name if len(self.pool) > 1 else self.endpoint
        where = f"{base}/chat/completions answered {message}"
        if models:
            shown = ", ".join(models[:20]) + (" ..." if len(models) > 20 else "")
            return (
                f"{where}: model {self.model!r} is not served there. "
                f"It serves: {shown} (use --model openai:NAME)."
            )
        return (
            f"{where}, and {base}/models lists no models: check --model and --base-url "
            f"(OpenAI-compatible servers usually end in /v1)."
        )

    async def list_models(self, base: str | None = None) -> list[str] | None:
        """The model ids ``GET /models`` lists (fetched once; from ``base``, default the first
        endpoint), or None when it does not answer."""
        async with self._models_lock:
            if self._models is None:
                try:
                    status, raw = await self._get_models(base)
                except (asyncio.TimeoutError, aiohttp.ClientError):
                    return None
                self._models = model_ids(raw) if status == 200 else []
            return self._models or None

    async def _get_models(self, base: str | None = None) -> tuple[int, bytes]:
        session = self._session_or_new()
        probe = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)
        async with session.get((base or self._base) + "/models", timeout=probe) as resp:
            return resp.status, await resp.read()

    async def preflight(self) -> BackendError | None:
        """One cheap ``GET /models`` before a run (no tokens): a fatal error, or None to go on.

        Stops on what no request could get past: nothing answering at the base URL within
        ``PROBE_TIMEOUT_S`` (refused, DNS failure, connect timeout) and a refused key
        (401/403). Anything else (no ``/models`` route, a slow listing) lets the run start;
        a model the server lacks is reported by the first request's 404.

        With several endpoints all are asked at once: the run stops when none can be
        connected to, or when any refuses the key; those that cannot be connected to are
        taken out of the pool (and probed again later) while the others carry on.
        """
        eps = self.pool.endpoints
        answers = await asyncio.gather(*(self._preflight_one(ep) for ep in eps))
        errors = [a for a in answers if isinstance(a, BackendError)]
        refused = [e for e in errors if not e.unreachable]
        if refused:
            return refused[0]
        if len(errors) == len(eps):
            if len(eps) == 1:
                return errors[0]
            names = "; ".join(e.message for e in errors)
            return BackendError(
                f"no endpoint can be connected to: {names}",
                retryable=False, fatal=True, unreachable=True,
            )  # fmt: skip
        now = self._clock.now()
        for ep, answer in zip(eps, answers, strict=True):
            if isinstance(answer, BackendError):
                self.pool.eject(ep, now)
            elif answer is not None and self._models is None:
                self._models = answer
        return None

    async def _preflight_one(self, ep: Endpoint) -> BackendError | list[str] | None:
        """One endpoint's ``GET /models``: a fatal error, its model ids (200), or None."""
        try:
            status, raw = await self._get_models(ep.url)
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            error = self._unreachable(exc, ep)
            return BackendError(error.message, retryable=False, fatal=True, unreachable=True)
        except (asyncio.TimeoutError, aiohttp.ClientError):
            return None
        if status in (401, 403):
            message = f"HTTP {status}: {self._server_message(raw)}"
            return BackendError(self._key_problem(message, ep), retryable=False, fatal=True)
        ep.answered = True  # it exists: a refusal by another endpoint is not "unreachable"
        return model_ids(raw) if status == 200 else None

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _server_message(self, raw: bytes) -> str:
        return server_message(raw, self._scrub)

    async def aclose(self) -> None:
        self._first_tokens.close()
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

