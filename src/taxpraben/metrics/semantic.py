"""Semantic similarity metrics: BERTScore and BARTScore, exact to their reference code.

BERTScore follows the ``bert_score`` package (0.3.13) with ``idf=False`` and no baseline
rescaling: each text is encoded on its own (special tokens included, so XLNet sees its
trailing ``<sep><cls>``), the hidden state after the first ``layer`` blocks is taken,
each candidate token is matched greedily to its most cosine-similar reference token
(the reference's special tokens are eligible as matches) and vice versa, and precision and
recall are the uniform means over the non-special tokens (``<sep>`` and ``<cls>`` weigh 0).

BARTScore follows the original BARTScore code: source = prediction, target = gold, both
truncated to ``max_length`` tokens, score = mean log-likelihood per target token
(``<s>`` and ``</s>`` included), a negative number; ``normalize_bartscore`` maps it to
``exp(raw)`` in (0, 1].

Speed comes from not repeating work, never from approximating it: a ``score`` call
dedupes identical pairs and identical texts (gold answers repeat across the 5 runs, so each
gold is encoded once), runs the encoder only up to the needed layer, and the models are
loaded once per process. Batches are longest first and sized by a budget
(``taxpraben.batching``): padded tokens on CPU (``batch_size`` texts of up to 512 tokens), and
on CUDA the memory the batch's activations are estimated to take, out of the device's free
memory, so that a batch fills the GPU; an out-of-memory error halves the budget and retries
(it never fails the job). Results stay on the device until the end of a call (one transfer,
no per-batch synchronisation).

Several devices (``device="cuda"`` with several visible GPUs, or a list such as
``"cuda:0,cuda:1"``; see ``taxpraben.devices``): after the de-duplication, the distinct pairs
are split into length-balanced bins, one per device (BERTScore keeps the pairs of one
reference together, so that each gold is encoded once), each device runs its bin with its
own copy of the model and its own budget and back-off, and the scores are merged back in
input order. A text's score does not depend on where it ran, only, at float rounding, on
the batch it was padded with, as with one device at another batch size.

``dtype`` (``--scorer-dtype``): ``float32`` (default) is exact to the reference code, with
TF32 matrix products turned off whatever the process set; ``tf32`` lets CUDA's matrix products
use TF32; ``bf16`` runs the model in bfloat16 (similarities, log-softmax and means stay in
float32). Both trade exactness for speed; ``describe()`` records the choice in results.json.

Differences from the reference packages, all deliberate:

* ``bert_score`` fills padded positions of a batch with similarity 0 before taking the
  greedy maximum, so a token whose every true similarity is negative scores 0 or its true
  maximum depending on what it was batched with. We take the maximum over real tokens
  only. Contextual embeddings of real models are anisotropic (all similarities positive),
  where the two agree exactly.
* An empty text (after ``strip()``) gives P = R = F1 = 0 with a logged warning, as in
  ``bert_score``; its own code path for empty texts fails on transformers 5.
* With ``idf=True`` the weights come from the unique references of the ``score`` call
  (``bert_score.score`` uses the references as given, duplicates included).
"""

from __future__ import annotations

import logging
import math
import os
import pickle
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taxpraben import batching as _batching
from taxpraben.batching import (
    Budget,
    balance_bins,
    free_cuda_bytes,
    merge_bins,
    padded_tokens,
    plan_batches,
    run_batches,
    run_per_device,
    run_planned,
    to_device,
)
from taxpraben.devices import resolve_devices
from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
    ENV_BARTSCORE_MODEL,
    ENV_BARTSCORE_WEIGHTS,
    ENV_BERTSCORE_LAYER,
    ENV_BERTSCORE_MODEL,
    SCORER_DTYPES,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_BARTSCORE_MODEL",
    "DEFAULT_BERTSCORE_LAYER",
    "DEFAULT_BERTSCORE_MODEL",
    "PRF",
    "SCORER_DTYPES",
    "BartScorer",
    "BertScorer",
    "ScorerUnavailable",
    "bertscore_f1_by_item",
    "clear_model_cache",
    "normalize_bartscore",
]

log = logging.getLogger(__name__)


# Token vectors kept in memory at once by BertScorer.score (about 0.8 GB at 768 dims):
# pairs are processed in groups of references whose texts fit, so memory stays flat
# however many runs and tasks one call covers.
_CHUNK_TOKENS = 1 << 18
# Padded tokens per forward batch on CPU, per unit of batch_size: long texts get smaller batches.
_TOKENS_PER_ITEM = 512
# Similarity-matrix elements and pairs per greedy-matching batch (CPU; CUDA takes more).
_MATCH_ELEMENTS = 1 << 24
_MATCH_ROWS = 64
_CUDA_MATCH_ELEMENTS = 1 << 28
_CUDA_MATCH_ROWS = 1024
# Share of the free CUDA memory that one call's stored token embeddings may take.
_CUDA_CHUNK_FRACTION = 0.2
# Below this many texts a progress bar is not worth drawing.
_PROGRESS_MIN_TEXTS = 256


