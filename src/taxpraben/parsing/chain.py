"""A reader is the execution of its kind's chain of rules.

Each rule of :mod:`taxpraben.parsing.rules` has, for each kind it reads, an *attempt*: a
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

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from taxpraben.parsing.region import Reading

__all__ = ["Attempt", "ChainError", "Step", "Trace", "collecting", "run_chain"]

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
    """A kind's ordered rules bound to their attempts (checked when made: ChainError names a
    rule without an attempt for ``kind``)."""

    __slots__ = ("attempts", "kind", "names")

    def __init__(self, kind: str, names: Sequence[str], attempts: Mapping[str, Callable[[View], Reading | None]]):
        unknown = [name for name in names if name not in attempts]
        if unknown:
            raise ChainError(f"the {kind} reader has no rule {', '.join(unknown)} "
                             f"(its rules: {', '.join(attempts)})")
        self.kind = kind
        self.names = tuple(names)
        self.attempts = tuple(attempts[name] for name in names)

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


def run_chain(chain: Chain[View], view: View, fallback: Reading) -> Reading:
    """``chain`` executed over ``view`` (see :class:`Chain`)."""
    return chain.run(view, fallback)
