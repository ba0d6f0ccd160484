"""Agreement of the rules with the grader on the test corpus (``tests/corpus/*.jsonl``).

Prints, per corpus file and overall, how many cases the rules read as the grader did, and
which way the disagreements lean (a point given that the grader would not, or withheld).
Run it in two checkouts to compare rules before and after a change::

    .venv/bin/python benchmarks/corpus_agreement.py [--src OTHER_CHECKOUT/src] [--list]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the src/ of the checkout to measure")
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus")
    parser.add_argument("--only", default="", help="only corpus files whose name contains this")
    parser.add_argument("--list", action="store_true", help="print every disagreement")
    parser.add_argument("--by-source", action="store_true",
                        help="also per source repository of the real outputs (held-out figures: measure a source "
                             "before developing on it)")
    parser.add_argument("--confidence", action="store_true",
                        help="also the share of readings per confidence (high, low, none read) per corpus file")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src))
    from taxpraben.data.checks import check_record
    from taxpraben.scoring.items import prepare_item
    from taxpraben.tasks import load_registry

    registry = load_registry(use_env=False)
    total = agree = generous = strict = 0
    sources: dict[str, list[int]] = {}  # repo -> [agree, n, gave, withheld]
    confidences: dict[str, int] = {}  # over every corpus file
    for path in sorted(args.corpus.glob("*.jsonl")):
        if args.only not in path.name:
            continue
        n = ok = gave = withheld = 0
        by_confidence: dict[str, int] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            spec = registry[case["task"]]
            record, _ = check_record(case["record"], spec, path, 1, "line")
            item = prepare_item(spec, record, 0, case["output"], None)
            expect = case["expect"]
            got = item.scores.get("acc", item.scores.get("em"))
            same = True
            if "status" in expect and item.status != expect["status"]:
                same = False
            if "score" in expect and got != expect["score"]:
                same = False
            if "extracted" in expect and item.extracted != expect["extracted"]:
                same = False
            n += 1
            ok += same
            level = item.confidence or "none read"
            by_confidence[level] = by_confidence.get(level, 0) + 1
            repo = (case.get("source") or {}).get("repo")
            if repo:
                tally = sources.setdefault(repo, [0, 0, 0, 0])
                tally[0] += same
                tally[1] += 1
                if not same and "score" in expect and got is not None:
                    tally[2] += got > expect["score"]
                    tally[3] += got < expect["score"]
            if not same and "score" in expect and got is not None:
                gave += got > expect["score"]
                withheld += got < expect["score"]
            if not same and args.list:
                print(f"  {case['id']} [{case.get('rule')}] expected {expect} got status={item.status} "
                      f"score={got} extracted={item.extracted!r}")
        print(f"{path.name}: {ok}/{n} agree ({ok / n:.1%}); of the disagreements {gave} credit a point "
              f"the grader does not, {withheld} withhold one")
        if args.confidence:
            print("  readings by confidence: " + _shares(by_confidence, n))
        for level, count in by_confidence.items():
            confidences[level] = confidences.get(level, 0) + count
        total, agree, generous, strict = total + n, agree + ok, generous + gave, strict + withheld
    if args.by_source:
        for repo, (ok_, n_, gave_, withheld_) in sorted(sources.items()):
            print(f"  source {repo}: {ok_}/{n_} agree ({ok_ / n_:.1%}); {gave_} too generous, {withheld_} too strict")
    if args.confidence and total:
        print("all readings by confidence: " + _shares(confidences, total))
    if total:
        print(f"all: {agree}/{total} agree ({agree / total:.1%}); {generous} too generous, {strict} too strict")


def _shares(counts: dict[str, int], n: int) -> str:
    order = ("high", "low", "none read")
    return ", ".join(f"{level} {counts.get(level, 0)} ({counts.get(level, 0) / n:.1%})" for level in order)


if __name__ == "__main__":
    main()