@dataclass(frozen=True)
class PRF:
    """BERTScore of one (candidate, reference) pair."""

    precision: float
    recall: float
    f1: float


class ScorerUnavailable(RuntimeError):
    """A scorer's model cannot be had; the message says which, why, and how to supply it."""


class ScorerSettingError(ScorerUnavailable, ValueError):
    """A scorer setting that does not fit its model (a BERTScore layer it does not have).

    A ``ScorerUnavailable``: after a generation, the metric is "not computed" with this
    reason (the predictions are kept, to score again with a setting that fits)."""


def normalize_bartscore(raw: float) -> float:
    """Map a raw BARTScore (mean token log-likelihood, <= 0) to ``exp(raw)`` in (0, 1].

    Rounding can leave a raw score a hair above 0; the result is capped at 1. A raw score
    below about -745 underflows to 0.0.
    """
    return min(math.exp(raw), 1.0)


def bertscore_f1_by_item(
    scorer: BertScorer, items: Sequence[Sequence[tuple[str, str]]]
) -> list[float]:
    """Mean BERTScore F1 over each item's (prediction, gold) aspect pairs (TaxRisk).

    All pairs of all items go through one ``score`` call, so repeats are scored once. An
    aspect the prediction lacks should be passed with an empty prediction (it scores 0);
    an item without any pair scores 0.
    """
    flat = [pair for pairs in items for pair in pairs]
    scores = scorer.score([p for p, _ in flat], [g for _, g in flat])
    out: list[float] = []
    start = 0
    for pairs in items:
        chunk = scores[start : start + len(pairs)]
        start += len(pairs)
        out.append(sum(s.f1 for s in chunk) / len(chunk) if chunk else 0.0)
    return out


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class _Source:
    """Where a model comes from: a local directory (never the network) or a hub id."""

    name: str
    local_only: bool


_HINTS = {
    "BERTScore": (
        "--bertscore-model",
        ENV_BERTSCORE_MODEL,
        "chinese-xlnet-base",
    ),
    "BARTScore": (
        "--bartscore-model",
        ENV_BARTSCORE_MODEL,
        "bart-large-cnn",
    ),
}


def _how_to_get(kind: str, model: str) -> str:
    option, env, local = _HINTS[kind]
    hub_id = model if not _looks_like_path(model) else None
    fetch = (
        f"On a machine with internet access run `hf download {hub_id} --local-dir ./{local}` "
        f"(older clients: `huggingface-cli download ...`), copy the folder here, then "
        if hub_id
        else "Point to a directory holding config.json, the weights and the tokenizer files: "
    )
    return f"{fetch}pass {option} /path/to/{local} or set {env}=/path/to/{local}."


def _unavailable(kind: str, model: str, why: str) -> ScorerUnavailable:
    return ScorerUnavailable(
        f"{kind} model {model!r} is unavailable: {why}. {_how_to_get(kind, model)}"
    )


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1


def _offline() -> bool:
    flags = (os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("TRANSFORMERS_OFFLINE", ""))
    return any(flag.strip().lower() in {"1", "true", "yes", "on"} for flag in flags)


def _resolve_source(kind: str, model: str) -> _Source:
    path = Path(model).expanduser()
    if path.is_dir():
        return _Source(str(path.resolve()), local_only=True)
    if path.exists():
        raise _unavailable(kind, model, "it is a file; a model is a directory with config.json")
    if _looks_like_path(model):
        raise _unavailable(kind, model, "no such directory")
    return _Source(model, local_only=_offline())


def _load_failure(kind: str, model: str, source: _Source, exc: Exception) -> ScorerUnavailable:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if source.local_only and not Path(source.name).is_dir():
        reason = f"HF_HUB_OFFLINE is set and it is not in the local Hugging Face cache ({reason})"
    return _unavailable(kind, model, reason)


# One loaded model per (kind, source, options, device) and process: scorers share them.
_MODEL_CACHE: dict[Hashable, Any] = {}


def clear_model_cache() -> None:
    """Forget the loaded scorer models (they are freed once no scorer holds them)."""
    _MODEL_CACHE.clear()


def _cached(key: Hashable, load: Callable[[], Any]) -> Any:
    if key not in _MODEL_CACHE:
        _MODEL_CACHE[key] = load()
    return _MODEL_CACHE[key]


@contextmanager
def _progress_bar(enabled: bool, description: str, total: int) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; draws a rich bar with ETA on stderr when ``enabled``."""
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)


def _check_dtype(dtype: str) -> str:
    if dtype not in SCORER_DTYPES:
        raise ValueError(f"scorer dtype must be one of {', '.join(SCORER_DTYPES)}, got {dtype!r}")
    return dtype


def _weights_dtype(dtype: str) -> Any:
    """The dtype the model's weights are held in for a scorer dtype (TF32 keeps float32)."""
    import torch

    return torch.bfloat16 if dtype == "bf16" else torch.float32


