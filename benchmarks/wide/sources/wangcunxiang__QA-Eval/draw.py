#!/usr/bin/env python3
"""Draw EVOUNA (wangcunxiang/QA-Eval, "Evaluating Open-QA Evaluation") model answers into drawn.jsonl.

stdlib only. EVOUNA holds, for the NQ-open test set (3,610 questions) and a 2,000-question TriviaQA sample,
the answers of five systems (DPR+FiD, GPT-3.5, ChatGPT-3.5, GPT-4, New Bing) with a human correctness
judgment of each. Per model, 15 NQ and 15 TQ items are drawn with a fixed seed among the proper items
(improper false) whose gold is given and whose answer from that model is text; every case is a TaxRead
case (short-span open-domain QA, no passage)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/wangcunxiang+QA-Eval/repo"
REPO = "wangcunxiang/QA-Eval"
PREFIX = "wangcunxiang__QA-Eval"
SEED = 20261215
COMMIT = "5e82f3cb5b7e9a583803e4fc6fe4b5c794f74024"  # 2023-09-05 "Update Data"; EVOUNA/ unchanged up to HEAD 90007d3
FILES = {"NQ": "EVOUNA/NQ.json", "TQ": "EVOUNA/TQ.json"}
PER = 15  # per model per dataset
HERE = os.path.dirname(os.path.abspath(__file__))

# key -> (model name, model_kind)
MODELS = {
    "fid": ("DPR+FiD (retriever + fine-tuned reader)", "domain"),
    "gpt35": ("GPT-3.5", "api"),
    "chatgpt": ("ChatGPT-3.5", "api"),
    "gpt4": ("GPT-4 (ChatGPT-4)", "api"),
    "newbing": ("New Bing (Bing Chat)", "api"),
}


def load(path):
    out = subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                         check=True, capture_output=True).stdout
    return json.loads(out.decode("utf-8"))


def gold_of(aliases, answers):
    """The alias used as record.answer: for one alias, that alias; otherwise the alias met (case-insensitively,
    as a substring) in most of the five systems' answers to the question, ties to the earliest alias; the first
    alias when none is met. An alias is met where it stands as whole words (regex word boundaries). All aliases
    are kept in source.gold_aliases."""
    if len(aliases) == 1:
        return aliases[0]
    low = [a.lower() for a in answers if isinstance(a, str)]
    best, best_n = aliases[0], 0
    for al in aliases:
        pat = re.compile(r"(?<!\w)" + re.escape(al.lower()) + r"(?!\w)")
        n = sum(1 for a in low if pat.search(a)) if al.strip() else 0
        if n > best_n:
            best, best_n = al, n
    return best


def main():
    rng = random.Random(SEED)
    data = {ds: load(p) for ds, p in FILES.items()}
    drawn = []
    for key in sorted(MODELS):
        name, kind = MODELS[key]
        for ds in ("NQ", "TQ"):
            rows = data[ds]
            pool = [i for i, r in enumerate(rows)
                    if r.get("improper") is False and isinstance(r.get("golden_answer"), str)
                    and r["golden_answer"].strip() and isinstance(r.get("answer_" + key), str)]
            for i in rng.sample(pool, PER):
                r = rows[i]
                aliases = [a.strip() for a in r["golden_answer"].split("/") if a.strip()]
                answers = [r.get("answer_" + k) for k in MODELS]
                rec = {"id": "%s:%d" % (FILES[ds], i), "query": r["question"], "text": "",
                       "answer": gold_of(aliases, answers)}
                j = r.get("judge_" + key)
                hint = "human judgment (EVOUNA judge_%s): %s" % (key, {True: "correct", False: "incorrect"}.get(j, "none"))
                drawn.append(("TaxRead", rec, r["answer_" + key], {
                    "repo": REPO, "commit": COMMIT, "path": FILES[ds], "item": "index %d" % i,
                    "model": name, "model_kind": kind, "shots": "zero-shot", "lang": "en",
                    "dataset": {"NQ": "Natural Questions-open test", "TQ": "TriviaQA"}[ds],
                    "gold_aliases": aliases}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
