"""The figures of a stratified draw: a share (or a mean) over the whole run from readings
drawn stratum by stratum, with its variance and a 95% interval. Pure arithmetic.

The run's readings fall into strata (task, how read); stratum ``h`` holds ``N_h`` readings
(counting runs) in ``U_h`` distinct outputs, of which ``n_h`` were reviewed (a simple random
draw of distinct outputs). A reviewed output ``i`` stands for ``c_i`` readings (its runs) and
has a value ``y_i`` (1 agree / 0 not; a point difference). Only strata with a reviewed
reading are *covered*; the estimate is over them, weighted by their share of the covered
readings (``W_h = N_h / sum N``), and ``covered`` says what share of the run that is.

- stratum mean: ``m_h = sum c y / sum c`` (a ratio estimate: an output weighs as its runs);
- its variance: ``(1 - n_h / U_h) * sum (c (y - m_h))^2 / ((n_h - 1) n_h cbar^2)`` (0 when
  ``n_h = 1``: a lone reading says nothing of its spread);
- the estimate ``sum W_h m_h`` and its variance ``sum W_h^2 var_h``;
- the effective sample size: Kish's ``1 / sum a_i^2`` of the reviewed readings' design weights
  ``a_i = W_h c_i / sum_h c`` (the number of equally weighted readings that would say as
  much), and where the variance is positive, at most ``p (1 - p) / variance``;
- the 95% interval: Wilson's at the estimate with the effective size (:func:`wilson`), which
  for a simple random draw is the textbook Wilson interval (Korn and Graubard, 1998).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

Z95 = 1.959963984540054
#: A stratum's name.
H = TypeVar("H", bound=Hashable)


@dataclass(frozen=True)
class Unit:
    """One reviewed reading: its stratum, the readings it stands for, its value."""

    stratum: object
    weight: float
    value: float


@dataclass(frozen=True)
class Size:
    """A stratum of the run: its readings (runs counted) and its distinct outputs."""

    readings: float
    outputs: int


@dataclass(frozen=True)
class Estimate:
    """A stratified estimate (see the module docstring)."""

    mean: float
    variance: float
    n: int
    n_eff: float
    covered: float

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson(self.mean, self.n_eff)


def wilson(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval at share ``p`` with (effective) size ``n``; (0, 1) for n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, p))
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return low, high


def stratified(units: Iterable[Unit], sizes: Mapping[H, Size]) -> Estimate | None:
    """The stratified estimate of ``units`` in a run of strata ``sizes``; None when no unit
    was reviewed. A unit's stratum must be one of ``sizes`` (KeyError otherwise)."""
    members: dict[object, list[Unit]] = {}
    for unit in units:
        members.setdefault(unit.stratum, []).append(unit)
    sized: dict[object, Size] = dict(sizes.items())
    if not members:
        return None
    total = sum(size.readings for size in sizes.values())
    covered = sum(sized[h].readings for h in members)
    mean = variance = squares = 0.0
    for h, group in members.items():
        share = sized[h].readings / covered
        weights = sum(u.weight for u in group)
        m_h = sum(u.weight * u.value for u in group) / weights
        mean += share * m_h
        variance += share * share * _stratum_variance(group, m_h, sized[h].outputs)
        squares += sum((share * u.weight / weights) ** 2 for u in group)
    n = sum(len(group) for group in members.values())
    n_eff = 1.0 / squares
    if variance > 0:
        n_eff = min(n_eff, mean * (1 - mean) / variance)
    return Estimate(mean, variance, n, n_eff, covered / total if total else 0.0)


def _stratum_variance(group: list[Unit], m_h: float, outputs: int) -> float:
    n_h = len(group)
    if n_h < 2:
        return 0.0
    c_bar = sum(u.weight for u in group) / n_h
    spread = sum((u.weight * (u.value - m_h)) ** 2 for u in group) / (n_h - 1)
    return max(0.0, 1 - n_h / max(outputs, n_h)) * spread / (n_h * c_bar * c_bar)


def combined(parts: Iterable[tuple[float, float, float]], count: int) -> tuple[float, float, float]:
    """The mean of ``count`` independent [estimate, low, high] triples, its bounds the
    per-part distances to them added in quadrature: ``mean -+ sqrt(sum d^2) / count``."""
    parts = list(parts)
    mean = sum(p[0] for p in parts) / count
    below = math.sqrt(sum((p[0] - p[1]) ** 2 for p in parts)) / count
    above = math.sqrt(sum((p[2] - p[0]) ** 2 for p in parts)) / count
    return mean, max(0.0, mean - below), min(1.0, mean + above)
