"""Start-up, wall time and memory of `taxpraben run` beside a bare aiohttp client (issue 12, item 2).

Scenario: PROMPTS distinct prompts (default 2000, TaxCalc records), one run, concurrency C = 64,
a mock endpoint with latency L = 0.2 s (``tests/helpers/mock_openai_server.py``, which records when the
first request arrives). For each source tree given (``--src``, e.g. the main checkout's
``src`` as "before" and this one's as "after"), `taxpraben run` is run as a child process with
that tree first on ``PYTHONPATH`` (``python -m taxpraben run ... --no-semantic``, a fresh cache,
scoring and reports included), ROUNDS times, alternating the trees so that both see the same
machine load. Then the bare aiohttp client of ``fault_run.py`` runs the same prompts, also as a
child process (interpreter and imports included, as for `run`).

Printed per command: wall time, CPU, peak RSS, requests received, and the time to first
request: from the moment the child is started to the arrival of the first chat request at
the server (and of the first request of any kind: `run` lists the models first). At the end,
the output files of the trees are compared: results.json (without its start/end times and
package version) and samples.jsonl must be identical.

    python benchmarks/startup.py --src /work/main/src --src src          # before / after
    python benchmarks/startup.py --src src --rounds 3 --prompts 500
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _common
from fault_run import write_data

from helpers.mock_openai_server import server_call, spawn


def measure_child(cmd: list[str], root: str, env: dict[str, str]) -> dict[str, float | int | None]:
    """Run ``cmd`` against the server at ``root``; wall, CPU, RSS and times to first request."""
    server_call(root, "/reset", "POST")
    started = time.time()
    m = _common.run_measured(cmd, env=env).check(" ".join(cmd[:4]))
    stats = server_call(root, "/stats")
    first_chat, first_any = stats["first_request_at"], stats["first_listing_at"]
    if first_any is None or (first_chat is not None and first_chat < first_any):
        first_any = first_chat
    return {
        "wall_s": m.wall_s,
        "cpu_s": m.cpu_s,
        "peak_rss_mb": m.peak_rss_mib * 1.048576,
        "first_request_s": None if first_chat is None else first_chat - started,
        "first_any_s": None if first_any is None else first_any - started,
        "requests": stats["requests"],
    }


def time_to_first_request(cmd: list[str], root: str, env: dict[str, str], limit_s: float = 120.0) -> float:
    """Start ``cmd``, wait for its first chat request at the server, then stop it."""
    import subprocess

    server_call(root, "/reset", "POST")
    started = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.time() - started < limit_s:
            first = server_call(root, "/stats")["first_request_at"]
            if first is not None:
                return first - started
            if proc.poll() is not None:
                raise SystemExit(f"{' '.join(cmd[:4])} ended (status {proc.returncode}) before any request")
            time.sleep(0.02)
        raise SystemExit(f"no request within {limit_s} s")
    finally:
        proc.kill()
        proc.wait()


BARE = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
from fault_run import bare_client
t0 = time.perf_counter()
out = asyncio.run(bare_client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), 120.0))
assert out["done"] == int(sys.argv[3]), out
print(time.perf_counter() - t0)
"""


def comparable_results(path: Path) -> dict[str, object]:
    """results.json without what differs between two runs of the same command."""
    results = json.loads(path.read_text(encoding="utf-8"))
    meta = results.get("meta", {})
    for key in ("started_at", "finished_at", "ended_at", "package_version", "git_hash", "git"):
        meta.pop(key, None)
    return results


