#!/usr/bin/env python3
"""Draw GSM8K test-set model solutions committed in openai/grade-school-math
(grade_school_math/data/example_model_solutions.jsonl) into drawn.jsonl.

stdlib only. The file holds, for each of the 1319 GSM8K test problems, one solution from each of four
systems (GPT-3 6B and 175B, each fine-tuned on GSM8K, used alone ("finetuning") or as the generator whose
100 samples a trained verifier ranked ("verification")). 150 distinct problems are drawn with a fixed seed
and dealt to the four systems in turn (38, 38, 37, 37), so no problem appears twice."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/openai+grade-school-math/repo"
COMMIT = "3101c7d5072418e28b9008a6636bde82a006892c"
REPO = "openai/grade-school-math"
PATH = "grade_school_math/data/example_model_solutions.jsonl"
PREFIX = "openai__grade-school-math"
SEED = 20261210
N = 150
SYSTEMS = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
HERE = os.path.dirname(os.path.abspath(__file__))


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def gold(truth):
    m = re.search(r"A: *(-?[\d,]*\.?\d+)\s*$", truth)
    x = float(m.group(1).replace(",", ""))
    return int(x) if x == int(x) else x


def main():
    commit = git("rev-parse", COMMIT).decode().strip()
    rows = [json.loads(l) for l in git("show", "%s:%s" % (commit, PATH)).decode().splitlines() if l.strip()]
    rng = random.Random(SEED)
    picks = rng.sample(range(len(rows)), N)
    out = []
    for n, i in enumerate(picks):
        r, system = rows[i], SYSTEMS[n % len(SYSTEMS)]
        sol = r[system]
        out.append({
            "task": "TaxCalc",
            "record": {"id": "%s#%d" % (PATH, i), "query": r["question"], "answer": gold(r["ground_truth"])},
            "output": sol["solution"],
            "source": {"repo": REPO, "commit": commit, "path": PATH, "item": "%d:%s" % (i, system),
                       "model": "gpt3-" + system, "model_kind": "domain", "shots": "zero-shot", "lang": "en"},
            "hint": "is_correct=%s" % sol["is_correct"],
        })
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for k, c in enumerate(out, 1):
            f.write(json.dumps(dict({"id": "%s-%04d" % (PREFIX, k)}, **c), ensure_ascii=False) + "\n")
    print(len(rows), "problems;", len(out), "cases")


if __name__ == "__main__":
    main()
