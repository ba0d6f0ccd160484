#!/usr/bin/env python3
"""Draw the Faithful-CoT baseline and no-solver outputs committed in veronica320/Faithful-COT
(output_dir/<dataset>/test/<model>_<prompt>/predictions.jsonl) into drawn.jsonl. stdlib only."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/veronica320+Faithful-COT/repo"
COMMIT = "301784317c99cf348cfad92a1b3e8810900e095b"
REPO = "veronica320/Faithful-COT"
PREFIX = "veronica320__Faithful-COT"
SEED = 20261206
PER_MODEL = 22
NOSOLVER = 12  # code002_nosolver (program + stated "Answer:"), GSM8K only
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {"code001": ("code-davinci-001", "base"), "code002": ("code-davinci-002", "base"),
          "text002": ("text-davinci-002", "api"), "text003": ("text-davinci-003", "api"),
          "gpt-3.5-turbo": ("gpt-3.5-turbo", "api"), "gpt4": ("gpt-4", "api")}
DATASETS = ["GSM8K", "ASDiv", "SVAMP", "MultiArith", "AQUA"]
PROMPTS = ["COT", "LtM", "standard"]


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def jsonl(path):
    return [json.loads(l) for l in git("show", f"{COMMIT}:{path}").decode("utf-8").splitlines() if l.strip()]


def gold_number(ds, ans):
    if ds in ("GSM8K", "SVAMP", "MultiArith"):
        m = re.search(r"#### (\-?[0-9\.\,]+)", ans)
        if not m:
            return None
        s = m.group(1).replace(",", "")
    else:  # ASDiv: a plain value; multi-value golds are left out
        if isinstance(ans, (list, tuple)):
            return None
        s = str(ans).strip()
        if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", s):
            return None
    v = float(s)
    return int(v) if v == int(v) else v


def build(ds, prompt, ex):
    """The final question as the model saw it, in the prompt's template (demonstrations dropped)."""
    tmpl = git("show", f"{COMMIT}:source/prompt/{ds}/{prompt}_template.txt").decode("utf-8")
    q = tmpl.replace("[QUESTION]", ex["question"])
    if ds == "AQUA":
        # the demonstrations list options as "(a) text"; the template's [OPTIONS_FORMATTED] is filled the same way
        opts = "\n".join("(%s) %s" % (chr(97 + i), o.split(")", 1)[1]) for i, o in enumerate(ex["options"]))
        q = q.replace("[OPTIONS_FORMATTED]", opts)
    return q.rstrip("\n")


def main():
    data = {ds: {ex["id"]: ex for ex in jsonl(f"data/{ds}/test.jsonl")} for ds in DATASETS}
    rng = random.Random(SEED)
    drawn = []
    cells_all = [(ds, p) for ds in DATASETS for p in PROMPTS]
    plan = [(m, None) for m in MODELS] + [("code002", "nosolver")]
    for mdir, special in plan:
        if special:
            cells = [("GSM8K", "nosolver")] * NOSOLVER
        else:
            cells = cells_all[:]
            rng.shuffle(cells)
            cells += [rng.choice(cells_all) for _ in range(PER_MODEL - len(cells))]
        seen = set()
        for ds, p in cells:
            path = f"output_dir/{ds}/test/{mdir}_{p}/predictions.jsonl"
            preds = jsonl(path)
            while True:
                pr = rng.choice(preds)
                ex = data[ds].get(pr["id"])
                if ex is None or (path, pr["id"]) in seen:
                    continue
                if ds != "AQUA" and gold_number(ds, ex["answer"]) is None:
                    continue
                break
            seen.add((path, pr["id"]))
            drawn.append((mdir, ds, p, path, pr, ex))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (mdir, ds, p, path, pr, ex) in enumerate(drawn, 1):
            model, kind = MODELS[mdir]
            query = build(ds, p, ex)
            if ds == "AQUA":
                choices = [o.split(")", 1)[1] for o in ex["options"]]
                gold = ord(ex["answer"]) - 65
                task = "TaxSCQ"
                record = {"id": f"{ds}#{ex['id']}", "query": query, "choices": choices, "gold": gold,
                          "answer": choices[gold]}
            else:
                task = "TaxCalc"
                record = {"id": f"{ds}#{ex['id']}", "query": query, "answer": gold_number(ds, ex["answer"])}
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": task, "record": record, "output": pr["completion"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": str(pr["id"]), "model": model,
                              "model_kind": kind, "shots": "few-shot" if p == "standard" else "cot",
                              "lang": "en", "dataset": ds, "prompt": p},
                   "hint": "source's extracted answer: %s" % json.dumps(pr.get("answer"), ensure_ascii=False)}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(len(drawn))


if __name__ == "__main__":
    main()
