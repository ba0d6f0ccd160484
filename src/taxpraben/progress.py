"""What a run has done (:class:`RunStats`) and its progress bar: the model, the generations
done, their rate and the failures."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Console
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


@dataclass
class RunStats:
    """Counters shown on the progress bar and in the command's summary."""

    predictions: int = 0
    #: Distinct generations the run needs, found in the cache, and sent.
    unique: int = 0
    cached: int = 0
    to_send: int = 0
    done: int = 0
    failed: int = 0
    #: Of ``failed``: those the server rejected as invalid (not retryable: a rerun won't help).
    rejected: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    shared_generation: bool = False
    first_error: str | None = None
    #: When the run started, on the runner's clock (``time.monotonic()`` by default).
    started: float = field(default_factory=time.monotonic)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


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
        return Text(f"{speed:.1f}/s" if speed else "-/s", style="progress.data.speed")


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

    def __init__(self, spec: str, stats: RunStats, console: Console, total: int) -> None:
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
        self._task: TaskID = self._progress.add_task("generate", total=total)

    def set_total(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def advance(self) -> None:
        self._progress.advance(self._task)

    def stop(self) -> None:
        self._progress.stop()
