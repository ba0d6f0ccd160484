#!/usr/bin/env python3
"""Draw 'count the happy numbers in an interval' answers of four dated GPT-3.5 / GPT-4 snapshots from
lchen001/LLMDrift (stdlib only, fixed seed)."""
import csv, io, json, random, re, subprocess
from pathlib import Path

GIT = "/work/.mirror/lchen001+LLMDrift/repo"
REPO = "lchen001/LLMDrift"
PATH = "generation/COUNTAHAPPYNUMBER_EVAL.csv"
HERE = Path(__file__).resolve().parent
SEED = 20261206
PER_MODEL = 20

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True, check=True).stdout

def main():
    commit = git("rev-parse", "HEAD").strip()
    rows = list(csv.DictReader(io.StringIO(git("show", f"{commit}:{PATH}"))))
    by_model = {}
    for i, r in enumerate(rows):
        by_model.setdefault(r["model"], []).append((i, r))
    rng = random.Random(SEED)
    out = []
    for model in sorted(by_model):
        for i, r in sorted(rng.sample(by_model[model], PER_MODEL)):
            m = re.fullmatch(r"\\\\boxed\{(\d+)\}", r["ref_answer"].strip())
            assert m, r["ref_answer"]
            out.append({
                "task": "TaxCalc",
                "record": {"id": f"counthappynumber-{r['id']}", "query": r["query"], "answer": int(m.group(1))},
                "output": r["answer"],
                "source": {"repo": REPO, "commit": commit, "path": PATH, "item": f"row {i} (id {r['id']})",
                           "model": model.split("/", 1)[1], "model_kind": "api", "shots": "cot", "lang": "en"},
            })
    with open(HERE / "drawn.jsonl", "w", encoding="utf-8") as f:
        for k, c in enumerate(out, 1):
            f.write(json.dumps({"id": f"lchen001__LLMDrift-{k:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(out), "cases")

if __name__ == "__main__":
    main()
