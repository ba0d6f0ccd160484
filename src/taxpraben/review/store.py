"""``OUT/review.jsonl``: the verdicts of people who checked the readings, one JSON object a line.

``{"task", "id", "run", "reviewer", "verdict": "right" | "wrong" | "unsure", "answer", "at"}``;
``"field"`` names the field of a mixed task's reading (absent for a whole item's reading);
``answer`` is the answer the reviewer read in the output, only with ``"wrong"`` (null: the
output gives none). Each verdict is appended as it is given (flushed and synced, so a
killed server loses nothing); the last line for a reading and a reviewer wins. The file
may be written by hand in the same format. Pure reading and appending: no report code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

REVIEW_FILE = "review.jsonl"
VERDICTS = ("right", "wrong", "unsure")

#: A reading: (task, id, run, field or None).
Key = tuple[str, str, int, str | None]


class ReviewFileError(ValueError):
    """A review.jsonl line that is not a verdict; the message names the file, line and key."""


@dataclass(frozen=True)
class Verdict:
    """One reviewer's verdict on one reading."""

    task: str
    id: str
    run: int
    reviewer: str
    verdict: str
    answer: str | None = None
    at: str = ""
    field: str | None = None

    @property
    def key(self) -> Key:
        return (self.task, self.id, self.run, self.field)

    def to_json(self) -> JSONObject:
        line: JSONObject = {"task": self.task, "id": self.id, "run": self.run}
        if self.field is not None:
            line["field"] = self.field
        line.update(reviewer=self.reviewer, verdict=self.verdict,
                    answer=self.answer if self.verdict == "wrong" else None, at=self.at)  # fmt: skip
        return line


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def verdict_from_json(raw: Mapping[str, JSONValue], where: str) -> Verdict:
    """A verdict from one parsed line; ReviewFileError naming ``where`` and the key at fault."""
    for key in ("task", "id", "run", "reviewer", "verdict"):
        if key not in raw:
            raise ReviewFileError(f"{where}: key {key!r} is missing")
    verdict = raw["verdict"]
    if verdict not in VERDICTS:
        raise ReviewFileError(f"{where}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    run = raw["run"]
    if isinstance(run, bool) or not isinstance(run, int) or run < 0:
        raise ReviewFileError(f"{where}: run {run!r} is not a run index (an integer >= 0)")
    answer = raw.get("answer")
    if verdict != "wrong" and answer is not None:
        raise ReviewFileError(f"{where}: answer {answer!r} is given with verdict {verdict!r} (only with 'wrong')")
    field = raw.get("field")
    return Verdict(str(raw["task"]), str(raw["id"]), run, str(raw["reviewer"]), verdict,
                   None if answer is None else str(answer), str(raw.get("at") or ""),
                   None if field is None else str(field))  # fmt: skip


def read_verdicts(path: Path) -> list[Verdict]:
    """Every verdict of ``path`` in file order ([] when it does not exist); a line cut by a
    kill mid-write (the last, without its newline) is left out; any other bad line raises
    ReviewFileError naming the file and line."""
    path = Path(path)
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    found = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines):  # the unfinished last line of a killed writer
                continue
            raise ReviewFileError(f"{where}: not JSON ({exc.msg})") from exc
        if not isinstance(raw, dict):
            raise ReviewFileError(f"{where}: not a JSON object")
        found.append(verdict_from_json(raw, where))
    return found


def latest(verdicts: Iterable[Verdict]) -> dict[tuple[Key, str], Verdict]:
    """The last verdict of each (reading, reviewer)."""
    return {(v.key, v.reviewer): v for v in verdicts}


def append_verdict(path: Path, verdict: Verdict) -> None:
    """Append ``verdict`` as one line and sync it to disk before returning."""
    path = Path(path)
    prefix = ""
    if path.exists() and path.stat().st_size:
        with path.open("rb") as handle:  # a line cut by a kill: start on a new line
            handle.seek(-1, os.SEEK_END)
            prefix = "" if handle.read(1) == b"\n" else "\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(prefix + json.dumps(verdict.to_json(), ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
