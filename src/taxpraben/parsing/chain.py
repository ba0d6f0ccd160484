"""A reader is the execution of its kind's chain of rules.

A chain is a list of rule names: each reader's module lists its default chain beside its
rules, and :mod:`taxpraben.parsing.rules` gathers them into the *named chain sets*
(``taxpraben``, the default; ``taxben``, TaxBen's own rules); a task spec may give its own
(``reading.chain``).

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
    "Attempt",
    "Chain",
    "ChainError",
    "Step",
    "Trace",
    "chain_for",
    "collecting",
    "run_chain",
]


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


#: A chain of some reading kind (its view's type is the caller's: ``label_chain`` gives a
#: ``Chain[LabelView]``).
AnyChain = Chain[Any]


def chain_for(kind: str, names: tuple[str, ...]) -> AnyChain:
    """The ``kind`` reader's chain of the rules ``names``, in order, built once per registry
    state (ChainError: see :class:`Chain`)."""
    return _built(kind, names, generation())


@lru_cache(maxsize=256)
def _built(kind: str, names: tuple[str, ...], _generation: int) -> AnyChain:
    return Chain(kind, names)


def run_chain(chain: Chain[View], view: View, fallback: Reading) -> Reading:
    """``chain`` executed over ``view`` (see :class:`Chain`)."""
    return chain.run(view, fallback)
