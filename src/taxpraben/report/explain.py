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

An explanation also says why the point was given or withheld: the gold, how the reading is
compared with it (:data:`COMPARISONS`, the profile's) and the outcome
(:func:`outcome_text`), whether the judge was asked and what it said (:func:`judge_text`),
and for a fields task each field (:class:`FieldLine`): what was read, where (the spans each
field was read from), the gold's value and the field's outcome. Values are shown as text
(:func:`shown_value`): never a Python ``None``.
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

__all__ = ["COMPARISONS", "Explanation", "FieldLine", "RuleStep", "chain_used", "explanation", "field_lines",
           "judge_text", "marked", "outcome_text", "reading_kind", "rule_rows", "shown_value", "traced_reading"]

#: How a reading of each kind is compared with the gold (profile taxpraben).
COMPARISONS = {
    "label": "the option read must be the gold's option (its text, exactly, after full-width and space folding)",
    "number": "both numbers in the gold's unit (万/亿, 元 and % read), equal when they round to the same value at "
              "{decimals} decimals",
    "letters": "the set of option letters read must be the gold's set (order and separators ignored)",
    "span": "the span read must be the gold's after normalisation (full-width, spaces, punctuation and quotes "
            "folded), or its sentence must state the gold's phrase or amount",
    "fields": "each field with the gold's field of the same name: numbers at {decimals} decimals, categories "
              "after normalisation, text by BERTScore; the item's score is (mean EM + mean BERTScore) / 2",
    "text": "not compared exactly: scored by BERTScore and BARTScore against the gold",
}
#: Profile taxben: TaxBen's own comparisons (flaws included).
TAXBEN_COMPARISONS = {
    "label": "TaxBen's: the first choice, in list order, that the output contains as a substring (lower-cased)",
    "number": "TaxBen's: both as \"{{:.2f}}\" strings, equal as text",
    "letters": "TaxBen's: the letter string in the output's order, equal as text",
    "span": "TaxBen's: the gold contained in the raw output",
}
#: Markers of the evidence where the output is not a terminal (a pipe, a file).
MARK_OPEN, MARK_CLOSE = "⟦", "⟧"

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
    gold: JSONValue = None
    #: How the reading is compared with the gold, in words.
    comparison: str = ""
    #: The comparison's outcome and the point, in words.
    outcome: str = ""
    #: Whether the judge was asked and what it said, in words.
    judge: str = "not asked"
    #: A fields task's fields.
    fields: tuple[FieldLine, ...] = ()

    @property
    def spans(self) -> list[tuple[int, int]]:
        """The evidence: each field's span for a fields task (those found), else the reading's."""
        found = sorted({f.span for f in self.fields if f.span is not None})
        if found:
            return found
        return [self.evidence] if self.evidence else []

    @property
    def before(self) -> str:
        return self.prediction[: self.evidence[0]] if self.evidence else self.prediction

    @property
    def shown(self) -> str:
        return self.prediction[self.evidence[0] : self.evidence[1]] if self.evidence else ""

    @property
    def after(self) -> str:
        return self.prediction[self.evidence[1] :] if self.evidence else ""


@dataclass(frozen=True)
class FieldLine:
    """One field of a fields task's reading: its kind, what was read and where (``span``;
    ``located``: found as the value after the field's name in the output, the reader not
    recording where it read it), the gold's value, the field's status, key match and score."""

    name: str
    kind: str
    read: JSONValue
    gold: JSONValue
    status: str
    matched_by: str
    score: float | None
    span: tuple[int, int] | None
    located: bool
    #: Why the value read is no answer (a format failure of the field), or None.
    failure: str | None = None


def field_lines(item: Sample) -> tuple[FieldLine, ...]:
    """The fields of ``item`` (none unless it is a fields task's)."""
    from taxpraben.review.draw import field_span

    found = []
    for name, figures in (item.fields or {}).items():
        pred = figures.get("pred")
        recorded = figures.get("evidence")
        span: tuple[int, int] | None = None
        located = False
        if isinstance(recorded, list) and len(recorded) == 2 and all(isinstance(v, int) for v in recorded):
            span = (int(recorded[0]), int(recorded[1]))
        elif pred is not None and figures.get("kind") != "text":
            span, located = field_span(item.text, name, pred), True
        score = figures.get("score")
        found.append(FieldLine(name, str(figures.get("kind") or "?"), pred, figures.get("gold"),
                               str(figures.get("status") or "?"), str(figures.get("matched_by") or "?"),
                               float(score) if isinstance(score, (int, float)) else None, span, located and span is not None,
                               str(figures["failure"]) if figures.get("failure") else None))  # fmt: skip
    return tuple(found)


def shown_value(value: JSONValue, nothing: str = "nothing") -> str:
    """A value for people: text quoted, a whole float without its .0, JSON for the rest;
    ``nothing`` for none (never "None")."""
    if value is None:
        return nothing
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 200 else repr(value[:199] + "…")
    return json.dumps(value, ensure_ascii=False)


def comparison_text(kind: str, spec: TaskSpec | None, profile: str) -> str:
    """How a reading of ``kind`` is compared with the gold under ``profile``, in words."""
    if profile == "taxben" and kind in TAXBEN_COMPARISONS:
        return TAXBEN_COMPARISONS[kind]
    decimals = 2
    options = getattr(spec, "structured", None) if spec is not None else None
    if options is not None and isinstance(getattr(options, "decimals", None), int):
        decimals = options.decimals
    return COMPARISONS.get(kind, COMPARISONS["text"]).format(decimals=decimals)


def outcome_text(item: Sample) -> str:
    """The comparison's outcome and the point, in words."""
    score = "not computed" if item.score is None else f"{item.score:g}"
    if item.status == "error":
        return f"no output to compare (generation failed: {item.error or 'error'}): score {score}"
    if item.status != "ok":
        return (f"no answer was read ({item.failure or 'format failure'}): nothing to compare; counted as a format "
                f"failure, score {score}")
    if item.fields:
        exact = [f for f in item.fields.values() if f.get("kind") != "text"]
        equal = sum(f.get("score") == 1 for f in exact)
        return f"{equal} of {len(exact)} exact field(s) equal the gold's; item score {score}"
    if item.score is None:
        return "score not computed"
    if item.score >= 1:
        return f"equal: the point is given (score {score})"
    if item.score <= 0:
        return (f"not equal: {shown_value(item.extracted)} is not {shown_value(item.gold)}: the point is withheld "
                f"(score {score})")
    return f"partly equal: score {score}"


def judge_text(item: Sample) -> str:
    """Whether the judge was asked about ``item`` and what it said, in words."""
    by = item.read_by or ""
    if by.startswith("judge:"):
        return f"asked ({by[6:]}): its reading {shown_value(item.extracted)} was taken (the rules read none, or " \
               "only with low confidence)"
    if item.judge_agrees is not None:
        verdict = "agrees with the rules" if item.judge_agrees else "reads it otherwise than the rules"
        return f"asked to audit: it read {shown_value(item.judge_extracted)}, and {verdict}"
    if item.judge_rejected is not None:
        return f"asked: its reading was rejected ({item.judge_rejected})"
    if item.judge_reply is not None:
        return "asked: it read no answer"
    return "not asked"


def marked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (non-overlapping, sorted) between ⟦ and ⟧."""
    out, at = [], 0
    for start, end in spans:
        if start < at:
            continue
        out += [text[at:start], MARK_OPEN, text[start:end], MARK_CLOSE]
        at = end
    out.append(text[at:])
    return "".join(out)


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
                untraced: str | None = None, chain: str | None = None, profile: str = "taxpraben") -> Explanation:
    """How ``item`` was read: the steps of ``trace`` (see :func:`traced_reading`), or none
    and ``untraced`` saying why; ``chain``: the chain that read it (:func:`chain_used`);
    then how it was compared with the gold under ``profile``, and the outcome."""
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
        item.gold, comparison_text(kind, spec, profile), outcome_text(item), judge_text(item), field_lines(item),
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
