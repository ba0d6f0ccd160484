"""Local generation throughput (``hf:``): generated tokens per second on the sample's prompts.

The model is a LLaMA of Qwen2.5-0.5B's dimensions (hidden 896, 24 layers, 14 heads, 2 KV
heads, MLP 4,864, vocabulary 151,936, tied embeddings) with random weights in bfloat16,
saved to a temporary directory with a byte-level BPE tokenizer trained here on the prompts
and synthetic tax prose (nothing is downloaded). Random weights rarely emit end-of-sequence,
so nearly every prompt generates ``--max-new-tokens`` tokens; the count is what the backend
reports (``usage.completion_tokens``).

Side by side, in the same process, on the same prompts (chat template applied):

- before: the previous ``hf:`` backend's way, restated: batches of ``--before-batch``
  prompts in request order, padded to the longest, ``model.generate`` with its default
  (dynamic) cache; timed on the first ``--before-items`` prompts to save device time;
- taxpraben ``HFBackend`` with the dynamic cache: prompts sorted by length, batches by
  memory budget (``--concurrency`` prompts at most);
- taxpraben ``HFBackend`` with its defaults: on CUDA the static KV cache, which transformers
  compiles on the first batches; the first pass (compilation included) is reported apart from
  the second.

    python benchmarks/hf_generation.py --device cuda                # 0.5B shape, bf16, H200
    python benchmarks/hf_generation.py --tiny                       # tiny LLaMA, CPU
    python benchmarks/hf_generation.py --device cuda --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # also puts tests/ on sys.path

QWEN25_05B = {
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}
TINY = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "max_position_embeddings": 4096,
}
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_model(out: Path, texts: list[str], tiny: bool) -> Path:
    """Save a random LLaMA (0.5B-shaped in bfloat16, or tiny in float32) and its tokenizer."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from helpers.tiny_models import tax_corpus

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500 if tiny else 16000,
        special_tokens=["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([*texts, *tax_corpus(lines=2000)], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    shape = dict(TINY, vocab_size=len(fast)) if tiny else QWEN25_05B
    config = LlamaConfig(**shape, bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id)  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    if not tiny:
        model = model.to(torch.bfloat16)
    model.eval().save_pretrained(out)
    return out


def sample_requests(max_new_tokens: int) -> tuple[list[Any], Any]:
    """One greedy request per record of the bundled sample (run 0), and the config."""
    from taxpraben.data.loader import load_data
    from taxpraben.models.base import GenerationConfig, build_request
    from taxpraben.tasks import load_registry

    config = GenerationConfig(max_tokens=max_new_tokens)
    loaded = load_data("sample", load_registry())
    return [build_request(rec, 0, config) for recs in loaded.records.values() for rec in recs], config


def load_before(model_dir: Path, device: str) -> tuple[Any, Any]:
    """Tokenizer and model as the previous backend loaded them."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"
    return tokenizer, AutoModelForCausalLM.from_pretrained(model_dir, dtype="auto").to(device).eval()


def generate_before(
    tokenizer: Any, model: Any, device: str, prompts: list[str], batch: int, max_new: int
) -> int:
    """The previous backend, restated: request order, fixed batches, default cache. Returns
    the tokens generated (up to and including an end-of-sequence token)."""
    import torch

    eos = model.generation_config.eos_token_id
    tokens = 0
    for i in range(0, len(prompts), batch):
        enc = tokenizer(prompts[i : i + batch], return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(device) for k, v in enc.items()}
        with torch.inference_mode():
            output = model.generate(**enc, max_new_tokens=max_new, do_sample=False,
                                    pad_token_id=tokenizer.pad_token_id)  # fmt: skip
        for row in output[:, enc["input_ids"].shape[1] :].tolist():
            cut = next((j for j, t in enumerate(row) if t == eos), None)
            tokens += len(row) if cut is None else cut + 1
    return tokens


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_backend(backend: Any, requests: list[Any], config: Any, device: str) -> tuple[float, int]:
    """Wall seconds and generated tokens of one ``generate`` over all requests."""
    _sync(device)
    start = time.perf_counter()
    outcomes = asyncio.run(backend.generate(requests, config))
    _sync(device)
    wall = time.perf_counter() - start
    errors = [o for o in outcomes if not hasattr(o, "usage")]
    if errors:
        raise SystemExit(f"{len(errors)} generation errors, e.g. {errors[0]}")
    return wall, sum(o.usage["completion_tokens"] for o in outcomes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tiny", action="store_true", help="a tiny LLaMA (CPU-friendly)")
    parser.add_argument("--max-new-tokens", type=int, help="default 128 (16 with --tiny)")
    parser.add_argument("--concurrency", type=int, help="taxpraben: most prompts per batch (default 256; 64 with --tiny)")
    parser.add_argument("--before-batch", type=int, default=64)
    parser.add_argument("--before-items", type=int,
                        help="prompts timed the old way, spread over the sample (default 64; all with --tiny)")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    max_new = args.max_new_tokens or (16 if args.tiny else 128)
    concurrency = args.concurrency or (64 if args.tiny else 256)

    import torch

    from taxpraben.models.hf import HFBackend

    figures: dict[str, Any] = {
        **_common.torch_environment(args.device),
        "model": "tiny LLaMA" if args.tiny else "LLaMA, Qwen2.5-0.5B dimensions, bf16, random weights",
        "max_new_tokens": max_new,
    }
    print(" · ".join(f"{k} {v}" for k, v in figures.items()), flush=True)
    requests, config = sample_requests(max_new)
    with tempfile.TemporaryDirectory(prefix="taxpraben-hf-gen-") as tmp:
        model_dir = build_model(Path(tmp) / "model", [r.messages[-1]["content"] for r in requests], args.tiny)
        probe = HFBackend(str(model_dir), device=args.device)
        tokenizer = probe._load().tokenizer
        prompts = [probe.prompt_text(tokenizer, r) for r in requests]
        lengths = [len(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        figures["prompts"] = {"n": len(prompts), "mean_tokens": statistics.fmean(lengths),
                              "max_tokens": max(lengths), "min_tokens": min(lengths)}  # fmt: skip
        print(f"{len(prompts)} prompts, {statistics.fmean(lengths):.0f} tokens on average "
              f"({min(lengths)}-{max(lengths)})", flush=True)  # fmt: skip
        del probe

        # Every k-th prompt, so that the subset has the sample's spread of lengths.
        items = args.before_items or (len(prompts) if args.tiny else 64)
        before = prompts[:: max(1, len(prompts) // items)][:items]
        old_tokenizer, old_model = load_before(model_dir, args.device)
        passes = []
        # On CPU a first pass pays for oneDNN's kernels of each new shape, so the second one
        # is reported; on CUDA the warm-up above suffices and device time is short.
        for _ in range(1 if args.device.startswith("cuda") else 2):
            _sync(args.device)
            start = time.perf_counter()
            tokens = generate_before(old_tokenizer, old_model, args.device, before, args.before_batch, max_new)
            _sync(args.device)
            passes.append(time.perf_counter() - start)
        first, wall = passes[0], passes[-1]
        figures["before"] = {"items": len(before), "batch": args.before_batch, "first_pass_s": first,
                             "wall_s": wall, "tokens": tokens, "tokens_per_s": tokens / wall}  # fmt: skip
        del old_model
        print(f"before (request order, batches of {args.before_batch}, dynamic cache): {len(before)} "
              f"prompts, {tokens} tokens in {wall:.2f} s = {tokens / wall:,.0f} tokens/s", flush=True)  # fmt: skip

        results: dict[str, Any] = {}
        for name, cache in (("dynamic", None), ("default", "auto")):
            backend = HFBackend(str(model_dir), batch_size=concurrency, device=args.device,
                                cache_implementation=cache)  # fmt: skip
            loaded = backend._load()
            static = backend.static_cache(loaded)
            first, _ = run_backend(backend, requests, config, args.device)
            second, tokens = run_backend(backend, requests, config, args.device)
            results[name] = {
                "static_cache": backend.static_cache(loaded),
                "static_cache_failed": static and not backend.static_cache(loaded),
                "attention": getattr(loaded.model.config, "_attn_implementation", None),
                "first_pass_s": first,
                "wall_s": second,
                "tokens": tokens,
                "tokens_per_s": tokens / second,
            }
            print(f"taxpraben {name} (static cache {results[name]['static_cache']}, "
                  f"attention {results[name]['attention']}): first pass {first:.2f} s, then {tokens} "
                  f"tokens in {second:.2f} s = {tokens / second:,.0f} tokens/s", flush=True)  # fmt: skip
            del backend, loaded
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
        figures["taxpraben"] = results

    print("\n" + report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def report(figures: dict[str, Any]) -> str:
    before = figures["before"]["tokens_per_s"]
    rows = ["| variant | generated tokens/s | vs before | first pass (compile included) |", "|---|---|---|---|"]
    rows.append(f"| before: request order, batches of {figures['before']['batch']}, dynamic cache "
                f"| {before:,.0f} | 1.00x | {figures['before']['first_pass_s']:.1f} s |")  # fmt: skip
    for name, fig in figures["taxpraben"].items():
        label = "static KV cache" if fig["static_cache"] else "dynamic cache"
        rate = fig["tokens_per_s"]
        rows.append(f"| taxpraben {name}: sorted, budgeted batches, {label} | {rate:,.0f} "
                    f"| {rate / before if before else math.nan:.2f}x | {fig['first_pass_s']:.1f} s |")  # fmt: skip
    return "\n".join(rows)


if __name__ == "__main__":
    raise SystemExit(main())
