"""The completion cache: an embedded SQLite store, so no completion is paid for twice.

Each completion is committed the moment it arrives, in WAL mode with ``synchronous=NORMAL``:
a commit is an append to the write-ahead log (no fsync), so it costs tens of microseconds,
and a process killed at any moment (``kill -9``) loses only the requests still in flight;
SQLite's recovery never leaves a half-written row. (Power loss may drop the last commits
since the previous checkpoint, never corrupt the file.)

A commit is one INSERT of many rows and a lookup one row (the rows found, as one JSON
value): SQLite lets go of the GIL at each step of a statement, and beside a busy thread (a
run's scoring thread reading answers) each step waits to take it back. See
:meth:`CompletionCache.put_many` and :func:`_reads_in_one_step` for the figures.

:func:`cache_key` is the one place that decides when two requests are the same: backend
kind, model, endpoint (without secrets), messages, generation config (temperature, top_p,
max_tokens, extra request fields, seed) and run index. Final failures are never stored, so
a rerun retries them.

Schema (``schema_version`` 1)::

    CREATE TABLE completions (
        key TEXT PRIMARY KEY,          -- sha256 hex of the canonical request description
        backend TEXT, model TEXT,      -- for people inspecting the file
        task TEXT, item_id TEXT, run INTEGER,
        text TEXT NOT NULL,            -- the answer
        reasoning TEXT,                -- reasoning_content, kept apart
        usage TEXT,                    -- JSON {"prompt_tokens": .., "completion_tokens": ..}
        latency_s REAL, finish_reason TEXT,
        created_at REAL                -- unix time
    );
    CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE batches (             -- batch jobs (--batch): resume polling, never pay twice
        batch_id TEXT PRIMARY KEY,     -- the provider's id
        backend TEXT, model TEXT, endpoint TEXT,
        input_file_id TEXT,
        keys TEXT NOT NULL,            -- JSON list of the cache keys it answers
        custom_ids TEXT NOT NULL,      -- JSON {custom_id: cache key}
        status TEXT NOT NULL,          -- 'open' while it runs, else how it ended
        created_at REAL NOT NULL, finished_at REAL
    );

The ``batches`` table was added without a version change: opening an older file creates it
(``CREATE TABLE IF NOT EXISTS``), and an older taxpraben ignores it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.models.base import Completion, GenerationConfig, Request

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

#: A value SQLite stores in a column of the cache (TEXT, INTEGER, REAL or NULL).
SQLValue = str | int | float | None

CACHE_ENV = "TAXPRABEN_CACHE"
SCHEMA_VERSION = 1
_KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT,
    item_id TEXT,
    run INTEGER,
    text TEXT NOT NULL,
    reasoning TEXT,
    usage TEXT,
    latency_s REAL,
    finish_reason TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    endpoint TEXT,
    input_file_id TEXT,
    keys TEXT NOT NULL,
    custom_ids TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished_at REAL
);
"""

#: The status of a batch still to be collected (``batches.status``).
BATCH_OPEN = "open"

_COLUMNS = 12
_ROW_MARKS = "(" + ",".join("?" * _COLUMNS) + ")"
_ROW_LOOKUP = (
    "SELECT key, text, reasoning, usage, latency_s, finish_reason FROM completions WHERE key IN ({marks})"
)
#: The same rows as one JSON value: one step of one statement (see _reads_in_one_step). The
#: latency is written with 17 digits, which gives back the same double (JSON's own REAL
#: has 15).
_ONE_STEP_LOOKUP = (
    "SELECT json_group_array(json_array(key, text, reasoning, usage, "
    "CASE WHEN latency_s IS NULL THEN NULL ELSE printf('%!.17g', latency_s) END, finish_reason)) "
    "FROM completions WHERE key IN ({marks})"
)


