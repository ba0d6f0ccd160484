"""A real judge, grounded: how a real (weak) judge model's readings of real outputs fare
against the grader's verdicts of the test corpus.

What it measures. From the real models' outputs of the test corpus
(``tests/corpus/real_outputs.jsonl``, ``real_outputs_2.jsonl``: each case a record, an output
and a human grader's ``expect`` verdict) it takes the cases the rules could not read (a format
failure) or read only with low confidence (``confidence: "low"``), the outputs ``--judge``
sends to a judge. It writes them as a data directory and a predictions file (ids prefixed
with the case id, so unique per task), scores them with ``taxpraben score --judge`` against a
real judge model, and compares each judge outcome with the grader's verdict:

- decided: the judge gave an answer (not null, not a malformed reply);
- grounded: its reading was accepted (``extracted_by: judge``);
- rejected: not grounded, counted by why (``judge_rejected``);
- agree: grounded readings whose status / score / extracted are the grader's;
- gives a point the grader withholds (must be 0), and withholds a point the grader gives:
  every such case is listed with its output, the judge's quote and why;
- the wall time per judge request (the score command's wall time over the requests sent,
  and, with ``--server-log``, llama.cpp's own ``total time`` of each request).

How to run it. It needs a real OpenAI-compatible server with a model on it (here: the
Qwen2.5-Coder-1.5B-Instruct GGUF of /work/shared/REAL_MODEL.md behind llama-cpp-python, one
request at a time, 5-120 s each on 2 cores, so the default selection takes 30-60 minutes)::

    ../shared/tools/real-model.sh serve /tmp/realmodel 18900 > /tmp/serve.log 2>&1 &
    .venv/bin/python benchmarks/real_judge.py --base-url http://127.0.0.1:18900/v1 \
        --out /tmp/real-judge --server-log /tmp/serve.log
    # again, on the scored run only (no requests): --compare-only

It is a measurement, not a test: it never runs in the test suite or in CI (it needs the real
server and takes most of an hour).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ("real_outputs.jsonl", "real_outputs_2.jsonl")
MODEL = "openai:qwen2.5-coder-1.5b-instruct"


def load_cases(corpus: Path) -> list[tuple[dict[str, Any], Any]]:
    """Every corpus case the judge would be asked about, with the rules' item: a format
    failure, or a reading of confidence "low"."""
    from taxpraben.data.checks import check_record
    from taxpraben.scoring.items import prepare_item
    from taxpraben.tasks import load_registry

    registry = load_registry(use_env=False)
    out = []
    for name in CORPUS:
        path = corpus / name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            case = json.loads(line)
            spec = registry[case["task"]]
            record, _ = check_record(case["record"], spec, path, number, "line")
            item = prepare_item(spec, record, 0, case["output"], None)
            if item.status == "format_failure" or item.confidence == "low":
                out.append((case, item))
    return out


def group_of(case: dict[str, Any], item: Any) -> tuple[str, str, str]:
    """The case's group: task, what the rules read (format failure or low), the grader's status."""
    ruled = "format_failure" if item.status == "format_failure" else "low"
    return case["task"], ruled, str(case["expect"].get("status"))


def select(cases: list[tuple[dict[str, Any], Any]], per_group: int) -> list[tuple[dict[str, Any], Any]]:
    """At most ``per_group`` cases of each group, evenly spaced in corpus order (deterministic)."""
    groups: dict[tuple[str, str, str], list[tuple[dict[str, Any], Any]]] = {}
    for pair in cases:
        groups.setdefault(group_of(*pair), []).append(pair)
    chosen = []
    for members in groups.values():
        step = max(1.0, len(members) / per_group)
        chosen += [members[int(i * step)] for i in range(min(per_group, len(members)))]
    return sorted(chosen, key=lambda pair: pair[0]["id"])


def write_inputs(chosen: list[tuple[dict[str, Any], Any]], out: Path) -> tuple[Path, Path, list[str]]:
    """The data directory (one file per task) and the predictions file of ``chosen``."""
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[str]] = {}
    preds = []
    for case, _ in chosen:
        record = dict(case["record"], id=f"{case['id']}:{case['record']['id']}")
        by_task.setdefault(case["task"], []).append(json.dumps(record, ensure_ascii=False))
        preds.append(json.dumps({"task": case["task"], "id": record["id"], "run": 0, "prediction": case["output"]},
                                ensure_ascii=False))
    for task, lines in by_task.items():
        (data / f"{task}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    predictions = out / "predictions.jsonl"
    predictions.write_text("\n".join(preds) + "\n", encoding="utf-8")
    return data, predictions, sorted(by_task)


def score(data: Path, predictions: Path, tasks: list[str], base_url: str, out: Path, timeout: int) -> float:
    """Run ``taxpraben score --judge`` on the inputs; returns its wall seconds."""
    env = dict(os.environ, REAL_JUDGE_KEY="none", PYTHONPATH=str(ROOT / "src"))
    cmd = [sys.executable, "-m", "taxpraben", "score", "--data", str(data), "--tasks", ",".join(tasks),
           "--predictions", str(predictions), "--runs", "1", "--no-semantic", "--judge", MODEL,
           "--judge-base-url", base_url, "--judge-api-key-env", "REAL_JUDGE_KEY", "--judge-concurrency", "1",
           "--judge-timeout", str(timeout), "--out", str(out / "run")]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    (out / "score.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode not in (0, 1):
        raise SystemExit(f"taxpraben score failed ({done.returncode}):\n{(done.stderr or done.stdout)[-3000:]}")
    return wall


def point(line: dict[str, Any]) -> float | None:
    """The item's exact score (acc or em)."""
    scores = line.get("scores") or {}
    return scores.get("acc", scores.get("em", line.get("score")))


