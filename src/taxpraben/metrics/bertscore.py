"""BERTScore, exact to the ``bert_score`` package (0.3.13).

As ``bert_score`` with ``idf=False`` and no baseline rescaling: each text is encoded on its
own (special tokens included, so XLNet sees its trailing ``<sep><cls>``), the hidden state
after the first ``layer`` blocks is taken, each candidate token is matched greedily to its
most cosine-similar reference token (the reference's special tokens are eligible as matches)
and vice versa, and precision and recall are the uniform means over the non-special tokens
(``<sep>`` and ``<cls>`` weigh 0). Batching, devices, dtype and model loading are those of
``metrics.scorer_models``; on several devices the pairs go out in chunks of one reference's
pairs, so that each gold is encoded once.

Differences from the reference package, all deliberate:

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
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from taxpraben.compute import batches as _batching
from taxpraben.compute.batches import (
    Budget,
    free_cuda_bytes,
    run_batches,
    share_out,
    to_device,
)
from taxpraben.metrics.defaults import (
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
    ENV_BERTSCORE_LAYER,
    ENV_BERTSCORE_MODEL,
)
from taxpraben.metrics.scorer_models import (
    DeviceScorer,
    ScorerSettingError,
    cached,
    distinct_pairs,
    is_cuda,
    load_pretrained,
    model_dims,
    pad_right,
    resolve_source,
    weights_dtype,
)

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

    from taxpraben.results.json_value import JSONObject, JSONValue

__all__ = ["PRF", "BertScorer", "bertscore_f1_by_item", "encoder_budget"]

log = logging.getLogger(__name__)


# Token vectors kept in memory at once by BertScorer.score (about 0.8 GB at 768 dims):
# pairs are processed in groups of references whose texts fit, so memory stays flat
# however many runs and tasks one call covers.
_CHUNK_TOKENS = 1 << 18
# Similarity-matrix elements and pairs per greedy-matching batch (CPU; CUDA takes more).
_MATCH_ELEMENTS = 1 << 24
_MATCH_ROWS = 64
_CUDA_MATCH_ELEMENTS = 1 << 28
_CUDA_MATCH_ROWS = 1024
# Share of the free CUDA memory that one call's stored token embeddings may take.
_CUDA_CHUNK_FRACTION = 0.2


@dataclass(frozen=True)
class PRF:
    """BERTScore of one (candidate, reference) pair."""

    precision: float
    recall: float
    f1: float


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


def encoder_budget(free_bytes: float, config: PretrainedConfig, dtype: str) -> Budget:
    """Token budget of an encoder forward pass on a device with ``free_bytes`` free.

    Estimated bytes per padded token of width ``w``, for one layer at a time (inference
    keeps only the current layer's activations): hidden-sized tensors (about 12 of them:
    projections, residuals, norms), two feed-forward-sized ones, and the attention matrices
    (about 8 per head, the width of the batch each: XLNet's relative attention keeps several),
    plus the float32, unit-normalised output that the scorer keeps.
    """
    hidden, ffn, heads = model_dims(config)
    elem = 2 if dtype == "bf16" else 4
    linear = elem * (12 * hidden + 2 * ffn) + 8 * hidden
    per_width = elem * 8 * heads

    def cost(rows: int, widths: tuple[int, ...]) -> float:
        (width,) = widths
        return rows * width * (linear + per_width * width)

    return Budget(
        max_cost=free_bytes * _batching.DEVICE_MEMORY_FRACTION, max_rows=1 << 16, cost=cost
    )


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
    tokenizer: PreTrainedTokenizerBase
    encoder: PreTrainedModel
    forward_kwargs: Mapping[str, object]


def _load_bert(model: str, layer: int, device: str, dtype: str = "float32") -> _BertModel:
    source = resolve_source("BERTScore", model)

    def load() -> _BertModel:
        from transformers import AutoModel

        tokenizer, encoder = load_pretrained("BERTScore", model, source, AutoModel)
        encoder = _truncate_layers(encoder, layer, model).eval().to(device, weights_dtype(dtype))
        # XLNet would otherwise keep every layer's states as "mems" for a next segment.
        kwargs = {"use_mems": False} if getattr(encoder.config, "model_type", "") == "xlnet" else {}
        return _BertModel(tokenizer, encoder, kwargs)

    return cached(("bert", source, layer, device, str(weights_dtype(dtype))), load)


@dataclass(frozen=True)
class _Text:
    """One unique stripped text: its token ids and normalised matching weights."""

    ids: list[int]
    weights: torch.Tensor  # sums to 1, or all 0 when no token carries weight


class BertScorer(DeviceScorer):
    """BERTScore (P, R, F1) with a model it loads once; see the module docstring.

    ``model`` is a hub id or a local directory (a directory is never looked up online;
    ``HF_HUB_OFFLINE=1`` keeps hub ids to the local cache). ``layer`` counts blocks from
    the embeddings (0) as ``bert_score``'s ``num_layers`` does. ``max_tokens`` caps each
    text's length, special tokens included; by default nothing is truncated, as in the
    reference. ``batch_size`` is the texts per forward pass off CUDA; on CUDA batches are
    sized by free memory. ``dtype`` is one of ``SCORER_DTYPES``. ``device`` is a
    ``--device`` value (``taxpraben.compute.devices``): several devices split each call's pairs.
    Raises ``ScorerUnavailable`` when the model cannot be loaded, ``ValueError`` for a layer
    the model does not have and ``DeviceError`` for a device this machine does not have.
    :meth:`from_env` reads ``TAXPRABEN_BERTSCORE_MODEL`` / ``_LAYER``.
    """

    name: ClassVar[str] = "BERTScore"
    _described_last: ClassVar[Mapping[str, JSONValue]] = {"reference": "bert_score 0.3.13 semantics"}

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
        self.layer = layer
        self.idf = idf
        self.max_tokens = max_tokens
        self._set_up(model, batch_size, progress, device, dtype)
        self._loaded = _load_bert(model, layer, self.device, dtype)
        # One single-device scorer per further device: its own model copy and budget.
        self._others = [
            BertScorer(model, layer, idf=idf, batch_size=batch_size, device=other,
                       max_tokens=max_tokens, dtype=dtype)
            for other in self.devices[1:]
        ]  # fmt: skip

    @classmethod
    def _env_settings(cls, env: Mapping[str, str]) -> dict[str, object]:
        settings: dict[str, object] = {
            "model": env.get(ENV_BERTSCORE_MODEL) or DEFAULT_BERTSCORE_MODEL
        }
        if env.get(ENV_BERTSCORE_LAYER):
            settings["layer"] = int(env[ENV_BERTSCORE_LAYER])
        return settings

    def _settings(self) -> JSONObject:
        return {
            "layer": self.layer,
            "idf": self.idf,
            "max_tokens": self.max_tokens,
            "rescale_with_baseline": False,
            "score": "F1",
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
        pairs, slots = distinct_pairs(
            (c.strip(), r.strip()) for c, r in zip(candidates, references, strict=True)
        )
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
        total = sum(len(chunk_texts) for _, chunk_texts in chunks)
        with self._scoring(total) as advance:
            # Whole chunks (a gold and its pairs, encoded in the same batches as on one
            # device) shared out, balanced by the tokens of their distinct texts.
            unique_scores = share_out(
                workers,
                [chunk_pairs for chunk_pairs, _ in chunks],
                [sum(len(texts[t].ids) for t in chunk_texts) for _, chunk_texts in chunks],
                lambda w, ids: w._score_chunks(pairs, [chunks[i] for i in ids], texts, advance),
                len(pairs),
            )
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
        return self._kept_budget(encoder_budget, self._loaded.encoder.config)

    def _chunk_tokens(self, share: int | None = None) -> int:
        """Token vectors one chunk keeps: ``_CHUNK_TOKENS``, or a share of free CUDA memory,
        at most ``share`` (but never under ``_CHUNK_TOKENS``) when devices share the work."""
        free = free_cuda_bytes(self.device) if is_cuda(self.device) else None
        if free is None:
            return _CHUNK_TOKENS
        hidden, _, _ = model_dims(self._loaded.encoder.config)
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
            distinct = {t for pair in pairs for t in pair}
            share = sum(len(texts[t].ids) for t in distinct) // (4 * devices)
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
            input_ids, mask = pad_right([texts[batch_texts[i]].ids for i in batch], pad_id)
            weights = torch.zeros(input_ids.shape, dtype=torch.float32)
            for row, i in enumerate(batch):
                weights[row, : lengths[i]] = texts[batch_texts[i]].weights
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
        cuda = is_cuda(self.device)
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
        import torch
        from torch.nn.utils.rnn import pad_sequence

        vectors = [v for v, _ in embedded]
        padded = pad_sequence(vectors, batch_first=True)
        mask = pad_sequence([v.new_ones(len(v), dtype=torch.bool) for v in vectors], batch_first=True)
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
