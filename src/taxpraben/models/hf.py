"""``hf:PATH_OR_ID``: local generation with transformers.

The tokenizer's chat template is applied when it has one (else the messages' contents
joined by blank lines); greedy when the temperature is 0 (or ``do_sample`` is false in
``--gen-kwargs``), sampled otherwise with torch seeded by the run's seed before each batch.
Greedy decoding is deterministic, so the runs share one generation (``shares_runs``). Extra
``--gen-kwargs`` go to ``model.generate`` (``repetition_penalty``, ``top_k``,
``cache_implementation``, ...) and win over the defaults below.

Keeping a GPU busy: the runner hands over up to ``GROUP_SIZE`` requests per call (or
``--concurrency`` if larger); they are sorted by prompt length (longest first, so padding is
small) and cut into batches of at most ``--concurrency`` prompts whose padded tokens (prompt
plus ``max_tokens`` new ones) fit a budget: on CUDA the KV cache and activations estimated
out of the free device memory, with an out-of-memory error halving the batch and retrying
(``taxpraben.compute.batches``); off CUDA the prompt count alone. The model is loaded with the
efficient attention of PyTorch (``attn_implementation="sdpa"``) where the architecture has
it, and on CUDA generates with transformers' static KV cache (``cache_implementation=
"static"``, which transformers compiles with ``torch.compile``) where the architecture
supports it; if that fails on a machine, the backend says so once and goes on with the
dynamic cache. Results come back in the order of the requests. Prompts that, with
``max_tokens``, run past the model's context are generated as they are, said once and
counted (``past_context``).

The model is loaded on the first batch, in a worker thread (so a fully cached run never
loads it), and generation runs in that thread while the event loop keeps the progress bar
and the cache going. A model that cannot be loaded raises :class:`ModelSpecError`.

``--model-args`` (:data:`~taxpraben.models.hf_args.HF_MODEL_ARGS`) go to ``from_pretrained``: the dtype, a device map
and its memory limits, the revision, the attention implementation, 8-bit or 4-bit loading
(bitsandbytes) and, opted into, the repository's own code (``trust_remote_code``). They are
checked when the backend is built, before anything is loaded.

For large models or large data, serve the model with vLLM (paged attention, continuous
batching) and use ``openai:`` against it; see the README.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from taxpraben.compute.batches import (
    DEVICE_MEMORY_FRACTION,
    Budget,
    free_cuda_bytes,
    is_out_of_memory,
    run_batches,
)
from taxpraben.compute.devices import DeviceError, parse_devices, resolve_device
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
)
from taxpraben.models.hf_args import (
    load_args,
    model_kwargs,
)
from taxpraben.terminal.library_bars import silence_library_bars

if TYPE_CHECKING:
    import torch
    from transformers import GenerationConfig as HFGenerationConfig
    from transformers import PretrainedConfig, PreTrainedTokenizerBase
    from transformers.models.auto.auto_factory import _BaseAutoModelClass

    from taxpraben.results.json_value import JSONObject, JSONValue

log = logging.getLogger(__name__)


#: Requests the runner hands over per call, at least: enough to sort by length.
GROUP_SIZE = 256
#: On CUDA with a static cache, prompts are padded to a multiple of this many tokens, so that
#: batches share shapes and the compiled step is reused rather than compiled again.
_STATIC_PAD_MULTIPLE = 64


class CausalLM(Protocol):
    """What the backend uses of a transformers causal LM (``AutoModelForCausalLM``):
    transformers types ``PreTrainedModel.generate`` as a wrapped function of the model."""

    config: PretrainedConfig
    generation_config: HFGenerationConfig
    device: torch.device

    def to(self, device: str) -> object: ...

    def eval(self) -> object: ...

    def generate(self, **kwargs: object) -> torch.Tensor: ...


@dataclass(frozen=True)
class _Loaded:
    tokenizer: PreTrainedTokenizerBase
    model: CausalLM
    device: str


class HFBackend:
    """A causal LM and its tokenizer from a local directory or the hub.

    ``batch_size`` (``--concurrency``) is the most prompts in one ``generate`` batch;
    ``self.batch_size``, what the runner groups per call, is at least ``GROUP_SIZE``.
    ``cache_implementation``: ``"auto"`` (static on CUDA where the model supports it, else
    transformers' default), ``None`` for transformers' default, or a name transformers knows.
    """

    kind = "hf"
    endpoint: str | None = None
    cacheable = True

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 16,
        device: str = "auto",
        cache_implementation: str | None = "auto",
        model_args: Mapping[str, JSONValue] | None = None,
        chat_template: bool | None = None,
    ) -> None:
        self.model = model
        #: ``--chat-template`` (True: required), ``--no-chat-template`` (False: the raw query),
        #: None: the template when the tokenizer has one.
        self.chat_template = chat_template
        #: ``--model-args`` as given (recorded and part of the cache key), and checked.
        self.model_args = dict(model_args or {})
        self.load_args = load_args(model, self.model_args)
        #: Warnings for the user before anything is loaded (the job prints them).
        self.notices = self.load_args.notices
        self.max_batch = max(1, batch_size)
        self.batch_size = max(self.max_batch, GROUP_SIZE)
        self.cache_implementation = cache_implementation
        try:  # a misspelt --device is refused now, not after the first requests
            parse_devices(device)
        except DeviceError as exc:
            raise ModelSpecError(f"hf:{model}: {exc}") from exc
        self._device_name = device
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._static_failed = False
        self._budget: Budget | None = None
        #: Prompts whose length plus ``max_tokens`` ran past the model's context.
        self.past_context = 0
        self._warned_context = False

    @property
    def spec(self) -> str:
        return f"hf:{self.model}"

    @property
    def key_args(self) -> JSONObject:
        """The cache key's model arguments: ``--model-args``, and ``--no-chat-template`` (it
        changes every prompt; ``--chat-template`` gives the default's prompts or refuses)."""
        return {**self.model_args, "chat_template": False} if self.chat_template is False else self.model_args

    def chat_template_meta(self) -> str:
        """``meta.chat_template`` (:func:`describe_chat_template`); the tokenizer alone is
        loaded when the model was not (every answer came from the cache)."""
        tokenizer = self._loaded.tokenizer if self._loaded is not None else None
        if tokenizer is None and self.chat_template is not False:
            try:
                from transformers import AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(self.model, **self.load_args.tokenizer)
            except (OSError, ValueError, ImportError):
                return "unknown: the tokenizer could not be loaded"
        return describe_chat_template(tokenizer, self.chat_template)

    def shares_runs(self, config: GenerationConfig) -> bool:
        return config.greedy

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                from transformers import AutoModelForCausalLM, AutoTokenizer

                silence_library_bars()
                try:
                    # One model, one device: of a list (the scorers' GPUs), the first.
                    device = resolve_device(self._device_name)
                except DeviceError as exc:
                    raise ModelSpecError(f"hf:{self.model}: {exc}") from exc
                args = self.load_args
                try:
                    tokenizer = AutoTokenizer.from_pretrained(self.model, **args.tokenizer)
                    model = _load_causal_lm(AutoModelForCausalLM, self.model, model_kwargs(args, device))
                except (OSError, ValueError, ImportError) as exc:
                    raise ModelSpecError(f"hf:{self.model}: cannot load the model: {exc}") from exc
                check_chat_template(self.spec, tokenizer, self.chat_template)
                tokenizer.padding_side = "left"
                if tokenizer.pad_token is None:
                    tokenizer.pad_token = tokenizer.eos_token
                if args.placed:  # transformers placed it: the inputs go where its first layer is
                    device = str(model.device)
                else:
                    model.to(device)
                model.eval()
                self._loaded = _Loaded(tokenizer, model, device)
            return self._loaded

    def prompt_text(self, tokenizer: PreTrainedTokenizerBase, request: Request) -> str:
        """The prompt for one request: the chat template (unless ``--no-chat-template``),
        else the contents joined."""
        messages = [dict(m) for m in request.messages]
        if self.chat_template is not False and getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return cast(str, text)  # tokenize=False: the template's text
        return "\n\n".join(m["content"] for m in messages)

    def static_cache(self, loaded: _Loaded) -> bool:
        """Whether ``generate`` gets ``cache_implementation="static"`` by default."""
        if self._static_failed:
            return False
        if self.cache_implementation == "auto":
            on_cuda = loaded.device.split(":", 1)[0] == "cuda"
            return on_cuda and bool(getattr(loaded.model, "_can_compile_fullgraph", False))
        return self.cache_implementation == "static"

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        return await self.generate_live(requests, config, lambda n: None)

    async def generate_live(
        self, requests: Sequence[Request], config: GenerationConfig, finished: Callable[[int], None]
    ) -> list[Completion | BackendError]:
        """:meth:`generate`, calling ``finished(n)`` (from the worker thread) as each batch of
        ``n`` items is done, so that the progress bar moves during a call of many batches."""
        return await asyncio.to_thread(self._generate_sync, list(requests), config, finished)

    def _generate_sync(
        self, requests: list[Request], config: GenerationConfig, finished: Callable[[int], None]
    ) -> list[Completion | BackendError]:
        loaded = self._load()
        tokenizer = loaded.tokenizer
        prompts = [self.prompt_text(tokenizer, r) for r in requests]
        ids = tokenizer(prompts, add_special_tokens=False)["input_ids"]
        self._warn_past_context(loaded, [len(i) for i in ids], config.max_tokens)
        results: list[Completion | BackendError | None] = [None] * len(requests)
        # One seed per batch, so a sampled run is reproducible: batches never mix runs.
        by_seed: dict[int | None, list[int]] = {}
        for i, r in enumerate(requests):
            by_seed.setdefault(r.seed, []).append(i)
        shapes = [(len(prompt),) for prompt in ids]
        for seed, members in by_seed.items():
            order = sorted(members, key=lambda i: -len(ids[i]))

            def forward(batch: list[int], seed: int | None = seed) -> None:
                try:
                    done: Sequence[Completion | BackendError] = self._generate_batch(loaded, [ids[i] for i in batch], seed, config)
                except (RuntimeError, ValueError) as exc:  # a bad gen kwarg, a model error
                    if len(batch) > 1 and is_out_of_memory(exc):
                        raise  # run_batches halves the batch and retries
                    error = BackendError(f"local generation failed: {exc}", retryable=False)
                    done = [error] * len(batch)
                for i, outcome in zip(batch, done, strict=True):
                    results[i] = outcome

            self._budget = run_batches(order, shapes, self._batch_budget(loaded, config), forward, finished)
        # Every item was assigned: failures of one item are BackendErrors, never raised.
        return [r for r in results if r is not None]

    def _warn_past_context(self, loaded: _Loaded, prompt_lengths: list[int], max_tokens: int) -> None:
        """Say once when prompts plus ``max_tokens`` run past the model's trained context:
        transformers generates on (a rotary model raises nothing), but what comes out there is
        not what the model was trained to give. A warning, not a refusal: a little past it, a
        model often still answers, and the answers are scored as they are."""
        context = context_length(loaded.model.config)
        over = [n for n in prompt_lengths if context is not None and n + max_tokens > context]
        self.past_context += len(over)
        if over and not self._warned_context:
            self._warned_context = True
            log.warning(
                "hf:%s: %d prompt(s) of %d run past the model's context (longest %d tokens + "
                "max_tokens %d > %d): what it generates there may be noise; use a model with a "
                "longer context, or a lower --max-tokens",
                self.model, len(over), len(prompt_lengths), max(over), max_tokens, context,
            )

    def _batch_budget(self, loaded: _Loaded, config: GenerationConfig) -> Budget:
        """Off CUDA, ``max_batch`` prompts; on CUDA also what the free memory holds."""
        if self._budget is not None:
            return self._budget
        rows_only = Budget(max_cost=float("inf"), max_rows=self.max_batch)
        free = free_cuda_bytes(loaded.device)
        if free is None:
            return rows_only
        try:
            return generation_budget(free, loaded.model.config, config.max_tokens, self.max_batch)
        except (AttributeError, TypeError, ValueError):  # a config without the usual sizes
            return rows_only

    def _generate_batch(
        self,
        loaded: _Loaded,
        prompt_ids: list[list[int]],
        seed: int | None,
        config: GenerationConfig,
    ) -> list[Completion]:
        import torch

        tokenizer, model, device = loaded.tokenizer, loaded.model, loaded.device
        start = time.perf_counter()
        static = self.static_cache(loaded)
        enc = left_padded(
            prompt_ids, tokenizer.pad_token_id, _STATIC_PAD_MULTIPLE if static else 1
        )
        enc = {k: v.to(device) for k, v in enc.items()}
        kwargs: dict[str, object] = {
            "max_new_tokens": config.max_tokens,
            "do_sample": not config.greedy,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if static:
            kwargs["cache_implementation"] = "static"
        elif self.cache_implementation not in (None, "auto", "static"):
            kwargs["cache_implementation"] = self.cache_implementation
        if not config.greedy:
            kwargs["temperature"] = config.temperature or 1.0
            if config.top_p is not None:
                kwargs["top_p"] = config.top_p
        kwargs.update(config.gen_kwargs)

        def run() -> torch.Tensor:
            if not config.greedy and seed is not None:
                torch.manual_seed(seed)
            with torch.inference_mode():
                return model.generate(**enc, **kwargs)

        try:
            output = run()
        except Exception as exc:
            if not static or is_out_of_memory(exc) or "cache_implementation" in config.gen_kwargs:
                raise
            # torch.compile cannot run everywhere (no compiler, an unsupported op): say so
            # once, and go on with the dynamic cache.
            log.warning("hf: the static KV cache failed (%s); using the dynamic cache", exc)
            self._static_failed = True
            kwargs.pop("cache_implementation")
            output = run()
        new_tokens = output[:, enc["input_ids"].shape[1] :].tolist()
        eos = model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        latency = (time.perf_counter() - start) / len(prompt_ids)
        completions = []
        for tokens, prompt in zip(new_tokens, prompt_ids, strict=True):
            cut = next((i for i, t in enumerate(tokens) if t in eos_ids), None)
            kept = tokens if cut is None else tokens[:cut]
            completions.append(
                Completion(
                    text=cast(str, tokenizer.decode(kept, skip_special_tokens=True)).strip(),  # one row: a str
                    usage={
                        "prompt_tokens": len(prompt),
                        "completion_tokens": len(kept) + (0 if cut is None else 1),
                    },
                    latency_s=round(latency, 4),
                    finish_reason="length" if cut is None else "stop",
                )
            )
        return completions

    async def aclose(self) -> None:
        self._loaded = None


def describe_chat_template(tokenizer: PreTrainedTokenizerBase | None, wanted: bool | None) -> str:
    """``tokenizer template sha256:<12 hex>`` (of its text), or ``none: raw query`` and why."""
    import hashlib

    if wanted is False:
        return "none: raw query (--no-chat-template)"
    template = getattr(tokenizer, "chat_template", None)
    if not template:
        return "none: raw query (the tokenizer has no chat template)"
    if isinstance(template, Mapping):  # several named templates: the default one is used
        template = template.get("default") or next(iter(template.values()))
    digest = hashlib.sha256(str(template).encode("utf-8")).hexdigest()[:12]
    return f"tokenizer template sha256:{digest}"


def check_chat_template(spec: str, tokenizer: PreTrainedTokenizerBase, wanted: bool | None) -> None:
    """``--chat-template`` with a tokenizer that has none is refused; by default the raw
    query is sent, with a warning (the model was likely not tuned on it)."""
    if wanted is False or getattr(tokenizer, "chat_template", None):
        return
    if wanted:
        raise ModelSpecError(
            f"{spec}: --chat-template: the tokenizer has no chat template; use --no-chat-template to send "
            "the raw query"
        )
    log.warning(
        "%s: the tokenizer has no chat template: each query is sent raw (recorded as meta.chat_template; "
        "--no-chat-template says so and silences this)",
        spec,
    )


def context_length(model_config: PretrainedConfig) -> int | None:
    """The longest sequence (prompt plus new tokens) a model was trained on, from its
    config's usual names, stretched by its RoPE scaling (``factor`` times the original
    length, as Qwen's YaRN and Llama-2's linear scaling declare it; Llama 3.1 already states
    the stretched length); None when it does not say."""
    def positive(value: object) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) and value > 0

    base = next(
        (value for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")
         if positive(value := getattr(model_config, key, None))),
        None,
    )  # fmt: skip
    if base is None:
        return None
    scaling = getattr(model_config, "rope_scaling", None)
    if isinstance(scaling, Mapping) and positive(scaling.get("factor")):
        original = scaling.get("original_max_position_embeddings")
        stretched = (original if positive(original) else base) * scaling["factor"]
        return int(max(base, stretched))
    return int(base)


def left_padded(rows: list[list[int]], pad_id: int, multiple: int = 1) -> dict[str, torch.Tensor]:
    """``input_ids`` and ``attention_mask`` with the prompts right-aligned (left padding),
    the width rounded up to a multiple of ``multiple``."""
    import torch

    width = max(len(r) for r in rows)
    width = -(-width // multiple) * multiple
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _load_causal_lm(auto_class: type[_BaseAutoModelClass], name: str, kwargs: dict[str, Any] | None = None) -> CausalLM:
    """The model (by default in its checkpoint's dtype) with PyTorch's SDPA attention where
    the architecture has it (else its default attention), unless ``kwargs`` name one."""
    kwargs = dict(kwargs or {"dtype": "auto"})
    model: CausalLM
    if "attn_implementation" in kwargs:
        model = auto_class.from_pretrained(name, **kwargs)
        return model
    try:
        model = auto_class.from_pretrained(name, **kwargs, attn_implementation="sdpa")
    except ValueError as exc:
        if "sdpa" not in str(exc).lower() and "attention" not in str(exc).lower():
            raise
        model = auto_class.from_pretrained(name, **kwargs)
    return model


def generation_budget(free_bytes: float, config: PretrainedConfig, max_new_tokens: int, max_rows: int) -> Budget:
    """Batches of prompts padded to width ``w`` cost, per prompt: the KV cache of ``w +
    max_new_tokens`` positions, the prefill activations of ``w`` tokens (hidden- and
    MLP-sized tensors of one layer at a time) and a vocabulary-wide float32 row of logits
    (and the copies the logits processors make). Bytes, out of ``free_bytes``."""
    config = getattr(config, "text_config", None) or config  # multimodal configs nest it
    hidden = int(config.hidden_size)
    heads = int(config.num_attention_heads)
    kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
    head_dim = int(getattr(config, "head_dim", None) or hidden // heads)
    layers = int(config.num_hidden_layers)
    mlp = int(getattr(config, "intermediate_size", None) or 4 * hidden)
    vocab = int(config.vocab_size)
    elem = 2  # bf16/fp16 checkpoints; float32 ones are rare at this size and back off on OOM
    kv_per_token = 2 * layers * kv_heads * head_dim * elem
    prefill_per_token = elem * (8 * hidden + 3 * mlp)
    per_row = vocab * 4 * 4

    def cost(rows: int, widths: tuple[int, ...]) -> float:
        (width,) = widths
        tokens = width + max_new_tokens
        return rows * (tokens * kv_per_token + width * prefill_per_token + per_row)

    return Budget(max_cost=free_bytes * DEVICE_MEMORY_FRACTION, max_rows=max_rows, cost=cost)
