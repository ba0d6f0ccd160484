#!/usr/bin/env python3
"""Draw GSM8K outputs of four chat models from macklinhrw/llm-reasoning (stdlib only, fixed seed)."""
import json, random, subprocess
from pathlib import Path

GIT = "/work/.mirror/macklinhrw+llm-reasoning/repo"
REPO = "macklinhrw/llm-reasoning"
HERE = Path(__file__).resolve().parent
SEED = 20261206

# prompt texts of the pre-fix runs (src/prompts.py at f9f0c1d): system message = one of these, user = question
def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True, check=True).stdout

COMMIT = git("rev-parse", "HEAD").strip()
PF = git("show", "f9f0c1d:src/prompts.py")
import ast
ns = {}
for node in ast.parse(PF).body:  # two plain string assignments: few_shot_prompt, zero_shot_prompt
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):  # """...""".strip()
        ns[node.targets[0].id] = node.value.func.value.value.strip()
ZS, FS = ns["zero_shot_prompt"], ns["few_shot_prompt"]

def prefix_query(system, question):
    return f"[system]\n{system}\n\n[user]\n{question}"

# (path, model, shots, n, prompt-builder)
PLAN = [
    ("results/evaluation_results-Llama-3.1-8B-Instruct-2024-12-02-07-36.json", "meta-llama/Llama-3.1-8B-Instruct", "cot", 13, None),
    ("results/evaluation_results-Llama-3.2-3B-Instruct-2024-12-02-05-33.json", "meta-llama/Llama-3.2-3B-Instruct", "cot", 13, None),
    ("results/evaluation_results-Llama-3.2-1B-Instruct-2024-12-02-04-40.json", "meta-llama/Llama-3.2-1B-Instruct", "cot", 13, None),
    ("results/archive/pre-prompt fix/evaluation_results-llama3.1-8b-01-zs.json", "meta-llama/Llama-3.1-8B-Instruct", "zero-shot", 6, ZS),
    ("results/archive/pre-prompt fix/evaluation_results-llama3.1-8b-01-fs.json", "meta-llama/Llama-3.1-8B-Instruct", "few-shot", 6, FS),
    ("results/archive/pre-prompt fix/evaluation_results-llama3.2-3b-01-zs.json", "meta-llama/Llama-3.2-3B-Instruct", "zero-shot", 6, ZS),
    ("results/archive/pre-prompt fix/evaluation_results-llama3.2-3b-01-fs.json", "meta-llama/Llama-3.2-3B-Instruct", "few-shot", 6, FS),
    ("results/archive/pre-prompt fix/evaluation_results-llama3.2-1b-01-zs.json", "meta-llama/Llama-3.2-1B-Instruct", "zero-shot", 6, ZS),
    ("results/archive/pre-prompt fix/evaluation_results-llama3.2-1b-01-fs.json", "meta-llama/Llama-3.2-1B-Instruct", "few-shot", 6, FS),
    ("results/archive/pre-prompt fix/evaluation_results-qwen2.5-7b-01-zs.json", "Qwen/Qwen2.5-7B-Instruct", "zero-shot", 13, ZS),
    ("results/archive/pre-prompt fix/evaluation_results-qwen2.5-7b-01-fs.json", "Qwen/Qwen2.5-7B-Instruct", "few-shot", 12, FS),
]

def main():
    rng = random.Random(SEED)
    out = []
    for path, model, shots, n, system in PLAN:
        rows = json.loads(git("show", f"{COMMIT}:{path}"))
        idx = sorted(rng.sample(range(len(rows)), n))
        for i in idx:
            r = rows[i]
            query = r["prompt"] if system is None else prefix_query(system, r["question"])
            gold = r["correct"]
            gold = int(gold) if float(gold).is_integer() else gold
            out.append({
                "task": "TaxCalc",
                "record": {"id": f"gsm8k-test-{i}", "query": query, "answer": gold},
                "output": r["response"],
                "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": i, "model": model,
                           "model_kind": "chat", "shots": shots, "lang": "en"},
                "hint": f"predicted={r.get('predicted')} is_correct={r.get('is_correct')}",
            })
    with open(HERE / "drawn.jsonl", "w", encoding="utf-8") as f:
        for k, c in enumerate(out, 1):
            c = {"id": f"macklinhrw__llm-reasoning-{k:04d}", **c}
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(out), "cases")

if __name__ == "__main__":
    main()
