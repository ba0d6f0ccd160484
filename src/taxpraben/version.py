"""The installed package's version: read from its metadata the first time it is asked for
(importlib.metadata costs ~50 ms, which no command pays at start-up), then kept. The ground
floor's one answer to "which taxpraben wrote this" (``taxpraben.__version__`` hands it on)."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["package_version"]


@lru_cache(maxsize=1)
def package_version() -> str:
    """taxpraben's version as installed; ``0.0.0+unknown`` from a source tree without an install."""
    from importlib import metadata

    try:
        return metadata.version("taxpraben")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"
