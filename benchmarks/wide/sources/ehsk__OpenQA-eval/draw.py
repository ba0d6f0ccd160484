#!/usr/bin/env python3
"""Draw NQ-open answers of 12 open-domain QA models committed in ehsk/OpenQA-eval into drawn.jsonl.

stdlib only. The repository (Kamalloo et al., ACL 2023, "Evaluating Open-Domain Question Answering in the Era of
Large Language Models") holds the predictions of 12 models on Natural Questions-open (data/model_outputs/) and the
human judgment of every distinct answer on a 301-question sample (data/NQ301_human.tsv). Cases are drawn only from
those 301 questions; the human judgment of the answer is kept as `hint`. A prediction stored as a JSON list (the
authors split a multi-answer completion into parts: not the verbatim text) is left out. Task TaxRead (closed-book
for InstructGPT; the readers' retrieved passages are not in the repository), `text` empty."""
import json, os, random, subprocess
from collections import defaultdict

GIT = "/work/.mirror/ehsk+OpenQA-eval/repo"
REPO = "ehsk/OpenQA-eval"
PREFIX = "ehsk__OpenQA-eval"
SEED = 20261213
COMMIT = "8b9317d0f0c92b52e1c71c0168dff74b5f76a5f4"  # HEAD, "Fixed #1", 2024-01-11
HERE = os.path.dirname(os.path.abspath(__file__))
TOTAL = 150

# file -> (model name, model_kind, shots)
RUNS = {
    "NQ301_text-davinci-003_zeroshot.jsonl": ("text-davinci-003 (InstructGPT, zero-shot)", "api", "zero-shot"),
    "NQ301_text-davinci-003_fewshot-n64.jsonl": ("text-davinci-003 (InstructGPT, 64-shot)", "api", "few-shot"),
    "NQ_ANCE-plus_FiD.jsonl": ("ANCE+ & FiD", "domain", "zero-shot"),
    "NQ_Contriever_FiD.jsonl": ("Contriever & FiD", "domain", "zero-shot"),
    "NQ_DPR.jsonl": ("DPR (retriever + extractive reader)", "domain", "zero-shot"),
    "NQ_EMDR2.jsonl": ("EMDR2", "domain", "zero-shot"),
    "NQ_EviGen.jsonl": ("EviGen", "domain", "zero-shot"),
    "NQ_FiD-KD.jsonl": ("FiD-KD", "domain", "zero-shot"),
    "NQ_FiD.jsonl": ("FiD", "domain", "zero-shot"),
    "NQ_GAR-plus_FiD.jsonl": ("GAR+ & FiD", "domain", "zero-shot"),
    "NQ_R2D2.jsonl": ("R2D2", "domain", "zero-shot"),
    "NQ_Rocketv2_FiD.jsonl": ("RocketQAv2 & FiD", "domain", "zero-shot"),
}


def git(*args):
    return subprocess.run(["git", "--git-dir", GIT] + list(args), check=True, capture_output=True).stdout.decode("utf-8")


def show(commit, path):
    return git("show", "%s:%s" % (commit, path))


def main():
    commit = git("rev-parse", COMMIT).strip()
    # human judgments: question -> {answer: (acceptable, [annotators])}, and question -> id
    human, qid = defaultdict(dict), {}
    lines = show(commit, "data/NQ301_human.tsv").splitlines()
    assert lines[0].split("\t")[:4] == ["id", "Question", "Model answer", "Acceptable?"]
    for line in lines[1:]:
        f = line.split("\t")
        i, q, a, acc = f[0], f[1], f[2], f[3]
        ann = [x for x in f[4:7] if x]
        human[q][a] = (acc, ann)
        qid.setdefault(q, i)
    assert len(qid) == 301, len(qid)
    pools = {}
    for fn in sorted(RUNS):
        path = "data/model_outputs/" + fn
        pool = []
        for n, line in enumerate(show(commit, path).splitlines()):
            if not line.strip():
                continue
            d = json.loads(line)
            if d["question"] not in qid or not isinstance(d["prediction"], str):
                continue
            pool.append((n, d))
        pools[fn] = (path, pool)
    rng = random.Random(SEED)
    files = sorted(RUNS)
    per = {fn: TOTAL // len(files) for fn in files}
    for fn in rng.sample(files, TOTAL - sum(per.values())):
        per[fn] += 1
    drawn = []
    for fn in files:
        path, pool = pools[fn]
        model, kind, shots = RUNS[fn]
        for n, d in rng.sample(pool, per[fn]):
            q, pred = d["question"], d["prediction"]
            golds = list(d["answer"])
            rec = {"id": "NQ301:%s" % qid[q], "query": q, "text": "", "answer": golds[0]}
            src = {"repo": REPO, "commit": commit, "path": path, "item": "line %d:NQ301 id %s" % (n + 1, qid[q]),
                   "model": model, "model_kind": kind, "shots": shots, "lang": "en", "gold_aliases": golds}
            h = human[q].get(pred.strip()) or human[q].get(pred)
            hint = None
            if h is None:
                low = {k.lower(): v for k, v in human[q].items()}
                h = low.get(pred.strip().lower())
            if h is not None:
                hint = "human judgment (data/NQ301_human.tsv): Acceptable? %s (annotators: %s)" % (h[0], ", ".join(h[1]) or "-")
            drawn.append((rec, pred, src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for k, (rec, pred, src, hint) in enumerate(drawn, 1):
            case = {"id": "%s-%04d" % (PREFIX, k), "task": "TaxRead", "record": rec, "output": pred, "source": src}
            if hint:
                case["hint"] = hint
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(drawn), "cases;", {RUNS[f][0]: (per[f], len(pools[f][1])) for f in files})
    print("no hint:", sum(1 for x in drawn if not x[3]))


if __name__ == "__main__":
    main()
