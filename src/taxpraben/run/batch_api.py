"""Batch APIs (``--batch``): the OpenAI batch file format and a client for ``/files`` and ``/batches``.

Providers answer a file of requests within 24 hours at half the price of the same requests
sent one by one (OpenAI's Batch API; DashScope and others speak the same format, and vLLM's
``python -m vllm.entrypoints.openai.run_batch`` reads it offline).

The input file has one JSON line per request::

    {"custom_id": "[\\"TaxCalc\\",\\"17\\",0]", "method": "POST", "url": "/v1/chat/completions",
     "body": BODY}

BODY is exactly what :meth:`~taxpraben.models.openai.OpenAIBackend.request_body` sends for a
plain (unstreamed) request. The ``custom_id`` is the JSON array text ``["TaxCalc","17",0]``
of (task, id, run) (:func:`custom_id`): any character of an id survives it, and an output file
maps back to the items with no other file (``taxpraben score --batch-output``).

The output and error files have one line per request::

    {"id": "batch_req_...", "custom_id": "...", "response": {"status_code": 200, "body": {...}},
     "error": null}

A 200 body is read by :func:`~taxpraben.models.openai_wire.parse_completion`, as a normal
answer is (text, reasoning, usage, finish reason); any other status, or an ``error`` object,
is a :class:`BatchLineError`, retryable unless the server called the request invalid (a 4xx
other than 408 and 429, as for a request sent alone). Lines the provider did not get to
(``batch_expired``, ``batch_cancelled``) are errors that say so (:attr:`BatchLineError.not_done`).

:class:`BatchClient` uploads the input (``POST /files``, purpose ``batch``), creates the batch
(``POST /batches``), polls ``GET /batches/{id}`` on a :class:`~taxpraben.clock.Clock` and
downloads the output and error files (``GET /files/{id}/content``). 401/403/404 stop at once
with the server's message; 429, 5xx and dropped connections are retried with the run's
back-off (:func:`~taxpraben.run.pacing.backoff_delay`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NamedTuple, TypedDict, Unpack

import aiohttp
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from taxpraben.atomic import write_lines_atomically
from taxpraben.clock import SYSTEM_CLOCK, Clock
from taxpraben.models.api_key import DEFAULT_KEY_ENV, key_refused, read_api_key
from taxpraben.models.base import BackendError, Completion, redact_url
from taxpraben.models.defaults import (
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_BACKOFF_MAX_S,
    DEFAULT_BATCH_POLL_S,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
)
from taxpraben.models.openai_wire import parse_completion, parse_retry_after, server_message
from taxpraben.results.predictions import Prediction
from taxpraben.run.pacing import Jitter, backoff_delay

if TYPE_CHECKING:
    from taxpraben.models.openai import OpenAIBackend
    from taxpraben.results.json_value import JSONObject, JSONValue

#: The endpoint every line of our batches asks for.
CHAT_URL = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
#: OpenAI's limits per batch: 50,000 requests and a 200 MB input file (a margin kept).
MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_BYTES = 190 * 1024 * 1024
#: Statuses after which a batch changes no more.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: Error codes of lines the provider never ran (the rest of an expired or cancelled batch).
NOT_DONE_CODES = frozenset({"batch_expired", "batch_cancelled"})
#: Seconds to open a connection to the endpoint.
CONNECT_TIMEOUT_S = 10.0


def _keep(text: str) -> str:
    return text


# ---------------------------------------------------------------- the file format


def custom_id(key: tuple[str, str, int]) -> str:
    """The ``custom_id`` of (task, id, run): the compact JSON array ``["TaxCalc","17",0]``."""
    task, item, run = key
    return json.dumps([task, item, run], ensure_ascii=False, separators=(",", ":"))


def parse_custom_id(text: str) -> tuple[str, str, int]:
    """(task, id, run) of a :func:`custom_id`; ValueError saying what it should look like."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(v, str) for v in value[:2])
        or isinstance(value[2], bool)
        or not isinstance(value[2], int)
        or value[2] < 0
    ):
        raise ValueError(
            f"custom_id {text!r} is not a taxpraben id: expected the JSON array [task, id, run], "
            'e.g. ["TaxCalc","17",0] (written by `taxpraben run --batch-file-only`)'
        )
    return value[0], value[1], value[2]


