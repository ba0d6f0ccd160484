#!/usr/bin/env python3
"""Draw FinanceReasoning (hard subset, chain-of-thought) model outputs committed in
Staudinger0325/FinanceReasoning (fork of BUPT-Reasoning-Lab/FinanceReasoning) into drawn.jsonl.

stdlib only. Every results/FinanceReasoning/hard/cot/<model>/inference.json is one model's run over the
238 hard questions; from each of the 13 models 12 items with a numeric gold are drawn with a fixed
seed (TaxCalc). The query is rebuilt from the repository's own prompt template (utils/prompts.py,
"cot") and inference.py's user-input layout."""
import json, os, random, subprocess

GIT = "/work/.mirror/Staudinger0325+FinanceReasoning/repo"
COMMIT = "1f9c5b9949e8469c8e01ff2683af7c3e4f7c909f"
REPO = "Staudinger0325/FinanceReasoning"
PREFIX = "Staudinger0325__FinanceReasoning"
SEED = 20261209
PER_MODEL = 12
ROOT = "results/FinanceReasoning/hard/cot"
HERE = os.path.dirname(os.path.abspath(__file__))

KIND = {
    "claude-3-5-sonnet-20241022": "api", "deepseek-r1": "reasoning", "deepseek-v3": "api",
    "gemini-2.0-flash-thinking-exp-01-21": "reasoning", "gemini-2.0-pro-exp-02-05": "api",
    "gpt-4o-2024-11-20": "api", "llama3.1-405b-instruct": "chat", "llama3.3-70b-instruct": "chat",
    "o1-2024-12-17": "reasoning", "o1-mini-2024-09-12": "reasoning", "o3-mini-2025-01-31": "reasoning",
    "qwen-max-2025-01-25": "api", "qwq-32b-preview": "reasoning",
}

# utils/prompts.py at COMMIT: COT_SYSTEM_INPUT and COT_PROGRAM_PREFIX_INPUT
SYSTEM = ("You are a financial expert, you are supposed to answer the given question. You need to first think "
          "through the problem step by step, identifying the exact variables and values, and documenting each "
          "necessary step. Then you are required to conclude your response with the final answer in your last "
          "sentence as 'Therefore, the answer is {final answer}'. The final answer should be a numeric value.")
PREFIX_COT = "Let's think step by step to answer the given question.\n"


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def user_input(r):
    # inference.py prepare_user_inputs (no retrieval)
    if r.get("tables"):
        q = "Table:\n" + "\n\n".join(r["tables"]) + "\n" + "\nQuestion: %s\n" % r["question"]
    elif r.get("context"):
        q = "The following question context is provided for your reference.\n" + r["context"] + "\n" + \
            "\nQuestion: %s\n" % r["question"]
    else:
        q = "Question: %s\n" % r["question"]
    return q + "\n" + PREFIX_COT


def main():
    models = sorted(git("ls-tree", "--name-only", COMMIT, ROOT + "/").decode().split())
    rng = random.Random(SEED)
    drawn = []
    for mp in models:
        model = mp.rsplit("/", 1)[1]
        inf = json.loads(git("show", "%s:%s/inference.json" % (COMMIT, mp)))
        ev = json.loads(git("show", "%s:%s/evaluation.json" % (COMMIT, mp)))
        evmap = {e["question_id"]: e.get("result") for e in ev}
        pool = [k for k, r in enumerate(inf)
                if isinstance(r["ground_truth"], (int, float)) and not isinstance(r["ground_truth"], bool)]
        for k in rng.sample(pool, PER_MODEL):
            drawn.append((model, mp, k, inf[k], evmap.get(inf[k]["question_id"])))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (model, mp, k, r, res) in enumerate(drawn, 1):
            hint = ""
            if res:
                hint = "source extracted_answer: %s; acc: %s" % (res.get("extracted_answer"), res.get("acc"))
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc",
                   "record": {"id": "hard#%s" % r["question_id"], "query": SYSTEM + "\n\n" + user_input(r),
                              "answer": r["ground_truth"]},
                   "output": r["output"] or "",
                   "source": {"repo": REPO, "commit": COMMIT, "path": mp + "/inference.json",
                              "item": "%d:%s" % (k, r["question_id"]), "model": model,
                              "model_kind": KIND[model], "shots": "cot", "lang": "en",
                              "origin": r.get("source")},
                   "hint": hint}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(len(drawn), len(models))


if __name__ == "__main__":
    main()
