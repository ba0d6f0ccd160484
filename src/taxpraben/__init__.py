"""taxpraben: the evaluation harness for TaxPraBen (Hu et al., 2026, arXiv 2604.08948)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("taxpraben")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