def _rows_per_statement(conn: sqlite3.Connection) -> int:
    """Rows one INSERT may bind: SQLite's limit on parameters (999 before 3.32, 32766
    after; ``getlimit`` from Python 3.11), over the columns, at most 500."""
    getlimit = getattr(conn, "getlimit", None)
    limit = getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) if getlimit is not None else 999
    return max(1, min(limit // _COLUMNS, 500))


def _reads_in_one_step(conn: sqlite3.Connection) -> bool:
    """Whether lookups can take their rows as one JSON value (:data:`_ONE_STEP_LOOKUP`).

    A SELECT steps once per row, and each step lets go of the GIL: beside a busy thread, 80
    rows took 830 ms where one JSON value of them took 21 ms (measured). It needs SQLite's
    JSON functions (built in since 3.38, in most builds before) and a ``printf`` that writes
    a double back exactly; both are checked here, else the lookups go row by row."""
    probes = (0.1 + 0.2, 1 / 3, 2.0**-30 * 3, 1234.5678901234567)
    try:
        (blob,) = conn.execute(
            "SELECT json_array(" + ",".join("printf('%!.17g', ?)" for _ in probes) + ")", probes
        ).fetchone()
        return [float(v) for v in json.loads(blob)] == list(probes)
    except (sqlite3.Error, ValueError, TypeError):
        return False


@dataclass(frozen=True)
class BatchRecord:
    """One row of ``batches``: a batch job sent to a provider and what it answers."""

    batch_id: str
    backend: str
    model: str
    endpoint: str | None
    input_file_id: str | None
    #: The cache keys it answers, in the order of its input file.
    keys: tuple[str, ...]
    #: custom_id -> cache key (``models.batch.custom_id``).
    custom_ids: dict[str, str]
    status: str
    created_at: float


class CacheError(RuntimeError):
    """The cache file cannot be opened or is not a taxpraben cache (user-facing message)."""


_WAY_OUT = (
    "move the file aside or pass another --cache PATH "
    "(the completions it held will be requested again)"
)


def default_cache_path() -> Path:
    """``$TAXPRABEN_CACHE``, else ``~/.cache/taxpraben/completions.sqlite``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "taxpraben" / "completions.sqlite"


def cache_key(
    *,
    backend: str,
    model: str,
    endpoint: str | None,
    request: Request,
    config: GenerationConfig,
    model_args: Mapping[str, JSONValue] | None = None,
) -> str:
    """The cache key of one request: sha256 over everything that shapes its completion.

    ``endpoint`` must already be free of secrets (``redact_url``); the API key is never part
    of the key, so rotating a key keeps the cache. ``model_args`` (``--model-args``: how the
    model is loaded or served) enter the key only when there are some, so that a run
    without them keeps the keys it always had.
    """
    description = {
        "v": _KEY_VERSION,
        "backend": backend,
        "model": model,
        "endpoint": endpoint,
        "messages": list(request.messages),
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "gen_kwargs": config.gen_kwargs,
        "seed": request.seed,
        "run": request.run,
    }
    if model_args:
        description["model_args"] = dict(model_args)
    canonical = json.dumps(description, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CompletionCache:
    """Completions by cache key; one connection, used from one thread at a time (the only
    other thread that touches it is the one :meth:`close_in_background` starts, once the
    owner is done with it)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._closer: threading.Thread | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # check_same_thread=False only so that close_in_background may close it.
            self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            row = self._conn.execute(
                "SELECT value FROM meta WHERE name='schema_version'"
            ).fetchone()
            if row is None:
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif row[0] != str(SCHEMA_VERSION):
                raise CacheError(
                    f"{self.path}: cache schema version {row[0]}, this taxpraben reads "
                    f"{SCHEMA_VERSION}; use another --cache PATH"
                )
            self._rows_per_insert = _rows_per_statement(self._conn)
            self._one_step_lookup = _reads_in_one_step(self._conn)
        except sqlite3.DatabaseError as exc:
            raise CacheError(
                f"{self.path}: cannot open the completion cache: {exc}; {_WAY_OUT}"
            ) from exc
        except OSError as exc:
            raise CacheError(f"{self.path}: cannot create the completion cache: {exc}") from exc

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        """The stored completions among ``keys`` (see :func:`_reads_in_one_step`)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Completion] = {}
        chunk = 500  # below SQLite's limit on bound parameters
        try:
            for i in range(0, len(wanted), chunk):
                part = wanted[i : i + chunk]
                marks = ",".join("?" * len(part))
                if self._one_step_lookup:
                    (blob,) = self._conn.execute(_ONE_STEP_LOOKUP.format(marks=marks), part).fetchone()
                    rows = [(*row[:4], None if row[4] is None else float(row[4]), row[5]) for row in json.loads(blob)]
                else:
                    rows = self._conn.execute(_ROW_LOOKUP.format(marks=marks), part).fetchall()
                for key, text, reasoning, usage, latency, finish in rows:
                    found[key] = Completion(
                        text=text,
                        reasoning=reasoning,
                        usage=json.loads(usage) if usage else None,
                        latency_s=latency,
                        finish_reason=finish,
                    )
        except (sqlite3.DatabaseError, ValueError) as exc:  # a damaged page or row
            raise CacheError(f"{self.path}: the completion cache is damaged ({exc}); {_WAY_OUT}") from exc
        return found

    def put(
        self,
        key: str,
        completion: Completion,
        *,
        backend: str,
        model: str,
        request: Request | None = None,
    ) -> None:
        """Store one completion and commit it."""
        self.put_many([(key, completion, request)], backend=backend, model=model)

    def put_many(
        self,
        entries: Sequence[tuple[str, Completion, Request | None]],
        *,
        backend: str,
        model: str,
    ) -> None:
        """Store ``(key, completion, request)`` entries and commit them as one transaction."""
        now = time.time()
        rows = []
        for key, completion, request in entries:
            task, item_id, run = request.key if request is not None else (None, None, None)
            usage = json.dumps(completion.usage) if completion.usage else None
            rows.append(
                (key, backend, model, task, item_id, run, completion.text, completion.reasoning,
                 usage, completion.latency_s, completion.finish_reason, now)
            )  # fmt: skip
        # Many rows a statement, not executemany: each step of a statement lets go of the GIL,
        # and taking it back waits behind any busy thread (up to the switch interval, 5 ms).
        # A run commits on its event loop while its scoring thread reads answers: 40 rows by
        # executemany took 430 ms there, one statement 12-17 ms (measured beside a busy thread).
        per = self._rows_per_insert
        statements = [rows[i : i + per] for i in range(0, len(rows), per)]
        if len(statements) == 1:  # one statement is one transaction of its own (autocommit)
            self._insert(statements[0])
            return
        with self._conn:  # BEGIN ... COMMIT (ROLLBACK on error)
            self._conn.execute("BEGIN")
            for part in statements:
                self._insert(part)

    def _insert(self, rows: Sequence[tuple[SQLValue, ...]]) -> None:
        marks = ",".join([_ROW_MARKS] * len(rows))
        self._conn.execute(f"INSERT OR REPLACE INTO completions VALUES {marks}", [v for row in rows for v in row])

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def record_batch(
        self,
        batch_id: str,
        custom_ids: Mapping[str, str],
        *,
        backend: str,
        model: str,
        endpoint: str | None,
        input_file_id: str | None,
    ) -> BatchRecord:
        """Keep a batch just created (status ``open``), so that an interrupted run resumes
        polling it rather than paying for its requests again."""
        now = time.time()
        ids = dict(custom_ids)
        keys = tuple(dict.fromkeys(ids.values()))
        with self._conn:
            self._conn.execute("BEGIN")
            self._conn.execute(
                "INSERT OR REPLACE INTO batches VALUES (?,?,?,?,?,?,?,?,?,NULL)",
                (batch_id, backend, model, endpoint, input_file_id, json.dumps(list(keys)),
                 json.dumps(ids, ensure_ascii=False), BATCH_OPEN, now),
            )  # fmt: skip
        return BatchRecord(batch_id, backend, model, endpoint, input_file_id, keys, ids, BATCH_OPEN, now)

    def open_batches(self, *, backend: str, model: str, endpoint: str | None) -> list[BatchRecord]:
        """The batches of this backend, model and endpoint not yet collected, newest first."""
        try:
            rows = self._conn.execute(
                "SELECT batch_id, backend, model, endpoint, input_file_id, keys, custom_ids, status, "
                "created_at FROM batches WHERE status = ? AND backend = ? AND model = ? AND endpoint IS ? "
                "ORDER BY created_at DESC",
                (BATCH_OPEN, backend, model, endpoint),
            ).fetchall()
            return [
                BatchRecord(bid, kind, name, where, file_id, tuple(json.loads(keys)), json.loads(ids), status, at)
                for bid, kind, name, where, file_id, keys, ids, status, at in rows
            ]
        except (sqlite3.DatabaseError, ValueError) as exc:
            raise CacheError(f"{self.path}: the completion cache is damaged ({exc}); {_WAY_OUT}") from exc

    def finish_batch(self, batch_id: str, status: str) -> None:
        """Mark a batch collected (``status``: how it ended): no later run resumes it."""
        with self._conn:
            self._conn.execute("BEGIN")
            self._conn.execute(
                "UPDATE batches SET status = ?, finished_at = ? WHERE batch_id = ?",
                (status, time.time(), batch_id),
            )

    def close(self) -> None:
        """Close the connection (again is harmless); after :meth:`close_in_background`,
        wait until that thread has closed it."""
        if self._closer is not None:
            self._closer.join()
        else:
            self._conn.close()

    def close_in_background(self) -> None:
        """Close the connection on a thread of its own; :meth:`close` waits for it.

        Closing the last connection to the file folds the write-ahead log back into it (a
        checkpoint, then an fsync): about 30 ms for 2,000 completions, spent waiting for the
        disk with the GIL released. A run closes its cache this way when generation ends,
        so that its scoring and reports go on meanwhile (issue 24: the tail of a run).
        """
        if self._closer is None:
            self._closer = threading.Thread(target=self._conn.close, name="taxpraben-cache-close")
            self._closer.start()

    def __enter__(self) -> CompletionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
