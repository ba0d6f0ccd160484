"""The OpenAI chat completions format, as sent and as answered, without any I/O.

What :class:`~taxpraben.models.openai.OpenAIBackend` puts on the wire (the request body)
and how it reads what comes back: a whole answer, the message of an error answer, a
``Retry-After`` header and a ``GET /models`` listing. Streamed answers (server-sent events)
are read by :class:`~taxpraben.models.streaming.StreamAccumulator`.

Every text taken from a server passes through ``scrub`` (the backend's: it blanks the API
key) before it can end up in an error message.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from taxpraben.models.base import BackendError, Completion, GenerationConfig, Request

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

#: Longest server message kept in an item's error.
MAX_ERROR_CHARS = 500


def chat_body(model: str, request: Request, config: GenerationConfig) -> JSONObject:
    """The JSON body for one request (the extra ``gen_kwargs`` fields override ours)."""
    body: JSONObject = {
        "model": model,
        "messages": list(request.messages),
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "seed": request.seed,
    }
    if config.top_p is not None:
        body["top_p"] = config.top_p
    body.update(config.gen_kwargs)
    return body


def encode_body(body: JSONObject) -> bytes:
    """The body as it is sent: UTF-8 JSON, non-ASCII text as it is."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


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


def server_message(raw: bytes, scrub: Callable[[str], str]) -> str:
    """The message of an error answer: OpenAI's ``{"error": {"message": ...}}`` (or an
    ``error`` string), else the body itself; shortened, scrubbed, never empty."""
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
    return scrub(text.strip()[:MAX_ERROR_CHARS]) or "(empty body)"


def _count(value: JSONValue) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def usage_counts(usage: JSONValue) -> dict[str, int] | None:
    """The token counts of an OpenAI-style ``usage`` object, flat: ``prompt_tokens``,
    ``completion_tokens``, and where the API gives them ``reasoning_tokens`` (OpenAI's
    ``completion_tokens_details.reasoning_tokens``; also a top-level ``reasoning_tokens``)
    and ``cached_prompt_tokens`` (OpenAI's ``prompt_tokens_details.cached_tokens``,
    DeepSeek's ``prompt_cache_hit_tokens``); None when it has none of them."""
    if not isinstance(usage, dict):
        return None
    out = {k: v for k in ("prompt_tokens", "completion_tokens") if (v := _count(usage.get(k))) is not None}
    details = usage.get("completion_tokens_details")
    reasoning = _count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    reasoning = reasoning if reasoning is not None else _count(usage.get("reasoning_tokens"))
    if reasoning:
        out["reasoning_tokens"] = reasoning
    prompt_details = usage.get("prompt_tokens_details")
    cached = _count(prompt_details.get("cached_tokens")) if isinstance(prompt_details, dict) else None
    cached = cached if cached is not None else _count(usage.get("prompt_cache_hit_tokens"))
    if cached:
        out["cached_prompt_tokens"] = cached
    return out or None


def parse_completion(raw: bytes, latency: float, scrub: Callable[[str], str]) -> Completion | BackendError:
    """A whole (unstreamed) 200 answer as a Completion; a body that is not one is a
    retryable BackendError."""
    try:
        obj = json.loads(raw)
        choice = obj["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        # A truncated or garbled 200 is a transport problem, worth another attempt.
        snippet = scrub(raw[:120].decode("utf-8", errors="replace"))
        return BackendError(f"malformed response body: {snippet!r}", retryable=True)
    content = message.get("content")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    usage = usage_counts(obj.get("usage") if isinstance(obj, dict) else None)
    return Completion(
        text=content if isinstance(content, str) else "",
        reasoning=reasoning if isinstance(reasoning, str) else None,
        usage=usage or None,
        latency_s=round(latency, 4),
        finish_reason=choice.get("finish_reason"),
    )


def model_ids(raw: bytes) -> list[str]:
    """The ids of an OpenAI ``/models`` listing (``{"data": [{"id": ...}]}``); [] otherwise."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return []
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
