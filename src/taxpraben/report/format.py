"""The one place that turns figures into text for people (Markdown, HTML and the terminal).

Scores and metrics in ``results.json`` are fractions in [0, 1]; reports show them as points
out of 100 with two decimals (``81.23 ± 1.02``), as the paper's tables do. Raw BARTScore is a
mean log-likelihood and is shown as it is; rates (format failures, errors) carry a ``%`` sign.
A figure that could not be computed (``null``) reads ``n/c``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NOT_COMPUTED = "n/c"

#: Metric keys shown in the paper table, in column order, with their headings.
METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("acc", "ACC"),
    ("f1", "F1"),
    ("macro_f1", "Macro-F1"),
    ("em", "EM"),
    ("bertscore", "BERTScore"),
    ("bartscore", "BARTScore"),
    ("bartscore_raw", "BARTScore (raw)"),
)
METRIC_LABELS: dict[str, str] = {
    **dict(METRIC_COLUMNS),
    "missing_rate": "Missing",
    "format_failure_rate": "Format failures",
    "error_rate": "Errors",
    "score": "Score",
}
#: Metrics that are not fractions: shown unscaled with three decimals.
RAW_METRICS = frozenset({"bartscore_raw"})
#: Metrics that are rates of something going wrong: shown as percentages.
RATE_METRICS = frozenset({"missing_rate", "format_failure_rate", "error_rate"})

BLOOM_LABELS = {
    "remember": "Remember",
    "understand": "Understand",
    "apply": "Apply",
    "analyze": "Analyze",
    "evaluate": "Evaluate",
    "create": "Create",
}
TYPE_LABELS = {
    "classification": "Classification",
    "generation": "Generation",
    "structured": "Structured",
    "mixed": "Mixed",
}


def number(value: float | None, metric: str = "score") -> str:
    """One value of ``metric`` for people: ``81.23``, ``-3.214`` (raw BARTScore) or ``8.3%``."""
    if value is None:
        return NOT_COMPUTED
    if metric in RAW_METRICS:
        return f"{value:.3f}"
    if metric in RATE_METRICS:
        return f"{value * 100:.1f}%"
    return f"{value * 100:.2f}"


def spread(value: float | None, metric: str = "score") -> str:
    """A standard deviation in the units of ``metric`` (no sign, no ``%``)."""
    if value is None:
        return ""
    if metric in RAW_METRICS:
        return f"{value:.3f}"
    if metric in RATE_METRICS:
        return f"{value * 100:.1f}"
    return f"{value * 100:.2f}"


def stat(figure: Mapping[str, Any] | None, metric: str = "score") -> str:
    """``mean ± std`` over runs; the mean alone with one run; ``n/c`` when not computed."""
    if not figure or figure.get("mean") is None:
        return NOT_COMPUTED
    text = number(figure["mean"], metric)
    std = figure.get("std")
    if std is not None:
        text = f"{text} ± {spread(std, metric)}"
    return text


def interval(
    bounds: list[float | None] | tuple[float | None, ...] | None, metric: str = "score"
) -> str:
    """``[low, high]`` in the units of ``metric``, or ``n/a`` when absent (one run, say)."""
    if not bounds or bounds[0] is None or bounds[1] is None:
        return "n/a"
    return f"[{number(bounds[0], metric)}, {number(bounds[1], metric)}]"


def p_value(p: float | None) -> str:
    """A p-value: three decimals, ``< 0.001`` below that."""
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def signed_points(value: float | None) -> str:
    """A difference of scores in points, with its sign: ``+2.31``."""
    if value is None:
        return "n/a"
    return f"{value * 100:+.2f}"


def metric_label(key: str) -> str:
    return METRIC_LABELS.get(key, key)


def bloom_label(level: str) -> str:
    return BLOOM_LABELS.get(level, level.capitalize())


def type_label(kind: str) -> str:
    return TYPE_LABELS.get(kind, kind.capitalize())
