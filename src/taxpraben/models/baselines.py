"""``baseline:NAME``: reference answers that need no model.

- ``oracle``: the gold itself (``choices[gold]`` for classification, the answer text
  otherwise), so every exact-match and classification metric must come out 1.0: the
  pipeline's own end-to-end check.
- ``first-choice``: the first option (``"A"`` for lettered options and letter answers),
  otherwise the first line of the context.
- ``lead``: the first 200 characters of the context (``text``, else the query), the classic
  summarisation floor.
- ``echo``: the query itself, as a base model that only copies its prompt would answer: it
  must score 0 on every choice, label and number task, every item counted as a format failure
  ("copy of the prompt"), the readers' end-to-end check that copies are never credited.
- ``random``: seeded by ``seed_base + run`` and the item: a random choice, a random
  non-empty set of letters, a number taken from the query, or a random stretch of context.

Every baseline but ``random`` gives the same answer in every run (``shares_runs``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from taxpraben.kinds import kind_of
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
)
from taxpraben.records import Record
from taxpraben.task_spec import TaskSpec

LEAD_CHARS = 200


def _context(record: Record) -> str:
    return record.text if record.text else record.query


def _kind_answer(baseline: str, record: Record, spec: TaskSpec | None, rng: random.Random) -> str | None:
    """The task kind's own answer for this baseline (option letters, numbers...), if it has one."""
    if spec is None:
        return None
    return kind_of(spec).baseline_answer(baseline, spec, record, rng)


def oracle(record: Record, spec: TaskSpec | None, rng: random.Random) -> str:
    if record.choices is not None and record.gold is not None:
        if record.choices.count(record.gold_label) > 1:  # a repeated text: its letter says which
            return f"{chr(65 + record.gold)}. {record.gold_label}"
        return record.gold_label
    return record.answer_text


def first_choice(record: Record, spec: TaskSpec | None, rng: random.Random) -> str:
    own = _kind_answer("first-choice", record, spec, rng)
    if own is not None:
        return own
    if record.choices:
        return record.choices[0]
    lines = [line for line in _context(record).splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def lead(record: Record, spec: TaskSpec | None, rng: random.Random) -> str:
    return _context(record)[:LEAD_CHARS]


def echo(record: Record, spec: TaskSpec | None, rng: random.Random) -> str:
    return record.query


def random_answer(record: Record, spec: TaskSpec | None, rng: random.Random) -> str:
    if record.choices:
        return rng.choice(record.choices)
    own = _kind_answer("random", record, spec, rng)
    if own is not None:
        return own
    context = _context(record)
    size = min(len(context), LEAD_CHARS)
    start = rng.randint(0, max(0, len(context) - size))
    return context[start : start + size]


BASELINES = {
    "oracle": oracle,
    "first-choice": first_choice,
    "lead": lead,
    "echo": echo,
    "random": random_answer,
}


class BaselineBackend:
    """Answers computed from the record (and its task spec) alone."""

    kind = "baseline"
    endpoint: str | None = None
    batch_size = 64
    cacheable = False

    def __init__(self, name: str) -> None:
        name = name.strip().lower().replace("_", "-")
        if name not in BASELINES:
            raise ModelSpecError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINES)}")
        self.model = name
        self._answer = BASELINES[name]

    @property
    def spec(self) -> str:
        return f"baseline:{self.model}"

    def shares_runs(self, config: GenerationConfig) -> bool:
        return self.model != "random"

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        out: list[Completion | BackendError] = []
        for request in requests:
            record = request.record
            # Seeded by the run's seed and the item, so the answer never depends on order.
            rng = random.Random(f"{request.seed}\x00{record.task}\x00{record.id}")
            out.append(Completion(text=self._answer(record, request.spec, rng), latency_s=0.0))
        return out

    async def aclose(self) -> None:
        return None
