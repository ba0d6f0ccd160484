#!/usr/bin/env python3
"""Draw MT-Bench (English) math/reasoning answers with numeric golds, 31 models, from the copy of
FastChat's llm_judge data committed in ku-nlp/ja-vicuna-qa-benchmark (stdlib only, fixed seed)."""
import json, random, subprocess
from pathlib import Path

GIT = "/work/.mirror/ku-nlp+ja-vicuna-qa-benchmark/repo"
REPO = "ku-nlp/ja-vicuna-qa-benchmark"
COMMIT = "44bd00f58a18232e7360bb2f64a22aee2377c031"  # 'first commit' holding fastchat/llm_judge/data/mt_bench
BASE = "fastchat/llm_judge/data/mt_bench"
HERE = Path(__file__).resolve().parent
SEED = 20261206
PER_MODEL = 9

# numeric golds, hand-transcribed from the "reference" field of question.jsonl (turn index 0 / 1);
# question 116 is left out (its turns ask for an expression in z or y, not a number).
GOLD = {
    (104, 0): 0, (104, 1): 1,
    (111, 0): 3, (111, 1): 15.707963267948966,   # "5pi"
    (112, 0): 12000, (112, 1): 2000,
    (113, 0): 0.19, (113, 1): 0,                 # "19%", "0%" (probabilities)
    (114, 0): 0.9722222222222222, (114, 1): 1,   # "35/36", "100%"
    (115, 0): 38, (115, 1): 100,

    (117, 0): 19, (117, 1): 9,
    (118, 0): 0, (118, 1): 3,
    (119, 0): 280, (119, 1): 350,
    (120, 0): 0, (120, 1): 2,
}
KIND = {"gpt-4": "api", "gpt-3.5-turbo": "api", "claude-v1": "api", "claude-instant-v1": "api",
        "palm-2-chat-bison-001": "api", "llama-13b": "base"}

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True, check=True).stdout

def main():
    qs = {}
    for line in git("show", f"{COMMIT}:{BASE}/question.jsonl").splitlines():
        d = json.loads(line)
        qs[d["question_id"]] = d
    files = sorted(p for p in git("ls-tree", "--name-only", f"{COMMIT}:{BASE}/model_answer/").split() if p.endswith(".jsonl"))
    keys = sorted(GOLD)
    rng = random.Random(SEED)
    out = []
    for fn in files:
        model = fn[:-len(".jsonl")]
        path = f"{BASE}/model_answer/{fn}"
        ans = {}
        for line in git("show", f"{COMMIT}:{path}").splitlines():
            d = json.loads(line)
            ans[d["question_id"]] = d
        picks = sorted(rng.sample(keys, PER_MODEL))
        for qid, turn in picks:
            q = qs[qid]
            turns = ans[qid]["choices"][0]["turns"]
            if turn == 0:
                query = q["turns"][0]
            else:
                query = (f"[user]\n{q['turns'][0]}\n\n[assistant]\n{turns[0]}\n\n[user]\n{q['turns'][1]}")
            out.append({
                "task": "TaxCalc",
                "record": {"id": f"mt_bench-{qid}-turn{turn + 1}", "query": query, "answer": GOLD[(qid, turn)]},
                "output": turns[turn],
                "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": f"question_id {qid} turn {turn + 1}",
                           "model": model, "model_kind": KIND.get(model, "chat"), "shots": "zero-shot", "lang": "en"},
            })
    with open(HERE / "drawn.jsonl", "w", encoding="utf-8") as f:
        for k, c in enumerate(out, 1):
            f.write(json.dumps({"id": f"ku-nlp__ja-vicuna-qa-benchmark-{k:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(out), "cases,", len(files), "models")

if __name__ == "__main__":
    main()
