"""The cyclic garbage collector paused while the executable loads a command
(:mod:`taxpraben.__main__`), and resumed when the command's work begins.

Loading ``run`` builds ~90,000 long-lived objects (typer, pydantic, aiohttp, rich, our own
modules). None of them is garbage, yet the collector's full passes walk them all, several times
during the start: one pass in the middle of the imports took 13 ms, and the start of ``run`` spent
~35 ms in them in all (measured with the collector off and on, same imports). Resuming freezes
what was loaded (``gc.freeze``: later passes do not walk it again, which also shortens them at
the end of a run), then collection goes on as usual for everything created after.

Only the executable pauses: importing taxpraben (tests, notebooks) leaves the collector alone,
and :func:`resume_collection` then does nothing.
"""

from __future__ import annotations

import gc

_paused = False


def pause_collection() -> None:
    """Pause the cyclic collector until :func:`resume_collection` (if it is running)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collection() -> None:
    """Freeze what is loaded and resume the collector, if :func:`pause_collection` paused it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
