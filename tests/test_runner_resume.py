"""Crash safety end to end: a generation killed with SIGKILL resumes sending only what is missing.

Both the mock server and the generation run as subprocesses, so the kill is a real
``kill -9`` of a process in the middle of writing its cache, and the server's counters see
every request either process sent.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.cli_data import cached_rows
from helpers.mock_openai_server import server_call, spawn

N_ITEMS, RUNS = 100, 2

DRIVER = f"""
import asyncio, json, sys
from pathlib import Path
from taxpraben.run.cache import CompletionCache
from taxpraben.records import Record
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.models.openai import OpenAIBackend
from taxpraben.results.predictions import write_predictions
from taxpraben.run.runner import Runner, RunnerSettings

base_url, cache_path, out = sys.argv[1:4]
config = GenerationConfig(max_tokens=32)
records = [Record(task="TaxCalc", id=str(i), query=f"第{{i}}题：计算应纳税额", answer="")
           for i in range({N_ITEMS})]
requests = [build_request(r, run, config) for run in range({RUNS}) for r in records]
with CompletionCache(cache_path) as cache:
    backend = OpenAIBackend("mock", base_url=base_url, concurrency=4)
    runner = Runner(backend, config, RunnerSettings(concurrency=4, progress=False), cache=cache)
    predictions = asyncio.run(runner.run(requests))
write_predictions(Path(out), predictions)
print(json.dumps({{"cached": runner.stats.cached, "generated": runner.stats.done}}))
"""


@pytest.fixture
def mock_process() -> Iterator[str]:
    proc, root = spawn("--latency", "0.02")
    try:
        yield root
    finally:
        proc.kill()
        proc.wait()


def run_driver(root: str, cache: Path, out: Path) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, root + "/v1", str(cache), str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_sigkill_mid_run_then_resume_sends_exactly_the_missing(
    mock_process: str, tmp_path: Path
) -> None:
    root = mock_process
    total = N_ITEMS * RUNS
    cache = tmp_path / "cache.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, root + "/v1", str(cache), str(tmp_path / "killed.jsonl")],
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while cached_rows(cache) < total // 4:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    conn = sqlite3.connect(cache)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    kept = cached_rows(cache)
    assert total // 4 <= kept < total
    assert not (tmp_path / "killed.jsonl").exists()

    server_call(root, "/reset", "POST")
    stats = run_driver(root, cache, tmp_path / "resumed.jsonl")
    sent = server_call(root, "/stats")
    assert sent["requests"] == total - kept  # exactly the missing ones
    assert stats == {"cached": kept, "generated": total - kept}
    assert cached_rows(cache) == total

    # The same predictions as a clean run with an empty cache.
    server_call(root, "/reset", "POST")
    run_driver(root, tmp_path / "clean.sqlite", tmp_path / "clean.jsonl")
    assert server_call(root, "/stats")["requests"] == total
    resumed, clean = (answers(tmp_path / f"{name}.jsonl") for name in ("resumed", "clean"))
    assert resumed == clean and len(resumed) == total


def answers(path: Path) -> list[tuple[Any, ...]]:
    """Everything of each prediction but its latency, which no two runs share."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r["task"], r["id"], r["run"], r["prediction"], r["model"], r["usage"]) for r in rows]
