"""The options of scoring: the scorers and profile (``ScoringOptions``) and the second reader
(``JudgeOptions``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from taxpraben.metrics.defaults import (
    ENV_BARTSCORE_MODEL,
    ENV_BARTSCORE_WEIGHTS,
    ENV_BERTSCORE_LAYER,
    ENV_BERTSCORE_MODEL,
    PROFILES,
    SCORER_DTYPES,
)
from taxpraben.models.defaults import (
    DEFAULT_JUDGE_CONCURRENCY,
    DEFAULT_JUDGE_TIMEOUT_S,
)
from taxpraben.options.checks import (
    check_devices,
    check_judge_spec,
    one_of,
)
from taxpraben.options.declare import (
    SCORING_PANEL,
    declare,
)
from taxpraben.scoring.settings import ScoringSettings

_SCORING = ScoringSettings()


@dataclass(frozen=True, kw_only=True)
class ScoringOptions:
    """The scoring options of ``run``, ``score`` and ``merge``; defaults are ScoringSettings'
    own. :meth:`settings` turns them into the job's ScoringSettings."""

    profile: str = declare(
        _SCORING.profile, flag="--profile", brief="Scoring profile: taxpraben or taxben (TaxBen's exact rules).", check=one_of(PROFILES, "scoring profile"),
        help="Scoring profile: 'taxpraben' (default) or 'taxben' (TaxBen's exact rules).", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_model: str = declare(
        _SCORING.bertscore_model, flag="--bertscore-model", brief="BERTScore model: hub id or local directory.", envvar=ENV_BERTSCORE_MODEL,
        help="BERTScore model: hub id or local directory.", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_layer: int = declare(
        _SCORING.bertscore_layer, flag="--bertscore-layer", brief="BERTScore layer (0 is the embeddings).", envvar=ENV_BERTSCORE_LAYER, min=0,
        help="BERTScore layer (0 is the embeddings).", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_max_tokens: int | None = declare(
        _SCORING.bertscore_max_tokens, flag="--bertscore-max-tokens", brief="Cap BERTScore inputs at N tokens (default: no cap).", min=1,
        help="Cap BERTScore inputs at N tokens to bound memory (default: no cap, as the reference).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_idf: bool = declare(
        _SCORING.bertscore_idf, flag="--bertscore-idf", brief="Weight BERTScore tokens by idf (not the protocol).",
        help="Weight BERTScore tokens by idf over the references (not the protocol: off in TaxBen/TaxPraBen; "
        "recorded in results.json).", panel=SCORING_PANEL,
    )  # fmt: skip
    bertscore_batch_size: int = declare(
        _SCORING.bertscore_batch_size, flag="--bertscore-batch-size", brief="Texts per BERTScore forward pass on CPU.", min=1,
        help="Texts per BERTScore forward pass on CPU (on CUDA, batches are sized by free memory).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    bartscore_model: str = declare(
        _SCORING.bartscore_model, flag="--bartscore-model", brief="BARTScore model: hub id or local directory.", envvar=ENV_BARTSCORE_MODEL,
        help="BARTScore model: hub id or local directory.", panel=SCORING_PANEL,
    )  # fmt: skip
    bartscore_weights: Path | None = declare(
        None, flag="--bartscore-weights", brief="bart_score.pth state dict (TaxBen's ParaBank2 weights).", envvar=ENV_BARTSCORE_WEIGHTS,
        help="Optional bart_score.pth state dict (ParaBank2-tuned weights used by TaxBen).", panel=SCORING_PANEL,
    )  # fmt: skip
    device: str = declare(
        _SCORING.device, flag="--device", brief="Device(s) for scorer models and an hf: model: auto, cpu, mps, cuda[:N].", check=check_devices,
        help="Device(s) for the scorer models (and an hf: model): auto, cpu, mps, cuda (every visible GPU), "
        "cuda:N, or a list such as cuda:0,cuda:1 that scoring is split across (an hf: model runs on the "
        "first).", panel=SCORING_PANEL,
    )  # fmt: skip
    scorer_dtype: str = declare(
        _SCORING.scorer_dtype, flag="--scorer-dtype", brief="Scorer arithmetic: float32 (exact), tf32 or bf16.", check=one_of(SCORER_DTYPES, "scorer dtype"),
        help="BERTScore/BARTScore arithmetic: float32 (default, equal to the reference code), tf32 or bf16 "
        "(faster on a GPU, not exact; recorded in results.json).", panel=SCORING_PANEL,
    )  # fmt: skip
    no_semantic: bool = declare(
        not _SCORING.semantic, flag="--no-semantic", brief="Skip BERTScore/BARTScore (their tasks not computed).",
        help="Skip BERTScore/BARTScore: their tasks are marked 'not computed' and the overall partial.",
        panel=SCORING_PANEL,
    )  # fmt: skip

    def settings(self, *, seed: int, runs: int | None) -> ScoringSettings:
        """The ScoringSettings of these options (progress shown); ValueError if not valid."""
        values = dataclasses.asdict(self)
        semantic = not values.pop("no_semantic")
        return ScoringSettings(**values, semantic=semantic, seed=seed, runs=runs, progress=True)

    @property
    def scorer_models(self) -> list[str]:
        """The semantic scorers' models (hub ids or local directories)."""
        return [self.bertscore_model, self.bartscore_model]


@dataclass(frozen=True, kw_only=True)
class JudgeOptions:
    """The second reader of ``run`` and ``score``: a judge model reads the answers the rules
    cannot (README, "A second reader")."""

    judge: str | None = declare(
        None, flag="--judge", brief="Judge model (openai:NAME, hf:PATH) for the answers the rules could not read.", check=check_judge_spec,
        help="A judge model (openai:NAME with --judge-base-url, hf:PATH) reads the answers the rules left as "
        "format failures (classification and structured tasks); its reply is read by the task's own reader. "
        "It never sees the gold. Cached like a generation.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_base_url: str | None = declare(
        None, flag="--judge-base-url", help="--judge openai:NAME: its OpenAI-compatible endpoint.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_api_key_env: str | None = declare(
        None, flag="--judge-api-key-env", brief="--judge: variable holding its API key.",
        help="--judge: the environment variable holding its API key (default OPENAI_API_KEY).", panel=SCORING_PANEL,
    )  # fmt: skip
    judge_audit: int = declare(
        0, flag="--judge-audit", brief="--judge: also check N read answers per task (agreement, Wilson 95%).", min=0,
        help="--judge: also ask it for N answers per task the rules did read (seeded by --seed) and report how "
        "often both agree, with a 95% Wilson interval.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_max_items: int | None = declare(
        None, flag="--judge-max-items", brief="--judge: send at most N distinct requests.", min=0,
        help="--judge: send at most N distinct requests (format failures first, then the audit); the rest stay "
        "as the rules read them.",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_concurrency: int = declare(
        DEFAULT_JUDGE_CONCURRENCY, flag="--judge-concurrency", brief="--judge: its requests in flight.", min=1,
        help="--judge: its requests in flight, in score and run alike (the default suits a judge served locally on "
        "one slot; raise it for a hosted API or a server with several slots).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_timeout: float = declare(
        DEFAULT_JUDGE_TIMEOUT_S, flag="--judge-timeout", brief="--judge: seconds per attempt.", min=0.001,
        help="--judge: seconds per attempt of its requests (streamed: the longest wait for a first token, which "
        "on a local server includes the answers queued before it).",
        panel=SCORING_PANEL,
    )  # fmt: skip
    judge_prompt: Path | None = declare(
        None, flag="--judge-prompt", brief="--judge: a prompt template replacing the built-in one.",
        help="--judge: a prompt template replacing the built-in one (placeholders {question}, {options}, "
        "{answer_form}, {output}; a '#version: NAME' line).",
        panel=SCORING_PANEL,
    )  # fmt: skip
