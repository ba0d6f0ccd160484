"""The readers against the hand grades of the wide corpus, per source, with the confidence of
every miss and the calibration of the confidence.

    PYTHONPATH=src .venv/bin/python benchmarks/wide/measure.py --split dev [--list] [--src OTHER/src]
    PYTHONPATH=src .venv/bin/python benchmarks/wide/measure.py --split heldout   # once, at the end

A case *agrees* when the reading's status, score and (where the grade has one) extracted value
are the grader's. ``given``: a point the readers give that the grader withholds; ``withheld``:
the other way. Cases graded ``ambiguous`` are left out of every figure. The calibration:
``high wrong`` is the share of high-confidence readings that disagree with the grader (aim at
most 0.5%); ``low share`` the share of all cases read with low confidence (aim at most 15%).
``HELDOUT.md`` names the held-out sources (drawn before development, see there).

``reading agree`` measures the reader apart from the grader's own comparison of spans: for
TaxRead the grader's score says whether the read span "says the same as the gold", which some
graders judged loosely ("Ricky Rubio" for "Ricard Rubio i Vives", "March 2, 1972" for "2 March
1972"), while the benchmark's protocol is exact match after normalisation. There the expected
score is the protocol's comparison of the grader's *reading* (``grade_read``) with the gold, so a
case agrees when the reader read what the grader read, whatever the grader thought of the gold.
For TaxCalc the grader compares its number with the gold at 2 decimals, the benchmark at the
gold's own places ("7.8%" read, gold 0.079): a reading that is the number the grader read (in
either notation: 7.8% is 0.078) agrees as read. TaxSCQ and TaxMCQ compare the reading already;
where options share one text, the reader's "C. kg.m" is the grader's letter C (``_same_option``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def heldout_repos() -> set[str]:
    """The held-out sources: the lines ``- OWNER/NAME`` under "## Held out" in HELDOUT.md."""
    path = HERE / "HELDOUT.md"
    if not path.is_file():
        return set()
    text = path.read_text(encoding="utf-8")
    part = text.split("## Held out", 1)[1].split("\n## ", 1)[0] if "## Held out" in text else ""
    return {m.group(1) for m in re.finditer(r"^- `?([\w.-]+/[\w.-]+)`?", part, re.MULTILINE)}


def load_cases(split: str) -> list[dict]:
    held = {r.lower() for r in heldout_repos()}
    cases = []
    # a source whose benchmark asks not to be posted in plain text keeps its cases gzipped (join.py)
    for path in sorted([*(HERE / "sources").glob("*/cases.jsonl"), *(HERE / "sources").glob("*/cases.jsonl.gz")]):
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for line in data.decode("utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            is_held = case["source"]["repo"].lower() in held
            if split == "all" or (split == "heldout") == is_held:
                cases.append(case)
    return cases


@dataclass
class Tally:
    n: int = 0
    agree: int = 0
    agree_read: int = 0
    given: int = 0
    withheld: int = 0
    ambiguous: int = 0
    confidence: Counter[str] = field(default_factory=Counter)
    high_wrong: int = 0
    high_wrong_read: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.n += other.n
        self.agree += other.agree
        self.agree_read += other.agree_read
        self.given += other.given
        self.withheld += other.withheld
        self.ambiguous += other.ambiguous
        self.confidence.update(other.confidence)
        self.high_wrong += other.high_wrong
        self.high_wrong_read += other.high_wrong_read

    def line(self, name: str) -> str:
        if not self.n:
            return f"{name}: no graded cases"
        high = self.confidence["high"]
        miss_conf = Counter(m.split(" ", 1)[0] for m in self.misses)
        return (f"{name}: {self.agree}/{self.n} agree ({self.agree / self.n:.1%}), reading agree "
                f"{self.agree_read}/{self.n} ({self.agree_read / self.n:.1%}); given {self.given} "
                f"({self.given / self.n:.2%}), withheld {self.withheld}; ambiguous left out {self.ambiguous}; "
                f"high {high} (wrong {self.high_wrong}, {self.high_wrong / high if high else 0:.2%}; "
                f"reading wrong {self.high_wrong_read}, {self.high_wrong_read / high if high else 0:.2%}), "
                f"low {self.confidence['low']} ({self.confidence['low'] / self.n:.1%}), "
                f"none read {self.confidence['none']}; misses by confidence {dict(miss_conf)}")


def _same_option(extracted: object, case: dict) -> bool:
    """The reading names the option the grader read, where options share one text: the reader
    then writes the option's letter before its text ("C. kg.m" where B and C both read "kg.m",
    their superscripts lost in the data), the grade's expected text alone cannot say which."""
    choices = case["record"].get("choices") or []
    letter = case.get("grade_read", "")
    if len(letter) != 1 or not isinstance(extracted, str) or choices.count(case["expect"].get("extracted")) < 2:
        return False
    return extracted == f"{letter}. {case['expect']['extracted']}"