@contextmanager
def _matmul_precision(dtype: str) -> Iterator[None]:
    """Float32 matrix products in IEEE float32, or in TF32 for ``tf32``, for the duration."""
    import torch

    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if dtype == "tf32" else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def _is_cuda(device: str) -> bool:
    return device.split(":", 1)[0] == "cuda"


def _model_dims(config: Any) -> tuple[int, int, int]:
    """(hidden size, feed-forward size, attention heads) of a transformers config."""
    hidden = int(getattr(config, "hidden_size", None) or getattr(config, "d_model", 768))
    ffn = (
        getattr(config, "intermediate_size", None)
        or getattr(config, "d_inner", None)
        or getattr(config, "encoder_ffn_dim", None)
        or 4 * hidden
    )
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None) or 12
    return hidden, int(ffn), int(heads)


def encoder_budget(free_bytes: float, config: Any, dtype: str) -> Budget:
    """Token budget of an encoder forward pass on a device with ``free_bytes`` free.

    Estimated bytes per padded token of width ``w``, for one layer at a time (inference
    keeps only the current layer's activations): hidden-sized tensors (about 12 of them:
    projections, residuals, norms), two feed-forward-sized ones, and the attention matrices
    (about 8 per head, the width of the batch each: XLNet's relative attention keeps several),
    plus the float32, unit-normalised output that the scorer keeps.
    """
    hidden, ffn, heads = _model_dims(config)
    elem = 2 if dtype == "bf16" else 4
    linear = elem * (12 * hidden + 2 * ffn) + 8 * hidden
    per_width = elem * 8 * heads

    def cost(rows: int, widths: tuple[int, ...]) -> float:
        (width,) = widths
        return rows * width * (linear + per_width * width)

    return Budget(max_cost=free_bytes * _batching.DEVICE_MEMORY_FRACTION, max_rows=1 << 16, cost=cost)


def seq2seq_budget(free_bytes: float, config: Any, dtype: str) -> Budget:
    """Budget of a BART forward pass with its log-likelihood, batches shaped (source,
    target): encoder activations per source token, decoder activations and the logits
    (vocabulary-wide, in the model's dtype, then float32 for the log-softmax) per target
    token, and the self- and cross-attention matrices."""
    hidden, _, heads = _model_dims(config)
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

    return Budget(max_cost=free_bytes * _batching.DEVICE_MEMORY_FRACTION, max_rows=1 << 16, cost=cost)


def cpu_budget(batch_size: int) -> Budget:
    """Off CUDA: ``batch_size`` texts and ``batch_size * 512`` padded tokens per pass."""
    return Budget(max_cost=batch_size * _TOKENS_PER_ITEM, max_rows=batch_size, cost=padded_tokens)


def device_budget(
    device: str,
    batch_size: int,
    from_memory: Callable[[float, Any, str], Budget],
    config: Any,
    dtype: str,
) -> Budget:
    """The first budget of a scorer: from free memory on CUDA (``from_memory`` is
    :func:`encoder_budget` or :func:`seq2seq_budget`), else :func:`cpu_budget`."""
    free = free_cuda_bytes(device) if _is_cuda(device) else None
    return cpu_budget(batch_size) if free is None else from_memory(free, config, dtype)


# --------------------------------------------------------------------------- BERTScore


def _truncate_layers(model: Any, layer: int, model_name: str) -> Any:
    """Keep the first ``layer`` blocks, the way ``bert_score.utils.get_model`` does, so that
    the model's output is the hidden state after block ``layer`` (0 = the embeddings)."""
    import torch

    if hasattr(model, "decoder") and hasattr(model, "encoder"):
        model = model.encoder

    def keep(owner: Any, attr: str) -> Any:
        blocks = getattr(owner, attr)
        if not 0 <= layer <= len(blocks):
            raise ScorerSettingError(
                f"BERTScore layer {layer} is out of range for {model_name!r}: it has {len(blocks)} "
                f"layers (0 = the embeddings); pass --bertscore-layer 0..{len(blocks)}"
            )
        setattr(owner, attr, torch.nn.ModuleList(list(blocks[:layer])))
        return model

    if hasattr(model, "n_layers") and isinstance(model.n_layers, int):  # XLM
        if not 0 <= layer <= model.n_layers:
            raise ValueError(f"BERTScore layer {layer} is out of range for {model_name!r}")
        model.n_layers = layer
        return model
    if isinstance(getattr(model, "layer", None), torch.nn.ModuleList):  # XLNet
        return keep(model, "layer")
    encoder = getattr(model, "encoder", None)
    if encoder is not None:
        if hasattr(encoder, "albert_layer_groups"):  # ALBERT shares its blocks
            if not 0 <= layer <= encoder.config.num_hidden_layers:
                raise ValueError(f"BERTScore layer {layer} is out of range for {model_name!r}")
            encoder.config.num_hidden_layers = layer
            return model
        if hasattr(encoder, "block"):  # T5
            return keep(encoder, "block")
        if hasattr(encoder, "layer"):  # BERT, RoBERTa, ELECTRA, ...
            return keep(encoder, "layer")
    transformer = getattr(model, "transformer", None)
    if transformer is not None and hasattr(transformer, "layer"):  # DistilBERT
        return keep(transformer, "layer")
    if hasattr(model, "layers"):  # BART encoder and relatives
        return keep(model, "layers")
    raise ValueError(f"BERTScore cannot find the layers of {model_name!r} ({type(model).__name__})")