def comparable_predictions(path: Path) -> list[dict[str, object]]:
    """predictions.jsonl without the measured latencies."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in line.items() if k != "latency_s"} for line in lines]


def summary(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", action="append", type=Path, help="A source tree (repeatable); default: this one's src.")
    p.add_argument("--prompts", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--first-request-data",
        type=Path,
        help="Also measure only the time to first request of `run --runs 5` on this data "
        "directory (e.g. make_synthetic.py's), stopping each command at its first request.",
    )
    args = p.parse_args()
    trees = [s.resolve() for s in (args.src or [_common.ROOT / "src"])]
    print(f"machine: {_common.machine()}")
    ideal = args.prompts * args.latency / args.concurrency
    print(f"scenario: {args.prompts} prompts, C={args.concurrency}, L={args.latency} s, ideal {ideal:.2f} s")
    figures: dict[str, list[dict[str, float | int | None]]] = {str(t): [] for t in trees}
    figures["bare aiohttp"] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_data(work / "data", args.prompts)
        server, root = spawn("--latency", str(args.latency))
        try:
            for r in range(args.rounds):
                for k, tree in enumerate(trees):
                    out = work / f"out-{k}-{r}"
                    cmd = [
                        sys.executable, "-m", "taxpraben", "run", "--model", "openai:bench",
                        "--base-url", root + "/v1", "--data", str(work / "data"), "--runs", "1",
                        "--concurrency", str(args.concurrency), "--no-semantic",
                        "--cache", str(work / f"cache-{k}-{r}.sqlite"), "--out", str(out),
                    ]  # fmt: skip
                    env = _common.quiet_env(PYTHONPATH=str(tree))
                    figures[str(tree)].append(measure_child(cmd, root, env))
                cmd = [sys.executable, "-c", BARE, str(_common.ROOT / "benchmarks"), root + "/v1",
                       str(args.prompts), str(args.concurrency)]  # fmt: skip
                bare = measure_child(cmd, root, dict(os.environ))
                figures["bare aiohttp"].append(bare)
            if args.first_request_data is not None:
                _common.header(f"time to first request, run --runs 5 on {args.first_request_data}")
                for r in range(args.rounds):
                    for k, tree in enumerate(trees):
                        cmd = [
                            sys.executable, "-m", "taxpraben", "run", "--model", "openai:bench",
                            "--base-url", root + "/v1", "--data", str(args.first_request_data),
                            "--concurrency", str(args.concurrency), "--no-semantic",
                            "--cache", str(work / f"first-{k}-{r}.sqlite"), "--out", str(work / f"first-{k}-{r}"),
                        ]  # fmt: skip
                        seconds = time_to_first_request(cmd, root, _common.quiet_env(PYTHONPATH=str(tree)))
                        print(f"  {tree}: {seconds:.3f} s", flush=True)
        finally:
            server.kill()
            server.wait()
        bare_walls = [float(f["wall_s"]) for f in figures["bare aiohttp"]]  # type: ignore[arg-type]
        bare_wall = statistics.median(bare_walls)
        print(f"{'command':<44} {'wall s':>22} {'vs bare':>7} {'CPU s':>6} {'peak RSS MB':>11} "
              f"{'1st chat s':>10} {'1st any s':>9} {'requests':>8}")  # fmt: skip
        for name, rows in figures.items():
            walls = [float(x["wall_s"]) for x in rows]  # type: ignore[arg-type]
            def med(key: str, rows=rows) -> float:
                return statistics.median(float(x[key]) for x in rows if x[key] is not None)  # type: ignore[arg-type]
            label = name if name == "bare aiohttp" else f"taxpraben run ({name})"
            print(f"{label[-44:]:<44} {summary(walls):>22} {statistics.median(walls) / bare_wall:>7.2f} "
                  f"{med('cpu_s'):>6.2f} {med('peak_rss_mb'):>11.1f} {med('first_request_s'):>10.3f} "
                  f"{med('first_any_s'):>9.3f} {int(med('requests')):>8}")  # fmt: skip
        if len(trees) > 1:
            ref = work / "out-0-0"
            for k in range(1, len(trees)):
                other = work / f"out-{k}-0"
                same_results = comparable_results(ref / "results.json") == comparable_results(other / "results.json")
                same_samples = (ref / "samples.jsonl").read_bytes() == (other / "samples.jsonl").read_bytes()
                same_predictions = comparable_predictions(ref / "predictions.jsonl") == comparable_predictions(other / "predictions.jsonl")
                if not same_results:
                    a, b = comparable_results(ref / "results.json"), comparable_results(other / "results.json")
                    for key in sorted(set(a["meta"]) | set(b["meta"])):
                        if a["meta"].get(key) != b["meta"].get(key):
                            print(f"  meta.{key}: {a['meta'].get(key)!r} vs {b['meta'].get(key)!r}")
                    if a.get("tasks") != b.get("tasks"):
                        print("  tasks differ")
                print(f"outputs of {trees[k]} vs {trees[0]}: results.json identical: {same_results}, "
                      f"samples.jsonl identical: {same_samples}, predictions.jsonl identical (latencies aside): {same_predictions}")
        print(json.dumps({"figures": figures}, default=str))


if __name__ == "__main__":
    main()
