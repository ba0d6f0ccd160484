"""``taxpraben score --no-semantic`` of the full-size synthetic benchmark (36,500 predictions),
this checkout beside another one (``--vs-src OTHER/src``) in the same invocation, and whether
both wrote the same files.

    cp -r "$(git rev-parse --show-toplevel)/src" /tmp/before_src   # or: git archive BASE src | tar -x -C /tmp/before
    .venv/bin/python benchmarks/score_speed.py --vs-src /tmp/before/src

Each side runs as a whole process (``python -m taxpraben score``, the source tree on
``PYTHONPATH``), the two in turn (this, other, this, other, ... ``--rounds`` pairs), measured
with ``os.wait4`` (:func:`_common.run_measured`): wall seconds, CPU seconds (user + system) and
peak RSS. Printed: each figure's median per side, and the ratio this / other, pair by pair and
its median (a pair ran back to back, so the ratio holds when a shared machine's speed drifts).

Then the outputs of the first pair are compared file by file (samples.jsonl, results.json,
report.md, report.html, summary.csv, config.yaml) after masking what differs from run to run:
timestamps, the git hash (the other tree may be no checkout) and the paths of the output
directory and of each source tree (results.json names the task spec files).
Any difference is printed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, machine, quiet_env, run_measured

OUTPUTS = ("samples.jsonl", "results.json", "report.md", "report.html", "summary.csv", "config.yaml")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")
#: The git hash (results.json's meta and manifest, the reports): the other tree may be no checkout.
_GIT = re.compile(r'"git_(?:hash|commit)": (?:"[0-9a-f]{7,40}"|null)')
_GIT_SHOWN = re.compile(r" \(git [0-9a-f]{7,40}\)")


def _score(src: Path, data: Path, predictions: Path, out: Path):  # -> _common.Measured
    cmd = [sys.executable, "-m", "taxpraben", "score", "--data", str(data), "--predictions", str(predictions),
           "--no-semantic", "--out", str(out)]  # fmt: skip
    return run_measured(cmd, env=quiet_env(PYTHONPATH=str(src))).check(f"score with {src}")


def _masked(path: Path, out: Path, src: Path) -> str:
    text = path.read_text(encoding="utf-8").replace(str(out), "OUT").replace(str(src), "SRC")
    return _GIT_SHOWN.sub("", _GIT.sub("GIT", _TIMESTAMP.sub("TIME", text)))


def differences(this_out: Path, other_out: Path, this_src: Path, other_src: Path) -> list[str]:
    """The files of the two output directories that differ once masked, with a short diff."""
    found = []
    for name in OUTPUTS:
        a, b = this_out / name, other_out / name
        if not a.exists() or not b.exists():
            if a.exists() != b.exists():
                found.append(f"{name}: written by one side only")
            continue
        mine, theirs = _masked(a, this_out, this_src), _masked(b, other_out, other_src)
        if mine != theirs:
            diff = difflib.unified_diff(theirs.splitlines(), mine.splitlines(), "other", "this", n=0, lineterm="")
            shown = [line[:300] for line in itertools.islice(diff, 12)]
            found.append(f"{name} differs:\n  " + "\n  ".join(shown))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs-src", type=Path, required=True, help="the src/ of the other checkout")
    parser.add_argument("--rounds", type=int, default=3, help="pairs of runs (default 3)")
    parser.add_argument("--data", type=Path, help="a synthetic data directory (default: made here, --seed 0)")
    parser.add_argument("--predictions", type=Path, help="its predictions (with --data)")
    args = parser.parse_args()
    sources = {"this": ROOT / "src", "other": args.vs_src.resolve()}
    with tempfile.TemporaryDirectory(prefix="score_speed_") as tmp:
        work = Path(tmp)
        data, predictions = args.data, args.predictions
        if data is None or predictions is None:
            data, predictions = work / "data", work / "predictions.jsonl"
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_synthetic.py"), "--out", str(data),
                            "--predictions", str(predictions), "--seed", "0"], check=True, capture_output=True)  # fmt: skip
        print(f"{machine()}; score --no-semantic of {predictions}; {args.rounds} pair(s), this then other")
        figures: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "rss": []} for name in sources}
        for round_ in range(args.rounds):
            for name, src in sources.items():
                got = _score(src, data, predictions, work / f"{name}{round_}")
                figures[name]["wall"].append(got.wall_s)
                figures[name]["cpu"].append(got.cpu_s)
                figures[name]["rss"].append(got.peak_rss_mib)
                print(f"  round {round_ + 1} {name:5s}: wall {got.wall_s:6.2f} s  CPU {got.cpu_s:6.2f} s"
                      f"  peak RSS {got.peak_rss_mib:6.1f} MiB", flush=True)  # fmt: skip
        for what, unit in (("wall", "s"), ("cpu", "s"), ("rss", "MiB")):
            this, other = figures["this"][what], figures["other"][what]
            ratios = [a / b for a, b in zip(this, other, strict=True)]
            print(f"{what:4s} median this {statistics.median(this):7.2f} {unit:3s} other {statistics.median(other):7.2f}"
                  f" {unit:3s}  this/other per pair {', '.join(f'{r:.3f}' for r in ratios)};"
                  f" median {statistics.median(ratios):.3f}")  # fmt: skip
        found = differences(work / "this0", work / "other0", sources["this"], sources["other"])
    if found:
        print("outputs differ (timestamps, git hash and paths masked):")
        print("\n".join(found))
        return 1
    print(f"outputs identical: {', '.join(OUTPUTS)} (timestamps, git hash and paths masked)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
