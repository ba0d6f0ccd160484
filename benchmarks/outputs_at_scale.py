"""What one model's evaluation leaves on disk at full scale, and what the steps after it cost
(issue 14): file sizes, the merge of N shards, a leaderboard of many result directories.

Steps (``--steps``, default all, in this order), each command a child process measured with
``os.wait4`` (wall, CPU, peak RSS of that process alone):

- ``score``: ``taxpraben score --no-semantic`` of the synthetic benchmark's predictions
  (``make_synthetic.py --predictions``; 36,500 at full scale); the sizes of results.json,
  samples.jsonl (and gzip-compressed), report.md and report.html.
- ``shards``: for each N in ``--shards``, N shard runs ``taxpraben run --model replay:PRED
  --shard I/N --no-score --no-cache`` (the replay backend answers from the predictions file:
  no endpoint, so this times the harness, not a model), then ``taxpraben merge`` of the N
  shard directories, which scores the whole. The sum of the shards' predictions.jsonl is the
  size of one run's predictions.jsonl.
- ``leaderboard``: ``taxpraben report D1 ... DK --quiet`` over K hard-linked copies of the
  ``score`` step's directory (results.json and samples.jsonl), for each K in ``--copies``:
  wall, peak RSS, leaderboard.md/.html sizes. Copies of one result are the worst case for
  nothing (the paired bootstrap does the same work whatever the scores are).
- ``semantic``: ``taxpraben score`` with BERTScore and BARTScore on the tiny scorer models
  (CPU): only for the size of samples.jsonl with every semantic value filled (the times say
  nothing about real models).

    python benchmarks/make_synthetic.py --out /tmp/syn --predictions /tmp/syn-preds.jsonl
    python benchmarks/outputs_at_scale.py --data /tmp/syn --predictions /tmp/syn-preds.jsonl --work /tmp/out
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
from pathlib import Path

from _common import TAXPRABEN, Measured, header, machine, quiet_env, run_measured

STEPS = ("score", "shards", "leaderboard", "semantic")


def mib(path: Path) -> float:
    return path.stat().st_size / 2**20


def show(label: str, m: Measured) -> None:
    print(
        f"  {label:<46} wall {m.wall_s:7.2f} s   CPU {m.cpu_s:7.2f} s   peak RSS {m.peak_rss_mib:6.0f} MiB",
        flush=True,
    )


def gzip_mib(path: Path) -> float:
    """Size of ``path`` compressed with gzip at its default level (streamed)."""
    total = 0

    class Count:
        def write(self, data: bytes) -> None:
            nonlocal total
            total += len(data)

        def flush(self) -> None:
            pass

    with open(path, "rb") as src, gzip.GzipFile(fileobj=Count(), mode="wb") as out:  # type: ignore[arg-type]
        shutil.copyfileobj(src, out, 1 << 20)
    return total / 2**20


def sizes(out: Path, files: tuple[str, ...]) -> None:
    for name in files:
        path = out / name
        if path.exists():
            line = f"    {name:<18} {mib(path):9.2f} MiB"
            if name.endswith(".jsonl"):
                with open(path, "rb") as fh:
                    n = sum(1 for _ in fh)
                line += f"   {n} lines, {path.stat().st_size / max(n, 1):.0f} bytes/line, gzip {gzip_mib(path):.2f} MiB"
            print(line, flush=True)


def step_score(args: argparse.Namespace) -> Path:
    out = args.work / "scored"
    header(f"score --no-semantic: {args.predictions}")
    cmd = [TAXPRABEN, "score", "--data", str(args.data), "--predictions", str(args.predictions),
           "--no-semantic", "--out", str(out)]  # fmt: skip
    show("taxpraben score --no-semantic", run_measured(cmd, env=quiet_env()).check("score"))
    sizes(out, ("results.json", "samples.jsonl", "report.md", "report.html"))
    return out


def step_shards(args: argparse.Namespace) -> None:
    for n in args.shards:
        root = args.work / f"shards-{n}"
        shutil.rmtree(root, ignore_errors=True)
        header(f"{n} shards (replay backend) then merge")
        walls = []
        for i in range(n):
            cmd = [TAXPRABEN, "run", "--model", f"replay:{args.predictions}", "--data", str(args.data),
                   "--runs", str(args.runs), "--shard", f"{i}/{n}", "--no-score", "--no-cache",
                   "--out", str(root / f"shard-{i}")]  # fmt: skip
            walls.append(run_measured(cmd, env=quiet_env()).check(f"shard {i}/{n}").wall_s)
        preds = sum((root / f"shard-{i}" / "predictions.jsonl").stat().st_size for i in range(n))
        print(
            f"  shards: wall per shard min {min(walls):.2f} / max {max(walls):.2f} s, sum {sum(walls):.2f} s;"
            f" predictions.jsonl together {preds / 2**20:.2f} MiB",
            flush=True,
        )
        cmd = [TAXPRABEN, "merge", *[str(root / f"shard-{i}") for i in range(n)], "--data", str(args.data),
               "--no-semantic", "--out", str(root / "merged")]  # fmt: skip
        show(
            f"taxpraben merge of {n} shards (--no-semantic)",
            run_measured(cmd, env=quiet_env()).check("merge"),
        )
        sizes(root / "merged", ("predictions.jsonl", "samples.jsonl", "results.json"))


def step_leaderboard(args: argparse.Namespace, scored: Path) -> None:
    for k in args.copies:
        root = args.work / f"copies-{k}"
        shutil.rmtree(root, ignore_errors=True)
        dirs = []
        for i in range(k):
            d = root / f"model-{i:03d}"
            d.mkdir(parents=True)
            for name in ("results.json", "samples.jsonl"):
                os.link(scored / name, d / name)  # same bytes, no copy
            dirs.append(str(d))
        header(f"leaderboard of {k} result directories")
        cmd = [TAXPRABEN, "report", *dirs, "--out", str(root / "board"), "--quiet"]
        show(
            f"taxpraben report ({k} directories)",
            run_measured(cmd, env=quiet_env()).check("report"),
        )
        sizes(root / "board", ("leaderboard.md", "leaderboard.html"))


def step_semantic(args: argparse.Namespace) -> None:
    from helpers.tiny_models import build_tiny_bart, build_tiny_xlnet

    out = args.work / "scored-semantic"
    header("score with the tiny semantic models (CPU): samples.jsonl with every semantic value")
    xlnet = build_tiny_xlnet(args.work / "tiny-xlnet")
    bart = build_tiny_bart(args.work / "tiny-bart")
    cmd = [TAXPRABEN, "score", "--data", str(args.data), "--predictions", str(args.predictions),
           "--bertscore-model", str(xlnet), "--bertscore-layer", "4", "--bartscore-model", str(bart),
           "--device", "cpu", "--out", str(out)]  # fmt: skip
    show(
        "taxpraben score (tiny BERTScore + BARTScore)",
        run_measured(cmd, env=quiet_env()).check("score"),
    )
    sizes(out, ("results.json", "samples.jsonl", "report.html"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, required=True, help="make_synthetic.py --out")
    p.add_argument(
        "--predictions", type=Path, required=True, help="make_synthetic.py --predictions"
    )
    p.add_argument("--work", type=Path, required=True, help="directory for the outputs (rewritten)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument(
        "--steps", default=",".join(STEPS), help=f"comma-separated, from {','.join(STEPS)}"
    )
    p.add_argument("--shards", type=int, nargs="+", default=[4, 16])
    p.add_argument("--copies", type=int, nargs="+", default=[10, 100])
    args = p.parse_args(argv)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    if unknown := set(steps) - set(STEPS):
        p.error(f"unknown steps: {', '.join(sorted(unknown))}")
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}")
    scored = args.work / "scored"
    if "score" in steps:
        scored = step_score(args)
    if "shards" in steps:
        step_shards(args)
    if "leaderboard" in steps:
        if not (scored / "samples.jsonl").exists():
            p.error("the leaderboard step needs the score step's output (run it first)")
        step_leaderboard(args, scored)
    if "semantic" in steps:
        step_semantic(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