def measure(cases: list[dict], list_misses: bool = False, dump: list[dict] | None = None) -> dict[str, Tally]:
    from taxpraben.data.checks import check_record
    from taxpraben.parsing.numbers import numbers_equal, parse_number
    from taxpraben.parsing.readers.span import span_match
    from taxpraben.parsing.span_words import question_of
    from taxpraben.scoring.items import prepare_item
    from taxpraben.tasks import load_registry

    registry = load_registry(use_env=False)
    tallies: dict[str, Tally] = {}
    for case in cases:
        tally = tallies.setdefault(case["source"]["repo"], Tally())
        expect = case["expect"]
        if expect.get("status") == "ambiguous":
            tally.ambiguous += 1
            continue
        spec = registry[case["task"]]
        record, _ = check_record(case["record"], spec, Path(case["id"]), 1, "line")
        item = prepare_item(spec, record, 0, case["output"], None)
        got = item.scores.get("acc", item.scores.get("em"))
        same = item.status == expect["status"] and got == expect["score"]
        if "extracted" in expect and item.status == "ok" and item.extracted != expect["extracted"] \
                and not _same_option(item.extracted, case):
            same = False
        level = item.confidence or "none"
        same_read = same
        if case["task"] == "TaxRead" and expect["status"] == "ok" and case.get("grade_read"):
            protocol = float(span_match(case["grade_read"], case["record"]["answer"], question_of(case["record"]["query"])))
            same_read = item.status == "ok" and got == protocol
        elif case["task"] == "TaxCalc" and expect["status"] == "ok" and case.get("grade_read") and not same:
            # the grader compares its reading with the gold at 2 decimals, the benchmark at the
            # gold's own places ("7.8%" for 0.079): the reading agrees when it is the number the
            # grader read, in either notation
            found = parse_number(str(item.extracted)) if item.status == "ok" and item.extracted is not None else None
            same_read = found is not None and numbers_equal(found, case["grade_read"], 4)
        tally.agree_read += same_read
        if dump is not None:
            dump.append({"id": case["id"], "task": case["task"], "agree": same, "confidence": level,
                         "rule": item.read_by or item.veto, "status": item.status, "score": got, "agree_read": same_read,
                         "extracted": item.extracted, "expect": expect})
        tally.n += 1
        tally.agree += same
        tally.confidence[level] += 1
        tally.high_wrong_read += level == "high" and not same_read
        if not same:
            if got is not None:
                tally.given += got > expect["score"]
                tally.withheld += got < expect["score"]
            tally.high_wrong += level == "high"
            note = (f"{level} {case['id']} [{case['task']}, {case['source']['model']}] grader {expect} "
                    f"({case.get('reason', '')}) | rules status={item.status} score={got} "
                    f"extracted={item.extracted!r} by {item.read_by or item.veto}")
            tally.misses.append(note)
            if list_misses:
                tail = case["output"] if len(case["output"]) < 600 else case["output"][:250] + " ... " + case["output"][-300:]
                print(f"  MISS {note}\n    output: {tail!r}")
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the src/ of the checkout to measure")
    parser.add_argument("--list", action="store_true", help="print every miss with its output")
    parser.add_argument("--misses", action="store_true", help="print every miss, one line each, no output text")
    parser.add_argument("--dump", type=Path, help="write every case's reading (rule, confidence, agreement) as JSON lines")
    parser.add_argument("--claimed-before", metavar="UTC",
                        help="only sources claimed before this time (new sources wait for their round's held-out draw)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src))
    cases = load_cases(args.split)
    if args.claimed_before:
        claimed = {row.split("\t")[0].lower(): row.split("\t")[2]
                   for row in (HERE / "CLAIMS.tsv").read_text(encoding="utf-8").splitlines() if row.strip()}
        cases = [c for c in cases if claimed.get(c["source"]["repo"].lower(), "") < args.claimed_before]
    if args.split != "heldout" and not heldout_repos():
        sys.exit("HELDOUT.md names no held-out source: draw them first (heldout_draw.py)")
    dump: list[dict] | None = [] if args.dump else None
    tallies = measure(cases, args.list, dump)
    if args.dump and dump is not None:
        args.dump.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in dump), encoding="utf-8")
    total = Tally()
    for repo, tally in sorted(tallies.items()):
        print(tally.line(f"source {repo}"))
        if args.misses:
            for miss in tally.misses:
                print(f"    {miss}")
        total.add(tally)
    models = {(c["source"]["repo"], c["source"]["model"]) for c in cases}
    print(f"{args.split}: {len(tallies)} sources, {len(cases)} cases, {len({m for _, m in models})} model names")
    print(total.line(f"all {args.split}"))


if __name__ == "__main__":
    main()
