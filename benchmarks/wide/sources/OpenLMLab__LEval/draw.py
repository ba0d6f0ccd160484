#!/usr/bin/env python3
"""Draw L-Eval model predictions (OpenLMLab/LEval) for hand grading.

Reads the fetched snapshot with `git show COMMIT:PATH` (stdlib only), joins each
prediction to its document/question/gold in LEval-data, draws a fixed-seed random
sample per (model, task) and writes drawn.jsonl next to this script.
"""
import json, os, random, subprocess, sys

GIT = os.environ.get("LEVAL_GIT", "/work/.mirror/OpenLMLab+LEval/repo")
REPO = "OpenLMLab/LEval"
HEAD = "cd34b050269148aed75acbbe4a599873ad0f37e9"
OLD = "679aabd30a50aa77ab1af3e1ba6a7405d2dd2553"   # last version holding the xgen-7b-8k-inst files
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))

DATA = {
    "coursera": "LEval-data/Closed-ended-tasks/coursera.jsonl",
    "topic_retrieval_longchat": "LEval-data/Closed-ended-tasks/topic_retrieval_longchat.jsonl",
    "natural_question": "LEval-data/Open-ended-tasks/natural_question.jsonl",
}
# (task, commit, path, model label, model_kind, n)
PLAN = [
    ("coursera", HEAD, "Predictions/exam_eval/Claude-100k/coursera.pred.jsonl", "claude-instant-100k", "api", 20),
    ("coursera", HEAD, "Predictions/exam_eval/gpt4-32k/coursera.pred.jsonl", "gpt-4-32k", "api", 20),
    ("coursera", HEAD, "Predictions/exam_eval/turbo-16k-0613/coursera.pred.jsonl", "gpt-3.5-turbo-16k-0613", "api", 18),
    ("coursera", OLD, "Predictions/exam_eval/xgen-7b-8k-inst/coursera.pred.jsonl", "xgen-7b-8k-inst", "chat", 15),
    ("topic_retrieval_longchat", HEAD, "Predictions/exam_eval/Claude-100k/topic_retrieval_longchat.pred.jsonl", "claude-instant-100k", "api", 10),
    ("topic_retrieval_longchat", HEAD, "Predictions/exam_eval/gpt4-32k/topic_retrieval_longchat.pred.jsonl", "gpt-4-32k", "api", 10),
    ("topic_retrieval_longchat", OLD, "Predictions/exam_eval/xgen-7b-8k-inst/topic_retrieval_longchat.pred.jsonl", "xgen-7b-8k-inst", "chat", 8),
    ("natural_question", HEAD, "Predictions/ngram_eval/turbo-16k-0613/natural_question.pred.jsonl", "gpt-3.5-turbo-16k-0613", "api", 10),
    ("natural_question", OLD, "Predictions/ngram_eval/xgen-7b-8k-inst/natural_question.pred.jsonl", "xgen-7b-8k-inst", "chat", 8),
    ("natural_question", HEAD, "Predictions/ngram_eval/llama2-13b-chat-4k/natural_question.pred.jsonl", "llama-2-13b-chat", "chat", 20),
    ("natural_question", HEAD, "Predictions/ngram_eval/vicuna-13b-16k/natural_question.pred.jsonl", "vicuna-13b-16k", "chat", 20),
]
DOC_MARK = "[the document given in `text`]"


def show(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")


def jl(s):
    return [json.loads(l) for l in s.splitlines() if l.strip()]


def fill(prompt, doc, inst):
    if "<long input>" in prompt and "{}" not in prompt:   # the question is already in the prompt
        assert inst.strip() in prompt, prompt
        return prompt.replace("<long input>", doc)
    if "{document}" in prompt or "{inst}" in prompt:
        return prompt.replace("{document}", doc).replace("{inst}", inst)
    assert prompt.count("{}") == 2, prompt
    a, b, c = prompt.split("{}")
    return a + doc + b + inst + c


def main():
    rng = random.Random(SEED)
    data, flat = {}, {}
    for task, path in DATA.items():
        idx, seq = {}, []
        for di, d in enumerate(jl(show(HEAD, path))):
            for ii, (inst, out) in enumerate(zip(d["instructions"], d["outputs"])):
                idx.setdefault(inst.strip(), []).append((di, ii, d["input"], out))
                seq.append((inst.strip(), (di, ii, d["input"], out)))
        data[task], flat[task] = idx, seq
    cases = []
    for task, commit, path, model, kind, n in PLAN:
        preds = jl(show(commit, path))
        # the prediction files follow the data file's order (document by document); align by
        # position when the whole sequence of questions matches, else look the question up
        seq = flat[task]
        aligned = len(seq) == len(preds) and all(q == p["query"].strip() for (q, _), p in zip(seq, preds))
        usable = []
        for li, p in enumerate(preds):
            key = [k for k in p if k.endswith("_pred")][0]
            hits = [seq[li][1]] if aligned else data[task].get(p["query"].strip(), [])
            if len(hits) != 1:
                continue          # question not found once in LEval-data: skip
            di, ii, doc, out = hits[0]
            if out.strip() != p["gt"].strip():
                continue          # gold in the prediction file disagrees with the data file: skip
            if task == "coursera":
                gold = p["gt"].strip()
                if not gold or any(ch not in "ABCDE" for ch in gold):
                    continue
            usable.append((li, p, key, di, ii, doc))
        for li, p, key, di, ii, doc in sorted(rng.sample(usable, n), key=lambda t: t[0]):
            src = {"repo": REPO, "commit": commit, "path": path, "item": f"line {li} (LEval-data doc {di}, instruction {ii})",
                   "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en"}
            if task == "coursera":
                rec = {"id": f"coursera-{di}-{ii}", "query": fill(p["prompt"], doc, p["query"]),
                       "answer": "".join(sorted(set(p["gt"].strip())))}
                t = "TaxMCQ"
            else:
                rec = {"id": f"{task}-{di}-{ii}", "query": fill(p["prompt"], DOC_MARK, p["query"]),
                       "text": doc, "answer": p["gt"].strip()}
                t = "TaxRead"
            cases.append({"task": t, "record": rec, "output": p[key], "source": src})
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            c = {"id": f"OpenLMLab__LEval-{i:04d}", **c}
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
