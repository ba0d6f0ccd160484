"""BERTScore and BARTScore of the full synthetic benchmark: taxpraben against the references.

The workload is what ``taxpraben score`` sends to the scorers for the synthetic benchmark
(``make_synthetic.py``: 7,300 records x ``--runs`` runs): the distinct (prediction, gold)
pairs of the generation and mixed tasks for BERTScore, of the generation tasks for BARTScore.
The models have the real shapes and random weights (nothing is downloaded): XLNet 12 x 768,
vocabulary 32,000, as hfl/chinese-xlnet-base (layer 5); BART 12 + 12 x 1024, vocabulary
50,265, as facebook/bart-large-cnn. Their tokenizers are trained here on synthetic tax prose
(``tests/helpers/tiny_models.py``), so token counts differ somewhat from the real tokenizers'; the
script prints them.

Side by side, on the same pairs, same models, same process:

- BERTScore: taxpraben ``BertScorer`` (one call for everything, as the pipeline does) against
  the ``bert_score`` package (0.3.13) called once per task and run, as TaxBen scores;
- BARTScore: taxpraben ``BartScorer`` against the neulab reference code (``BARTScorer.score``
  of github.com/neulab/BARTScore, restated below) at its batch size 4;
- ``--dtypes``: taxpraben again in tf32 and bf16, with the deviation from its float32 scores
  (per pair, and of the per-task means that results.json reports).

``--devices A B ...`` measures the scaling over devices instead: taxpraben float32 timed once
per ``--device`` value (``cuda:0``, ``cuda:0,cuda:1``, ``cuda`` = every visible GPU; on CPU
``cpu`` against ``cpu,cpu``, two workers), each against the first: speed-up and the largest
score difference (float rounding only: each device pads its share into other batches).

    python benchmarks/gpu_scoring.py --device cuda                 # real shapes, full benchmark
    python benchmarks/gpu_scoring.py --tiny                        # tiny models, CPU, 2% of it
    python benchmarks/gpu_scoring.py --device cuda --json out.json # figures also as JSON
    python benchmarks/gpu_scoring.py --devices cuda:0 cuda:0,cuda:1 cuda   # scaling over GPUs
    python benchmarks/gpu_scoring.py --tiny --devices cpu cpu,cpu         # the same path on CPU

Needs the test dependencies (``bert-score``, ``pytest``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # also puts tests/ on sys.path
from make_synthetic import write_data, write_predictions

XLNET_SHAPE = {"d_model": 768, "n_layer": 12, "n_head": 12, "d_inner": 3072, "vocab_size": 32000}
BART_SHAPE = {
    "d_model": 1024,
    "encoder_layers": 12,
    "decoder_layers": 12,
    "encoder_attention_heads": 16,
    "decoder_attention_heads": 16,
    "encoder_ffn_dim": 4096,
    "decoder_ffn_dim": 4096,
    "vocab_size": 50265,
    "max_position_embeddings": 1024,
}


# --------------------------------------------------------------------------- workload


@dataclass
class Workload:
    """Per (task, run), the pairs the pipeline sends to each scorer."""

    bert: dict[tuple[str, int], list[tuple[str, str]]] = field(default_factory=dict)
    bart: dict[tuple[str, int], list[tuple[str, str]]] = field(default_factory=dict)

    @staticmethod
    def distinct(groups: dict[tuple[str, int], list[tuple[str, str]]]) -> list[tuple[str, str]]:
        return list(dict.fromkeys(p for pairs in groups.values() for p in pairs))


def build_workload(work: Path, scale: float, runs: int, seed: int) -> Workload:
    from taxpraben.data.loader import load_data
    from taxpraben.results.predictions import read_predictions
    from taxpraben.scoring.items import prepare_item
    from taxpraben.tasks import load_registry

    data, predictions = work / "data", work / "predictions.jsonl"
    write_data(data, seed=seed, scale=scale)
    write_predictions(data, predictions, runs=runs, seed=seed)
    registry = load_registry()
    loaded = load_data(data, registry)
    preds = {p.key: p for p in read_predictions(predictions)}
    out = Workload()
    for task, recs in loaded.records.items():
        spec = registry[task]
        if spec.type not in ("generation", "mixed"):
            continue
        for run in range(runs):
            bert, bart = [], []
            for rec in recs:
                p = preds[(task, rec.id, run)]
                item = prepare_item(spec, rec, run, p.prediction, p.error, "taxpraben")
                for pair in item.pairs:
                    if not pair.missing:
                        bert.append((pair.candidate, pair.reference))
                    if spec.type == "generation":
                        bart.append((pair.candidate, pair.reference))
            out.bert[(task, run)] = bert
            if bart:
                out.bart[(task, run)] = bart
    return out


# --------------------------------------------------------------------------- models


def build_models(work: Path, tiny: bool) -> tuple[Path, int, Path]:
    """(XLNet directory, BERTScore layer, BART directory): tiny, or real shapes with random
    weights, each with the tokenizer trained by ``tests/helpers/tiny_models.py``."""
    import torch
    from transformers import BartConfig, BartForConditionalGeneration, XLNetConfig, XLNetModel

    from helpers.tiny_models import build_tiny_bart, build_tiny_xlnet

    xlnet = build_tiny_xlnet(work / "xlnet")
    bart = build_tiny_bart(work / "bart", max_positions=BART_SHAPE["max_position_embeddings"] + 2)
    if tiny:
        return xlnet, 4, bart
    torch.manual_seed(0)
    pad = XLNetConfig.from_pretrained(xlnet).pad_token_id
    XLNetModel(XLNetConfig(**XLNET_SHAPE, pad_token_id=pad)).eval().save_pretrained(xlnet)
    small = BartConfig.from_pretrained(bart)
    special = {k: getattr(small, k) for k in ("pad_token_id", "bos_token_id", "eos_token_id",
                                              "decoder_start_token_id", "forced_bos_token_id")}  # fmt: skip
    shape = dict(BART_SHAPE, max_position_embeddings=BART_SHAPE["max_position_embeddings"] + 2)
    BartForConditionalGeneration(BartConfig(**shape, **special)).eval().save_pretrained(bart)
    return xlnet, 5, bart


class NeulabBARTScorer:
    """``BARTScorer`` of github.com/neulab/BARTScore (``bart_score.py``), restated: the
    tokenizer and model from a directory instead of a hub id; otherwise line for line."""

    def __init__(self, checkpoint: str, device: str, max_length: int = 1024) -> None:
        import torch
        from transformers import BartForConditionalGeneration, BartTokenizer

        self.device = device
        self.max_length = max_length
        self.tokenizer = BartTokenizer.from_pretrained(checkpoint)
        self.model = BartForConditionalGeneration.from_pretrained(checkpoint)
        self.model.eval()
        self.model.to(device)
        self.loss_fct = torch.nn.NLLLoss(reduction="none", ignore_index=self.model.config.pad_token_id)
        self.lsm = torch.nn.LogSoftmax(dim=1)

    def score(self, srcs: list[str], tgts: list[str], batch_size: int = 4) -> list[float]:
        import torch

        score_list: list[float] = []
        for i in range(0, len(srcs), batch_size):
            src_list = srcs[i : i + batch_size]
            tgt_list = tgts[i : i + batch_size]
            with torch.no_grad():
                encoded_src = self.tokenizer(src_list, max_length=self.max_length, truncation=True,
                                             padding=True, return_tensors="pt")  # fmt: skip
                encoded_tgt = self.tokenizer(tgt_list, max_length=self.max_length, truncation=True,
                                             padding=True, return_tensors="pt")  # fmt: skip
                src_tokens = encoded_src["input_ids"].to(self.device)
                src_mask = encoded_src["attention_mask"].to(self.device)
                tgt_tokens = encoded_tgt["input_ids"].to(self.device)
                tgt_mask = encoded_tgt["attention_mask"]
                tgt_len = tgt_mask.sum(dim=1).to(self.device)
                output = self.model(input_ids=src_tokens, attention_mask=src_mask, labels=tgt_tokens)
                logits = output.logits.view(-1, self.model.config.vocab_size)
                loss = self.loss_fct(self.lsm(logits), tgt_tokens.view(-1))
                loss = loss.view(tgt_tokens.shape[0], -1)
                loss = loss.sum(dim=1) / tgt_len
                score_list += [-x.item() for x in loss]
        return score_list


def reference_bertscorer(model_dir: Path, layer: int, device: str) -> Any:
    from bert_score import BERTScorer

    scorer = BERTScorer(model_type=str(model_dir), num_layers=layer, device=device, batch_size=64)
    tokenizer = scorer._tokenizer
    # bert_score 0.3.13 on transformers 5: an "infinite" model_max_length overflows, and its
    # empty-text path calls a method the tokenizer no longer has (as in tests/test_semantic.py).
    tokenizer.model_max_length = min(tokenizer.model_max_length, 10**6)
    tokenizer.build_inputs_with_special_tokens = lambda ids: tokenizer("")["input_ids"]
    return scorer


# --------------------------------------------------------------------------- measuring


def timed(work: Callable[[], Any], device: str, repeat: int = 1) -> tuple[Any, float]:
    """The result and the best wall time of ``repeat`` calls (the first call also pays for
    kernel selection and memory pools, which later calls of the same shapes reuse).
    ``device`` may be a list (``cuda:0,cuda:1``): every visible GPU is synchronised."""
    import torch

    def synchronise() -> None:
        if device.startswith("cuda"):
            for index in range(torch.cuda.device_count()):
                torch.cuda.synchronize(index)

    best, result = math.inf, None
    for _ in range(repeat):
        synchronise()
        start = time.perf_counter()
        result = work()
        synchronise()
        best = min(best, time.perf_counter() - start)
    return result, best


def deviation(
    ours: dict[tuple[str, str], float],
    other: dict[tuple[str, str], float],
    groups: dict[tuple[str, int], list[tuple[str, str]]],
) -> dict[str, float]:
    """Max and mean |difference| per pair, and max |difference| of a (task, run) mean, over
    the pairs ``other`` has (all of them, or the references' timed subset)."""
    diffs = [abs(ours[k] - other[k]) for k in other]
    task_diffs = [
        abs(statistics.fmean(ours[p] for p in kept) - statistics.fmean(other[p] for p in kept))
        for pairs in groups.values()
        if (kept := [p for p in pairs if p in other])
    ]
    return {
        "max_abs_pair": max(diffs, default=0.0),
        "mean_abs_pair": statistics.fmean(diffs) if diffs else 0.0,
        "max_abs_task_mean": max(task_diffs, default=0.0),
    }


def measure_devices(
    values: list[str],
    models: tuple[Path, int, Path],
    workload: Workload,
    repeat: int,
) -> dict[str, dict[str, Any]]:
    """taxpraben float32 BERTScore and BARTScore of the workload per ``--device`` value, the
    first value being the base of the speed-ups and score differences."""
    from taxpraben.metrics.bartscore import BartScorer
    from taxpraben.metrics.bertscore import BertScorer

    xlnet, layer, bart = models
    bert_pairs, bart_pairs = Workload.distinct(workload.bert), Workload.distinct(workload.bart)
    out: dict[str, dict[str, Any]] = {}
    first: tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]] | None = None
    for value in values:
        bert_scorer = BertScorer(str(xlnet), layer, device=value)
        bart_scorer = BartScorer(str(bart), device=value)
        warm = 16 * len(bert_scorer.devices)  # a few pairs on every device
        bert_scorer.score([p for p, _ in bert_pairs[:warm]], [g for _, g in bert_pairs[:warm]])
        bart_scorer.score([p for p, _ in bart_pairs[:warm]], [g for _, g in bart_pairs[:warm]])
        prf, t_bert = timed(lambda s=bert_scorer: s.score([p for p, _ in bert_pairs], [g for _, g in bert_pairs]), value, repeat)
        raw, t_bart = timed(lambda s=bart_scorer: s.score([p for p, _ in bart_pairs], [g for _, g in bart_pairs]), value, repeat)
        f1 = {k: x.f1 for k, x in zip(bert_pairs, prf, strict=True)}
        raws = dict(zip(bart_pairs, raw, strict=True))
        entry: dict[str, Any] = {"devices": list(bert_scorer.devices), "bertscore_s": t_bert,
                                 "bartscore_s": t_bart, "total_s": t_bert + t_bart}  # fmt: skip
        if first is None:
            first = (f1, raws)
        else:
            base = out[values[0]]
            entry["speedup"] = base["total_s"] / entry["total_s"]
            entry["bertscore_f1_vs_first"] = deviation(first[0], f1, workload.bert)
            entry["bartscore_raw_vs_first"] = deviation(first[1], raws, workload.bart)
        out[value] = entry
        print(f"taxpraben on {value:>20}: BERTScore {t_bert:7.2f} s, BARTScore {t_bart:7.2f} s, "
              f"total {t_bert + t_bart:7.2f} s", flush=True)  # fmt: skip
        del bert_scorer, bart_scorer
    return out


