"""A spending limit for a run: ``--budget-tokens`` and ``--budget-cost``.

The runner asks the budget before each attempt. An attempt is admitted only when what has
been spent, plus what the attempts in flight may still spend, plus this attempt's worst
case (its prompt estimate and the full ``--max-tokens``) stays within every limit; so a
run stops sending *before* it would exceed the budget, never after. When an answer
arrives its reservation is replaced by what the backend reported (``usage``; the worst case
when it reported nothing); a failed attempt is charged nothing. Answers from the cache cost
nothing and never reach the budget.

Once an attempt is refused, the run sends nothing more: the attempts in flight finish, what
they brought is kept (in the cache and in ``predictions.jsonl``), and the run ends with
:data:`BUDGET_EXIT` and a line saying how to go on (the same command with a larger budget
resumes from the cache without paying twice).

The judge of ``run --judge`` spends the same budget (:class:`BudgetShare`: the same limits
and totals, the judge's own prices); a refusal of either stops both (:attr:`Budget.refused`).
Both runners share one event loop, so the budget is used from one thread only and needs no lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

#: The exit status of a run stopped by its budget (0 ok, 1 failures, 2 usage errors, 130 Ctrl-C).
BUDGET_EXIT = 3

#: A budget named to finish a stopped run allows the prompts' token estimates this much error.
PROMPT_ESTIMATE_MARGIN = 1.1

#: The cost of (prompt tokens, completion tokens, cached prompt tokens).
CostOf = Callable[[int, int, int], float]


@dataclass
class Budget:
    """Token and cost limits, what has been spent, and what the attempts in flight hold."""

    tokens: int | None = None
    cost: float | None = None
    #: Prices the tokens (required for a cost limit).
    cost_of: CostOf | None = None
    spent_tokens: int = 0
    spent_cost: float = 0.0
    reserved_tokens: int = 0
    reserved_cost: float = 0.0
    #: Attempts refused (the run stops sending at the first).
    refused: int = field(default=0)

    def __post_init__(self) -> None:
        if self.cost is not None and self.cost_of is None:
            raise ValueError("a cost budget needs prices (--pricing with an entry for the model)")

    def _price(self, prompt: int, completion: int, cached: int = 0, cost_of: CostOf | None = None) -> float:
        prices = cost_of or self.cost_of
        return prices(prompt, completion, cached) if prices is not None else 0.0

    def admit(self, prompt: int, completion: int, cost_of: CostOf | None = None) -> bool:
        """Reserve an attempt's worst case (``prompt`` + ``completion`` tokens) if it fits;
        ``cost_of``: the spender's prices when they are not the budget's own (the judge's)."""
        tokens, cost = prompt + completion, self._price(prompt, completion, cost_of=cost_of)
        if self.tokens is not None and self.spent_tokens + self.reserved_tokens + tokens > self.tokens:
            self.refused += 1
            return False
        if self.cost is not None and self.spent_cost + self.reserved_cost + cost > self.cost * (1 + 1e-12):
            self.refused += 1
            return False
        self.reserved_tokens += tokens
        self.reserved_cost += cost
        return True

    def price(self, prompt: int, completion: int) -> float:
        """What ``prompt`` and ``completion`` tokens cost at the budget's prices (0 without)."""
        return self._price(prompt, completion)

    def release(self, prompt: int, completion: int, cost_of: CostOf | None = None) -> None:
        """An admitted attempt failed: its reservation is freed, nothing is charged."""
        self.reserved_tokens -= prompt + completion
        self.reserved_cost -= self._price(prompt, completion, cost_of=cost_of)

    def settle(self, prompt: int, completion: int, usage: Mapping[str, JSONValue] | None,
               cost_of: CostOf | None = None) -> None:  # fmt: skip
        """An admitted attempt was answered: charge what the backend reported (the
        reservation itself when it reported nothing)."""
        self.release(prompt, completion, cost_of)
        if usage and ("prompt_tokens" in usage or "completion_tokens" in usage):
            prompt_used, completion_used = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            cached = int(usage.get("cached_prompt_tokens") or 0)
        else:
            prompt_used, completion_used, cached = prompt, completion, 0
        self.spent_tokens += prompt_used + completion_used
        self.spent_cost += self._price(prompt_used, completion_used, cached, cost_of)

    def describe(self) -> str:
        """What was spent against which limit, in words."""
        parts = []
        if self.tokens is not None:
            parts.append(f"{self.spent_tokens:,} of {self.tokens:,} tokens")
        if self.cost is not None:
            parts.append(f"{self.spent_cost:,.4f} of {self.cost:,.4f}")
        return " and ".join(parts) or "no limit"


@dataclass(frozen=True)
class BudgetShare:
    """``budget`` as a second spender uses it (the judge of ``run --judge``): the same limits,
    the same totals (what either spent, what either has in flight) and refusals, its tokens
    priced by its own ``cost_of``; the runner takes it where it takes a :class:`Budget`."""

    budget: Budget
    #: None: its tokens cost nothing (a token budget counts them all the same).
    cost_of: CostOf | None = None

    @property
    def refused(self) -> int:
        return self.budget.refused

    def _prices(self) -> CostOf:
        return self.cost_of or _free

    def admit(self, prompt: int, completion: int) -> bool:
        return self.budget.admit(prompt, completion, self._prices())

    def price(self, prompt: int, completion: int) -> float:
        return self._prices()(prompt, completion, 0)

    def release(self, prompt: int, completion: int) -> None:
        self.budget.release(prompt, completion, self._prices())

    def settle(self, prompt: int, completion: int, usage: Mapping[str, JSONValue] | None) -> None:
        self.budget.settle(prompt, completion, usage, self._prices())

    def describe(self) -> str:
        return self.budget.describe()


def _free(prompt: int, completion: int, cached: int) -> float:
    return 0.0
