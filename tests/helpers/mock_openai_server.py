"""A mock OpenAI-compatible chat completions server for tests and benchmarks.

Real HTTP on 127.0.0.1 (aiohttp.web) with a fixed latency, failure injection and request
counters. Replies are a pure function of (model, messages, seed), so a run that retried
through failures produces exactly the predictions of a clean run.

In-process (pytest)::

    server = MockServer(MockConfig(latency=0.01, failure_rate=0.2))
    await server.start()            # server.base_url == "http://127.0.0.1:PORT/v1"
    ...
    await server.stop()

or from synchronous code, ``with MockServerThread(config) as server: ...``.

As a subprocess (or with :func:`spawn`)::

    python tests/helpers/mock_openai_server.py --port 0 --latency 0.2 --failure-rate 0.1

prints ``PORT <n>`` on its first stdout line, then serves until killed. ``GET /stats`` returns
the counters (with the arrival time of the first request, for time-to-first-request
figures), ``POST /reset`` zeroes them. ``GET /v1/models`` lists the models served;
``--api-key`` makes it answer 401 to a missing or wrong key, ``--models`` 404 to others.

Failure kinds: ``429`` (with ``Retry-After``), ``500``, ``hang`` (sleeps past any sane
per-attempt timeout), ``reset`` (drops the connection without an answer), ``malformed`` (200
with a body that is not JSON; streamed: a chunk that is not JSON), ``400`` (a client error,
not retryable; only when asked for), ``stall`` (streamed: the first chunk, then silence for
``hang_s``; only when asked for).

Streaming follows OpenAI: with ``"stream": true`` the answer comes as server-sent events,
``data: {chat.completion.chunk}`` lines (a role chunk, the reasoning and content in
pieces, a chunk with the finish reason), a usage chunk with empty ``choices`` when
``stream_options.include_usage`` is true (none with ``stream_without_usage``, as llama.cpp's
server), and ``data: [DONE]``. The joined text and the
usage equal the unstreamed answer's.

The Batch API follows OpenAI too: ``POST /v1/files`` (multipart upload), ``GET
/v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``POST
/v1/batches/{id}/cancel``. A batch runs in the background (``validating`` -> ``in_progress``
-> ``finalizing`` -> ``completed``), each line answered as the chat endpoint answers its body
(``failure_rate`` and ``truncate_rate`` included: a failed line goes to the error file), one
line each ``batch_line_s``; ``batch_expire_after`` makes it expire once that share of its
lines is done (the rest go to the error file as ``batch_expired``, as OpenAI writes them).
Its lines are counted apart from chat requests (``MockStats.batch_lines``, ``batch_answered``).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

#: Failure kinds injected at random when ``failure_rate`` > 0 (400 only when listed).
RETRYABLE_FAILURES = ("429", "500", "hang", "reset", "malformed")
#: Chat request bodies kept in ``MockStats.bodies`` (the last ones).
KEPT_BODIES = 100


@dataclass
class MockConfig:
    """How the mock behaves; every field can be changed while it runs."""

    latency: float = 0.0
    failure_rate: float = 0.0
    failure_kinds: tuple[str, ...] = RETRYABLE_FAILURES
    retry_after: float = 0.01
    hang_s: float = 30.0
    seed: int = 1234
    #: Also return ``reasoning_content`` beside the answer.
    reasoning: bool = False
    #: Content of every reply; None means a deterministic digest of the request.
    fixed_reply: str | None = None
    #: Streamed answers carry no usage chunk even when ``stream_options.include_usage`` asks
    #: for one (llama.cpp's OpenAI-compatible server).
    stream_without_usage: bool = False
    #: When set, requests without ``Authorization: Bearer <api_key>`` get a 401.
    api_key: str | None = None
    #: When set, the only models served (others get a 404, as OpenAI's model_not_found);
    #: ``GET /v1/models`` lists them (or ``["mock"]`` when None).
    models: tuple[str, ...] | None = None
    #: When set, at most this many requests are served at once (each for ``latency``
    #: seconds), the others wait their turn: a replica with a bounded batch, whose ideal
    #: rate is ``capacity / latency`` requests per second.
    capacity: int | None = None
    #: When set, the server dies (:meth:`MockServer.die`) once it has answered this many
    #: chat requests: a replica killed mid-run, at a point that does not depend on timing.
    die_after: int | None = None
    #: Share of answers cut at ``max_tokens`` (chosen by the request's digest, so the same
    #: requests are cut every time): half the reply, ``finish_reason: length``, and
    #: ``completion_tokens`` = the request's ``max_tokens``.
    truncate_rate: float = 0.0
    #: Batch API: when set, a batch expires once this share of its lines is done (0.5: the
    #: first half answered, the rest never run).
    batch_expire_after: float | None = None
    #: Batch API: seconds each line of a batch takes.
    batch_line_s: float = 0.0
    #: In-process only: called with each chat request's body as it arrives (on the server's
    #: loop); when it returns an event, the answer waits until the event is set (at most
    #: ``hang_s``): a test orders what two servers do by events, not by time.
    on_request: Callable[[dict[str, Any]], threading.Event | None] | None = None
    #: In-process only: the content of the reply to a body (None: as without it).
    reply_of: Callable[[dict[str, Any]], str | None] | None = None


@dataclass
class MockStats:
    """Counters: every request received, the ones answered, failures by kind."""

    requests: int = 0
    #: Requests that asked for a stream, and those of them that asked for a usage chunk.
    streamed: int = 0
    usage_requested: int = 0
    #: ``GET /v1/models`` calls (not counted in ``requests``).
    model_listings: int = 0
    #: Wall-clock times (``time.time()``, comparable across processes on one machine) at
    #: which the first chat request and the first model listing arrived; None before.
    first_request_at: float | None = None
    first_listing_at: float | None = None
    completed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    #: Request digests (model, messages, seed) of the answered requests, in order.
    answered: list[str] = field(default_factory=list)
    auth_headers: set[str] = field(default_factory=set)
    #: Batch API: files uploaded, batches created, lines run (answered or failed), lines that
    #: failed, and the digests of the lines answered (chat requests are counted above).
    files_uploaded: int = 0
    batches_created: int = 0
    batch_lines: int = 0
    batch_failed: int = 0
    batch_answered: list[str] = field(default_factory=list)
    #: The JSON bodies of the last :data:`KEPT_BODIES` chat requests, as received (oldest first).
    bodies: list[dict[str, Any]] = field(default_factory=list)
    #: Chat requests being served now, and the most served at once so far.
    in_flight: int = 0
    max_in_flight: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "model_listings": self.model_listings,
            "first_request_at": self.first_request_at,
            "first_listing_at": self.first_listing_at,
            "streamed": self.streamed,
            "completed": self.completed,
            "failures": dict(self.failures),
            "answered": self.answered,
            # Digests only: the server never hands a key back out.
            "files_uploaded": self.files_uploaded,
            "batches_created": self.batches_created,
            "batch_lines": self.batch_lines,
            "batch_failed": self.batch_failed,
            "batch_answered": self.batch_answered,
            "bodies": self.bodies,
            "max_in_flight": self.max_in_flight,
            "auth_sha256": sorted(
                hashlib.sha256(h.encode("utf-8")).hexdigest() for h in self.auth_headers
            ),
        }


def is_cut(digest: str, rate: float) -> bool:
    """Whether the answer of the request with this digest is cut (``truncate_rate``)."""
    return int(digest[:8], 16) / 0xFFFFFFFF < rate


def request_digest(body: dict[str, Any]) -> str:
    """A stable digest of what determines the reply: model, messages and seed."""
    key = json.dumps(
        [body.get("model"), body.get("messages"), body.get("seed")],
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def reply_for(body: dict[str, Any]) -> str:
    """The deterministic answer to a request."""
    digest = request_digest(body)
    return f"答案：{int(digest[:8], 16) % 1000}（{digest[:12]}）"


class MockServer:
    """The server; start and stop it inside a running event loop."""

    def __init__(self, config: MockConfig | None = None, port: int = 0) -> None:
        self.config = config or MockConfig()
        self.stats = MockStats()
        self.port = port
        self._slots: asyncio.Semaphore | None = None
        #: True once :meth:`die` was called.
        self.dead = False
        self._rng = random.Random(self.config.seed)
        self._runner: web.AppRunner | None = None
        self._hanging: set[asyncio.Task[Any]] = set()
        #: Batch API state: uploaded files (object, content), batches, their running tasks.
        self._files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._batch_tasks: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        self.stats = MockStats()
        self._rng = random.Random(self.config.seed)

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=1024**3)  # batch input files are large
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/reset", self._reset)
        app.router.add_post("/v1/files", self._upload_file)
        app.router.add_get("/v1/files/{file_id}/content", self._file_content)
        app.router.add_post("/v1/batches", self._create_batch)
        app.router.add_get("/v1/batches/{batch_id}", self._get_batch)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self._cancel_batch)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self._app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=2048)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[union-attr]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        for task in self._batch_tasks:
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def die(self) -> None:
        """Stop as a killed replica does: refuse new connections (the listening socket is
        closed) and drop every request on an open connection without an answer."""
        self.dead = True
        if self._runner is not None:
            for site in self._runner.sites:
                server = site._server  # type: ignore[attr-defined]
                if server is not None:
                    server.close()

    def _drop_if_dead(self, request: web.Request) -> None:
        if self.dead:
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError  # the connection is gone; aiohttp drops the handler

    def _answered(self, digest: str) -> None:
        self.stats.completed += 1
        self.stats.answered.append(digest)
        if self.config.die_after is not None and self.stats.completed >= self.config.die_after:
            self.die()

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.to_json())

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"ok": True})

    def _refuse_key(self, request: web.Request) -> web.Response | None:
        """A 401 as OpenAI words it when the key is missing or wrong; None when accepted."""
        key = self.config.api_key
        if key is None or request.headers.get("Authorization") == f"Bearer {key}":
            return None
        sent = request.headers.get("Authorization", "")
        shown = sent.removeprefix("Bearer ")[:3] + "***" if sent else "(none)"
        return web.json_response(
            {"error": {"message": f"Incorrect API key provided: {shown}", "code": "invalid_api_key"}},
            status=401,
        )

    async def _models(self, request: web.Request) -> web.Response:
        self.stats.model_listings += 1
        if self.stats.first_listing_at is None:
            self.stats.first_listing_at = time.time()
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        names = self.config.models or ("mock",)
        return web.json_response(
            {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "mock"} for n in names]}
        )

    def _pick_failure(self) -> str | None:
        cfg = self.config
        if cfg.failure_rate > 0 and self._rng.random() < cfg.failure_rate:
            return self._rng.choice(cfg.failure_kinds)
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        stats = self.stats
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            return await self._answer_chat(request)
        finally:
            stats.in_flight -= 1

    async def _answer_chat(self, request: web.Request) -> web.StreamResponse:
        cfg = self.config
        self._drop_if_dead(request)
        self.stats.requests += 1
        if self.stats.first_request_at is None:
            self.stats.first_request_at = time.time()
        auth = request.headers.get("Authorization")
        if auth:
            self.stats.auth_headers.add(auth)
        body = await request.json()
        self.stats.bodies.append(body)
        del self.stats.bodies[:-KEPT_BODIES]
        held = cfg.on_request(body) if cfg.on_request is not None else None
        if held is not None:
            await asyncio.get_running_loop().run_in_executor(None, held.wait, cfg.hang_s)
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        if cfg.models is not None and body.get("model") not in cfg.models:
            return web.json_response(
                {"error": {"message": f"The model `{body.get('model')}` does not exist", "code": "model_not_found"}},
                status=404,
            )
        failure = self._pick_failure()
        if cfg.capacity:
            if self._slots is None:
                self._slots = asyncio.Semaphore(cfg.capacity)
            async with self._slots:
                await asyncio.sleep(cfg.latency)
        elif cfg.latency:
            await asyncio.sleep(cfg.latency)
        self._drop_if_dead(request)
        streamed = bool(body.get("stream"))
        self.stats.streamed += streamed
        self.stats.usage_requested += bool(streamed and (body.get("stream_options") or {}).get("include_usage"))
        if failure is not None and not (failure == "stall" and streamed):
            self.stats.failures[failure] += 1
            return await self._fail(request, failure, streamed)
        digest = request_digest(body)
        payload = self.chat_payload(body)
        if streamed:
            if failure == "stall":
                self.stats.failures[failure] += 1
            return await self._stream(request, body, payload, stall=failure == "stall")
        self._answered(digest)
        return web.Response(
            body=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
            content_type="application/json",
        )

    def chat_payload(self, body: dict[str, Any]) -> dict[str, Any]:
        """The whole (unstreamed) answer to a chat request's body; a batch line gets the same."""
        cfg = self.config
        digest = request_digest(body)
        chosen = cfg.reply_of(body) if cfg.reply_of is not None else None
        content = chosen if chosen is not None else cfg.fixed_reply if cfg.fixed_reply is not None else reply_for(body)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if cfg.reasoning:
            message["reasoning_content"] = f"思考：{digest[:6]}"
        prompt_chars = sum(len(m.get("content") or "") for m in body.get("messages", []))
        finish, completion_tokens = "stop", len(content)
        if cfg.truncate_rate and is_cut(digest, cfg.truncate_rate):
            content = message["content"] = content[: max(1, len(content) // 2)]
            finish, completion_tokens = "length", int(body.get("max_tokens") or len(content))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_chars,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_chars + completion_tokens,
        }
        if cfg.reasoning:
            usage["completion_tokens_details"] = {"reasoning_tokens": len(message["reasoning_content"])}
        return {
            "id": f"chatcmpl-{digest[:16]}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }

    async def _stream(
        self, request: web.Request, body: dict[str, Any], payload: dict[str, Any], *, stall: bool
    ) -> web.StreamResponse:
        """``payload`` (an unstreamed answer) sent as OpenAI chunks; ``stall``: stop after one."""
        message = payload["choices"][0]["message"]
        base = {"id": payload["id"], "object": "chat.completion.chunk", "created": 0, "model": payload["model"]}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            event = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n\n"

        parts = [chunk({"role": "assistant", "content": ""})]
        if message.get("reasoning_content"):
            parts.append(chunk({"reasoning_content": message["reasoning_content"]}))
        content = message["content"]
        step = max(1, len(content) // 4)
        parts += [chunk({"content": content[i : i + step]}) for i in range(0, len(content), step)]
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if stall:
            resp = web.StreamResponse(headers=headers)
            await resp.prepare(request)
            await resp.write(parts[0] + parts[1])
            await asyncio.sleep(self.config.hang_s)
            return resp
        parts.append(chunk({}, payload["choices"][0]["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage") and not self.config.stream_without_usage:
            usage = {**base, "choices": [], "usage": payload["usage"]}
            parts.append(b"data: " + json.dumps(usage).encode("utf-8") + b"\n\n")
        parts.append(b"data: [DONE]\n\n")
        self._answered(request_digest(body))
        # One body: the chunks are ready at once, and the mock (which shares the benchmark's
        # cores) must not be the bottleneck; the client reads it as the same event stream.
        return web.Response(body=b"".join(parts), headers=headers)

    async def _fail(self, request: web.Request, kind: str, streamed: bool) -> web.StreamResponse:
        if kind == "429":
            return web.json_response(
                {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                status=429,
                headers={"Retry-After": str(self.config.retry_after)},
            )
        if kind == "500":
            return web.json_response({"error": {"message": "internal error"}}, status=500)
        if kind == "400":
            return web.json_response(
                {"error": {"message": "Invalid parameter: max_tokens is too large"}}, status=400
            )
        if kind == "malformed":
            if streamed:
                resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await resp.prepare(request)
                await resp.write(b'data: {"choices": [ {"delt\n\n')
                await resp.write_eof()
                return resp
            return web.Response(body=b'{"choices": [ {"mess', content_type="application/json")
        if kind in ("hang", "stall"):  # unstreamed, a stall is a hang
            await asyncio.sleep(self.config.hang_s)
            return web.json_response({"error": {"message": "hung"}}, status=504)
        if kind == "reset":
            transport = request.transport
            if transport is not None:
                transport.abort()
            # The connection is gone; aiohttp drops whatever we return.
            raise asyncio.CancelledError
        raise ValueError(f"unknown failure kind {kind!r}")

    # ------------------------------------------------------------ the Batch API

    @staticmethod
    def _api_error(message: str, status: int) -> web.Response:
        return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)

    async def _upload_file(self, request: web.Request) -> web.Response:
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return self._api_error("'file' is a required multipart field", 400)
        content = upload.file.read()
        file_id = f"file-{len(self._files) + 1:06d}"
        obj = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
               "filename": upload.filename, "purpose": str(form.get("purpose", ""))}  # fmt: skip
        self._files[file_id] = (obj, content)
        self.stats.files_uploaded += 1
        return web.json_response(obj)

    async def _file_content(self, request: web.Request) -> web.Response:
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        entry = self._files.get(request.match_info["file_id"])
        if entry is None:
            return self._api_error(f"No such File object: {request.match_info['file_id']}", 404)
        return web.Response(body=entry[1], content_type="application/octet-stream")

    async def _create_batch(self, request: web.Request) -> web.Response:
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        body = await request.json()
        if body.get("input_file_id") not in self._files:
            return self._api_error(f"Invalid 'input_file_id': {body.get('input_file_id')!r}", 400)
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return self._api_error("endpoint must be /v1/chat/completions and completion_window 24h", 400)
        now = int(time.time())
        batch_id = f"batch_{len(self._batches) + 1:06d}"
        batch: dict[str, Any] = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
            "input_file_id": body["input_file_id"], "completion_window": "24h", "status": "validating",
            "output_file_id": None, "error_file_id": None, "created_at": now, "in_progress_at": None,
            "expires_at": now + 86400, "finalizing_at": None, "completed_at": None, "failed_at": None,
            "expired_at": None, "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0}, "metadata": body.get("metadata"),
        }  # fmt: skip
        self._batches[batch_id] = batch
        self.stats.batches_created += 1
        task = asyncio.ensure_future(self._run_batch(batch))
        self._batch_tasks.add(task)
        task.add_done_callback(self._batch_tasks.discard)
        return web.json_response(batch)

    async def _get_batch(self, request: web.Request) -> web.Response:
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        batch = self._batches.get(request.match_info["batch_id"])
        if batch is None:
            return self._api_error(f"No batch found with id '{request.match_info['batch_id']}'", 404)
        return web.json_response(batch)

    async def _cancel_batch(self, request: web.Request) -> web.Response:
        refused = self._refuse_key(request)
        if refused is not None:
            return refused
        batch = self._batches.get(request.match_info["batch_id"])
        if batch is None:
            return self._api_error(f"No batch found with id '{request.match_info['batch_id']}'", 404)
        if batch["status"] in ("validating", "in_progress"):
            batch["status"], batch["cancelling_at"] = "cancelling", int(time.time())
        return web.json_response(batch)

    def _store_file(self, lines: list[dict[str, Any]], name: str) -> str | None:
        """A file of JSON lines kept for download (None when there are none, as OpenAI does)."""
        if not lines:
            return None
        content = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        file_id = f"file-{len(self._files) + 1:06d}"
        obj = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
               "filename": name, "purpose": "batch_output"}  # fmt: skip
        self._files[file_id] = (obj, content)
        return file_id

    def _batch_answer(self, line: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """One input line answered as the chat endpoint would: (answered, the output line)."""
        cfg, body = self.config, line["body"]
        digest = request_digest(body)
        self.stats.batch_lines += 1
        out: dict[str, Any] = {"id": f"batch_req_{digest[:16]}", "custom_id": line["custom_id"], "error": None}
        if cfg.models is not None and body.get("model") not in cfg.models:
            failure: str | None = "404"
        else:
            failure = self._pick_failure()
        if failure is None:
            self.stats.batch_answered.append(digest)
            out["response"] = {"status_code": 200, "request_id": digest[:12], "body": self.chat_payload(body)}
            return True, out
        self.stats.batch_failed += 1
        if failure == "malformed":  # an error without a response, as for a line the server lost
            out["response"] = None
            out["error"] = {"code": "server_error", "message": "The server had an error processing your request"}
            return False, out
        status, message = {"400": (400, "Invalid parameter: max_tokens is too large"),
                           "404": (404, f"The model `{body.get('model')}` does not exist"),
                           "429": (429, "Rate limit reached")}.get(failure, (500, "internal error"))  # fmt: skip
        out["response"] = {"status_code": status, "request_id": digest[:12], "body": {"error": {"message": message}}}
        return False, out

    async def _run_batch(self, batch: dict[str, Any]) -> None:
        """Validate, run every line (one each ``batch_line_s``), finalize: as OpenAI does."""
        await asyncio.sleep(0)
        content = self._files[batch["input_file_id"]][1].decode("utf-8")
        lines: list[dict[str, Any]] = []
        for number, text in enumerate(content.splitlines(), 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
                ok = isinstance(line, dict) and isinstance(line.get("custom_id"), str) and isinstance(line.get("body"), dict)
                ok = ok and line.get("method") == "POST" and line.get("url") == batch["endpoint"]
            except ValueError:
                ok = False
            if not ok:
                batch["status"], batch["failed_at"] = "failed", int(time.time())
                batch["errors"] = {"object": "list", "data": [
                    {"code": "invalid_request", "message": "Each line must be a request object for the batch's endpoint",
                     "param": None, "line": number}]}  # fmt: skip
                return
            lines.append(line)
        counts = batch["request_counts"]
        counts["total"] = len(lines)
        batch["status"], batch["in_progress_at"] = "in_progress", int(time.time())
        expire = self.config.batch_expire_after
        stop_at = int(len(lines) * expire) if expire is not None else None
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        done = 0
        for line in lines:
            if batch["status"] == "cancelling" or (stop_at is not None and done >= stop_at):
                break
            if self.config.batch_line_s:
                await asyncio.sleep(self.config.batch_line_s)
            answered, out = self._batch_answer(line)
            (outputs if answered else errors).append(out)
            counts["completed" if answered else "failed"] += 1
            done += 1
        final = "cancelled" if batch["status"] == "cancelling" else "expired" if done < len(lines) else "completed"
        code = {"cancelled": "batch_cancelled", "expired": "batch_expired"}.get(final)
        for line in lines[done:]:
            errors.append({"id": f"batch_req_{request_digest(line['body'])[:16]}", "custom_id": line["custom_id"],
                           "response": None, "error": {"code": code, "message": "This request could not be "
                           "executed before the batch ended."}})  # fmt: skip
        batch["status"], batch["finalizing_at"] = "finalizing", int(time.time())
        await asyncio.sleep(0)
        batch["output_file_id"] = self._store_file(outputs, f"{batch['id']}_output.jsonl")
        batch["error_file_id"] = self._store_file(errors, f"{batch['id']}_error.jsonl")
        batch["status"], batch[f"{final}_at"] = final, int(time.time())


class MockServerThread:
    """The server on its own event loop thread, for synchronous tests."""

    def __init__(self, config: MockConfig | None = None) -> None:
        self.server = MockServer(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> MockServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(10)
        return self.server

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def spawn(*args: str) -> tuple[subprocess.Popen[str], str]:
    """Start this server as a subprocess (``args``: its options); returns it and its root URL.

    The root URL is ``http://127.0.0.1:PORT``; the API lives under ``/v1``.
    """
    proc = subprocess.Popen(
        [sys.executable, __file__, "--port", "0", *args], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"mock server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


def server_call(root: str, path: str, method: str = "GET") -> Any:
    """``GET /stats`` or ``POST /reset`` on a server started with :func:`spawn`."""
    data = b"" if method == "POST" else None
    request = urllib.request.Request(root + path, method=method, data=data)
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (printed).")
    p.add_argument("--latency", type=float, default=0.0, help="Seconds before each reply.")
    p.add_argument("--failure-rate", type=float, default=0.0)
    p.add_argument("--failure-kinds", default=",".join(RETRYABLE_FAILURES))
    p.add_argument("--retry-after", type=float, default=0.01)
    p.add_argument("--hang-s", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--reasoning", action="store_true")
    p.add_argument("--api-key", default=None, help="Require this key (401 otherwise).")
    p.add_argument("--models", default=None, help="Comma-separated models served (404 otherwise).")
    p.add_argument("--capacity", type=int, default=None, help="Requests served at once (others wait).")
    p.add_argument("--exit-after", type=int, default=None,
                   help="Exit (status 3) once this many chat requests were answered: a server that dies mid-run.")
    return p.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    config = MockConfig(
        latency=args.latency,
        failure_rate=args.failure_rate,
        failure_kinds=tuple(k for k in args.failure_kinds.split(",") if k),
        retry_after=args.retry_after,
        hang_s=args.hang_s,
        seed=args.seed,
        reasoning=args.reasoning,
        api_key=args.api_key,
        models=tuple(args.models.split(",")) if args.models else None,
        capacity=args.capacity,
        die_after=args.exit_after,
    )
    server = MockServer(config, port=args.port)
    await server.start()
    print(f"PORT {server.port}", flush=True)
    try:
        while not server.dead:
            await asyncio.sleep(0.02)
        print("EXITING (--exit-after)", flush=True)
        os._exit(3)
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    try:
        # uvloop is not a dependency; the default loop is what users get too.
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
