"""How a scoring job is configured: :class:`ScoringSettings`, its defaults and its checks.

A light module (no numpy, no parsers, no torch): the command line builds and checks the
settings, and shows their defaults in ``--help``, before anything heavy is imported. The
profiles and the scorer models' names, layer and environment variables are owned by
``metrics.defaults`` (the kinds and the scorers read them too); every other scoring default
is declared here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taxpraben.compute.devices import parse_devices
from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
    PROFILES,
    SCORER_DTYPES,
)


@dataclass
class ScoringSettings:
    """Everything a scoring job needs besides the data and the predictions.

    Raises ValueError (with the choices) for an unknown ``profile`` or ``scorer_dtype``.
    """

    #: One of PROFILES.
    profile: str = "taxpraben"
    bertscore_model: str = DEFAULT_BERTSCORE_MODEL
    bertscore_layer: int = DEFAULT_BERTSCORE_LAYER
    #: Cap on BERTScore input tokens; None: no cap (the reference).
    bertscore_max_tokens: int | None = None
    #: idf weighting of BERTScore tokens (off in TaxBen/TaxPraBen).
    bertscore_idf: bool = False
    #: Texts per BERTScore forward pass on CPU (on CUDA, batches are sized by free memory).
    bertscore_batch_size: int = 32
    bartscore_model: str = DEFAULT_BARTSCORE_MODEL
    #: Optional bart_score.pth state dict (ParaBank2-tuned weights).
    bartscore_weights: Path | str | None = None
    bartscore_batch_size: int = 8
    #: Device of the scorer models: auto, cuda, mps or cpu.
    device: str = "auto"
    #: One of SCORER_DTYPES; float32 gives the reference implementations' numbers.
    scorer_dtype: str = "float32"
    #: False: BERTScore/BARTScore not computed (their tasks are marked so, the overall partial).
    semantic: bool = True
    #: Bootstrap replicates for the sample-level intervals (0 turns them off).
    bootstrap: int = 1000
    seed: int = 0
    #: Expected run indices; None means the runs present in the predictions.
    runs: int | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown scoring profile {self.profile!r}; choose one of {', '.join(PROFILES)}")
        if self.scorer_dtype not in SCORER_DTYPES:
            raise ValueError(
                f"unknown scorer dtype {self.scorer_dtype!r}; choose one of {', '.join(SCORER_DTYPES)}"
            )
        # The device's syntax is checked here, before anything runs (no torch needed);
        # whether this machine has it is known only when the scorers are built.
        parse_devices(self.device)
