"""Task specs and the registry that loads them."""

from taxpraben.task_spec import (
    BLOOM_ORDER,
    BloomLevel,
    ClassificationOptions,
    FieldOptions,
    FieldRule,
    StructuredOptions,
    TaskSpec,
)
from taxpraben.tasks.registry import (
    PAPER_ORDER,
    TASK_DIR_ENV,
    Registry,
    TaskSpecError,
    check_spec,
    closest_task_name,
    load_registry,
)

__all__ = [
    "BLOOM_ORDER",
    "PAPER_ORDER",
    "TASK_DIR_ENV",
    "BloomLevel",
    "ClassificationOptions",
    "FieldOptions",
    "FieldRule",
    "Registry",
    "StructuredOptions",
    "TaskSpec",
    "TaskSpecError",
    "check_spec",
    "closest_task_name",
    "load_registry",
]
