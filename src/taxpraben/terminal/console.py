"""A rich ``Console`` made when it is first used, so that a command that has printed nothing
yet has not imported rich.

rich (54 modules, 30-40 ms) is what ``run`` prints through, but nothing needs it to send a
request: the consoles ``run`` holds are deferred, its progress bar starts once the first
requests are written (``Runner._send_all``), and rich is imported then, or sooner if something
is printed first (a warning about the data, an error). Issue 24: the first request within
0.3 s of the process start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console


class _DeferredConsole:
    """Stands for ``rich.console.Console(**options)``: the console is made at the first
    attribute read (``print``, ``file``, ``is_terminal``...), and every read goes to it.
    Setting an attribute sets it on the console too, and ``with`` enters it (rich's live
    displays hold their console so)."""

    __slots__ = ("_made", "_options")

    def __init__(self, options: dict[str, Any]) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_made", None)

    def _console(self) -> Console:
        made = object.__getattribute__(self, "_made")
        if made is None:
            from rich.console import Console

            made = Console(**object.__getattribute__(self, "_options"))
            object.__setattr__(self, "_made", made)
        return cast("Console", made)

    def __getattr__(self, name: str) -> object:
        return getattr(self._console(), name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._console(), name, value)

    # A Console's own special methods (looked up on the type, not through __getattr__).
    def __enter__(self) -> Console:
        return self._console().__enter__()

    def __exit__(self, *exc: object) -> None:
        self._console().__exit__(*exc)

    def __repr__(self) -> str:
        made = object.__getattribute__(self, "_made")
        return repr(made) if made is not None else f"<console, not made yet: {object.__getattribute__(self, '_options')}>"


def deferred_console(**options: Any) -> Console:
    """A console that is ``Console(**options)`` in all it does, made at its first use."""
    return cast("Console", _DeferredConsole(options))


def is_made(console: object) -> bool:
    """Whether ``console`` is a console already made (rich imported for it): a deferred one
    that has been used, or any other."""
    if isinstance(console, _DeferredConsole):
        return object.__getattribute__(console, "_made") is not None
    return True
