#!/usr/bin/env python3
"""Draw reasoning-model, base-model and hybrid (steered base) outputs on GSM8K, MATH-500 and AIME 2024
from thaotnguyen/thinking-llms-interp (hybrid/results/benchmark_results_*.json) into drawn.jsonl.

stdlib only. Every results file whose blob is present in the snapshot holds, per question, the outputs of a
thinking model, a base model and a hybrid (base model steered from the thinking model). Items with a
plain-number gold only (GSM8K's "#### N", MATH-500 and AIME answers that are a plain number)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/thaotnguyen+thinking-llms-interp/repo"
COMMIT = "501921e28720cd12361fe6f4a0eeec5fe4214f03"
REPO = "thaotnguyen/thinking-llms-interp"
PREFIX = "thaotnguyen__thinking-llms-interp"
SEED = 20261209
HERE = os.path.dirname(os.path.abspath(__file__))
BASE_PROMPT = ("Task: Answer the question below. Explain your reasoning step by step.\n\n\n\nQuestion:\n{q}"
               "\n\nStep by step answer:\n")

# results file -> (dataset, variant tag for the hybrid)
FILES = {
    "hybrid/results/benchmark_results_llama-3.1-8b_aime.json": ("aime", ""),
    "hybrid/results/benchmark_results_llama-3.1-8b_gsm8k.json": ("gsm8k", ""),
    "hybrid/results/benchmark_results_qwen2.5-14b_math500.json": ("math500", ""),
    "hybrid/results/benchmark_results_qwen2.5-32b-on-deepseek-r1-distill-qwen-32b_gsm8k.json": ("gsm8k", ""),
    "hybrid/results/benchmark_results_qwen2.5-32b_gsm8k.json": ("gsm8k", ""),
    "hybrid/results/benchmark_results_qwen2.5-32b_math500.json": ("math500", ""),
    "hybrid/results/benchmark_results_qwen2.5-32b_math500_bias-only.json": ("math500", "bias-only"),
    "hybrid/results/benchmark_results_qwen2.5-32b_math500_random-firing.json": ("math500", "random-firing"),
    "hybrid/results/benchmark_results_qwen2.5-32b_math500_random-vectors.json": ("math500", "random-vectors"),
    "hybrid/results/benchmark_results_qwen2.5-math-1.5b_gsm8k.json": ("gsm8k", ""),
}
# cases a model (thinking models weigh most)
N_THINK, N_BASE, N_HYB = 13, 10, 6


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def short(name):
    return name.split("/")[-1].replace("qwq", "QwQ").replace("QwQ-32b", "QwQ-32B")


def gold_of(dataset, ans):
    if dataset == "gsm8k":
        s = ans.split("####")[-1].strip().replace(",", "")
    else:
        s = str(ans).strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", s):
        x = float(s)
        return int(x) if x == int(x) else x
    return None


def main():
    pools = {}  # model -> list of candidate cases
    kinds = {}
    for path, (dataset, variant) in FILES.items():
        data = json.loads(git("show", "%s:%s" % (COMMIT, path)))
        meta = data["metadata"]
        base, think = short(meta["base_model"]), short(meta["thinking_model"])
        hyb = "hybrid[%s+%s%s]" % (base, think, (":" + variant) if variant else "")
        if path.endswith("qwen2.5-32b_math500.json"):
            hyb = "hybrid[%s+%s:18-task]" % (base, think)
        names = {"thinking_model": think, "base_model": base, "hybrid_model": hyb}
        kinds.update({think: "reasoning", base: "base", hyb: "base"})
        for i, t in enumerate(data["tasks"]):
            g = gold_of(dataset, t["correct_answer"])
            if g is None:
                continue
            for role, out in t["model_answers"].items():
                if not out or not out.strip():
                    continue  # ablation runs leave the thinking and base outputs empty
                q = t["question"]
                query = q if role == "thinking_model" else BASE_PROMPT.format(q=q)
                pools.setdefault(names[role], []).append({
                    "record": {"id": "%s#%d" % (path, i), "query": query, "answer": g},
                    "output": out,
                    "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "%d:%s:%s" % (i, dataset, role),
                               "model": names[role], "model_kind": kinds[names[role]],
                               "shots": "zero-shot", "lang": "en"}})
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        n = {"reasoning": N_THINK, "base": N_BASE}[kinds[model]]
        if model.startswith("hybrid["):
            n = N_HYB
        # one question at most once per model
        seen, picked = set(), []
        for c in rng.sample(pool, len(pool)):
            key = (c["source"]["path"], c["record"]["id"])
            if key in seen:
                continue
            seen.add(key)
            picked.append(c)
            if len(picked) == n:
                break
        drawn.extend(picked)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, c in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc", "record": c["record"],
                                  "output": c["output"], "source": c["source"]}, ensure_ascii=False) + "\n")
    from collections import Counter
    print(len(drawn), "cases", Counter(c["source"]["model"] for c in drawn))


if __name__ == "__main__":
    main()
