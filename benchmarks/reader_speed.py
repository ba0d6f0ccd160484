"""How fast the answer readers are: items read per second by ``prepare_item`` (no semantic
scoring), on the synthetic benchmark's model-like predictions and on the test corpus, for this
checkout and, side by side in the same run, another one (``--vs-src OTHER/src``).

    .venv/bin/python benchmarks/reader_speed.py --vs-src /tmp/before/src

Each checkout is timed in its own fresh process (alternating, ``--rounds`` times); the median of
the rounds is printed with the ratio this / other.
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
items = [(registry[p.task], records[(p.task, p.id)], p.prediction) for p in preds if (p.task, p.id) in records]
for path in sorted(Path(sys.argv[5]).glob("*.jsonl")):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        case = json.loads(line)
        spec = registry[case["task"]]
        record, _ = check_record(case["record"], spec, path, number, "line")
        items.append((spec, record, case["output"]))
start = time.perf_counter()
for spec, record, output in items:
    prepare_item(spec, record, 0, output, None)
print(json.dumps({"items": len(items), "seconds": time.perf_counter() - start}))
"""


def _time(src: Path, data: Path, preds: Path) -> tuple[int, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(src), str(ROOT / "benchmarks"), str(data), str(preds),
         str(ROOT / "tests" / "corpus")],
        check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(src)},
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["items"], got["seconds"]


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
        times: dict[str, list[float]] = {name: [] for name in sources}
        count = 0
        for _ in range(args.rounds):
            for name, src in sources.items():
                count, seconds = _time(src, data, preds)
                times[name].append(seconds)
        for name, values in times.items():
            median = statistics.median(values)
            print(f"{name:5s}: {count} items in {median:.2f} s (median of {args.rounds}), {count / median:,.0f} items/s")
        if "other" in times:
            print(f"ratio this / other: {statistics.median(times['this']) / statistics.median(times['other']):.2f}")


if __name__ == "__main__":
    main()
