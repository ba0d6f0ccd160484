#!/usr/bin/env python3
"""Draw TUMLU (TUMLU-mini, Turkish) model outputs committed in ceferisbarov/TUMLU into drawn.jsonl.

stdlib only. Every Turkish output file (data/turkish/outputs/<method>/<model>/<Subject>.json) whose blob
is in the snapshot is read; a run is one (method, model) pair (13 cot_instruct runs, 15 no_cot_instruct
runs). From each run 5 records are drawn with a fixed seed (random subject, random record), then 10 more
from runs drawn at random; records whose output is the harness's "[INVALID]" placeholder (an API error,
not a generation) are skipped. Each record becomes a TaxSCQ case: query = the record's `input` (the
question, the shuffled options A-D and the answer/solution cue) with the 5 few-shot demonstrations
(`system`) left out; gold = the record's `answer` letter."""
import json, os, random, subprocess

GIT = "/work/.mirror/ceferisbarov+TUMLU/repo"
COMMIT = "24299df1b71e4b3ccdd2ad131c9b809c0e5ac1e8"
REPO = "ceferisbarov/TUMLU"
PREFIX = "ceferisbarov__TUMLU"
SEED = 20261212
PER_RUN = 5
EXTRA = 10
HERE = os.path.dirname(os.path.abspath(__file__))
API = ("gpt-4o", "claude", "gemini", "deepseek")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def main():
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "data/turkish/outputs/").decode().split("\n")
             if f.endswith(".json")]
    runs = {}
    for f in sorted(files):
        try:
            data = json.loads(git("show", "%s:%s" % (COMMIT, f)))
        except subprocess.CalledProcessError:
            continue  # blob absent from the snapshot: left out
        parts = f.split("/")
        method, model, subject = parts[3], "/".join(parts[4:-1]), parts[-1][:-5]
        runs.setdefault((method, model), {})[subject] = (f, data)
    rng = random.Random(SEED)
    keys = sorted(runs)
    order = [k for k in keys for _ in range(PER_RUN)] + [rng.choice(keys) for _ in range(EXTRA)]
    seen, cases = set(), []
    for key in order:
        subs = runs[key]
        while True:
            subject = rng.choice(sorted(subs))
            path, data = subs[subject]
            i = rng.randrange(len(data))
            r = data[i]
            if (key, subject, i) in seen or r["output"] == "[INVALID]":
                continue
            seen.add((key, subject, i))
            break
        method, model = key
        choices = list(r["choices"])
        gold = ord(r["answer"].strip()) - 65
        kind = "api" if any(model.lower().startswith(p) for p in API) else "chat"
        cases.append({
            "task": "TaxSCQ",
            "record": {"id": "%s#%d" % (path, i), "query": r["input"], "choices": choices,
                       "gold": gold, "answer": choices[gold]},
            "output": r["output"],
            "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "%s:%d" % (subject, i),
                       "model": model, "model_kind": kind,
                       "shots": "cot" if method == "cot_instruct" else "few-shot", "lang": "other"},
        })
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf8") as f:
        for n, c in enumerate(cases, 1):
            c = {"id": "%s-%04d" % (PREFIX, n), **c}
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(cases), "cases from", len(keys), "runs")


if __name__ == "__main__":
    main()
