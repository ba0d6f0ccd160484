"""The one place that turns figures into text for people (Markdown, HTML and the terminal).

Scores and metrics in ``results.json`` are fractions in [0, 1]; reports show them as points
out of 100 with two decimals (``81.23 ± 1.02``), as the paper's tables do. Raw BARTScore is a
mean log-likelihood and is shown as it is; rates (format failures, errors) carry a ``%`` sign.
A figure that could not be computed (``null``) reads ``n/c``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from taxpraben.kinds import all_metrics, kind_label, paper_columns

if TYPE_CHECKING:  # annotations only: the command line imports this module when it starts
    from collections.abc import Sequence

    from taxpraben.results import Stat

NOT_COMPUTED = "n/c"

#: Labels of the figures every task has, whatever its kind.
_COMMON_LABELS = {"format_failure_rate": "Format failures", "error_rate": "Errors", "score": "Score"}
_COMMON_RATES = frozenset({"format_failure_rate", "error_rate"})


# Metric headings and display come from the kinds' declarations (taxpraben.kinds), read at
# each call so that a metric a plugin registers is shown like the built-in ones.


def metric_columns() -> list[tuple[str, str]]:
    """Metric keys shown in the paper table, in column order, with their headings."""
    return [(m.key, m.label) for m in paper_columns()]


def _display(metric: str) -> str:
    if metric in _COMMON_RATES:
        return "rate"
    declared = all_metrics().get(metric)
    return declared.display if declared is not None else "fraction"


BLOOM_LABELS = {
    "remember": "Remember",
    "understand": "Understand",
    "apply": "Apply",
    "analyze": "Analyze",
    "evaluate": "Evaluate",
    "create": "Create",
}

def number(value: float | None, metric: str = "score") -> str:
    """One value of ``metric`` for people: ``81.23``, ``-3.214`` (raw BARTScore) or ``8.3%``."""
    if value is None:
        return NOT_COMPUTED
    display = _display(metric)
    if display == "raw":
        return f"{value:.3f}"
    if display == "rate":
        return f"{value * 100:.1f}%"
    return f"{value * 100:.2f}"


def spread(value: float | None, metric: str = "score") -> str:
    """A standard deviation in the units of ``metric`` (no sign, no ``%``)."""
    if value is None:
        return ""
    display = _display(metric)
    if display == "raw":
        return f"{value:.3f}"
    if display == "rate":
        return f"{value * 100:.1f}"
    return f"{value * 100:.2f}"


def mean(figure: Stat | None, metric: str = "score") -> str:
    """The mean over runs alone, as :func:`number` writes it; ``n/c`` when not computed."""
    return number(figure.mean if figure is not None else None, metric)


def stat(figure: Stat | None, metric: str = "score") -> str:
    """``mean ± std`` over runs; the mean alone with one run; ``n/c`` when not computed."""
    if figure is None or figure.mean is None:
        return NOT_COMPUTED
    text = number(figure.mean, metric)
    if figure.std is not None:
        text = f"{text} ± {spread(figure.std, metric)}"
    return text


def interval(
    bounds: Sequence[float | None] | None, metric: str = "score"
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
    declared = all_metrics().get(key)
    return declared.label if declared is not None else _COMMON_LABELS.get(key, key)


def bloom_label(level: str) -> str:
    return BLOOM_LABELS.get(level, level.capitalize())


def type_label(kind: str) -> str:
    return kind_label(kind)
