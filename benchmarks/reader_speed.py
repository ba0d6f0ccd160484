"""How fast the answer readers are: items read per second by ``prepare_item`` (no semantic
scoring), on the synthetic benchmark's model-like predictions and on the test corpus, for this
checkout and, side by side in the same run, another one (``--vs-src OTHER/src``).

    .venv/bin/python benchmarks/reader_speed.py --vs-src /tmp/before/src

Each checkout is timed in its own fresh process (alternating, ``--rounds`` times); the median of
the rounds is printed with the ratio this / other (of the wall time, and of the CPU time,
which other work on a shared machine disturbs less), for each workload (the synthetic predictions,
then the test corpus) apart.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
try:
    from taxpraben.data.checks import check_record
except ImportError:  # a tree from before data/loader.py was split
    from taxpraben.data.loader import check_record
from taxpraben.data.loader import load_data
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry
try:
    from taxpraben.results.predictions import read_predictions
except ImportError:  # a tree from before the predictions file joined results/
    from taxpraben.predictions import read_predictions
registry = load_registry(use_env=False)
loaded = load_data(Path(sys.argv[3]), registry)
records = {(t, r.id): r for t, recs in loaded.records.items() for r in recs}
preds = [p for p in read_predictions(Path(sys.argv[4]))]
synthetic = [(registry[p.task], records[(p.task, p.id)], p.prediction) for p in preds if (p.task, p.id) in records]
corpus = []
for path in sorted(Path(sys.argv[5]).glob("*.jsonl")):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        case = json.loads(line)
        spec = registry[case["task"]]
        record, _ = check_record(case["record"], spec, path, number, "line")
        corpus.append((spec, record, case["output"]))
timed = {}
for name, items in (("synthetic", synthetic), ("corpus", corpus)):
    start, cpu = time.perf_counter(), time.process_time()
    for spec, record, output in items:
        prepare_item(spec, record, 0, output, None)
    timed[name] = [len(items), time.perf_counter() - start, time.process_time() - cpu]
print(json.dumps(timed))
"""


WORKLOADS = ("synthetic", "corpus")


def _time(src: Path, data: Path, preds: Path) -> dict[str, tuple[int, float, float]]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(src), str(ROOT / "benchmarks"), str(data), str(preds),
         str(ROOT / "tests" / "corpus")],
        check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(src)},
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {name: (got[name][0], got[name][1], got[name][2]) for name in WORKLOADS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs-src", type=Path, help="the src/ of another checkout to time beside this one")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, preds = Path(tmp) / "data", Path(tmp) / "predictions.jsonl"
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "make_synthetic.py"), "--out", str(data), "--scale",
             str(args.scale), "--predictions", str(preds), "--runs", "1"],
            check=True, capture_output=True,
        )
        sources = {"this": ROOT / "src", **({"other": args.vs_src} if args.vs_src else {})}
        times: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        counts: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, src in sources.items():
                for workload, (count, seconds, cpu) in _time(src, data, preds).items():
                    counts[workload] = count
                    times.setdefault((workload, name), []).append(seconds)
                    cpus.setdefault((workload, name), []).append(cpu)
        for workload in WORKLOADS:
            count = counts[workload]
            for name in sources:
                median = statistics.median(times[(workload, name)])
                cpu = statistics.median(cpus[(workload, name)])
                print(f"{workload:9s} {name:5s}: {count} items in {median:.3f} s (median of {args.rounds}),"
                      f" {count / median:,.0f} items/s; CPU {cpu:.3f} s")
            if "other" in sources:
                wall, cpu = (statistics.median(d[(workload, "this")]) / statistics.median(d[(workload, "other")])
                             for d in (times, cpus))
                print(f"{workload:9s} ratio this / other: {wall:.2f} (CPU time: {cpu:.2f})")


if __name__ == "__main__":
    main()
