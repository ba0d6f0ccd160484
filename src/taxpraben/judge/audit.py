"""The audit: a seeded draw of outputs the rules did read, read by the judge as well, and
how often the two readers agree, with a 95% Wilson interval.

The Wilson score interval (Wilson, 1927) rather than the normal one: audits are small
(tens of items) and agreement is near 1, where the normal interval leaves [0, 1] and has
zero width at 100% agreement. Pure functions; the draw depends only on the seed, the task
and the candidates' order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject

T = TypeVar("T")

#: z of a two-sided 95% interval.
Z95 = 1.959963984540054
#: Below this lower bound of the agreement the reports show a banner.
TRUST_BOUND = 0.95


def wilson_interval(agreed: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``agreed`` successes in ``n`` trials; (0, 1) for n = 0."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= agreed <= n:
        raise ValueError(f"agreed must lie in [0, {n}], got {agreed}")
    p = agreed / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0 or n agreements a bound is exactly 0 or 1; the subtraction leaves rounding
    # noise there (1.4e-17 for 0 of 25), which would print as a positive lower bound.
    low = 0.0 if agreed == 0 else max(0.0, centre - half)
    high = 1.0 if agreed == n else min(1.0, centre + half)
    return low, high


def draw(candidates: Sequence[T], n: int, seed: int, task: str) -> list[T]:
    """``n`` of ``candidates`` (all when fewer), drawn without replacement by a generator
    seeded with (``seed``, ``task``): the same for every rerun, different per task; in the
    candidates' order."""
    if n <= 0 or not candidates:
        return []
    if n >= len(candidates):
        return list(candidates)
    rng = random.Random(f"taxpraben-judge-audit:{seed}:{task}")
    picked = sorted(rng.sample(range(len(candidates)), n))
    return [candidates[k] for k in picked]


@dataclass(frozen=True)
class Agreement:
    """Audited outputs, those on which the rules and the judge agree, and the interval."""

    audited: int
    agreed: int

    @property
    def rate(self) -> float | None:
        return self.agreed / self.audited if self.audited else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        return wilson_interval(self.agreed, self.audited) if self.audited else None

    @property
    def trusted(self) -> bool:
        """False when the interval's lower bound falls below :data:`TRUST_BOUND`."""
        ci = self.ci95
        return ci is None or ci[0] >= TRUST_BOUND

    def to_json(self) -> JSONObject:
        ci = self.ci95
        return {"audited": self.audited, "agreed": self.agreed, "agreement": self.rate,
                "ci95": list(ci) if ci is not None else None}  # fmt: skip


def banner(agreement: Agreement) -> str | None:
    """The reports' warning when the audit's lower bound falls below 95%, else None."""
    if agreement.trusted or agreement.rate is None:
        return None
    disagree = 100 * (1 - agreement.rate)
    return (f"rules and judge disagree on {disagree:.1f}% of audited items ({agreement.audited - agreement.agreed} "
            f"of {agreement.audited}): read the disagreements before trusting this figure")  # fmt: skip
