"""Faults at scale, end to end through the ``taxpraben run`` command (issue 7, item 5).

A few hundred synthetic records (benchmarks/make_synthetic.py) x 2 runs go through the real
command in a child process against the mock server in another, so that a kill is a real
``kill -9`` and the server's counters see every request. Each scenario ends with output
identical to a clean run's and checks, from the server's list of answered requests, that
nothing already paid for was requested again:

- 20% injected failures of every kind (429, 500, hang, dropped connection, garbled body);
- SIGKILL at a random point (seeded) under the same failures, then resume;
- a disk that fills, on the cache and on the output directory (``RLIMIT_FSIZE`` in the
  child, so it works unprivileged and in CI): a clear error, no corrupt file;
- a truncated or corrupted cache file: detected at open, reported with the way out, and
  recovered from by following it.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from make_synthetic import write_data

from helpers.mock_openai_server import RETRYABLE_FAILURES, server_call, spawn

RUNS = 2
SCALE = 0.03  # 220 records, 440 requests per run of the command


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synthetic")
    write_data(path, seed=7, scale=SCALE)
    return path


@pytest.fixture(scope="module")
def total(data_dir: Path) -> int:
    return RUNS * sum(1 for f in data_dir.glob("*.jsonl") for _ in f.open(encoding="utf-8"))


class Server:
    """A mock server subprocess; ``root`` is its URL without ``/v1``."""

    def __init__(self, *args: str) -> None:
        self.proc, self.root = spawn(*args)

    def stats(self) -> dict[str, Any]:
        return server_call(self.root, "/stats")  # type: ignore[no-any-return]

    def reset(self) -> None:
        server_call(self.root, "/reset", "POST")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def clean_server() -> Iterator[Server]:
    server = Server("--latency", "0.002")
    yield server
    server.close()


@pytest.fixture(scope="module")
def faulty_server() -> Iterator[Server]:
    # 20% of requests fail, evenly over every retryable kind; hangs outlast --timeout 1.
    server = Server(
        "--latency", "0.002", "--failure-rate", "0.2", "--hang-s", "3", "--retry-after", "0.01",
        "--failure-kinds", ",".join(RETRYABLE_FAILURES),
    )  # fmt: skip
    yield server
    server.close()


def command(data: Path, root: str, cache: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "taxpraben", "run", "--model", "openai:mock",
        "--base-url", root + "/v1", "--data", str(data), "--runs", str(RUNS),
        "--concurrency", "16", "--timeout", "1", "--max-retries", "12", "--retry-backoff", "0.05",
        "--no-semantic", "--cache", str(cache), "--out", str(out),
    ]  # fmt: skip


def run_cli(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, **kwargs)


def outputs(out: Path) -> dict[str, Any]:
    """What must equal a clean run's: predictions (no latency), samples, task figures."""
    preds = [json.loads(line) for line in (out / "predictions.jsonl").open(encoding="utf-8")]
    samples = [json.loads(line) for line in (out / "samples.jsonl").open(encoding="utf-8")]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for line in samples:  # whether an answer was taken from the cache is where it came from, not what it is
        line.pop("cached", None)
    for task in results["tasks"].values():  # the same: made here or taken from the cache, added up
        made, cached = task["ledger"].pop("generated"), task["ledger"].pop("from_cache")
        task["ledger"]["all"] = {k: (made[k] or 0) + (cached[k] or 0) for k in made}
    return {
        "predictions": [(p["task"], p["id"], p["run"], p["prediction"], p.get("error")) for p in preds],
        "samples": samples,
        "tasks": results["tasks"],
        "groups": results["groups"],
        "overall": results["overall"],
    }


