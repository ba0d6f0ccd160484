#!/usr/bin/env python3
"""Draw KOR-Bench (Knowledge-Orthogonal Reasoning) model outputs committed in KOR-Bench/KOR-Bench into drawn.jsonl.

stdlib only. Reads the snapshot at one pinned commit. Two of the five KOR-Bench categories are used:
counterfactual (four-option questions under a fictional story rule -> TaxSCQ) and operation (custom
operations; items whose gold is one plain number -> TaxCalc). Every model of results/0923_main
(zero-shot for chat/API models, three-shot for base models) gets one TaxSCQ and one TaxCalc case; a
seeded random subset of models gets a third case, so that the total is 150."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/KOR-Bench+KOR-Bench/repo"
REPO = "KOR-Bench/KOR-Bench"
PREFIX = "KOR-Bench__KOR-Bench"
COMMIT = "bb8194dff8e51e2e2247cf62aa9932c3d57d53d7"
SEED = 20261215
TOTAL = 150
HERE = os.path.dirname(os.path.abspath(__file__))
API = {"gpt-4o", "gpt-4o-2024-08-06", "gpt-4-turbo", "claude-3-5-sonnet-20240620", "doubao-pro-128k",
       "gemini-1.5-pro", "yi-large"}


def git(path):
    r = subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)], capture_output=True)
    if r.returncode != 0:
        return None
    return r.stdout.decode("utf-8")


def ls(prefix):
    out = subprocess.run(["git", "--git-dir", GIT, "ls-tree", "--name-only", COMMIT, prefix + "/"],
                         check=True, capture_output=True).stdout.decode()
    return [l for l in out.splitlines() if l.endswith(".jsonl")]


def rows(path):
    t = git(path)
    if t is None:
        return None
    return [json.loads(l) for l in t.split("\n") if l.strip()]


OPT = re.compile(r"(?:^|##)\s*([A-J])\.\s*(.*?)\s*(?=##\s*[A-J]\.|$)", re.S)


def parse_scq(q):
    m = re.search(r"\nOptions:\s*(.*?)\nProvide your final answer", q, re.S)
    if not m:
        return None
    opts = OPT.findall(m.group(1).strip())
    letters = [l for l, _ in opts]
    if letters != [chr(65 + i) for i in range(len(letters))] or not 2 <= len(letters) <= 10:
        return None
    return [re.sub(r"\s+", " ", t).strip().rstrip(";").strip() for _, t in opts]


def gold_number(a):
    m = re.fullmatch(r"\[\[\s*(-?\d+(?:\.\d+)?)\s*\]\]", a.strip())
    if not m:
        return None
    s = m.group(1)
    return float(s) if "." in s else int(s)


def hint_for(model, cat, shot, idx, cache={}):
    key = (model, cat, shot)
    if key not in cache:
        t = git("eval/results/0923_main/evaluation_%s_%s_%s.jsonl.json" % (model, cat, shot))
        cache[key] = {str(d["idx"]): d for d in json.loads(t)} if t else {}
    d = cache[key].get(str(idx))
    if not d:
        return None
    return "response_text=%s; is_correct=%s" % (d.get("response_text"), d.get("is_correct"))


def main():
    files = ls("results/0923_main")
    models = {}
    for f in files:
        m = re.fullmatch(r"results/0923_main/(.+)_(cipher|counterfactual|logic|operation|puzzle)_(zero-shot|three-shot)\.jsonl", f)
        if m:
            models.setdefault(m.group(1), {})[m.group(2)] = (f, m.group(3))
    rng = random.Random(SEED)
    pools = {}
    for model in sorted(models):
        scq, calc = [], []
        if "counterfactual" in models[model]:
            f, shot = models[model]["counterfactual"]
            for r in rows(f) or []:
                ch = parse_scq(r["question"])
                g = re.fullmatch(r"\[\[([A-J])\]\]", r["answer"].strip())
                if ch and g and ord(g.group(1)) - 65 < len(ch) and (r.get("response") or "").strip():
                    scq.append(("TaxSCQ", f, shot, r, ch, ord(g.group(1)) - 65))
        if "operation" in models[model]:
            f, shot = models[model]["operation"]
            for r in rows(f) or []:
                n = gold_number(r["answer"])
                if n is not None and (r.get("response") or "").strip():
                    calc.append(("TaxCalc", f, shot, r, None, n))
        pools[model] = (scq, calc)
    picks = {}
    for model in sorted(pools):
        scq, calc = pools[model]
        picks[model] = []
        for pool in (scq, calc):
            if pool:
                picks[model].append(rng.choice(pool))
    n = sum(len(v) for v in picks.values())
    extra = rng.sample(sorted(pools), max(0, TOTAL - n))
    for i, model in enumerate(extra):
        scq, calc = pools[model]
        pool = [scq, calc][i % 2] or scq or calc
        left = [x for x in pool if x not in picks[model]]
        picks[model].append(rng.choice(left))
    drawn = []
    for model in sorted(picks):
        for task, f, shot, r, ch, gold in picks[model]:
            cat = "counterfactual" if task == "TaxSCQ" else "operation"
            rec = {"id": "%s#%s" % (f, r["idx"]), "query": r["prompt"]}
            if task == "TaxSCQ":
                rec.update({"choices": ch, "gold": gold, "answer": ch[gold]})
            else:
                rec["answer"] = gold
            kind = "api" if model in API else ("base" if shot == "three-shot" else "chat")
            src = {"repo": REPO, "commit": COMMIT, "path": f, "item": "%s:%s:%s" % (cat, r["idx"], r.get("title", "")),
                   "model": model, "model_kind": kind, "shots": "few-shot" if shot == "three-shot" else "zero-shot",
                   "lang": "en"}
            case = {"task": task, "record": rec, "output": r["response"], "source": src}
            h = hint_for(model, cat, shot, r["idx"])
            if h:
                case["hint"] = h
            drawn.append(case)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for i, c in enumerate(drawn, 1):
            c = dict([("id", "%s-%04d" % (PREFIX, i))] + list(c.items()))
            out.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(models), "models;", len(drawn), "cases;",
          sum(c["task"] == "TaxSCQ" for c in drawn), "TaxSCQ;", sum(c["task"] == "TaxCalc" for c in drawn), "TaxCalc")


if __name__ == "__main__":
    main()
