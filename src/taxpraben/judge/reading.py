"""Which items the judge reads, and its reply read back through the task's own reader.

Pure functions over prepared items (:mod:`taxpraben.scoring.items`): the judge is asked
only for the outputs the rules could not read (format failures, never generation errors) of
the tasks whose score rests on one read answer (those that need no semantic scorer:
classification and structured tasks), and its reply is read as a model output would be, so
that the item is then scored by its task's own metric. A reply that is the no-answer token,
or that the reader cannot read either, leaves the item a format failure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from taxpraben.judge.prompt import NO_ANSWER
from taxpraben.kinds import Item, kind_of
from taxpraben.kinds.profiles import ScoringRules
from taxpraben.results import Prediction
from taxpraben.scoring.items import prepare_item
from taxpraben.task_spec import TaskSpec

#: Who decided an item's reading (samples.jsonl ``extracted_by``).
Reader = Literal["rule", "judge", "none"]
#: (task, id, output text): one distinct output, asked once whatever the runs that gave it.
OutputKey = tuple[str, str, str]


def judged_task(spec: TaskSpec) -> bool:
    """Whether the judge may read the task's outputs: its score rests on one read answer
    (no semantic scorer: classification and structured tasks; generation and mixed never)."""
    return not kind_of(spec).scorers(spec)


def output_key(item: Item) -> OutputKey:
    return (item.task, item.id, item.prediction)


def unread_outputs(items: Iterable[Item]) -> dict[OutputKey, list[Item]]:
    """The outputs the rules left unread (status ``format_failure``; ``error`` items had no
    output to read), each once with the items (runs) that gave it, in order."""
    out: dict[OutputKey, list[Item]] = {}
    for item in items:
        if item.status == "format_failure":
            out.setdefault(output_key(item), []).append(item)
    return out


def read_outputs(items: Iterable[Item]) -> dict[OutputKey, list[Item]]:
    """The outputs the rules did read (status ``ok``), each once with its items, in order."""
    out: dict[OutputKey, list[Item]] = {}
    for item in items:
        if item.status == "ok":
            out.setdefault(output_key(item), []).append(item)
    return out


@dataclass(frozen=True)
class ReplyReading:
    """The judge's reply read back: ``answer`` (``item`` holds the reading), ``no_answer``
    (the token) or ``malformed`` (neither the token nor anything the reader can read)."""

    outcome: Literal["answer", "no_answer", "malformed"]
    item: Item | None = None


def is_no_answer(reply: str) -> bool:
    """The reply is the no-answer token (brackets optional, surrounding space and 。 ignored)."""
    text = reply.strip().strip("。.").strip()
    return text in (NO_ANSWER, NO_ANSWER.strip("【】"))


def read_reply(spec: TaskSpec, item: Item, reply: str, rules: ScoringRules) -> ReplyReading:
    """``reply`` read as the output of ``item``'s record by the task's own reader."""
    if is_no_answer(reply):
        return ReplyReading("no_answer")
    generation = Prediction(item.task, item.id, item.run, reply)
    reading = prepare_item(spec, item.record, item.run, generation, None, rules)
    if reading.status != "ok":
        return ReplyReading("malformed", reading)
    return ReplyReading("answer", reading)


def adopt(item: Item, reading: Item) -> None:
    """Give ``item`` the judge's reading (status, extracted value, exact scores, fields and
    text pairs); its own generation, the model's output, stays."""
    item.status = reading.status
    item.extracted = reading.extracted
    item.scores = dict(reading.scores)
    item.fields = reading.fields
    item.pairs = list(reading.pairs)
    item.failure = None
    item.label_pred = reading.label_pred
    item.extracted_by = "judge"


def _canonical(value: Any) -> str:
    """A reading in a form where equal answers are equal: numbers by value ("1,560" ==
    "1560.00"), other values as sorted JSON."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(str(value)) or str(value)
    if isinstance(value, str):
        number = _number(value)
        return number if number is not None else " ".join(value.split())
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _number(text: str) -> str | None:
    cleaned = text.strip().replace(",", "").replace("，", "")
    try:
        return str(Decimal(cleaned).normalize())
    except InvalidOperation:
        return None


def same_reading(rule: Item, judge: Item | None) -> bool:
    """Whether the rules' reading and the judge's are the same answer (a classification
    label, a number by value, a letter set, a span, fields); False when the judge read none."""
    if judge is None or judge.status != "ok":
        return False
    if rule.label_pred is not None or judge.label_pred is not None:
        return rule.label_pred == judge.label_pred
    return _canonical(rule.extracted) == _canonical(judge.extracted)


def reader_counts(items: Sequence[Item]) -> dict[str, int]:
    """Items by who decided their reading (``extracted_by``)."""
    counts = {"rule": 0, "judge": 0, "none": 0}
    for item in items:
        counts[item.reader] += 1
    return counts
