"""The scoring profiles as strategy objects: by which rules an answer is read.

A job chooses its profile once (``--profile``; :func:`scoring_rules`) and hands the object
to every item; no module tests the profile's name. Each kind implements both readings:
:meth:`~taxpraben.kinds.base.Kind.prepare` (this project's rules: the model's own answer,
read as a careful grader reads it) and :meth:`~taxpraben.kinds.base.Kind.prepare_taxben`
(TaxBen's exact rules, flaws included, to compare like for like; a kind TaxBen never had
reads as in the first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from taxpraben.metrics.defaults import PROFILES

if TYPE_CHECKING:
    from taxpraben.kinds.base import Item, TaskKind
    from taxpraben.records import Record
    from taxpraben.task_spec import TaskSpec


class ScoringRules(Protocol):
    """How one profile reads a prediction: through the kind's reader of that profile."""

    @property
    def name(self) -> str: ...

    def prepare(self, kind: TaskKind, spec: TaskSpec, record: Record, item: Item, text: str,
                failed: bool) -> None: ...


@dataclass(frozen=True)
class TaxPraBenRules:
    """This project's rules (the default): only the model's own answer to this question counts."""

    name: str = "taxpraben"

    def prepare(self, kind: TaskKind, spec: TaskSpec, record: Record, item: Item, text: str,
                failed: bool) -> None:
        kind.prepare(spec, record, item, text, failed)


@dataclass(frozen=True)
class TaxBenRules:
    """TaxBen's exact rules (``parsing.taxben``) on the raw generation."""

    name: str = "taxben"

    def prepare(self, kind: TaskKind, spec: TaskSpec, record: Record, item: Item, text: str,
                failed: bool) -> None:
        kind.prepare_taxben(spec, record, item, text, failed)


#: The rules of each profile, by name (the names of ``metrics.defaults.PROFILES``).
RULES: dict[str, ScoringRules] = {rules.name: rules for rules in (TaxPraBenRules(), TaxBenRules())}
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
