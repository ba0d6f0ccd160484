"""Batch planning by budget and the out-of-memory back-off (the CUDA paths' logic, on CPU)."""

from __future__ import annotations

import itertools
import logging
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from taxpraben.compute.batches import (
    Budget,
    balance_bins,
    is_out_of_memory,
    merge_bins,
    padded_tokens,
    plan_batches,
    run_batches,
    run_per_device,
    run_planned,
)
from taxpraben.metrics.bartscore import seq2seq_budget
from taxpraben.metrics.bertscore import encoder_budget
from taxpraben.metrics.scorer_models import cpu_budget


def _longest_first(lengths: list[int]) -> list[int]:
    return sorted(range(len(lengths)), key=lambda i: -lengths[i])


@pytest.mark.parametrize(
    ("lengths", "budget", "expected"),
    [
        # 600 x 3 = 1800 fits 2048 padded tokens, a fourth row (2400) does not.
        ([600, 300, 300, 200, 100, 50], Budget(2048, 4), [[0, 1, 2], [3, 4, 5]]),
        # The row cap binds before the token budget.
        ([10, 10, 10, 10, 10], Budget(10_000, 2), [[0, 1], [2, 3], [4]]),
        # An item over budget on its own still runs, alone.
        ([5000, 10, 10], Budget(100, 8), [[0], [1, 2]]),
    ],
)
def test_plan_batches_table(
    lengths: list[int], budget: Budget, expected: list[list[int]]
) -> None:
    assert plan_batches(_longest_first(lengths), [(n,) for n in lengths], budget) == expected


def test_plan_covers_every_item_once_and_each_batch_fits() -> None:
    lengths = [(i * 37) % 301 + 1 for i in range(200)]
    order = _longest_first(lengths)
    budget = Budget(max_cost=4096, max_rows=16)
    batches = plan_batches(order, [(n,) for n in lengths], budget)
    assert [i for b in batches for i in b] == order  # longest first, nothing lost or repeated
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) == 1 or (len(batch) <= 16 and len(batch) * width <= 4096)
    # Greedy: the next item would not have fitted.
    for batch, nxt in itertools.pairwise(batches):
        width = max(lengths[i] for i in [*batch, nxt[0]])
        assert len(batch) == 16 or (len(batch) + 1) * width > 4096


def test_two_dimensional_shapes_pad_each_dimension() -> None:
    shapes = [(100, 10), (10, 100), (50, 50)]
    budget = Budget(max_cost=400, max_rows=8, cost=padded_tokens)
    # Rows 0 and 1 together pad to (100, 100): 2 x 200 = 400 fits; adding row 2 costs 600.
    assert plan_batches([0, 1, 2], shapes, budget) == [[0, 1], [2]]


def test_halved_budget_takes_half_the_failing_batch() -> None:
    budget = Budget(max_cost=10_000, max_rows=64)
    smaller = budget.halved(10, (300,))
    assert smaller.max_rows == 5 and smaller.max_cost == 1500
    assert budget.halved(1, (8,)).max_rows == 1
    with pytest.raises(ValueError, match="budget"):
        Budget(max_cost=0, max_rows=1)


class _Device:
    """A pretend device that runs out of memory above ``limit`` padded tokens."""

    def __init__(self, lengths: list[int], limit: int) -> None:
        self.lengths = lengths
        self.limit = limit
        self.failures = 0
        self.done: dict[int, int] = {}

    def forward(self, batch: list[int]) -> None:
        cost = len(batch) * max(self.lengths[i] for i in batch)
        if cost > self.limit:
            self.failures += 1
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        for i in batch:
            self.done[i] = self.done.get(i, 0) + 1


def test_out_of_memory_halves_the_batch_and_finishes(caplog: pytest.LogCaptureFixture) -> None:
    lengths = [(i * 53) % 200 + 20 for i in range(100)]
    order = _longest_first(lengths)
    device = _Device(lengths, limit=1500)
    progress: list[int] = []
    with caplog.at_level(logging.WARNING, logger="taxpraben.compute.batches"):
        final = run_batches(
            order, [(n,) for n in lengths], Budget(1e9, 64), device.forward, progress.append
        )
    assert device.done == dict.fromkeys(range(100), 1)  # each item ran once, successfully
    assert sum(progress) == 100
    assert device.failures >= 1 and "out of device memory" in caplog.text
    assert final.max_rows < 64
    # The returned budget avoids the failure next time: no new out-of-memory error.
    again = _Device(lengths, limit=1500)
    run_batches(order, [(n,) for n in lengths], final, again.forward)
    assert again.failures == 0 and len(again.done) == 100


def test_planned_batches_run_as_given_and_one_that_fails_is_split_here() -> None:
    """Batches planned on another device's budget run unchanged; a batch this device cannot
    hold runs again in smaller batches under its halved budget; every item runs once."""
    lengths = [(i * 37) % 150 + 10 for i in range(60)]
    shapes = [(n,) for n in lengths]
    order = _longest_first(lengths)
    planned = plan_batches(order, shapes, Budget(2000, 16))
    ran: list[list[int]] = []
    roomy = _Device(lengths, limit=10**9)

    def record(batch: list[int]) -> None:
        ran.append(list(batch))
        roomy.forward(batch)

    progress: list[int] = []
    run_planned(planned, shapes, Budget(1e9, 64), record, progress.append)
    assert ran == planned and sum(progress) == 60  # not re-planned on this device's budget
    tight = _Device(lengths, limit=900)
    final = run_planned(planned, shapes, Budget(1e9, 64), tight.forward)
    assert tight.failures >= 1 and tight.done == dict.fromkeys(range(60), 1)
    assert final.max_rows < 64


