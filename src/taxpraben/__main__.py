"""The ``taxpraben`` executable (and ``python -m taxpraben``): the collector is paused before
anything is imported (:mod:`taxpraben.terminal.collector`), and the command resumes it when its
work begins: ``run`` just before its first request, every other command before it starts."""

from __future__ import annotations

from taxpraben.terminal.collector import pause_collection


def main() -> None:
    """Pause the collector, then load and run the command line."""
    pause_collection()
    from taxpraben.cli import entry

    entry()


if __name__ == "__main__":
    main()
