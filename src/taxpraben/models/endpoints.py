"""Routing the requests of one model over several OpenAI-compatible endpoints (replicas).

:class:`EndpointPool` is pure bookkeeping (no I/O, the clock is passed in): the OpenAI backend
asks it which endpoint the next attempt goes to and tells it how the attempt ended. The
runner stays the one owner of retries: an attempt that failed on a dead endpoint comes back
as a retryable error, and its retry is routed to a live endpoint. The base URLs are those of
one ``--base-url`` value (:func:`split_base_urls`).

Choice: the endpoint with the smallest expected wait of one more request,
``max(min_latency, (outstanding + 1) / rate)``, where ``min_latency`` is the smallest latency
it answered in (its service time) and ``rate`` an EWMA of its measured throughput (Little's
law: requests in flight when it was sent divided by its latency) at the answers that queued there (latency
above 1.5 x the service time); an endpoint never seen queueing has no known limit and is
chosen on its service time (0 before its first answer, so that every endpoint is measured).
Measuring the rate at any load instead would starve a slow replica: at the little load it
is given, its throughput looks small, so it is given little.

Ejection: ``max_failures`` consecutive connection failures or timeouts (refused, reset,
no first token) take an endpoint out for ``backoff`` seconds (doubling up to
``max_backoff``); after that it gets exactly one attempt (the probe): an answer puts it back,
a failure takes it out again. A pool of one endpoint never ejects (there is nowhere else to
go: it behaves exactly as the single-endpoint backend always did).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from taxpraben.models.base import ModelSpecError, redact_url

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject

#: Consecutive connection failures/timeouts that take an endpoint out.
MAX_FAILURES = 3
#: First and longest pause before an ejected endpoint is probed again (seconds).
BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
#: A latency above this multiple of the smallest one measured means requests queued there.
QUEUED = 1.5
#: Weight of the newest sample in the throughput and latency EWMAs.
EWMA_ALPHA = 0.2


def split_base_urls(base_url: str) -> list[str]:
    """The base URLs of a ``--base-url`` value: comma-separated, stripped of a trailing ``/``,
    duplicates dropped (first kept); each must start with http:// or https://."""
    urls: list[str] = []
    for part in base_url.split(","):
        url = part.strip().rstrip("/")
        if not url:
            continue
        if not url.startswith(("http://", "https://")):
            raise ModelSpecError(
                f"--base-url must start with http:// or https://, got {redact_url(url)!r}"
            )
        if url not in urls:
            urls.append(url)
    if not urls:
        raise ModelSpecError("--base-url names no URL")
    return urls


@dataclass
class Endpoint:
    """One base URL and what has been measured of it."""

    url: str
    #: ``url`` without user info or query (what meta and messages show).
    name: str
    #: Its position in the pool (for per-endpoint state kept by the backend).
    index: int = 0
    outstanding: int = 0
    #: EWMA of requests answered per second (None until the first answer).
    rate: float | None = None
    latency: float | None = None
    #: The smallest latency answered (the unqueued service time).
    min_latency: float | None = None
    sent: int = 0
    completed: int = 0
    failed: int = 0
    latency_sum: float = 0.0
    ejections: int = 0
    #: True once it answered anything (any HTTP status): it exists.
    answered: bool = False
    consecutive_failures: int = 0
    #: Monotonic time until which it is out (None: in service).
    down_until: float | None = None
    backoff: float = BACKOFF_S
    probing: bool = False

    def to_meta(self) -> JSONObject:
        """The per-endpoint figures recorded in results.json ``meta.endpoints``."""
        return {
            "endpoint": self.name,
            "sent": self.sent,
            "completed": self.completed,
            "failed": self.failed,
            "mean_latency_s": round(self.latency_sum / self.completed, 4)
            if self.completed
            else None,
            "throughput_rps": round(self.rate, 3) if self.rate is not None else None,
            "ejections": self.ejections,
        }


def expected_wait(ep: Endpoint) -> float:
    """Seconds one more request on ``ep`` is expected to take: the queue ahead of it at the
    measured throughput, but never less than the smallest latency measured (its unqueued
    service time). An endpoint never seen queueing has no known throughput limit: its
    service time alone (0 before its first answer, so that it is measured)."""
    service = ep.min_latency or 0.0
    if ep.rate is None:
        return service
    return max(service, (ep.outstanding + 1) / ep.rate)


