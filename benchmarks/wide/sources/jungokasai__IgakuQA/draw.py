#!/usr/bin/env python3
"""Draw IgakuQA baseline outputs (GPT-3, ChatGPT, GPT-4, ChatGPT on the English translation) committed in
jungokasai/IgakuQA (baseline_results/) into drawn.jsonl. stdlib only."""
import json, os, random, re, string, subprocess

GIT = "/work/.mirror/jungokasai+IgakuQA/repo"
COMMIT = "2bc4c3d159cf5505f6253d24a909fbd53237e239"
REPO = "jungokasai/IgakuQA"
PREFIX = "jungokasai__IgakuQA"
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))
# model file suffix -> (model name, model_kind, lang)
MODELS = {"gpt3": ("text-davinci-003", "api", "ja"), "chatgpt": ("gpt-3.5-turbo", "api", "ja"),
          "gpt4": ("gpt-4", "api", "ja"), "translate_chatgpt-en": ("gpt-3.5-turbo (English translation)", "api", "en")}
PER_MODEL = {"calc": 3, "messy": 14, "multi": 13, "single": 6}   # 36 a model
# Numeric items: the gold is stored as the digits written into the answer boxes (①②...); the quantity it
# stands for follows from the box template in the question ("解答：①.②g/日" with "21" is 2.1 g/day). Checked by hand
# against the question's own computation.
CALC_GOLD = {"112C66": 26, "112F84": 1.2, "113A75": 146, "113F84": 7.2, "114C75": 10.0, "114D75": 97,
             "114F75": 1130, "115C75": 27, "115F75": 8.5, "116B50": 2.1, "116C75": 325, "116F74": 0.4}
SIMPLE = re.compile(r"[a-e](\s*,\s*[a-e])*")

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def load(path):
    return [json.loads(l) for l in git("show", "%s:%s" % (COMMIT, path)).decode().splitlines() if l.strip()]

def problem_ja(q):   # scripts/generation/chatgpt.py and gpt3.py, dict2problem
    p = "問題: " + q["problem_text"]
    if q["choices"]:
        for c, l in zip(q["choices"], string.ascii_lowercase):
            p += "\n" + l + ": " + c
        p += "\n必ずa,b,c,d,eの中からちょうど{}個選んでください。".format(len(q["answer"]))
        p += "\n答え:"
    return p

def problem_en(q, t):  # scripts/generation/chatgpt_en.py, dict2problem
    p = "Problem: " + t["problem_text_en"]
    if t["choices_en"]:
        for c, l in zip(t["choices_en"], string.ascii_lowercase):
            p += "\n" + l + ": " + c
        p += "\nChoose exactly {} correct choice(s) from a, b, c, d, e.".format(len(q["answer"]))
        p += "\nAnswer:"
    return p

def main():
    files = git("ls-tree", "-r", "--name-only", COMMIT).decode().split()
    qs, tr = {}, {}
    for p in files:
        if p.startswith("data/") and p.endswith(".jsonl") and "_" not in os.path.basename(p):
            for q in load(p):
                qs[q["problem_id"]] = q
        elif p.startswith("data/") and p.endswith("_translate.jsonl"):
            for t in load(p):
                tr[t["problem_id"]] = t
    pools = {}
    for p in sorted(files):
        if not p.startswith("baseline_results/"):
            continue
        suffix = os.path.basename(p)[:-6].split("_", 1)[1]
        if suffix not in MODELS:
            continue  # student-majority: the examinees' majority answer, not a model
        for k, r in enumerate(load(p)):
            q = qs[r["problem_id"]]
            out = r["explanation"]   # gpt3: the completion before lower-casing; chat models: the same as prediction
            if suffix == "translate_chatgpt-en":
                query = "Let's try Japan's medical license exam.\n\n" + problem_en(q, tr[r["problem_id"]])
                choices = tr[r["problem_id"]]["choices_en"]
            elif suffix == "gpt3":
                query = problem_ja(q)
                choices = q["choices"]
            else:
                query = "医師国家試験を解きます。\n\n" + problem_ja(q)
                choices = q["choices"]
            if not q["choices"]:
                kind, task = "calc", "TaxCalc"
                rec = {"query": query, "answer": CALC_GOLD[q["problem_id"]]}
            else:
                if any(len(a) != 1 or a not in string.ascii_lowercase for a in q["answer"]):
                    continue  # 112B30: gold "a or d" (either accepted), no single gold
                gold = [string.ascii_lowercase.index(a) for a in q["answer"]]
                if len(gold) == 1:
                    task = "TaxSCQ"
                    if not 2 <= len(choices) <= 10:
                        continue
                    rec = {"query": query, "choices": choices, "gold": gold[0], "answer": choices[gold[0]]}
                else:
                    task = "TaxMCQ"
                    if len(choices) > 5:
                        continue
                    rec = {"query": query, "answer": "".join(sorted(a.upper() for a in q["answer"]))}
                if not SIMPLE.fullmatch(out.strip()):
                    kind = "messy"
                else:
                    kind = "multi" if task == "TaxMCQ" else "single"
            rec = dict({"id": "%s#%s" % (p, r["problem_id"])}, **rec)
            pools.setdefault(suffix, {}).setdefault(kind, []).append(
                {"task": task, "record": rec, "output": out, "path": p, "item": r["problem_id"],
                 "text_only": q["text_only"]})
    rng = random.Random(SEED)
    drawn = []
    for suffix in sorted(pools):
        want = dict(PER_MODEL)
        messy = pools[suffix].get("messy", [])
        if len(messy) < want["messy"]:   # too few unusual outputs: the rest from one-letter-list outputs
            short = want["messy"] - len(messy)
            want["messy"] = len(messy)
            want["multi"] += short // 2
            want["single"] += short - short // 2
        for kind in ("calc", "messy", "multi", "single"):
            pool = pools[suffix].get(kind, [])
            for j in rng.sample(range(len(pool)), min(want[kind], len(pool))):
                drawn.append((suffix, kind, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (suffix, kind, c) in enumerate(drawn, 1):
            model, mkind, lang = MODELS[suffix]
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": c["task"], "record": c["record"], "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": mkind, "shots": "few-shot", "lang": lang}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({s: {k: len(v) for k, v in d.items()} for s, d in pools.items()}, len(drawn))

if __name__ == "__main__":
    main()
