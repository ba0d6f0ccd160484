"""``hf:PATH_OR_ID``: local generation with transformers.

Batched (``--concurrency`` items per batch, left padding), the tokenizer's chat template
applied when it has one (else the messages' contents joined by blank lines), greedy when
the temperature is 0 (or ``do_sample`` is false in ``--gen-kwargs``), sampled otherwise
with torch seeded by the run's seed before each batch. Greedy decoding is deterministic,
so the runs share one generation (``shares_runs``). Extra ``--gen-kwargs`` go to
``model.generate`` (``repetition_penalty``, ``top_k``, ...).

The model is loaded on the first batch, in a worker thread (so a fully cached run never
loads it), and generation runs in that thread while the event loop keeps the progress bar
and the cache going. A model that cannot be loaded raises :class:`ModelSpecError`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
)


def pick_device(device: str) -> str:
    """``auto`` -> ``cuda`` if available, else ``mps``, else ``cpu``; other names as given."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class HFBackend:
    """A causal LM and its tokenizer from a local directory or the hub."""

    kind = "hf"
    endpoint: str | None = None
    cacheable = True

    def __init__(self, model: str, *, batch_size: int = 16, device: str = "auto") -> None:
        self.model = model
        self.batch_size = max(1, batch_size)
        self._device_name = device
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, str] | None = None

    @property
    def spec(self) -> str:
        return f"hf:{self.model}"

    def shares_runs(self, config: GenerationConfig) -> bool:
        return config.greedy

    def _load(self) -> tuple[Any, Any, str]:
        with self._lock:
            if self._loaded is None:
                from transformers import AutoModelForCausalLM, AutoTokenizer

                device = pick_device(self._device_name)
                try:
                    tokenizer = AutoTokenizer.from_pretrained(self.model)
                    model = AutoModelForCausalLM.from_pretrained(self.model, dtype="auto")
                except (OSError, ValueError) as exc:
                    raise ModelSpecError(f"hf:{self.model}: cannot load the model: {exc}") from exc
                tokenizer.padding_side = "left"
                if tokenizer.pad_token is None:
                    tokenizer.pad_token = tokenizer.eos_token
                model.to(device)
                model.eval()
                self._loaded = (tokenizer, model, device)
            return self._loaded

    def prompt_text(self, tokenizer: Any, request: Request) -> str:
        """The prompt for one request: the chat template, else the contents joined."""
        messages = [dict(m) for m in request.messages]
        if getattr(tokenizer, "chat_template", None):
            return tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False
            )
        return "\n\n".join(m["content"] for m in messages)

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        return await asyncio.to_thread(self._generate_sync, list(requests), config)

    def _generate_sync(
        self, requests: list[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        tokenizer, model, device = self._load()
        out: list[Completion | BackendError] = []
        # One seed per sub-batch, so a sampled run is reproducible for a fixed batch size.
        for _seed, group in groupby(requests, key=lambda r: r.seed):
            batch = list(group)
            try:
                out.extend(self._generate_batch(tokenizer, model, device, batch, config))
            except (RuntimeError, ValueError) as exc:  # e.g. out of memory, a bad gen kwarg
                error = BackendError(f"local generation failed: {exc}", retryable=False)
                out.extend([error] * len(batch))
        return out

    def _generate_batch(
        self,
        tokenizer: Any,
        model: Any,
        device: str,
        batch: list[Request],
        config: GenerationConfig,
    ) -> list[Completion]:
        import torch

        start = time.perf_counter()
        prompts = [self.prompt_text(tokenizer, r) for r in batch]
        enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(device) for k, v in enc.items()}
        kwargs: dict[str, Any] = {
            "max_new_tokens": config.max_tokens,
            "do_sample": not config.greedy,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if not config.greedy:
            kwargs["temperature"] = config.temperature or 1.0
            if config.top_p is not None:
                kwargs["top_p"] = config.top_p
            torch.manual_seed(batch[0].seed)
        kwargs.update(config.gen_kwargs)
        with torch.inference_mode():
            output = model.generate(**enc, **kwargs)
        new_tokens = output[:, enc["input_ids"].shape[1] :].tolist()
        prompt_lengths = enc["attention_mask"].sum(dim=1).tolist()
        eos = model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        latency = (time.perf_counter() - start) / len(batch)
        completions = []
        for tokens, prompt_len in zip(new_tokens, prompt_lengths, strict=True):
            cut = next((i for i, t in enumerate(tokens) if t in eos_ids), None)
            kept = tokens if cut is None else tokens[:cut]
            completions.append(
                Completion(
                    text=tokenizer.decode(kept, skip_special_tokens=True).strip(),
                    usage={
                        "prompt_tokens": int(prompt_len),
                        "completion_tokens": len(kept) + (0 if cut is None else 1),
                    },
                    latency_s=round(latency, 4),
                    finish_reason="length" if cut is None else "stop",
                )
            )
        return completions

    async def aclose(self) -> None:
        self._loaded = None
