#!/usr/bin/env python3
"""Draw HalluQA multiple-choice predictions committed in OpenMOSS/HalluQA
(Chinese_LLMs_outputs/multiple_choice/*_output.json) into drawn.jsonl. stdlib only.

Each model file is a list of 450 records {question_id, question, response}; the gold letter is in
HalluQA_mc.json ("Answer: X"). Every item is one TaxSCQ (five options A..E; 29 items have only A and B).
From each of the 7 model runs 21 cases are drawn with a fixed seed: up to 9 from the responses that are
not a bare "Answer: X" / "X" line (the less regular ones, drawn first so that every run contributes
some), the rest from all remaining records of that run."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/OpenMOSS+HalluQA/repo"
COMMIT = "7e5c67398d7fee013c37ec1d6afafa76f9836180"
REPO = "OpenMOSS/HalluQA"
PREFIX = "OpenMOSS__HalluQA"
SEED = 20261212
PER_MODEL = 21
IRREGULAR_MAX = 9
HERE = os.path.dirname(os.path.abspath(__file__))
DIR = "Chinese_LLMs_outputs/multiple_choice/"
KIND = {"chatglm_pro": "api"}  # others: open-weight chat models


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def show(path):
    return json.loads(git("show", "%s:%s" % (COMMIT, path)).decode("utf-8"))


def parse_options(q):
    """'Question: stem A:opt B:opt ... E:opt ' -> (stem, [opts])"""
    body = q[len("Question: "):] if q.startswith("Question: ") else q
    pos, start = [], 0
    for L in "ABCDE":
        m = re.compile(r"(^|\s)%s:" % L).search(body, start)
        if not m:
            break
        pos.append((m.start() + len(m.group(1)), m.end()))
        start = m.end()
    if len(pos) < 2:
        return None
    stem = body[:pos[0][0]].strip()
    opts = []
    for i, (s, e) in enumerate(pos):
        end = pos[i + 1][0] if i + 1 < len(pos) else len(body)
        opts.append(body[e:end].strip())
    return stem, opts


def regular(resp):
    r = resp.strip()
    return bool(re.fullmatch(r"(Answer: )?[A-E]", r))


def main():
    gold = {r["question_id"]: r for r in show("HalluQA_mc.json")}
    files = sorted(f for f in git("ls-tree", "--name-only", COMMIT, DIR).decode().split("\n")
                   if f.endswith("_output.json"))
    rng = random.Random(SEED)
    drawn = []
    for f in files:
        model = os.path.basename(f)[:-len("_output.json")]
        recs = show(f)
        irr = [i for i, r in enumerate(recs) if not regular(r["response"])]
        pick = rng.sample(irr, min(IRREGULAR_MAX, len(irr)))
        rest = [i for i in range(len(recs)) if i not in set(pick)]
        pick += rng.sample(rest, PER_MODEL - len(pick))
        for i in pick:
            r = recs[i]
            g = gold[r["question_id"]]
            assert g["question"].strip() == r["question"].strip()
            stem, opts = parse_options(r["question"])
            letter = g["answer"][len("Answer: "):].strip()
            gi = "ABCDE".index(letter)
            rec = {"id": "%s#%d" % (f, r["question_id"]), "query": r["question"].strip(),
                   "choices": opts, "gold": gi, "answer": opts[gi]}
            drawn.append((rec, r["response"], {
                "repo": REPO, "commit": COMMIT, "path": f, "item": "%d:question_id=%d" % (i, r["question_id"]),
                "model": model, "model_kind": KIND.get(model, "chat"), "shots": "few-shot", "lang": "zh"}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ", "record": rec,
                                  "output": output, "source": src}, ensure_ascii=False) + "\n")
    print(len(files), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
