"""What the semantic scorers (``metrics.bertscore``, ``metrics.bartscore``) share about their models.

Where a model comes from (a local directory, never looked up online, or a hub id) and what to
do when it cannot be had (:class:`ScorerUnavailable`, with the option, the variable and the
download command that would supply it); loading it once per process (the model cache); the
dtype it runs in; the devices it runs on and the batch budget of each; the progress bar.

Speed comes from not repeating work, never from approximating it: a ``score`` call
dedupes identical pairs and identical texts (gold answers repeat across the 5 runs, so each
gold is encoded once), runs the encoder only up to the needed layer, and the models are
loaded once per process. Batches are longest first and sized by a budget
(``taxpraben.compute.batches``): padded tokens on CPU (``batch_size`` texts of up to 512 tokens), and
on CUDA the memory the batch's activations are estimated to take, out of the device's free
memory, so that a batch fills the GPU; an out-of-memory error halves the budget and retries
(it never fails the job). Results stay on the device until the end of a call (one transfer,
no per-batch synchronisation).

Several devices (``device="cuda"`` with several visible GPUs, or a list such as
``"cuda:0,cuda:1"``; see ``taxpraben.compute.devices``): a scorer runs on the first and holds one
single-device copy of itself per further device (:class:`DeviceScorer`). After the
de-duplication, the work one device would do is shared out whole in length-balanced bins,
one per device (BERTScore's chunks, which keep the pairs of one reference together so that
each gold is encoded once; BARTScore's batches), each device runs its bin with its own copy
of the model and its own budget and back-off, and the scores are merged back in input order
(``taxpraben.compute.batches.share_out``). A text's score does not depend on where it ran, only, at
float rounding, on the batch it was padded with, as with one device at another batch size.

``dtype`` (``--scorer-dtype``): ``float32`` (default) is exact to the reference code, with
TF32 matrix products turned off whatever the process set; ``tf32`` lets CUDA's matrix products
use TF32; ``bf16`` runs the model in bfloat16 (similarities, log-softmax and means stay in
float32). Both trade exactness for speed; ``describe()`` records the choice in results.json.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar, cast

from taxpraben.compute.batches import Budget, free_cuda_bytes, padded_tokens
from taxpraben.compute.devices import resolve_devices
from taxpraben.metrics.defaults import ENV_BARTSCORE_MODEL, ENV_BERTSCORE_MODEL, SCORER_DTYPES

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase
    from transformers.models.auto.auto_factory import _BaseAutoModelClass

    from taxpraben.results.json_value import JSONObject, JSONValue


__all__ = [
    "DeviceScorer",
    "ModelSource",
    "ScorerSettingError",
    "ScorerUnavailable",
    "cached",
    "check_dtype",
    "clear_model_cache",
    "cpu_budget",
    "device_budget",
    "distinct_pairs",
    "is_cuda",
    "load_pretrained",
    "matmul_precision",
    "model_dims",
    "pad_right",
    "progress_bar",
    "resolve_source",
    "weights_dtype",
]

# Padded tokens per forward batch on CPU, per unit of batch_size: long texts get smaller batches.
_TOKENS_PER_ITEM = 512
# Below this many texts (or pairs) a progress bar is not worth drawing.
_PROGRESS_MIN_TEXTS = 256

S = TypeVar("S", bound="DeviceScorer")
M = TypeVar("M")


class ScorerUnavailable(RuntimeError):
    """A scorer's model cannot be had; the message says which, why, and how to supply it."""


class ScorerSettingError(ScorerUnavailable, ValueError):
    """A scorer setting that does not fit its model (a BERTScore layer it does not have).

    A ``ScorerUnavailable``: after a generation, the metric is "not computed" with this
    reason (the predictions are kept, to score again with a setting that fits)."""


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class ModelSource:
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


def resolve_source(kind: str, model: str) -> ModelSource:
    """Where ``model`` of ``kind`` ("BERTScore" or "BARTScore") is loaded from; raises
    :class:`ScorerUnavailable` for a path that is not a directory."""
    path = Path(model).expanduser()
    if path.is_dir():
        return ModelSource(str(path.resolve()), local_only=True)
    if path.exists():
        raise _unavailable(kind, model, "it is a file; a model is a directory with config.json")
    if _looks_like_path(model):
        raise _unavailable(kind, model, "no such directory")
    return ModelSource(model, local_only=_offline())