@pytest.fixture(scope="module")
def clean(data_dir: Path, clean_server: Server, total: int, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference: a clean run, and the request digests it needed."""
    tmp = tmp_path_factory.mktemp("clean")
    clean_server.reset()
    done = run_cli(command(data_dir, clean_server.root, tmp / "cache.sqlite", tmp / "out"))
    assert done.returncode == 0, done.stderr + done.stdout
    stats = clean_server.stats()
    assert stats["requests"] == stats["completed"] == total
    return {"outputs": outputs(tmp / "out"), "digests": set(stats["answered"])}


def cached_rows(path: Path) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
    except sqlite3.DatabaseError:  # not created yet, or mid-write
        return 0
    finally:
        conn.close()


def integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def assert_answered_once(answered: list[str], clean: dict[str, Any]) -> None:
    """Every needed generation was answered by the server exactly once, and nothing else."""
    counts = Counter(answered)
    assert [d for d, n in counts.items() if n > 1] == []
    assert set(counts) == clean["digests"]


# ---------------------------------------------------------------------------- failures


@pytest.mark.slow
def test_twenty_percent_failures_of_every_kind(
    data_dir: Path, faulty_server: Server, clean: dict[str, Any], tmp_path: Path
) -> None:
    faulty_server.reset()
    done = run_cli(command(data_dir, faulty_server.root, tmp_path / "c.sqlite", tmp_path / "out"))
    assert done.returncode == 0, done.stderr + done.stdout
    stats = faulty_server.stats()
    assert set(stats["failures"]) == set(RETRYABLE_FAILURES)  # every kind happened
    assert sum(stats["failures"].values()) > 0.1 * stats["requests"]
    assert_answered_once(stats["answered"], clean)
    assert outputs(tmp_path / "out") == clean["outputs"]


@pytest.mark.slow
def test_sigkill_at_a_random_point_then_resume(
    data_dir: Path, faulty_server: Server, clean: dict[str, Any], total: int, tmp_path: Path
) -> None:
    seed = int(os.environ.get("TAXPRABEN_FAULT_SEED", time.time_ns() % 10_000))
    point = random.Random(seed).uniform(0.1, 0.9)
    print(f"seed {seed}: kill after {point:.0%} of the generations are cached")
    cache, out = tmp_path / "c.sqlite", tmp_path / "out"
    faulty_server.reset()
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(command(data_dir, faulty_server.root, cache, out), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 60
    while cached_rows(cache) < point * total:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert integrity(cache) == "ok"
    kept = cached_rows(cache)
    assert point * total <= kept < total
    assert not (out / "predictions.jsonl").exists() and not (out / "results.json").exists()
    before = faulty_server.stats()["answered"]

    faulty_server.reset()
    done = run_cli(command(data_dir, faulty_server.root, cache, out))
    assert done.returncode == 0, done.stderr + done.stdout
    assert f"{kept} generations from the cache" in done.stdout  # one line: not a terminal
    resumed = faulty_server.stats()["answered"]
    # The resume asked only for what the cache lacked, each once; answered twice overall
    # are at most the requests that were in flight (answered, not yet committed) at the kill.
    assert len(resumed) == len(set(resumed)) == total - kept
    assert len(set(before) & set(resumed)) <= 16
    assert_answered_once(list(set(before) | set(resumed)), clean)
    assert outputs(out) == clean["outputs"]


# ---------------------------------------------------------------------------- disk full


def file_size_limit(limit: int) -> Any:
    """A preexec_fn: files may not grow past ``limit`` bytes (EFBIG), as on a full disk."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_disk_full_on_the_cache_then_resume(
    data_dir: Path, clean_server: Server, clean: dict[str, Any], total: int, tmp_path: Path
) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "out"
    clean_server.reset()
    done = run_cli(command(data_dir, clean_server.root, cache, out), preexec_fn=file_size_limit(96 * 1024))
    assert done.returncode == 2, done.stderr + done.stdout
    message = done.stdout + done.stderr
    assert any(str(cache) in line and "cannot write" in line for line in message.splitlines())
    assert "Traceback" not in message
    assert integrity(cache) == "ok"
    kept = cached_rows(cache)
    assert 0 < kept < total
    assert not out.exists() or not any(out.iterdir())  # nothing half-written
    before = clean_server.stats()["answered"]

    clean_server.reset()
    done = run_cli(command(data_dir, clean_server.root, cache, out))
    assert done.returncode == 0, done.stderr + done.stdout
    resumed = clean_server.stats()["answered"]
    assert len(resumed) == len(set(resumed)) == total - kept
    # Answered but not stored: the transaction that failed plus what was in flight after it
    # (at most one concurrency's worth each).
    assert len(before) - kept <= 2 * 16
    assert_answered_once(list(set(before) | set(resumed)), clean)
    assert outputs(out) == clean["outputs"]


