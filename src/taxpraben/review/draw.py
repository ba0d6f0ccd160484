"""The readings a person checks: every reading of a run whose answer is read, and a seeded
draw of them stratified by task and by how each was read.

A *reading* (:class:`Reading`) is one output of a classification or structured task, or one
exact field (a number or a category) of a mixed task's output. Its *stratum* is how it was
read: ``high`` / ``low`` (a rule of that confidence), ``judge`` (the second reader) or
``none`` (no answer was read: a format failure, a field left missing). Generation tasks and
errored generations (no output) are not drawn.

The same output of an item read the same way in several runs is *one* reading
(:func:`distinct`): it is drawn once, its verdict stands for each of its runs, and the figure
weighs it by them (``Reading.runs``).

The draw (:func:`draw`): ``n`` distinct readings shared among the strata (task, how read)
by :func:`allocate` (one each first, the rest in proportion to size), each stratum's drawn
by a generator seeded with (seed, task, stratum); offered *interleaved* (:func:`interleave`):
the first of every stratum (tasks in turn), then the second of every stratum, and so on, so
that a review stopped early has seen every task and every way of reading. The figure weighs
each stratum by its share of the run (:mod:`taxpraben.review.estimate`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from taxpraben.results import Sample
from taxpraben.review.store import Key, output_hash

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

K = TypeVar("K")

#: The task types whose answers are read.
READ_TYPES = ("classification", "structured", "mixed")
#: Field kinds of a mixed task that are read exactly (reviewed); text fields are scored semantically.
EXACT_FIELD_KINDS = ("number", "category")
STRATA = ("high", "low", "judge", "none")
#: How the draw is made, in words (results.json's review.draw.method and every report).
DRAW_METHOD = ("stratified by task and by how each reading was read (high, low, judge, none): one draw per "
               "stratum first, the rest in proportion to its size; distinct outputs only (one repeated over runs "
               "is drawn once and weighs as its runs); offered interleaved across tasks and strata")


@dataclass(frozen=True)
class Reading:
    """One reading to check, with what the page shows of it."""

    task: str
    id: str
    run: int
    field: str | None
    stratum: str
    task_type: str
    prediction: str
    read: JSONValue
    read_by: str | None
    confidence: str | None
    evidence: tuple[int, int] | None
    failure: str | None
    veto: str | None
    gold: JSONValue
    #: The runs whose output and reading are this one's (``run`` is the first); () for one run.
    runs: tuple[int, ...] = ()

    @property
    def key(self) -> Key:
        return (self.task, self.id, self.run, self.field)

    @property
    def output(self) -> str:
        """The output's hash (:func:`~taxpraben.review.store.output_hash`)."""
        return output_hash(self.prediction)

    @property
    def weight(self) -> int:
        """How many readings of the run this one stands for (its runs)."""
        return max(len(self.runs), 1)

    @property
    def keys(self) -> tuple[Key, ...]:
        """The key of each run it stands for."""
        return tuple((self.task, self.id, run, self.field) for run in (self.runs or (self.run,)))


def stratum(read_by: str | None, confidence: str | None, read: bool) -> str:
    """How a reading was made: judge, none (nothing read), else the rule's confidence."""
    if not read:
        return "none"
    if read_by and read_by.startswith("judge:"):
        return "judge"
    return "low" if confidence == "low" else "high"


def field_span(prediction: str, name: str, value: object) -> tuple[int, int] | None:
    """Where a field's value is written in the output: the value after the field's name
    (else the value anywhere); None when the text holds neither."""
    if value is None:
        return None
    texts = [str(value)]  # "31000.0" where the output writes it so, else "31000"
    if isinstance(value, float) and value.is_integer():
        texts.append(str(int(value)))
    start = max(prediction.find(name), 0)
    for begin in (start, 0):  # after the name first, else anywhere
        for text in texts:
            at = prediction.find(text, begin)
            if at >= 0 and text:
                return at, at + len(text)
    return None


def _field_evidence(prediction: str, name: str, figures: JSONObject) -> tuple[int, int] | None:
    """Where a field was read: the span scoring recorded (``fields.NAME.evidence``), else
    found again (:func:`field_span`: a samples.jsonl written before spans were recorded)."""
    recorded = figures.get("evidence")
    if isinstance(recorded, list) and len(recorded) == 2 and all(isinstance(v, int) for v in recorded):
        return int(recorded[0]), int(recorded[1])
    return field_span(prediction, name, figures.get("pred"))


