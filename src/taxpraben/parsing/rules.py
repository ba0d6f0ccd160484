"""The answer-reading rules, all of them: each rule's name, the kinds it reads, its place in
the order, its confidence, and examples of what it reads and what it must leave alone.

A rule is declared once, beside its code (:func:`~taxpraben.parsing.registry.register_rule`
in its reader's module, :mod:`taxpraben.parsing.readers`); this module imports every reader,
so that :data:`RULES` and :func:`rule_named` see every built-in rule, and a plugin's rules as
soon as the plugin is imported.

Every reading names the rule that made it (:attr:`taxpraben.parsing.region.Reading.rule`):
samples.jsonl writes it as ``read_by: "rule:<name>"``, ``taxpraben rules`` lists this
registry and ``taxpraben explain`` shows one output's reading against it. A format failure
names the veto that decided it (``veto.*``).

Each kind's reader is the execution of its chain: the chain of its reading kind in a *named
chain set* (:data:`NAMED_CHAINS`: ``taxpraben``, the default, :data:`CHAINS`; ``taxben``,
TaxBen's own rules, :data:`TAXBEN_CHAINS`), or a task spec's own ``reading.chain`` (a chain
set's name, or rule names in order): :mod:`~taxpraben.parsing.chain` runs the attempts of the rules in order
over one view of the output (each kind's attempts together: :mod:`~taxpraben.parsing.readers.label`,
:mod:`~taxpraben.parsing.readers.letters`, :mod:`~taxpraben.parsing.readers.number`,
:mod:`~taxpraben.parsing.readers.span`, :mod:`~taxpraben.parsing.readers.fields`,
:mod:`~taxpraben.parsing.readers.text`); a test runs every example through the
chain of its kind in every named set that holds the rule and checks that it is read by its
own rule, so a rule that an earlier one shadows fails.

What a rule reads is compared with the gold as its ``comparison`` says: ``taxpraben`` (this
project's: an option's label, a number in the gold's unit, a set of letters, a phrase) or
``taxben`` (TaxBen's, flaws included: lower-cased labels, the letter string in output order,
``"{:.2f}"`` strings, the gold as a substring, the raw output); a chain's reading rules share
one (:func:`chain_comparison`).

Confidence: ``high`` for an answer the output states (a marker, a box, a JSON field, a
line that is nothing but the answer); ``low`` for a fallback (a last number with no
statement, an option named only in passing, a span that is the whole output, a field
matched fuzzily): ``--judge`` reads low-confidence readings as it reads format failures.

The example questions (:data:`EXAMPLE_CONTEXT`) are fixed per kind, so an example is one
output and what a careful grader reads from it. Pure data; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import overload

from taxpraben.parsing import readers
from taxpraben.parsing.readers.fields import FIELDS_CHAIN
from taxpraben.parsing.readers.label import LABEL_CHAIN
from taxpraben.parsing.readers.letters import LETTERS_CHAIN
from taxpraben.parsing.readers.number import NUMBER_CHAIN
from taxpraben.parsing.readers.shared import NO_ANSWER_RULE
from taxpraben.parsing.readers.span import SPAN_CHAIN
from taxpraben.parsing.readers.taxben import TAXBEN_CHAINS
from taxpraben.parsing.readers.text import TEXT_CHAIN
from taxpraben.parsing.registry import (
    EXAMPLE_CONTEXT,
    Comparison,
    Example,
    Rule,
    attempt_names,
    confidence_of,
    generation,
    registered_rules,
    rule_named,
)

__all__ = [
    "CHAINS",
    "DEFAULT_CHAIN",
    "EXAMPLE_CONTEXT",
    "NAMED_CHAINS",
    "READERS",
    "RULES",
    "TAXBEN_CHAINS",
    "Example",
    "Rule",
    "chain_comparison",
    "chain_names",
    "confidence_of",
    "placed_in",
    "rule_named",
    "rules_of_kind",
]

#: The order in which each kind's reader tries the rules (the default chain set): each
#: reader's module lists its own, beside its rules.
CHAINS: dict[str, tuple[str, ...]] = {"label": LABEL_CHAIN, "letters": LETTERS_CHAIN, "number": NUMBER_CHAIN,
                                      "span": SPAN_CHAIN, "fields": FIELDS_CHAIN, "text": TEXT_CHAIN}
#: The name of the default chain set.
DEFAULT_CHAIN = "taxpraben"
#: The named chain sets: a chain per reading kind each. A spec's ``reading.chain`` may name one.
NAMED_CHAINS: dict[str, dict[str, tuple[str, ...]]] = {DEFAULT_CHAIN: CHAINS, "taxben": TAXBEN_CHAINS}

#: The modules of the built-in readers (imported here: their rules are registered).
READERS = readers.__all__


class RegisteredRules(Sequence[Rule]):
    """Every registered rule, by tier (vetoes that come first, ..., the vetoes that end a
    chain), in the order declared within a tier: a live view, so that a rule a plugin
    registers later is in it."""

    def _rules(self) -> tuple[Rule, ...]:
        return _by_tier(generation())

    @overload
    def __getitem__(self, index: int) -> Rule: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Rule]: ...
    def __getitem__(self, index: int | slice) -> Rule | Sequence[Rule]:
        return self._rules()[index]

    def __len__(self) -> int:
        return len(self._rules())

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules())

    def __repr__(self) -> str:
        return f"RULES({', '.join(rule.name for rule in self)})"


@lru_cache(maxsize=4)
def _by_tier(_generation: int) -> tuple[Rule, ...]:
    return tuple(sorted(registered_rules(), key=lambda rule: rule.tier))


#: Every registered rule (see :class:`RegisteredRules`).
RULES: Sequence[Rule] = RegisteredRules()


def rules_of_kind(kind: str) -> tuple[str, ...]:
    """The names of the rules that read ``kind`` (those with an attempt for it): what a
    spec's own ``reading.chain`` for a reader of that kind may name."""
    return attempt_names(kind)


