"""taxpraben: the evaluation harness for TaxPraBen (Hu et al., 2026, arXiv 2604.08948)."""

from __future__ import annotations

from taxpraben.parsing.registry import register_rule

__all__ = ["__version__", "register_rule"]


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata on first use (importlib.metadata
    costs ~50 ms at every start otherwise)."""
    if name != "__version__":
        raise AttributeError(f"module 'taxpraben' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("taxpraben")
    except PackageNotFoundError:  # running from a source tree without an install
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value
