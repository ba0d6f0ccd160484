"""Time BERTScore over several runs: taxpraben's scorer against the ``bert_score`` package.

The workload is the one the scoring pipeline produces: N items with fixed gold answers of
realistic Chinese tax-text length, and ``--runs`` runs of predictions that vary somewhat from
run to run, with some exact repeats (as greedy, temperature-0 runs give). taxpraben scores
all runs in one call; ``bert_score`` is called once per run, as TaxBen scored them, and also
once on everything for comparison. Both use the same model in the same process, and the
values are compared.

    python benchmarks/semantic_scoring.py --n 200 --runs 5            # tiny XLNet, built here
    python benchmarks/semantic_scoring.py --model ./chinese-xlnet-base  # a real local copy

Needs the test dependencies (``bert-score``, ``pytest``): the tiny model comes from
``tests/helpers/tiny_models.py``.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.tiny_models import build_tiny_xlnet, tax_paragraph, tax_sentence
from taxpraben.metrics.bertscore import BertScorer


def make_workload(n: int, runs: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """Golds of 3-8 sentences (about 150-400 characters) and ``runs`` runs of predictions.

    A prediction keeps some of its gold's sentences and adds its own; a later run repeats
    the first run's prediction for about half the items and rewrites one sentence of it
    otherwise.
    """
    rng = random.Random(seed)
    golds = [tax_paragraph(rng, rng.randint(3, 8)) for _ in range(n)]
    first: list[list[str]] = []
    for _ in golds:
        first.append([tax_sentence(rng) for _ in range(rng.randint(2, 8))])
    all_runs = []
    for run in range(runs):
        predictions = []
        for sentences in first:
            if run == 0 or rng.random() < 0.5:
                predictions.append("".join(sentences))
            else:
                changed = list(sentences)
                changed[rng.randrange(len(changed))] = tax_sentence(rng)
                predictions.append("".join(changed))
        all_runs.append(predictions)
    return golds, all_runs


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS counter (Linux); False where that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _peak_rss_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(label: str, work: Callable[[], Any], repeat: int) -> tuple[Any, float, float]:
    """Best wall time of ``repeat`` calls and the peak RSS reached while running them."""
    per_phase = _reset_peak_rss()
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    peak = _peak_rss_mib()
    note = "" if per_phase else " (process peak so far)"
    print(f"  {label:<38} {best:8.2f} s   peak RSS {peak:8.0f} MiB{note}")
    return result, best, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=200, help="items per run (default 200)")
    parser.add_argument("--runs", type=int, default=5, help="runs (default 5)")
    parser.add_argument("--model", help="a local XLNet/BERT model directory (default: tiny XLNet)")
    parser.add_argument(
        "--layer", type=int, help="layer (default 5 for --model, 4 for the tiny one)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=32, help="our batch size (bert_score: 64)"
    )
    parser.add_argument("--device", default="cpu", help="device for both (default cpu)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many timings")
    args = parser.parse_args(argv)

    import torch
    from bert_score import BERTScorer

    with tempfile.TemporaryDirectory() as tmp:
        if args.model:
            model, layer = args.model, args.layer if args.layer is not None else 5
        else:
            model, layer = str(build_tiny_xlnet(Path(tmp) / "tiny-xlnet")), args.layer or 4
        golds, runs = make_workload(args.n, args.runs)
        candidates = [p for run in runs for p in run]
        references = golds * args.runs
        unique_predictions = len(set(candidates))
        chars = sum(map(len, golds)) / len(golds)
        print(
            f"model {model} layer {layer} device {args.device} torch threads {torch.get_num_threads()}\n"
            f"{args.runs} runs x {args.n} items = {len(candidates)} pairs; golds {chars:.0f} chars "
            f"on average; {unique_predictions} distinct predictions"
        )

        ours = BertScorer(model, layer, device=args.device, batch_size=args.batch_size)
        reference = BERTScorer(model_type=model, num_layers=layer, device=args.device)
        # bert_score 0.3.13 on transformers 5 cannot truncate at an "infinite" max length.
        reference._tokenizer.model_max_length = min(reference._tokenizer.model_max_length, 10**6)
        ours.score(candidates[:4], references[:4])  # warm-up, both sides
        reference.score(candidates[:4], references[:4])

        print("timings (model loading excluded):")
        mine, t_ours, _ = timed(
            "taxpraben, one call for all runs",
            lambda: ours.score(candidates, references),
            args.repeat,
        )
        per_run, t_runs, _ = timed(
            "bert_score, one call per run",
            lambda: [reference.score(run, golds, batch_size=64) for run in runs],
            args.repeat,
        )
        _, t_once, _ = timed(
            "bert_score, one call for all runs",
            lambda: reference.score(candidates, references, batch_size=64),
            args.repeat,
        )

    expected = [
        (p, r, f) for prf in per_run for p, r, f in zip(*(x.tolist() for x in prf), strict=True)
    ]
    diff = max(
        max(abs(o.precision - p), abs(o.recall - r), abs(o.f1 - f))
        for o, (p, r, f) in zip(mine, expected, strict=True)
    )
    print(f"speed-up vs bert_score per run:      {t_runs / t_ours:5.2f}x")
    print(f"speed-up vs bert_score one call:     {t_once / t_ours:5.2f}x")
    print(f"max |difference| of P, R, F1 vs bert_score: {diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
