"""The openai: backend against the mock server: one attempt, classified outcomes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from helpers.mock_openai_server import MockConfig, MockServer, reply_for
from taxpraben.costs.tokens import approximate_prompt_tokens, approximate_tokens
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    build_request,
    parse_gen_kwargs,
    redact_url,
)
from taxpraben.models.factory import create_backend, split_spec
from taxpraben.models.openai import OpenAIBackend
from taxpraben.models.openai_wire import parse_retry_after
from taxpraben.records import Record

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
        "reasoning_tokens": len(outcome.reasoning or ""),  # completion_tokens_details.reasoning_tokens
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


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("kind", "retryable", "needle"),
    [
        ("429", True, "HTTP 429: Rate limit reached"),
        ("500", True, "HTTP 500: internal error"),
        ("malformed", True, "malformed"),
        ("reset", True, "connection failed"),
        ("hang", True, "timeout"),
        ("stall", True, "timeout"),
        ("400", False, "HTTP 400: Invalid parameter: max_tokens is too large"),
    ],
)
def test_failures_are_classified(kind: str, retryable: bool, needle: str, stream: bool) -> None:
    needles = {
        ("malformed", True): "malformed stream chunk",
        ("malformed", False): "malformed response body",
        ("hang", True): "no first token after 0.2 s",
        ("hang", False): "timed out after 0.2 s",
        # Streamed, a stall shows its first chunk and then nothing: the idle limit cuts it.
        ("stall", True): "stream stalled: no chunk for 0.3 s (--idle-timeout)",
        ("stall", False): "timed out after 0.2 s",
    }
    needle = needles.get((kind, stream), needle)
    config = MockConfig(failure_rate=1.0, failure_kinds=(kind,), retry_after=1.5, hang_s=2.0)
    # Only the kinds that test a limit get the short one: an immediate error (500, 429, ...)
    # must be classified as itself even when a loaded machine answers it late.
    timed = kind in ("hang", "stall")
    outcome, _ = one_attempt(config, timeout=0.2 if timed else 30.0, stream=stream,
                             idle_timeout=0.3 if timed else 30.0)
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


def test_streamed_and_plain_answers_are_the_same() -> None:
    """Same text, reasoning, usage and finish reason with and without streaming."""
    outcomes = {}
    for stream in (True, False):
        outcome, server = one_attempt(MockConfig(reasoning=True), stream=stream)
        assert isinstance(outcome, Completion) and server.stats.requests == 1
        outcomes[stream] = (outcome.text, outcome.reasoning, outcome.usage, outcome.finish_reason)
    body = {"model": "qwen-plus", "messages": list(REQUEST.messages), "seed": 9}
    assert outcomes[True] == outcomes[False]
    assert outcomes[True][0] == reply_for(body)
    assert outcomes[True][2] == {"prompt_tokens": len("计算应纳税额"), "completion_tokens": len(reply_for(body)),
                                 "reasoning_tokens": len(outcomes[True][1])}  # fmt: skip


def test_an_answer_streamed_without_usage_is_counted_by_taxpraben_and_marked() -> None:
    """llama.cpp's server sends no usage chunk on a stream: the backend counts the prompt and
    the answer (reasoning included) with the approximation and says so; a reported usage is
    kept as reported, unmarked."""
    outcome, server = one_attempt(MockConfig(reasoning=True, stream_without_usage=True))
    assert isinstance(outcome, Completion) and server.stats.usage_requested == 1
    answer = (outcome.reasoning or "") + outcome.text
    assert outcome.usage == {
        "prompt_tokens": approximate_prompt_tokens(REQUEST.messages),
        "completion_tokens": approximate_tokens(answer),
        "counted_by": "taxpraben: approximation (Qwen2.5-calibrated)",
    }
    assert outcome.usage["prompt_tokens"] == approximate_tokens("计算应纳税额") + 5 + 3  # ChatML's own tokens
    reported, _ = one_attempt(MockConfig(reasoning=True))
    assert reported.usage is not None and "counted_by" not in reported.usage


def test_streamed_request_asks_for_usage_and_a_plain_one_does_not_stream() -> None:
    for stream, expected in ((True, (1, 1)), (False, (0, 0))):
        _, server = one_attempt(MockConfig(), stream=stream)
        assert (server.stats.streamed, server.stats.usage_requested) == expected


def test_hung_request_is_cut_at_the_learned_deadline_not_the_cap() -> None:
    """16 quick answers teach the deadline; a hang started with them is cut at the floor."""
    reqs = [build_request(Record(task="TaxCalc", id=str(i), query=f"q{i}", answer="1"), 0, CONFIG) for i in range(17)]

    async def body(server: MockServer) -> list[Any]:
        backend = OpenAIBackend("m", base_url=server.base_url, timeout=30.0, first_token_floor=0.3, concurrency=32)
        original = server._pick_failure
        calls = iter(range(1000))
        server._pick_failure = lambda: "hang" if next(calls) == 0 else original()  # type: ignore[method-assign]
        try:
            return await asyncio.gather(*(backend.complete(r, CONFIG) for r in reqs))
        finally:
            await backend.aclose()

    outcomes = with_server(MockConfig(latency=0.01, hang_s=20.0), body)
    hung = [o for o in outcomes if isinstance(o, BackendError)]
    assert len(hung) == 1 and sum(isinstance(o, Completion) for o in outcomes) == 16
    # Cut, and so before the hang (20 s) ended, let alone the cap (30 s): the timing itself
    # is tested on a fake clock (test_the_first_token_watch_cuts_a_hung_attempt_...).
    assert hung[0].message.startswith("no first token after "), hung[0].message


def test_first_token_deadline_adapts_and_doubles_per_strike() -> None:
    from taxpraben.models.streaming import FirstTokenDeadline

    deadline = FirstTokenDeadline(cap=120.0, floor=5.0, multiplier=5.0, min_samples=4)
    assert deadline.limit() == 120.0  # nothing learned yet: the cap
    for t in (0.2, 0.25, 0.3, 0.21):
        deadline.observe(t)
    assert deadline.limit() == 5.0  # 5 x p95 (1.5 s) is below the floor
    assert deadline.limit(strikes=2) == 20.0
    for _ in range(40):
        deadline.observe(10.0)  # a slow endpoint: 5 x 10 s
    assert deadline.limit() == 50.0 and deadline.limit(strikes=3) == 120.0  # capped


def test_first_token_deadline_keeps_its_recent_times_in_order_as_they_drop_out() -> None:
    """The limit is asked once a request: the p95 is read from a list kept in order as times
    come and (past 256) drop out, and is the p95 of the recent times, as sorted each time."""
    import random

    from taxpraben.models.streaming import FirstTokenDeadline

    rng = random.Random(7)
    deadline = FirstTokenDeadline(cap=1000.0, floor=0.0, multiplier=1.0, min_samples=1)
    for _ in range(699):
        deadline.observe(rng.choice([rng.random() * 10, 2.5, 0.0]))
        ordered = sorted(deadline.recent)
        assert deadline.ordered == ordered
        assert deadline.limit() == ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    assert len(deadline.recent) == len(deadline.ordered) == 256


def _attempt_on(watch: Any, clock: Any, key: str, first_after: float | None, gaps: Sequence[float] = ()) -> Any:
    """One streamed attempt under ``watch`` on a fake clock: its first token after
    ``first_after`` clock seconds (None: never), then chunks after each of ``gaps`` (a gap
    of None: the stream stalls). Returns ("answered" | "cut", clock time, streaming)."""

    async def body() -> tuple[str, float, bool]:
        attempt = watch.attempt(key, 0)
        try:
            async with watch.backstop(attempt) as timeout:
                watch.wait(attempt, timeout)
                try:
                    for wait in (first_after, *gaps):
                        if wait is None:
                            await asyncio.Event().wait()  # hangs: only the watch ends it
                        await clock.sleep(wait)
                        watch.chunk(attempt, timeout)
                finally:
                    watch.done(attempt)
        except TimeoutError:
            if not attempt.streaming:
                watch.missed(attempt)
            return "cut", clock.now(), attempt.streaming
        return "answered", clock.now(), attempt.streaming

    return body()


def test_the_first_token_watch_cuts_a_hung_attempt_at_the_learned_deadline_on_its_clock() -> None:
    """16 quick first tokens (0.01 s) teach the deadline: 5 x p95 is below the floor (0.5 s),
    so a hang started with them is cut at the watchdog's tick at 0.5 s, not at the cap (30 s);
    its request's next attempt may wait twice as long (1.0 s)."""
    from helpers.fake_clock import FakeClock
    from taxpraben.models.first_token import WATCH_INTERVAL_S, FirstTokenWatch

    clock = FakeClock()
    watch = FirstTokenWatch(1, cap=30.0, floor=0.5, idle=10.0, clock=clock)

    async def scenario() -> list[tuple[str, float, bool]]:
        try:
            quick = [_attempt_on(watch, clock, f"q{i}", 0.01) for i in range(16)]
            outcomes = await asyncio.gather(_attempt_on(watch, clock, "hung", None), *quick)
            retried = await _attempt_on(watch, clock, "hung", None)
            return [*outcomes, retried]
        finally:
            watch.close()

    outcomes = asyncio.run(scenario())
    assert outcomes[0] == ("cut", 2 * WATCH_INTERVAL_S, False)
    assert all(o == ("answered", 0.01, True) for o in outcomes[1:17])
    assert outcomes[17] == ("cut", 0.5 + 1.0, False)  # one strike: 2 x 0.5 s, from 0.5


def test_the_watch_cuts_a_stalled_stream_after_idle_and_never_a_flowing_one() -> None:
    from helpers.fake_clock import FakeClock
    from taxpraben.models.first_token import FirstTokenWatch

    clock = FakeClock()
    watch = FirstTokenWatch(1, cap=30.0, floor=0.5, idle=1.0, clock=clock)

    async def scenario() -> list[tuple[str, float, bool]]:
        try:
            return list(await asyncio.gather(
                _attempt_on(watch, clock, "flows", 0.2, [0.9] * 20),  # 18 s of chunks 0.9 s apart
                _attempt_on(watch, clock, "stalls", 0.2, [0.5, None]),
            ))  # fmt: skip
        finally:
            watch.close()

    flows, stalls = asyncio.run(scenario())
    assert flows == ("answered", pytest.approx(0.2 + 18.0), True)
    assert stalls == ("cut", 1.75, True)  # last chunk at 0.7, due at 1.7: the tick at 1.75
