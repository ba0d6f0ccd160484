"""Options shared by several commands, each declared once, and the help panels they sit in.

The scoring options (``--profile``, ``--bertscore-*``, ``--bartscore-*``, ``--device``,
``--scorer-dtype``, ``--no-semantic``) are the fields of :class:`ScoringOptions`; a command
takes them all with one parameter ``scoring: ScoringOptions`` and the decorator
:func:`with_scoring_options`, which puts them on the command line in that parameter's place.
Their defaults are :class:`~taxpraben.scoring.settings.ScoringSettings`' own, so that the
command line and the library cannot drift apart.

Typer has no option groups: the options show in ``--help`` panels by ``rich_help_panel``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer
from rich.console import Console

from taxpraben.metrics.defaults import (
    ENV_BARTSCORE_MODEL,
    ENV_BARTSCORE_WEIGHTS,
    ENV_BERTSCORE_LAYER,
    ENV_BERTSCORE_MODEL,
)
from taxpraben.scoring.settings import ScoringSettings

# The help panels, in the order a reader of `run --help` needs them.
MODEL_PANEL = "Model"
DATA_PANEL = "Data"
GENERATION_PANEL = "Generation"
ENDPOINT_PANEL = "Endpoint and retries"
SCORING_PANEL = "Scoring"
OUTPUT_PANEL = "Output"

DataOpt = Annotated[
    str,
    typer.Option(
        "--data",
        help="Data directory (one file per dataset: NAME.jsonl/.json/.parquet or NAME/test.*), "
        "or 'sample' for the bundled sample.",
        envvar="TAXPRABEN_DATA",
        rich_help_panel=DATA_PANEL,
    ),
]
TaskDirOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--task-dir",
        help="Extra directory of task spec files (repeatable); also $TAXPRABEN_TASK_DIR.",
        rich_help_panel=DATA_PANEL,
    ),
]
TasksOpt = Annotated[
    str | None,
    typer.Option(
        "--tasks",
        help="Comma-separated task names (default: every task with data).",
        rich_help_panel=DATA_PANEL,
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit", min=1, help="Use only the first N records of each task.", rich_help_panel=DATA_PANEL
    ),
]
OutOpt = Annotated[
    Path | None, typer.Option("--out", help="Output directory.", rich_help_panel=OUTPUT_PANEL)
]
SeedOpt = Annotated[
    int, typer.Option("--seed", help="Seed for bootstrap intervals.", rich_help_panel=SCORING_PANEL)
]

#: The defaults of every scoring option.
_DEFAULT = ScoringSettings()


@dataclass(frozen=True)
class ScoringOptions:
    """The scoring options as given on the command line of ``run``, ``score`` and ``merge``.

    Each field is one option: its declaration is the field's annotation, its default the
    ScoringSettings default. :meth:`settings` turns them into the job's ScoringSettings.
    """

    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            help="Scoring profile: 'taxpraben' (default) or 'taxben' (TaxBen's exact rules).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.profile
    bertscore_model: Annotated[
        str,
        typer.Option(
            "--bertscore-model",
            envvar=ENV_BERTSCORE_MODEL,
            help="BERTScore model: hub id or local directory.",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bertscore_model
    bertscore_layer: Annotated[
        int,
        typer.Option(
            "--bertscore-layer",
            envvar=ENV_BERTSCORE_LAYER,
            min=0,
            help="BERTScore layer (0 is the embeddings).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bertscore_layer
    bertscore_max_tokens: Annotated[
        int | None,
        typer.Option(
            "--bertscore-max-tokens",
            help="Cap BERTScore inputs at N tokens to bound memory (default: no cap, as the reference).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bertscore_max_tokens
    bertscore_idf: Annotated[
        bool,
        typer.Option(
            "--bertscore-idf",
            help="Weight BERTScore tokens by idf over the references (not the protocol: off in "
            "TaxBen/TaxPraBen; recorded in results.json).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bertscore_idf
    bertscore_batch_size: Annotated[
        int,
        typer.Option(
            "--bertscore-batch-size",
            min=1,
            help="Texts per BERTScore forward pass on CPU (on CUDA, batches are sized by free memory).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bertscore_batch_size
    bartscore_model: Annotated[
        str,
        typer.Option(
            "--bartscore-model",
            envvar=ENV_BARTSCORE_MODEL,
            help="BARTScore model: hub id or local directory.",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bartscore_model
    bartscore_weights: Annotated[
        Path | None,
        typer.Option(
            "--bartscore-weights",
            envvar=ENV_BARTSCORE_WEIGHTS,
            help="Optional bart_score.pth state dict (ParaBank2-tuned weights used by TaxBen).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.bartscore_weights  # type: ignore[assignment]  # None: no weights
    device: Annotated[
        str,
        typer.Option(
            "--device",
            help="Device(s) for the scorer models (and an hf: model): auto, cpu, mps, cuda (every "
            "visible GPU), cuda:N, or a list such as cuda:0,cuda:1 that scoring is split across "
            "(an hf: model runs on the first).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.device
    scorer_dtype: Annotated[
        str,
        typer.Option(
            "--scorer-dtype",
            help="BERTScore/BARTScore arithmetic: float32 (default, equal to the reference code), "
            "tf32 or bf16 (faster on a GPU, not exact; recorded in results.json).",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = _DEFAULT.scorer_dtype
    no_semantic: Annotated[
        bool,
        typer.Option(
            "--no-semantic",
            help="Skip BERTScore/BARTScore: their tasks are marked 'not computed' and the overall partial.",
            rich_help_panel=SCORING_PANEL,
        ),
    ] = not _DEFAULT.semantic

    def settings(self, *, seed: int, runs: int | None) -> ScoringSettings:
        """The ScoringSettings of these options (progress shown); ValueError if not valid."""
        values = asdict(self)
        semantic = not values.pop("no_semantic")
        return ScoringSettings(**values, semantic=semantic, seed=seed, runs=runs, progress=True)

    @property
    def scorer_models(self) -> list[str]:
        """The semantic scorers' models (hub ids or local directories)."""
        return [self.bertscore_model, self.bartscore_model]