def _load_failure(kind: str, model: str, source: ModelSource, exc: Exception) -> ScorerUnavailable:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if source.local_only and not Path(source.name).is_dir():
        reason = f"HF_HUB_OFFLINE is set and it is not in the local Hugging Face cache ({reason})"
    return _unavailable(kind, model, reason)


def load_pretrained(
    kind: str, model: str, source: ModelSource, auto_class: type[_BaseAutoModelClass]
) -> tuple[PreTrainedTokenizerBase, PreTrainedModel]:
    """The tokenizer and the float32 model (``auto_class``, such as transformers' ``AutoModel``)
    of ``source``; raises :class:`ScorerUnavailable` with the reason when either cannot load."""
    import torch
    from transformers import (
        AutoTokenizer,
    )

    from taxpraben.terminal.library_bars import silence_library_bars

    silence_library_bars()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.name, local_files_only=source.local_only)
        loaded = auto_class.from_pretrained(
            source.name, local_files_only=source.local_only, dtype=torch.float32
        )
    except (OSError, ValueError, ImportError, RuntimeError) as exc:
        raise _load_failure(kind, model, source, exc) from exc
    return tokenizer, loaded


# One loaded model per (kind, source, options, device) and process: scorers share them.
_MODEL_CACHE: dict[Hashable, object] = {}


def clear_model_cache() -> None:
    """Forget the loaded scorer models, of both scorers (they are freed once no scorer holds
    them)."""
    _MODEL_CACHE.clear()


def cached(key: Hashable, load: Callable[[], M]) -> M:
    """The model cached under ``key``, loaded by ``load`` on first use."""
    if key not in _MODEL_CACHE:
        _MODEL_CACHE[key] = load()
    model = cast("M", _MODEL_CACHE[key])  # stored by this function under its key
    return model


# --------------------------------------------------------------------------- running


@contextmanager
def progress_bar(enabled: bool, description: str, total: int) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; draws a rich bar with ETA on stderr when ``enabled`` and there are
    ``total`` units enough to be worth it."""
    if not enabled or total < _PROGRESS_MIN_TEXTS:
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


def check_dtype(dtype: str) -> str:
    """``dtype`` if it is one of ``SCORER_DTYPES``; raises ``ValueError`` otherwise."""
    if dtype not in SCORER_DTYPES:
        raise ValueError(f"scorer dtype must be one of {', '.join(SCORER_DTYPES)}, got {dtype!r}")
    return dtype


def weights_dtype(dtype: str) -> torch.dtype:
    """The dtype the model's weights are held in for a scorer dtype (TF32 keeps float32)."""
    import torch


    return torch.bfloat16 if dtype == "bf16" else torch.float32


@contextmanager
def matmul_precision(dtype: str) -> Iterator[None]:
    """Float32 matrix products in IEEE float32, or in TF32 for ``tf32``, for the duration."""
    import torch


    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if dtype == "tf32" else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def is_cuda(device: str) -> bool:
    return device.split(":", 1)[0] == "cuda"


def model_dims(config: PretrainedConfig) -> tuple[int, int, int]:
    """(hidden size, feed-forward size, attention heads) of a transformers config."""
    hidden = int(getattr(config, "hidden_size", 0) or getattr(config, "d_model", 768))
    ffn = (
        getattr(config, "intermediate_size", None)
        or getattr(config, "d_inner", None)
        or getattr(config, "encoder_ffn_dim", None)
        or 4 * hidden
    )
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None) or 12
    return hidden, int(ffn), int(heads)


def cpu_budget(batch_size: int) -> Budget:
    """Off CUDA: ``batch_size`` texts and ``batch_size * 512`` padded tokens per pass."""
    return Budget(max_cost=batch_size * _TOKENS_PER_ITEM, max_rows=batch_size, cost=padded_tokens)


