#!/usr/bin/env python3
"""Draw GSM8K test outputs committed in qtli/GSM-Plus (results/gsm8k_results) into drawn.jsonl. stdlib only."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/qtli+GSM-Plus/repo"
COMMIT = "3474129ec12fcd3e8ac08cb037aca1928efca98c"
REPO = "qtli/GSM-Plus"
PREFIX = "qtli__GSM-Plus"
SEED = 20261206
PER_MODEL = 14
ROOT = "results/gsm8k_results/"
HERE = os.path.dirname(os.path.abspath(__file__))
# model file -> (model, kind)
FILES = {"abel_7b.json": "abel_7b", "abel_13b.json": "abel_13b", "abel_70b.json": "abel_70b",
         "gpt-3.5-turbo.json": "gpt-3.5-turbo", "gpt4.json": "gpt-4",
         "metamath_7b.json": "metamath_7b", "metamath_13b.json": "metamath_13b", "metamath_70b.json": "metamath_70b",
         "tora_7b.jsonl": "tora_7b", "tora_13b.jsonl": "tora_13b"}
KIND = {"gpt-3.5-turbo": "api", "gpt-4": "api"}  # the others are math-tuned open models
# the prompt of scripts/utils/prompt_template.py cot_prompt_map_func (system instruction, then the user turn)
COT_INSTR = ("Your task is to solve a series of math word problems by providing the final answer. Use the format "
             "#### [value] to highlight your answer. For example, if the answer is 560, you should write #### 560. "
             "Make sure to carefully read and understand each problem before providing your answer.")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def load(name):
    raw = git("show", f"{COMMIT}:{ROOT}{name}").decode()
    if name.endswith(".jsonl"):
        return [json.loads(l) for l in raw.splitlines() if l.strip()]
    return json.loads(raw)


def num(s):
    s = str(s).replace(",", "").strip()
    v = float(s)
    return int(v) if v == int(v) else v


def main():
    # gold by question, from the GSM8K reference solutions ("#### N") that abel_7b's file carries
    gold_by_q = {}
    for x in load("abel_7b.json"):
        m = re.search(r"####\s*(-?[\d,\.]+)\s*$", x["answer"])
        gold_by_q[x["question"].strip()] = num(m.group(1))
    pools = {}
    for name, model in FILES.items():
        for k, x in enumerate(load(name)):
            if model.startswith("abel"):
                q, query, out = x["question"], x["prompt"], x["model_prediction"]
                shots, hint = "zero-shot", "pred=%s result=%s" % (x["pred"], x["result"])
            elif model.startswith("gpt"):
                q = x["question"]
                query = COT_INSTR + "\n\nQuestion:\n" + q + "\nAnswer:\nLet's think step by step."
                out, shots = x["model_prediction"], "cot"
                hint = "pred=%s result=%s" % (x["pred"], x["result"])
            elif model.startswith("metamath"):
                query, out, shots = x["input"], x["completion"], "cot"
                q = query.split("### Instruction:\n", 1)[1].split("\n\n### Response:")[0]
                hint = "pred=%s result=%s" % (x["pred"], x["result"])
            else:  # tora: tool-integrated trajectory (program, its output, then the answer); prompt not recorded
                q, out, shots = x["question"], x["code"][0], "few-shot"
                query = q
                hint = "pred=%s result=%s" % (x["pred"][0], x["result"])
            g = gold_by_q.get(q.strip())
            if g is None or not isinstance(out, str) or not out.strip():
                continue
            pools.setdefault(model, []).append({"item": str(x.get("idx", k)), "query": query, "gold": g,
                                                "output": out, "shots": shots, "hint": hint, "path": ROOT + name})
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        for j in rng.sample(range(len(pool)), min(PER_MODEL, len(pool))):
            drawn.append((model, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (model, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "answer": c["gold"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": KIND.get(model, "domain"), "shots": c["shots"], "lang": "en"},
                   "hint": c["hint"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: len(p) for m, p in pools.items()}, len(drawn))


if __name__ == "__main__":
    main()