def input_line(cid: str, body: Mapping[str, JSONValue]) -> JSONObject:
    """One line of a batch input file: a chat completions request with its custom_id."""
    return {"custom_id": cid, "method": "POST", "url": CHAT_URL, "body": dict(body)}


def encode_line(line: Mapping[str, JSONValue]) -> str:
    """A line as written: UTF-8 JSON (non-ASCII text as it is), newline included."""
    return json.dumps(line, ensure_ascii=False) + "\n"


def write_batch_input(path: Path, lines: Iterable[Mapping[str, JSONValue]]) -> int:
    """Write a batch input file atomically; returns the number of lines."""
    return write_lines_atomically(path, (encode_line(line) for line in lines))


def split_input(
    lines: Sequence[str], max_lines: int = MAX_BATCH_REQUESTS, max_bytes: int = MAX_BATCH_BYTES
) -> list[list[str]]:
    """Encoded lines cut into files within a provider's limits (a line is never split)."""
    files: list[list[str]] = []
    size = 0
    for line in lines:
        n = len(line.encode("utf-8"))
        if not files or len(files[-1]) >= max_lines or (files[-1] and size + n > max_bytes):
            files.append([])
            size = 0
        files[-1].append(line)
        size += n
    return files


class BatchFileError(ValueError):
    """A batch output or error file that is not in the format; the message names file and line."""


class BatchLineError(BackendError):
    """A line of a batch answered with an error (or not run at all: :attr:`not_done`)."""

    def __init__(self, message: str, *, retryable: bool, code: str | None = None) -> None:
        super().__init__(message, retryable=retryable)
        #: The error's code (``batch_expired``, ``server_error``, ...) when the file gives one.
        self.code = code

    @property
    def not_done(self) -> bool:
        """True for a line the provider never ran (the batch expired or was cancelled first)."""
        return self.code in NOT_DONE_CODES


class BatchAnswer(NamedTuple):
    """One line of an output or error file, read."""

    custom_id: str
    outcome: Completion | BackendError
    #: The model named in a 200 body (None for errors).
    model: str | None


def _status_retryable(status: int) -> bool:
    return not (400 <= status < 500) or status in (408, 429)


def parse_batch_line(obj: JSONValue, where: str, scrub: Callable[[str], str] = _keep) -> BatchAnswer:
    """One decoded line of an output or error file; BatchFileError (naming ``where``, the
    file and line) for a line that is not one."""
    if not isinstance(obj, dict):
        raise BatchFileError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    cid = obj.get("custom_id")
    if not isinstance(cid, str):
        raise BatchFileError(f"{where}: 'custom_id' is missing or not a string")
    error, response = obj.get("error"), obj.get("response")
    if error:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        text = scrub(str(message or code or "error without a message"))
        label = f"{code}: {text}" if code and code != text else text
        return BatchAnswer(cid, BatchLineError(f"batch: {label}", retryable=True, code=code), None)
    if not isinstance(response, dict):
        raise BatchFileError(f"{where}: the line has neither a 'response' object nor an 'error'")
    status = response.get("status_code")
    if isinstance(status, bool) or not isinstance(status, int):
        raise BatchFileError(f"{where}: 'response.status_code' is missing or not an integer")
    body = response.get("body")
    raw = (body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)).encode("utf-8")
    if status != 200:
        message = f"HTTP {status}: {server_message(raw, scrub)}"
        return BatchAnswer(cid, BatchLineError(message, retryable=_status_retryable(status)), None)
    outcome = parse_completion(raw, 0.0, scrub)
    if isinstance(outcome, Completion):
        outcome.latency_s = None  # a batch has no per-request latency
        model = body.get("model") if isinstance(body, dict) else None
        return BatchAnswer(cid, outcome, model if isinstance(model, str) else None)
    return BatchAnswer(cid, BatchLineError(outcome.message, retryable=True), None)


