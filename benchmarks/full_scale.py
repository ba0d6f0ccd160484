"""The full-size synthetic benchmark end to end: API throughput against the ideal and against
lm-evaluation-harness, the cached rerun, and scoring at scale (issue 7, items 2-4).

Steps (``--steps``, default all, in this order):

- ``api``: the mock server (``tests/helpers/mock_openai_server.py``, a subprocess) answers every
  request after a fixed latency L. ``taxpraben run --model openai:mock --concurrency C
  --runs 5 --no-semantic`` generates the whole synthetic benchmark (7,300 records x 5 runs =
  36,500 requests) and scores it. The ideal is C / L requests per second.
- ``rerun``: the same command again: every completion comes from the cache, the server's
  counter must stay at zero.
- ``lmeval``: lm-evaluation-harness's ``local-chat-completions`` model at the same
  concurrency on the same requests (the record's ``query`` as one user message, one task
  copy per run with ``seed`` = run, greedy), from task configs written into a temporary
  directory. It runs in its own virtual environment (``--lm-eval-python``); on
  ``--lm-eval-scale`` < 1 both harnesses run on that fraction of every dataset, so the
  ratio always compares identical workloads.
- ``score``: ``taxpraben score --no-semantic`` on model-like predictions for the 5 runs
  (``make_synthetic.py --predictions``).
- ``semantic``: the same with the tiny scorer models (``tests/helpers/tiny_models.py``), and the
  BERTScore part of that work timed against the ``bert_score`` package (one call per run,
  as TaxBen scores), reusing ``semantic_scoring.py``'s timer.

Every command is a child process measured with ``os.wait4``: wall time, CPU seconds (user +
system) and peak RSS of that process alone.

    python benchmarks/full_scale.py                                   # everything, L = 0.2 s
    python benchmarks/full_scale.py --steps api,rerun --latency 0.1
    python benchmarks/full_scale.py --lm-eval-python /tmp/lmeval-venv/bin/python

lm-evaluation-harness is not a dependency; create its environment with (CPU torch first, so
that pip does not pull a CUDA build)::

    python3 -m venv /tmp/lmeval-venv
    /tmp/lmeval-venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    /tmp/lmeval-venv/bin/pip install "lm-eval[api]==0.4.13"

Targets: >= 0.9 of the ideal at C = 64, faster than lm-evaluation-harness, peak memory
< 500 MB; cached rerun sends nothing; scoring without semantic metrics < 30 s and < 500 MB.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from _common import TAXPRABEN, Measured, header, machine, quiet_env, run_measured
from make_synthetic import SIZES, write_data, write_predictions

from helpers.mock_openai_server import server_call, spawn

STEPS = ("api", "rerun", "lmeval", "score", "semantic")


def count_lines(*paths: Path) -> int:
    total = 0
    for path in paths:
        with open(path, "rb") as fh:
            total += sum(1 for _ in fh)
    return total


def show(label: str, m: Measured, requests: int | None = None, ideal: float | None = None) -> None:
    line = f"  {label:<44} wall {m.wall_s:8.2f} s   CPU {m.cpu_s:8.2f} s   peak RSS {m.peak_rss_mib:7.0f} MiB"
    if requests and ideal:
        rate = requests / m.wall_s
        line += f"   {rate:7.1f} req/s = {rate / ideal:.3f} of ideal"
    print(line, flush=True)


def taxpraben_run(data: Path, root: str, args: argparse.Namespace, out: Path, cache: Path) -> Measured:
    cmd = [
        TAXPRABEN, "run", "--model", "openai:mock", "--base-url", root + "/v1",
        "--data", str(data), "--runs", str(args.runs), "--concurrency", str(args.concurrency),
        "--no-semantic", "--cache", str(cache), "--out", str(out),
    ]  # fmt: skip
    return run_measured(cmd, env=quiet_env()).check("taxpraben run")


# ---------------------------------------------------------------------------- lm-eval


LMEVAL_TASK = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {file}
test_split: test
output_type: generate_until
doc_to_text: query
doc_to_target: answer
generation_kwargs:
  until: ["<|im_end|>"]
  max_gen_toks: 1024
  do_sample: false
  temperature: 0
  seed: {seed}
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def write_lmeval_tasks(data: Path, runs: int, where: Path) -> list[str]:
    """One generate_until task per (dataset, run), reading ``query``/``answer`` as text."""
    names = []
    for task in SIZES:
        src = data / f"{task}.jsonl"
        if not src.exists():
            continue
        # The same queries; the gold as text, so that `datasets` infers one string column.
        flat = where / f"{task}.jsonl"
        with open(src, encoding="utf-8") as fin, open(flat, "w", encoding="utf-8") as fout:
            for line in fin:
                rec = json.loads(line)
                answer = rec["answer"]
                text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
                fout.write(json.dumps({"id": rec["id"], "query": rec["query"], "answer": text}, ensure_ascii=False) + "\n")
        for run in range(runs):
            name = f"syn_{task.lower()}_r{run}"
            (where / f"{name}.yaml").write_text(LMEVAL_TASK.format(name=name, file=flat, seed=run), encoding="utf-8")
            names.append(name)
    return names


def lmeval_available(python: str | None) -> bool:
    if not python or not Path(python).exists():
        return False
    probe = subprocess.run([python, "-c", "import lm_eval"], capture_output=True, check=False)
    return probe.returncode == 0


def lmeval_run(python: str, data: Path, root: str, args: argparse.Namespace, work: Path) -> Measured:
    tasks_dir = work / "lmeval-tasks"
    shutil.rmtree(tasks_dir, ignore_errors=True)
    tasks_dir.mkdir(parents=True)
    names = write_lmeval_tasks(data, args.runs, tasks_dir)
    model_args = (
        f"model=mock,base_url={root}/v1/chat/completions,num_concurrent={args.concurrency},"
        "max_retries=3,tokenized_requests=False,timeout=120"
    )
    cmd = [
        python, "-m", "lm_eval", "run", "--model", "local-chat-completions", "--model_args", model_args,
        "--tasks", ",".join(names), "--include_path", str(tasks_dir), "--apply_chat_template",
        "--output_path", str(work / "lmeval-out"), "--log_samples",
    ]  # fmt: skip
    env = quiet_env(HF_HOME=str(work / "hf-home"), TOKENIZERS_PARALLELISM="false")
    return run_measured(cmd, env=env).check("lm-eval")


# ---------------------------------------------------------------------------- steps


def step_api(args: argparse.Namespace, work: Path, data: Path, root: str, ideal: float) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    n = count_lines(*data.glob("*.jsonl")) * args.runs
    cache = work / "cache.sqlite"
    for path in (cache, work / "run"):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    if "api" in args.steps:
        header(f"API throughput: taxpraben run, {n} requests, C = {args.concurrency}, L = {args.latency} s, ideal {ideal:.0f} req/s")
        server_call(root, "/reset", "POST")
        m = taxpraben_run(data, root, args, work / "run", cache)
        sent = server_call(root, "/stats")["requests"]
        show("taxpraben run (generation + scoring)", m, n, ideal)
        print(f"  requests received by the server: {sent} (expected {n})")
        out["api"] = m
    if "rerun" in args.steps and cache.exists():
        header("Cached rerun: the same command again")
        server_call(root, "/reset", "POST")
        m = taxpraben_run(data, root, args, work / "run", cache)
        sent = server_call(root, "/stats")["requests"]
        show("taxpraben run, every completion cached", m)
        print(f"  requests received by the server: {sent} (expected 0)")
        out["rerun"] = m
        if "api" in out:
            gen = out["api"].wall_s - m.wall_s
            rate = n / gen
            print(
                f"  generation phase alone (first run minus cached rerun): {gen:.2f} s, "
                f"{rate:.1f} req/s = {rate / ideal:.3f} of ideal"
            )
    return out


def step_lmeval(args: argparse.Namespace, work: Path, data: Path, root: str, ideal: float) -> None:
    header(f"taxpraben against lm-evaluation-harness (local-chat-completions), C = {args.concurrency}")
    if not lmeval_available(args.lm_eval_python):
        print("  lm-eval not available: pass --lm-eval-python PATH (see this script's docstring to create it)")
        return
    if args.lm_eval_scale < 1.0:
        data = work / f"data-{args.lm_eval_scale:g}"
        write_data(data, seed=args.seed, scale=args.lm_eval_scale)
        print(f"  on {args.lm_eval_scale:g} of every dataset (both harnesses, identical requests)")
    n = count_lines(*data.glob("*.jsonl")) * args.runs
    results: dict[str, Measured] = {}
    for name in ("taxpraben", "lm-eval"):
        server_call(root, "/reset", "POST")
        if name == "taxpraben":
            cache = work / "cache-cmp.sqlite"
            cache.unlink(missing_ok=True)
            m = taxpraben_run(data, root, args, work / "run-cmp", cache)
        else:
            m = lmeval_run(args.lm_eval_python, data, root, args, work)
        sent = server_call(root, "/stats")["requests"]
        show(f"{name} ({sent} requests received)", m, n, ideal)
        results[name] = m
    t, lm = results["taxpraben"], results["lm-eval"]
    print(
        f"  lm-eval / taxpraben: wall {lm.wall_s / t.wall_s:.2f}x, CPU {lm.cpu_s / t.cpu_s:.2f}x, "
        f"peak RSS {lm.peak_rss_mib / t.peak_rss_mib:.2f}x"
    )


def step_score(args: argparse.Namespace, work: Path, data: Path, predictions: Path) -> None:
    header(f"Scoring at scale without semantic metrics: {count_lines(predictions)} predictions")
    cmd = [TAXPRABEN, "score", "--data", str(data), "--predictions", str(predictions),
           "--no-semantic", "--out", str(work / "scored")]  # fmt: skip
    show("taxpraben score --no-semantic", run_measured(cmd, env=quiet_env()).check("taxpraben score"))


def semantic_pairs(data: Path, predictions: Path, runs: int) -> list[tuple[list[str], list[str]]]:
    """Per run, the (candidate, reference) pairs the pipeline sends to BERTScore."""
    from taxpraben.data.loader import load_data
    from taxpraben.results.predictions import read_predictions
    from taxpraben.scoring.items import prepare_item
    from taxpraben.tasks import load_registry

    registry = load_registry()
    loaded = load_data(data, registry)
    preds = {p.key: p for p in read_predictions(predictions)}
    per_run: list[tuple[list[str], list[str]]] = [([], []) for _ in range(runs)]
    for task, recs in loaded.records.items():
        spec = registry[task]
        if spec.type not in ("generation", "mixed"):
            continue
        for run in range(runs):
            for rec in recs:
                p = preds[(task, rec.id, run)]
                item = prepare_item(spec, rec, run, p.prediction, p.error, "taxpraben")
                for pair in item.pairs:
                    if not pair.missing:
                        per_run[run][0].append(pair.candidate)
                        per_run[run][1].append(pair.reference)
    return per_run


def step_semantic(args: argparse.Namespace, work: Path, data: Path, predictions: Path) -> None:
    from semantic_scoring import timed

    from helpers.tiny_models import build_tiny_bart, build_tiny_xlnet

    header("Scoring at scale with the tiny semantic models (tiny XLNet layer 4, tiny BART), CPU")
    xlnet = build_tiny_xlnet(work / "tiny-xlnet")
    bart = build_tiny_bart(work / "tiny-bart")
    cmd = [TAXPRABEN, "score", "--data", str(data), "--predictions", str(predictions),
           "--bertscore-model", str(xlnet), "--bertscore-layer", "4", "--bartscore-model", str(bart),
           "--device", "cpu", "--out", str(work / "scored-semantic")]  # fmt: skip
    show("taxpraben score (BERTScore + BARTScore)", run_measured(cmd, env=quiet_env()).check("taxpraben score"))

    import torch
    from bert_score import BERTScorer

    from taxpraben.metrics.bertscore import BertScorer

    torch.set_num_threads(max(1, torch.get_num_threads()))
    per_run = semantic_pairs(data, predictions, args.runs)
    cands = [c for run in per_run for c in run[0]]
    refs = [r for run in per_run for r in run[1]]
    unique = dict.fromkeys(zip(cands, refs, strict=True))
    print(f"  BERTScore work: {len(cands)} pairs over {args.runs} runs, {len(unique)} distinct")
    ours = BertScorer(str(xlnet), 4, device="cpu")
    reference = BERTScorer(model_type=str(xlnet), num_layers=4, device="cpu")
    reference._tokenizer.model_max_length = min(reference._tokenizer.model_max_length, 10**6)
    ours.score(cands[:4], refs[:4])
    reference.score(cands[:4], refs[:4])
    keys = list(unique)
    _, t_ours, _ = timed(
        "taxpraben BertScorer, distinct pairs", lambda: ours.score([k[0] for k in keys], [k[1] for k in keys]), 1
    )
    _, t_ref, _ = timed(
        "bert_score, one call per run", lambda: [reference.score(c, r, batch_size=64) for c, r in per_run], 1
    )
    print(f"  speed-up vs bert_score per run: {t_ref / t_ours:.2f}x")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of {', '.join(STEPS)}")
    p.add_argument("--latency", type=float, default=0.2, help="mock latency L in seconds (default 0.2)")
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the real sizes (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lm-eval-python", help="python of an environment with lm-eval installed")
    p.add_argument("--lm-eval-scale", type=float, default=1.0,
                   help="run the lm-eval comparison on this fraction of every dataset (both harnesses)")
    p.add_argument("--work", type=Path, help="working directory (default: a temporary one)")
    args = p.parse_args(argv)
    args.steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = set(args.steps) - set(STEPS)
    if unknown:
        p.error(f"unknown steps {sorted(unknown)}")

    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="taxpraben-bench-")
        args.work = Path(tmp.name)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    print(f"{date.today().isoformat()} · {machine()} · work dir {work}")
    started = time.perf_counter()
    data, predictions = work / "data", work / "predictions.jsonl"
    counts = write_data(data, seed=args.seed, scale=args.scale)
    write_predictions(data, predictions, runs=args.runs, seed=args.seed)
    print(f"synthetic data: {sum(counts.values())} records in {len(counts)} datasets, {args.runs} runs")
    ideal = args.concurrency / args.latency
    server, root = spawn("--latency", str(args.latency))
    try:
        if {"api", "rerun"} & set(args.steps):
            step_api(args, work, data, root, ideal)
        if "lmeval" in args.steps:
            step_lmeval(args, work, data, root, ideal)
    finally:
        server.kill()
        server.wait()
    if "score" in args.steps:
        step_score(args, work, data, predictions)
    if "semantic" in args.steps:
        step_semantic(args, work, data, predictions)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
