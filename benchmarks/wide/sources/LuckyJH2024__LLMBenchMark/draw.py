#!/usr/bin/env python3
"""Draw the SQuAD-with-passage QA outputs committed in LuckyJH2024/LLMBenchMark (branch QA) into drawn.jsonl
(TaxRead). stdlib only.

data/qa_benchmark.json (147 items) = 37 SQuAD items whose "question" is the passage with the question glued on
(no separator), then 100 TriviaQA-style and 10 multi-part Super Bowl questions without a passage (left out).
results/<model>_qa.json hold one record per item: prompt ("Question: <question>\nAnswer:"), response (verbatim),
score (the repo's keyword hit: gold substring in response). Two committed runs exist for gpt-4o and deepseek-chat
(commit 6834b0cf and the branch tip 5cf0bd95); claude-3-7-sonnet has one (5cf0bd95). The committed claude-3-opus,
claude-3-sonnet and gpt-3.5-turbo files hold only harness error strings ("Error: ...") and are left out."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/LuckyJH2024+LLMBenchMark/repo"
TIP = "5cf0bd95d47839e60be38daf6afb1c63df469b61"    # branch QA tip (data + run 2 + claude-3-7-sonnet)
RUN1 = "6834b0cf1e120d5991c086380807b8cd45e9811d"   # ancestor on branch QA (run 1 of gpt-4o / deepseek-chat)
REPO = "LuckyJH2024/LLMBenchMark"
PREFIX = "LuckyJH2024__LLMBenchMark"
SEED = 20261209
N_PASSAGE = 37
RUNS = [(RUN1, "gpt-4o"), (TIP, "gpt-4o"), (RUN1, "deepseek-chat"), (TIP, "deepseek-chat"),
        (TIP, "claude-3-7-sonnet-20250219")]
QUOTA = {"claude-3-7-sonnet-20250219": 37, "deepseek-chat": 57, "gpt-4o": 56}
HERE = os.path.dirname(os.path.abspath(__file__))


def show(commit, path):
    out = subprocess.run(["git", "--git-dir", GIT, "show", f"{commit}:{path}"], check=True, capture_output=True).stdout
    return json.loads(out.decode("utf-8"))


def split(q):
    """passage + question were concatenated without a space; the question starts after the last sentence end
    that is directly followed by a letter (a 'U.S.'-style abbreviation is skipped)."""
    cuts = [m.end() for m in re.finditer(r'[.!?:\]")](?=[A-Za-z])', q)
            if not re.search(r'(^|[\s.])[A-Z]\.$', q[:m.end()])]
    k = cuts[-1]
    return q[:k], q[k:]


def main():
    data = show(TIP, "data/qa_benchmark.json")[:N_PASSAGE]
    items = []
    for i, d in enumerate(data):
        passage, question = split(d["question"])
        assert d["answer"] in passage, (i, question)
        items.append({"i": i, "passage": passage, "question": question, "answer": d["answer"],
                      "prompt": "Question: " + d["question"] + "\nAnswer:"})
    pools = {}
    for commit, model in RUNS:
        path = f"results/{model}_qa.json"
        res = show(commit, path)
        for it in items:
            r = res[it["i"]]
            assert r["prompt"] == it["prompt"]
            if r["response"].startswith("Error"):
                continue
            pool = pools.setdefault(model, [])
            if any(p["i"] == it["i"] and p["output"] == r["response"] for p in pool):
                continue  # the second run gave the very same text: kept once
            pool.append({"i": it["i"], "commit": commit, "path": path, "output": r["response"], "score": r["score"]})
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        for j in sorted(rng.sample(range(len(pool)), min(QUOTA[model], len(pool)))):
            drawn.append((model, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (model, c) in enumerate(drawn, 1):
            it = items[c["i"]]
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxRead",
                   "record": {"id": "data/qa_benchmark.json#%d" % it["i"], "query": it["prompt"],
                              "text": it["passage"], "answer": it["answer"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": c["commit"], "path": c["path"], "item": str(it["i"]),
                              "model": model, "model_kind": "api", "shots": "zero-shot", "lang": "en",
                              "benchmark": "SQuAD (passage+question prompt)"},
                   "hint": "repo keyword score (gold substring in response): %s" % c["score"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: len(p) for m, p in pools.items()}, len(drawn))


if __name__ == "__main__":
    main()
