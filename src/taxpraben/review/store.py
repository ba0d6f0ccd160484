"""``OUT/review.jsonl``: the verdicts of people who checked the readings, one JSON object a line.

``{"task", "id", "run", "reviewer", "verdict": "right" | "wrong" | "unsure", "answer", "at",
"judged": {"read", "read_by", "output"}, "draw": {"seed", "size"}}``;
``"field"`` names the field of a mixed task's reading (absent for a whole item's reading);
``answer`` is the answer the reviewer read in the output, only with ``"wrong"`` (null: the
output gives none). ``judged`` is what the verdict judged: the reading's value (null: nothing
was read), who read it, and the SHA-256 of the output (:func:`output_hash`); a verdict whose
reading has changed since (a rescore, new rules, another output) is *stale*
(:func:`is_stale`) and counts nowhere. ``draw`` is the draw the reading was offered in (its
seed and the size asked). A line without ``judged`` (written by hand, or before verdicts
recorded it) is *legacy*: it is taken to judge the reading there is now, and the figure
says how many such lines it counts. Each verdict is appended as it is given (flushed and
synced, so a killed server loses nothing); the last line for a reading and a reviewer wins.
Pure reading and appending: no report code.
"""

from __future__ import annotations

import hashlib
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


def output_hash(text: str) -> str:
    """The SHA-256 of an output (hex): what a verdict records of the output it judged."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Judged:
    """What a verdict judged: the reading's value (None: nothing read), its reader
    (``read_by``), and the output's hash (:func:`output_hash`)."""

    read: JSONValue
    read_by: str | None
    output: str

    def to_json(self) -> JSONObject:
        return {"read": self.read, "read_by": self.read_by, "output": self.output}


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
    #: What was judged; None on a legacy line (see the module docstring).
    judged: Judged | None = None
    #: The draw the reading was offered in: (seed, size asked); None when not recorded.
    draw: tuple[int, int] | None = None

    @property
    def key(self) -> Key:
        return (self.task, self.id, self.run, self.field)

    @property
    def legacy(self) -> bool:
        """Whether the line does not say what it judged (see the module docstring)."""
        return self.judged is None

    def to_json(self) -> JSONObject:
        line: JSONObject = {"task": self.task, "id": self.id, "run": self.run}
        if self.field is not None:
            line["field"] = self.field
        line.update(reviewer=self.reviewer, verdict=self.verdict,
                    answer=self.answer if self.verdict == "wrong" else None, at=self.at)  # fmt: skip
        if self.judged is not None:
            line["judged"] = self.judged.to_json()
        if self.draw is not None:
            line["draw"] = {"seed": self.draw[0], "size": self.draw[1]}
        return line


def is_stale(verdict: Verdict, read: JSONValue, output: str) -> bool:
    """Whether ``verdict`` judged another reading than the one there is now: another output
    (``output``: its hash) or another value read from it (``read``; None: nothing read). The
    reader's name alone may change (a rule renamed, the same value read): the person judged
    the value against the output. A legacy verdict is never stale (it cannot be told)."""
    if verdict.judged is None:
        return False
    return verdict.judged.output != output or _canonical(verdict.judged.read) != _canonical(read)


def _canonical(value: JSONValue) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


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
                   None if field is None else str(field), _judged(raw.get("judged"), where),
                   _draw(raw.get("draw"), where))  # fmt: skip


def _judged(raw: JSONValue, where: str) -> Judged | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("output"), str):
        raise ReviewFileError(f"{where}: 'judged' must be an object with 'read', 'read_by' and 'output' "
                              "(the output's SHA-256); drop the key to have the verdict taken as legacy")
    read_by = raw.get("read_by")
    return Judged(raw.get("read"), None if read_by is None else str(read_by), str(raw["output"]))


def _draw(raw: JSONValue, where: str) -> tuple[int, int] | None:
    if raw is None:
        return None
    seed, size = (raw.get("seed"), raw.get("size")) if isinstance(raw, dict) else (None, None)
    if not isinstance(seed, int) or not isinstance(size, int) or isinstance(seed, bool) or isinstance(size, bool):
        raise ReviewFileError(f"{where}: 'draw' must be an object with integer 'seed' and 'size'; drop the key "
                              "if the draw is not known")
    return seed, size


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
            raise ReviewFileError(f"{where}: not JSON ({exc.msg}); a verdict cut off when the review was killed "
                                  f"reads so: delete line {number} (its reading is offered again by "
                                  "`taxpraben review`), or mend it") from exc
        if not isinstance(raw, dict):
            raise ReviewFileError(f"{where}: not a JSON object")
        found.append(verdict_from_json(raw, where))
    return found


def latest(verdicts: Iterable[Verdict]) -> dict[tuple[Key, str], Verdict]:
    """The last verdict of each (reading, reviewer)."""
    return {(v.key, v.reviewer): v for v in verdicts}


def repair_torn_tail(path: Path) -> str | None:
    """Cut the unfinished last line of ``path`` (a verdict being written when the review was
    killed: no newline and not JSON) so that verdicts appended after it start on a line of
    their own; returns the text cut (None when the file ends cleanly). The verdict it held
    was never acknowledged to the page, so its reading is simply offered again."""
    path = Path(path)
    if not path.exists():
        return None
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    try:
        json.loads(tail.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        with path.open("r+b") as handle:
            handle.truncate(start)
            handle.flush()
            os.fsync(handle.fileno())
        return tail.decode("utf-8", errors="replace")
    with path.open("ab") as handle:  # a whole verdict without its newline (written by hand): keep it
        handle.write(b"\n")
    return None


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
