"""``openai:MODEL``: any OpenAI-compatible chat completions endpoint, over aiohttp directly.

Why aiohttp and not the ``openai`` SDK: measured on 2 cores against a 0.2 s mock, a bare
aiohttp client holds 0.96 of the ideal request rate at 64 in flight and 0.88 at 256, the SDK
on its aiohttp transport 0.86 and 0.37, and the SDK's default httpx pool 0.15 at 64 (see
``benchmarks/api_throughput.py``). One POST and one JSON decode per request is all we need.

The API key is read from the environment (``OPENAI_API_KEY`` or the variable named by
``--api-key-env``), sent only in the ``Authorization`` header, and never kept anywhere else:
``endpoint`` is the base URL without user info or query string, and server error messages
are scrubbed of the key before they are recorded.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
    redact_url,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
#: Longest server message kept in an item's error.
MAX_ERROR_CHARS = 500


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
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ModelSpecError(
                f"--base-url must start with http:// or https://, got {redact_url(base_url)!r}"
            )
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self.endpoint: str | None = redact_url(base_url)
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
    ) -> OpenAIBackend:
        """Take the key from ``$api_key_env`` (default ``OPENAI_API_KEY``).

        A variable named with ``--api-key-env`` must be set; the default one may be absent
        (local vLLM, SGLang and Ollama servers need no key).
        """
        env_name = api_key_env or DEFAULT_KEY_ENV
        key = os.environ.get(env_name)
        if api_key_env and not key:
            raise ModelSpecError(
                f"--api-key-env {env_name}: environment variable {env_name} is not set"
            )
        url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        return cls(model, base_url=url, api_key=key, concurrency=concurrency, timeout=timeout)

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
        """One POST; the outcome as a Completion or a BackendError (never raises for I/O)."""
        data = json.dumps(self.request_body(request, config), ensure_ascii=False).encode("utf-8")
        session = self._session_or_new()
        start = time.perf_counter()
        try:
            async with session.post(self._url, data=data) as resp:
                raw = await resp.read()
                status = resp.status
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
        except asyncio.TimeoutError:
            return BackendError(
                f"timed out after {self._timeout.total:g} s (per-attempt --timeout)", retryable=True
            )
        except aiohttp.ClientError as exc:
            return BackendError(f"connection failed: {type(exc).__name__}: {exc}", retryable=True)
        latency = time.perf_counter() - start
        if status != 200:
            message = f"HTTP {status}: {self._server_message(raw)}"
            retryable = status == 429 or status >= 500
            return BackendError(message, retryable=retryable, retry_after=retry_after)
        return self._parse(raw, latency)

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
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
