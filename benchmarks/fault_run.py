"""`taxpraben run` through injected faults, beside a bare aiohttp client (issue 11, item 4).

Scenario: PROMPTS distinct prompts (default 2000), one run, concurrency C = 64, a mock
endpoint with latency L = 0.2 s on which a fraction FAULTS (default 0.2) of the requests fail,
evenly over five kinds: 429 with Retry-After, 500, a 30 s hang, a reset connection, and a
malformed body. `taxpraben run` uses its defaults apart from --concurrency. It prints, for
the faulty and the clean endpoint: wall time, exit status, requests the server received,
and items done; then a bare aiohttp client on the clean endpoint (the floor of what a Python
client can do here) and on the faulty one (plain POSTs, a 10 s timeout, immediate retry).

    python benchmarks/fault_run.py                    # the issue's scenario
    python benchmarks/fault_run.py --prompts 500      # quicker

Targets: every item done, exit 0, at most 2550 requests, at most 60 s wall; the clean run
within the throughput targets of api_throughput.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import _common
import aiohttp

from helpers.mock_openai_server import server_call, spawn

KINDS = "429,500,hang,reset,malformed"


def write_data(directory: Path, prompts: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "TaxCalc.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(prompts):
            row = {"id": str(i), "query": f"某企业第{i}笔销售额{1000 + i}元，税率13%，求销项税额。", "answer": round((1000 + i) * 0.13, 2)}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def run_harness(root: str, data: Path, out: Path, concurrency: int) -> dict[str, object]:
    server_call(root, "/reset", "POST")
    cmd = [
        _common.TAXPRABEN, "run", "--model", "openai:bench", "--base-url", root + "/v1",
        "--data", str(data), "--runs", "1", "--concurrency", str(concurrency),
        "--no-semantic", "--cache", str(out / "cache.sqlite"), "--out", str(out / "run"),
    ]  # fmt: skip
    measured = _common.run_measured(cmd, env=_common.quiet_env())
    stats = server_call(root, "/stats")
    done = 0
    predictions = out / "run" / "predictions.jsonl"
    if predictions.exists():
        done = sum(1 for line in predictions.open(encoding="utf-8") if not json.loads(line).get("error"))
    return {
        "wall_s": round(measured.wall_s, 1),
        "exit": measured.returncode,
        "requests": stats["requests"],
        "failures": stats["failures"],
        "done": done,
        "cpu_s": round(measured.cpu_s, 1),
    }


async def bare_client(base_url: str, prompts: int, concurrency: int, timeout: float) -> dict[str, object]:
    """C workers over one pooled session; plain POSTs, each retried at once until it succeeds."""
    url = base_url + "/chat/completions"
    queue = list(range(prompts))
    sent = done = 0
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=concurrency), timeout=aiohttp.ClientTimeout(total=timeout)
    )

    async def worker() -> None:
        nonlocal sent, done
        while queue:
            i = queue.pop()
            body = {"model": "bench", "messages": [{"role": "user", "content": f"第{i}题"}], "seed": i}
            while True:
                sent += 1
                try:
                    async with session.post(url, json=body) as resp:
                        raw = await resp.read()
                        if resp.status == 200:
                            json.loads(raw)["choices"][0]["message"]["content"]
                            done += 1
                            break
                except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, KeyError):
                    pass

    start = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await session.close()
    return {"wall_s": round(time.perf_counter() - start, 1), "client_requests": sent, "done": done}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--faults", type=float, default=0.2)
    p.add_argument("--hang-s", type=float, default=30.0)
    p.add_argument("--skip-bare", action="store_true", help="only the harness")
    args = p.parse_args()
    print(f"machine: {_common.machine()}")
    ideal = args.prompts * args.latency / args.concurrency
    print(f"scenario: {args.prompts} prompts, C={args.concurrency}, L={args.latency} s, ideal {ideal:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        write_data(data, args.prompts)
        common = ["--latency", str(args.latency), "--hang-s", str(args.hang_s)]
        faulty, faulty_root = spawn(*common, "--failure-rate", str(args.faults), "--failure-kinds", KINDS)
        clean, clean_root = spawn(*common)
        try:
            _common.header(f"taxpraben run, {args.faults:.0%} faults ({KINDS})")
            print(json.dumps(run_harness(faulty_root, data, Path(tmp) / "f", args.concurrency)))
            _common.header("taxpraben run, no faults")
            result = run_harness(clean_root, data, Path(tmp) / "c", args.concurrency)
            print(json.dumps(result), f"throughput {args.prompts / float(result['wall_s']):.1f} req/s (whole command)")
            if not args.skip_bare:
                _common.header("bare aiohttp, no faults")
                server_call(clean_root, "/reset", "POST")
                bare = asyncio.run(bare_client(clean_root + "/v1", args.prompts, args.concurrency, 120.0))
                print(json.dumps({**bare, "requests": server_call(clean_root, "/stats")["requests"]}),
                      f"throughput {args.prompts / float(bare['wall_s']):.1f} req/s")
                _common.header(f"bare aiohttp, {args.faults:.0%} faults, 10 s timeout, immediate retry")
                server_call(faulty_root, "/reset", "POST")
                bare = asyncio.run(bare_client(faulty_root + "/v1", args.prompts, args.concurrency, 10.0))
                print(json.dumps({**bare, "requests": server_call(faulty_root, "/stats")["requests"]}))
        finally:
            for proc in (faulty, clean):
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