def agrees(line: dict[str, Any], expect: dict[str, Any]) -> bool:
    """The item's reading is the grader's (every part the grader states)."""
    if "status" in expect and line["status"] != expect["status"]:
        return False
    if "score" in expect and point(line) != expect["score"]:
        return False
    return not ("extracted" in expect and line["extracted"] != expect["extracted"])


def quote_of(reply: str | None) -> Any:
    from taxpraben.judge.grounding import parse_reply

    return parse_reply(reply).quote if reply else None


def outcome_of(reply: str | None) -> str:
    """What the judge said: asked not (none), an answer, null (no answer), or no JSON object."""
    from taxpraben.judge.grounding import parse_reply

    if reply is None:
        return "not asked"
    parsed = parse_reply(reply)
    if not parsed.parsed:
        return "malformed"
    return "no answer" if parsed.answer is None else "answer"


def compare(out: Path, chosen: list[tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    """Each judge outcome against the grader's verdict, counted; the point-changing cases listed."""
    cases = {f"{case['id']}:{case['record']['id']}": (case, item) for case, item in chosen}
    lines = [json.loads(t) for t in (out / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines() if t]
    from taxpraben.judge.grounding import WHYS

    tally: Counter[str] = Counter()
    whys: Counter[str] = Counter()
    gives, withholds, disagree = [], [], []
    for line in lines:
        case, rule_item = cases[line["id"]]
        expect = case["expect"]
        ruled = "format_failure" if rule_item.status == "format_failure" else "low"
        tally[f"asked ({ruled})"] += 1
        said = outcome_of(line.get("judge_reply"))
        tally[f"judge: {said}"] += 1
        if said == "answer":
            tally["decided"] += 1
        if line.get("judge_rejected"):
            tally["rejected"] += 1
            for why in line["judge_rejected"].split("; "):  # a field task: "field: why" per field
                whys[why if why in WHYS else why.split(": ", 1)[-1]] += 1
        if line.get("extracted_by") != "judge":
            continue
        tally["grounded"] += 1
        tally[f"grounded ({ruled})"] += 1
        same = agrees(line, expect)
        tally["agree"] += same
        got, want = point(line), expect.get("score")
        entry = {"case": case["id"], "task": case["task"], "rules": ruled, "output": case["output"],
                 "reply": line.get("judge_reply"), "quote": quote_of(line.get("judge_reply")),
                 "judge_extracted": line.get("extracted"), "judge_score": got, "expect": expect,
                 "reason": case.get("reason")}
        if not same:
            disagree.append(entry)
        if want is not None and got is not None and got > want:
            gives.append(entry)
        if want is not None and got is not None and got < want:
            withholds.append(entry)
    return {"items": len(lines), "tally": dict(tally), "whys": dict(whys), "gives": gives,
            "withholds": withholds, "disagree": disagree}


def request_times(log: Path, offset: int) -> list[float]:
    """llama.cpp's ``total time`` (seconds) of each request logged after ``offset`` bytes."""
    text = log.read_bytes()[offset:].decode("utf-8", "replace")
    return [float(m) / 1000 for m in re.findall(r"total time =\s*([\d.]+) ms", text)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:18900/v1", help="the real judge's endpoint")
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus")
    parser.add_argument("--out", type=Path, required=True, help="folder for the inputs, the run and summary.json")
    parser.add_argument("--per-group", type=int, default=25,
                        help="cases at most per (task, rules' outcome, grader's status) group")
    parser.add_argument("--timeout", type=int, default=600, help="--judge-timeout")
    parser.add_argument("--server-log", type=Path, help="the server's log, for its own time per request")
    parser.add_argument("--compare-only", action="store_true", help="compare an earlier run in --out; ask nothing")
    parser.add_argument("--cases", help="only these corpus case ids, comma-separated (e.g. real-0012), of the selection")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    chosen = select(load_cases(args.corpus), args.per_group)
    if args.cases:
        wanted = set(args.cases.split(","))
        chosen = [pair for pair in chosen if pair[0]["id"] in wanted]
    data, predictions, tasks = write_inputs(chosen, args.out)
    print(f"{len(chosen)} cases: " + ", ".join(f"{k}={v}" for k, v in sorted(Counter(group_of(*p) for p in chosen).items())))
    summary: dict[str, Any] = {}
    if not args.compare_only:
        offset = args.server_log.stat().st_size if args.server_log else 0
        summary["wall_s"] = score(data, predictions, tasks, args.base_url, args.out, args.timeout)
        if args.server_log:
            summary["server_request_s"] = request_times(args.server_log, offset)
    summary.update(compare(args.out, chosen))
    results = json.loads((args.out / "run" / "results.json").read_text(encoding="utf-8"))
    summary["judge_meta"] = results.get("meta", {}).get("judge")
    (args.out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k not in ("disagree",)}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
