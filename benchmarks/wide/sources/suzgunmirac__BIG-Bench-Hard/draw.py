#!/usr/bin/env python3
"""Draw code-davinci-002 BBH outputs (suzgunmirac/BIG-Bench-Hard, code-davinci-002-outputs) into drawn.jsonl.
Multiple-choice subtasks only (options (A).. with at most 10 options). stdlib only."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/suzgunmirac+BIG-Bench-Hard/repo"
COMMIT = "9ee07bd481feebf959a6b59d61ea57bdcf30964d"
REPO = "suzgunmirac/BIG-Bench-Hard"
PREFIX = "suzgunmirac__BIG-Bench-Hard"
SEED = 20261206
PER_SETTING = {"code-davinci-002-cot": 15, "code-davinci-002-direct": 10}
SHOTS = {"code-davinci-002-cot": "cot", "code-davinci-002-direct": "few-shot"}
TASKS = ["date_understanding", "disambiguation_qa", "geometric_shapes", "hyperbaton",
         "logical_deduction_five_objects", "logical_deduction_seven_objects", "logical_deduction_three_objects",
         "movie_recommendation", "penguins_in_a_table", "ruin_names", "salient_translation_error_detection",
         "snarks", "temporal_sequences", "tracking_shuffled_objects_five_objects",
         "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects"]
HERE = os.path.dirname(os.path.abspath(__file__))

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def main():
    pools = {}
    for setting in PER_SETTING:
        for task in TASKS:
            path = f"code-davinci-002-outputs/{setting}/{task}_few_shot_template_0-255000.json"
            d = json.loads(git("show", f"{COMMIT}:{path}"))
            for k, o in enumerate(d["outputs"]):
                inp = o["input"]
                head = inp.split("\n\n", 1)[0]
                last = inp[inp.rindex("\n\nQ: ") + 2:]
                m = re.search(r"\nOptions:\n((?:\([A-Z]\) .*\n?)+)", last)
                if not m:
                    continue
                opts = re.findall(r"^\(([A-Z])\) (.*)$", m.group(1), re.M)
                letters = [l for l, _ in opts]
                if letters != [chr(65 + i) for i in range(len(opts))] or not (2 <= len(opts) <= 10):
                    continue
                t = re.fullmatch(r"\(([A-J])\)", o["target"].strip())
                if not t or ord(t.group(1)) - 65 >= len(opts):
                    continue
                pools.setdefault(setting, []).append({
                    "path": path, "item": str(k), "query": head + "\n\n" + last,
                    "choices": [x for _, x in opts], "gold": ord(t.group(1)) - 65, "output": o["prediction"]})
    rng = random.Random(SEED)
    drawn = []
    for setting in sorted(pools):
        pool = pools[setting]
        for j in rng.sample(range(len(pool)), PER_SETTING[setting]):
            drawn.append((setting, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (setting, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "choices": c["choices"],
                              "gold": c["gold"], "answer": c["choices"][c["gold"]]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"],
                              "model": "code-davinci-002", "model_kind": "base", "shots": SHOTS[setting], "lang": "en"}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({s: len(p) for s, p in pools.items()}, len(drawn))

if __name__ == "__main__":
    main()