def parse_batch_answers(
    lines: Iterable[str], source: str, scrub: Callable[[str], str] = _keep
) -> Iterator[tuple[str, BatchAnswer]]:
    """(``source:LINE``, answer) of each line of an output or error file (blank lines
    skipped); ``source`` names the file in errors. A custom_id given twice is refused."""
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BatchFileError(f"{where}: malformed JSON: {exc.msg} at column {exc.colno}") from exc
        answer = parse_batch_line(obj, where, scrub)
        if answer.custom_id in seen:
            raise BatchFileError(
                f"{where}: custom_id {answer.custom_id!r} was already given on line {seen[answer.custom_id]}"
            )
        seen[answer.custom_id] = lineno
        yield where, answer


def parse_batch_output(
    lines: Iterable[str], source: str, scrub: Callable[[str], str] = _keep
) -> dict[str, Completion | BackendError]:
    """custom_id -> Completion (a 200 line) or BackendError (an error line)."""
    return {a.custom_id: a.outcome for _, a in parse_batch_answers(lines, source, scrub)}


def _file_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise BatchFileError(f"{path}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from exc


def read_batch_output(path: Path) -> dict[str, Completion | BackendError]:
    """A batch output or error file as custom_id -> Completion | BackendError."""
    return parse_batch_output(_file_lines(path), str(path))


def batch_predictions(path: Path) -> list[Prediction]:
    """A batch output or error file as predictions (``score --batch-output``): each custom_id
    read back as (task, id, run); a 200 body gives the answer, its usage and finish reason, an
    error line a prediction with ``error``. BatchFileError names the file and line."""
    return [p for _, p in located_batch_predictions(path)]


def located_batch_predictions(path: Path) -> list[tuple[str, Prediction]]:
    """:func:`batch_predictions`, each with where it was read ("file:line")."""
    predictions: list[tuple[str, Prediction]] = []
    for where, answer in parse_batch_answers(_file_lines(path), str(path)):
        try:
            task, item, run = parse_custom_id(answer.custom_id)
        except ValueError as exc:
            raise BatchFileError(f"{where}: {exc}") from exc
        outcome = answer.outcome
        if isinstance(outcome, BackendError):
            predictions.append((where, Prediction(task, item, run, "", error=outcome.message)))
            continue
        predictions.append((where, Prediction(
            task, item, run, outcome.text, model=f"openai:{answer.model}" if answer.model else None,
            usage=outcome.usage, finish_reason=outcome.finish_reason, reasoning=outcome.reasoning,
        )))  # fmt: skip
    return predictions


# ---------------------------------------------------------------- the batch object


@dataclass(frozen=True)
class BatchState:
    """What ``GET /batches/{id}`` says of a batch."""

    id: str
    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    total: int = 0
    #: The batch's own errors (a failed batch: why), one line each.
    errors: tuple[str, ...] = ()

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_json(cls, obj: JSONValue, where: str) -> BatchState:
        """The batch object of an answer; BatchError when it is not one."""
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not isinstance(obj.get("status"), str):
            raise BatchError(f"{where} did not answer a batch object (no 'id' and 'status'): {str(obj)[:200]}")
        counts = given if isinstance(given := obj.get("request_counts"), dict) else {}
        errors = obj.get("errors")
        data = errors.get("data") if isinstance(errors, dict) else errors
        lines = tuple(
            (f"line {e['line']}: " if e.get("line") is not None else "")
            + ": ".join(str(e[k]) for k in ("code", "message") if e.get(k))
            for e in (data if isinstance(data, list) else [])
            if isinstance(e, dict)
        )

        def count(name: str) -> int:
            value = counts.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(
            id=obj["id"], status=obj["status"], input_file_id=obj.get("input_file_id"),
            output_file_id=obj.get("output_file_id") or None, error_file_id=obj.get("error_file_id") or None,
            completed=count("completed"), failed=count("failed"), total=count("total"), errors=lines,
        )  # fmt: skip


class BatchError(Exception):
    """A batch call that cannot succeed (the message says why); ``fatal``: a refused key or an
    endpoint without a batch API, which no retry and no other batch gets past."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.fatal = fatal


class BatchNotFound(BatchError):
    """The endpoint does not know a batch (another account or key, or it was deleted)."""


@dataclass(frozen=True)
class BatchRetry:
    """How patiently a batch call is retried (429, 5xx, dropped connections)."""

    max_retries: int = DEFAULT_MAX_RETRIES
    backoff_base: float = DEFAULT_BACKOFF_BASE_S
    backoff_max: float = DEFAULT_BACKOFF_MAX_S


# ---------------------------------------------------------------- the client


class ClientSettings(TypedDict, total=False):
    """The settings :meth:`BatchClient.for_backend` passes on to the client (its fields)."""

    clock: Clock
    retry: BatchRetry
    timeout: float
    rng: Jitter | None


@dataclass
class BatchClient:
    """The batch calls of one OpenAI-compatible endpoint over one aiohttp session.

    ``base_url`` ends in ``/v1`` (as ``--base-url``); the key goes only into the
    ``Authorization`` header and is blanked from every message. Waits (back-off, polls) are
    on ``clock``."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    key_env: str = DEFAULT_KEY_ENV
    clock: Clock = SYSTEM_CLOCK
    retry: BatchRetry = field(default_factory=BatchRetry)
    #: Seconds a read may wait for data (a file of 36K answers is read in pieces).
    timeout: float = DEFAULT_TIMEOUT_S
    rng: Jitter | None = None
    _session: aiohttp.ClientSession | None = field(default=None, init=False, repr=False)

    @classmethod
    def for_backend(cls, backend: OpenAIBackend, *, api_key_env: str | None = None, **settings: Unpack[ClientSettings]) -> BatchClient:
        """The client of ``backend``'s (first) endpoint, with the key the backend was built
        with (:func:`~taxpraben.models.api_key.read_api_key`: ModelSpecError when missing)."""
        url = backend.pool.endpoints[0].url
        key, env_name = read_api_key(api_key_env, url)
        return cls(url.rstrip("/"), key, env_name, **settings)

    @property
    def where(self) -> str:
        """The endpoint as messages show it (no user info, no query)."""
        return redact_url(self.base_url)

    def _scrub(self, text: str) -> str:
        return text.replace(self.api_key, "***") if self.api_key else text

    def _session_or_new(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_S, sock_read=self.timeout)
            self._session = aiohttp.ClientSession(headers=headers, timeout=timeout)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def __aenter__(self) -> BatchClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json_body: Mapping[str, JSONValue] | None = None,
        form: Callable[[], aiohttp.FormData] | None = None,
    ) -> bytes:
        """One call, retried on 429, 5xx and dropped connections; the body of a 2xx answer."""
        session = self._session_or_new()
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                data = form() if form is not None else None
                async with session.request(method, self.base_url + path, json=json_body, data=data) as resp:
                    status, raw = resp.status, await resp.read()
                    retry_after = parse_retry_after(resp.headers.get("Retry-After"))
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                problem = f"{method} {self.where}{path}: connection failed: {type(exc).__name__}: {exc}"
            else:
                if 200 <= status < 300:
                    return raw
                problem = self._refused(method, path, status, raw)
            if attempt > self.retry.max_retries:
                raise BatchError(self._scrub(f"{problem} [after {attempt} attempts]"))
            await self.clock.sleep(backoff_delay(attempt, self.retry, retry_after, rng=self.rng))

    def _refused(self, method: str, path: str, status: int, raw: bytes) -> str:
        """What a non-2xx answer says; raises BatchError unless it is worth retrying."""
        message = f"HTTP {status}: {server_message(raw, self._scrub)}"
        where = f"{method} {self.where}{path}"
        if status in (401, 403):
            raise BatchError(key_refused(where, message, self.key_env, key_sent=bool(self.api_key)), fatal=True)
        if status == 404 and path.startswith("/batches/"):
            batch_id = path.split("/")[2]
            raise BatchNotFound(f"batch {batch_id} is not known to {self.where} ({message})", fatal=True)
        if status == 404:
            raise BatchError(
                f"{where} answered {message}: this endpoint has no batch API (OpenAI, DashScope and others "
                "have one; a vLLM server has none: write the file with --batch-file-only and run vLLM's "
                "run_batch on it, or run without --batch)",
                fatal=True,
            )
        if status == 429 or status >= 500:
            return f"{where} answered {message}"
        raise BatchError(f"{where} answered {message}")

    async def _json(self, method: str, path: str, *, json_body: Mapping[str, JSONValue] | None = None,
                    form: Callable[[], aiohttp.FormData] | None = None) -> JSONValue:
        raw = await self._call(method, path, json_body=json_body, form=form)
        try:
            return json.loads(raw)
        except ValueError as exc:
            snippet = self._scrub(raw[:120].decode("utf-8", errors="replace"))
            raise BatchError(f"{method} {self.where}{path} answered a body that is not JSON: {snippet!r}") from exc

    async def upload(self, content: bytes, filename: str) -> str:
        """``POST /files`` (multipart, purpose ``batch``); the new file's id."""

        def form() -> aiohttp.FormData:
            data = aiohttp.FormData()
            data.add_field("purpose", "batch")
            data.add_field("file", content, filename=filename, content_type="application/jsonl")
            return data

        answer = await self._json("POST", "/files", form=form)
        if not isinstance(answer, dict) or not isinstance(answer.get("id"), str):
            raise BatchError(f"POST {self.where}/files did not answer a file object: {str(answer)[:200]}")
        return str(answer["id"])

    async def create(self, input_file_id: str, metadata: Mapping[str, str]) -> BatchState:
        """``POST /batches``: a batch of the uploaded file for the chat endpoint, within 24 h."""
        body = {"input_file_id": input_file_id, "endpoint": CHAT_URL, "completion_window": COMPLETION_WINDOW,
                "metadata": dict(metadata)}  # fmt: skip
        return BatchState.from_json(await self._json("POST", "/batches", json_body=body), f"{self.where}/batches")

    async def retrieve(self, batch_id: str) -> BatchState:
        """``GET /batches/{id}``; BatchNotFound when the endpoint does not know it."""
        path = f"/batches/{batch_id}"
        return BatchState.from_json(await self._json("GET", path), self.where + path)

    async def cancel(self, batch_id: str) -> BatchState:
        """``POST /batches/{id}/cancel`` (the lines done are kept, the rest are not run)."""
        path = f"/batches/{batch_id}/cancel"
        return BatchState.from_json(await self._json("POST", path), self.where + path)

    async def content(self, file_id: str) -> bytes:
        """``GET /files/{id}/content``."""
        return await self._call("GET", f"/files/{file_id}/content")

    async def wait(
        self,
        batch_ids: Sequence[str],
        *,
        poll_s: float = DEFAULT_BATCH_POLL_S,
        on_state: Callable[[BatchState], None] | None = None,
    ) -> dict[str, BatchState]:
        """Poll every batch each ``poll_s`` seconds (on the clock) until all are in a final
        state; ``on_state`` sees each state polled (the progress bar)."""
        states: dict[str, BatchState] = {}
        pending = list(dict.fromkeys(batch_ids))
        while pending:
            for batch_id in pending:
                states[batch_id] = await self.retrieve(batch_id)
                if on_state is not None:
                    on_state(states[batch_id])
            pending = [b for b in pending if not states[b].terminal]
            if pending:
                await self.clock.sleep(poll_s)
        return states

    async def answers(self, state: BatchState) -> dict[str, Completion | BackendError]:
        """custom_id -> outcome of every line a final batch has in its error and output files
        (a line in both: the output's)."""
        found: dict[str, Completion | BackendError] = {}
        for label, file_id in (("error", state.error_file_id), ("output", state.output_file_id)):
            if not file_id:
                continue
            raw = await self.content(file_id)
            source = f"{label} file {file_id} of batch {state.id}"
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise BatchFileError(f"{source}: not UTF-8 (offset {exc.start})") from exc
            found.update(parse_batch_output(text.splitlines(), source, self._scrub))
        return found


# ---------------------------------------------------------------- progress


class BatchProgress:
    """One bar per batch polled: its status and request counts (completed, failed, total)."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]batch[/bold] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}", style="dim"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._progress.start()

    def update(self, state: BatchState) -> None:
        """Show what one poll said of one batch."""
        description = f"{state.id} {state.status}"
        counts = f"completed {state.completed} · failed {state.failed} · total {state.total}"
        done, total = state.completed + state.failed, state.total or None
        if state.id not in self._tasks:
            self._tasks[state.id] = self._progress.add_task(description, total=total, counts=counts)
        self._progress.update(self._tasks[state.id], description=description, completed=done, total=total,
                              counts=counts)  # fmt: skip

    def stop(self) -> None:
        self._progress.stop()
