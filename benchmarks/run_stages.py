"""Where the seconds and megabytes of one `taxpraben run` go, stage by stage (issue 12, item 2).

Runs ``taxpraben run`` in this process (the source tree first on ``PYTHONPATH`` decides which
code) with a few of its functions wrapped to print, at their start and end, the seconds since
the interpreter started and the peak RSS so far (VmHWM): the command-line imports, whichever
of the set-up steps the tree has (``settings_from_options``, ``load_data_or_exit``,
``build_requests``; since the jobs: ``scoring_settings``, ``stream_requests``), the runner (``Runner.run``; ``Runner._send_all`` from the first request
on), and scoring + reports (``score_and_report``). The mock server counts the requests.

    PYTHONPATH=src python benchmarks/run_stages.py                       # 2000 prompts, C = 64
    PYTHONPATH=/path/to/other/src python benchmarks/run_stages.py --prompts 500
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

from helpers.mock_openai_server import server_call, spawn

CHILD = r"""
import functools, sys, time
T0 = time.perf_counter()
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
def mark(what):
    print(f"STAGE {time.perf_counter() - T0:7.3f} s  {hwm():7.1f} MiB  {what}", file=sys.stderr, flush=True)
mark("interpreter started")
import taxpraben.cli as cli
mark("command line imported")
import taxpraben.commands.run as run_cmd
import taxpraben.run.runner as runner_mod
def wrap(owner, name):
    f = getattr(owner, name, None)
    if f is None:
        return
    if getattr(f, "__code__", None) is not None and f.__code__.co_flags & 0x80:  # coroutine
        async def w(*a, **k):
            mark(f"> {name}")
            try:
                return await f(*a, **k)
            finally:
                mark(f"< {name}")
    else:
        def w(*a, **k):
            mark(f"> {name}")
            try:
                return f(*a, **k)
            finally:
                mark(f"< {name}")
    setattr(owner, name, functools.wraps(f)(w))
try:  # since issue 24 the run is a job (taxpraben.jobs.generate), the command only parses
    import taxpraben.jobs.generate as run_job
except ImportError:
    run_job = run_cmd
for owner in dict.fromkeys((run_cmd, run_job)):
    for name in ("settings_from_options", "load_data_or_exit", "build_requests", "scoring_settings",
                 "stream_requests", "score_and_report"):
        wrap(owner, name)
wrap(runner_mod.Runner, "run")
wrap(runner_mod.Runner, "_send_all")
sys.argv = ["taxpraben", *sys.argv[1:]]
try:
    cli.app()
finally:
    mark("end")
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--latency", type=float, default=0.2)
    args = p.parse_args()
    from startup import write_data

    print(f"machine: {_common.machine()}; PYTHONPATH={os.environ.get('PYTHONPATH', '')}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_data(work / "data", args.prompts)
        server, root = spawn("--latency", str(args.latency))
        try:
            started = time.time()
            cmd = [
                sys.executable, "-c", CHILD, "run", "--model", "openai:bench",
                "--base-url", root + "/v1", "--data", str(work / "data"), "--runs", "1",
                "--concurrency", str(args.concurrency), "--no-semantic",
                "--cache", str(work / "cache.sqlite"), "--out", str(work / "out"),
            ]  # fmt: skip
            done = subprocess.run(cmd, env=_common.quiet_env(), capture_output=True, text=True)
            stats = server_call(root, "/stats")
        finally:
            server.kill()
            server.wait()
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    print("seconds since the interpreter started, peak RSS so far, stage")
    print("\n".join(line[6:] for line in done.stderr.splitlines() if line.startswith("STAGE ")))
    first = stats["first_request_at"]
    print(f"first chat request at the server {first - started:.3f} s after the child was started; "
          f"requests {stats['requests']}")  # fmt: skip


if __name__ == "__main__":
    main()
