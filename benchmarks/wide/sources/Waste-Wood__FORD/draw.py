#!/usr/bin/env python3
"""Draw single-model outputs committed in Waste-Wood/FORD (output/<model>/<task>.jsonl) into drawn.jsonl.
stdlib only. The debate folders (several models answering in turns) are left out."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/Waste-Wood+FORD/repo"
COMMIT = "14988c95791d2009cd84c32a4bfdea8b1e944799"
REPO = "Waste-Wood/FORD"
PREFIX = "Waste-Wood__FORD"
SEED = 20261206
PER_MODEL = 20
# folder -> (model name, kind, shots, prompt style)
MODELS = {
    "LLaMA/13B": ("LLaMA-13B", "base", "few-shot", "fewshot"),
    "LLaMA/30B": ("LLaMA-30B", "base", "few-shot", "fewshot"),
    "vicuna": ("Vicuna-13B", "chat", "few-shot", "fewshot"),
    "davinci": ("text-davinci-003", "api", "few-shot", "fewshot"),
    "chatgpt": ("gpt-3.5-turbo", "api", "zero-shot", "chat"),
    "chatgpt0301": ("gpt-3.5-turbo-0301", "api", "zero-shot", "chat"),
    "gpt4": ("gpt-4", "api", "zero-shot", "chat"),
}
# strategyqa (yes/no) is drawn in a second stage, appended after the first (so that the first stage's ids stay
# as graded), only for the few-shot models whose prompt the scripts give ("Q: {q}\nA:" after the demonstrations,
# no options shown); the chat models' and LLaMA-30B's strategyqa prompts are not recoverable from the repository
SQA_MODELS = ["LLaMA/13B", "vicuna", "davinci"]
SQA_PER_MODEL = 5
TASKS = ["anli", "copa", "csqa", "ecare", "piqa", "socialiqa"]
HERE = os.path.dirname(os.path.abspath(__file__))
OPT = re.compile(r"\(([A-J])\) ")

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def options(o):
    parts = OPT.split(o)
    if parts[0].strip():
        return None
    letters, texts = parts[1::2], [t.strip() for t in parts[2::2]]
    if letters != [chr(65 + i) for i in range(len(letters))] or not (2 <= len(letters) <= 10):
        return None
    return texts

def text_of(r):
    if isinstance(r, list):
        r = r[0] if r else ""
    if isinstance(r, dict):
        if "text" in r:
            return r["text"]
        return r.get("message", {}).get("content")
    return r

def query(style, q, o):
    if style == "fewshot":
        return "Q: {} Answer Choices: {}\nA:".format(q, o)
    return ("Question: {} Choices: {}\nPlease answer the above question by choosing a more plausible answer."
            "You can choose only one answer from choices and give a short explanation. Please use the format "
            "like 'Answer: (A|B).\nExplanation: _'").format(q, o)

def main():
    rng = random.Random(SEED)
    drawn = []
    for folder, (model, kind, shots, style) in MODELS.items():
        pools = {}
        for task in TASKS:
            path = "output/%s/%s.jsonl" % (folder, task)
            try:
                raw = git("show", "%s:%s" % (COMMIT, path)).decode("utf-8")
            except subprocess.CalledProcessError:
                continue
            pool = []
            for k, line in enumerate(raw.splitlines()):
                if not line.strip():
                    continue
                d = json.loads(line)
                o = d.get("O")
                if not isinstance(o, str):
                    continue
                ch = options(o)
                m = re.fullmatch(r"\(([A-J])\)", str(d.get("A", "")).strip())
                out = text_of(d.get("R"))
                if ch is None or not m or not isinstance(out, str):
                    continue
                gold = ord(m.group(1)) - 65
                if gold >= len(ch):
                    continue
                pool.append({"path": path, "item": "%s:%d" % (task, k), "task": task, "query": query(style, d["Q"], o),
                             "choices": ch, "gold": gold, "output": out})
            if pool:
                pools[task] = pool
        per = -(-PER_MODEL // len(pools))
        picked = []
        for task in sorted(pools):
            pool = pools[task]
            picked += [pool[j] for j in rng.sample(range(len(pool)), min(per, len(pool)))]
        picked = rng.sample(picked, min(PER_MODEL, len(picked)))
        drawn += [(model, kind, shots, c) for c in picked]
        print(model, {t: len(p) for t, p in pools.items()})
    rng.shuffle(drawn)
    rng2 = random.Random(SEED + 1)
    extra = []
    for folder in SQA_MODELS:
        model, kind, shots, style = MODELS[folder]
        path = "output/%s/strategyqa.jsonl" % folder
        pool = []
        for k, line in enumerate(git("show", "%s:%s" % (COMMIT, path)).decode("utf-8").splitlines()):
            if not line.strip():
                continue
            d = json.loads(line)
            out = text_of(d.get("R"))
            if d.get("A") not in ("yes", "no") or not isinstance(out, str):
                continue
            pool.append({"path": path, "item": "strategyqa:%d" % k, "task": "strategyqa",
                         "query": "Q: {}\nA:".format(d["Q"]), "choices": ["yes", "no"],
                         "gold": 0 if d["A"] == "yes" else 1, "output": out})
        extra += [(model, kind, shots, pool[j]) for j in rng2.sample(range(len(pool)), SQA_PER_MODEL)]
    rng2.shuffle(extra)
    drawn += extra
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (model, kind, shots, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "choices": c["choices"],
                              "gold": c["gold"], "answer": c["choices"][c["gold"]]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": kind, "shots": shots, "lang": "en"}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(len(drawn))

if __name__ == "__main__":
    main()
