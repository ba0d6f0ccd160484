"""The kinds known to this process, by name, and the metrics added to them.

The four built-in kinds are registered when :mod:`taxpraben.kinds` is imported, in the
order results.json groups them (classification, generation, structured, mixed); a plugin
registers its own with :func:`register_kind` before loading task specs that use it, and
adds a metric to any kind with :func:`register_metric`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from taxpraben.kinds.base import Kind, Metric, TaskKind
from taxpraben.kinds.entry_points import entry_point_module, entry_point_values

if TYPE_CHECKING:
    from taxpraben.task_spec import TaskSpec

_KINDS: dict[str, TaskKind] = {}
_LOADED_PLUGINS: set[str] = set()

#: Modules to import before task specs are read (comma-separated): each registers its
#: kinds and metrics when imported. Installed packages can instead declare an entry point
#: in the group ``taxpraben.plugins``.
PLUGINS_ENV = "TAXPRABEN_PLUGINS"
PLUGIN_GROUP = "taxpraben.plugins"


class PluginError(ImportError):
    """A plugin module that cannot be imported."""


def load_plugins() -> list[str]:
    """Import the plugin modules ($TAXPRABEN_PLUGINS, then the ``taxpraben.plugins`` entry
    points), each once per process; returns the ones imported now."""
    names = [n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(",") if n.strip()]
    for value in entry_point_values(PLUGIN_GROUP):  # not importlib.metadata's: see taxpraben.kinds.entry_points
        module = entry_point_module(value)
        if module is None:
            raise PluginError(f"the {PLUGIN_GROUP!r} entry point {value!r} names no module (module or module:attr)")
        names.append(module)
    loaded = []
    for name in names:
        if name in _LOADED_PLUGINS:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # a plugin's own failure, whatever it is, is reported as such
            raise PluginError(f"cannot import taxpraben plugin {name!r} (from ${PLUGINS_ENV} or the "
                              f"{PLUGIN_GROUP!r} entry points): {type(exc).__name__}: {exc}") from exc
        _LOADED_PLUGINS.add(name)
        loaded.append(name)
    return loaded


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
    "PLUGINS_ENV",
    "PLUGIN_GROUP",
    "PluginError",
    "UnknownKindError",
    "all_metrics",
    "get_kind",
    "kind_label",
    "kind_of",
    "kinds",
    "load_plugins",
    "paper_columns",
    "register_kind",
    "register_metric",
    "semantic_metrics",
    "unregister_kind",
    "unregister_metric",
]
