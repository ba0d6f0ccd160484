"""Figures over runs: mean, sample std, t-interval, groups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from taxpraben.aggregate import (
    LOG_LIKELIHOOD,
    UNBOUNDED,
    TaskFigure,
    group_figures,
    mean_of_stats,
    overall_figure,
    percentile_interval,
    run_stat,
)


def test_run_stat_mean_std_and_t_interval() -> None:
    values = [0.8, 0.82, 0.79, 0.81, 0.83]
    s = run_stat(values)
    assert s.mean == pytest.approx(np.mean(values))
    assert s.std == pytest.approx(np.std(values, ddof=1))
    half = stats.t.ppf(0.975, 4) * np.std(values, ddof=1) / math.sqrt(5)
    assert s.ci95 == pytest.approx([np.mean(values) - half, np.mean(values) + half])
    assert s.runs == values
    assert s.bootstrap_ci95 is None


def test_one_run_has_no_spread() -> None:
    s = run_stat([0.5])
    assert s.mean == 0.5 and s.std is None and s.ci95 is None


def test_none_runs_are_kept_but_not_averaged() -> None:
    s = run_stat([0.5, None, 0.7])
    assert s.runs == [0.5, None, 0.7]
    assert s.mean == pytest.approx(0.6)
    assert run_stat([None, None]).mean is None


def test_group_is_the_per_run_mean_of_members() -> None:
    a = run_stat([0.2, 0.4])
    b = run_stat([0.6, 0.8])
    g = mean_of_stats({"a": a, "b": b})
    assert g.runs == pytest.approx([0.4, 0.6])
    assert g.mean == pytest.approx(0.5)
    reps = {"a": np.array([0.1, 0.2, 0.3]), "b": np.array([0.3, 0.4, 0.5])}
    g2 = mean_of_stats({"a": a, "b": b}, reps)
    assert g2.bootstrap_ci95 == pytest.approx(list(np.percentile([0.2, 0.3, 0.4], [2.5, 97.5])))


def test_percentile_interval_ignores_nan() -> None:
    assert percentile_interval(np.array([np.nan])) is None
    assert percentile_interval(np.array([1.0, 1.0])) == [1.0, 1.0]


def test_t_interval_is_clipped_to_the_possible_range() -> None:
    # Two runs near 0: the raw t-interval reaches far below 0, which no score can be.
    values = [0.0, 0.1]
    half = stats.t.ppf(0.975, 1) * np.std(values, ddof=1) / math.sqrt(2)
    assert 0.05 - half < 0  # the low end leaves [0, 1] unclipped
    assert run_stat(values).ci95 == pytest.approx([0.0, 0.05 + half])
    near_one = [0.98, 1.0, 0.99]
    half = stats.t.ppf(0.975, 2) * np.std(near_one, ddof=1) / math.sqrt(3)
    assert run_stat(near_one).ci95 == pytest.approx([np.mean(near_one) - half, 1.0])
    # Raw BARTScore is a log-likelihood: at most 0, not bounded below.
    raw = [-0.05, -0.9]
    half = stats.t.ppf(0.975, 1) * np.std(raw, ddof=1) / math.sqrt(2)
    assert run_stat(raw, bounds=LOG_LIKELIHOOD).ci95 == pytest.approx([np.mean(raw) - half, 0.0])


def test_the_range_is_the_metrics_declared_one_not_guessed_from_values() -> None:
    """Raw BARTScore declares a log-likelihood's range: its interval is clipped at 0 above and
    not at 0 below, whatever its values; a fraction's at [0, 1]."""
    from taxpraben.kinds import get_kind

    raw_metric = next(m for m in get_kind("generation").metrics if m.key == "bartscore_raw")
    assert raw_metric.bounds == LOG_LIKELIHOOD
    assert next(m for m in get_kind("generation").metrics if m.key == "bertscore").bounds == (0.0, 1.0)
    values = [-0.3, 0.1]  # one value above 0: guessed from the values, the range was unbounded
    half = stats.t.ppf(0.975, 1) * np.std(values, ddof=1) / math.sqrt(2)
    assert run_stat(values, bounds=raw_metric.bounds).ci95 == pytest.approx([-0.1 - half, 0.0])
    assert run_stat(values, bounds=UNBOUNDED).ci95 == pytest.approx([-0.1 - half, -0.1 + half])


def test_groups_and_the_overall_average_are_made_here() -> None:
    a, b, c = run_stat([0.2, 0.4]), run_stat([0.6, 0.8]), run_stat([1.0, 1.0])
    computed = [TaskFigure("A", "classification", "remember", a), TaskFigure("B", "structured", "apply", b),
                TaskFigure("C", "classification", "apply", c)]  # fmt: skip
    groups = group_figures(computed, ["structured", "classification", "mixed"], ["remember", "apply"], {})
    assert list(groups.type) == ["structured", "classification"]  # in the kinds' order; mixed has no task
    assert groups.type["classification"].runs == pytest.approx([0.6, 0.7])
    assert groups.bloom["apply"].runs == pytest.approx([0.8, 0.9])
    assert groups.bloom["remember"].runs == pytest.approx([0.2, 0.4])
    overall = overall_figure(computed, ["A", "B", "C", "D"], {"D": "no data file"}, {})
    assert overall.runs == pytest.approx([0.6, 2.2 / 3])
    assert overall.partial is True and overall.tasks == ["A", "B", "C"] and overall.missing == {"D": "no data file"}
    assert list(overall.to_json())[:5] == ["mean", "std", "ci95", "runs", "bootstrap_ci95"]


def test_the_t_quantiles_are_scipys() -> None:
    from scipy.special import stdtrit

    from taxpraben.aggregate import t975

    for df in range(1, 100):  # the table's 64, then scipy itself
        assert t975(df) == pytest.approx(float(stdtrit(df, 0.975)), rel=1e-14, abs=0), df
    assert t975(4) == pytest.approx(stats.t.ppf(0.975, 4), rel=1e-14)


def test_a_run_stat_of_a_few_runs_needs_no_scipy() -> None:
    """The t-interval of 5 runs comes from the table: scipy.special (180 ms to import) is not
    loaded at the end of a run (issue 24)."""
    from helpers.probes import probe

    loaded = probe("import json, sys\n"
                   "from taxpraben.aggregate import run_stat\n"
                   "s = run_stat([0.8, 0.82, 0.79, 0.81, 0.83])\n"
                   "print(json.dumps([s.ci95, sorted(m for m in sys.modules if m.startswith('scipy'))]))\n")  # fmt: skip
    ci95, scipy_modules = loaded
    values = [0.8, 0.82, 0.79, 0.81, 0.83]
    half = stats.t.ppf(0.975, 4) * np.std(values, ddof=1) / math.sqrt(5)
    assert ci95 == pytest.approx([np.mean(values) - half, np.mean(values) + half])
    assert scipy_modules == []
