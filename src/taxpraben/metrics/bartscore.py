"""BARTScore, exact to the original BARTScore code.

Source = prediction, target = gold, both truncated to ``max_length`` tokens, score = mean
log-likelihood per target token (``<s>`` and ``</s>`` included), a negative number;
:func:`normalize_bartscore` maps it to ``exp(raw)`` in (0, 1]. Batching, devices, dtype and
model loading are those of ``metrics.scorer_models``; on several devices the batches that one
device would run are shared out whole, so that each pair's score is the same to the bit.
"""

from __future__ import annotations

import logging
import math
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from taxpraben.compute import batches as _batching
from taxpraben.compute.batches import (
    Budget,
    padded_tokens,
    plan_batches,
    run_batches,
    run_planned,
    share_out,
    to_device,
)
from taxpraben.metrics import scorer_models
from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    ENV_BARTSCORE_MODEL,
    ENV_BARTSCORE_WEIGHTS,
)
from taxpraben.metrics.scorer_models import (
    DeviceScorer,
    ScorerUnavailable,
)

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

    from taxpraben.results.json_value import JSONObject

__all__ = ["BartScorer", "normalize_bartscore", "seq2seq_budget"]

log = logging.getLogger(__name__)


def normalize_bartscore(raw: float) -> float:
    """Map a raw BARTScore (mean token log-likelihood, <= 0) to ``exp(raw)`` in (0, 1].

    Rounding can leave a raw score a hair above 0; the result is capped at 1. A raw score
    below about -745 underflows to 0.0.
    """
    return min(math.exp(raw), 1.0)


def seq2seq_budget(free_bytes: float, config: PretrainedConfig, dtype: str) -> Budget:
    """Budget of a BART forward pass with its log-likelihood, batches shaped (source,
    target): encoder activations per source token, decoder activations and the logits
    (vocabulary-wide, in the model's dtype, then float32 for the log-softmax) per target
    token, and the self- and cross-attention matrices."""
    hidden, _, heads = scorer_models.model_dims(config)
    ffn = int(getattr(config, "decoder_ffn_dim", None) or 4 * hidden)
    vocab = int(getattr(config, "vocab_size", 50265))
    elem = 2 if dtype == "bf16" else 4
    per_source = elem * (10 * hidden + 2 * ffn)
    per_target = elem * (14 * hidden + 2 * ffn) + vocab * (elem + 8)
    per_pair = elem * 3 * heads

    def cost(rows: int, widths: tuple[int, ...]) -> float:
        source, target = widths
        attention = per_pair * (source * source + target * target + source * target)
        return rows * (source * per_source + target * per_target + attention)

    return Budget(
        max_cost=free_bytes * _batching.DEVICE_MEMORY_FRACTION, max_rows=1 << 16, cost=cost
    )


@dataclass(frozen=True)
class _BartModel:
    tokenizer: PreTrainedTokenizerBase
    model: PreTrainedModel


def _load_bart(model: str, weights: str | None, device: str, dtype: str = "float32") -> _BartModel:
    source = scorer_models.resolve_source("BARTScore", model)
    weights_path = None
    if weights is not None:
        weights_path = Path(weights).expanduser().resolve()
        if not weights_path.is_file():
            raise ScorerUnavailable(
                f"BARTScore weights {weights!r} not found: pass --bartscore-weights (or set "
                f"{ENV_BARTSCORE_WEIGHTS}) to a bart_score.pth state dict, such as the "
                "ParaBank2-tuned file published with BARTScore, or leave it unset to use "
                "the model's own weights."
            )

    def load() -> _BartModel:
        from transformers import AutoModelForSeq2SeqLM

        tokenizer, seq2seq = scorer_models.load_pretrained("BARTScore", model, source, AutoModelForSeq2SeqLM)
        if weights_path is not None:
            _load_state_dict(seq2seq, weights_path)
        return _BartModel(tokenizer, seq2seq.eval().to(device, scorer_models.weights_dtype(dtype)))

    key = ("bart", source, str(weights_path), device, str(scorer_models.weights_dtype(dtype)))
    return scorer_models.cached(key, load)


