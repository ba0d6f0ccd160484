"""What a run has done (:class:`RunStats`): the counters of its progress bar
(:mod:`taxpraben.terminal.progress_bar`, shown by :mod:`taxpraben.terminal.deferred_bar`) and of the command's
summary."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


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
