#!/usr/bin/env python3
"""Draw GSM8K outputs of small fine-tuned models (GPT-2, GPT-2 medium/large, Phi-1.5) committed in
karou1182001/finalProjectNLP into drawn.jsonl. stdlib only."""
import json, os, random, subprocess

GIT = "/work/.mirror/karou1182001+finalProjectNLP/repo"
COMMIT = "63b4ce5c7e6516c68d62a167df1af1b51e4b8f7b"
REPO = "karou1182001/finalProjectNLP"
PREFIX = "karou1182001__finalProjectNLP"
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))

FEW_SHOT = [
    ("Q: If you have 2 apples and pick 3 more, how many do you have?",
     "Let's think step by step:\n1. Start with 2 apples.\n2. Pick 3 more.\n3. 2 + 3 = 5.\nAnswer: 5"),
    ("Q: A bat costs 1 dollar more than a ball. The ball costs 1 dollar. How much is the bat?",
     "Let's think step by step:\n1. Ball costs $1.\n2. Bat costs $1 + $1 = $2.\nAnswer: 2"),
    ("Q: There are 4 cars, each carrying 3 people. How many people total?",
     "Let's think step by step:\n1. 4 cars.\n2. Each has 3 people.\n3. 4 \u00d7 3 = 12.\nAnswer: 12"),
    ("Q: You buy 5 books then give away 2. How many books remain?",
     "Let's think step by step:\n1. Bought 5 books.\n2. Gave away 2.\n3. 5 - 2 = 3.\nAnswer: 3"),
    ("Q: A rope is 10 meters long. You cut off 4 meters. How long is the remainder?",
     "Let's think step by step:\n1. Rope length = 10 m.\n2. Cut off 4 m.\n3. 10 - 4 = 6.\nAnswer: 6"),
]
DEMOS = "".join("%s %s\n\n" % qa for qa in FEW_SHOT)

# (path, model, shots, style, count)
POOLS = [
    ("gpt2BaseModel/all_predictions.json", "gpt2-gsm8k-ft", "zero-shot", "qa", 30),
    ("phiModel/all_predictions_phi.json", "phi-1_5-gsm8k-ft", "zero-shot", "qa", 30),
    ("GPT2_large_and_medium/final_outputs/gpt2-medium_few_shot_cot_results_final.json", "gpt2-medium-gsm8k-ft", "few-shot", "few", 20),
    ("GPT2_large_and_medium/final_outputs/gpt2-medium_zero_shot_cot_results_final.json", "gpt2-medium-gsm8k-ft", "cot", "zero", 20),
    ("GPT2_large_and_medium/final_outputs/gpt2-large_few_shot_cot_results_final.json", "gpt2-large-gsm8k-ft", "few-shot", "few", 20),
    ("GPT2_large_and_medium/final_outputs/gpt2-large_zero_shot_cot_results_final.json", "gpt2-large-gsm8k-ft", "cot", "zero", 20),
]


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def num(s):
    s = s.replace(",", "").strip()
    v = float(s)
    return int(v) if v == int(v) else v


def main():
    rng = random.Random(SEED)
    drawn = []
    counts = {}
    for path, model, shots, style, k in POOLS:
        data = json.loads(git("show", "%s:%s" % (COMMIT, path)))
        pool = []
        for i, r in enumerate(data):
            q = r["question"]
            if style == "qa":
                gold = num(r["gold_full"].split("####")[-1])
                query = "Q: %s\nA:" % q
                out = r["pred_full"]
                hint = "pred_number=%s correct=%s" % (r["pred_number"], r["correct"])
            else:
                if style == "few":
                    prompt = DEMOS + "Q: %s Let's think step by step:" % q
                    query = "Q: %s Let's think step by step:" % q
                else:
                    prompt = q + " Let's think step by step:"
                    query = prompt
                full = r["full"]
                if not full.startswith(prompt):
                    continue  # the prompt could not be rebuilt exactly: left out
                out = full[len(prompt):]
                try:
                    gold = num(r["gold"])
                except (TypeError, ValueError):
                    continue
                hint = "pred=%s correct=%s" % (r["pred"], r["correct"])
            if not out.strip():
                continue
            pool.append({"item": str(i), "query": query, "gold": gold, "output": out, "hint": hint})
        counts[path] = len(pool)
        for j in sorted(rng.sample(range(len(pool)), min(k, len(pool)))):
            drawn.append((path, model, shots, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (path, model, shots, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc",
                   "record": {"id": "%s#%s" % (path, c["item"]), "query": c["query"], "answer": c["gold"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": c["item"], "model": model,
                              "model_kind": "domain", "shots": shots, "lang": "en"},
                   "hint": c["hint"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(counts, len(drawn))


if __name__ == "__main__":
    main()
