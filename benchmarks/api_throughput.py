"""How close the harness keeps an OpenAI-compatible endpoint to saturation.

Starts ``tests/helpers/mock_openai_server.py`` as a subprocess with a fixed latency L, then for
each concurrency C sends C x WAVES requests twice: once with a bare aiohttp client (the
floor of what any Python client can do against this server on this machine) and once
through the harness (``Runner`` + ``OpenAIBackend`` + the SQLite cache + the rich progress
bar, as ``taxpraben run`` uses them). For each it prints the achieved requests per second
over the ideal C / L and the client's CPU seconds per 1000 requests (the harness streamed,
as by default, and with ``--no-stream``); then the harness's
start-up time (interpreter, imports and the first request, in a fresh process).

    python benchmarks/api_throughput.py                 # L = 0.2 s, C = 1, 16, 64, 256
    python benchmarks/api_throughput.py --latency 0.1 --concurrency 64 --waves 20

If the ``openai`` SDK is installed, its aiohttp transport (``DefaultAioHttpClient``) is
measured too, for the record of why the harness talks to aiohttp directly.

Targets (issue 5): >= 0.9 of ideal at C=64, >= 0.8 at C=256, within 10% of bare aiohttp.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import _common  # noqa: F401  (puts tests/ on sys.path for the mock server)
import aiohttp
from rich.console import Console

from helpers.mock_openai_server import spawn
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.models.openai import OpenAIBackend
from taxpraben.records import Record
from taxpraben.run.cache import CompletionCache
from taxpraben.run.runner import Runner, RunnerSettings


def body(i: int) -> dict[str, object]:
    return {
        "model": "bench",
        "messages": [{"role": "user", "content": f"计算第{i}题的应纳税额。"}],
        "temperature": 0,
        "max_tokens": 64,
        "seed": i,
    }


async def bare_aiohttp(base_url: str, n: int, concurrency: int) -> int:
    """The reference client: C workers, one pooled session, POST + JSON decode."""
    url = base_url + "/chat/completions"
    connector = aiohttp.TCPConnector(limit=concurrency)
    ok = 0
    feed = iter(range(n))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal ok
            for i in feed:
                async with session.post(url, json=body(i)) as resp:
                    data = json.loads(await resp.read())
                ok += bool(data["choices"][0]["message"]["content"])

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok


async def harness(base_url: str, n: int, concurrency: int, stream: bool = True) -> int:
    """The harness as `taxpraben run` drives it (cache and progress bar included)."""
    config = GenerationConfig(max_tokens=64)
    records = [
        Record(task="Bench", id=str(i), query=f"计算第{i}题的应纳税额。", answer="")
        for i in range(n)
    ]
    requests = [build_request(r, 0, config) for r in records]
    backend = OpenAIBackend("bench", base_url=base_url, concurrency=concurrency, stream=stream)
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with tempfile.TemporaryDirectory() as tmp, CompletionCache(Path(tmp) / "c.sqlite") as cache:
        runner = Runner(
            backend, config, RunnerSettings(concurrency=concurrency), cache=cache, console=console
        )
        predictions = await runner.run(requests)
    return sum(1 for p in predictions if p.prediction and not p.error)


async def openai_sdk(base_url: str, n: int, concurrency: int) -> int:
    """The openai SDK on its aiohttp transport (only when the SDK is installed)."""
    from openai import AsyncOpenAI, DefaultAioHttpClient  # type: ignore[import-not-found]

    ok = 0
    feed = iter(range(n))
    async with AsyncOpenAI(
        base_url=base_url, api_key="unused", http_client=DefaultAioHttpClient(), max_retries=0
    ) as client:

        async def worker() -> None:
            nonlocal ok
            for i in feed:
                b = body(i)
                r = await client.chat.completions.create(
                    model="bench",
                    messages=b["messages"],
                    max_tokens=64,
                    seed=i,  # type: ignore[arg-type]
                )
                ok += bool(r.choices[0].message.content)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok


Client = Callable[[str, int, int], Awaitable[int]]


def measure(client: Client, base_url: str, n: int, concurrency: int) -> tuple[float, float]:
    """(requests per second, CPU seconds per 1000 requests) of one client run."""
    cpu0, t0 = time.process_time(), time.perf_counter()
    ok = asyncio.run(client(base_url, n, concurrency))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if ok != n:
        raise SystemExit(f"{client.__name__}: only {ok} of {n} requests succeeded")
    return n / wall, cpu / n * 1000


STARTUP_SNIPPET = """
import time, sys
t0 = time.perf_counter()
import asyncio
from taxpraben.records import Record
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.models.openai import OpenAIBackend
from taxpraben.run.runner import Runner, RunnerSettings
t_import = time.perf_counter() - t0
cfg = GenerationConfig(max_tokens=64)
req = build_request(Record(task="Bench", id="0", query="计算应纳税额。", answer=""), 0, cfg)
runner = Runner(OpenAIBackend("bench", base_url=sys.argv[1]), cfg, RunnerSettings(progress=False))
preds = asyncio.run(runner.run([req]))
assert preds[0].prediction and not preds[0].error
print(t_import, time.perf_counter() - t0)
"""


def startup(base_url: str) -> tuple[float, float, float]:
    """(imports, imports + first request, whole process incl. interpreter) in seconds."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", STARTUP_SNIPPET, base_url],
        capture_output=True,
        text=True,
        check=True,
    )
    total = time.perf_counter() - t0
    t_import, t_first = (float(x) for x in out.stdout.split())
    return t_import, t_first, total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, default=0.2, help="Mock latency L in seconds.")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64, 256])
    p.add_argument("--waves", type=int, default=10, help="Requests per run = C x WAVES.")
    p.add_argument("--min-requests", type=int, default=10)
    args = p.parse_args()

    async def harness_plain(base_url: str, n: int, concurrency: int) -> int:
        return await harness(base_url, n, concurrency, stream=False)

    clients: list[tuple[str, Client]] = [
        ("bare aiohttp", bare_aiohttp),
        ("taxpraben", harness),
        ("taxpraben --no-stream", harness_plain),
    ]
    try:
        import openai  # type: ignore[import-not-found]  # noqa: F401

        clients.append(("openai SDK (aiohttp)", openai_sdk))
    except ImportError:
        pass

    server, root = spawn("--latency", str(args.latency))
    base_url = root + "/v1"
    try:
        print(
            f"mock server latency L = {args.latency} s, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}"
        )
        print(
            f"{'C':>4} {'requests':>8}  {'client':<22} {'req/s':>8} {'ideal':>8} {'ratio':>6} {'vs bare':>8} {'CPU s/1k':>9}"
        )
        for c in args.concurrency:
            n = max(args.min_requests, c * args.waves)
            ideal = c / args.latency
            bare_rate = None
            for name, client in clients:
                rate, cpu = measure(client, base_url, n, c)
                bare_rate = bare_rate or rate
                print(
                    f"{c:>4} {n:>8}  {name:<22} {rate:>8.1f} {ideal:>8.1f} {rate / ideal:>6.2f} "
                    f"{rate / bare_rate:>8.2f} {cpu:>9.3f}"
                )
        t_import, t_first, total = startup(base_url)
        print(
            f"start-up: imports {t_import:.3f} s, imports + first request {t_first:.3f} s, "
            f"whole process (interpreter included) {total:.3f} s"
        )
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
