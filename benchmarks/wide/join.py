"""Join one source's drawn cases with its hand grades: ``drawn.jsonl`` + ``grades.tsv`` -> ``cases.jsonl``.

Checks both files and names the file, line and field of anything wrong (exit 1, nothing
written). The score of a graded reading is the grader's reading compared with the gold by
the plain rule of the README (same option, same letter set, same number to 2 decimals);
for TaxRead the grader gives it. taxpraben's readers are never run here: these are the
grades the readers are measured against.

    python benchmarks/wide/join.py benchmarks/wide/sources/OWNER__NAME [...]

Stdlib only (the graders run it with any python3).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import sys
from pathlib import Path

TASKS = ("TaxSCQ", "TaxMCQ", "TaxCalc", "TaxRead")
STATUSES = ("ok", "format_failure", "ambiguous")
LETTERS = "ABCDEFGHIJ"
SOURCE_KEYS = ("repo", "commit", "path", "item", "model")
MODEL_KINDS = ("base", "chat", "reasoning", "domain", "api")
SHOTS = ("zero-shot", "few-shot", "cot")
LANGS = ("zh", "en", "ja", "ko", "de", "fr", "es", "ru", "other")


class Problem(Exception):
    pass


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def check_case(case: dict, where: str) -> None:
    for key in ("id", "task", "record", "output", "source"):
        if key not in case:
            raise Problem(f"{where}: field {key!r} is missing")
    task, record, source = case["task"], case["record"], case["source"]
    if task not in TASKS:
        raise Problem(f"{where}: task {task!r} is not one of {', '.join(TASKS)}")
    if not isinstance(case["output"], str):
        raise Problem(f"{where}: output must be text")
    if not isinstance(record, dict) or not isinstance(record.get("query"), str) or not record["query"].strip():
        raise Problem(f"{where}: record.query must be non-empty text")
    if not isinstance(record.get("id"), str) or not record["id"]:
        raise Problem(f"{where}: record.id must be non-empty text")
    if task == "TaxSCQ":
        choices = record.get("choices")
        if not isinstance(choices, list) or not 2 <= len(choices) <= 10 or not all(
                isinstance(c, str) and c.strip() for c in choices):
            raise Problem(f"{where}: record.choices must be 2 to 10 non-empty texts")
        gold = record.get("gold")
        if not isinstance(gold, int) or isinstance(gold, bool) or not 0 <= gold < len(choices):
            raise Problem(f"{where}: record.gold must be an index into choices")
        if record.get("answer") != choices[gold]:
            raise Problem(f"{where}: record.answer must equal choices[gold]")
    elif task == "TaxMCQ":
        answer = record.get("answer")
        if not isinstance(answer, str) or not re.fullmatch("[A-E]+", answer) or "".join(sorted(set(answer))) != answer:
            raise Problem(f"{where}: record.answer must be sorted distinct letters A-E, e.g. 'AC'")
    elif task == "TaxCalc":
        if _number(record.get("answer")) is None:
            raise Problem(f"{where}: record.answer must be a JSON number")
    else:
        if not isinstance(record.get("text"), str) or not isinstance(record.get("answer"), str) or not record["answer"]:
            raise Problem(f"{where}: record.text and record.answer must be text")
    if not isinstance(source, dict):
        raise Problem(f"{where}: source must be an object")
    for key in SOURCE_KEYS:
        if not isinstance(source.get(key), (str, int)) or source.get(key) in ("", None):
            raise Problem(f"{where}: source.{key} is missing")
    if not re.fullmatch(r"[0-9a-f]{40}", str(source["commit"])):
        raise Problem(f"{where}: source.commit must be a 40-hex commit")
    for key, allowed in (("model_kind", MODEL_KINDS), ("shots", SHOTS), ("lang", LANGS)):
        if source.get(key) not in allowed:
            raise Problem(f"{where}: source.{key} must be one of {', '.join(allowed)}")


def expect_of(case: dict, status: str, read: str, score: str, where: str) -> dict:
    task, record = case["task"], case["record"]
    if status == "ambiguous":
        return {"status": "ambiguous"}
    if status == "format_failure":
        if read.strip():
            raise Problem(f"{where}: a format failure reads nothing (column read must be empty)")
        expect: dict = {"status": "format_failure", "score": 0.0}
        if task == "TaxSCQ":
            expect["extracted"] = "missing"
        return expect
    read = read.strip()
    if not read:
        raise Problem(f"{where}: status ok needs the reading in column read")
    if task == "TaxSCQ":
        letter = read.upper()
        if len(letter) != 1 or letter not in LETTERS[: len(record["choices"])]:
            raise Problem(f"{where}: read must be one option letter of A-{LETTERS[len(record['choices']) - 1]}")
        index = LETTERS.index(letter)
        return {"status": "ok", "score": float(index == record["gold"]), "extracted": record["choices"][index]}
    if task == "TaxMCQ":
        letters = read.upper().replace(",", "").replace(" ", "")
        if not re.fullmatch("[A-E]+", letters):
            raise Problem(f"{where}: read must be option letters A-E")
        letters = "".join(sorted(set(letters)))
        return {"status": "ok", "score": float(letters == record["answer"]), "extracted": letters}
    if task == "TaxCalc":
        try:
            value = float(read.replace(",", ""))
        except ValueError:
            raise Problem(f"{where}: read must be a plain decimal number, not {read!r}") from None
        gold = float(record["answer"])
        return {"status": "ok", "score": float(round(value, 2) == round(gold, 2))}
    if score.strip() not in ("0", "1"):
        raise Problem(f"{where}: TaxRead needs score 1 or 0 from the grader")
    return {"status": "ok", "score": float(score.strip())}


def sealed(folder: Path) -> bool:
    """Whether ``folder`` keeps its cases gzipped (``drawn.jsonl.gz``, ``cases.jsonl.gz``): for a
    benchmark whose authors ask that its questions not be posted online in plain text (GPQA)."""
    return (folder / "drawn.jsonl.gz").is_file()


def read_lines(path: Path) -> list[str]:
    """The lines of a JSON-lines file, gzipped or not."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8").splitlines()


