"""The kinds known to this process, by name, and the metrics added to them.

The four built-in kinds are registered when :mod:`taxpraben.kinds` is imported, in the
order results.json groups them (classification, generation, structured, mixed); a plugin
registers its own with :func:`register_kind` before loading task specs that use it, and
adds a metric to any kind with :func:`register_metric`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from taxpraben.kinds.base import Kind, Metric, TaskKind

if TYPE_CHECKING:
    from taxpraben.tasks.spec import TaskSpec

_KINDS: dict[str, TaskKind] = {}


class UnknownKindError(ValueError):
    """A spec names a kind no one registered."""


def register_kind(kind: TaskKind, *, replace: bool = False) -> TaskKind:
    """Make ``kind`` available to task specs as ``type: <kind.name>``."""
    if not isinstance(kind, TaskKind):
        raise TypeError(f"{kind!r} does not implement the TaskKind protocol (see taxpraben.kinds.base)")
    if kind.name in _KINDS and not replace:
        raise ValueError(f"a kind named {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    _KINDS.pop(name, None)


def register_metric(kind_name: str, metric: Metric) -> Metric:
    """Declare one more metric of a kind; specs of that kind may then select it.

    The metric needs an ``item`` function (the kind computes only its own metrics); its
    task figure is its mean over the items that have it.
    """
    kind = get_kind(kind_name)
    if metric.item is None:
        raise ValueError(f"metric {metric.key!r} needs an item function to be computed")
    if not isinstance(kind, Kind):
        raise TypeError(f"kind {kind_name!r} does not take added metrics (it is not a taxpraben.kinds.Kind)")
    if kind.metric(metric.key) is not None:
        raise ValueError(f"kind {kind_name!r} already has a metric {metric.key!r}")
    kind.declared = (*kind.declared, metric)
    return metric


def unregister_metric(kind_name: str, key: str) -> None:
    kind = _KINDS.get(kind_name)
    if isinstance(kind, Kind):
        kind.declared = tuple(m for m in kind.declared if m.key != key)


def get_kind(name: str) -> TaskKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise UnknownKindError(
            f"key type: unknown task type {name!r}; known: {', '.join(_KINDS) or 'none'} "
            "(a plugin kind must be registered with taxpraben.kinds.register_kind first)"
        ) from None


def kind_of(spec: TaskSpec) -> TaskKind:
    """The kind of a task spec (its ``type:``)."""
    return get_kind(spec.type)


def kinds() -> Iterator[TaskKind]:
    """The registered kinds, in registration order."""
    return iter(list(_KINDS.values()))


def kind_label(name: str) -> str:
    """How people read a kind's name; the name itself for a kind not registered here."""
    kind = _KINDS.get(name)
    return kind.label if kind is not None else name.replace("_", " ").capitalize()


def all_metrics() -> dict[str, Metric]:
    """Every declared metric by key (the first declaration of a key wins)."""
    out: dict[str, Metric] = {}
    for kind in _KINDS.values():
        for metric in kind.metrics:
            out.setdefault(metric.key, metric)
    return out


def semantic_metrics() -> list[str]:
    """The fraction-valued metrics a semantic scorer makes (BERTScore, normalised BARTScore)."""
    return [key for key, m in all_metrics().items() if m.scorer is not None and m.display == "fraction"]


def paper_columns() -> list[Metric]:
    """The metrics shown as columns of the paper table, in column order."""
    return sorted((m for m in all_metrics().values() if m.column is not None), key=lambda m: m.column or 0)


__all__ = [
    "UnknownKindError",
    "all_metrics",
    "get_kind",
    "kind_label",
    "kind_of",
    "kinds",
    "paper_columns",
    "register_kind",
    "register_metric",
    "semantic_metrics",
    "unregister_kind",
    "unregister_metric",
]
