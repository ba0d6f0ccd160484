"""The completion cache: key semantics, round trips, WAL and crash safety."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taxpraben.models.base import Completion, GenerationConfig, build_request
from taxpraben.records import Record
from taxpraben.run.cache import (
    CacheError,
    CompletionCache,
    cache_key,
    default_cache_path,
)

CONFIG = GenerationConfig()


def _request(query: str = "计算应纳税额", *, run: int = 0, task: str = "TaxCalc", id: str = "1",
             config: GenerationConfig = CONFIG):  # fmt: skip
    return build_request(Record(task=task, id=id, query=query, answer="1"), run, config)


def _key(request=None, *, backend="openai", model="m", endpoint="http://h/v1", config=CONFIG):
    return cache_key(
        backend=backend,
        model=model,
        endpoint=endpoint,
        request=request or _request(config=config),
        config=config,
    )


def test_key_changes_with_everything_that_shapes_the_completion() -> None:
    base = _key()
    assert _key() == base  # stable
    variants = [
        _key(backend="hf"),
        _key(model="m2"),
        _key(endpoint="http://other/v1"),
        _key(_request("另一个问题")),
        _key(_request(run=1)),
        _key(config=GenerationConfig(temperature=0.7)),
        _key(config=GenerationConfig(top_p=0.9)),
        _key(config=GenerationConfig(max_tokens=10)),
        _key(config=GenerationConfig(seed_base=5)),
        _key(config=GenerationConfig(system_prompt="你是税务专家")),
        _key(config=GenerationConfig(gen_kwargs={"enable_thinking": False})),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_key_ignores_task_and_id_but_not_seed() -> None:
    # The same prompt in another task or under another id is the same request.
    assert _key(_request(task="TaxQA", id="99")) == _key()
    req = _request()
    assert _key(dataclasses.replace(req, seed=req.seed + 1)) != _key(req)


def test_put_get_round_trip(tmp_path: Path) -> None:
    comp = Completion(
        text="答案：1560.00",
        reasoning="先算收入",
        usage={"prompt_tokens": 10, "completion_tokens": 5},
        latency_s=0.25,
        finish_reason="stop",
    )
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        req = _request()
        key = _key(req)
        cache.put(key, comp, backend="openai", model="m", request=req)
        assert cache.get_many([key, "absent"]) == {key: comp}
        assert len(cache) == 1
    # Reopened: still there, and the file is in WAL mode.
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        assert cache.get_many([key])[key] == comp
    conn = sqlite3.connect(tmp_path / "c.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT task, item_id, run FROM completions").fetchone() == (
        "TaxCalc",
        "1",
        0,
    )


def test_get_many_handles_more_keys_than_sqlite_parameters(tmp_path: Path) -> None:
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        keys = [f"k{i}" for i in range(1200)]
        for k in keys[::3]:
            cache.put(k, Completion(text=k), backend="b", model="m")
        found = cache.get_many(keys)
        assert set(found) == set(keys[::3])


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "c.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CacheError, match="cannot open the completion cache"):
        CompletionCache(bad)


def test_other_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CompletionCache(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value='99' WHERE name='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(CacheError, match="schema version 99"):
        CompletionCache(path)


def test_default_path_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("TAXPRABEN_CACHE")
    assert default_cache_path().parts[-3:] == (".cache", "taxpraben", "completions.sqlite")



def _filled(path: Path, rows: int = 300) -> CompletionCache:
    cache = CompletionCache(path)
    for start in range(0, rows, 50):
        entries = [(f"k{i}", Completion(text="答" * 500), None) for i in range(start, start + 50)]
        cache.put_many(entries, backend="b", model="m")
    return cache


def test_closing_in_the_background_folds_the_log_and_close_waits_for_it(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = _filled(path)
    wal = path.with_name("c.sqlite-wal")
    assert wal.exists() and wal.stat().st_size > 0  # the commits are in the write-ahead log
    cache.close_in_background()
    cache.close_in_background()  # again: still one closing thread
    closer = cache._closer
    assert closer is not None and closer.name == "taxpraben-cache-close"
    cache.close()  # waits for it
    assert not closer.is_alive()
    assert not wal.exists()  # the last connection closed: the log is folded into the file
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        len(cache)
    cache.close()  # again: harmless
    with CompletionCache(path) as again:
        assert len(again) == 300



AWKWARD = [
    Completion(text='引号"、反斜杠\\、换行\n、制表\t、\x01、😀', reasoning=None, usage=None, latency_s=None),
    Completion(text="", reasoning="先算收入\n再算税", usage={"prompt_tokens": 1, "completion_tokens": 0},
               latency_s=0.1 + 0.2, finish_reason="length"),
    Completion(text="答案：B", latency_s=1 / 3, finish_reason="stop"),
    Completion(text="x" * 5000, latency_s=123456.78901234567),
]


@pytest.mark.parametrize("one_step", [True, False])
def test_lookups_give_back_exactly_what_was_stored(tmp_path: Path, one_step: bool) -> None:
    """The one-step lookup (one JSON value of the rows) and the row-by-row one give back the
    same completions, to the last bit of the latency (JSON's own REAL keeps 15 digits)."""
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        if one_step and not cache._one_step_lookup:
            pytest.skip("this SQLite lacks the JSON functions or an exact printf: lookups go row by row")
        cache._one_step_lookup = one_step
        stored = {f"k{i}": c for i, c in enumerate(AWKWARD)}
        stored.update({f"r{i}": Completion(text=str(i), latency_s=i / 7) for i in range(1200)})
        cache.put_many([(k, c, None) for k, c in stored.items()], backend="b", model="m")
        assert cache.get_many([*stored, "absent"]) == stored


def test_a_commit_is_one_statement_and_a_lookup_one_row(tmp_path: Path) -> None:
    """Each step of a statement lets go of the GIL, and beside a busy thread taking it back
    waits (40 rows by executemany: 430 ms). A commit of 40 completions is one INSERT and a
    lookup of 80 keys one row of one SELECT."""
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        statements: list[str] = []
        cache._conn.set_trace_callback(statements.append)
        cache.put_many([(f"k{i}", Completion(text=str(i)), None) for i in range(40)], backend="b", model="m")
        assert [sql.split()[0] for sql in statements] == ["INSERT"]
        statements.clear()
        found = cache.get_many(f"k{i}" for i in range(80))
        assert len(found) == 40 and [sql.split()[0] for sql in statements] == ["SELECT"]
        if cache._one_step_lookup:  # where SQLite allows (see _reads_in_one_step)
            assert "json_group_array" in statements[0]  # the 40 rows come back as one


def test_a_commit_of_several_statements_is_one_transaction(tmp_path: Path) -> None:
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        cache._rows_per_insert = 3
        cache.put_many([(f"k{i}", Completion(text=str(i)), None) for i in range(10)], backend="b", model="m")
        assert len(cache) == 10
        broken = [(f"n{i}", Completion(text=str(i)), None) for i in range(8)]
        broken[7] = ("n7", Completion(text=None), None)  # type: ignore[arg-type]  # NOT NULL fails in the third statement
        with pytest.raises(sqlite3.IntegrityError):
            cache.put_many(broken, backend="b", model="m")
        assert len(cache) == 10  # the first two statements were rolled back with it


def test_lookups_go_row_by_row_where_sqlite_cannot_give_a_double_back_exactly(tmp_path: Path) -> None:
    from taxpraben.run.cache import _reads_in_one_step

    assert _reads_in_one_step(sqlite3.connect(":memory:"))
    fewer_digits = sqlite3.connect(":memory:")
    fewer_digits.create_function("printf", 2, lambda fmt, x: f"{x:.15g}")  # an older SQLite's 15 digits
    assert not _reads_in_one_step(fewer_digits)
    no_json = sqlite3.connect(":memory:")
    no_json.create_function("json_array", -1, lambda *args: "not json")  # a build without JSON
    assert not _reads_in_one_step(no_json)


WRITER = """
import sys
from taxpraben.run.cache import CompletionCache
from taxpraben.models.base import Completion
cache = CompletionCache(sys.argv[1])
i = 0
while True:
    cache.put(f"key{i}", Completion(text="答" * 2000, usage={"prompt_tokens": i}), backend="b", model="m")
    i += 1
    if i == 50:
        print("ready", flush=True)
"""


def test_kill_9_while_writing_never_corrupts(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)  # mid-stream: thousands of commits in
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0]
    # Every committed row is whole, and they are the first n keys without gaps.
    keys = {k for (k,) in conn.execute("SELECT key FROM completions")}
    assert n >= 50 and keys == {f"key{i}" for i in range(n)}
    texts = {len(t) for (t,) in conn.execute("SELECT text FROM completions")}
    assert texts == {2000}
    conn.close()
    with CompletionCache(path) as cache:  # and it opens and appends as usual
        cache.put("after", Completion(text="x"), backend="b", model="m")
        assert len(cache) == n + 1
