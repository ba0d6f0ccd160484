"""``openai:MODEL``: any OpenAI-compatible chat completions endpoint, over aiohttp directly.

Why aiohttp and not the ``openai`` SDK: measured on 2 cores against a 0.2 s mock, a bare
aiohttp client holds 0.96 of the ideal request rate at 64 in flight and 0.88 at 256, the SDK
on its aiohttp transport 0.86 and 0.37, and the SDK's default httpx pool 0.15 at 64 (see
``benchmarks/api_throughput.py``). One POST and one JSON decode per request is all we need.

Answers are streamed by default (``stream: true``, OpenAI server-sent events): a request
that shows no first token within an adaptive deadline, or whose chunks stop for
``--idle-timeout`` seconds, is given up and retried, so a hung request costs seconds while a
long generation is never cut (``taxpraben.models.streaming`` explains the limits).
``--no-stream`` sends plain requests with ``--timeout`` as the whole answer's limit, for
servers without streaming. Both modes give the same text, usage and cache key.

Several replicas of one model: ``base_url`` may list several base URLs separated by commas.
Each attempt goes to the endpoint an :class:`~taxpraben.models.endpoints.EndpointPool`
chooses (fewest outstanding requests, weighted by measured throughput); an endpoint that
refuses connections or times out repeatedly is taken out and probed again later. The cache
key's ``endpoint`` is then the sorted, comma-joined list of the redacted URLs (one URL: the
URL itself, as before, so existing caches stay valid): runs over the same replica set share
cache entries.

The API key is read from the environment (``OPENAI_API_KEY`` or the variable named by
``--api-key-env``), sent only in the ``Authorization`` header, and never kept anywhere else:
``endpoint`` is the base URL without user info or query string, and server error messages
are scrubbed of the key before they are recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import ipaddress
import json
import os
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
    redact_url,
)
from taxpraben.models.endpoints import Endpoint, EndpointPool
from taxpraben.models.streaming import (
    FIRST_TOKEN_FLOOR_S,
    IDLE_TIMEOUT_S,
    FirstTokenDeadline,
    StreamAccumulator,
    StreamError,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
#: Longest server message kept in an item's error.
MAX_ERROR_CHARS = 500
#: Seconds the preflight (and the model listing after a 404) may take: a server that does
#: not open a connection in this time is reported as unreachable.
PROBE_TIMEOUT_S = 10.0
#: How often the first-token watchdog tightens (or relaxes) the deadlines of waiting attempts.
WATCH_INTERVAL_S = 0.25


def is_local_endpoint(base_url: str) -> bool:
    """True for endpoints that usually need no key: loopback, private or link-local
    addresses, ``localhost``, ``*.local`` and single-label hosts (a container's name)."""
    host = (urlsplit(base_url).hostname or "").lower()
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith((".localhost", ".local")) or "." not in host
    return address.is_loopback or address.is_private or address.is_link_local


def split_base_urls(base_url: str) -> list[str]:
    """The base URLs of a ``--base-url`` value: comma-separated, stripped of a trailing ``/``,
    duplicates dropped (first kept); each must start with http:// or https://."""
    urls: list[str] = []
    for part in base_url.split(","):
        url = part.strip().rstrip("/")
        if not url:
            continue
        if not url.startswith(("http://", "https://")):
            raise ModelSpecError(
                f"--base-url must start with http:// or https://, got {redact_url(url)!r}"
            )
        if url not in urls:
            urls.append(url)
    if not urls:
        raise ModelSpecError("--base-url names no URL")
    return urls


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


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
        concurrency: int = 16,
        timeout: float = 120.0,
        key_env: str = DEFAULT_KEY_ENV,
        stream: bool = True,
        idle_timeout: float = IDLE_TIMEOUT_S,
        first_token_floor: float = FIRST_TOKEN_FLOOR_S,
    ) -> None:
        urls = split_base_urls(base_url)
        self.model = model
        self.pool = EndpointPool([(u, redact_url(u)) for u in urls])
        #: The first endpoint: where ``/models`` is asked after a 404.
        self._base = urls[0]
        #: The environment variable the key was read from (named in messages; never the key).
        self.key_env = key_env
        self._models: list[str] | None = None
        self._models_lock = asyncio.Lock()
        #: Streaming: the first-token deadline (``timeout`` is its cap) and the idle limit.
        self.stream = stream
        self._idle = idle_timeout
        #: One adaptive first-token deadline per endpoint (replicas may differ in speed).
        self._first_tokens = [
            FirstTokenDeadline(cap=timeout, floor=min(first_token_floor, timeout)) for _ in urls
        ]
        self._first_token = self._first_tokens[0]
        #: Earlier first-token timeouts per request key (each doubles the next limit).
        self._strikes: dict[tuple[str, str, int], int] = {}
        #: Attempts waiting for their first token: (start, strikes, their asyncio.Timeout,
        #: their endpoint's deadline).
        self._waiting: dict[int, tuple[float, int, asyncio.Timeout, FirstTokenDeadline]] = {}
        self._watchdog: asyncio.Task[None] | None = None
        # One URL keeps the cache key it always had; several share one key (module doc).
        self.endpoint: str | None = (
            redact_url(base_url)
            if len(urls) == 1
            else ",".join(sorted(ep.name for ep in self.pool.endpoints))
        )
        self._api_key = api_key or None
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
        concurrency: int = 16,
        timeout: float = 120.0,
        stream: bool = True,
        idle_timeout: float = IDLE_TIMEOUT_S,
    ) -> OpenAIBackend:
        """Take the key from ``$api_key_env`` (default ``OPENAI_API_KEY``).

        A variable named with ``--api-key-env`` must be set. The default one may be absent
        only for a local endpoint (:func:`is_local_endpoint`: vLLM, SGLang and Ollama
        servers need no key); for any other endpoint a missing key is an error here,
        before anything is sent.
        """
        env_name = api_key_env or DEFAULT_KEY_ENV
        key = os.environ.get(env_name)
        if api_key_env and not key:
            raise ModelSpecError(
                f"--api-key-env {env_name}: environment variable {env_name} is not set"
            )
        url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        if not key and not all(is_local_endpoint(u) for u in split_base_urls(url)):
            raise ModelSpecError(
                f"no API key for {redact_url(url)}: environment variable {env_name} is not set. "
                f"Set it, or name the variable that holds the key with --api-key-env "
                f"(local endpoints such as http://localhost:8000/v1 need none)."
            )
        return cls(
            model, base_url=url, api_key=key, concurrency=concurrency, timeout=timeout,
            key_env=env_name, stream=stream, idle_timeout=idle_timeout,
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

    def request_body(self, request: Request, config: GenerationConfig) -> dict[str, Any]:
        """The JSON body for one request (the extra ``gen_kwargs`` fields override ours)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(request.messages),
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "seed": request.seed,
        }
        if config.top_p is not None:
            body["top_p"] = config.top_p
        body.update(config.gen_kwargs)
        return body

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        return [await self.complete(r, config) for r in requests]

    async def complete(
        self, request: Request, config: GenerationConfig
    ) -> Completion | BackendError:
        """One attempt; the outcome as a Completion or a BackendError (never raises for I/O)."""
        if self.stream:
            return await self._complete_streamed(request, config)
        return await self._complete_whole(request, config)

    async def _complete_streamed(
        self, request: Request, config: GenerationConfig
    ) -> Completion | BackendError:
        """One streamed POST under the first-token and idle deadlines."""
        body = self.request_body(request, config)
        body["stream"] = True
        body.setdefault("stream_options", {"include_usage": True})
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        session = self._session_or_new()
        loop = asyncio.get_running_loop()
        strikes = self._strikes.get(request.key, 0)
        start = loop.time()
        ep = self.pool.choose(start)
        in_flight = ep.outstanding
        first_token = self._first_tokens[ep.index]
        first_limit = first_token.limit(strikes)
        stream = StreamAccumulator()
        token = object()
        status, raw, retry_after = 200, b"", None
        # No total limit from aiohttp: our deadlines govern; only the connect is bounded.
        no_total = aiohttp.ClientTimeout(total=None, sock_connect=PROBE_TIMEOUT_S)
        try:
            async with asyncio.timeout_at(start + first_limit) as deadline:
                self._waiting[id(token)] = (start, strikes, deadline, first_token)
                self._start_watchdog()
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
                            async for data in resp.content.iter_any():
                                *lines, pending = (pending + data).split(b"\n")
                                finished = stream.feed_lines(lines)
                                if stream.started and id(token) in self._waiting:
                                    del self._waiting[id(token)]
                                    first_token.observe(loop.time() - start)
                                    self._strikes.pop(request.key, None)
                                if finished:
                                    break
                                if stream.started:
                                    deadline.reschedule(loop.time() + self._idle)
                            else:
                                stream.feed(pending)  # a last line without its newline
                finally:
                    self._waiting.pop(id(token), None)
        except asyncio.CancelledError:
            self.pool.finish(ep, loop.time())  # the run stopped: no longer outstanding
            raise
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            self.pool.finish(ep, loop.time(), connection_failed=True)
            return self._unreachable(exc, ep)
        except TimeoutError:
            self.pool.finish(ep, loop.time(), connection_failed=not stream.started)
            if not stream.started:
                self._strikes[request.key] = strikes + 1
                waited = loop.time() - start
                return BackendError(
                    f"no first token after {waited:.1f} s (first-token deadline; capped by --timeout "
                    f"{first_token.cap:g} s){self._at(ep)}",
                    retryable=True,
                    waited=True,
                )
            return BackendError(
                f"stream stalled: no chunk for {self._idle:g} s (--idle-timeout)", retryable=True
            )
        except StreamError as exc:
            self.pool.finish(ep, loop.time(), answered=True)
            return BackendError(self._scrub(str(exc)), retryable=True)
        except aiohttp.ClientError as exc:
            self.pool.finish(ep, loop.time(), connection_failed=True)
            return BackendError(
                f"connection failed: {type(exc).__name__}: {exc}{self._at(ep)}", retryable=True
            )
        if status != 200:
            self.pool.finish(ep, loop.time(), answered=True)
            return await self._http_error(status, raw, retry_after, ep)
        if not stream.complete:
            self.pool.finish(ep, loop.time(), answered=True)
            return BackendError(
                "stream ended before the answer was complete (no finish reason, no [DONE])",
                retryable=True,
            )
        latency = loop.time() - start
        self.pool.finish(ep, loop.time(), latency=latency, in_flight=in_flight)
        return Completion(
            text=stream.text,
            reasoning=stream.reasoning_text,
            usage=stream.usage,
            latency_s=round(latency, 4),
            finish_reason=stream.finish_reason,
        )

    def _start_watchdog(self) -> None:
        if self._watchdog is None or self._watchdog.done():
            self._watchdog = asyncio.get_running_loop().create_task(self._watch_first_tokens())

    async def _watch_first_tokens(self) -> None:
        """Move the deadline of every attempt still waiting for its first token to what the
        adaptive limit says now (a hung attempt started before anything was learned is cut
        as soon as the endpoint's normal first-token time is known)."""
        while self._waiting:
            await asyncio.sleep(WATCH_INTERVAL_S)
            limits: dict[tuple[int, int], float] = {}
            for start, strikes, deadline, first_token in list(self._waiting.values()):
                which = (id(first_token), strikes)
                if which not in limits:
                    limits[which] = first_token.limit(strikes)
                # An expiring deadline refuses: its attempt is being given up anyway.
                with contextlib.suppress(RuntimeError):
                    deadline.reschedule(start + limits[which])

    async def _complete_whole(
        self, request: Request, config: GenerationConfig
    ) -> Completion | BackendError:
        """One plain POST under the per-attempt ``--timeout``."""
        data = json.dumps(self.request_body(request, config), ensure_ascii=False).encode("utf-8")
        session = self._session_or_new()
        start = time.perf_counter()
        ep = self.pool.choose(time.monotonic())
        in_flight = ep.outstanding
        try:
            async with session.post(ep.url + "/chat/completions", data=data) as resp:
                raw = await resp.read()
                status = resp.status
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
        except asyncio.CancelledError:
            self.pool.finish(ep, time.monotonic())  # the run stopped: no longer outstanding
            raise
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            self.pool.finish(ep, time.monotonic(), connection_failed=True)
            return self._unreachable(exc, ep)
        except asyncio.TimeoutError:
            self.pool.finish(ep, time.monotonic(), connection_failed=True)
            return BackendError(
                f"timed out after {self._timeout.total:g} s (per-attempt --timeout){self._at(ep)}",
                retryable=True,
            )
        except aiohttp.ClientError as exc:
            self.pool.finish(ep, time.monotonic(), connection_failed=True)
            return BackendError(
                f"connection failed: {type(exc).__name__}: {exc}{self._at(ep)}", retryable=True
            )
        latency = time.perf_counter() - start
        if status != 200:
            self.pool.finish(ep, time.monotonic(), answered=True)
            return await self._http_error(status, raw, retry_after, ep)
        outcome = self._parse(raw, latency)
        if isinstance(outcome, Completion):
            self.pool.finish(ep, time.monotonic(), latency=latency, in_flight=in_flight)
        else:
            self.pool.finish(ep, time.monotonic(), answered=True)
        return outcome

    def _at(self, ep: Endpoint) -> str:
        """`` at URL`` naming the endpoint of a failed attempt when there are several."""
        return f" at {ep.name}" if len(self.pool) > 1 else ""

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
        if self._api_key:
            return (
                f"{where} refused the API key read from ${self.key_env} ({message}). "
                f"Check the key, or name the variable that holds the right one with --api-key-env."
            )
        return (
            f"{where} requires an API key and none was sent: ${self.key_env} is not set "
            f"({message}). Set it, or name the variable that holds the key with --api-key-env."
        )

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
                self._models = _model_ids(raw) if status == 200 else []
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
        now = time.monotonic()
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
        return _model_ids(raw) if status == 200 else None

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _server_message(self, raw: bytes) -> str:
        text = raw.decode("utf-8", errors="replace")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            err = obj.get("error", obj)
            if isinstance(err, dict) and err.get("message"):
                text = str(err["message"])
            elif isinstance(err, str):
                text = err
        return self._scrub(text.strip()[:MAX_ERROR_CHARS]) or "(empty body)"

    def _parse(self, raw: bytes, latency: float) -> Completion | BackendError:
        try:
            obj = json.loads(raw)
            choice = obj["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            # A truncated or garbled 200 is a transport problem, worth another attempt.
            snippet = self._scrub(raw[:120].decode("utf-8", errors="replace"))
            return BackendError(f"malformed response body: {snippet!r}", retryable=True)
        content = message.get("content")
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        usage_obj = obj.get("usage") if isinstance(obj, dict) else None
        usage = None
        if isinstance(usage_obj, dict):
            usage = {
                k: int(usage_obj[k])
                for k in ("prompt_tokens", "completion_tokens")
                if isinstance(usage_obj.get(k), (int, float))
            }
        return Completion(
            text=content if isinstance(content, str) else "",
            reasoning=reasoning if isinstance(reasoning, str) else None,
            usage=usage or None,
            latency_s=round(latency, 4),
            finish_reason=choice.get("finish_reason"),
        )

    async def aclose(self) -> None:
        if self._watchdog is not None and not self._watchdog.done():
            self._watchdog.cancel()
        self._watchdog = None
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


def _model_ids(raw: bytes) -> list[str]:
    """The ids of an OpenAI ``/models`` listing (``{"data": [{"id": ...}]}``); [] otherwise."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return []
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
