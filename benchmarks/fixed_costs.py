"""Fixed costs of `taxpraben run`: start-up and tail beside a bare aiohttp client ("Fixed costs").

One invocation, one mock server (``tests/helpers/mock_openai_server.py`` on 127.0.0.1, latency L,
subclassed here to also record when its last answer left). For each concurrency C (default 64
and 256) and each repeat, these child processes send the same PROMPTS chat requests (default
2,000: synthetic records of all 14 datasets from ``make_synthetic.py``, PROMPTS / RUNS records x
RUNS runs, each prompt sent verbatim as the user message), one after the other, in an order
that rotates with the repeat so that every client sees the same machine load:

- ``bare aiohttp``: ``python -c`` a client that reads the same JSON Lines files, builds the
  bodies (model, messages, temperature 0, max_tokens 1024, seed = run) and sends them with
  C workers over one pooled session, plain POSTs, JSON decoded; no cache, no output;
- ``taxpraben run --model openai:mock --base-url http://127.0.0.1:PORT/v1 --data DIR --runs
  RUNS --concurrency C --out OUT`` (``python -m taxpraben``, the ``--src`` tree first on
  ``PYTHONPATH``) in each ``--configs`` configuration:
  ``default``: ``--no-semantic --cache FRESH.sqlite`` (streamed, preflight GET /models, cache
  written, scoring and reports: what a user gets without semantic metrics);
  ``lean``: ``--no-semantic --no-cache --no-preflight`` (the bare client's terms: no cache file,
  no listing before the first request; still streamed, scored and reported);
  ``noscore``: ``--no-score --no-cache --no-preflight`` (only predictions.jsonl is written);
  ``thread`` / ``process``: ``default`` with ``TAXPRABEN_READINGS=thread`` (the answers read on
  the scoring thread, as before issue 38) / ``=process`` (in the readings' worker process from
  the first answer; ``default`` chooses by the CPUs: a worker with three or more).

Measured per child, on one clock (``time.time()`` in this process and in the mock):
wall (spawn to exit, ``os.wait4``), start-up (spawn to the first chat request at the mock;
``1st any``: to the first request of any kind, the preflight listing included), generation
(first chat request to the last answer sent), tail (last answer sent to process exit),
CPU seconds (user + system of that child and its own children, from ``os.wait4``'s rusage, i.e.
``getrusage(RUSAGE_CHILDREN)`` of that child alone) and peak RSS (its ``ru_maxrss``). The table
gives medians over the repeats and taxpraben / bare ratios. Also, unless ``--no-sample``, the
same measures on the bundled sample (``--data sample``, 186 records, 1 run, C = 64), where
the goal asks for the first request within 0.3 s of the process start.

``--diagnose DIR`` then runs instrumented children (sample and the main workload, first C,
first config): with ``-X importtime`` (the imports before the first connect, by package and by
taxpraben module, with the module that pulled each package in), with marks around the phases
after generation (``Runner._send_all``, ``Runner.run``, ``DataStream.result``,
``write_predictions_file``, ``score_and_report`` and what it calls), and with cProfile from the end
of ``Runner._send_all`` to the end of the command (file:function by cumulative time).

    python benchmarks/fixed_costs.py                                   # C = 64, 256; 3 repeats
    python benchmarks/fixed_costs.py --repeat 1 --concurrency 64 --diagnose /tmp/fc
    python benchmarks/fixed_costs.py --src /other/checkout/src --src src   # before / after

Goal (issue 38): wall at most 1.1x (C = 64) and 1.5x (C = 256) the bare client's; start-up at most 0.3 s
on the bundled sample; tail at most 0.3 s without semantic scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import _common

#: The wall-time targets of the goal, taxpraben / bare, by concurrency.
WALL_TARGETS = {64: 1.1, 256: 1.5}
START_TARGET_S = 0.3
TAIL_TARGET_S = 0.3

CONFIGS: dict[str, list[str]] = {
    "default": ["--no-semantic"],  # plus a fresh --cache file per run
    "thread": ["--no-semantic"],  # default, the answers read on the scoring thread (TAXPRABEN_READINGS)
    "process": ["--no-semantic"],  # default, the answers read in a worker process from the first
    "lean": ["--no-semantic", "--no-cache", "--no-preflight"],
    "noscore": ["--no-score", "--no-cache", "--no-preflight"],
}

#: What a configuration sets in the environment of `taxpraben run`.
CONFIG_ENV: dict[str, dict[str, str]] = {
    "thread": {"TAXPRABEN_READINGS": "thread"},
    "process": {"TAXPRABEN_READINGS": "process"},
}

#: The mock server, also recording when the last answer was sent (GET /times).
MOCK = r"""
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
from aiohttp import web
from helpers.mock_openai_server import MockConfig, MockServer

