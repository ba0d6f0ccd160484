"""Merge the hand grades (grades.tsv) into the drawn cases, giving benchmarks/heldout/heldout_3.jsonl.

    python benchmarks/heldout/draw.py && python benchmarks/heldout/merge.py

``expect`` follows tests/corpus/real_outputs.jsonl: status and score always; ``extracted`` is the
option text for a single-choice item read as ok ("missing" for a format failure), the sorted letters
for a multiple-answer item read as ok, and left out for numeric items.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LETTERS = "ABCDE"


def expect_of(case: dict[str, Any], status: str, score: str, answer: str) -> dict[str, Any]:
    expect: dict[str, Any] = {"status": status, "score": float(score)}
    task, record = case["task"], case["record"]
    if task == "TaxSCQ":
        expect["extracted"] = record["choices"][LETTERS.index(answer)] if status == "ok" else "missing"
        if status == "ok":
            assert (float(score) == 1.0) == (LETTERS.index(answer) == record["gold"]), case["id"]
    elif task == "TaxMCQ" and status == "ok":
        expect["extracted"] = "".join(sorted(answer))
        assert (float(score) == 1.0) == (expect["extracted"] == record["answer"]), case["id"]
    return expect


def main() -> None:
    grades = {}
    for line in (HERE / "grades.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            cid, status, score, answer, reason = line.split("\t")
            grades[cid] = (status, score, answer, reason)
    drawn = [json.loads(x) for x in Path("/tmp/heldout_drawn.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {c["id"] for c in drawn} == set(grades), "every drawn case has exactly one grade"
    with (HERE / "heldout_3.jsonl").open("w", encoding="utf-8") as fh:
        for case in drawn:
            status, score, answer, reason = grades[case["id"]]
            out = {"id": case["id"], "task": case["task"], "style": case["source"]["model"].split(" (")[0],
                   "record": case["record"], "output": case["output"],
                   "expect": expect_of(case, status, score, answer), "read": answer, "reason": reason,
                   "source": case["source"]}
            fh.write(json.dumps(out, ensure_ascii=False) + "\n")
    print(f"{len(drawn)} graded cases -> {HERE / 'heldout_3.jsonl'}")


if __name__ == "__main__":
    main()
