"""Figures over runs: per run first, across runs second (README, "How answers are scored").

Each figure of results.json is a ``STAT``: the per-run values, their mean, the sample
standard deviation (ddof=1), a 95% t-interval over runs, and, where the caller has one, a
sample-level bootstrap interval (resampling items, not runs; reports label it as such).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: One figure over runs as results.json holds it: ``mean``, ``std``, ``ci95``, ``runs``,
#: ``bootstrap_ci95`` (described, and read, by :class:`taxpraben.results.Stat`).
StatJSON = dict[str, Any]


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


def possible_range(values: Sequence[float]) -> tuple[float, float]:
    """The range a figure can take, told by its values.

    Every figure of results.json is either a fraction in [0, 1] (scores, metrics, rates)
    or a mean log-likelihood, which is at most 0 (raw BARTScore, negative in practice): a
    figure whose values all lie in [0, 1] is a fraction, one with a negative value a
    log-likelihood.
    """
    if all(0.0 <= v <= 1.0 for v in values):
        return (0.0, 1.0)
    if all(v <= 0.0 for v in values):
        return (-math.inf, 0.0)
    return (-math.inf, math.inf)


def clip_interval(low: float, high: float, bounds: tuple[float, float]) -> list[float]:
    """``[low, high]`` clipped to ``bounds``: a t-interval of a few runs near 0 or 1 (or a
    run-to-run spread larger than the mean) would otherwise claim impossible values."""
    return [min(max(low, bounds[0]), bounds[1]), min(max(high, bounds[0]), bounds[1])]


def run_stat(values: Sequence[float | None], bootstrap_ci95: Sequence[float] | None = None) -> StatJSON:
    """Mean, sample std and 95% t-interval of one figure over runs.

    ``None`` values (a run where the figure could not be computed) are kept in ``runs`` but
    left out of the summary; when nothing is left the summary is null. The t-interval is
    clipped to the figure's :func:`possible_range`.
    """
    kept = _clean(values)
    n = len(kept)
    mean = float(np.mean(kept)) if n else None
    std = float(np.std(kept, ddof=1)) if n > 1 else None
    ci95: list[float] | None = None
    if n > 1 and mean is not None and std is not None:
        # The t quantile as scipy.stats.t.ppf computes it (it calls stdtrit), from the much
        # lighter scipy.special, loaded only when there is an interval to compute.
        from scipy.special import stdtrit

        half = float(stdtrit(n - 1, 0.975)) * std / math.sqrt(n)
        ci95 = clip_interval(mean - half, mean + half, possible_range(kept))
    return {
        "mean": mean,
        "std": std,
        "ci95": ci95,
        "runs": [None if v is None else float(v) for v in values],
        "bootstrap_ci95": [float(x) for x in bootstrap_ci95] if bootstrap_ci95 is not None else None,
    }


def percentile_interval(samples: np.ndarray) -> list[float] | None:
    """The 2.5th and 97.5th percentiles of bootstrap replicates (None when there are none)."""
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return None
    lo, hi = np.percentile(samples, [2.5, 97.5])
    return [float(lo), float(hi)]


def mean_of_stats(
    members: Mapping[str, StatJSON], replicates: Mapping[str, np.ndarray] | None = None
) -> StatJSON:
    """A group figure: per run, the unweighted mean of the members' values; then over runs.

    Runs where any member is missing are None (a partial mean would mix different sets of
    tasks). ``replicates`` holds each member's bootstrap replicates for the group interval.
    """
    if not members:
        return run_stat([])
    n_runs = max(len(s["runs"]) for s in members.values())
    per_run: list[float | None] = []
    for r in range(n_runs):
        vals = [s["runs"][r] if r < len(s["runs"]) else None for s in members.values()]
        per_run.append(None if any(v is None for v in vals) else float(np.mean(vals)))  # type: ignore[arg-type]
    boot = None
    if replicates and all(name in replicates for name in members):
        stacked = np.vstack([replicates[name] for name in members])
        boot = percentile_interval(stacked.mean(axis=0))
    return run_stat(per_run, boot)