def test_single_item_out_of_memory_and_other_errors_raise() -> None:
    device = _Device([5000], limit=100)
    with pytest.raises(torch.OutOfMemoryError):
        run_batches([0], [(5000,)], Budget(1e9, 8), device.forward)

    calls = []

    def broken(batch: list[int]) -> None:
        calls.append(batch)
        raise ValueError("a bug, not memory")

    with pytest.raises(ValueError, match="a bug"):
        run_batches([0, 1], [(5,), (5,)], Budget(1e9, 8), broken)
    assert calls == [[0, 1]]  # not retried


def test_is_out_of_memory() -> None:
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory"))
    assert is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    assert not is_out_of_memory(ValueError("out of memory"))


# Dimensions of hfl/chinese-xlnet-base and facebook/bart-large-cnn.
XLNET = SimpleNamespace(d_model=768, d_inner=3072, n_head=12)
BART = SimpleNamespace(d_model=1024, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                       encoder_attention_heads=16, vocab_size=50265)  # fmt: skip


def test_device_budgets_scale_with_free_memory_and_width() -> None:
    small, large = encoder_budget(8e9, XLNET, "float32"), encoder_budget(80e9, XLNET, "float32")
    widths = [(w,) for w in [300] * 10_000]
    rows_small = len(plan_batches(list(range(10_000)), widths, small)[0])
    rows_large = len(plan_batches(list(range(10_000)), widths, large)[0])
    assert 1 < rows_small < rows_large <= 10_000
    # The attention term grows with the width: twice the width costs more than twice.
    assert small.cost(1, (1024,)) > 2 * small.cost(1, (512,))
    # bfloat16 activations take less memory: more rows fit.
    assert encoder_budget(8e9, XLNET, "bf16").cost(1, (300,)) < small.cost(1, (300,))


def test_bart_budget_counts_the_logits_per_target_token() -> None:
    budget = seq2seq_budget(80e9, BART, "float32")
    per_target = budget.cost(1, (0, 2)) - budget.cost(1, (0, 1))
    assert per_target >= BART.vocab_size * 12  # float32 logits and their log-softmax
    assert budget.cost(1, (100, 0)) < budget.cost(1, (0, 100))  # a source token is cheaper


def test_cpu_budget_is_texts_of_512_tokens() -> None:
    budget = cpu_budget(8)
    assert budget.max_rows == 8 and budget.fits(8, (512,)) and not budget.fits(5, (1000,))


# --------------------------------------------------------------------------- several devices


def _best_largest_bin(weights: list[int], bins: int) -> int:
    """The smallest possible largest bin total, by trying every assignment (small inputs)."""
    best = sum(weights)
    for assignment in itertools.product(range(bins), repeat=len(weights)):
        totals = [0] * bins
        for w, b in zip(weights, assignment, strict=True):
            totals[b] += w
        best = min(best, max(totals))
    return best


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 1000), max_size=8), st.integers(1, 3))
def test_bins_hold_every_unit_once_and_are_balanced(weights: list[int], bins: int) -> None:
    planned = balance_bins(weights, bins)
    assert len(planned) == bins
    assert sorted(u for b in planned for u in b) == list(range(len(weights)))  # each unit once
    assert all(b == sorted(b) for b in planned)  # input order kept within a bin
    totals = [sum(weights[u] for u in b) for b in planned]
    if weights:
        # Greedy onto the least-loaded bin: no bin exceeds another by more than one unit,
        # and the largest is within 4/3 of the best split (Graham's bound for this rule).
        assert max(totals) - min(totals) <= max(weights)
        assert 3 * max(totals) <= 4 * _best_largest_bin(weights, bins)


def test_bins_follow_the_longest_first_rule() -> None:
    # Heaviest first onto the lighter bin: 9 -> 0, 7 -> 1, 6 -> 1 (7 < 9), 5 -> 0 (9 < 13),
    # 2 -> 1 (13 < 14): totals 14 and 15.
    assert balance_bins([5, 9, 2, 7, 6], 2) == [[0, 1], [2, 3, 4]]
    assert balance_bins([4, 4, 4], 1) == [[0, 1, 2]]
    assert balance_bins([3], 3) == [[0], [], []]
    with pytest.raises(ValueError, match="bins must be >= 1"):
        balance_bins([1], 0)


def test_merge_restores_the_input_order() -> None:
    bins = [[1, 4], [0, 2, 3], []]
    results = [["b", "e"], ["a", "c", "d"], []]
    assert merge_bins(bins, results, 5) == ["a", "b", "c", "d", "e"]
    with pytest.raises(ValueError, match="2 items returned 1"):
        merge_bins([[0, 1]], [["a"]], 2)
    with pytest.raises(ValueError, match="more than one bin"):
        merge_bins([[0], [0]], [["a"], ["b"]], 1)
    with pytest.raises(ValueError, match="1 of the 2 items"):
        merge_bins([[0]], [["a"]], 2)


def test_per_device_jobs_return_in_order_and_raise_their_errors() -> None:
    import threading

    names: list[str] = []

    def job(value: int) -> int:
        names.append(threading.current_thread().name)
        return value * 10

    assert run_per_device([lambda: job(1)]) == [10]
    assert names == [threading.current_thread().name]  # one device: the caller's thread
    assert run_per_device([lambda: job(1), lambda: job(2), lambda: job(3)]) == [10, 20, 30]
    assert all(n.startswith("taxpraben-device") for n in names[1:])

    def broken() -> int:
        raise RuntimeError("device 1 failed")

    with pytest.raises(RuntimeError, match="device 1 failed"):
        run_per_device([lambda: job(1), broken])
