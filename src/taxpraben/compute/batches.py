"""Batches sized by a memory budget, longest first, that back off on out-of-memory.

The semantic scorers (``metrics.bertscore``, ``metrics.bartscore``) and local generation (``models.hf``) both run a
model over texts of very different lengths; what limits a batch is the device's memory, not a
count of items. The contract:

- The caller sorts the items longest first and gives each a *shape*: its lengths, one per
  padded dimension (``(tokens,)`` for an encoder, ``(source, target)`` for BART).
- A :class:`Budget` says what one forward pass may hold: at most ``max_rows`` items and a
  ``cost(rows, widths)`` of at most ``max_cost``, where ``widths`` are the batch's padded
  lengths (the maximum of each dimension). The cost is padded tokens on CPU and estimated
  bytes on CUDA, where the budget comes from the free device memory.
- :func:`run_batches` takes the longest prefix of the remaining items that fits, hands it
  to ``forward``, and goes on. When ``forward`` runs out of device memory the budget shrinks
  to half that batch's cost and rows, and the same items are planned again, so a wrong
  estimate costs one failed batch, never the job. A single item that does not fit raises.

Nothing here synchronises with the device: ``forward`` keeps its results where they are.

Several devices (``--device cuda`` on a machine of several GPUs, or a list): the work is
split into length-balanced bins by :func:`balance_bins`, one bin per device, each run by
:func:`run_per_device` with its own model copy and its own budget, and :func:`merge_bins`
puts the results back in the input order; :func:`share_out` does the three in turn.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

Shape = tuple[int, ...]
CostFn = Callable[[int, Shape], float]
T = TypeVar("T")
W = TypeVar("W")

#: Share of the free CUDA memory a batch's activations may take; the rest is headroom for
#: the allocator's fragmentation, results kept on the device and the estimate's error.
DEVICE_MEMORY_FRACTION = 0.5


def padded_tokens(rows: int, widths: Shape) -> float:
    """Cost of a batch in padded tokens: ``rows * sum(widths)``."""
    return float(rows * sum(widths))


@dataclass(frozen=True)
class Budget:
    """What one forward pass may hold: ``max_rows`` items and ``cost(rows, widths) <= max_cost``.

    A batch of a single item always runs, whatever its cost: only the device can say no.
    """

    max_cost: float
    max_rows: int
    cost: CostFn = padded_tokens

    def __post_init__(self) -> None:
        if self.max_rows < 1 or self.max_cost <= 0:
            raise ValueError(f"a budget needs max_rows >= 1 and max_cost > 0, got {self}")

    def fits(self, rows: int, widths: Shape) -> bool:
        return rows <= self.max_rows and self.cost(rows, widths) <= self.max_cost

    def halved(self, rows: int, widths: Shape) -> Budget:
        """The budget after a batch of ``rows`` items padded to ``widths`` ran out of memory."""
        return replace(
            self,
            max_cost=max(self.cost(rows, widths) / 2, 1e-9),
            max_rows=max(1, min(self.max_rows, rows // 2)),
        )


def next_batch(
    order: Sequence[int], start: int, shapes: Sequence[Shape], budget: Budget
) -> tuple[list[int], Shape]:
    """The longest run of ``order[start:]`` that fits ``budget`` (at least one item), and its
    padded widths."""
    first = order[start]
    batch = [first]
    widths = shapes[first]
    for i in order[start + 1 :]:
        grown = tuple(max(a, b) for a, b in zip(widths, shapes[i], strict=True))
        if not budget.fits(len(batch) + 1, grown):
            break
        batch.append(i)
        widths = grown
    return batch, widths


def plan_batches(
    order: Sequence[int], shapes: Sequence[Shape], budget: Budget
) -> list[list[int]]:
    """Every batch :func:`run_batches` would run if no batch ran out of memory."""
    batches: list[list[int]] = []
    start = 0
    while start < len(order):
        batch, _ = next_batch(order, start, shapes, budget)
        batches.append(batch)
        start += len(batch)
    return batches


def is_out_of_memory(exc: BaseException) -> bool:
    """True for a device out-of-memory error (CUDA's own class, or MPS's RuntimeError)."""
    import torch

    oom = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)
    if isinstance(exc, oom):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def release_cached_memory() -> None:
    """Hand the allocator's cached blocks back after an out-of-memory error."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_batches(
    order: Sequence[int],
    shapes: Sequence[Shape],
    budget: Budget,
    forward: Callable[[list[int]], None],
    advance: Callable[[int], None] = lambda n: None,
) -> Budget:
    """Run ``forward`` over ``order`` (longest first) in batches that fit ``budget``.

    On out-of-memory the budget is halved from the failing batch and the same items are
    planned again; ``forward`` must therefore write its results by item, so that a repeated
    item simply overwrites its own. Returns the budget in force at the end (callers keep it
    for their next call, so one failure is not paid for again). Re-raises an out-of-memory
    error of a single item, and any other error at once.
    """
    start = 0
    while start < len(order):
        batch, widths = next_batch(order, start, shapes, budget)
        if _fits_on_device(forward, batch):
            start += len(batch)
            advance(len(batch))
            continue
        # Outside the except block, so that the failed batch's tensors are already freed.
        release_cached_memory()
        budget = budget.halved(len(batch), widths)
        log.warning(
            "out of device memory on a batch of %d items (padded %s): retrying with at most "
            "%d items per batch",
            len(batch),
            "x".join(map(str, widths)),
            budget.max_rows,
        )
    return budget


