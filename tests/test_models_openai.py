"""The openai: backend against the mock server: one attempt, classified outcomes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mock_openai_server import MockConfig, MockServer, reply_for
from taxpraben.data.records import Record
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    build_request,
    create_backend,
    parse_gen_kwargs,
    redact_url,
    split_spec,
)
from taxpraben.models.openai import OpenAIBackend, parse_retry_after

CONFIG = GenerationConfig(max_tokens=64, seed_base=7)
REQUEST = build_request(Record(task="TaxCalc", id="1", query="计算应纳税额", answer="1"), 2, CONFIG)


def with_server(config: MockConfig, body: Callable[[MockServer], Awaitable[Any]]) -> Any:
    async def scenario() -> Any:
        server = MockServer(config)
        await server.start()
        try:
            return await body(server)
        finally:
            await server.stop()

    return asyncio.run(scenario())


def one_attempt(config: MockConfig, *, timeout: float = 5.0, **kw: Any) -> tuple[Any, MockServer]:
    async def body(server: MockServer) -> tuple[Any, MockServer]:
        backend = OpenAIBackend("qwen-plus", base_url=server.base_url, timeout=timeout, **kw)
        try:
            [outcome] = await backend.generate([REQUEST], CONFIG)
        finally:
            await backend.aclose()
        return outcome, server

    return with_server(config, body)


def test_success_records_text_reasoning_usage_latency() -> None:
    outcome, server = one_attempt(MockConfig(reasoning=True))
    assert isinstance(outcome, Completion)
    body = {"model": "qwen-plus", "messages": list(REQUEST.messages), "seed": 9}
    assert outcome.text == reply_for(body)
    assert outcome.reasoning and outcome.reasoning.startswith("思考")
    assert outcome.reasoning not in outcome.text
    assert outcome.usage == {
        "prompt_tokens": len("计算应纳税额"),
        "completion_tokens": len(outcome.text),
    }
    assert outcome.latency_s is not None and outcome.latency_s >= 0
    assert outcome.finish_reason == "stop"
    assert server.stats.requests == 1


def test_request_body_sends_seed_and_passes_extra_fields() -> None:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    config = GenerationConfig(max_tokens=10, seed_base=100, gen_kwargs={"enable_thinking": False})
    body = backend.request_body(build_request(REQUEST.record, 3, config), config)
    assert body["seed"] == 103
    assert body["max_tokens"] == 10 and body["temperature"] == 0
    assert "top_p" not in body
    assert body["enable_thinking"] is False
    assert body["messages"] == [{"role": "user", "content": "计算应纳税额"}]
    top = GenerationConfig(top_p=0.9)
    assert backend.request_body(REQUEST, top)["top_p"] == 0.9


@pytest.mark.parametrize(
    ("kind", "retryable", "needle"),
    [
        ("429", True, "HTTP 429: Rate limit reached"),
        ("500", True, "HTTP 500: internal error"),
        ("malformed", True, "malformed response body"),
        ("reset", True, "connection failed"),
        ("hang", True, "timed out after 0.2 s"),
        ("400", False, "HTTP 400: Invalid parameter: max_tokens is too large"),
    ],
)
def test_failures_are_classified(kind: str, retryable: bool, needle: str) -> None:
    config = MockConfig(failure_rate=1.0, failure_kinds=(kind,), retry_after=1.5, hang_s=2.0)
    outcome, _ = one_attempt(config, timeout=0.2)
    assert isinstance(outcome, BackendError)
    assert outcome.retryable is retryable
    assert needle in outcome.message
    if kind == "429":
        assert outcome.retry_after == 1.5


def test_key_is_sent_as_bearer_and_scrubbed_from_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_VENDOR_KEY", "sk-secret-123")
    backend = create_backend(
        "openai:m", base_url="http://127.0.0.1:9/v1", api_key_env="MY_VENDOR_KEY"
    )
    assert isinstance(backend, OpenAIBackend)
    assert "sk-secret-123" not in backend._server_message(
        b'{"error": {"message": "bad key sk-secret-123"}}'
    )

    async def body(server: MockServer) -> None:
        b = OpenAIBackend("m", base_url=server.base_url, api_key="sk-secret-123")
        await b.generate([REQUEST], CONFIG)
        await b.aclose()

    async def check(server: MockServer) -> set[str]:
        await body(server)
        return server.stats.auth_headers

    assert with_server(MockConfig(), check) == {"Bearer sk-secret-123"}


def test_named_key_variable_must_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ABSENT_KEY_VAR", raising=False)
    with pytest.raises(ModelSpecError, match="ABSENT_KEY_VAR is not set"):
        create_backend("openai:m", api_key_env="ABSENT_KEY_VAR")


def test_default_key_may_be_absent_for_local_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = create_backend("openai:m", base_url="http://localhost:8000/v1")
    assert "Authorization" not in backend._headers  # type: ignore[attr-defined]


def test_endpoint_is_recorded_without_secrets() -> None:
    backend = OpenAIBackend("m", base_url="https://user:pw@api.example.com:8443/v1/?key=sk-1#x")
    assert backend.endpoint == "https://api.example.com:8443/v1"
    assert redact_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"


def test_retry_after_header_forms() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_spec_and_gen_kwargs_errors() -> None:
    assert split_spec("openai:deepseek-chat") == ("openai", "deepseek-chat")
    assert split_spec("hf:Qwen/Qwen2.5-0.5B-Instruct") == ("hf", "Qwen/Qwen2.5-0.5B-Instruct")
    for bad in ("deepseek-chat", "openai:", "vllm:x"):
        with pytest.raises(ModelSpecError):
            split_spec(bad)
    assert parse_gen_kwargs('{"top_k": 5}') == {"top_k": 5}
    assert parse_gen_kwargs(None) == {}
    with pytest.raises(ModelSpecError, match="not valid JSON"):
        parse_gen_kwargs("{top_k: 5}")
    with pytest.raises(ModelSpecError, match="JSON object"):
        parse_gen_kwargs(json.dumps([1]))
    with pytest.raises(ModelSpecError, match="http"):
        OpenAIBackend("m", base_url="localhost:8000/v1")
