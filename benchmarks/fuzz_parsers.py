"""Fuzz the data loader, the predictions reader and every parser for minutes (issue 7, item 6).

The targets, strategies and checks are those of ``tests/test_fuzz_parsers.py`` (which runs
each briefly in CI); here each target runs in rounds of fresh random inputs until its share
of ``--minutes`` is spent. Then every task's scoring path gets every huge input (10 MB of
prose, JSON nested a million levels deep, ...) under both profiles, timed, with the growth
of the process's peak RSS.

    python benchmarks/fuzz_parsers.py                 # 3 minutes of fuzzing + the huge inputs
    python benchmarks/fuzz_parsers.py --minutes 10 --targets fields,numbers

Any failure prints hypothesis's minimal failing example and exits 1.
"""

from __future__ import annotations

import argparse
import time

import _common  # (also puts tests/ on sys.path)

from taxpraben.scoring.items import PROFILES, prepare_item
from test_fuzz_parsers import HUGE, REGISTRY, TARGETS, _records, fuzz


def fuzz_for(name: str, seconds: float, round_size: int) -> int:
    """Rounds of ``round_size`` inputs until ``seconds`` are spent; returns the inputs tried."""
    tried, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        fuzz(name, round_size)
        tried += round_size
    return tried


def huge_inputs() -> float:
    """Time every task x huge input x profile; returns the slowest call in seconds."""
    records = _records()
    worst = 0.0
    print(f"{'input':<12} {'MB':>5} {'task':<11} {'profile':<10} {'seconds':>8} {'RSS +MiB':>9}  status")
    for shape, text in HUGE.items():
        size = len(text.encode("utf-8")) / 1e6
        for task in REGISTRY:
            for profile in PROFILES:
                base = _common.peak_rss_mib(reset=True)
                start = time.perf_counter()
                item = prepare_item(REGISTRY[task], records[task], 0, text, None, profile)  # type: ignore[arg-type]
                elapsed = time.perf_counter() - start
                grown = _common.peak_rss_mib() - base
                worst = max(worst, elapsed)
                print(f"{shape:<12} {size:5.1f} {task:<11} {profile:<10} {elapsed:8.2f} {grown:9.0f}  {item.status}", flush=True)
    return worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=3.0, help="fuzzing time over all targets")
    p.add_argument("--targets", help=f"comma-separated subset of {', '.join(TARGETS)}")
    p.add_argument("--round", type=int, default=200, help="inputs per hypothesis round")
    p.add_argument("--no-huge", action="store_true", help="skip the huge-input table")
    args = p.parse_args(argv)
    names = args.targets.split(",") if args.targets else list(TARGETS)
    share = args.minutes * 60 / len(names)
    total = 0
    started = time.monotonic()
    for name in names:
        t0 = time.monotonic()
        n = fuzz_for(name, share, args.round)
        total += n
        print(f"{name:<18} {n:7d} inputs in {time.monotonic() - t0:6.1f} s: no failure", flush=True)
    print(f"fuzzing: {total} inputs over {len(names)} targets in {time.monotonic() - started:.0f} s, no failure")
    if not args.no_huge:
        worst = huge_inputs()
        print(f"huge inputs: slowest call {worst:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