@dataclass(frozen=True)
class _BertModel:
    tokenizer: Any
    encoder: Any
    forward_kwargs: Mapping[str, Any]


def _load_bert(model: str, layer: int, device: str, dtype: str = "float32") -> _BertModel:
    source = _resolve_source("BERTScore", model)

    def load() -> _BertModel:
        import torch
        from transformers import AutoModel, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(
                source.name, local_files_only=source.local_only
            )
            encoder = AutoModel.from_pretrained(
                source.name, local_files_only=source.local_only, dtype=torch.float32
            )
        except (OSError, ValueError, ImportError, RuntimeError) as exc:
            raise _load_failure("BERTScore", model, source, exc) from exc
        encoder = _truncate_layers(encoder, layer, model).eval().to(device, _weights_dtype(dtype))
        # XLNet would otherwise keep every layer's states as "mems" for a next segment.
        kwargs = {"use_mems": False} if getattr(encoder.config, "model_type", "") == "xlnet" else {}
        return _BertModel(tokenizer, encoder, kwargs)

    return _cached(("bert", source, layer, device, str(_weights_dtype(dtype))), load)


@dataclass(frozen=True)
class _Text:
    """One unique stripped text: its token ids and normalised matching weights."""

    ids: list[int]
    weights: torch.Tensor  # sums to 1, or all 0 when no token carries weight