def placed_in(chain: Sequence[str], rule: Rule) -> tuple[str, ...]:
    """``chain`` with ``rule`` in its tier's place: after the last rule of a tier not above
    its own, before ``veto.no-answer`` (a plugin's rule that no named chain holds has its
    examples run through its kind's default chain placed so)."""
    names = [name for name in chain if name != rule.name]
    at = 0
    for i, name in enumerate(names):
        other = rule_named(name)
        if other is not None and other.tier <= rule.tier and name != NO_ANSWER_RULE.name:
            at = i + 1
    return (*names[:at], rule.name, *names[at:])


def chain_names(chain: str | tuple[str, ...] | None, kind: str) -> tuple[str, ...]:
    """The rule names of the ``kind`` reader's chain: ``chain`` itself (rule names), the
    ``kind`` chain of the chain set it names, or of the default set (None). KeyError for an
    unknown set name (specs are checked when loaded)."""
    if chain is None or isinstance(chain, str):
        return NAMED_CHAINS[chain or DEFAULT_CHAIN][kind]
    return chain


def chain_comparison(names: tuple[str, ...]) -> Comparison:
    """How the readings of the chain ``names`` compare with the gold: its reading rules'
    comparison (``taxpraben`` when it has none). ValueError for a chain whose reading rules
    compare differently."""
    return _comparison(names, generation())


@lru_cache(maxsize=256)
def _comparison(names: tuple[str, ...], _generation: int) -> Comparison:
    found = {rule.comparison for name in names if (rule := rule_named(name)) is not None and not rule.veto}
    if len(found) > 1:
        raise ValueError(f"its reading rules compare with the gold in different ways ({', '.join(sorted(found))}): "
                         "TaxBen's rules (taxben.*) and this project's cannot share a chain")
    return found.pop() if found else "taxpraben"
