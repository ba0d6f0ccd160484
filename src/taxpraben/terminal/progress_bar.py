"""The progress bar of a run: the model, the generations done, their rate and the failures.

rich's progress (with rich itself) is imported with this module, which the runner imports
when it shows the bar: once the first requests are written, not before (issue 24, start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TimeRemainingColumn,
)
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.terminal.progress import RunStats


class _LabelColumn(ProgressColumn):
    """The model, and how many generations came from the cache (known as the data is read)."""

    def __init__(self, spec: str, stats: RunStats) -> None:
        super().__init__()
        self._spec = spec
        self._stats = stats

    def render(self, task: Task) -> Text:
        label = Text(self._spec, style="bold")
        if self._stats.cached:
            label.append(f" ({self._stats.cached} cached)")
        return label


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if not speed:
            return Text("-/s", style="progress.data.speed")
        # a slow model in seconds per item: 0.02/s would read 0.0/s
        return Text(f"{speed:.1f}/s" if speed >= 1 else f"{1 / speed:.1f} s/item", style="progress.data.speed")


class _StatsColumn(ProgressColumn):
    def __init__(self, stats: RunStats) -> None:
        super().__init__()
        self._stats = stats

    def render(self, task: Task) -> Text:
        s = self._stats
        style = "red" if s.failed else "dim"
        return Text(f"retries {s.retries} · failed {s.failed} · tokens {s.tokens:,}", style=style)


class RunProgress:
    """One bar over the generations to send; ``total`` grows as the data is read."""

    def __init__(self, spec: str, stats: RunStats, console: Console, total: int, completed: int = 0) -> None:
        self._progress = Progress(
            _LabelColumn(spec, stats),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeRemainingColumn(),
            _StatsColumn(stats),
            console=console,
            transient=False,
        )
        self._progress.start()
        self._task: TaskID = self._progress.add_task("generate", total=total, completed=completed)

    def set_total(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def show_completed(self, completed: int) -> None:
        self._progress.update(self._task, completed=completed)

    def stop(self) -> None:
        self._progress.stop()