def _load_state_dict(model: torch.nn.Module, path: Path) -> None:
    """Load a ``bart_score.pth`` state dict; only weights tied to loaded ones may be missing."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        missing, unexpected = model.load_state_dict(state, strict=False)
    except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError) as exc:
        # Unreadable, not a plain state dict, or shapes that do not fit the model.
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ScorerUnavailable(
            f"BARTScore weights {str(path)!r} cannot be loaded: {reason}. Pass a state dict "
            "saved with torch.save(model.state_dict()) for this model, such as bart_score.pth."
        ) from exc
    params = model.state_dict()
    loaded = {params[k].data_ptr() for k in state if k in params}
    untied = [k for k in missing if params[k].data_ptr() not in loaded]
    if untied:
        raise ScorerUnavailable(
            f"BARTScore weights {str(path)!r} do not fit the model: missing {untied[:5]}"
        )
    if unexpected:
        log.warning("BARTScore weights %s: ignored keys %s", path, list(unexpected)[:5])


class BartScorer(DeviceScorer):
    """BARTScore (mean token log-likelihood of target given source) with a model it owns.

    ``weights`` is an optional ``bart_score.pth`` state dict loaded over the model. Both
    sides are truncated to ``max_length`` tokens. An empty target still has ``<s></s>``,
    so it gets a (finite) score like any other text. ``batch_size`` is the pairs per
    forward pass off CUDA (of up to 512 tokens each); on CUDA batches are sized by free
    memory. ``dtype`` is one of ``SCORER_DTYPES``. ``device`` is a ``--device`` value
    (``taxpraben.compute.devices``): several devices split each call's pairs. Raises
    ``ScorerUnavailable`` when the model or the weights cannot be loaded and ``DeviceError``
    for a device this machine does not have. :meth:`from_env` reads
    ``TAXPRABEN_BARTSCORE_MODEL`` / ``_WEIGHTS``.
    """

    name: ClassVar[str] = "BARTScore"

    def __init__(
        self,
        model: str = DEFAULT_BARTSCORE_MODEL,
        *,
        weights: str | None = None,
        batch_size: int = 8,
        device: str = "auto",
        max_length: int = 1024,
        progress: bool = False,
        dtype: str = "float32",
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_length < 2:
            raise ValueError(f"max_length must be >= 2, got {max_length}")
        self.weights = weights
        self.max_length = max_length
        self._set_up(model, batch_size, progress, device, dtype)
        self._loaded = _load_bart(model, weights, self.device, dtype)
        # One single-device scorer per further device: its own model copy and budget.
        self._others = [
            BartScorer(model, weights=weights, batch_size=batch_size, device=other,
                       max_length=max_length, dtype=dtype)
            for other in self.devices[1:]
        ]  # fmt: skip

    @classmethod
    def _env_settings(cls, env: Mapping[str, str]) -> dict[str, object]:
        return {
            "model": env.get(ENV_BARTSCORE_MODEL) or DEFAULT_BARTSCORE_MODEL,
            "weights": env.get(ENV_BARTSCORE_WEIGHTS) or None,
        }

    def _settings(self) -> JSONObject:
        return {
            "weights": self.weights,
            "max_length": self.max_length,
            "source": "prediction",
            "target": "gold",
            "raw": "mean token log-likelihood of the target",
            "normalised": "exp(raw)",
        }

    def score(self, sources: Sequence[str], targets: Sequence[str]) -> list[float]:
        """Raw BARTScore of each (source, target) pair, in input order; identical pairs once."""
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets: pairs must align")
        pairs, slots = scorer_models.distinct_pairs(zip(sources, targets, strict=True))
        if not pairs:
            return []
        src_ids = self._encode([s for s, _ in pairs])
        tgt_ids = self._encode([t for _, t in pairs])
        workers = [self, *self._others]
        with self._scoring(len(pairs)) as advance:
            if len(workers) == 1:
                values = self._score_ids(src_ids, tgt_ids, advance)
            else:
                values = self._score_shared(workers, src_ids, tgt_ids, advance)
        return [values[k] for k in slots]

    def _score_shared(
        self,
        workers: list[BartScorer],
        src_ids: list[list[int]],
        tgt_ids: list[list[int]],
        advance: Callable[[int], None],
    ) -> list[float]:
        """Several devices: the batches one device would run (planned on this device's
        budget), shared out whole, balanced by padded tokens; so each pair is computed in
        the same batch as on one device, and its score is the same to the bit."""
        shapes = [(len(s), len(t)) for s, t in zip(src_ids, tgt_ids, strict=True)]
        order = sorted(range(len(shapes)), key=lambda k: -sum(shapes[k]))
        batches = plan_batches(order, shapes, self._forward_budget())
        weights = [
            padded_tokens(len(b), tuple(max(d) for d in zip(*(shapes[k] for k in b), strict=True)))
            for b in batches
        ]
        return share_out(
            workers,
            batches,
            weights,
            lambda w, ids: w._score_ids(src_ids, tgt_ids, advance, [batches[i] for i in ids]),
            len(shapes),
        )

    def _score_ids(
        self,
        src_ids: list[list[int]],
        tgt_ids: list[list[int]],
        advance: Callable[[int], None],
        batches: list[list[int]] | None = None,
    ) -> list[float]:
        """Raw BARTScore of each tokenised (source, target) pair, in order, on this scorer's
        device: longest first, in batches that fit its budget; or only the pairs of
        ``batches``, as planned (the other entries of the result are then meaningless)."""
        import torch
        import torch.nn.functional as F

        if not src_ids:
            return []
        tokenizer, model = self._loaded.tokenizer, self._loaded.model
        pad = model.config.pad_token_id
        start_id = model.config.decoder_start_token_id
        if start_id is None:
            start_id = tokenizer.eos_token_id

        shapes = [(len(s), len(t)) for s, t in zip(src_ids, tgt_ids, strict=True)]
        order = sorted(range(len(shapes)), key=lambda k: -sum(shapes[k]))
        scores = torch.empty(len(shapes), dtype=torch.float32, device=self.device)

        def forward(batch: list[int]) -> None:
            src, src_mask = scorer_models.pad_right([src_ids[k] for k in batch], pad)
            labels, _ = scorer_models.pad_right([tgt_ids[k] for k in batch], pad)
            decoder_input = labels.new_full(labels.shape, pad)
            decoder_input[:, 0] = start_id
            decoder_input[:, 1:] = labels[:, :-1]
            target_len = torch.tensor([len(tgt_ids[k]) for k in batch], dtype=torch.float32)
            positions = torch.tensor(batch, dtype=torch.long)
            logits = model(
                input_ids=to_device(src, self.device),
                attention_mask=to_device(src_mask, self.device),
                decoder_input_ids=to_device(decoder_input, self.device),
                use_cache=False,
            ).logits
            labels = to_device(labels, self.device)
            # As the original: pad positions are ignored, the sum divided by the target
            # length. Flat (tokens, vocab) logits: no transposed copy of the largest tensor.
            nll = (
                F.cross_entropy(
                    logits.float().flatten(0, 1),
                    labels.flatten(),
                    ignore_index=pad,
                    reduction="none",
                )
                .view(labels.shape)
                .sum(dim=1)
            )
            scores[to_device(positions, self.device)] = -nll / to_device(target_len, self.device)

        with torch.inference_mode():  # per thread: each device's worker enters its own
            if batches is None:
                self._budget = run_batches(order, shapes, self._forward_budget(), forward, advance)
            else:
                self._budget = run_planned(
                    batches, shapes, self._forward_budget(), forward, advance
                )
        return scores.tolist()  # the one transfer back to the host

    def _forward_budget(self) -> Budget:
        return self._kept_budget(seq2seq_budget, self._loaded.model.config)

    def _encode(self, texts: list[str]) -> list[list[int]]:
        ids: list[list[int]] = self._loaded.tokenizer(texts, max_length=self.max_length, truncation=True)[
            "input_ids"
        ]
        return ids
