"""A reader is the execution of its kind's chain of rules.

A chain is a list of rule names: a *named chain set* (:data:`NAMED_CHAINS`: ``taxpraben``,
the default, :data:`CHAINS`; ``taxben``, TaxBen's own rules, :data:`TAXBEN_CHAINS`) holds one
per reading kind, and a task spec may give its own (``reading.chain``).

Each rule of the registry (:mod:`taxpraben.parsing.registry`) has, for each kind it reads, an *attempt*: a
function of the shared per-output view (the output cleaned once, its own answer, its
statements, ... built lazily and kept) that returns None when the rule does not apply, or a
:class:`~taxpraben.parsing.region.Reading`: a value read (the rule fired) or a format
failure (a veto: the chain stops there). :func:`run_chain` walks a chain in order; the first
rule that reads or vetoes decides, the rest are not reached. An attempt may veto under
another name than its own (the lead sentence that offers two options is ``veto.hedge``).

The walk records what each rule did (:class:`Step`); ``taxpraben explain`` shows those steps
(:func:`collecting` gathers the traces of the readings made inside it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, Literal, TypeVar

from taxpraben.parsing.region import Reading
from taxpraben.parsing.registry import attempt_names, attempt_of, generation

__all__ = [
    "CHAINS",
    "DEFAULT_CHAIN",
    "NAMED_CHAINS",
    "TAXBEN_CHAINS",
    "Attempt",
    "Chain",
    "ChainError",
    "Step",
    "Trace",
    "chain_for",
    "collecting",
    "run_chain",
]

#: The order in which each kind's reader tries the rules (the default chain set).
CHAINS: dict[str, tuple[str, ...]] = {
    "label": ("veto.copy-of-prompt", "veto.another-question", "json.answer-field", "veto.hedge",
              "veto.none-correct", "final.self-correction", "final.answer-statement", "final.boxed",
              "veto.several-answers", "veto.not-an-option", "choice.bare-answer", "choice.bold-answer",
              "conclusion.statement", "veto.several-letters", "choice.lead-sentence", "choice.named-in-last-sentence",
              "choice.value-in-last-sentence", "choice.letter-in-last-sentence", "veto.not-asserted",
              "veto.no-answer"),
    "letters": ("veto.copy-of-prompt", "veto.another-question", "veto.hedge", "json.answer-field",
                "final.self-correction", "final.answer-statement", "final.boxed", "veto.several-answers",
                "letters.all-or-all-but", "letters.all-options-concluded", "letters.option-verdicts",
                "conclusion.statement", "letters.restated-option-lines", "letters.lead-sentence",
                "letters.last-group", "letters.named-by-text", "veto.no-answer"),
    "number": ("veto.copy-of-prompt", "veto.another-question", "json.answer-field", "veto.several-answers",
               "final.self-correction",
               "final.answer-statement", "final.boxed", "veto.declines",
               "conclusion.statement", "number.says-zero", "veto.alternatives", "number.sole-number", "number.last-number", "veto.no-answer"),
    "span": ("veto.copy-of-prompt", "veto.another-question", "json.answer-field", "span.answer-statement",
             "span.marked", "veto.refusal", "span.bare-answer", "span.whole-output", "veto.no-answer"),
    "fields": ("veto.copy-of-prompt", "fields.json", "fields.lines", "veto.no-field", "veto.no-answer"),
    "text": ("text.whole-output", "veto.no-answer"),
}

#: TaxBen's chains (``--profile taxben``, or a spec's ``reading: {chain: taxben}``): its rules
#: on the raw output. Kinds TaxBen never had read by this project's rules, the fields without
#: the copy veto (TaxBen would credit a copy of the prompt's JSON template).
TAXBEN_CHAINS: dict[str, tuple[str, ...]] = {
    "label": ("taxben.choice-substring", "veto.no-answer"),
    "letters": ("taxben.letter-run", "veto.no-answer"),
    "number": ("taxben.whole-output-float", "taxben.yuan-amount", "veto.no-answer"),
    "span": ("taxben.gold-substring", "taxben.gold-absent", "veto.no-answer"),
    "fields": ("fields.json", "fields.lines", "veto.no-field", "veto.no-answer"),
    "text": ("taxben.raw-output", "veto.no-answer"),
}

#: The name of the default chain set.
DEFAULT_CHAIN = "taxpraben"
#: The named chain sets: a chain per reading kind each. A spec's ``reading.chain`` may name one.
NAMED_CHAINS: dict[str, dict[str, tuple[str, ...]]] = {DEFAULT_CHAIN: CHAINS, "taxben": TAXBEN_CHAINS}

View = TypeVar("View")

#: A rule's attempt over the view of one output: None (does not apply) or a reading.
Attempt = Callable[[View], Reading | None]

Outcome = Literal["read", "vetoed", "did not apply", "not reached"]


class ChainError(ValueError):
    """A chain names a rule that has no attempt for its kind."""


@dataclass(frozen=True)
class Step:
    """What one rule of the chain did for an output: ``read`` (``value`` from ``source``),
    ``vetoed`` (``failure``; ``decided_by`` names the veto when it is not the rule itself),
    ``did not apply`` or ``not reached``."""

    rule: str
    outcome: Outcome
    value: object = None
    source: str | None = None
    failure: str | None = None
    decided_by: str | None = None


@dataclass(frozen=True)
class Trace:
    """One reading and the steps of the chain that made it."""

    kind: str
    reading: Reading
    steps: tuple[Step, ...]


_TRACES: ContextVar[list[Trace] | None] = ContextVar("taxpraben_chain_traces", default=None)


@contextmanager
def collecting() -> Iterator[list[Trace]]:
    """The traces of every chain run inside the ``with`` block, in order."""
    traces: list[Trace] = []
    token = _TRACES.set(traces)
    try:
        yield traces
    finally:
        _TRACES.reset(token)


def _step(name: str, reading: Reading) -> Step:
    decided = reading.rule if reading.rule != name else None
    if reading.failure is not None:
        return Step(name, "vetoed", failure=reading.failure, decided_by=decided)
    return Step(name, "read", reading.value, reading.source, decided_by=decided)


class Chain(Generic[View]):
    """A kind's ordered rules bound to their attempts, looked up in the registry (checked
    when made: ChainError names a rule without an attempt for ``kind``)."""

    __slots__ = ("attempts", "kind", "names")

    def __init__(self, kind: str, names: Sequence[str]):
        attempts = [attempt_of(name, kind) for name in names]
        unknown = [name for name, attempt in zip(names, attempts, strict=True) if attempt is None]
        if unknown:
            raise ChainError(f"the {kind} reader has no rule {', '.join(unknown)} "
                             f"(its rules: {', '.join(attempt_names(kind))})")
        self.kind = kind
        self.names = tuple(names)
        self.attempts: tuple[Callable[[View], Reading | None], ...] = tuple(a for a in attempts if a is not None)

    def run(self, view: View, fallback: Reading) -> Reading:
        """The reading of the first rule that reads or vetoes (``fallback`` when none does)."""
        traces = _TRACES.get()
        if traces is None:
            for attempt in self.attempts:
                reading = attempt(view)
                if reading is not None:
                    return reading
            return fallback
        return self._traced(view, fallback, traces)

    def _traced(self, view: View, fallback: Reading, traces: list[Trace]) -> Reading:
        steps: list[Step] = []
        decided: Reading | None = None
        for name, attempt in zip(self.names, self.attempts, strict=True):
            if decided is not None:
                steps.append(Step(name, "not reached"))
                continue
            reading = attempt(view)
            if reading is None:
                steps.append(Step(name, "did not apply"))
            else:
                decided = reading
                steps.append(_step(name, reading))
        result = decided if decided is not None else fallback
        traces.append(Trace(self.kind, result, tuple(steps)))
        return result


def chain_for(kind: str, names: tuple[str, ...] | None = None) -> Chain[Any]:
    """The ``kind`` reader's chain: ``names`` in order (default: the ``kind`` chain of
    :data:`CHAINS`), built once per registry state (ChainError: see :class:`Chain`)."""
    return _built(kind, CHAINS[kind] if names is None else names, generation())


@lru_cache(maxsize=256)
def _built(kind: str, names: tuple[str, ...], _generation: int) -> Chain[Any]:
    return Chain(kind, names)


def run_chain(chain: Chain[View], view: View, fallback: Reading) -> Reading:
    """``chain`` executed over ``view`` (see :class:`Chain`)."""
    return chain.run(view, fallback)
