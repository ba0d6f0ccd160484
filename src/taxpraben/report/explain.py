"""How one output was read, for people: ``taxpraben explain`` and ``taxpraben rules``.

:func:`explanation` lays out one samples.jsonl item against its kind's chain of rules
(:data:`taxpraben.parsing.rules.CHAINS`): the rules before the one that decided it did not
read the output, the deciding one fired (a rule) or vetoed (a format failure), the rest
were not tried; then the evidence span of the raw output, the value and the score.
:func:`rule_rows` is the registry as rows. Pure: the command prints what these return.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taxpraben.parsing.rules import CHAINS, RULES, rule_named

if TYPE_CHECKING:
    from taxpraben.results import Sample
    from taxpraben.task_spec import TaskSpec

__all__ = ["Explanation", "RuleStep", "explanation", "reading_kind", "rule_rows"]


@dataclass(frozen=True)
class RuleStep:
    """One rule of the chain: its name, its confidence, and what it did for this output:
    ``fired``, ``vetoed``, ``did not read`` (tried before the deciding one) or ``not tried``."""

    name: str
    confidence: str
    outcome: str


@dataclass(frozen=True)
class Explanation:
    """One item explained (see the module docstring)."""

    task: str
    id: str
    run: int
    kind: str
    status: str
    read_by: str | None
    steps: tuple[RuleStep, ...]
    prediction: str
    evidence: tuple[int, int] | None
    value: Any
    score: float | None
    failure: str | None
    confidence: str | None

    @property
    def before(self) -> str:
        return self.prediction[: self.evidence[0]] if self.evidence else self.prediction

    @property
    def shown(self) -> str:
        return self.prediction[self.evidence[0] : self.evidence[1]] if self.evidence else ""

    @property
    def after(self) -> str:
        return self.prediction[self.evidence[1] :] if self.evidence else ""


def reading_kind(spec: TaskSpec | None) -> str:
    """The reading kind of a task (a key of :data:`CHAINS`), as its kind declares it."""
    if spec is None:
        return "text"
    from taxpraben.kinds import kind_of

    return kind_of(spec).reading_kind(spec)


def explanation(item: Sample, spec: TaskSpec | None) -> Explanation:
    """How ``item`` was read, laid against its kind's chain."""
    kind = reading_kind(spec)
    decided = (item.read_by or "").removeprefix("rule:") or item.veto
    chain = CHAINS.get(kind, ())
    steps: list[RuleStep] = []
    seen = decided not in chain
    for name in chain:
        rule = rule_named(name)
        confidence = rule.confidence if rule else "?"
        if name == decided:
            outcome, seen = ("vetoed" if name.startswith("veto.") else "fired"), True
        else:
            outcome = "not tried" if seen else "did not read"
        steps.append(RuleStep(name, confidence, outcome))
    value = item.extracted if item.status == "ok" else None
    return Explanation(
        item.task, item.id, item.run, kind, item.status, item.read_by, tuple(steps), item.text,
        item.span, value, item.score, item.failure, item.confidence,
    )


def rule_rows() -> list[dict[str, Any]]:
    """The registry, one row a rule: name, kinds, tier, confidence, number of examples (and
    of outputs it must leave alone), and what it reads."""
    return [
        {"name": r.name, "kinds": list(r.kinds), "tier": r.tier, "confidence": r.confidence,
         "examples": len(r.examples), "leaves_alone": len(r.leaves_alone), "description": r.description}
        for r in RULES
    ]


def rules_json() -> str:
    """``taxpraben rules --json``: the rows and the chains."""
    return json.dumps({"rules": rule_rows(), "chains": {k: list(v) for k, v in CHAINS.items()}},
                      ensure_ascii=False, indent=2)