def scoring_settings_or_exit(
    scoring: ScoringOptions, console: Console, *, seed: int, runs: int | None
) -> ScoringSettings:
    """``scoring.settings(...)``; an invalid option is printed and ends the command (exit 2)."""
    try:
        return scoring.settings(seed=seed, runs=runs)
    except ValueError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from exc


Command = TypeVar("Command", bound=Callable[..., Any])


def with_scoring_options(command: Command) -> Command:
    """Give ``command`` the scoring options in place of its parameter ``scoring: ScoringOptions``.

    Typer reads a command's options from its signature: the returned function's signature
    has the fields of ScoringOptions (declarations, defaults) where ``scoring`` was, and it
    calls ``command`` with them gathered into one ScoringOptions. Called from Python, the
    options left out take their defaults.
    """
    signature = inspect.signature(command, eval_str=True)
    if "scoring" not in signature.parameters:
        raise TypeError(f"{command.__name__} has no parameter 'scoring: ScoringOptions'")
    declared = get_type_hints(ScoringOptions, include_extras=True)
    options = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=declared[f.name], default=f.default)
        for f in fields(ScoringOptions)
    ]
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.name == "scoring":
            parameters.extend(options)
        else:  # keyword-only: typer passes every value by name; no positional order to keep
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(command)
    def with_options(**kwargs: Any) -> Any:
        scoring = ScoringOptions(**{f.name: kwargs.pop(f.name, f.default) for f in fields(ScoringOptions)})
        return command(**kwargs, scoring=scoring)

    with_options.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    # Typer also reads the annotations (get_type_hints): give it the resolved ones.
    with_options.__annotations__ = {p.name: p.annotation for p in parameters}
    if signature.return_annotation is not inspect.Signature.empty:
        with_options.__annotations__["return"] = signature.return_annotation
    return with_options  # type: ignore[return-value]
