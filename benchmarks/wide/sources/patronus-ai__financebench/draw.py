#!/usr/bin/env python3
"""Draw FinanceBench model completions committed in patronus-ai/financebench (results/*.jsonl) into
drawn.jsonl: the questions whose gold answer is a JSON number (TaxCalc). stdlib only."""
import json, os, random, subprocess

GIT = "/work/.mirror/patronus-ai+financebench/repo"
COMMIT = "cc39aeb4afdf33909ee1412188bf89035950c2eb"
REPO = "patronus-ai/financebench"
PREFIX = "patronus-ai__financebench"
SEED = 20261206
PER_MODEL = 35
HERE = os.path.dirname(os.path.abspath(__file__))
KIND = {"gpt-4": "api", "gpt-4-1106-preview": "api", "claude-2": "api", "llama2": "chat"}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def main():
    files = git("ls-tree", "-r", "--name-only", COMMIT, "results").decode().split()
    pools = {}
    for p in sorted(files):
        if not p.endswith(".jsonl"):
            continue
        for k, line in enumerate(git("show", f"{COMMIT}:{p}").decode("utf-8").splitlines()):
            if not line.strip():
                continue
            r = json.loads(line)
            g = r["gold_answer"]
            if isinstance(g, bool) or not isinstance(g, (int, float)):
                continue  # text golds (free-form answers) are left out
            pools.setdefault(r["model_name"], []).append({
                "path": p, "line": k, "id": r["financebench_id"], "mode": r["eval_mode"],
                "query": r["question"], "gold": g, "output": r["model_answer"] if r["model_answer"] is not None else "",
                "label": r.get("label")})
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        for j in rng.sample(range(len(pool)), min(PER_MODEL, len(pool))):
            drawn.append((model, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (model, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc",
                   "record": {"id": "%s#%s" % (c["path"], c["id"]), "query": c["query"], "answer": c["gold"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": "%d:%s" % (c["line"], c["id"]),
                              "model": model, "model_kind": KIND[model], "shots": "zero-shot", "lang": "en",
                              "eval_mode": c["mode"]},
                   "hint": "human label: %s" % c["label"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: len(p) for m, p in pools.items()}, len(drawn))


if __name__ == "__main__":
    main()