def run_planned(
    batches: Sequence[Sequence[int]],
    shapes: Sequence[Shape],
    budget: Budget,
    forward: Callable[[list[int]], None],
    advance: Callable[[int], None] = lambda n: None,
) -> Budget:
    """Run ``forward`` over batches planned elsewhere (:func:`plan_batches` on another
    device's budget: the batches one device would run, shared out among several).

    A batch that runs out of memory here is run again through :func:`run_batches` under
    this device's halved budget; the budget in force at the end is returned.
    """
    for planned in batches:
        batch = list(planned)
        if _fits_on_device(forward, batch):
            advance(len(batch))
            continue
        release_cached_memory()
        widths = tuple(max(dims) for dims in zip(*(shapes[i] for i in batch), strict=True))
        budget = run_batches(batch, shapes, budget.halved(len(batch), widths), forward, advance)
    return budget


def _fits_on_device(forward: Callable[[list[int]], None], batch: list[int]) -> bool:
    try:
        forward(batch)
    except Exception as exc:
        if len(batch) > 1 and is_out_of_memory(exc):
            return False
        raise
    return True


def free_cuda_bytes(device: str) -> int | None:
    """Memory a new batch can take on a CUDA ``device`` (free plus the allocator's cached,
    unused blocks); None for any other device."""
    import torch

    dev = torch.device(device)
    if dev.type != "cuda":
        return None
    free, _total = torch.cuda.mem_get_info(dev)
    return int(free + torch.cuda.memory_reserved(dev) - torch.cuda.memory_allocated(dev))


def to_device(tensor: torch.Tensor, device: str) -> torch.Tensor:
    """Copy a host tensor to ``device`` without making the host wait for the device (pinned
    memory and a non-blocking copy on CUDA; a plain ``.to`` elsewhere)."""
    import torch

    if torch.device(device).type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


# --------------------------------------------------------------------------- several devices


def balance_bins(weights: Sequence[float], bins: int) -> list[list[int]]:
    """Split the units ``0 .. len(weights) - 1`` into ``bins`` bins of near-equal total weight.

    Greedy, heaviest first, each unit onto the bin with the least total so far (ties: the
    lowest bin): the longest-processing-time rule, whose largest bin is at most 4/3 of the
    best possible one. Every unit lands in exactly one bin; each bin lists its units in
    ascending order, so a bin keeps the relative order of the input. A bin may be empty
    (fewer units than bins).
    """
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    out: list[list[int]] = [[] for _ in range(bins)]
    loads = [(0.0, b) for b in range(bins)]  # a heap of (total weight, bin)
    for unit in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        total, b = heapq.heappop(loads)
        out[b].append(unit)
        heapq.heappush(loads, (total + weights[unit], b))
    return [sorted(units) for units in out]


def merge_bins(bins: Sequence[Sequence[int]], results: Sequence[Sequence[T]], n: int) -> list[T]:
    """The results of ``n`` items in input order, from each bin's results in that bin's order.

    ``bins`` must cover ``0 .. n - 1`` exactly once (raises ``ValueError`` otherwise), and
    each bin's results must align with its items.
    """
    merged: dict[int, T] = {}
    for items, values in zip(bins, results, strict=True):
        if len(items) != len(values):
            raise ValueError(f"a bin of {len(items)} items returned {len(values)} results")
        for item, value in zip(items, values, strict=True):
            if item in merged or not 0 <= item < n:
                raise ValueError(f"item {item} is out of range or in more than one bin")
            merged[item] = value
    if len(merged) != n:
        raise ValueError(f"the bins hold {len(merged)} of the {n} items")
    return [merged[i] for i in range(n)]


def run_per_device(jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Run each job (one device's bin) and return their results in order.

    One job runs in the calling thread, as with a single device always. Several run in one
    thread each: torch releases the GIL inside its kernels, so CUDA devices compute at once,
    and threads share what the caller prepared (the tokenised texts, the model cache) with
    no pickling. A process per device would need each model loaded in a spawned process and
    every text and score sent through a pipe, for no gain in a loop whose Python part is
    small. A job's error is raised once every job has ended.
    """
    if len(jobs) == 1:
        return [jobs[0]()]
    with ThreadPoolExecutor(len(jobs), thread_name_prefix="taxpraben-device") as pool:
        futures = [pool.submit(job) for job in jobs]
        return [future.result() for future in futures]


def share_out(
    workers: Sequence[W],
    units: Sequence[Sequence[int]],
    weights: Sequence[float],
    run: Callable[[W, list[int]], Sequence[T]],
    n: int,
) -> list[T]:
    """The results of ``n`` items, in input order, computed by ``workers`` (one per device).

    ``units`` are the pieces of work that stay whole (each lists the items it computes;
    together they cover ``0 .. n - 1`` once), of ``weights``. One worker takes them all, in
    order; several share them by :func:`balance_bins`. ``run(worker, unit_indices)`` computes
    a worker's share and returns a result per item of all ``n``, of which only those of its
    share are read. The workers run by :func:`run_per_device`, their results are put back in
    order by :func:`merge_bins`.
    """
    plan = [list(range(len(units)))] if len(workers) == 1 else balance_bins(weights, len(workers))
    results = run_per_device([partial(run, w, ids) for w, ids in zip(workers, plan, strict=True)])
    bins = [sorted(k for i in ids for k in units[i]) for ids in plan]
    return merge_bins(bins, [[r[k] for k in b] for r, b in zip(results, bins, strict=True)], n)
