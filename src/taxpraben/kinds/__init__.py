"""Task kinds: how each kind of task is read, scored and reported (see kinds/base.py).

Importing this package registers the built-in kinds, in the order results.json groups
them. Public API: the :class:`Kind` base and :class:`Metric` declaration, the protocol
:class:`TaskKind`, and the registry functions.
"""

from taxpraben.kinds import classification, generation, mixed, structured
from taxpraben.kinds.base import (
    FieldMode,
    Kind,
    Metric,
    SemanticValues,
    SpecMismatch,
    TaskKind,
    bert_f1,
    mean_or_none,
    with_finished,
    with_prepared,
)
from taxpraben.kinds.profiles import RULES, ScoringRules, scoring_rules
from taxpraben.kinds.registry import (
    PLUGINS_ENV,
    PluginError,
    UnknownKindError,
    all_metrics,
    get_kind,
    kind_label,
    kind_of,
    kinds,
    load_plugins,
    paper_columns,
    register_kind,
    register_metric,
    semantic_metrics,
    unregister_kind,
    unregister_metric,
)
from taxpraben.metrics.defaults import PROFILES, Profile

for _module in (classification, generation, structured, mixed):
    register_kind(_module.KIND, replace=True)

__all__ = [
    "PLUGINS_ENV",
    "PROFILES",
    "RULES",
    "FieldMode",
    "Kind",
    "Metric",
    "PluginError",
    "Profile",
    "ScoringRules",
    "SemanticValues",
    "SpecMismatch",
    "TaskKind",
    "UnknownKindError",
    "all_metrics",
    "bert_f1",
    "get_kind",
    "kind_label",
    "kind_of",
    "kinds",
    "load_plugins",
    "mean_or_none",
    "paper_columns",
    "register_kind",
    "register_metric",
    "scoring_rules",
    "semantic_metrics",
    "unregister_kind",
    "unregister_metric",
    "with_finished",
    "with_prepared",
]