class TimedServer(MockServer):
    last_answered_at = None

    def reset(self):
        super().reset()
        self.last_answered_at = None

    def _answered(self, digest):
        super()._answered(digest)
        self.last_answered_at = time.time()

    def _app(self):
        app = super()._app()
        app.router.add_get("/times", self._times)
        return app

    async def _times(self, request):
        s = self.stats
        return web.json_response({
            "first_request_at": s.first_request_at, "first_listing_at": s.first_listing_at,
            "last_answered_at": self.last_answered_at, "requests": s.requests,
            "completed": s.completed, "model_listings": s.model_listings,
        })

async def main():
    server = TimedServer(MockConfig(latency=float(sys.argv[2])))
    await server.start()
    print(f"PORT {server.port}", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""

#: The bare client: the same bodies from the same files, C workers, one pooled session.
BARE = r"""
import asyncio, json, sys
from pathlib import Path
import aiohttp

async def main(url, data, runs, concurrency):
    bodies = []
    for path in sorted(Path(data).glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            queries = [json.loads(line)["query"] for line in fh if line.strip()]
        for run in range(runs):
            bodies += [{"model": "mock", "messages": [{"role": "user", "content": q}],
                        "temperature": 0.0, "max_tokens": 1024, "seed": run} for q in queries]
    feed = iter(bodies)
    done = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def worker():
            nonlocal done
            for body in feed:
                async with session.post(url, json=body) as resp:
                    answer = json.loads(await resp.read())
                done += bool(answer["choices"][0]["message"]["content"])
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    assert done == len(bodies), (done, len(bodies))

asyncio.run(main(sys.argv[1] + "/chat/completions", sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
"""

#: `taxpraben run` in this process, with marks (seconds since the parent spawned it, on stderr,
#: in line with -X importtime's lines) at the first connect and around the phases after the
#: requests; FC_PROFILE: cProfile from the end of Runner._send_all to the end of the command.
DIAG = r"""
import functools, os, sys, time
SPAWNED = float(os.environ["FC_SPAWNED"])
PROFILE = os.environ.get("FC_PROFILE")
if PROFILE:
    import cProfile
    profiler = cProfile.Profile()

def mark(what):
    os.write(2, f"MARK {time.time() - SPAWNED:.4f} {time.process_time():.4f} {what}\n".encode())

mark("interpreter ready")
import atexit
atexit.register(mark, "atexit: the last handler (registered first)")
connected = False

def audit(event, args):
    global connected
    if event == "socket.connect" and not connected:
        connected = True
        mark("first connect")

sys.addaudithook(audit)

PATCHES = {
    "taxpraben.commands.inspect_data": ["registry_or_exit"],
    "taxpraben.commands.options": ["scoring_settings_or_exit"],
    "taxpraben.models.factory": ["create_backend"],
    "taxpraben.run.cache": ["CompletionCache.__init__"],
    "taxpraben.run.runner": ["Runner.__init__", "Runner.run", "Runner._preflight", "Runner._send_all"],
    "taxpraben.data.loader": ["DataStream.__init__", "DataStream.result"],
    "taxpraben.commands.run": ["run"],
    "taxpraben.jobs.generate": ["run_job", "shard_records"],
    "taxpraben.jobs.common": ["in_data_order", "write_predictions_file", "score_and_report"],
    "taxpraben.scoring.pipeline": ["score_to_dir", "score_predictions", "git_hash"],
    "taxpraben.report": ["write_reports"],
    "taxpraben.report.terminal": ["print_summary"],
    "taxpraben.results": ["Results.model_validate"],
}

def wrapped(name, f):
    is_async = getattr(f, "__code__", None) is not None and f.__code__.co_flags & 0x80
    if is_async:
        async def w(*a, **k):
            mark(f"> {name}")
            try:
                return await f(*a, **k)
            finally:
                mark(f"< {name}")
                if PROFILE and name == "Runner._send_all":
                    profiler.enable()
    else:
        def w(*a, **k):
            mark(f"> {name}")
            try:
                return f(*a, **k)
            finally:
                mark(f"< {name}")
    return functools.wraps(f)(w)

def patch(module, names):
    for qualname in names:
        owner_name, _, attr = qualname.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        if isinstance(owner, type):
            raw = next((k.__dict__[attr] for k in owner.__mro__ if attr in k.__dict__), None)
        else:
            raw = getattr(owner, attr, None)
        if raw is None:
            mark(f"! {module.__name__}.{qualname} not found")
            continue
        if isinstance(raw, classmethod):
            setattr(owner, attr, classmethod(wrapped(qualname, raw.__func__)))
        else:
            setattr(owner, attr, wrapped(qualname, raw))

class AfterImport:
    # Patches a module once it has run, wherever and whenever it is first imported.
    def find_spec(self, name, path, target=None):
        if name not in PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            patch(module, PATCHES[name])

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, AfterImport())
try:
    from taxpraben.terminal.collector import pause_collection
except ImportError:  # a --src tree from before terminal/
    from taxpraben.collector import pause_collection
pause_collection()  # as the executable does (taxpraben.__main__)
import taxpraben.cli as cli
mark("command line imported")
sys.argv = ["taxpraben", *sys.argv[1:]]
try:
    cli.build_app(cli.named_command(sys.argv[1:]))()  # the named command alone, as cli.entry builds it
finally:
    mark("command returned")
    if PROFILE:
        profiler.disable()
        profiler.dump_stats(PROFILE)
"""


def call(root: str, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(root + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.loads(resp.read())


def spawn_mock(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", MOCK, str(_common.TESTS), str(latency)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"mock server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


def write_synthetic(directory: Path, records: int, seed: int = 0) -> None:
    """``records`` synthetic records over the 14 datasets (as even as possible)."""
    from make_synthetic import SIZES
    from make_synthetic import records as synthetic_records

    directory.mkdir(parents=True, exist_ok=True)
    tasks = list(SIZES)
    for k, task in enumerate(tasks):
        n = records // len(tasks) + (k < records % len(tasks))
        with (directory / f"{task}.jsonl").open("w", encoding="utf-8") as fh:
            for rec in synthetic_records(task, n, seed):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def measure(cmd: list[str], env: dict[str, str], root: str, expected: int) -> dict[str, Any]:
    """Run ``cmd`` to its end; its figures against the mock's times (one clock)."""
    call(root, "/reset", "POST")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        spawned = time.time()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env={**env, "FC_SPAWNED": repr(spawned)})
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.time()
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", errors="replace")
        out.seek(0)
        stdout = out.read().decode("utf-8", errors="replace")
    times = call(root, "/times")
    if code != 0 or times["completed"] != expected:
        raise SystemExit(f"{' '.join(cmd[:6])}: exit {code}, {times['completed']} of {expected} "
                         f"answered\n{(stderr or stdout)[-3000:]}")  # fmt: skip
    first_chat, last = times["first_request_at"], times["last_answered_at"]
    first_any = min(t for t in (first_chat, times["first_listing_at"]) if t is not None)
    return {
        "wall_s": ended - spawned,
        "start_s": first_chat - spawned,
        "first_any_s": first_any - spawned,
        "generation_s": last - first_chat,
        "tail_s": ended - last,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "requests": times["requests"],
        "spawned": spawned,
        "ended": ended,
        "times": times,
        "stderr": stderr,
    }


class Plan:
    """The commands of one invocation."""

    def __init__(self, args: argparse.Namespace, root: str, work: Path) -> None:
        self.args, self.root, self.work = args, root, work
        self.trees = [s.resolve() for s in (args.src or [_common.ROOT / "src"])]
        self.count = 0

    def bare(self, data: Path, runs: int, concurrency: int) -> list[str]:
        return [sys.executable, "-c", BARE, self.root + "/v1", str(data), str(runs), str(concurrency)]

    def harness(self, tree: Path, config: str, data: str, runs: int, concurrency: int,
                prefix: list[str] | None = None) -> tuple[list[str], dict[str, str]]:  # fmt: skip
        self.count += 1
        flags = list(CONFIGS[config])
        if config in ("default", "thread", "process"):
            flags += ["--cache", str(self.work / f"cache-{self.count}.sqlite")]
        head = prefix or ["-m", "taxpraben"]
        cmd = [sys.executable, *head, "run", "--model", "openai:mock", "--base-url", self.root + "/v1",
               "--data", data, "--runs", str(runs), "--concurrency", str(concurrency),
               "--out", str(self.work / f"out-{self.count}"), *flags]  # fmt: skip
        return cmd, self.env(PYTHONPATH=str(tree), **CONFIG_ENV.get(config, {}))

    def env(self, **extra: str) -> dict[str, str]:
        """quiet_env, and bytecode cached under the work directory (src untouched) unless
        --no-pyc-prefix: the first (warm-up) run compiles, the measured ones load."""
        env = _common.quiet_env(**extra)
        if not self.args.no_pyc_prefix:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(self.work / "pycache")
        return env

    def label(self, tree: Path, config: str) -> str:
        where = f" {tree}" if len(self.trees) > 1 else ""
        return f"taxpraben {config}{where}"


def med(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows)


def spread(rows: list[dict[str, Any]], key: str) -> str:
    values = [float(r[key]) for r in rows]
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def print_table(title: str, figures: dict[str, list[dict[str, Any]]], target: float | None) -> None:
    _common.header(title)
    bare = figures["bare aiohttp"]
    print(f"{'client':<28} {'wall s (min-max)':>19} {'x bare':>6} {'start s':>7} {'1st any':>7} "
          f"{'gen s':>6} {'tail s':>6} {'CPU s':>6} {'x bare':>6} {'RSS MiB':>7} {'x bare':>6} {'requests':>8}")  # fmt: skip
    for name, rows in figures.items():
        print(f"{name[-28:]:<28} {spread(rows, 'wall_s'):>19} {med(rows, 'wall_s') / med(bare, 'wall_s'):>6.3f} "
              f"{med(rows, 'start_s'):>7.3f} {med(rows, 'first_any_s'):>7.3f} {med(rows, 'generation_s'):>6.2f} "
              f"{med(rows, 'tail_s'):>6.3f} {med(rows, 'cpu_s'):>6.2f} {med(rows, 'cpu_s') / med(bare, 'cpu_s'):>6.2f} "
              f"{med(rows, 'rss_mib'):>7.1f} {med(rows, 'rss_mib') / med(bare, 'rss_mib'):>6.2f} "
              f"{int(med(rows, 'requests')):>8}")  # fmt: skip
    for name, rows in figures.items():
        if name == "bare aiohttp":
            continue
        verdicts = []
        if target is not None:
            ratio = med(rows, "wall_s") / med(bare, "wall_s")
            verdicts.append(f"wall {ratio:.3f}x bare (target <= {target}): {'met' if ratio <= target else 'MISSED'}")
        start, tail = med(rows, "start_s"), med(rows, "tail_s")
        verdicts.append(f"start-up {start:.3f} s (<= {START_TARGET_S}): {'met' if start <= START_TARGET_S else 'MISSED'}")
        verdicts.append(f"tail {tail:.3f} s (<= {TAIL_TARGET_S}): {'met' if tail <= TAIL_TARGET_S else 'MISSED'}")
        print(f"  {name}: " + "; ".join(verdicts))


def load_line() -> str:
    """The load averages as ``uptime`` gives them (1, 5, 15 minutes) and the CPUs."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def print_targets(tables: dict[str, dict[str, list[dict[str, Any]]]], concurrencies: list[int], config: str,
                  sample: bool) -> None:  # fmt: skip
    """Issue 38's targets, read from this one invocation, for the first configuration (each
    workload's medians; start-up: the slowest of the workloads' medians)."""
    _common.header(f"issue 38's targets, taxpraben {config}, this run (medians of each workload)")
    starts = []
    for scene, figures in tables.items():
        name = next((n for n in figures if n.startswith(f"taxpraben {config}")), None)
        if name is None:
            continue
        rows, bare = figures[name], figures["bare aiohttp"]
        starts.append((med(rows, "start_s"), scene, med(bare, "start_s")))
        c = int(scene.split("=")[1]) if scene.startswith("C=") else None
        if c in WALL_TARGETS and c in concurrencies:
            ratio = med(rows, "wall_s") / med(bare, "wall_s")
            verdict = "met" if ratio <= WALL_TARGETS[c] else "MISSED"
            print(f"  wall at C={c}: {ratio:.3f}x the bare client's ({med(rows, 'wall_s'):.2f} s / "
                  f"{med(bare, 'wall_s'):.2f} s; target <= {WALL_TARGETS[c]}x): {verdict}")  # fmt: skip
    if starts:
        start, scene, bare_start = max(starts)
        verdict = "met" if start <= START_TARGET_S else "MISSED"
        print(f"  start-up (spawn to the first chat request), slowest workload ({scene}): {start:.3f} s "
              f"(target <= {START_TARGET_S} s; the bare client's own there: {bare_start:.3f} s): {verdict}")  # fmt: skip
    if not sample:
        print("  (--no-sample: the bundled sample's start-up not measured)")
    print(f"  {load_line()} (after)")


# ---------------------------------------------------------------------------- diagnosis


def parse_importtime(stderr: str) -> tuple[list[dict[str, Any]], float | None]:
    """The -X importtime lines (with ``before``: finished before the first connect)."""
    lines: list[dict[str, Any]] = []
    connect_at = None
    for raw in stderr.splitlines():
        if raw.startswith("MARK ") and raw.endswith(" first connect"):
            connect_at = float(raw.split()[1])
        if not raw.startswith("import time:") or "[us]" in raw:
            continue
        self_us, cum_us, name = raw[len("import time:"):].split("|")
        # A negative self time: imports in two threads at once (the scoring warm-up thread)
        # garble -X importtime's bookkeeping; such a line counts 0 (and is counted).
        lines.append({
            "self_ms": max(0, int(self_us)) / 1000, "cum_ms": max(0, int(cum_us)) / 1000,
            "garbled": int(self_us) < 0,
            "depth": (len(name) - len(name.lstrip(" "))) // 2, "name": name.strip(),
            "before": connect_at is None,
        })  # fmt: skip
    # Post-order (a module's line follows its imports'): walk backwards to find each parent.
    stack: list[dict[str, Any]] = []
    for line in reversed(lines):
        while stack and stack[-1]["depth"] >= line["depth"]:
            stack.pop()
        line["parent"] = stack[-1]["name"] if stack else None
        line["up"] = stack[-1] if stack else None
        stack.append(line)
    return lines, connect_at


def group(name: str) -> str:
    """Third-party and stdlib modules by top-level package; taxpraben by subpackage."""
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "taxpraben" else parts[0]


def report_imports(lines: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for line in lines:
        if not line["before"]:
            continue
        g = groups.setdefault(group(line["name"]), {"group": group(line["name"]), "self_ms": 0.0,
                                                     "incl_ms": 0.0, "modules": 0, "importer": None})  # fmt: skip
        g["self_ms"] += line["self_ms"]
        g["modules"] += 1
        parent_group = group(line["parent"]) if line["parent"] else None
        if parent_group != g["group"]:
            g["incl_ms"] += line["cum_ms"]
            if g["importer"] is None or line["cum_ms"] > g.get("_biggest", 0):
                parent = line["parent"] or ("(top level)" if line["depth"] == 0 else "(another thread)")
                g["importer"], g["_biggest"], g["_line"] = parent, line["cum_ms"], line
    rows = sorted(groups.values(), key=lambda g: -g["self_ms"])
    total = sum(g["self_ms"] for g in rows)
    garbled = sum(1 for line in lines if line["before"] and line["garbled"])
    print(f"imports finished before the first connect: {sum(g['modules'] for g in rows)} modules, "
          f"{total:.0f} ms self in all" + (f" ({garbled} lines garbled by a concurrent import in "
          "another thread, counted 0)" if garbled else ""))  # fmt: skip
    print(f"{'package':<34} {'self ms':>8} {'incl ms':>8} {'modules':>7}  first pulled in by (biggest)")
    for g in rows[:top]:
        importer = g["importer"] or "(its importer finished after the first connect)"
        print(f"{g['group']:<34} {g['self_ms']:>8.1f} {g['incl_ms']:>8.1f} {g['modules']:>7}  {importer}")
    print("import chains (the biggest import of each of the top packages, up to the top level):")
    for g in rows[: min(top, 12)]:
        chain, line = [], g.get("_line")
        while line is not None:
            chain.append(line["name"])
            line = line["up"]
        if chain:
            g["chain"] = chain
            print(f"  {g['group']}: " + " <- ".join(chain))
    after = [line for line in lines if not line["before"] and line["depth"] == 0]
    if after:
        print("imported after the first connect (top level, by cumulative ms): " + ", ".join(
            f"{line['name']} {line['cum_ms']:.0f}" for line in sorted(after, key=lambda x: -x["cum_ms"])[:12]))  # fmt: skip
    for g in rows:
        g.pop("_biggest", None)
        g.pop("_line", None)
    return rows


def report_marks(m: dict[str, Any]) -> list[dict[str, Any]]:
    """The timeline (seconds since spawn) of the marks and the mock's times; phase lengths."""
    # (seconds since spawn, CPU seconds of the process so far or None, what)
    events: list[tuple[float, float | None, str]] = []
    for raw in m["stderr"].splitlines():
        if raw.startswith("MARK "):
            _, t, cpu, what = raw.split(" ", 3)
            events.append((float(t), float(cpu), what))
    times = m["times"]
    for key, what in (("first_listing_at", "mock: first listing"), ("first_request_at", "mock: first chat request"),
                      ("last_answered_at", "mock: last answer sent")):  # fmt: skip
        if times.get(key) is not None:
            events.append((times[key] - m["spawned"], None, what))
    events.append((m["ended"] - m["spawned"], m["cpu_s"], "process exited (CPU: os.wait4)"))
    events.sort(key=lambda e: e[0])
    print(f"{'t s':>8} {'+ms':>7} {'CPU s':>6} {'+CPU ms':>7}  event   (t: since spawn; CPU: the process's, all threads)")
    previous, previous_cpu = 0.0, 0.0
    for t, cpu, what in events:
        step = "" if cpu is None else f"{1000 * (cpu - previous_cpu):7.1f}"
        print(f"{t:>8.3f} {1000 * (t - previous):>7.1f} {'' if cpu is None else f'{cpu:6.2f}':>6} {step:>7}  {what}")
        previous = t
        previous_cpu = previous_cpu if cpu is None else cpu
    phases: list[dict[str, Any]] = []
    opened: dict[str, list[tuple[float, float]]] = {}
    for t, cpu, what in events:
        if cpu is None:
            continue
        if what.startswith("> "):
            opened.setdefault(what[2:], []).append((t, cpu))
        elif what.startswith("< ") and opened.get(what[2:]):
            t0, cpu0 = opened[what[2:]].pop()
            phases.append({"phase": what[2:], "ms": 1000 * (t - t0), "cpu_ms": 1000 * (cpu - cpu0)})
    return phases


def report_profile(path: Path, top: int) -> list[dict[str, Any]]:
    import pstats

    stats = pstats.Stats(str(path))
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        short = file
        for cut in ("site-packages/", "/src/", "/lib/python3"):
            if cut in file:
                short = file.split(cut, 1)[1]
                break
        rows.append({"where": f"{short}:{line}:{func}", "calls": nc, "tottime_ms": 1000 * tt, "cumtime_ms": 1000 * ct})
    print(f"{'cum ms':>8} {'self ms':>8} {'calls':>8}  file:line:function  (by cumulative)")
    for r in sorted(rows, key=lambda r: -r["cumtime_ms"])[:top]:
        print(f"{r['cumtime_ms']:>8.1f} {r['tottime_ms']:>8.1f} {r['calls']:>8}  {r['where']}")
    print(f"{'self ms':>8} {'cum ms':>8} {'calls':>8}  file:line:function  (by own time)")
    for r in sorted(rows, key=lambda r: -r["tottime_ms"])[:top]:
        print(f"{r['tottime_ms']:>8.1f} {r['cumtime_ms']:>8.1f} {r['calls']:>8}  {r['where']}")
    print(f"{'cum ms':>8} {'self ms':>8} {'calls':>8}  taxpraben/ functions only (by cumulative)")
    for r in [r for r in sorted(rows, key=lambda r: -r["cumtime_ms"]) if r["where"].startswith("taxpraben/")][:top]:
        print(f"{r['cumtime_ms']:>8.1f} {r['tottime_ms']:>8.1f} {r['calls']:>8}  {r['where']}")
    # Imports started directly by a function of this package or of the benchmark: which
    # function pays for which import (the edge into importlib's _find_and_load / _handle_fromlist).
    paid: dict[str, float] = {}
    for (_file, _line, func), entry in stats.stats.items():  # type: ignore[attr-defined]
        if func not in ("_find_and_load", "_handle_fromlist", "import_module", "_gcd_import"):
            continue
        for (cfile, cline, cfunc), edge in entry[4].items():
            if "taxpraben" in cfile and "importlib" not in cfile:
                where = f"{cfile.split('/src/', 1)[-1]}:{cline}:{cfunc}"
                paid[where] = paid.get(where, 0.0) + 1000 * edge[3]
    print(f"{'import ms':>9}  taxpraben/ function that imports (cumulative time of its imports)")
    for where, ms in sorted(paid.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{ms:>9.1f}  {where}")
    ranked = sorted(rows, key=lambda r: -r["cumtime_ms"])[: 3 * top]
    return ranked + [{"where": w, "import_ms": ms} for w, ms in paid.items()]


def diagnose(plan: Plan, directory: Path, workloads: list[tuple[str, str, int, int, int]]) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    tree, config = plan.trees[-1], plan.args.configs[0]
    found: dict[str, Any] = {}
    for name, data, runs, concurrency, expected in workloads:
        _common.header(f"diagnosis, {name}: taxpraben {config}, C={concurrency} ({tree})")
        cmd, env = plan.harness(tree, config, data, runs, concurrency, prefix=["-X", "importtime", "-c", DIAG])
        m = measure(cmd, env, plan.root, expected)
        (directory / f"imports-{name}.txt").write_text(m["stderr"], encoding="utf-8")
        lines, connect_at = parse_importtime(m["stderr"])
        print(f"(-X importtime run: first connect {connect_at} s, first chat {m['start_s']:.3f} s, wall {m['wall_s']:.2f} s)")
        imports = report_imports(lines, plan.args.top)
        cmd, env = plan.harness(tree, config, data, runs, concurrency, prefix=["-c", DIAG])
        m = measure(cmd, env, plan.root, expected)
        print(f"\nphases (a run with marks only: start-up {m['start_s']:.3f} s, tail {m['tail_s']:.3f} s, "
              f"wall {m['wall_s']:.2f} s)")  # fmt: skip
        phases = report_marks(m)
        print(f"{'phase':<34} {'ms':>8} {'CPU ms':>8}")
        for p in phases:
            print(f"{p['phase']:<34} {p['ms']:>8.1f} {p['cpu_ms']:>8.1f}")
        profile = directory / f"tail-{name}.prof"
        cmd, env = plan.harness(tree, config, data, runs, concurrency, prefix=["-c", DIAG])
        env["FC_PROFILE"] = str(profile)
        m = measure(cmd, env, plan.root, expected)
        print(f"\ncProfile from the end of Runner._send_all to the end of the command (tail of this run "
              f"{m['tail_s']:.3f} s, under the profiler; {profile})")  # fmt: skip
        found[name] = {"imports": imports, "phases": phases, "profile": report_profile(profile, plan.args.top)}
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=int, default=2000, help="Requests per client and concurrency.")
    p.add_argument("--runs", type=int, default=1, help="Runs: PROMPTS / RUNS records of the synthetic data.")
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--concurrency", default="64,256", help="Comma-separated.")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--configs", default="default,lean", help=f"Comma-separated, of {', '.join(CONFIGS)}.")
    p.add_argument("--src", action="append", type=Path, help="Source tree for taxpraben (repeatable); default: this checkout's src.")
    p.add_argument("--no-sample", action="store_true", help="Skip the bundled sample's rows.")
    p.add_argument("--diagnose", type=Path, metavar="DIR", help="Also the instrumented runs; their files go to DIR.")
    p.add_argument(
        "--no-pyc-prefix",
        action="store_true",
        help="Keep the environment's bytecode settings (with PYTHONDONTWRITEBYTECODE=1 and no "
        "__pycache__ in src, every taxpraben module is compiled at each start).",
    )
    p.add_argument("--top", type=int, default=25, help="Rows of the diagnosis lists.")
    p.add_argument("--json", type=Path, help="Write every figure to this file.")
    args = p.parse_args()
    args.configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in args.configs if c not in CONFIGS]
    if unknown or args.prompts % args.runs:
        raise SystemExit(f"unknown configs {unknown}" if unknown else "--prompts must be a multiple of --runs")
    concurrencies = [int(c) for c in args.concurrency.split(",") if c]
    print(f"machine: {_common.machine()}; {load_line()} (before)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        write_synthetic(data, args.prompts // args.runs)
        sample = _common.ROOT / "src" / "taxpraben" / "data" / "sample"
        sample_n = sum(1 for f in sample.glob("*.jsonl") for line in f.open(encoding="utf-8") if line.strip())
        server, root = spawn_mock(args.latency)
        plan = Plan(args, root, work)
        print(f"scenario: {args.prompts} requests ({args.prompts // args.runs} synthetic records x {args.runs} runs), "
              f"L={args.latency} s, C={concurrencies}, {args.repeat} repeats, configs {args.configs}, "
              f"trees {[str(t) for t in plan.trees]}")  # fmt: skip
        variants = [("bare aiohttp", None, None)] + [
            (plan.label(t, c), t, c) for t in plan.trees for c in args.configs
        ]
        tables: dict[str, dict[str, list[dict[str, Any]]]] = {}
        scenes = [(f"C={c}", str(data), args.runs, c, args.prompts, data) for c in concurrencies]
        if not args.no_sample:
            scenes.append(("sample C=64", "sample", 1, 64, sample_n, sample))
        try:
            for name, tree, config in variants:  # warm-up: bytecode and the disk cache; not counted
                if tree is None:
                    cmd, env = plan.bare(data, args.runs, concurrencies[0]), plan.env()
                else:
                    cmd, env = plan.harness(tree, config, str(data), args.runs, concurrencies[0])
                m = measure(cmd, env, root, args.prompts)
                print(f"  warm-up {name:<28} wall {m['wall_s']:6.2f} s", flush=True)
            for r in range(args.repeat):
                for scene, data_arg, runs, c, expected, data_dir in scenes:
                    table = tables.setdefault(scene, {name: [] for name, _, _ in variants})
                    order = variants[r % len(variants):] + variants[: r % len(variants)]
                    for name, tree, config in order:
                        if tree is None:
                            cmd, env = plan.bare(data_dir, runs, c), plan.env()
                        else:
                            cmd, env = plan.harness(tree, config, data_arg, runs, c)
                        m = measure(cmd, env, root, expected)
                        table[name].append({k: v for k, v in m.items() if k not in ("stderr", "times")})
                        print(f"  repeat {r + 1} {scene:<12} {name:<28} wall {m['wall_s']:6.2f} s  start {m['start_s']:.3f}  "
                              f"tail {m['tail_s']:.3f}  CPU {m['cpu_s']:5.2f}  RSS {m['rss_mib']:6.1f} MiB  load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
            for scene, _, _, c, expected, _ in scenes:
                ideal = expected * args.latency / c
                print_table(f"{scene}: {expected} requests, ideal {ideal:.2f} s (medians of {args.repeat})",
                            tables[scene], None if scene.startswith("sample") else WALL_TARGETS.get(c))  # fmt: skip
            print_targets(tables, concurrencies, args.configs[0], not args.no_sample)
            found = None
            if args.diagnose is not None:
                c = concurrencies[0]
                workloads = [(f"synthetic-C{c}", str(data), args.runs, c, args.prompts)]
                if not args.no_sample:
                    workloads.insert(0, ("sample", "sample", 1, 64, sample_n))
                found = diagnose(plan, args.diagnose, workloads)
        finally:
            server.kill()
            server.wait()
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": _common.machine(), "args": vars(args), "tables": tables,
                                         "diagnosis": found}, default=str, indent=1), encoding="utf-8")  # fmt: skip


if __name__ == "__main__":
    main()
