"""One person's review of a draw of readings: what the page shows of each, the verdicts
given so far (read back from review.jsonl, so a review stopped and started again continues
where it stopped), and recording a verdict (appended to review.jsonl at once, with what it
judged: the reading's value, its reader, the output's hash, and the draw).

A verdict read back whose reading has changed since (:func:`~taxpraben.review.store.is_stale`)
does not count: its reading is offered again (``stale`` counts them). An unfinished last
line of review.jsonl (a kill mid-write) is cut when the session starts (``repaired``).

The gold of a reading is sent to the page only once this reviewer has given a verdict on
it, so that it cannot sway the reading of the output.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.review.answers import same_answer
from taxpraben.review.draw import Reading
from taxpraben.review.store import (
    REVIEW_FILE,
    VERDICTS,
    Judged,
    Key,
    Verdict,
    append_verdict,
    is_stale,
    now_iso,
    read_verdicts,
    repair_torn_tail,
)

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject

#: What the gold looks like, by reading kind (taxpraben.report.explain.reading_kind).
GOLD_FORMS = {
    "label": "one of the options",
    "number": "a number (an amount in the gold's unit)",
    "letters": "the letters of every correct option",
    "span": "a span copied from the text",
    "fields": "the field's value",
    "text": "a text",
}
STRATUM_WORDS = {"high": "a rule (high confidence)", "low": "a rule (low confidence: a fallback)",
                 "judge": "the judge (a second reader)", "none": "nothing read (no answer)"}  # fmt: skip


class VerdictError(ValueError):
    """A verdict the page sent that cannot be recorded (the message says why)."""


def option_keys(choices: Sequence[str]) -> list[list[str]]:
    """``[[key, text], ...]``: the options keyed A, B, C, ... (then a, b, ...)."""
    keys = string.ascii_uppercase + string.ascii_lowercase
    return [[keys[i], text] for i, text in enumerate(choices[: len(keys)])]


@dataclass
class Session:
    """A review in progress (see the module docstring)."""

    out_dir: Path
    readings: list[Reading]
    reviewer: str
    label: str = ""
    #: Per task, its reading kind (label, number, letters, span, fields).
    kinds: Mapping[str, str] = field(default_factory=dict)
    #: Per (task, id), the prompt.
    queries: Mapping[tuple[str, str], str] = field(default_factory=dict)
    #: Per (task, id), the options of a classification item.
    choices: Mapping[tuple[str, str], Sequence[str]] = field(default_factory=dict)
    verdicts: dict[Key, Verdict] = field(default_factory=dict)
    #: The draw offered: (seed, size asked); recorded with each verdict.
    draw: tuple[int, int] | None = None
    #: This reviewer's verdicts on drawn readings that changed since: offered again.
    stale: int = 0
    #: The unfinished last line cut from review.jsonl when the session started, if any.
    repaired: str | None = None

    def __post_init__(self) -> None:
        self.repaired = repair_torn_tail(self.path)
        drawn = {key: r for r in self.readings for key in r.keys}
        last: dict[Key, Verdict] = {}
        for verdict in read_verdicts(self.path):
            reading = drawn.get(verdict.key)
            if verdict.reviewer == self.reviewer and reading is not None:
                last[reading.key] = verdict
        for key, verdict in last.items():
            reading = drawn[key]
            if is_stale(verdict, reading.read, reading.output):
                self.stale += 1
            else:
                self.verdicts[key] = verdict

    @property
    def path(self) -> Path:
        return Path(self.out_dir) / REVIEW_FILE

    @property
    def graded(self) -> int:
        return len(self.verdicts)

    def next_open(self, after: int = -1) -> int | None:
        """The first reading after ``after`` (then from the start) with no verdict; None when all have one."""
        n = len(self.readings)
        order: list[int] = [*range(after + 1, n), *range(0, after + 1)]
        for i in order:
            if self.readings[i].key not in self.verdicts:
                return i
        return None

    def state(self) -> JSONObject:
        return {"reviewer": self.reviewer, "label": self.label, "n": len(self.readings), "graded": self.graded,
                "next": self.next_open(), "stale": self.stale,
                "verdicts": [self._verdict_json(r) for r in self.readings]}  # fmt: skip

    def _verdict_json(self, reading: Reading) -> JSONObject | None:
        verdict = self.verdicts.get(reading.key)
        return None if verdict is None else {"verdict": verdict.verdict, "answer": verdict.answer}

    def reading(self, index: int) -> JSONObject:
        """What the page shows of reading ``index`` (the gold only after a verdict)."""
        r = self._at(index)
        kind = "fields" if r.field is not None else self.kinds.get(r.task, "text")
        choices = self.choices.get((r.task, r.id)) if kind == "label" else None
        shown: JSONObject = {
            "index": index, "task": r.task, "id": r.id, "run": r.run, "field": r.field, "kind": kind,
            "stratum": STRATUM_WORDS.get(r.stratum, r.stratum), "question": self.queries.get((r.task, r.id), ""),
            "options": option_keys(choices) if choices else None, "form": GOLD_FORMS.get(kind, "a text"),
            "prediction": r.prediction, "evidence": list(r.evidence) if r.evidence else None,
            "read": None if r.read is None else _text(r.read), "read_by": r.read_by, "confidence": r.confidence,
            "runs": list(r.runs or (r.run,)),
            "failure": r.failure, "veto": r.veto, "verdict": self._verdict_json(r),
        }  # fmt: skip
        if r.key in self.verdicts:
            shown["gold"] = _text(r.gold)
        return shown

    def record(self, index: int, verdict: str, answer: str | None) -> JSONObject:
        """Record a verdict on reading ``index`` (appended to review.jsonl before returning);
        returns the gold and the progress. A "wrong" whose answer is the reading itself (or
        no answer where nothing was read) is recorded as "right"."""
        r = self._at(index)
        if verdict not in VERDICTS:
            raise VerdictError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        if verdict == "wrong":
            answer = self.answer_for(r, answer)
            if (answer is None and r.read is None) or (answer is not None and r.read is not None
                                                       and same_answer(answer, r.read)):
                verdict, answer = "right", None
        else:
            answer = None
        given = Verdict(r.task, r.id, r.run, self.reviewer, verdict, answer, now_iso(), r.field,
                        Judged(r.read, r.read_by, r.output), self.draw)  # fmt: skip
        append_verdict(self.path, given)
        self.verdicts[r.key] = given
        return {"index": index, "verdict": verdict, "answer": answer, "gold": _text(r.gold),
                "graded": self.graded, "next": self.next_open(index)}  # fmt: skip

    def answer_for(self, r: Reading, typed: str | None) -> str | None:
        """The answer a reviewer typed, as recorded: an option key becomes its option's text,
        letters are upper-cased and sorted; None (or blank) is no answer."""
        text = (typed or "").strip()
        if not text:
            return None
        choices = self.choices.get((r.task, r.id)) if r.field is None else None
        if choices:
            keyed = {key: option for key, option in option_keys(choices)}
            return keyed.get(text) or keyed.get(text.upper()) or text
        if self.kinds.get(r.task) == "letters" and r.field is None:
            letters = "".join(sorted({c for c in text.upper() if c.isalpha()}))
            return letters or text
        return text

    def _at(self, index: int) -> Reading:
        if not 0 <= index < len(self.readings):
            raise VerdictError(f"no reading {index} (there are {len(self.readings)})")
        return self.readings[index]


def _text(value: object) -> str:
    """A value as the page shows it."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return str(value)
