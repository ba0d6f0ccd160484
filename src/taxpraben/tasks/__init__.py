"""Task specs and the registry that loads them."""

from taxpraben.tasks.registry import (
    PAPER_ORDER,
    TASK_DIR_ENV,
    Registry,
    TaskSpecError,
    closest_task_name,
    load_registry,
)
from taxpraben.tasks.spec import (
    BLOOM_ORDER,
    BloomLevel,
    ClassificationOptions,
    FieldOptions,
    FieldRule,
    OutputType,
    StructuredOptions,
    TaskSpec,
)

__all__ = [
    "BLOOM_ORDER",
    "PAPER_ORDER",
    "TASK_DIR_ENV",
    "BloomLevel",
    "ClassificationOptions",
    "FieldOptions",
    "FieldRule",
    "OutputType",
    "Registry",
    "StructuredOptions",
    "TaskSpec",
    "TaskSpecError",
    "closest_task_name",
    "load_registry",
]