def test_disk_full_on_the_output_directory(
    data_dir: Path, clean_server: Server, clean: dict[str, Any], tmp_path: Path
) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "out"
    assert run_cli(command(data_dir, clean_server.root, cache, out)).returncode == 0
    reference = {p.name: p.read_bytes() for p in out.iterdir()}
    clean_server.reset()
    # Everything is cached; the cache is only read. samples.jsonl cannot be written whole.
    limit = len(reference["samples.jsonl"]) // 2
    done = run_cli(command(data_dir, clean_server.root, cache, out), preexec_fn=file_size_limit(limit))
    message = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in message, message[-3000:]
    assert "samples.jsonl" in message or str(out) in message
    assert clean_server.stats()["requests"] == 0
    # Each file is either the previous complete version or absent; no temp files are left.
    # (predictions.jsonl was written whole again: the same lines, each now saying it came
    # from the cache.)
    for p in out.iterdir():
        assert p.name in reference, f"left behind: {p.name}"
        if p.name == "predictions.jsonl":
            again = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
            before = [json.loads(line) for line in reference[p.name].decode("utf-8").splitlines()]
            assert all(line.pop("cached") is True for line in again)
            assert again == before, f"{p.name} was half-written"
        else:
            assert p.read_bytes() == reference[p.name], f"{p.name} was half-written"


# ---------------------------------------------------------------------------- corrupt cache


@pytest.mark.parametrize("damage", ["truncate", "overwrite", "garbage"])
def test_corrupted_cache_is_detected_reported_and_recoverable(
    damage: str, data_dir: Path, clean_server: Server, clean: dict[str, Any], total: int, tmp_path: Path
) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "out"
    assert run_cli(command(data_dir, clean_server.root, cache, out)).returncode == 0
    size = cache.stat().st_size
    raw = bytearray(cache.read_bytes())
    if damage == "truncate":
        raw = raw[: size // 2]
    elif damage == "overwrite":
        rng = random.Random(0)
        for page in range(2, size // 4096, 3):  # garble every third page after the first
            for _ in range(64):
                raw[page * 4096 + rng.randrange(4096)] = rng.randrange(256)
    else:
        raw = bytearray(b"\x00garbage" * 1000)
    cache.write_bytes(bytes(raw))

    clean_server.reset()
    done = run_cli(command(data_dir, clean_server.root, cache, tmp_path / "out2"))
    message = done.stdout + done.stderr
    assert done.returncode == 2, message
    assert "Traceback" not in message
    assert str(cache) in message
    assert "--cache" in message  # the way out is named
    sent = clean_server.stats()["requests"]
    if damage == "overwrite":
        # SQLite has no page checksums: a garbled page may read without an error and hide a
        # row (a miss, answered by a request) before a page it cannot read stops the run. Few
        # are sent before that; which ones depends on where the rows of this run fell.
        assert sent < total // 4, message
    else:
        assert sent == 0  # the file cannot be opened: detected before anything was sent

    # Recover as told: set the damaged file aside and run again.
    cache.rename(tmp_path / "damaged.sqlite")
    clean_server.reset()
    done = run_cli(command(data_dir, clean_server.root, cache, tmp_path / "out2"))
    assert done.returncode == 0, done.stderr + done.stdout
    stats = clean_server.stats()
    assert stats["requests"] == total
    assert_answered_once(stats["answered"], clean)
    assert outputs(tmp_path / "out2") == clean["outputs"]
