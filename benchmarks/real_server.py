"""A real server: what llama-cpp-python's OpenAI-compatible server does that the mock does not.

What it measures. Two things, against a real server with a real model on it (here the
Qwen2.5-Coder-1.5B-Instruct GGUF of /work/shared/REAL_MODEL.md):

1. the wire, asked directly (no taxpraben): one streamed request with
   ``stream_options.include_usage`` and one plain request of the same prompt, and one cut at
   ``max_tokens``: how many chunks, what the first and last chunks hold, whether a usage
   chunk comes, the finish reason, whether a stop token leaks into the text, the seconds to
   the first chunk and to the end;
2. ``taxpraben run`` of the bundled sample (``--limit 2 --runs 1 --no-semantic
   --concurrency 1``, by default ``--max-tokens 128`` so that it ends within the half hour)
   against that server, started by ``--serve "COMMAND"`` or already running
   (``--base-url``): per answer the latency, the finish reason, whether ``usage`` was
   reported, the status; the run's ledger (``without_usage``) and wall time.

How to run it (it needs the real server; it is a measurement, never part of the test suite
or CI: one request at a time, 5-120 s each on 2 cores)::

    .venv/bin/python benchmarks/real_server.py --out /tmp/real-server \
        --serve "../shared/tools/real-model.sh serve /tmp/realmodel 18900"
    # or, with the server already running on 18900:
    .venv/bin/python benchmarks/real_server.py --out /tmp/real-server --base-url http://127.0.0.1:18900/v1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-1.5b-instruct"
PROBE = "增值税的基本税率是多少？只回答一个百分数。"
STOP_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|im_start|>")


def post(base_url: str, body: dict[str, Any]) -> tuple[float, list[tuple[float, bytes]]]:
    """POST ``body``; the seconds taken and the answer's lines with the second each arrived."""
    request = urllib.request.Request(base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer x"})
    start = time.perf_counter()
    lines = []
    with urllib.request.urlopen(request, timeout=600) as answer:
        for line in answer:
            lines.append((time.perf_counter() - start, line))
    return time.perf_counter() - start, lines


def probe_stream(base_url: str, max_tokens: int) -> dict[str, Any]:
    """One streamed request with include_usage: its chunks described."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROBE}], "max_tokens": max_tokens,
            "temperature": 0, "seed": 0, "stream": True, "stream_options": {"include_usage": True}}
    total, lines = post(base_url, body)
    chunks = []
    first_token_s = None
    done = False
    for at, raw in lines:
        text = raw.strip()
        if not text.startswith(b"data:"):
            continue
        payload = text[5:].strip()
        if payload == b"[DONE]":
            done = True
            continue
        chunk = json.loads(payload)
        delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
        if first_token_s is None and delta.get("content"):
            first_token_s = round(at, 2)
        chunks.append(chunk)
    content = "".join(((c.get("choices") or [{}])[0].get("delta") or {}).get("content") or "" for c in chunks)
    return {
        "chunks": len(chunks),
        "first_chunk": chunks[0] if chunks else None,
        "last_chunk": chunks[-1] if chunks else None,
        "usage_chunk": any(isinstance(c.get("usage"), dict) for c in chunks),
        "finish_reason": next((c["choices"][0].get("finish_reason") for c in reversed(chunks)
                               if c.get("choices") and c["choices"][0].get("finish_reason")), None),
        "done_line": done,
        "text": content,
        "stop_token_in_text": any(t in content for t in STOP_TOKENS),
        "first_token_s": first_token_s,
        "total_s": round(total, 2),
    }


def probe_whole(base_url: str, max_tokens: int) -> dict[str, Any]:
    """The same prompt unstreamed: its usage and finish reason."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROBE}], "max_tokens": max_tokens,
            "temperature": 0, "seed": 0}
    total, lines = post(base_url, body)
    answer = json.loads(b"".join(line for _, line in lines))
    choice = answer["choices"][0]
    return {"usage": answer.get("usage"), "finish_reason": choice.get("finish_reason"),
            "text": choice["message"].get("content"), "total_s": round(total, 2)}