def readings_of(item: Sample, task_type: str) -> list[Reading]:
    """The readings of one item: itself (classification, structured), its exact fields
    (mixed); none for generation tasks and errored items."""
    if task_type not in READ_TYPES or item.status == "error":
        return []
    common: JSONObject = {"task": item.task, "id": item.id, "run": item.run, "task_type": task_type,
              "prediction": item.text, "failure": item.failure, "veto": item.veto}  # fmt: skip
    if item.fields is None:  # one answer read (classification, structured); else its fields
        read = item.status == "ok"
        return [Reading(field=None, stratum=stratum(item.read_by, item.confidence, read), read=item.extracted if read
                        else None, read_by=item.read_by, confidence=item.confidence, evidence=item.span,
                        gold=item.gold, **common)]  # fmt: skip
    found = []
    for name, figures in (item.fields or {}).items():
        if figures.get("kind") not in EXACT_FIELD_KINDS:
            continue
        pred = figures.get("pred")
        read = item.status == "ok" and pred is not None and figures.get("status") not in ("missing", "format_failure")
        confidence = "low" if figures.get("matched_by") == "fuzzy" else item.confidence
        found.append(Reading(field=name, stratum=stratum(item.read_by, confidence, read), read=pred if read else None,
                             read_by=item.read_by, confidence=confidence if read else None,
                             evidence=_field_evidence(item.text, name, figures) if read else None,
                             gold=figures.get("gold"), **common))  # fmt: skip
    return found


def all_readings(items: Iterable[Sample], task_types: Mapping[str, str]) -> list[Reading]:
    """Every reading of ``items`` (tasks absent from ``task_types`` are not read)."""
    return [r for item in items for r in readings_of(item, task_types.get(item.task, ""))]


def distinct(readings: Iterable[Reading]) -> list[Reading]:
    """The distinct readings: those of one item and field with the same output, value and
    reader made one, standing for each of their runs (``runs``), in first-seen order."""
    import json

    merged: dict[tuple[str, str, str | None, str, str, str | None, str], list[Reading]] = {}
    for r in readings:
        value = json.dumps(r.read, ensure_ascii=False, sort_keys=True)
        merged.setdefault((r.task, r.id, r.field, r.prediction, value, r.read_by, r.stratum), []).append(r)
    found = []
    for group in merged.values():
        runs = tuple(sorted({r.run for r in group}))
        first = min(group, key=lambda r: r.run)
        found.append(replace(first, runs=runs))
    return found


def allocate(sizes: Mapping[K, int], n: int) -> dict[K, int]:
    """``n`` draws shared among strata of ``sizes``: one for each non-empty stratum first
    (while ``n`` lasts, largest first), the rest in proportion to size (largest remainders),
    never more than a stratum holds."""
    order = sorted((k for k in sizes if sizes[k] > 0), key=lambda k: (-sizes[k], str(k)))
    share = dict.fromkeys(sizes, 0)
    for k in order[:n]:
        share[k] = 1
    left = n - sum(share.values())
    while left > 0:
        room = {k: sizes[k] - share[k] for k in order if sizes[k] > share[k]}
        if not room:
            break
        total = sum(room.values())
        quotas = {k: left * room[k] / total for k in room}
        given = 0
        for k in room:
            whole = min(int(quotas[k]), room[k])
            share[k] += whole
            given += whole
        if given == 0:  # the largest remainders take one each
            for k in sorted(room, key=lambda k: (-(quotas[k] - int(quotas[k])), str(k)))[:left]:
                share[k] += 1
                given += 1
        left -= given
    return share


def draw(readings: Sequence[Reading], n: int, seed: int) -> list[Reading]:
    """``n`` distinct readings (:func:`distinct`; all when fewer), stratified by (task,
    stratum) (:func:`allocate`), each stratum's drawn by a generator seeded with (``seed``,
    task, stratum): the same for every rerun; offered interleaved (:func:`interleave`)."""
    strata: dict[tuple[str, str], list[Reading]] = {}
    for reading in distinct(readings):
        strata.setdefault((reading.task, reading.stratum), []).append(reading)
    shares = allocate({k: len(v) for k, v in strata.items()}, n)
    picked: dict[tuple[str, str], list[Reading]] = {}
    for (task, how), members in strata.items():
        rng = random.Random(f"taxpraben-review:{seed}:{task}:{how}")
        members = sorted(members, key=lambda r: (_natural(r.id), r.run, r.field or ""))
        picked[(task, how)] = rng.sample(members, shares[(task, how)])
    return interleave(picked)


def interleave(strata: Mapping[tuple[str, str], Sequence[Reading]]) -> list[Reading]:
    """The readings of ``strata`` in rounds: the k-th of every stratum in round k, a round
    ordered by stratum (high, low, judge, none) then task, so that consecutive readings
    change task; within a stratum, the drawn order."""
    rank = {s: i for i, s in enumerate(STRATA)}
    order = sorted(strata, key=lambda k: (rank.get(k[1], 9), k[0]))
    rounds = max((len(v) for v in strata.values()), default=0)
    by_task: list[Reading] = []
    for k in range(rounds):
        by_task += [strata[key][k] for key in order if k < len(strata[key])]
    return by_task


def _natural(item_id: str) -> tuple[int, int | str]:
    return (0, int(item_id)) if item_id.isdigit() else (1, item_id)
