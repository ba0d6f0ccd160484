"""What the answers cost and how they ended: the ledger of one task, or of a whole run.

Read from the items' generations (the predictions contract's ``usage``, ``finish_reason`` and
``cached``), so that ``run``, ``score`` of a predictions file and ``merge`` count alike:

- **answers** are the predictions lines, over every run; **truncated** the ones whose
  generation stopped at the token budget (``finish_reason: length``). A truncated answer is
  scored as the rules read it (often a format failure or wrong); it is counted, shown and
  filterable, never re-run silently.
- **generations** are what was generated: one per answer, except that runs sharing one
  generation (deterministic decoding, ``meta.shared_generation``) count it once, on the
  record's first run; so do, in a predictions file that does not say so, runs that are
  copies of one another: in every record of the task with more than one run, each run's
  line has the same text, usage, finish reason, error and latency (a copy, not a second
  request). The test is made over the whole task, never item by item: two independent
  requests may well give the same text and usage with latencies equal to the 0.1 ms a
  file keeps, but not every record's runs at once. Their tokens are added up apart for the
  generations made in this run (``generated``) and those taken from the completion cache
  (``from_cache``: paid for by an earlier run, nothing in this one).
- **cost**: with a price (``--pricing``), per million tokens; cached prompt tokens at the
  cached-input price where the backend reported them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from taxpraben.costs.budget import CostOf
from taxpraben.costs.tokens import COUNTED_BY
from taxpraben.results import Prediction

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject

#: ``finish_reason`` of an answer cut at the token budget (OpenAI, vLLM, SGLang; hf: the same).
TRUNCATED = "length"

__all__ = ["TRUNCATED", "CostOf", "generation_tallies", "task_ledger", "total_ledger"]


_TOKENS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_prompt_tokens")


def _tally(cost_of: CostOf | None) -> JSONObject:
    return {"generations": 0, **dict.fromkeys(_TOKENS, 0), "without_usage": 0, "counted_by_taxpraben": 0,
            "cost": 0.0 if cost_of is not None else None}  # fmt: skip


def _add(tally: JSONObject, usage: JSONObject | None, cost_of: CostOf | None) -> None:
    tally["generations"] += 1
    if not usage:
        tally["without_usage"] += 1
        return
    tally["counted_by_taxpraben"] += COUNTED_BY in usage
    counts = {k: int(usage.get(k) or 0) for k in _TOKENS}
    for key, value in counts.items():
        tally[key] += value
    if cost_of is not None:
        tally["cost"] += cost_of(counts["prompt_tokens"], counts["completion_tokens"], counts["cached_prompt_tokens"])


class Answered(Protocol):
    """What the ledger reads of a scored answer (an item of any kind): its record id and its
    generation (None when no prediction was made). A protocol, so that costs sit below the kinds."""

    @property
    def id(self) -> str: ...

    @property
    def generation(self) -> Prediction | None: ...


def generation_tallies(
    generations: Iterable[Prediction], cost_of: CostOf | None = None
) -> dict[str, JSONObject]:
    """The tokens (and cost) of ``generations`` made here and taken from the cache, as a
    task ledger counts them (failed ones are not billed): the judge's requests, counted apart
    from the model's."""
    made, cached = _tally(cost_of), _tally(cost_of)
    for generation in generations:
        if not generation.error:
            _add(cached if generation.cached else made, generation.usage, cost_of)
    return {"generated": _rounded(made), "from_cache": _rounded(cached)}


def task_ledger(
    items_by_run: Sequence[Sequence[Answered]], *, shared_generation: bool = False, cost_of: CostOf | None = None
) -> JSONObject:
    """The ledger of one task's items (``items_by_run``: run by run, each in record order)."""
    finish: Counter[str] = Counter()
    generated, cached = _tally(cost_of), _tally(cost_of)
    answers = truncated = 0
    shared_generation = shared_generation or _runs_are_copies(items_by_run)
    for k, row in enumerate(items_by_run):
        for item in row:
            generation = item.generation
            if generation is None:  # no prediction at all: nothing was asked, nothing answered
                continue
            answers += 1
            reason = generation.finish_reason or ("error" if generation.error else "not reported")
            finish[reason] += 1
            truncated += reason == TRUNCATED
            if generation.error or (shared_generation and k > 0):
                continue  # a failed request is not billed; a shared generation counts once
            _add(cached if generation.cached else generated, generation.usage, cost_of)
    return {
        "answers": answers,
        "truncated": truncated,
        "truncated_rate": truncated / answers if answers else 0.0,
        "finish_reasons": dict(finish.most_common()),
        "generated": _rounded(generated),
        "from_cache": _rounded(cached),
    }


def _runs_are_copies(items_by_run: Sequence[Sequence[Answered]]) -> bool:
    """True when the later runs are copies of run 0: some record has more than one run, and
    in every such record each run's generation is the first's to the latency (which must be
    given: without it, two requests cannot be told from a copy)."""
    if len(items_by_run) < 2:
        return False
    first: dict[str, tuple[object, ...]] = {}
    compared = False
    for row in items_by_run:
        for item in row:
            generation = item.generation
            if generation is None:
                continue
            if generation.latency_s is None:
                return False
            mark = (generation.prediction, repr(generation.usage), generation.finish_reason, generation.error,
                    generation.latency_s)  # fmt: skip
            known = first.setdefault(item.id, mark)
            if known is not mark:
                if known != mark:
                    return False
                compared = True
    return compared


def total_ledger(ledgers: Iterable[JSONObject]) -> JSONObject:
    """The ledger of a whole run: the tasks' ledgers added up."""
    ledgers = list(ledgers)
    finish: Counter[str] = Counter()
    out: JSONObject = {"answers": 0, "truncated": 0}
    parts: dict[str, JSONObject] = {}
    for ledger in ledgers:
        out["answers"] += ledger["answers"]
        out["truncated"] += ledger["truncated"]
        finish.update(ledger["finish_reasons"])
        for part in ("generated", "from_cache"):
            into = parts.setdefault(part, {k: (None if k == "cost" else 0) for k in ledger[part]})
            for key, value in ledger[part].items():
                if value is not None:
                    into[key] = (into[key] or 0) + value
    out["truncated_rate"] = out["truncated"] / out["answers"] if out["answers"] else 0.0
    out["finish_reasons"] = dict(finish.most_common())
    for part in ("generated", "from_cache"):
        out[part] = _rounded(parts.get(part) or _tally(None))
    return out


def _rounded(tally: JSONObject) -> JSONObject:
    if tally.get("cost") is not None:
        tally = {**tally, "cost": round(float(tally["cost"]), 6)}
    return tally