def join(folder: Path) -> tuple[int, dict[str, int]]:
    suffix = ".jsonl.gz" if sealed(folder) else ".jsonl"
    drawn_path, grades_path = folder / ("drawn" + suffix), folder / "grades.tsv"
    for path in (drawn_path, grades_path, folder / "SOURCE.md", folder / "draw.py"):
        if not path.is_file():
            raise Problem(f"{path}: missing")
    cases: list[dict] = []
    seen: set[str] = set()
    for number, line in enumerate(read_lines(drawn_path), 1):
        if not line.strip():
            continue
        where = f"{drawn_path}:{number}"
        try:
            case = json.loads(line)
        except json.JSONDecodeError as error:
            raise Problem(f"{where}: not JSON ({error})") from None
        check_case(case, where)
        if case["id"] in seen:
            raise Problem(f"{where}: id {case['id']!r} repeats")
        seen.add(case["id"])
        cases.append(case)
    grades: dict[str, tuple[str, str, str, str, str]] = {}
    lines = grades_path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t")[:5] != ["id", "status", "read", "score", "reason"]:
        raise Problem(f"{grades_path}:1: the header must be id, status, read, score, reason (tab-separated)")
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 5:
            raise Problem(f"{grades_path}:{number}: 5 tab-separated columns expected, got {len(parts)}")
        if parts[0] not in seen:
            raise Problem(f"{grades_path}:{number}: id {parts[0]!r} is not in drawn.jsonl")
        if parts[0] in grades:
            raise Problem(f"{grades_path}:{number}: id {parts[0]!r} graded twice")
        if parts[1] not in STATUSES:
            raise Problem(f"{grades_path}:{number}: status must be one of {', '.join(STATUSES)}")
        if not parts[4].strip():
            raise Problem(f"{grades_path}:{number}: a reason is needed")
        grades[parts[0]] = (f"{grades_path}:{number}", *parts[1:])  # type: ignore[assignment]
    missing = [case["id"] for case in cases if case["id"] not in grades]
    if missing:
        raise Problem(f"{grades_path}: {len(missing)} drawn cases have no grade, e.g. {', '.join(missing[:5])}")
    counts: dict[str, int] = {}
    out = []
    for case in cases:
        where, status, read, score, reason = grades[case["id"]]
        joined = dict(case)
        joined["expect"] = expect_of(case, status, read, score, where)
        joined["reason"] = reason.strip()
        if read.strip():
            joined["grade_read"] = read.strip()
        out.append(joined)
        counts[status] = counts.get(status, 0) + 1
    text = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in out)
    if sealed(folder):
        (folder / "cases.jsonl.gz").write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        (folder / "cases.jsonl").write_text(text, encoding="utf-8")
    return len(out), counts


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    status = 0
    for name in argv:
        folder = Path(name)
        if not folder.is_dir() and (Path(__file__).resolve().parent / name).is_dir():
            folder = Path(__file__).resolve().parent / name  # "sources/OWNER__NAME" from anywhere
        try:
            n, counts = join(folder)
        except Problem as problem:
            print(f"error: {problem}", file=sys.stderr)
            status = 1
            continue
        cases_path = folder / ("cases.jsonl.gz" if sealed(folder) else "cases.jsonl")
        models = {json.loads(line)["source"]["model"] for line in read_lines(cases_path) if line.strip()}
        print(f"{folder.name}: {n} cases ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}), "
              f"{len(models)} models -> {cases_path}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
