"""Paired significance of the difference between two models' Overall Averages.

The test is a paired bootstrap over items. For each model an item's score is its per-item
score (``score`` in samples.jsonl: ``Sample.score``) averaged over runs. On the items both
models scored, the difference of the Overall Averages is estimated as the mean over tasks of
the per-task mean differences (every task weighs the same, as in the Overall Average). Items
are resampled with replacement within each task, ``resamples`` times, from a seeded
generator; the two-sided p-value is the share of resampled differences at least as far from
the observed one as the observed one is from 0 (the bootstrap distribution shifted to the
null), with the usual +1.

Caveat, stated in the reports: classification task scores mix accuracy with weighted F1, which
is not a mean over items; the test uses the items' own scores (correct or not), so its
difference can be a little off the difference of the published task scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from taxpraben.results import Sample


DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20260401
ALPHA = 0.05


@dataclass(frozen=True)
class PairedTest:
    """Model A minus model B on their shared items (fractions, not points)."""

    difference: float
    ci95: tuple[float, float]
    p_value: float
    tasks: tuple[str, ...]
    items: int
    resamples: int
    seed: int

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


def item_scores(samples: Iterable[Sample]) -> dict[str, dict[str, float]]:
    """Per task, each item's score averaged over its runs (runs without a score are skipped)."""
    sums: dict[tuple[str, str], list[float]] = {}
    for item in samples:
        score = item.score
        if isinstance(score, (int, float)):
            sums.setdefault((item.task, item.id), []).append(float(score))
    out: dict[str, dict[str, float]] = {}
    for (task, item_id), values in sums.items():
        out.setdefault(task, {})[item_id] = sum(values) / len(values)
    return out


def paired_bootstrap(
    a: dict[str, dict[str, float]],
    b: dict[str, dict[str, float]],
    tasks: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedTest | None:
    """Test A against B over the items of ``tasks`` both scored; None when they share none."""
    import numpy as np  # here, not at the top: `taxpraben run` need not load it to start

    diffs: list[np.ndarray] = []
    used: list[str] = []
    for task in tasks:
        shared = sorted(set(a.get(task, {})) & set(b.get(task, {})))
        if not shared:
            continue
        diffs.append(np.array([a[task][i] - b[task][i] for i in shared], dtype=float))
        used.append(task)
    if not diffs:
        return None
    observed = float(np.mean([d.mean() for d in diffs]))
    rng = np.random.default_rng(seed)
    boot = np.zeros(resamples)
    chunk = 2000
    for d in diffs:
        n = len(d)
        for start in range(0, resamples, chunk):
            stop = min(resamples, start + chunk)
            idx = rng.integers(0, n, size=(stop - start, n))
            boot[start:stop] += d[idx].mean(axis=1)
    boot /= len(diffs)
    extreme = int(np.sum(np.abs(boot - observed) >= abs(observed) - 1e-12))
    p_value = min(1.0, (extreme + 1) / (resamples + 1))
    low, high = np.percentile(boot, [2.5, 97.5])
    return PairedTest(
        difference=observed,
        ci95=(float(low), float(high)),
        p_value=p_value,
        tasks=tuple(used),
        items=int(sum(len(d) for d in diffs)),
        resamples=resamples,
        seed=seed,
    )
