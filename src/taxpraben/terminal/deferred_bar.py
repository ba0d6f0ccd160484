"""When a run's progress bar is shown: shortly after the first request, not before it.

The bar (:mod:`taxpraben.terminal.progress_bar`) imports rich, 30-40 ms that the first request does not
wait for (issue 24, start-up); this module imports neither.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.clock import Clock
    from taxpraben.terminal.plain_progress import PlainProgress
    from taxpraben.terminal.progress import RunStats
    from taxpraben.terminal.progress_bar import RunProgress

#: Seconds from the first request handed to the backend to the bar shown (sooner if an answer
#: comes first).
BAR_AFTER_S = 0.1


class DeferredBar:
    """A run's progress bar, shown :data:`BAR_AFTER_S` after the first request is handed to
    the backend (:meth:`soon`, on the runner's clock) or at the first answer if that is
    sooner, with the answers so far counted; never shown when ``enabled`` is false. The bar
    imports rich (30-40 ms), which the first request does not wait for."""

    def __init__(self, spec: str, stats: RunStats, console: Console, clock: Clock, enabled: bool) -> None:
        self._spec, self._stats, self._console, self._clock = spec, stats, console, clock
        self._enabled = enabled
        self._bar: RunProgress | PlainProgress | None = None
        self._advanced = 0
        #: Items a backend reported finished inside a call not returned yet (see :meth:`live`).
        self._live = 0
        self._timer: asyncio.Future[None] | None = None

    def soon(self) -> None:
        """A request is handed to the backend: the bar is shown shortly, if it is not yet."""
        if self._timer is None and self._enabled and self._bar is None:
            self._timer = asyncio.ensure_future(self._show_after(BAR_AFTER_S))

    async def _show_after(self, seconds: float) -> None:
        await self._clock.sleep(seconds)
        self._show()

    def _show(self) -> None:
        if self._enabled and self._bar is None:
            if not self._console.is_terminal:  # redirected: plain lines at a steady pace, not a bar
                from taxpraben.terminal.plain_progress import PlainProgress

                self._bar = PlainProgress(self._spec, self._stats, self._console, self._stats.to_send, self._clock,
                                          completed=self.shown)  # fmt: skip
                return
            from taxpraben.terminal.progress_bar import RunProgress

            self._bar = RunProgress(self._spec, self._stats, self._console, self._stats.to_send,
                                    completed=self.shown)  # fmt: skip

    def set_total(self, total: int) -> None:
        if self._bar is not None:
            self._bar.set_total(total)

    @property
    def shown(self) -> int:
        """The count the bar shows: the answers handed over, and those reported live."""
        return self._advanced + self._live

    def advance(self) -> None:
        """One more completion; the first answer shows the bar if its timer has not."""
        self._advanced += 1
        self._refresh()

    def live(self, finished: int, *, refresh: bool = True) -> None:
        """``finished`` items of a backend call still under way are done (a local model's
        batch): shown at once. The call's own answers replace them when it returns (the
        runner takes them back, ``refresh=False``, before it hands the answers over)."""
        self._live += finished
        if refresh:
            self._refresh()

    def _refresh(self) -> None:
        if self._bar is None:
            self._show()
        else:
            self._bar.show_completed(self.shown)

    def stop(self) -> None:
        """The sending is over: a bar not shown yet (nothing was sent) shows where the run
        ended, then stops; the next run of the runner counts from 0."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._show()
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self._advanced = self._live = 0