def device_budget(
    device: str,
    batch_size: int,
    from_memory: Callable[[float, PretrainedConfig, str], Budget],
    config: PretrainedConfig,
    dtype: str,
) -> Budget:
    """The first budget of a scorer: from free memory on CUDA (``from_memory`` is
    ``bertscore.encoder_budget`` or ``bartscore.seq2seq_budget``), else :func:`cpu_budget`."""
    free = free_cuda_bytes(device) if is_cuda(device) else None
    return cpu_budget(batch_size) if free is None else from_memory(free, config, dtype)


def distinct_pairs(pairs: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[int]]:
    """The distinct pairs, in the order first seen, and each given pair's index among them."""
    index: dict[tuple[str, str], int] = {}
    slots = [index.setdefault(pair, len(index)) for pair in pairs]
    return list(index), slots


def pad_right(rows: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and the attention mask (1 on real tokens)."""
    import torch


    ids = torch.full((len(rows), max(len(r) for r in rows)), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


class DeviceScorer:
    """What both scorers keep about their settings, the devices they run on and the batches
    they may run there.

    ``devices`` are the entries of a ``--device`` value; the scorer runs on the first
    (``device``) and holds one single-device copy of itself per further device (``_others``,
    made by the subclass: its own model copy and budget). ``_budget`` is the budget in force
    at the end of the last call (halved after an out-of-memory error), kept so that later
    calls do not repeat a failure; the first comes from :func:`device_budget`.
    """

    #: "BERTScore" or "BARTScore", as the progress bar says it.
    name: ClassVar[str]
    #: Entries of :meth:`describe` after the devices (BERTScore names its reference).
    _described_last: ClassVar[Mapping[str, JSONValue]] = {}

    model: str
    batch_size: int
    progress: bool
    dtype: str
    devices: tuple[str, ...]
    device: str
    _budget: Budget | None

    def _set_up(self, model: str, batch_size: int, progress: bool, device: str, dtype: str) -> None:
        """Keep the shared settings; resolve ``device`` (``DeviceError`` for one this machine
        lacks), then check ``dtype``."""
        self.model = model
        self.batch_size = batch_size
        self.progress = progress
        self.devices = resolve_devices(device)
        self.device = self.devices[0]  # this scorer's own; the others' scorers are below
        self.dtype = check_dtype(dtype)
        self._budget = None

    @classmethod
    def from_env(cls: type[S], environ: Mapping[str, str] | None = None, **kwargs: object) -> S:
        """Build from the scorer's environment variables where set (:meth:`_env_settings`:
        ``TAXPRABEN_BERTSCORE_MODEL`` / ``_LAYER``, ``TAXPRABEN_BARTSCORE_MODEL`` /
        ``_WEIGHTS``); kwargs win."""
        env = os.environ if environ is None else environ
        for key, value in cls._env_settings(env).items():
            kwargs.setdefault(key, value)
        return cls(**kwargs)

    @classmethod
    def _env_settings(cls, env: Mapping[str, str]) -> dict[str, object]:
        """The constructor's keyword arguments that ``env`` sets."""
        raise NotImplementedError

    def describe(self) -> JSONObject:
        """The settings that determine the scores, for results.json."""
        import transformers

        return {
            "model": self.model,
            **self._settings(),
            "dtype": self.dtype,
            "exact": self.dtype == "float32",
            "device": ",".join(self.devices),
            "devices": list(self.devices),
            **self._described_last,
            "transformers": transformers.__version__,
        }

    def _settings(self) -> JSONObject:
        """The scorer's own settings, for :meth:`describe`."""
        raise NotImplementedError

    @contextmanager
    def _scoring(self, total: int) -> Iterator[Callable[[int], None]]:
        """Around one call of ``total`` units: the progress bar's ``advance`` (when
        ``progress``), and matrix products at the precision of ``dtype``."""
        with progress_bar(self.progress, self.name, total) as advance, matmul_precision(self.dtype):
            yield advance

    def _kept_budget(self, from_memory: Callable[[float, PretrainedConfig, str], Budget], config: PretrainedConfig) -> Budget:
        """The budget of the next forward pass: what an earlier call (after any back-off)
        settled on, else the device's first budget."""
        if self._budget is not None:
            return self._budget
        return device_budget(self.device, self.batch_size, from_memory, config, self.dtype)
