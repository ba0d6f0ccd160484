"""Figures over runs: per run first, across runs second (README, "How answers are scored").

Each figure of results.json is a ``STAT``: the per-run values, their mean, the sample
standard deviation (ddof=1), a 95% t-interval over runs, and, where the caller has one, a
sample-level bootstrap interval (resampling items, not runs; reports label it as such).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from taxpraben.results import Groups, OverallStat, Stat

#: The range a figure can take: ``(low, high)``; its metric declares it
#: (:attr:`taxpraben.kinds.base.Metric.bounds`).
Bounds = tuple[float, float]
#: A fraction in [0, 1]: scores, most metrics, rates.
FRACTION: Bounds = (0.0, 1.0)
#: A mean log-likelihood, at most 0 (raw BARTScore).
LOG_LIKELIHOOD: Bounds = (-math.inf, 0.0)
#: No bound known.
UNBOUNDED: Bounds = (-math.inf, math.inf)


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


def clip_interval(low: float, high: float, bounds: tuple[float, float]) -> list[float]:
    """``[low, high]`` clipped to ``bounds``: a t-interval of a few runs near 0 or 1 (or a
    run-to-run spread larger than the mean) would otherwise claim impossible values."""
    return [min(max(low, bounds[0]), bounds[1]), min(max(high, bounds[0]), bounds[1])]


#: ``scipy.special.stdtrit(df, 0.975)`` for df = 1..64, the floats scipy computes (the t quantile
#: of ``scipy.stats.t.ppf``; tests/test_aggregate.py checks every entry against it). Importing
#: scipy.special took 180 ms at the end of every run of several runs, for this one number.
_T975 = (
    12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934,
    2.5705818356363146, 2.4469118511449786, 2.364624251592784, 2.306004135204166,
    2.262157162798205, 2.228138851986274, 2.200985160091639, 2.1788128296672284,
    2.1603686564627913, 2.144786687917804, 2.131449545559776, 2.1199052992212546,
    2.1098155778333156, 2.1009220402410382, 2.0930240544083087, 2.085963447265864,
    2.0796138447276795, 2.0738730679040254, 2.0686576104190486, 2.0638985616280245,
    2.0595385527532972, 2.0555294386428735, 2.0518305164802846, 2.0484071417952454,
    2.045229642132703, 2.0422724563012378, 2.039513446396408, 2.0369333434601016,
    2.0345152974493383, 2.0322445093177186, 2.030107928250343, 2.0280940009804502,
    2.0261924630291093, 2.0243941639119694, 2.022690920036761, 2.021075390306273,
    2.019540970441376, 2.0180817028184443, 2.016692199227824, 2.0153675744437636,
    2.014103388880846, 2.012895598919429, 2.0117405137297655, 2.010634757624232,
    2.0095752371292392, 2.008559112100761, 2.007583770315836, 2.006646805061688,
    2.0057459953178687, 2.0048792881880564, 2.0040447832891455, 2.003240718847872,
    2.002465459291007, 2.0017174841452356, 2.000995378088267, 2.0002978220142604,
    1.999623584994939, 1.9989715170333788, 1.998340542520741, 1.997729654317693,
)


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom, as scipy computes it
    (from the table up to 64, from scipy.special beyond)."""
    if 1 <= df <= len(_T975):
        return _T975[df - 1]
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.975))


def run_stat(
    values: Sequence[float | None], bootstrap_ci95: Sequence[float] | None = None, bounds: Bounds = FRACTION
) -> Stat:
    """Mean, sample std and 95% t-interval of one figure over runs.

    ``None`` values (a run where the figure could not be computed) are kept in ``runs`` but
    left out of the summary; when nothing is left the summary is null. The t-interval is
    clipped to ``bounds``, the range the figure's metric declares (a fraction by default).
    """
    kept = _clean(values)
    n = len(kept)
    mean = float(np.mean(kept)) if n else None
    std = float(np.std(kept, ddof=1)) if n > 1 else None
    ci95: list[float] | None = None
    if n > 1 and mean is not None and std is not None:
        half = t975(n - 1) * std / math.sqrt(n)
        ci95 = clip_interval(mean - half, mean + half, bounds)
    return Stat(
        mean=mean,
        std=std,
        ci95=ci95,
        runs=[None if v is None else float(v) for v in values],
        bootstrap_ci95=[float(x) for x in bootstrap_ci95] if bootstrap_ci95 is not None else None,
    )


def percentile_interval(samples: np.ndarray) -> list[float] | None:
    """The 2.5th and 97.5th percentiles of bootstrap replicates (None when there are none)."""
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return None
    lo, hi = np.percentile(samples, [2.5, 97.5])
    return [float(lo), float(hi)]


def mean_of_stats(
    members: Mapping[str, Stat], replicates: Mapping[str, np.ndarray] | None = None
) -> Stat:
    """A group figure: per run, the unweighted mean of the members' values; then over runs.

    Runs where any member is missing are None (a partial mean would mix different sets of
    tasks). ``replicates`` holds each member's bootstrap replicates for the group interval.
    """
    if not members:
        return run_stat([])
    n_runs = max(len(s.runs) for s in members.values())
    per_run: list[float | None] = []
    for r in range(n_runs):
        vals = [s.runs[r] if r < len(s.runs) else None for s in members.values()]
        kept = [v for v in vals if v is not None]
        per_run.append(None if len(kept) < len(vals) else float(np.mean(kept)))
    boot = None
    if replicates and all(name in replicates for name in members):
        stacked = np.vstack([replicates[name] for name in members])
        boot = percentile_interval(stacked.mean(axis=0))
    return run_stat(per_run, boot)


@dataclass(frozen=True)
class TaskFigure:
    """A computed task as the groups see it: its name, type, Bloom level and score."""

    name: str
    type: str
    bloom: str
    score: Stat


def group_figures(
    computed: Sequence[TaskFigure], kind_order: Iterable[str], bloom_order: Iterable[str],
    replicates: Mapping[str, np.ndarray],
) -> Groups:  # fmt: skip
    """results.json's ``groups``: per task type and per Bloom level (in the given orders), the
    mean of its computed tasks' scores (:func:`mean_of_stats`); groups without one are left out."""

    def by(attribute: str, order: Iterable[str]) -> dict[str, Stat]:
        out: dict[str, Stat] = {}
        for name in order:
            members = {t.name: t.score for t in computed if getattr(t, attribute) == name}
            if members:
                out[name] = mean_of_stats(members, replicates)
        return out

    return Groups.model_validate({"type": by("type", kind_order), "bloom": by("bloom", bloom_order)})


def overall_figure(
    computed: Sequence[TaskFigure], benchmark: list[str], missing: dict[str, str],
    replicates: Mapping[str, np.ndarray],
) -> OverallStat:  # fmt: skip
    """The Overall Average: the mean of the computed tasks' scores, over which tasks, and
    which tasks of the ``benchmark`` it lacks (``missing``: each with why)."""
    mean = mean_of_stats({t.name: t.score for t in computed}, replicates)
    return OverallStat.model_validate({
        **mean.to_json(), "partial": bool(missing), "tasks": [t.name for t in computed],
        "benchmark": benchmark, "missing": missing,
    })  # fmt: skip
