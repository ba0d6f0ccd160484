"""taxpraben: the evaluation harness for TaxPraBen (Hu et al., 2026, arXiv 2604.08948)."""

from __future__ import annotations

from typing import TYPE_CHECKING

# ---- the public Python API (docs/api.md): each name imported from its module at first use,
# so that `import taxpraben` (and the start-up of every command) loads none of them.
_API = {
    "evaluate": "taxpraben.api.evaluation",
    "score": "taxpraben.api.evaluation",
    "load_results": "taxpraben.api.evaluation",
    "Results": "taxpraben.api.evaluation",
    "read_answer": "taxpraben.api.reading",
    "Reading": "taxpraben.api.reading",
    "Record": "taxpraben.api.reading",
    "task_figures": "taxpraben.api.figures",
    "bertscore": "taxpraben.api.semantic",
    "bartscore": "taxpraben.api.semantic",
    "Sample": "taxpraben.results",
    "TaskResult": "taxpraben.results",
    "JobError": "taxpraben.jobs.common",
    "register_rule": "taxpraben.parsing.registry",
}

if TYPE_CHECKING:
    from taxpraben.api.evaluation import Results, evaluate, load_results, score
    from taxpraben.api.figures import task_figures
    from taxpraben.api.reading import Reading, Record, read_answer
    from taxpraben.api.semantic import bartscore, bertscore
    from taxpraben.jobs.common import JobError
    from taxpraben.parsing.registry import register_rule
    from taxpraben.results import Sample, TaskResult

    __version__: str
# ---- end of the public Python API

__all__ = [
    "JobError",
    "Reading",
    "Record",
    "Results",
    "Sample",
    "TaskResult",
    "__version__",
    "bartscore",
    "bertscore",
    "evaluate",
    "load_results",
    "read_answer",
    "register_rule",
    "score",
    "task_figures",
]


def __getattr__(name: str) -> object:
    """``__version__``, read from the installed metadata on first use (importlib.metadata
    costs ~50 ms at every start otherwise), and the API's names, each from its module
    (``register_rule`` too: `run` loads no reader before its first request)."""
    if name in _API:
        import importlib

        value: object = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    if name != "__version__":
        raise AttributeError(f"module 'taxpraben' has no attribute {name!r}")
    from taxpraben.manifest import package_version

    globals()["__version__"] = package_version()
    return globals()["__version__"]
