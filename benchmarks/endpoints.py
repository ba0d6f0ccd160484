"""Several endpoints for one run: throughput against the sum of the replicas' ideal rates,
with one replica killed mid-run (issue 14, item 1).

Starts ``tests/helpers/mock_openai_server.py`` as subprocesses, one per latency (default 0.1, 0.2
and 0.4 s), each serving at most ``--capacity`` requests at once (a replica with a bounded
batch: its ideal rate is capacity / latency). The harness (``Runner`` + ``OpenAIBackend``
over all of them, the SQLite cache and the progress bar, as ``taxpraben run`` uses them)
sends N requests; ``--kill`` names the replica killed (SIGKILL) ``--kill-at`` seconds in.

The ideal is computed from those rates: the shortest wall time T* in which the replicas, at
their ideal rates and each only while alive, could have answered the N requests. The ratio
printed is T* / the measured wall time. It also checks that every request was answered
once: the survivors' answered-request digests are distinct, and with the killed replica's
answers (as the client counted them) they add up to N.

    python benchmarks/endpoints.py                        # 0.1/0.2/0.4 s, the 0.2 s one killed at 4 s
    python benchmarks/endpoints.py --kill -1              # nobody killed

Target (issue 14): ratio >= 0.9 on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import _common  # noqa: F401  (puts tests/ on sys.path for the mock server)
from rich.console import Console

from helpers.mock_openai_server import server_call, spawn
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.models.openai import OpenAIBackend
from taxpraben.records import Record
from taxpraben.run.cache import CompletionCache
from taxpraben.run.runner import Runner, RunnerSettings


def ideal_wall(n: int, rates: list[float], alive: list[float]) -> float:
    """The least T with sum(rate_i * min(T, alive_i)) >= n (each replica works only while
    alive): piecewise linear in T, solved between consecutive deaths."""
    t, done = 0.0, 0.0
    for end in sorted({*alive, float("inf")}):
        rate = sum(r for r, a in zip(rates, alive, strict=True) if a > t)
        if rate <= 0:
            break
        if done + rate * (end - t) >= n:
            return t + (n - done) / rate
        done += rate * (end - t)
        t = end
    raise ValueError("the replicas cannot answer n requests")


async def drive(urls: list[str], n: int, concurrency: int, kill: tuple[object, float] | None):
    """Send n requests through the harness; kill (a process, seconds in) when given."""
    config = GenerationConfig(max_tokens=64)
    records = [
        Record(task="Bench", id=str(i), query=f"计算第{i}题的应纳税额。", answer="") for i in range(n)
    ]
    requests = [build_request(r, 0, config) for r in records]
    backend = OpenAIBackend("bench", base_url=",".join(urls), concurrency=concurrency)
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    loop = asyncio.get_running_loop()
    if kill is not None:
        proc, at = kill
        loop.call_later(at, proc.kill)  # type: ignore[attr-defined]
    settings = RunnerSettings(concurrency=concurrency, backoff_base=0.05)
    with tempfile.TemporaryDirectory() as tmp, CompletionCache(Path(tmp) / "c.sqlite") as cache:
        runner = Runner(backend, config, settings, cache=cache, console=console)
        predictions = await runner.run(requests)
    ok = sum(1 for p in predictions if p.prediction and not p.error)
    return ok, runner.stats.retries, backend.pool.to_meta()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, nargs="+", default=[0.1, 0.2, 0.4])
    p.add_argument("--capacity", type=int, default=8, help="Requests each replica serves at once.")
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--kill", type=int, default=1, help="Index of the replica killed (-1: none).")
    p.add_argument("--kill-at", type=float, default=4.0, help="Seconds into the run.")
    args = p.parse_args()

    procs, urls = [], []
    for latency in args.latency:
        proc, root = spawn("--latency", str(latency), "--capacity", str(args.capacity))
        procs.append(proc)
        urls.append(root + "/v1")
    rates = [args.capacity / latency for latency in args.latency]
    kill = (procs[args.kill], args.kill_at) if args.kill >= 0 else None
    try:
        print(
            f"{len(urls)} mock replicas, latencies {args.latency} s, capacity {args.capacity} each "
            f"(ideal rates {[round(r, 1) for r in rates]} req/s), {args.requests} requests, "
            f"concurrency {args.concurrency}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}"
        )
        t0 = time.perf_counter()
        ok, retries, meta = asyncio.run(drive(urls, args.requests, args.concurrency, kill))
        wall = time.perf_counter() - t0
        alive = [float("inf")] * len(urls)
        if kill is not None:
            alive[args.kill] = args.kill_at
        ideal = ideal_wall(args.requests, rates, alive)
        answered: Counter[str] = Counter()
        for i, url in enumerate(urls):
            if i != args.kill or kill is None:
                answered.update(server_call(url.removesuffix("/v1"), "/stats")["answered"])
        killed_answers = meta[args.kill]["completed"] if kill is not None else 0
        once = set(answered.values()) <= {1} and sum(answered.values()) + killed_answers == args.requests
        for row in meta:
            print(
                f"  {row['endpoint']:<28} sent {row['sent']:>5}  answered {row['completed']:>5}  "
                f"failed {row['failed']:>3}  mean latency {row['mean_latency_s'] or 0:.3f} s  "
                f"ejections {row['ejections']}"
            )
        print(
            f"answered {ok}/{args.requests}, retries {retries}, each answered once: {once}; "
            f"wall {wall:.2f} s, ideal {ideal:.2f} s, ratio {ideal / wall:.3f} "
            f"({args.requests / wall:.1f} req/s)"
        )
        if ok != args.requests or not once:
            raise SystemExit("FAILED: not every request answered exactly once")
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