class BertScorer:
    """BERTScore (P, R, F1) with a model it loads once; see the module docstring.

    ``model`` is a hub id or a local directory (a directory is never looked up online;
    ``HF_HUB_OFFLINE=1`` keeps hub ids to the local cache). ``layer`` counts blocks from
    the embeddings (0) as ``bert_score``'s ``num_layers`` does. ``max_tokens`` caps each
    text's length, special tokens included; by default nothing is truncated, as in the
    reference. ``batch_size`` is the texts per forward pass off CUDA; on CUDA batches are
    sized by free memory. ``dtype`` is one of ``SCORER_DTYPES``. ``device`` is a
    ``--device`` value (``taxpraben.devices``): several devices split each call's pairs.
    Raises ``ScorerUnavailable`` when the model cannot be loaded, ``ValueError`` for a layer
    the model does not have and ``DeviceError`` for a device this machine does not have.
    """

    def __init__(
        self,
        model: str = DEFAULT_BERTSCORE_MODEL,
        layer: int = DEFAULT_BERTSCORE_LAYER,
        *,
        idf: bool = False,
        batch_size: int = 32,
        device: str = "auto",
        max_tokens: int | None = None,
        progress: bool = False,
        dtype: str = "float32",
    ) -> None:
        if layer < 0:
            raise ValueError(f"BERTScore layer must be >= 0, got {layer}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_tokens is not None and max_tokens < 3:
            raise ValueError(
                f"max_tokens must be >= 3 (room for the special tokens), got {max_tokens}"
            )
        self.model = model
        self.layer = layer
        self.idf = idf
        self.batch_size = batch_size
        self.devices = resolve_devices(device)
        self.device = self.devices[0]  # this scorer's own; the others' scorers are below
        self.max_tokens = max_tokens
        self.progress = progress
        self.dtype = _check_dtype(dtype)
        self._loaded = _load_bert(model, layer, self.device, dtype)
        # The budget in force at the end of the last call (halved after an out-of-memory
        # error), kept so that later calls do not repeat a failure.
        self._budget: Budget | None = None
        # One single-device scorer per further device: its own model copy and budget.
        self._others = [
            BertScorer(model, layer, idf=idf, batch_size=batch_size, device=other,
                       max_tokens=max_tokens, dtype=dtype)
            for other in self.devices[1:]
        ]  # fmt: skip

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **kwargs: Any) -> BertScorer:
        """Build from ``TAXPRABEN_BERTSCORE_MODEL`` / ``_LAYER`` where set; kwargs win."""
        env = os.environ if environ is None else environ
        kwargs.setdefault("model", env.get(ENV_BERTSCORE_MODEL) or DEFAULT_BERTSCORE_MODEL)
        if env.get(ENV_BERTSCORE_LAYER):
            kwargs.setdefault("layer", int(env[ENV_BERTSCORE_LAYER]))
        return cls(**kwargs)

    def describe(self) -> dict[str, Any]:
        """The settings that determine the scores, for results.json."""
        import transformers

        return {
            "model": self.model,
            "layer": self.layer,
            "idf": self.idf,
            "max_tokens": self.max_tokens,
            "rescale_with_baseline": False,
            "score": "F1",
            "dtype": self.dtype,
            "exact": self.dtype == "float32",
            "device": ",".join(self.devices),
            "devices": list(self.devices),
            "reference": "bert_score 0.3.13 semantics",
            "transformers": transformers.__version__,
        }

    # -- scoring

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[PRF]:
        """BERTScore of each (candidate, reference) pair, in input order.

        Identical pairs are computed once and every distinct text is encoded once, however
        often it repeats (across runs, tasks or sides).
        """
        if len(candidates) != len(references):
            raise ValueError(
                f"{len(candidates)} candidates but {len(references)} references: pairs must align"
            )
        pair_of: dict[tuple[str, str], int] = {}
        slots = [
            pair_of.setdefault((c.strip(), r.strip()), len(pair_of))
            for c, r in zip(candidates, references, strict=True)
        ]
        pairs = list(pair_of)
        if not pairs:
            return []
        texts = self._prepare({t for pair in pairs for t in pair}, {r for _, r in pairs})
        n_empty = sum(1 for c, r in pairs if len(texts[c].ids) == 2 or len(texts[r].ids) == 2)
        if n_empty:
            log.warning(
                "BERTScore: %d pair(s) with an empty candidate or reference score 0", n_empty
            )

        workers = [self, *self._others]
        chunks = list(self._chunks(pairs, texts, devices=len(workers)))
        if len(workers) == 1:
            plan = [list(range(len(chunks)))]
        else:
            # Whole chunks (a gold and its pairs, encoded in the same batches as on one
            # device) shared out, balanced by the tokens of their distinct texts.
            plan = balance_bins([sum(len(texts[t].ids) for t in chunk_texts) for _, chunk_texts in chunks],
                                len(workers))
        total = sum(len(chunk_texts) for _, chunk_texts in chunks)
        with (
            _progress_bar(self.progress and total >= _PROGRESS_MIN_TEXTS, "BERTScore", total) as advance,
            _matmul_precision(self.dtype),
        ):
            results = run_per_device([
                partial(w._score_chunks, pairs, [chunks[i] for i in ids], texts, advance)
                for w, ids in zip(workers, plan, strict=True)
            ])  # fmt: skip
        bins = [sorted(k for i in ids for k in chunks[i][0]) for ids in plan]
        unique_scores = merge_bins(bins, [[r[k] for k in b] for r, b in zip(results, bins, strict=True)], len(pairs))
        return [unique_scores[k] for k in slots]

    def _score_chunks(
        self,
        pairs: list[tuple[str, str]],
        chunks: list[tuple[list[int], list[str]]],
        texts: Mapping[str, _Text],
        advance: Callable[[int], None],
    ) -> list[PRF]:
        """The scores of the pairs in ``chunks`` on this scorer's device, chunk by chunk, at
        their indices into ``pairs`` (the other entries are 0)."""
        scores: list[PRF] = [PRF(0.0, 0.0, 0.0)] * len(pairs)
        for chunk_pairs, chunk_texts in chunks:
            embedded = self._embed(chunk_texts, texts, advance)
            for k, prf in zip(
                chunk_pairs,
                self._match([pairs[k] for k in chunk_pairs], embedded, texts),
                strict=True,
            ):
                scores[k] = prf
            del embedded
        return scores

    def _forward_budget(self) -> Budget:
        if self._budget is not None:  # what an earlier call (after any back-off) settled on
            return self._budget
        return device_budget(self.device, self.batch_size, encoder_budget, self._loaded.encoder.config, self.dtype)

    def _chunk_tokens(self, share: int | None = None) -> int:
        """Token vectors one chunk keeps: ``_CHUNK_TOKENS``, or a share of free CUDA memory,
        at most ``share`` (but never under ``_CHUNK_TOKENS``) when devices share the work."""
        free = free_cuda_bytes(self.device) if _is_cuda(self.device) else None
        if free is None:
            return _CHUNK_TOKENS
        hidden, _, _ = _model_dims(self._loaded.encoder.config)
        limit = max(_CHUNK_TOKENS, int(free * _CUDA_CHUNK_FRACTION / (4 * hidden)))
        return limit if share is None else max(_CHUNK_TOKENS, min(limit, share))

    def _prepare(self, unique: set[str], references: set[str]) -> dict[str, _Text]:
        """Tokenise each distinct text once and attach its matching weights."""
        import torch

        tokenizer = self._loaded.tokenizer
        order = sorted(unique)
        truncate = {"truncation": True, "max_length": self.max_tokens} if self.max_tokens else {}
        # An empty text still gets the special tokens, as bert_score's sent_encode intends.
        ids = tokenizer(order, add_special_tokens=True, **truncate)["input_ids"]
        token_ids = dict(zip(order, ids, strict=True))

        if self.idf:
            weight_of = _idf_weights([token_ids[r] for r in sorted(references)])
        else:
            zero = {tokenizer.sep_token_id, tokenizer.cls_token_id}
            weight_of = defaultdict(lambda: 1.0, dict.fromkeys(zero - {None}, 0.0))

        texts: dict[str, _Text] = {}
        for text, seq in token_ids.items():
            w = torch.tensor([weight_of[i] for i in seq], dtype=torch.float32)
            total = w.sum()
            texts[text] = _Text(seq, w / total if total > 0 else torch.zeros_like(w))
        return texts

    def _chunks(
        self, pairs: list[tuple[str, str]], texts: Mapping[str, _Text], devices: int = 1
    ) -> Iterator[tuple[list[int], list[str]]]:
        """Group pair indices by reference into chunks whose distinct texts hold at most
        ``_CHUNK_TOKENS`` tokens (a single over-long reference group is its own chunk).

        On CUDA a chunk may hold a share of free memory; when ``devices`` share the work it
        holds at most a quarter of each device's share of the tokens, so that there are
        chunks enough to balance (on CPU the chunks are the same whatever the devices)."""
        by_reference: dict[str, list[int]] = defaultdict(list)
        for k, (_, ref) in enumerate(pairs):
            by_reference[ref].append(k)
        share = None
        if devices > 1:
            share = sum(len(texts[t].ids) for t in {t for pair in pairs for t in pair}) // (4 * devices)
        limit = self._chunk_tokens(share)
        chunk_pairs: list[int] = []
        chunk_texts: dict[str, None] = {}
        tokens = 0
        for members in by_reference.values():
            new = {t: None for k in members for t in pairs[k] if t not in chunk_texts}
            new_tokens = sum(len(texts[t].ids) for t in new)
            if chunk_pairs and tokens + new_tokens > limit:
                yield chunk_pairs, list(chunk_texts)
                chunk_pairs, chunk_texts, tokens = [], {}, 0
                new = {t: None for k in members for t in pairs[k]}
                new_tokens = sum(len(texts[t].ids) for t in new)
            chunk_pairs.extend(members)
            chunk_texts.update(new)
            tokens += new_tokens
        if chunk_pairs:
            yield chunk_pairs, list(chunk_texts)

    def _embed(
        self, batch_texts: list[str], texts: Mapping[str, _Text], advance: Callable[[int], None]
    ) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """For each text, its unit-normalised float32 token embeddings at ``layer`` and its
        matching weights, both on the device (views into the batch they were computed in)."""
        import torch

        encoder = self._loaded.encoder
        pad_id = self._loaded.tokenizer.pad_token_id or 0
        lengths = [len(texts[t].ids) for t in batch_texts]
        order = sorted(range(len(batch_texts)), key=lambda i: -lengths[i])
        out: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

        def forward(batch: list[int]) -> None:
            width = max(lengths[i] for i in batch)
            input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            weights = torch.zeros((len(batch), width), dtype=torch.float32)
            for row, i in enumerate(batch):
                text = texts[batch_texts[i]]
                input_ids[row, : lengths[i]] = torch.tensor(text.ids)
                mask[row, : lengths[i]] = 1
                weights[row, : lengths[i]] = text.weights
            hidden = encoder(
                to_device(input_ids, self.device),
                attention_mask=to_device(mask, self.device),
                **self._loaded.forward_kwargs,
            )[0].float()
            # Padded positions may divide by 0; they are sliced away below.
            hidden = hidden / hidden.norm(dim=-1, keepdim=True)
            weights = to_device(weights, self.device)
            for row, i in enumerate(batch):
                out[batch_texts[i]] = (hidden[row, : lengths[i]], weights[row, : lengths[i]])

        with torch.inference_mode():
            self._budget = run_batches(
                order, [(n,) for n in lengths], self._forward_budget(), forward, advance
            )
        return out

    def _match(
        self,
        pairs: list[tuple[str, str]],
        embedded: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
        texts: Mapping[str, _Text],
    ) -> list[PRF]:
        """Greedy cosine matching of each pair, batched by similar shape; the results stay
        on the device until every batch is queued, then come back in one transfer."""
        import torch

        results: list[PRF] = [PRF(0.0, 0.0, 0.0)] * len(pairs)
        live = [
            k for k, (c, r) in enumerate(pairs) if len(texts[c].ids) != 2 and len(texts[r].ids) != 2
        ]
        if not live:
            return results
        live.sort(key=lambda k: (-len(texts[pairs[k][0]].ids), -len(texts[pairs[k][1]].ids)))
        cuda = _is_cuda(self.device)
        max_rows = _CUDA_MATCH_ROWS if cuda else _MATCH_ROWS
        max_elements = _CUDA_MATCH_ELEMENTS if cuda else _MATCH_ELEMENTS
        values = torch.empty((len(live), 3), dtype=torch.float32, device=self.device)
        start = 0
        with torch.inference_mode():
            while start < len(live):
                hyp_len = len(texts[pairs[live[start]][0]].ids)
                ref_len = max(len(texts[pairs[k][1]].ids) for k in live[start : start + max_rows])
                size = max(1, min(max_rows, max_elements // (hyp_len * ref_len)))
                batch = live[start : start + size]
                h, h_mask, h_w = self._pad([embedded[pairs[k][0]] for k in batch])
                r, r_mask, r_w = self._pad([embedded[pairs[k][1]] for k in batch])
                sim = torch.bmm(h, r.transpose(1, 2))
                # Cosines lie in [-1, 1]: -2 never wins a max, and padded rows weigh 0.
                sim.masked_fill_(~(h_mask.unsqueeze(2) & r_mask.unsqueeze(1)), -2.0)
                precision = (sim.max(dim=2).values * h_w).sum(dim=1)
                recall = (sim.max(dim=1).values * r_w).sum(dim=1)
                f1 = 2 * precision * recall / (precision + recall)
                values[start : start + len(batch)] = torch.stack((precision, recall, f1), dim=1)
                start += len(batch)
        for k, (p, rc, f) in zip(live, values.tolist(), strict=True):
            results[k] = PRF(_finite(p), _finite(rc), _finite(f))
        return results

    def _pad(
        self, embedded: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Padded vectors, the mask of real tokens and the padded weights (0 on padding)."""
        from torch.nn.utils.rnn import pad_sequence

        vectors = [v for v, _ in embedded]
        padded = pad_sequence(vectors, batch_first=True)
        mask = pad_sequence([v.new_ones(len(v), dtype=bool) for v in vectors], batch_first=True)
        weights = pad_sequence([w for _, w in embedded], batch_first=True)
        return padded, mask, weights


def _finite(x: float) -> float:
    """NaN (a text whose tokens all weigh 0, or P + R = 0) scores 0, as in bert_score's F1."""
    return 0.0 if math.isnan(x) else x


def _idf_weights(references: list[list[int]]) -> Mapping[int, float]:
    """bert_score's ``get_idf_dict``: log((M + 1) / (df + 1)), unseen ids log(M + 1)."""
    m = len(references)
    df: dict[int, int] = defaultdict(int)
    for ids in references:
        for i in set(ids):
            df[i] += 1
    unseen = math.log(m + 1)
    weights: dict[int, float] = defaultdict(lambda: unseen)
    weights.update({i: math.log((m + 1) / (c + 1)) for i, c in df.items()})
    return weights


# --------------------------------------------------------------------------- BARTScore


@dataclass(frozen=True)
class _BartModel:
    tokenizer: Any
    model: Any


def _load_bart(
    model: str, weights: str | None, device: str, dtype: str = "float32"
) -> _BartModel:
    source = _resolve_source("BARTScore", model)
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
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(
                source.name, local_files_only=source.local_only
            )
            seq2seq = AutoModelForSeq2SeqLM.from_pretrained(
                source.name, local_files_only=source.local_only, dtype=torch.float32
            )
        except (OSError, ValueError, ImportError, RuntimeError) as exc:
            raise _load_failure("BARTScore", model, source, exc) from exc
        if weights_path is not None:
            _load_state_dict(seq2seq, weights_path)
        return _BartModel(tokenizer, seq2seq.eval().to(device, _weights_dtype(dtype)))

    key = ("bart", source, str(weights_path), device, str(_weights_dtype(dtype)))
    return _cached(key, load)


def _load_state_dict(model: Any, path: Path) -> None:
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


class BartScorer:
    """BARTScore (mean token log-likelihood of target given source) with a model it owns.

    ``weights`` is an optional ``bart_score.pth`` state dict loaded over the model. Both
    sides are truncated to ``max_length`` tokens. An empty target still has ``<s></s>``,
    so it gets a (finite) score like any other text. ``batch_size`` is the pairs per
    forward pass off CUDA (of up to 512 tokens each); on CUDA batches are sized by free
    memory. ``dtype`` is one of ``SCORER_DTYPES``. ``device`` is a ``--device`` value
    (``taxpraben.devices``): several devices split each call's pairs. Raises
    ``ScorerUnavailable`` when the model or the weights cannot be loaded and ``DeviceError``
    for a device this machine does not have.
    """

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
        self.model = model
        self.weights = weights
        self.batch_size = batch_size
        self.devices = resolve_devices(device)
        self.device = self.devices[0]  # this scorer's own; the others' scorers are below
        self.max_length = max_length
        self.progress = progress
        self.dtype = _check_dtype(dtype)
        self._loaded = _load_bart(model, weights, self.device, dtype)
        self._budget: Budget | None = None
        # One single-device scorer per further device: its own model copy and budget.
        self._others = [
            BartScorer(model, weights=weights, batch_size=batch_size, device=other,
                       max_length=max_length, dtype=dtype)
            for other in self.devices[1:]
        ]  # fmt: skip

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **kwargs: Any) -> BartScorer:
        """Build from ``TAXPRABEN_BARTSCORE_MODEL`` / ``_WEIGHTS`` where set; kwargs win."""
        env = os.environ if environ is None else environ
        kwargs.setdefault("model", env.get(ENV_BARTSCORE_MODEL) or DEFAULT_BARTSCORE_MODEL)
        kwargs.setdefault("weights", env.get(ENV_BARTSCORE_WEIGHTS) or None)
        return cls(**kwargs)

    def describe(self) -> dict[str, Any]:
        """The settings that determine the scores, for results.json."""
        import transformers

        return {
            "model": self.model,
            "weights": self.weights,
            "max_length": self.max_length,
            "source": "prediction",
            "target": "gold",
            "raw": "mean token log-likelihood of the target",
            "normalised": "exp(raw)",
            "dtype": self.dtype,
            "exact": self.dtype == "float32",
            "device": ",".join(self.devices),
            "devices": list(self.devices),
            "transformers": transformers.__version__,
        }

    def score(self, sources: Sequence[str], targets: Sequence[str]) -> list[float]:
        """Raw BARTScore of each (source, target) pair, in input order; identical pairs once."""
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets: pairs must align")
        pair_of: dict[tuple[str, str], int] = {}
        slots = [
            pair_of.setdefault((s, t), len(pair_of)) for s, t in zip(sources, targets, strict=True)
        ]
        pairs = list(pair_of)
        if not pairs:
            return []
        src_ids = self._encode([s for s, _ in pairs])
        tgt_ids = self._encode([t for _, t in pairs])
        workers = [self, *self._others]
        show = self.progress and len(pairs) >= _PROGRESS_MIN_TEXTS
        with _progress_bar(show, "BARTScore", len(pairs)) as advance, _matmul_precision(self.dtype):
            if len(workers) == 1:
                values = self._score_ids(src_ids, tgt_ids, advance)
            else:
                values = self._score_shared(workers, src_ids, tgt_ids, advance)
        return [values[k] for k in slots]

    def _score_shared(
        self, workers: list[BartScorer], src_ids: list[list[int]], tgt_ids: list[list[int]],
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
        plan = balance_bins(weights, len(workers))
        results = run_per_device([
            partial(w._score_ids, src_ids, tgt_ids, advance, [batches[i] for i in ids])
            for w, ids in zip(workers, plan, strict=True)
        ])  # fmt: skip
        bins = [sorted(k for i in ids for k in batches[i]) for ids in plan]
        return merge_bins(bins, [[r[k] for k in b] for r, b in zip(results, bins, strict=True)], len(shapes))

    def _score_ids(
        self, src_ids: list[list[int]], tgt_ids: list[list[int]], advance: Callable[[int], None],
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
            src, src_mask = _pad_right([src_ids[k] for k in batch], pad)
            labels, _ = _pad_right([tgt_ids[k] for k in batch], pad)
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
            nll = F.cross_entropy(
                logits.float().flatten(0, 1), labels.flatten(), ignore_index=pad, reduction="none"
            ).view(labels.shape).sum(dim=1)
            scores[to_device(positions, self.device)] = -nll / to_device(target_len, self.device)

        with torch.inference_mode():  # per thread: each device's worker enters its own
            if batches is None:
                self._budget = run_batches(order, shapes, self._forward_budget(), forward, advance)
            else:
                self._budget = run_planned(batches, shapes, self._forward_budget(), forward, advance)
        return scores.tolist()  # the one transfer back to the host

    def _forward_budget(self) -> Budget:
        if self._budget is not None:  # what an earlier call (after any back-off) settled on
            return self._budget
        return device_budget(self.device, self.batch_size, seq2seq_budget, self._loaded.model.config, self.dtype)

    def _encode(self, texts: list[str]) -> list[list[int]]:
        return self._loaded.tokenizer(texts, max_length=self.max_length, truncation=True)[
            "input_ids"
        ]


def _pad_right(rows: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and the attention mask (1 on real tokens)."""
    import torch

    ids = torch.full((len(rows), max(len(r) for r in rows)), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask
