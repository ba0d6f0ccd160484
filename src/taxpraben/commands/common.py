"""Options shared by several commands, declared once (typer ``Annotated`` aliases)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
    typer.Option("--device", help="Device for the scorer models: auto, cuda, mps or cpu."),
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
