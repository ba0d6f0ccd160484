"""How fast the completion cache's one SQLite writer goes, with completions of real sizes (issue 14).

The runner commits, on each turn of its event loop, every completion that arrived in that turn
(``Runner._succeed`` / ``_save``): one ``CompletionCache.put_many`` transaction of 1 row when
answers trickle in, of many when they arrive together. This script drives the real
``taxpraben.run.cache.CompletionCache`` the same way, single writer, one process:

- the requests and their cache keys are those of a real run (``build_request`` and
  ``cache_key`` over the data directory, ``--runs`` runs);
- each completion's text is the model-like prediction for that (task, id, run) from
  ``make_synthetic.py --predictions`` (the synthetic benchmark's answer lengths), with usage
  and latency filled in as an OpenAI-compatible endpoint returns them;
- it writes every request once per transaction size (``--batch``, fresh file each time) and
  prints rows/s and MiB/s of answer text, then reads everything back in chunks of 64 keys
  (what a cached rerun's ``get_many`` does) and prints the file's size.

Key computation (sha256 of the canonical request) is timed apart: the runner pays it too.

``--beside-busy-thread`` measures the writes and reads again while another Python thread
spins (a run's scoring thread reading answers while the event loop commits), for the cache as
it is (many rows per INSERT, one JSON row per lookup) and, side by side, row by row (one row
per statement and per step, as executemany and a plain SELECT go): each step of a statement
lets go of the GIL, and taking it back waits behind the busy thread.

    python benchmarks/make_synthetic.py --out /tmp/syn --predictions /tmp/syn-preds.jsonl
    PYTHONPATH=src python benchmarks/cache_writes.py --data /tmp/syn --predictions /tmp/syn-preds.jsonl

Put ``--dir`` on the disk a run's ``--cache`` would use: a network file system is slower,
and SQLite's locking is not meant for one there (docs/scaling.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import _common  # noqa: F401  (puts tests/ on sys.path)

from taxpraben.data.loader import load_data
from taxpraben.models.base import Completion, GenerationConfig, Request, build_request
from taxpraben.run.cache import CompletionCache, cache_key
from taxpraben.tasks import load_registry


def real_requests(data: Path, runs: int) -> list[Request]:
    """Every request of a ``runs``-run evaluation of ``data``, in data order."""
    loaded = load_data(data, load_registry())
    config = GenerationConfig()
    return [
        build_request(record, run, config)
        for run in range(runs)
        for records in loaded.records.values()
        for record in records
    ]


def completions_for(
    requests: list[Request], predictions: Path, longer: int = 1
) -> list[Completion]:
    """The synthetic prediction of each request as an endpoint's completion (usage, latency),
    its text repeated ``longer`` times (to stand for long reasoning answers)."""
    texts: dict[tuple[str, str, int], str] = {}
    with open(predictions, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            texts[(row["task"], str(row["id"]), int(row["run"]))] = row["prediction"]
    out = []
    for request in requests:
        text = texts[request.key] * longer
        prompt = sum(len(m["content"]) for m in request.messages)
        out.append(
            Completion(
                text=text,
                usage={"prompt_tokens": prompt, "completion_tokens": len(text)},
                latency_s=1.234567,
                finish_reason="stop",
            )
        )
    return out


def opened(path: Path, row_by_row: bool = False) -> CompletionCache:
    """The cache, or (``row_by_row``) the same cache writing one row per statement and reading
    one row per step."""
    cache = CompletionCache(path)
    if row_by_row:
        cache._rows_per_insert, cache._one_step_lookup = 1, False
    return cache


@contextlib.contextmanager
def busy_thread() -> Iterator[None]:
    """Another Python thread spinning meanwhile (it takes the GIL whenever it is let go)."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def write_all(
    path: Path,
    keys: list[str],
    requests: list[Request],
    completions: list[Completion],
    batch: int,
    row_by_row: bool = False,
) -> float:
    """Seconds to commit every row in transactions of ``batch`` rows (fresh file)."""
    with opened(path, row_by_row) as cache:
        start = time.perf_counter()
        for i in range(0, len(keys), batch):
            entries = list(
                zip(
                    keys[i : i + batch],
                    completions[i : i + batch],
                    requests[i : i + batch],
                    strict=True,
                )
            )
            cache.put_many(entries, backend="openai", model="bench-model")
        return time.perf_counter() - start


