"""taxpraben: the evaluation harness for TaxPraBen (Hu et al., 2026, arXiv 2604.08948)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # both made on first use, by __getattr__
    from taxpraben.parsing.registry import register_rule

    __version__: str

__all__ = ["__version__", "register_rule"]


def __getattr__(name: str) -> object:
    """``__version__``, read from the installed metadata on first use (importlib.metadata
    costs ~50 ms at every start otherwise); ``register_rule``, imported on first use (`run`
    loads no reader before its first request)."""
    if name == "register_rule":
        from taxpraben.parsing.registry import register_rule

        return register_rule
    if name != "__version__":
        raise AttributeError(f"module 'taxpraben' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("taxpraben")
    except PackageNotFoundError:  # running from a source tree without an install
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value
