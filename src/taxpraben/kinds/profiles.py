"""The scoring profiles as data: the chain set each reads with.

A job chooses its profile once (``--profile``; :func:`scoring_rules`) and hands the object
to every item; no module tests the profile's name. A profile is the name of a chain set of
:data:`taxpraben.parsing.rules.NAMED_CHAINS`, or none: ``taxpraben`` (the default) reads each
task with its spec's own ``reading.chain``, else the chain set named ``taxpraben``;
``taxben`` reads every task with the chain set named ``taxben`` (TaxBen's exact rules, flaws
included, to compare like for like), whatever its spec's chain. How a reading is compared
with the gold is declared by the chain's rules (:func:`~taxpraben.parsing.rules.chain_comparison`)
and the values they read (:mod:`taxpraben.parsing.readers.taxben`), so each kind has one
reading path.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taxpraben.metrics.defaults import PROFILES

if TYPE_CHECKING:
    from taxpraben.task_spec import TaskSpec

#: Each spec with a profile's chain set, made once per (spec, chain set).
_APPLIED: dict[tuple[int, str], tuple[TaskSpec, TaskSpec]] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ScoringRules:
    """A profile: its name, and the chain set it reads every task with (None: each spec's
    own chain, else the default set)."""

    name: str
    chain: str | None = None

    def applied_to(self, spec: TaskSpec) -> TaskSpec:
        """``spec`` as this profile reads it: reading with the profile's chain set."""
        if self.chain is None:
            return spec
        key = (id(spec), self.chain)
        with _LOCK:
            known = _APPLIED.get(key)
        if known is not None and known[0] is spec:
            return known[1]
        from taxpraben.task_spec import ReadingOptions

        applied = dataclasses.replace(spec, reading=ReadingOptions(chain=self.chain))
        with _LOCK:
            _APPLIED[key] = (spec, applied)  # the spec kept: its id is not reused while here
        return applied


#: The rules of each profile, by name (the names of ``metrics.defaults.PROFILES``).
RULES: dict[str, ScoringRules] = {rules.name: rules for rules in (ScoringRules("taxpraben"),
                                                                   ScoringRules("taxben", chain="taxben"))}
assert tuple(RULES) == PROFILES, "every profile has its rules"
PAPER_RULES = RULES["taxpraben"]


def scoring_rules(profile: str | ScoringRules) -> ScoringRules:
    """The rules of a profile named on the command line (or the rules themselves); ValueError
    with the choices for an unknown name."""
    if not isinstance(profile, str):
        return profile
    try:
        return RULES[profile]
    except KeyError:
        raise ValueError(f"unknown scoring profile {profile!r}; choose one of {', '.join(RULES)}") from None
