"""The options of what a run may cost and how it is sent: prices, the budget, the batch APIs, and
what ``estimate`` assumes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taxpraben.models.defaults import (
    DEFAULT_BATCH_POLL_S,
)
from taxpraben.options.declare import (
    COST_PANEL,
    ENDPOINT_PANEL,
    OUTPUT_PANEL,
    declare,
)


@dataclass(frozen=True, kw_only=True)
class PricingOptions:
    """What answers cost (``run``, ``score``, ``estimate``): the prices of a pricing file."""

    pricing: Path | None = declare(
        None, flag="--pricing", brief="Pricing file (YAML): prices per million tokens, for the cost.", envvar="TAXPRABEN_PRICING",
        help="Pricing file (YAML): per model, input and output prices per million tokens and a currency "
        "(README, 'What a run costs'); the cost then appears in results.json and the reports.",
        panel=COST_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class BudgetOptions:
    """What ``run`` may spend before it stops sending."""

    budget_tokens: int | None = declare(
        None, flag="--budget-tokens", brief="Stop sending before N tokens would be spent (exit 3; resumable).", min=1,
        help="Stop sending before the tokens spent (prompt + completion, as reported; a request in flight "
        "counts its prompt estimate + --max-tokens) would exceed N; the run exits with status 3 and resumes "
        "from the cache when run again with a larger budget.",
        panel=COST_PANEL,
    )  # fmt: skip
    budget_cost: float | None = declare(
        None, flag="--budget-cost", brief="As --budget-tokens, in the pricing file's currency.", min=0.0,
        help="As --budget-tokens, in the pricing file's currency (needs --pricing).", panel=COST_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """``run`` through a provider's batch API (openai: models only): half price, within 24 hours."""

    batch: bool = declare(
        False, flag="--batch", brief="Send the missing requests as one OpenAI Batch API job (half price, within 24 h).",
        help="Send the missing requests as one batch job (OpenAI Batch API: /v1/files, /v1/batches; half "
        "price, answered within 24 h), poll it, cache its answers; what it did not answer goes the normal "
        "way. Interrupted, a rerun resumes polling the same batch. openai: models only.",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    batch_file_only: bool = declare(
        False, flag="--batch-file-only", brief="Write OUT/batch_input.jsonl and stop (score it with score --batch-output).",
        help="Write OUT/batch_input.jsonl (the requests not in the cache, OpenAI batch format) and stop: run it "
        "with vLLM's run_batch or a provider's console, then `taxpraben score --batch-output FILE`.",
        panel=ENDPOINT_PANEL,
    )  # fmt: skip
    batch_poll: float = declare(
        DEFAULT_BATCH_POLL_S, flag="--batch-poll", brief="--batch: seconds between two polls.", min=0.001,
        help="--batch: seconds between two polls of the batch's status.", panel=ENDPOINT_PANEL,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class EstimateOptions:
    """How ``estimate`` counts prompt tokens, and where it writes its figures."""

    tokenizer: str | None = declare(
        None, flag="--tokenizer", brief="Hugging Face tokenizer to count prompt tokens with.",
        help="Count prompt tokens with this Hugging Face tokenizer and its chat template: a local directory "
        "(or a hub id already in the local cache). Default: an hf: model's own tokenizer, else an approximation "
        "calibrated on Qwen2.5 (README, 'What a run costs').",
        panel=COST_PANEL,
    )  # fmt: skip
    json_out: Path | None = declare(
        None, flag="--json", help="Also write the estimate's figures to this JSON file.", panel=OUTPUT_PANEL
    )