class EndpointPool:
    """Chooses an endpoint per attempt and keeps each endpoint's counts (see the module doc)."""

    def __init__(
        self,
        urls: list[tuple[str, str]],
        *,
        max_failures: int = MAX_FAILURES,
        backoff: float = BACKOFF_S,
        max_backoff: float = MAX_BACKOFF_S,
    ) -> None:
        """``urls``: (base URL, its redacted name) pairs, at least one, without duplicates."""
        if not urls:
            raise ValueError("an endpoint pool needs at least one base URL")
        self.endpoints = [
            Endpoint(url=u, name=n, index=i, backoff=backoff) for i, (u, n) in enumerate(urls)
        ]
        self.max_failures = max_failures
        self.base_backoff = backoff
        self.max_backoff = max_backoff

    def __len__(self) -> int:
        return len(self.endpoints)

    def choose(self, now: float) -> Endpoint:
        """The endpoint for the next attempt, counted as outstanding until :meth:`finish`."""
        eps = self.endpoints
        if len(eps) == 1:  # the single-endpoint run: no choice to make, nothing to pay for it
            only = eps[0]
            only.outstanding += 1
            only.sent += 1
            return only
        chosen: Endpoint | None = None
        # A due probe goes first: one attempt tells whether the endpoint is back.
        for ep in eps:
            if ep.down_until is not None and not ep.probing and ep.down_until <= now:
                ep.probing = True
                chosen = ep
                break
        if chosen is None:
            live = [ep for ep in eps if ep.down_until is None]
            if live:
                # Ties (endpoints not measured yet) go to the one holding fewest.
                chosen = min(live, key=lambda ep: (expected_wait(ep), ep.outstanding))
            else:
                # Every endpoint is out: the one due back soonest (its failure is reported
                # as unreachable, and the runner's give-up rules apply as for one endpoint).
                chosen = min(eps, key=lambda ep: ep.down_until or 0.0)
        chosen.outstanding += 1
        chosen.sent += 1
        return chosen

    def finish(
        self,
        ep: Endpoint,
        now: float,
        *,
        latency: float | None = None,
        in_flight: int | None = None,
        answered: bool = False,
        connection_failed: bool = False,
    ) -> None:
        """Record how an attempt on ``ep`` ended.

        ``latency`` is given for a completed answer, with ``in_flight``: the endpoint's
        ``outstanding`` just after :meth:`choose` returned it (this attempt included; the
        count at the start, since the count at the end has drained); ``answered`` for any HTTP answer (an
        error status included); ``connection_failed`` for a refused, dropped or timed-out
        attempt, which counts towards ejection.
        """
        ep.outstanding = max(0, ep.outstanding - 1)
        if latency is not None:
            ep.completed += 1
            ep.latency_sum += latency
            ep.min_latency = latency if ep.min_latency is None else min(ep.min_latency, latency)
            # Little's law gives the throughput (in flight / latency) at the load it was
            # given; that is the endpoint's limit only when requests queued there (latency
            # above its service time). Below that, it only shows the limit is higher.
            sample = (in_flight or 1) / max(latency, 1e-6)
            if latency > QUEUED * ep.min_latency:
                ep.rate = sample if ep.rate is None else ep.rate + EWMA_ALPHA * (sample - ep.rate)
            elif ep.rate is not None:
                ep.rate = max(ep.rate, sample)
            ep.latency = (
                latency if ep.latency is None else ep.latency + EWMA_ALPHA * (latency - ep.latency)
            )
        else:
            ep.failed += 1
        if answered or latency is not None:
            ep.answered = True
            ep.consecutive_failures = 0
            ep.down_until = None
            ep.probing = False
            ep.backoff = self.base_backoff
            return
        if not connection_failed:
            if ep.probing:  # the probe ended without telling anything: probe again later
                ep.probing = False
            return
        ep.consecutive_failures += 1
        if len(self.endpoints) == 1:
            return
        if ep.probing:
            ep.probing = False
            ep.backoff = min(self.max_backoff, ep.backoff * 2)
            ep.down_until = now + ep.backoff
        elif ep.down_until is None and ep.consecutive_failures >= self.max_failures:
            ep.ejections += 1
            ep.down_until = now + ep.backoff

    def eject(self, ep: Endpoint, now: float) -> None:
        """Take ``ep`` out at once (the preflight found nothing listening there)."""
        if len(self.endpoints) > 1 and ep.down_until is None:
            ep.ejections += 1
            ep.down_until = now + ep.backoff

    def others_live(self, ep: Endpoint) -> bool:
        """True when another endpoint has answered and is in service: a connection refused
        by ``ep`` then does not mean the model is unreachable."""
        return any(o is not ep and o.answered and o.down_until is None for o in self.endpoints)

    def to_meta(self) -> list[JSONObject]:
        return [ep.to_meta() for ep in self.endpoints]
