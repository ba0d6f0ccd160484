#!/usr/bin/env python3
"""Draw FinanceMath validation CoT outputs (many models) for hand grading. stdlib only."""
import json, random, subprocess, os

GIT = "/work/.mirror/yale-nlp+FinanceMath/repo"
COMMIT = "bdddc58655947475da852e241b96a7dbd1478742"
REPO = "yale-nlp/FinanceMath"
PER_MODEL = 3
EXTRA_PER_MODEL = 1   # second pass, appended after the first 153 cases (ids stay stable)
SEED2 = 20261207
SEED = 20261206

def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")

def ls(prefix):
    out = subprocess.run(["git", "--git-dir", GIT, "ls-tree", "--name-only", f"{COMMIT}:{prefix}"],
                         check=True, capture_output=True).stdout.decode()
    return sorted(l for l in out.splitlines() if l.endswith(".json"))

SYSTEM = ("You are a financial expert, you are supposed to answer the given question. You need to first think "
          "through the problem step by step, documenting each necessary step. Then you are required to conclude "
          "your response with the final answer in your last sentence as 'Therefore, the answer is {final answer}'. "
          "The final answer should be a numeric value.")

def prompt(ex):
    if ex["tables"]:
        q = "Table:\n" + "\n\n".join(ex["tables"]) + "\n" + f"\nQuestion: {ex['question']}\n"
    else:
        q = f"Question: {ex['question']}\n"
    user = "\n".join([q, "Let's think step by step to answer the given question.\n"])
    return SYSTEM + "\n" + user

def kind(m):
    ml = m.lower()
    if any(k in ml for k in ("gpt-", "gpt_", "claude", "gemini", "deepseek-chat", "deepseek-coder.json")) or m in ("deepseek-coder",):
        return "api"
    if "finma" in ml:
        return "domain"
    if any(k in ml for k in ("llama-7b", "llama-65b", "yi-34b", "phi-1_5", "phi-2")) and "chat" not in ml and "instruct" not in ml:
        return "base"
    return "chat"

def main():
    gold = {ex["question_id"]: ex for ex in json.loads(show("data/validation.json"))}
    rng = random.Random(SEED)
    models = ls("outputs/validation/raw_cot_outputs")
    cases = []
    for fn in models:
        model = fn[:-5]
        path = f"outputs/validation/raw_cot_outputs/{fn}"
        data = json.loads(show(path))
        idx = rng.sample(range(len(data)), PER_MODEL)
        for i in idx:
            ex = data[i]
            g = gold[ex["question_id"]]
            out = ex["output"]
            if isinstance(out, list):
                assert len(out) == 1
                out = out[0]
            gt = float(g["ground_truth"])
            rec = {"id": g["question_id"], "query": prompt(g), "answer": gt}
            cases.append({"task": "TaxCalc", "record": rec, "output": out,
                          "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": g["question_id"],
                                     "model": model, "model_kind": kind(model), "shots": "cot", "lang": "en"}})
    # second pass: one more item per model, not among that model's first-pass items
    rng2 = random.Random(SEED2)
    taken = {}
    for c in cases:
        taken.setdefault(c["source"]["model"], set()).add(c["source"]["item"])
    for fn in models:
        model = fn[:-5]
        path = f"outputs/validation/raw_cot_outputs/{fn}"
        data = json.loads(show(path))
        free = [i for i in range(len(data)) if data[i]["question_id"] not in taken[model]]
        for i in rng2.sample(free, EXTRA_PER_MODEL):
            ex = data[i]
            g = gold[ex["question_id"]]
            out = ex["output"]
            if isinstance(out, list):
                assert len(out) == 1
                out = out[0]
            rec = {"id": g["question_id"], "query": prompt(g), "answer": float(g["ground_truth"])}
            cases.append({"task": "TaxCalc", "record": rec, "output": out,
                          "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": g["question_id"],
                                     "model": model, "model_kind": kind(model), "shots": "cot", "lang": "en"}})
    for n, c in enumerate(cases, 1):
        c["id"] = f"yale-nlp__FinanceMath-{n:04d}"
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps({"id": c["id"], "task": c["task"], "record": c["record"], "output": c["output"],
                                "source": c["source"]}, ensure_ascii=False) + "\n")
    print(len(cases), "cases from", len(models), "models")

if __name__ == "__main__":
    main()
