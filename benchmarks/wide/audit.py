"""Second-grader audit of the wide corpus's hand grades.

    python3 benchmarks/wide/audit.py --draw              # -> audit/blind.jsonl (no grades, no hints)
    python3 benchmarks/wide/audit.py --draw --later      # -> audit/blind-later.jsonl (sources added since)
    python3 benchmarks/wide/audit.py --compare [--list]  # audit/grades.tsv vs the sources' first grades

``--draw`` takes, with ``random.Random(20261207)``, 12 cases from each source's ``cases.jsonl``
(sources in sorted order, all of a source if it has fewer; none skipped) and writes only
``id``, ``task``, ``record`` and ``output``. ``--compare`` joins ``audit/grades.tsv`` (same columns
as a source's ``grades.tsv``) with the first grades and prints, per source, the cases audited, how
many have the same status, read and score, and the disagreements; then the overall agreement with a
Wilson 95% interval. ``--list`` also prints each disagreement with both grades (no output text).

Stdlib only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"
AUDIT = HERE / "audit"
SEED = 20261207
PER_SOURCE = 12
BLIND_KEYS = ("id", "task", "record", "output")


def source_folders() -> list[Path]:
    return sorted(p for p in SOURCES.iterdir() if (p / "cases.jsonl").is_file() or (p / "cases.jsonl.gz").is_file())


def read_jsonl(path: Path) -> list[dict]:
    """A source's cases (``cases.jsonl``, or ``cases.jsonl.gz`` where the benchmark asks not to be
    posted in plain text: see join.py)."""
    if not path.is_file() and path.with_name(path.name + ".gz").is_file():
        path = path.with_name(path.name + ".gz")
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def draw() -> None:
    rng = random.Random(SEED)
    AUDIT.mkdir(exist_ok=True)
    out = []
    for folder in source_folders():
        cases = read_jsonl(folder / "cases.jsonl")
        chosen = cases if len(cases) <= PER_SOURCE else rng.sample(cases, PER_SOURCE)
        for case in chosen:
            out.append({key: case[key] for key in BLIND_KEYS})
        print(f"{folder.name}: {len(chosen)} of {len(cases)}")
    (AUDIT / "blind.jsonl").write_text(
        "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in out), encoding="utf-8")
    print(f"{len(out)} cases -> {AUDIT / 'blind.jsonl'}")


def draw_later() -> None:
    audited = {i.rsplit("-", 1)[0] for i in read_grades(AUDIT / "grades.tsv")}
    out: list[dict] = []
    sealed: list[dict] = []
    for folder in source_folders():
        if folder.name in audited:
            continue
        cases = read_jsonl(folder / "cases.jsonl")
        rng = random.Random(f"{SEED}-{folder.name}")
        chosen = cases if len(cases) <= PER_SOURCE else rng.sample(cases, PER_SOURCE)
        # a source kept gzipped (its benchmark is not to be posted in plain text) stays so here
        into = sealed if (folder / "cases.jsonl.gz").is_file() else out
        into.extend({key: case[key] for key in BLIND_KEYS} for case in chosen)
        print(f"{folder.name}: {len(chosen)} of {len(cases)}")
    (AUDIT / "blind-later.jsonl").write_text(
        "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in out), encoding="utf-8")
    (AUDIT / "blind-later-sealed.jsonl.gz").write_bytes(gzip.compress(
        "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in sealed).encode("utf-8"), mtime=0))
    print(f"{len(out)} cases -> {AUDIT / 'blind-later.jsonl'}, {len(sealed)} -> {AUDIT / 'blind-later-sealed.jsonl.gz'}")


def read_grades(path: Path) -> dict[str, tuple[str, str, str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t")[:5] != ["id", "status", "read", "score", "reason"]:
        sys.exit(f"{path}:1: header must be id, status, read, score, reason")
    grades = {}
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 5:
            sys.exit(f"{path}:{number}: 5 tab-separated columns expected, got {len(parts)}")
        grades[parts[0]] = tuple(p.strip() for p in parts[1:])
    return grades


def normal(task: str, status: str, read: str, score: str) -> tuple[str, str, str]:
    """The grade in a comparable form: letters upper-cased and sorted, numbers as floats to 2 decimals."""
    if status != "ok":
        return status, "", ""
    if task == "TaxSCQ":
        return status, read.upper(), ""
    if task == "TaxMCQ":
        return status, "".join(sorted(set(read.upper().replace(",", "").replace(" ", "")))), ""
    if task == "TaxCalc":
        try:
            return status, f"{round(float(read.replace(',', '')), 2):.2f}", ""
        except ValueError:
            return status, read, ""
    return status, " ".join(read.lower().split()), score


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def compare(show: bool) -> None:
    second = read_grades(AUDIT / "grades.tsv")
    if (AUDIT / "grades-later.tsv").is_file():
        second.update(read_grades(AUDIT / "grades-later.tsv"))
    total = same_total = 0
    listing = []
    for folder in source_folders():
        cases = {c["id"]: c for c in read_jsonl(folder / "cases.jsonl")}
        first = read_grades(folder / "grades.tsv")
        audited = [i for i in second if i in cases]
        if not audited:
            continue
        disagree = []
        for i in audited:
            task = cases[i]["task"]
            a = normal(task, *first[i][:3])
            b = normal(task, *second[i][:3])
            if task == "TaxRead" and a[0] == b[0] == "ok":
                a, b = (a[0], a[2]), (b[0], b[2])  # a span is judged by its score, not its wording
            if a != b:
                disagree.append(i)
                listing.append((i, task, first[i], second[i]))
        same = len(audited) - len(disagree)
        total += len(audited)
        same_total += same
        print(f"{folder.name}: audited {len(audited)}, same {same}, disagree {len(disagree)}"
              + (f" ({', '.join(disagree)})" if disagree else ""))
    unknown = [i for i in second if not any(i.startswith(f.name + "-") for f in source_folders())]
    if unknown:
        print(f"ids in audit/grades.tsv with no source: {', '.join(unknown)}")
    low, high = wilson(same_total, total)
    print(f"overall: {same_total}/{total} = {same_total / max(total, 1):.1%} agree, "
          f"Wilson 95% [{low:.1%}, {high:.1%}]")
    if show:
        print()
        for i, task, a, b in listing:
            print(f"{i} ({task})\n  first : {a[0]} | {a[1]} | {a[2]} | {a[3]}\n  second: {b[0]} | {b[1]} | {b[2]} | {b[3]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draw", action="store_true")
    parser.add_argument("--later", action="store_true", help="with --draw: the sources added after the first audit")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.draw:
        draw_later() if args.later else draw()
    if args.compare:
        compare(args.list)
    if not (args.draw or args.compare):
        parser.print_help()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
