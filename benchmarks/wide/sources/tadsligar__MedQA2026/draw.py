#!/usr/bin/env python3
"""Draw MedQA2026 base and instruct model responses on the focused MedQA (USMLE, 4-option) set. stdlib only."""
import json, random, subprocess, os

GIT = "/work/.mirror/tadsligar+MedQA2026/repo"
COMMIT = "e7a53f92f9c004b58376ee92ce313a948bf2facb"
REPO = "tadsligar/MedQA2026"
PER_MODEL = 16
SEED = 20261206
DATA = "data/datasets/medqa_focused_1030.json"
MODELS = [  # (results dir, model id, kind, style)
    ("results/base_runs/olmo3_7b", "allenai/Olmo-3-1025-7B", "base", "base"),
    ("results/base_runs/olmo3_32b", "allenai/Olmo-3-1125-32B", "base", "base"),
    ("results/base_runs/qwen25_7b", "Qwen/Qwen2.5-7B", "base", "base"),
    ("results/base_runs/qwen25_14b", "Qwen/Qwen2.5-14B", "base", "base"),
    ("results/base_runs/qwen25_32b", "Qwen/Qwen2.5-32B", "base", "base"),
    ("results/instruct_runs/olmo3_7b_instruct", "allenai/Olmo-3-7B-Instruct", "chat", "instruct"),
    ("results/instruct_runs/olmo3_32b_instruct", "allenai/Olmo-3.1-32B-Instruct", "chat", "instruct"),
    ("results/instruct_runs/qwen25_7b_instruct", "Qwen/Qwen2.5-7B-Instruct", "chat", "instruct"),
    ("results/instruct_runs/qwen25_14b_instruct", "Qwen/Qwen2.5-14B-Instruct", "chat", "instruct"),
    ("results/instruct_runs/qwen25_32b_instruct", "Qwen/Qwen2.5-32B-Instruct", "chat", "instruct"),
]
RUNS = [f"temp{t}_run{r}_results.json" for t in ("0.0", "0.3", "0.7") for r in (1, 2, 3)]
SYSTEM = "You are answering a multiple-choice medical exam question."

def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")

def main():
    data = json.loads(show(DATA))
    rng = random.Random(SEED)
    cases = []
    for d, model, kind, style in MODELS:
        runs = {fn: json.loads(show(f"{d}/{fn}")) for fn in RUNS}
        pool = [(fn, i) for fn in RUNS for i in range(len(runs[fn]))]
        rng.shuffle(pool)
        seen, got = set(), 0
        for fn, i in pool:
            if got == PER_MODEL:
                break
            r = runs[fn][i]
            qid = r["question_id"]
            if qid in seen or r.get("tokens", 0) == 0:   # tokens 0 = the runner's "A" fallback on a failed call
                continue
            item = data[qid]
            opts = item["options"]
            letters = sorted(opts)
            if letters != ["A", "B", "C", "D"]:
                continue
            choices = [opts[l] for l in letters]
            if item["answer"] not in choices or item.get("answer_idx") != letters[choices.index(item["answer"])]:
                continue
            g = choices.index(item["answer"])
            assert r["correct"] == letters[g]
            opt_text = "\n".join(f"{l}. {opts[l]}" for l in letters)
            if style == "base":
                query = f"Question: {item['question']}\n\nOptions:\n{opt_text}\n\nAnswer:"
            else:
                query = (SYSTEM + "\n\n" + f"Question: {item['question']}\n\nOptions:\n{opt_text}\n\n"
                         "Answer with only the single letter (A, B, C, or D) of the best option.")
            rec = {"id": f"focused-{qid}", "query": query, "choices": choices, "gold": g, "answer": choices[g]}
            cases.append({"task": "TaxSCQ", "record": rec, "output": r["response"],
                          "source": {"repo": REPO, "commit": COMMIT, "path": f"{d}/{fn}", "item": qid,
                                     "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en"},
                          "hint": f"source predicted={r['predicted']} is_correct={r['is_correct']}"})
            seen.add(qid); got += 1
    for n, c in enumerate(cases, 1):
        c["id"] = f"tadsligar__MedQA2026-{n:04d}"
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps({"id": c["id"], "task": c["task"], "record": c["record"], "output": c["output"],
                                "source": c["source"], "hint": c["hint"]}, ensure_ascii=False) + "\n")
    print(len(cases), "cases")

if __name__ == "__main__":
    main()
