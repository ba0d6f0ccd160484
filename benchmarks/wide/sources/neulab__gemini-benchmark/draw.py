#!/usr/bin/env python3
"""Draw SVAMP and MAWPS (MultiArith) chain-of-thought outputs committed in neulab/gemini-benchmark
("An In-depth Look at Gemini's Language Abilities") into drawn.jsonl.

stdlib only. Every outputs/{svamp,mawpsmultiarith}/{model}/output.jsonl is one model run (4 models x 2
datasets); from each run 19 records are drawn with a fixed seed (152 cases). The GSM8K and ASDiv output
files are absent from the snapshot (blobs over 4 MiB) and are left out."""
import json, os, random, subprocess

GIT = "/work/.mirror/neulab+gemini-benchmark/repo"
COMMIT = "45d7e65a15ed1691d74fe1d068c8ccab97d25a6e"
REPO = "neulab/gemini-benchmark"
PREFIX = "neulab__gemini-benchmark"
SEED = 20261210
PER_RUN = 19
HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = ["svamp", "mawpsmultiarith"]
MODELS = {  # directory name -> (model name, model_kind)
    "gemini-pro": ("gemini-pro", "api"),
    "gpt-3.5-turbo": ("gpt-3.5-turbo", "api"),
    "gpt-4-1106-preview": ("gpt-4-1106-preview", "api"),
    "mixtral": ("Mixtral-8x7B-Instruct-v0.1", "chat"),
}
SYSTEM = "Follow the given examples and answer the question."


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def num(x):
    x = float(x)
    return int(x) if x == int(x) else x


def main():
    rng = random.Random(SEED)
    drawn = []
    for ds in DATASETS:
        for mdir in sorted(MODELS):
            path = "outputs/%s/%s/output.jsonl" % (ds, mdir)
            rows = [json.loads(l) for l in git("show", "%s:%s" % (COMMIT, path)).decode().splitlines() if l.strip()]
            pool = [(i, r) for i, r in enumerate(rows) if isinstance(r.get("generated_text"), str)]
            model, kind = MODELS[mdir]
            for i, r in rng.sample(pool, PER_RUN):
                # the model saw 8 worked "Q: ... A: ... The answer is N." demonstrations (left out here),
                # then the question in the same template
                query = SYSTEM + "\n\nQ: " + r["question"].strip() + "\nA:"
                rec = {"id": "%s#qid%s" % (path, r["qid"]), "query": query, "answer": num(r["answer"])}
                hint = "source predict=%s is_correct=%s" % (r.get("predict"), r.get("is_correct"))
                drawn.append(("TaxCalc", rec, r["generated_text"], {
                    "repo": REPO, "commit": COMMIT, "path": path, "item": "line %d, qid %s" % (i, r["qid"]),
                    "model": model, "model_kind": kind, "shots": "few-shot", "lang": "en",
                    "dataset": ds}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