def run_sample(args: argparse.Namespace, name: str = "run", *extra: str) -> dict[str, Any]:
    """``taxpraben run`` of the bundled sample against the real server; its figures."""
    out = args.out / name
    cmd = [sys.executable, "-m", "taxpraben", "run", "--model", f"openai:{MODEL}",
           "--data", str(ROOT / "src" / "taxpraben" / "data" / "sample"), "--limit", str(args.limit),
           "--runs", "1", "--no-semantic", "--concurrency", "1", "--max-tokens", str(args.max_tokens),
           "--timeout", "600", "--out", str(out), "--no-cache", *extra]
    cmd += ["--serve", args.serve] if args.serve else ["--base-url", args.base_url]
    env = dict(os.environ, OPENAI_API_KEY="none", PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    (args.out / f"{name}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    if not (out / "samples.jsonl").exists():
        raise SystemExit(f"taxpraben run failed ({done.returncode}):\n{(done.stderr or done.stdout)[-3000:]}")
    samples = [json.loads(t) for t in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines() if t]
    predictions = {(p["task"], p["id"]): p for p in map(json.loads, (out / "predictions.jsonl").read_text(
        encoding="utf-8").splitlines()) if p}
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    latencies = [p.get("latency_s") for p in predictions.values() if p.get("latency_s") is not None]
    texts = [s.get("prediction") or "" for s in samples]
    return {
        "returncode": done.returncode,
        "wall_s": round(wall, 1),
        "answers": len(samples),
        "status": dict(Counter(s["status"] for s in samples)),
        "finish_reasons": dict(Counter(s.get("finish_reason") for s in samples)),
        "usage_reported": sum(bool(s.get("usage")) and "counted_by" not in s["usage"] for s in samples),
        "usage_counted_by_taxpraben": sum("counted_by" in (s.get("usage") or {}) for s in samples),
        "stop_token_in_text": sum(any(t in x for t in STOP_TOKENS) for x in texts),
        "latency_s": {"min": min(latencies, default=None), "max": max(latencies, default=None),
                      "mean": round(sum(latencies) / len(latencies), 1) if latencies else None},
        "ledger": results.get("ledger"),
        "per_item": [{"task": s["task"], "id": s["id"], "status": s["status"], "finish_reason": s.get("finish_reason"),
                      "usage": s.get("usage"), "latency_s": predictions[(s["task"], s["id"])].get("latency_s"),
                      "chars": len(s.get("prediction") or "")} for s in samples],
    }


def counted_against_reported(streamed: dict[str, Any], plain: dict[str, Any]) -> dict[str, Any]:
    """taxpraben's counts of the streamed answers (no usage came) against the server's own
    usage of the same requests unstreamed: the relative error of the totals, the worst item's."""
    reported = {(i["task"], i["id"]): i["usage"] for i in plain["per_item"] if i.get("usage")}
    pairs = [(i["usage"], reported[(i["task"], i["id"])]) for i in streamed["per_item"]
             if (i["task"], i["id"]) in reported and i.get("usage")]
    out: dict[str, Any] = {"items": len(pairs)}
    for key in ("prompt_tokens", "completion_tokens"):
        ours, theirs = sum(a[key] for a, _ in pairs), sum(b[key] for _, b in pairs)
        worst = max((abs(a[key] - b[key]) / b[key] for a, b in pairs if b[key]), default=None)
        out[key] = {"counted": ours, "reported": theirs, "total_error": round((ours - theirs) / theirs, 4) if theirs
                    else None, "worst_item_error": round(worst, 4) if worst is not None else None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:18900/v1", help="a server already running")
    parser.add_argument("--serve", help="start the server through taxpraben run --serve COMMAND instead")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--skip-probe", action="store_true", help="only the taxpraben run")
    parser.add_argument("--skip-run", action="store_true", help="only the wire probes (the server must be running)")
    parser.add_argument("--compare-unstreamed", action="store_true",
                        help="also run unstreamed (--no-stream: the server reports usage) and compare its counts "
                             "with taxpraben's of the streamed answers")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {}
    if not args.skip_probe and not args.serve:
        summary["stream"] = probe_stream(args.base_url, 32)
        summary["whole"] = probe_whole(args.base_url, 32)
        summary["stream_cut"] = probe_stream(args.base_url, 3)
    if not args.skip_run:
        summary["run"] = run_sample(args)
        if args.compare_unstreamed:
            summary["run_unstreamed"] = run_sample(args, "run-unstreamed", "--no-stream")
            summary["counted_against_reported"] = counted_against_reported(summary["run"], summary["run_unstreamed"])
    (args.out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if not k.startswith(("run", "counted"))}, ensure_ascii=False,
                     indent=1))
    for name in ("run", "run_unstreamed", "counted_against_reported"):
        if name in summary:
            shown = {k: v for k, v in summary[name].items() if k != "per_item"}
            print(name, json.dumps(shown, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
