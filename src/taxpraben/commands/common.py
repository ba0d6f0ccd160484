"""Options shared by several commands, declared once (typer ``Annotated`` aliases)."""

from __future__ import annotations

import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

DataOpt = Annotated[
    str,
    typer.Option(
        "--data",
        help="Data directory (one file per dataset: NAME.jsonl/.json/.parquet or NAME/test.*), "
        "or 'sample' for the bundled sample.",
        envvar="TAXPRABEN_DATA",
    ),
]
TaskDirOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--task-dir",
        help="Extra directory of task spec files (repeatable); also $TAXPRABEN_TASK_DIR.",
    ),
]
TasksOpt = Annotated[
    str | None,
    typer.Option("--tasks", help="Comma-separated task names (default: every task with data)."),
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, help="Use only the first N records of each task.")
]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Output directory.")]
ProfileOpt = Annotated[
    str,
    typer.Option(
        "--profile",
        help="Scoring profile: 'taxpraben' (default) or 'taxben' (TaxBen's exact rules).",
    ),
]
BertModelOpt = Annotated[
    str,
    typer.Option(
        "--bertscore-model",
        envvar="TAXPRABEN_BERTSCORE_MODEL",
        help="BERTScore model: hub id or local directory.",
    ),
]
BertLayerOpt = Annotated[
    int,
    typer.Option("--bertscore-layer", envvar="TAXPRABEN_BERTSCORE_LAYER", help="BERTScore layer."),
]
BertMaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--bertscore-max-tokens",
        help="Cap BERTScore inputs at N tokens to bound memory (default: no cap, as the reference).",
    ),
]
BertIdfOpt = Annotated[
    bool,
    typer.Option(
        "--bertscore-idf",
        help="Weight BERTScore tokens by idf over the references (not the protocol: off in "
        "TaxBen/TaxPraBen; recorded in results.json).",
    ),
]
BertBatchOpt = Annotated[
    int,
    typer.Option(
        "--bertscore-batch-size",
        min=1,
        help="Texts per BERTScore forward pass on CPU (on CUDA, batches are sized by free memory).",
    ),
]
BartModelOpt = Annotated[
    str,
    typer.Option(
        "--bartscore-model",
        envvar="TAXPRABEN_BARTSCORE_MODEL",
        help="BARTScore model: hub id or local directory.",
    ),
]
BartWeightsOpt = Annotated[
    Path | None,
    typer.Option(
        "--bartscore-weights",
        envvar="TAXPRABEN_BARTSCORE_WEIGHTS",
        help="Optional bart_score.pth state dict (ParaBank2-tuned weights used by TaxBen).",
    ),
]
DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        help="Device(s) for the scorer models (and an hf: model): auto, cpu, mps, cuda (every "
        "visible GPU), cuda:N, or a list such as cuda:0,cuda:1 that scoring is split across "
        "(an hf: model runs on the first).",
    ),
]
ScorerDtypeOpt = Annotated[
    str,
    typer.Option(
        "--scorer-dtype",
        help="BERTScore/BARTScore arithmetic: float32 (default, equal to the reference code), "
        "tf32 or bf16 (faster on a GPU, not exact; recorded in results.json).",
    ),
]
NoSemanticOpt = Annotated[
    bool,
    typer.Option(
        "--no-semantic",
        help="Skip BERTScore/BARTScore: their tasks are marked 'not computed' and the overall partial.",
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for bootstrap intervals.")]


#: Width of tables printed to a pipe or file: wide enough that no table of ours wraps
#: (tables take their natural width, not this one).
PIPE_WIDTH = 240


def cli_console(*, stderr: bool = False) -> Console:
    """The console every command prints through.

    On a terminal, rich wraps to its width. When the stream is not a terminal (a pipe, a
    log file, a test's captured output), printed messages are never hard-wrapped: one
    message per line, paths whole, so that ``grep`` finds them (``soft_wrap``); and tables
    get room for their natural width (a pipe has no width; ``COLUMNS`` describes a
    terminal), so the same command prints the same lines whatever terminal launched it.
    """
    stream = sys.stderr if stderr else sys.stdout
    if getattr(stream, "isatty", lambda: False)():
        return Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=PIPE_WIDTH)


#: Seconds the hub gets to answer before scorer models are taken from the local cache only.
HUB_PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


def hub_reachable(endpoint: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """True when ``endpoint`` answers anything (any HTTP status) within ``timeout`` seconds.

    Runs in a daemon thread joined with the timeout, because a DNS lookup is not bounded by
    a socket timeout (without a network it can take as long as the resolver likes).
    """
    answered: list[bool] = []

    def probe() -> None:
        try:
            urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout)
            answered.append(True)
        except urllib.error.HTTPError:
            answered.append(True)  # a status is an answer
        except (OSError, ValueError):
            answered.append(False)

    worker = threading.Thread(target=probe, daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    return bool(answered and answered[0])


def use_local_models_if_hub_unreachable(models: Iterable[str], console: Console) -> None:
    """Before scoring: if a scorer model must come from the Hugging Face hub and the hub does
    not answer within seconds, set ``HF_HUB_OFFLINE=1`` for this process and say so.

    Without this, the hub client retries for minutes on a machine without internet before
    the scorer gives up (or before it uses the copy it already has in its cache). With it,
    a cached model is used at once, and a model that is not cached makes its tasks "not
    computed" at once, with the way to get it. Nothing is probed when the models are local
    directories or ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` is already set.
    """
    if any(os.environ.get(flag, "").strip().lower() in _TRUE for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return
    hub_ids = [m for m in models if m and not Path(m).expanduser().exists()]
    if not hub_ids:
        return
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    if hub_reachable(endpoint):
        return
    os.environ["HF_HUB_OFFLINE"] = "1"
    console.print(
        f"The Hugging Face hub ({endpoint}) did not answer within {HUB_PROBE_TIMEOUT_S:g} s: "
        f"the scorer models ({', '.join(hub_ids)}) are taken from the local cache only "
        "(HF_HUB_OFFLINE=1 for this run; set it yourself to skip this check).",
        style="yellow", markup=False, highlight=False,
    )  # fmt: skip