def devices_report(figures: dict[str, Any]) -> str:
    """The scaling figures as Markdown rows."""
    rows = ["| --device | workers | BERTScore | BARTScore | total | speed-up | max \\|ΔF1\\| / max \\|Δ raw BARTScore\\| vs the first |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for value, fig in figures["devices"].items():
        speedup = f"{fig['speedup']:.2f}x" if "speedup" in fig else "1 (base)"
        diff = (f"{fig['bertscore_f1_vs_first']['max_abs_pair']:.1e} / {fig['bartscore_raw_vs_first']['max_abs_pair']:.1e}"
                if "speedup" in fig else "")  # fmt: skip
        rows.append(f"| `{value}` | {len(fig['devices'])} | {fig['bertscore_s']:.2f} s | {fig['bartscore_s']:.2f} s "
                    f"| {fig['total_s']:.2f} s | {speedup} | {diff} |")  # fmt: skip
    return "\n".join(rows)


def _tokens(tokenizer: Any, texts: list[str]) -> float:
    return statistics.fmean(len(ids) for ids in tokenizer(texts)["input_ids"]) if texts else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--devices", nargs="+", metavar="VALUE",
                        help="instead of the dtype and reference comparison, time taxpraben float32 "
                        "with each --device VALUE (e.g. cuda:0 cuda:0,cuda:1 cuda): the scaling over devices")  # fmt: skip
    parser.add_argument("--tiny", action="store_true", help="tiny models (tests/helpers/tiny_models.py)")
    parser.add_argument("--scale", type=float, help="fraction of the real sizes (default 1; 0.02 with --tiny)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtypes", default="float32,tf32,bf16", help="taxpraben dtypes to time")
    parser.add_argument("--no-reference", action="store_true", help="skip bert_score and neulab")
    parser.add_argument("--reference-stride", type=int, default=1,
                        help="time the references on every k-th pair of each group and scale "
                        "their time up by the pairs left out (default 1: all pairs)")  # fmt: skip
    parser.add_argument("--repeat", type=int, help="best of N timings of each side (default 1; 2 with --tiny)")
    parser.add_argument("--torch-threads", type=int,
                        help="torch's intra-op threads (torch.set_num_threads); default: torch's own")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    scale = args.scale if args.scale is not None else (0.02 if args.tiny else 1.0)
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    repeat = args.repeat or (2 if args.tiny else 1)


    import torch

    from taxpraben.metrics.bartscore import BartScorer
    from taxpraben.metrics.bertscore import BertScorer

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    head_device = args.devices[0].split(",")[0] if args.devices else args.device
    figures: dict[str, Any] = {
        **_common.torch_environment(head_device),
        "visible_gpus": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "torch_threads": torch.get_num_threads(),
        "models": "tiny" if args.tiny else "real shapes, random weights",
        "scale": scale,
        "runs": args.runs,
        "repeat": repeat,
    }
    print(" · ".join(f"{k} {v}" for k, v in figures.items()), flush=True)
    with tempfile.TemporaryDirectory(prefix="taxpraben-gpu-scoring-") as tmp:
        work = Path(tmp)
        (workload, t_data) = timed(lambda: build_workload(work, scale, args.runs, args.seed), "cpu")
        (xlnet, layer, bart), t_models = timed(lambda: build_models(work, args.tiny), "cpu")
        bert_pairs, bart_pairs = Workload.distinct(workload.bert), Workload.distinct(workload.bart)
        n_bert = sum(map(len, workload.bert.values()))
        n_bart = sum(map(len, workload.bart.values()))
        figures["workload"] = {
            "bert_pairs": n_bert, "bert_distinct": len(bert_pairs),
            "bart_pairs": n_bart, "bart_distinct": len(bart_pairs),
            "groups": len(workload.bert),
        }  # fmt: skip
        print(f"workload ({t_data:.0f} s): BERTScore {n_bert} pairs ({len(bert_pairs)} distinct) in "
              f"{len(workload.bert)} (task, run) groups; BARTScore {n_bart} pairs ({len(bart_pairs)} "
              f"distinct); models built in {t_models:.0f} s", flush=True)  # fmt: skip
        if args.devices:
            figures["devices"] = measure_devices(args.devices, (xlnet, layer, bart), workload, repeat)
            print("\n" + devices_report(figures))
            if args.json:
                args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            return 0

        results: dict[str, dict[str, Any]] = {}
        bert_scores: dict[str, dict[tuple[str, str], float]] = {}
        bart_scores: dict[str, dict[tuple[str, str], float]] = {}
        for dtype in dtypes:
            # No dtype argument for float32, so that the same command times older code too
            # (PYTHONPATH=path/to/other/src: the before-and-after figures on CPU).
            options = {"dtype": dtype} if dtype != "float32" else {}
            ours_bert = BertScorer(str(xlnet), layer, device=args.device, **options)
            ours_bart = BartScorer(str(bart), device=args.device, **options)
            if dtype == dtypes[0]:
                figures["tokens_per_text"] = {
                    "xlnet_gold": _tokens(ours_bert._loaded.tokenizer, [g for _, g in bert_pairs[:2000]]),
                    "xlnet_prediction": _tokens(ours_bert._loaded.tokenizer, [p for p, _ in bert_pairs[:2000]]),
                    "bart_gold": _tokens(ours_bart._loaded.tokenizer, [g for _, g in bart_pairs[:2000]]),
                    "bart_prediction": _tokens(ours_bart._loaded.tokenizer, [p for p, _ in bart_pairs[:2000]]),
                }  # fmt: skip
            ours_bert.score([p for p, _ in bert_pairs[:8]], [g for _, g in bert_pairs[:8]])  # warm-up
            ours_bart.score([p for p, _ in bart_pairs[:8]], [g for _, g in bart_pairs[:8]])
            prf, t_bert = timed(lambda s=ours_bert: s.score([p for p, _ in bert_pairs], [g for _, g in bert_pairs]), args.device, repeat)
            raw, t_bart = timed(lambda s=ours_bart: s.score([p for p, _ in bart_pairs], [g for _, g in bart_pairs]), args.device, repeat)
            bert_scores[dtype] = {k: s.f1 for k, s in zip(bert_pairs, prf, strict=True)}
            bart_scores[dtype] = dict(zip(bart_pairs, raw, strict=True))
            results[dtype] = {"bertscore_s": t_bert, "bartscore_s": t_bart, "total_s": t_bert + t_bart}
            if dtype != "float32" and "float32" in bert_scores:
                results[dtype]["bertscore_f1_vs_float32"] = deviation(bert_scores["float32"], bert_scores[dtype], workload.bert)
                results[dtype]["bartscore_raw_vs_float32"] = deviation(bart_scores["float32"], bart_scores[dtype], workload.bart)
            print(f"taxpraben {dtype:>7}: BERTScore {t_bert:7.2f} s, BARTScore {t_bart:7.2f} s, "
                  f"total {t_bert + t_bart:7.2f} s", flush=True)
            del ours_bert, ours_bart
        figures["taxpraben"] = results

        if not args.no_reference:
            k = max(1, args.reference_stride)
            ref_groups = {g: pairs[::k] for g, pairs in workload.bert.items()}
            ref_bart_pairs = bart_pairs[::k]
            bert_scale = n_bert / max(1, sum(map(len, ref_groups.values())))
            bart_scale = len(bart_pairs) / max(1, len(ref_bart_pairs))
            ref = reference_bertscorer(xlnet, layer, args.device)
            ref.score([p for p, _ in bert_pairs[:8]], [g for _, g in bert_pairs[:8]])  # warm-up

            def per_group() -> dict[tuple[str, str], float]:
                out: dict[tuple[str, str], float] = {}
                for pairs in ref_groups.values():
                    if pairs:
                        _, _, f1 = ref.score([p for p, _ in pairs], [g for _, g in pairs])
                        out.update(zip(pairs, f1.tolist(), strict=True))
                return out

            ref_bert, t_ref_bert = timed(per_group, args.device, repeat)
            t_ref_bert *= bert_scale
            del ref
            neulab = NeulabBARTScorer(str(bart), args.device)
            neulab.score([p for p, _ in bart_pairs[:8]], [g for _, g in bart_pairs[:8]])
            ref_raw, t_ref_bart = timed(
                lambda: neulab.score([p for p, _ in ref_bart_pairs], [g for _, g in ref_bart_pairs], batch_size=4),
                args.device,
                repeat,
            )
            t_ref_bart *= bart_scale
            del neulab
            ref_bart = dict(zip(ref_bart_pairs, ref_raw, strict=True))
            figures["reference"] = {
                "stride": k,
                "timed_pairs": {"bert_score": round(n_bert / bert_scale), "neulab": len(ref_bart_pairs)},
                "bert_score_per_task_and_run_s": t_ref_bert,
                "neulab_bartscore_batch4_s": t_ref_bart,
                "total_s": t_ref_bert + t_ref_bart,
            }
            if "float32" in bert_scores:
                ours32 = results["float32"]
                figures["float32_vs_reference"] = {
                    "bertscore_f1": deviation(bert_scores["float32"], ref_bert, workload.bert),
                    "bartscore_raw": deviation(bart_scores["float32"], ref_bart, workload.bart),
                    "bertscore_speedup": t_ref_bert / ours32["bertscore_s"],
                    "bartscore_speedup": t_ref_bart / ours32["bartscore_s"],
                }
            print(f"reference        : bert_score per task and run {t_ref_bert:7.2f} s, "
                  f"neulab BARTScore batch 4 {t_ref_bart:7.2f} s", flush=True)

    print("\n" + report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def report(figures: dict[str, Any]) -> str:
    """The figures as Markdown rows, taxpraben and the reference side by side."""
    rows = ["| figure | taxpraben | reference | ratio |", "|---|---|---|---|"]
    ours = figures["taxpraben"]
    ref = figures.get("reference")
    if "float32" in ours:
        f32 = ours["float32"]
        for key, label, ref_key in (
            ("bertscore_s", "BERTScore, float32", "bert_score_per_task_and_run_s"),
            ("bartscore_s", "BARTScore, float32", "neulab_bartscore_batch4_s"),
            ("total_s", "BERTScore + BARTScore, float32", "total_s"),
        ):
            r = ref[ref_key] if ref else math.nan
            rows.append(f"| {label} | {f32[key]:.2f} s | {r:.2f} s | {r / f32[key]:.2f}x |")
        if "float32_vs_reference" in figures:
            dev = figures["float32_vs_reference"]
            rows.append(f"| max \\|ΔF1\\| vs bert_score | {dev['bertscore_f1']['max_abs_pair']:.1e} | | |")
            rows.append(f"| max \\|Δ raw BARTScore\\| vs neulab | {dev['bartscore_raw']['max_abs_pair']:.1e} | | |")
    for dtype, fig in ours.items():
        if dtype == "float32":
            continue
        rows.append(f"| BERTScore + BARTScore, {dtype} | {fig['total_s']:.2f} s "
                    f"(BERT {fig['bertscore_s']:.2f}, BART {fig['bartscore_s']:.2f}) | | |")  # fmt: skip
        for metric in ("bertscore_f1", "bartscore_raw"):
            dev = fig.get(f"{metric}_vs_float32")
            if dev:
                rows.append(f"| {dtype} vs float32, {metric}: max per pair / mean per pair / max of a task-run mean "
                            f"| {dev['max_abs_pair']:.1e} / {dev['mean_abs_pair']:.1e} / {dev['max_abs_task_mean']:.1e} | | |")  # fmt: skip
    return "\n".join(rows)


if __name__ == "__main__":
    raise SystemExit(main())
