"""How one output was read, for people: ``taxpraben explain`` and ``taxpraben rules``.

:func:`traced_reading` reads one output again, as scoring read it, and keeps the trace of
its kind's chain (:mod:`taxpraben.parsing.chain`): what each rule did, in order.
:func:`explanation` lays one samples.jsonl item out with that trace: the rules that did not
read the output, the one that fired (the value it read and the text it read it from) or
vetoed (why), the rest not tried; then the evidence span of the raw output, the value and
the score. Without a trace (the records are not at hand, a profile with no chain) it says
why and shows the recorded reading only; it names the chain that read (:func:`chain_used`:
the profile's chain set, the spec's own chain, or the default set). :func:`rule_rows` is the
registry as rows, each with the named chain sets that hold the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taxpraben.parsing.rules import CHAINS, DEFAULT_CHAIN, NAMED_CHAINS, RULES, Example, rule_named

if TYPE_CHECKING:
    from taxpraben.parsing.chain import Step, Trace
    from taxpraben.records import Record
    from taxpraben.results import Prediction, Sample
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.task_spec import TaskSpec

__all__ = ["Explanation", "RuleStep", "chain_used", "explanation", "reading_kind", "rule_rows", "traced_reading"]

#: How each outcome of a chain step is shown.
OUTCOME_SHOWN = {"read": "fired", "vetoed": "vetoed", "did not apply": "did not read", "not reached": "not tried"}


@dataclass(frozen=True)
class RuleStep:
    """One rule of the chain: its name, its confidence, and what it did for this output:
    ``fired``, ``vetoed``, ``did not read`` (a reading rule that did not apply), ``did not
    apply`` (a veto that did not) or ``not tried`` (the chain
    stopped before it); ``detail``: what it read and from where, or why it vetoed."""

    name: str
    confidence: str
    outcome: str
    detail: str = ""


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
    value: JSONValue
    score: float | None
    failure: str | None
    confidence: str | None
    #: Why there are no steps (no trace), or None.
    untraced: str | None = None
    #: The chain that read it, in words ("taxben", "the task's own"), when known.
    chain: str | None = None

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


def chain_used(spec: TaskSpec | None, profile: str = "taxpraben") -> str:
    """The chain a task is read with under ``profile``, in words: the chain set the profile
    reads with, the set the spec names, the spec's own rules, or the default set."""
    from taxpraben.kinds.profiles import scoring_rules

    own = spec.reading_chain if spec is not None else None
    chosen = scoring_rules(profile).chain
    if chosen is not None:
        return f"{chosen} (profile {profile})"
    if isinstance(own, str):
        return f"{own} (the task's spec)"
    if own is not None:
        return "the task's own (its spec's reading.chain)"
    return DEFAULT_CHAIN


def traced_reading(spec: TaskSpec, record: Record, run: int, prediction: Prediction | str,
                   profile: str = "taxpraben") -> Trace | None:
    """``prediction`` read again as scoring reads it (profile ``profile``), and the trace of
    the chain of the task's reading kind that made the reading (None when no chain ran)."""
    from taxpraben.parsing.chain import collecting
    from taxpraben.scoring.items import prepare_item

    kind = reading_kind(spec)
    with collecting() as traces:
        prepare_item(spec, record, run, prediction, None, profile)
    # its kind's chain; else the one chain that ran (a fields task's whole-answer record)
    return next((trace for trace in reversed(traces) if trace.kind == kind), traces[-1] if traces else None)


def _shown(value: object, kind: str) -> str:
    """A value as a chain step read it, for people."""
    if kind == "label" and isinstance(value, int) and not isinstance(value, bool):
        return f"option {chr(65 + value)}" if 0 <= value < 26 else f"option {value}"
    if isinstance(value, frozenset):
        return "".join(sorted(str(v) for v in value))
    text = getattr(value, "text", None)
    if isinstance(text, str) and hasattr(value, "is_percent"):
        return text  # a number as written
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _detail(step: Step, kind: str) -> str:
    """What a step did, in words."""
    as_rule = f" (as {step.decided_by})" if step.decided_by else ""
    if step.outcome == "read":
        where = f" from {_clip(step.source)!r}" if step.source else ""
        return f"read {_clip(_shown(step.value, kind))!r}{where}{as_rule}"
    if step.outcome == "vetoed":
        return f"{step.failure}{as_rule}"
    return ""


def explanation(item: Sample, spec: TaskSpec | None, trace: Trace | None = None,
                untraced: str | None = None, chain: str | None = None) -> Explanation:
    """How ``item`` was read: the steps of ``trace`` (see :func:`traced_reading`), or none
    and ``untraced`` saying why; ``chain``: the chain that read it (:func:`chain_used`)."""
    kind = trace.kind if trace is not None else reading_kind(spec)
    steps: list[RuleStep] = []
    if trace is not None:
        for step in trace.steps:
            rule = rule_named(step.rule)
            outcome = OUTCOME_SHOWN[step.outcome]
            if outcome == "did not read" and step.rule.startswith("veto."):
                outcome = "did not apply"
            steps.append(RuleStep(step.rule, rule.confidence if rule else "?", outcome, _detail(step, kind)))
    elif untraced is None:
        untraced = "no chain ran for this output"
    value = item.extracted if item.status == "ok" else None
    return Explanation(
        item.task, item.id, item.run, kind, item.status, item.read_by, tuple(steps), item.text,
        item.span, value, item.score, item.failure, item.confidence, untraced if trace is None else None, chain,
    )


def rule_rows() -> list[JSONObject]:
    """The registry, one row a rule: name, kinds, tier, confidence, how it compares with the
    gold, the named chain sets that hold it, what it reads, and its examples themselves
    (``examples``: the outputs it reads, ``leaves_alone``: those it must not; each with its
    kind, the output and the reading expected, None for no answer)."""
    return [
        {"name": r.name, "kinds": list(r.kinds), "tier": r.tier, "confidence": r.confidence,
         "comparison": r.comparison, "chains": _sets_holding(r.name), "description": r.description,
         "examples": [_example_row(ex) for ex in r.examples],
         "leaves_alone": [_example_row(ex) for ex in r.leaves_alone]}
        for r in RULES
    ]


def _example_row(example: Example) -> JSONObject:
    row: JSONObject = {"kind": example.kind, "output": example.output, "expect": example.expect}
    if example.context is not None:
        row["context"] = example.context
    return row


def _sets_holding(name: str) -> list[str]:
    return [set_name for set_name, chains in NAMED_CHAINS.items() if any(name in chain for chain in chains.values())]


def rules_json() -> str:
    """``taxpraben rules --json``: the rows, the default chains (``chains``) and every named
    chain set (``named_chains``: name -> reading kind -> rule names)."""
    named = {name: {kind: list(chain) for kind, chain in chains.items()} for name, chains in NAMED_CHAINS.items()}
    return json.dumps({"rules": rule_rows(), "chains": {k: list(v) for k, v in CHAINS.items()},
                       "default_chain": DEFAULT_CHAIN, "named_chains": named}, ensure_ascii=False, indent=2)
