"""The "at internet scale" table of docs/scaling.md, computed from recorded figures (issue 14).

Every input is in :data:`MEASURED` (a figure some benchmark printed, with the command and the
machine) or :data:`ASSUMED` (a number this script cannot measure: the endpoint's own rate,
and how scoring divides over GPUs). Change one and rerun; the output is Markdown, pasted into
docs/scaling.md with the date. Nothing here is timed: the arithmetic is in small functions
below, each saying how its figure is derived.

    python benchmarks/scaling_table.py                        # 1, 10, 100 models
    python benchmarks/scaling_table.py --replica-rps 2 25     # other endpoint rates
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Figure:
    value: float
    unit: str
    source: str


# fmt: off
MEASURED: dict[str, Figure] = {
    # The workload: make_synthetic.py, TaxBen's sizes for 9 datasets, 260 for the 5 newer.
    "requests_per_model": Figure(36_500, "requests", "7,300 records x 5 runs (make_synthetic.py SIZES)"),
    "prompt_tokens": Figure(212.0, "tokens/request", "token_counts.py, Qwen2.5 BPE, mean query of the synthetic benchmark (cl100k: 346.3)"),
    "template_tokens": Figure(29, "tokens/request", "token_counts.py: Qwen2.5 chat template with its default system prompt"),
    "answer_tokens": Figure(93.3, "tokens/request", "token_counts.py, Qwen2.5 BPE, the synthetic model-like answers (cl100k: 150.1); run's max_tokens 1024 bounds a real one"),
    # The harness (2 shared cores; mock endpoint on the same cores).
    "harness_eff_1": Figure(0.970, "of ideal", "benchmarks/README.md 2c: full benchmark, generation phase, C=64, L=0.2 s (310.3 req/s)"),
    "harness_ceiling_rps": Figure(1_062, "req/s", "benchmarks/README.md issue 11 table: C=256, L=0.2 s, 0.83 of 1,280 (bare aiohttp 0.90): one process, mock on the same 2 cores"),
    "client_cpu_ms": Figure(0.425, "ms CPU/request", "benchmarks/README.md issue 11 table: streamed client at C=64 (0.363 at C=256)"),
    "pool_eff": Figure(0.955, "of the sum of ideal rates", "benchmarks/README.md E1: 3 replicas, 2,000 requests, C=64 (E2, one killed: 0.964)"),
    "first_request_s": Figure(0.7, "s", "benchmarks/README.md S2: first request at the server, full benchmark (0.61-0.70 s)"),
    # The completion cache: cache_writes.py, real CompletionCache, synthetic answer sizes.
    "cache_rows_s_1": Figure(24_390, "rows/s", "cache_writes.py: 1 row per transaction (answers arriving one per loop turn)"),
    "cache_rows_s_64": Figure(52_126, "rows/s", "cache_writes.py: 64 rows per transaction"),
    "cache_rows_s_long": Figure(14_143, "rows/s", "cache_writes.py --longer 10: 3,953-byte answers, 1 row per transaction"),
    "cache_bytes_row": Figure(733, "bytes/row", "cache_writes.py: file size / rows, 395-byte answers (4,693 at 3,953 bytes)"),
    # Outputs at full scale: outputs_at_scale.py.
    "samples_mib": Figure(49.55, "MiB/model", "outputs_at_scale.py semantic: samples.jsonl with every BERTScore/BARTScore value, 36,500 lines, 1,424 bytes/line (48.49 MiB --no-semantic)"),
    "results_mib": Figure(0.07, "MiB/model", "outputs_at_scale.py score: results.json"),
    "report_html_mib": Figure(2.18, "MiB/model", "outputs_at_scale.py semantic: report.html (samples gzip-compressed inside; synthetic text compresses 17.6x, the hand-written sample 6.6x)"),
    "gzip_synthetic": Figure(17.6, "x", "gzip ratio of run 0's samples.jsonl lines, synthetic benchmark (outputs_at_scale.py score)"),
    "gzip_sample": Figure(6.6, "x", "gzip ratio of run 0's samples.jsonl lines, the bundled hand-written sample (`run --model baseline:lead --runs 5`)"),
    "predictions_mib": Figure(17.51, "MiB/model", "outputs_at_scale.py shards: predictions.jsonl, 503 bytes/line (no usage/latency in the replayed file)"),
    "score_cpu_s": Figure(15.0, "s/model", "outputs_at_scale.py score: score --no-semantic wall (README 5a/S10: 7.1-11.2 s on a quieter machine)"),
    "merge_4_s": Figure(18.45, "s", "outputs_at_scale.py shards: merge of 4 shards, --no-semantic"),
    "merge_16_s": Figure(17.29, "s", "outputs_at_scale.py shards: merge of 16 shards, --no-semantic"),
    "leaderboard_10_s": Figure(10.50, "s", "outputs_at_scale.py leaderboard: report of 10 result directories"),
    "leaderboard_100_s": Figure(94.55, "s", "outputs_at_scale.py leaderboard: report of 100 result directories (48.1 s CPU, peak RSS 156 MiB)"),
    # One NVIDIA H200, float32, real-shape models with random weights (issue 12's text).
    "gpu_score_s": Figure(150.0, "s/model", "issue 12: taxpraben score --device cuda of the full synthetic benchmark, one H200"),
    "gpu_semantic_s": Figure(96.3, "s/model", "issue 12: BERTScore 5.9 s + BARTScore 90.4 s of the 13,160 generation pairs (5 runs), one H200"),
}

ASSUMED: dict[str, Figure] = {
    "multi_gpu": Figure(1.0, "efficiency", "item 3 (one model's pairs over G GPUs) is not measured: the semantic part is taken to divide by G (independent length-balanced bins, no traffic between devices), the rest not at all"),
    "parallel_models": Figure(1.0, "efficiency", "G GPUs score G models at once (one `taxpraben score` per GPU): taken as independent, each process with its own CPU core"),
}
# fmt: on

MODELS = (1, 10, 100)
ENDPOINTS = (1, 4, 16)
GPUS = (1, 2, 8)
#: Endpoint rates (requests/s per endpoint) the table is shown for: the endpoint's own speed,
#: which no benchmark here can measure (see docs/scaling.md for what each stands for).
REPLICA_RPS = (5.0, 40.0, 320.0)


def m(name: str) -> float:
    return MEASURED[name].value


def tokens(models: int) -> tuple[float, float]:
    """(prompt tokens, answer tokens) of ``models`` evaluations, Qwen2.5 BPE."""
    requests = models * m("requests_per_model")
    return requests * (m("prompt_tokens") + m("template_tokens")), requests * m("answer_tokens")


def generation_rate(endpoints: int, replica_rps: float) -> tuple[float, int]:
    """(requests/s, harness processes needed) for ``endpoints`` endpoints of ``replica_rps`` each.

    One endpoint: the harness's measured efficiency against one endpoint; several: the pool's
    measured efficiency over the sum of their rates. One process drives at most the measured
    ceiling; beyond it the run is split into shards (``--shard``), one process each.
    """
    eff = m("harness_eff_1") if endpoints == 1 else m("pool_eff")
    rate = endpoints * replica_rps * eff
    return rate, max(1, math.ceil(rate / m("harness_ceiling_rps")))


def generation_seconds(models: int, endpoints: int, replica_rps: float) -> float:
    """Wall seconds to generate ``models`` evaluations one after another on the same endpoints."""
    rate, _ = generation_rate(endpoints, replica_rps)
    return models * (m("requests_per_model") / rate + m("first_request_s"))


def scoring_seconds(models: int, gpus: int) -> tuple[float, float]:
    """(one model over all GPUs, models side by side one per GPU), whole `score` per model.

    The first assumes item 3's split of one model's semantic pairs divides that part by the
    GPU count (``ASSUMED["multi_gpu"]``); the second needs no new code: ``ceil(models / gpus)``
    rounds of one model per GPU (``ASSUMED["parallel_models"]``).
    """
    whole, semantic = m("gpu_score_s"), m("gpu_semantic_s")
    split = models * (whole - semantic + semantic / (gpus * ASSUMED["multi_gpu"].value))
    side_by_side = math.ceil(models / gpus) * whole / ASSUMED["parallel_models"].value
    return split, side_by_side


def duration(seconds: float) -> str:
    if seconds != seconds:  # nan: not measured
        return "not measured"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def size(mib: float) -> str:
    return (
        f"{mib / 1024:.1f} GiB"
        if mib >= 1024
        else f"{mib:.0f} MiB"
        if mib >= 10
        else f"{mib:.1f} MiB"
    )


def report_html_mib(models: int) -> tuple[float, float]:
    """(measured on the synthetic text, derived for text that compresses like the sample's).

    report.html embeds the samples gzip-compressed, so its size scales with how well the
    answers compress: the synthetic text compresses 17.6x, the hand-written sample 6.6x.
    """
    measured = models * m("report_html_mib")
    return measured, measured * m("gzip_synthetic") / m("gzip_sample")


def leaderboard_seconds(models: int) -> float:
    """Measured at 10 and 100 directories; other counts on the line through those two points."""
    if models <= 1:
        return 0.0
    (x0, y0), (x1, y1) = (10, m("leaderboard_10_s")), (100, m("leaderboard_100_s"))
    return y0 + (y1 - y0) * (models - x0) / (x1 - x0)


def work_table() -> list[str]:
    out = ["**Work and files** (measured per model, times the models):", ""]
    out += [
        "| models | requests | prompt tokens (Qwen2.5, with template) | answer tokens | cache "
        "| samples.jsonl | predictions.jsonl | report.html: synthetic text (measured) / sample-like text (derived) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for models in MODELS:
        prompt, answer = tokens(models)
        requests = models * m("requests_per_model")
        synthetic, real_like = report_html_mib(models)
        out.append(
            f"| {models} | {requests:,.0f} | {prompt / 1e6:,.1f} M | {answer / 1e6:,.1f} M"
            f" | {size(requests * m('cache_bytes_row') / 2**20)} | {size(models * m('samples_mib'))}"
            f" | {size(models * m('predictions_mib'))} | {size(synthetic)} / {size(real_like)} |"
        )
    return out


def generation_table(replica_rps: tuple[float, ...]) -> list[str]:
    out = [
        "**Generation wall time** (derived: requests / (endpoints x rate x measured efficiency)"
        " + start-up per model; models one after another):",
        "",
        "| endpoint rate (= answer tokens/s) | endpoints | harness req/s | processes (`--shard`) "
        "| 1 model | 10 models | 100 models |",
        "|---|---|---|---|---|---|---|",
    ]
    for rps in replica_rps:
        for endpoints in ENDPOINTS:
            rate, procs = generation_rate(endpoints, rps)
            cells = " | ".join(duration(generation_seconds(n, endpoints, rps)) for n in MODELS)
            tps = rps * m("answer_tokens")
            out.append(
                f"| {rps:g} req/s (= {tps:,.0f} tokens/s) | {endpoints} | {rate:,.0f} | {procs} | {cells} |"
            )
    return out


def scoring_table() -> list[str]:
    out = [
        "**Scoring wall time on H200s**, whole `score --device cuda` (derived from one H200's measured 150 s per model;"
        " more than one GPU is an assumption, below):",
        "",
        "| GPUs | 1 model split over the GPUs (assumed) | 10 models, one per GPU "
        "| 100 models, one per GPU | 100 models, each split (assumed) |",
        "|---|---|---|---|---|",
    ]
    for gpus in GPUS:
        one, _ = scoring_seconds(1, gpus)
        _, ten = scoring_seconds(10, gpus)
        split, side_by_side = scoring_seconds(100, gpus)
        out.append(
            f"| {gpus} | {duration(one)} | {duration(ten)} | {duration(side_by_side)} | {duration(split)} |"
        )
    return out


def after_table() -> list[str]:
    out = [
        "**Steps on the CPU** (measured on 2 shared cores for one model, times the models, one after"
        " another; the leaderboard measured at 10 and 100):",
        "",
        "| models | `score --no-semantic` | merge of 16 shards (`--no-semantic`) | leaderboard report |",
        "|---|---|---|---|",
    ]
    for models in MODELS:
        board = duration(leaderboard_seconds(models)) if models > 1 else "-"
        out.append(
            f"| {models} | {duration(models * m('score_cpu_s'))} | {duration(models * m('merge_16_s'))} | {board} |"
        )
    return out


def headroom() -> list[str]:
    """How far each shared resource is from the one process's measured request ceiling."""
    ceiling = m("harness_ceiling_rps")
    commit_ms = 1000 / m("cache_rows_s_1")
    return [
        "**Headroom** (derived):",
        "",
        f"- one process drives at least {ceiling:,.0f} req/s (measured); its client CPU,"
        f" {m('client_cpu_ms')} ms per request, puts one core's limit near {1000 / m('client_cpu_ms'):,.0f} req/s;",
        f"- the cache's single writer commits {m('cache_rows_s_1'):,.0f} rows/s one row at a time"
        f" ({m('cache_rows_s_long'):,.0f} for 4 KB answers): {m('cache_rows_s_1') / ceiling:.0f}x that ceiling"
        f" ({m('cache_rows_s_long') / ceiling:.0f}x); a commit costs {commit_ms:.3f} ms,"
        f" {commit_ms / m('client_cpu_ms'):.0%} of the client CPU per request;",
        f"- a leaderboard reads every samples.jsonl: {m('leaderboard_100_s') / 100:.2f} s per model"
        f" (100 models: {size(100 * m('samples_mib'))} to parse).",
    ]


def render(replica_rps: tuple[float, ...]) -> str:
    out = [f"Computed by `python benchmarks/scaling_table.py` on {date.today().isoformat()}.", ""]
    for part in (
        work_table(),
        generation_table(replica_rps),
        scoring_table(),
        after_table(),
        headroom(),
    ):
        out += [*part, ""]
    out += ["Inputs (measured):", ""]
    out += [f"- `{k}` = {f.value:g} {f.unit}: {f.source}" for k, f in MEASURED.items()]
    out += ["", "Assumptions (not measured):", ""]
    out += [f"- `{k}` = {f.value:g}: {f.source}" for k, f in ASSUMED.items()]
    rates = ", ".join(f"{r:g}" for r in replica_rps)
    out.append(
        f"- endpoint rates {rates} req/s per endpoint: inputs, not measurements (docs/scaling.md)"
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--replica-rps", type=float, nargs="+", default=list(REPLICA_RPS),
                   help="requests/s one endpoint sustains (default: %(default)s)")  # fmt: skip
    args = p.parse_args(argv)
    print(render(tuple(args.replica_rps)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
