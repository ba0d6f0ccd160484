"""Reading OpenAI server-sent events, and telling a dead request from a slow one.

Why streaming: without it, a request that will never be answered (a hung worker, a lost
connection the kernel has not noticed) and a long generation look alike until the whole
answer arrives, so the only guard is a total timeout long enough for the longest answer
(minutes). Streamed, a live request shows a first token and then a steady flow of chunks;
a dead one shows nothing. Two limits follow:

- **first token**: an attempt that has received no token is given up once it has waited
  :meth:`FirstTokenDeadline.limit` seconds. The limit adapts to the endpoint: until
  ``min_samples`` first tokens have been seen it is the hard cap (``--timeout``); after,
  ``multiplier`` x the 95th percentile of the recent first-token times, never below
  ``floor`` nor above the cap. A request that already timed out once on its first token
  gets twice the limit on each further attempt, so an item that is slow by nature (a very
  long prompt) is not cut at the same point every time.
- **idle**: once tokens flow, an attempt is given up when no chunk has arrived for
  ``idle`` seconds (``--idle-timeout``). A long generation is never cut while it streams.

The deadlines are enforced with one ``asyncio.timeout`` per attempt, rescheduled as chunks
arrive, and tightened by a watchdog as the adaptive limit learns (see ``OpenAIBackend``).
"""

from __future__ import annotations

import bisect
import json
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject

#: Defaults (see benchmarks/README.md, "Faults"): a mock endpoint under C = 64 answers its
#: first token in 0.2-0.3 s; hosted APIs in 0.3-3 s for chat models. Five times the p95,
#: at least 5 s, leaves ample room for queueing spikes while a hung request costs seconds.
FIRST_TOKEN_FLOOR_S = 3.0
FIRST_TOKEN_MULTIPLIER = 5.0
FIRST_TOKEN_MIN_SAMPLES = 16


@dataclass
class FirstTokenDeadline:
    """The adaptive limit on the wait for a first token (see the module docstring)."""

    cap: float
    floor: float = FIRST_TOKEN_FLOOR_S
    multiplier: float = FIRST_TOKEN_MULTIPLIER
    min_samples: int = FIRST_TOKEN_MIN_SAMPLES
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=256))
    #: ``recent`` in order, kept as it changes: :meth:`limit` is asked once a request (at
    #: C = 256 sorting 256 times on each was ~4% of the event loop's time).
    ordered: list[float] = field(default_factory=list)

    def observe(self, seconds: float) -> None:
        """Record one attempt's time to its first token."""
        if self.recent.maxlen is not None and len(self.recent) == self.recent.maxlen:
            del self.ordered[bisect.bisect_left(self.ordered, self.recent[0])]  # the one that drops out
        self.recent.append(seconds)
        bisect.insort(self.ordered, seconds)

    def limit(self, strikes: int = 0) -> float:
        """Seconds an attempt may wait for its first token (``strikes``: earlier timeouts)."""
        if len(self.recent) < self.min_samples:
            base = self.cap
        else:
            ordered = self.ordered
            p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
            base = min(self.cap, max(self.floor, self.multiplier * p95))
        return min(self.cap, base * float(2**strikes))


class StreamError(ValueError):
    """A stream that cannot be read as OpenAI chat completion chunks."""


@dataclass
class StreamAccumulator:
    """Joins ``chat.completion.chunk`` events into one answer.

    ``feed`` takes one line of the event stream and returns True at ``data: [DONE]``.
    Content and reasoning deltas are concatenated, so the text equals what the same
    completion returns unstreamed; the usage chunk (``stream_options.include_usage``) gives
    the token counts.
    """

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    #: True once a chunk carried a token (content or reasoning) or a finish reason.
    started: bool = False
    done: bool = False

    def feed_lines(self, lines: list[bytes]) -> bool:
        """``feed`` each line; True as soon as one is ``data: [DONE]``."""
        return any(self.feed(line) for line in lines)

    def feed(self, line: bytes) -> bool:
        text = line.strip()
        if not text or text.startswith(b":"):  # blank separator, or an SSE comment / ping
            return False
        if not text.startswith(b"data:"):
            return False  # event:, id:, retry: fields carry nothing we use
        payload = text[5:].strip()
        if payload == b"[DONE]":
            self.done = True
            return True
        try:
            chunk = json.loads(payload)
        except ValueError as exc:
            raise StreamError(f"malformed stream chunk: {payload[:120]!r}") from exc
        if not isinstance(chunk, dict):
            raise StreamError(f"malformed stream chunk: {payload[:120]!r}")
        if "error" in chunk:
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise StreamError(f"error in stream: {message}")
        self._take(chunk)
        return False

    def _take(self, chunk: JSONObject) -> None:
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            from taxpraben.models.openai_wire import usage_counts  # the wire's one reading of usage

            self.usage = usage_counts(usage)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return
        choice = choices[0]
        if not isinstance(choice, dict):
            raise StreamError("malformed stream chunk: a choice is not an object")
        delta = choice.get("delta") or {}
        if isinstance(delta, dict):
            content = delta.get("content")
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(content, str) and content:
                self.content.append(content)
                self.started = True
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                self.started = True
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
            self.started = True

    @property
    def complete(self) -> bool:
        """The stream said it was finished ([DONE], or at least a finish reason)."""
        return self.done or self.finish_reason is not None

    @property
    def text(self) -> str:
        return "".join(self.content)

    @property
    def reasoning_text(self) -> str | None:
        return "".join(self.reasoning) or None