def read_all(path: Path, keys: list[str], chunk: int = 64, row_by_row: bool = False) -> float:
    """Seconds to look every key up again, ``chunk`` keys per ``get_many`` (a cached rerun)."""
    with opened(path, row_by_row) as cache:
        start = time.perf_counter()
        found = 0
        for i in range(0, len(keys), chunk):
            found += len(cache.get_many(keys[i : i + chunk]))
        seconds = time.perf_counter() - start
    if found != len(keys):
        raise SystemExit(f"read back {found} of {len(keys)} rows")
    return seconds


def file_bytes(path: Path) -> int:
    """The cache's size on disk once its write-ahead log is checkpointed into it."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--data", type=Path, required=True, help="data directory (make_synthetic.py --out)"
    )
    p.add_argument(
        "--predictions", type=Path, required=True, help="make_synthetic.py --predictions"
    )
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--batch", type=int, nargs="+", default=[1, 8, 64], help="rows per transaction")
    p.add_argument(
        "--longer", type=int, default=1, help="repeat each answer's text this many times"
    )
    p.add_argument(
        "--dir", type=Path, help="where to put the cache files (default: a temporary directory)"
    )
    p.add_argument("--beside-busy-thread", action="store_true",
                   help="also beside a spinning thread, as is and row by row, side by side")
    args = p.parse_args(argv)

    requests = real_requests(args.data, args.runs)
    completions = completions_for(requests, args.predictions, args.longer)
    start = time.perf_counter()
    keys = [
        cache_key(backend="openai", model="bench-model", endpoint="http://127.0.0.1:8000/v1",
                  request=r, config=GenerationConfig())
        for r in requests
    ]  # fmt: skip
    key_s = time.perf_counter() - start
    text_mib = sum(len(c.text.encode("utf-8")) for c in completions) / 2**20
    n = len(requests)
    print(f"{n} requests, answer text {text_mib:.1f} MiB ({text_mib * 2**20 / n:.0f} bytes/answer)")
    print(f"cache keys: {key_s:.2f} s = {n / key_s:,.0f} keys/s")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for batch in args.batch:
            path = Path(tmp) / f"cache-{batch}.sqlite"
            seconds = write_all(path, keys, requests, completions, batch)
            size = file_bytes(path)
            print(
                f"write, {batch:>3} rows/transaction: {seconds:6.2f} s = {n / seconds:8,.0f} rows/s"
                f" = {text_mib / seconds:6.1f} MiB/s of text; file {size / 2**20:.1f} MiB"
                f" ({size / n:.0f} bytes/row)"
            )
        read_s = read_all(Path(tmp) / f"cache-{args.batch[-1]}.sqlite", keys)
        print(f"read back, 64 keys per get_many: {read_s:6.2f} s = {n / read_s:8,.0f} rows/s")
        if args.beside_busy_thread:
            print("beside a busy thread: as is vs row by row (one row per statement / per step)")
            with busy_thread():
                for batch in args.batch:
                    now, rows = (write_all(Path(tmp) / f"busy-{batch}-{way}.sqlite", keys, requests, completions,
                                           batch, row_by_row=way) for way in (False, True))  # fmt: skip
                    print(f"  write, {batch:>3} rows/transaction: {n / now:8,.0f} vs {n / rows:8,.0f} rows/s"
                          f" ({rows / now:.1f}x)")
                last = Path(tmp) / f"busy-{args.batch[-1]}-False.sqlite"
                now, rows = (read_all(last, keys, row_by_row=way) for way in (False, True))
                print(f"  read back, 64 keys per get_many: {n / now:8,.0f} vs {n / rows:8,.0f} rows/s ({rows / now:.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
