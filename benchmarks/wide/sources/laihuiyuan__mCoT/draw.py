#!/usr/bin/env python3
"""Draw mCoT-7B outputs on MGSM and MSVAMP (11 / 10 languages) committed in laihuiyuan/mCoT into drawn.jsonl.

stdlib only. Each outputs/mcot_ft_{mgsm,msvamp}_{lang}.json is a JSON-lines file of one run of the model
laihuiyuan/mCoT on one benchmark in one language; every line holds the prompt the model saw (`question`),
the verbatim generation (`response`), the source's own extracted number (`prediction`), the gold (`answer`)
and the source's correctness flag (`result`). Chinese is drawn heavier (25 MGSM-zh + 25 MSVAMP-zh); every
other language gets 5 + 5 (Telugu, absent from MSVAMP, 10 MGSM). In each (benchmark, language) cell half
the cases come from the records the source marked wrong, half from those it marked right."""
import json, os, random, subprocess

GIT = "/work/.mirror/laihuiyuan+mCoT/repo"
COMMIT = "20e9a862ad00d70f0f2adefe87ab433d465236f5"
REPO = "laihuiyuan/mCoT"
PREFIX = "laihuiyuan__mCoT"
SEED = 20261211
HERE = os.path.dirname(os.path.abspath(__file__))
LANGS = "zh en ja ru de fr es sw bn te th".split()
LANG_FIELD = {"zh": "zh", "en": "en", "ja": "ja", "ru": "ru", "de": "de", "fr": "fr", "es": "es"}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def num(x):
    x = float(x)
    return int(x) if x == int(x) else x


def plan():
    cells = []
    for lang in LANGS:
        if lang == "zh":
            cells += [("mgsm", lang, 25), ("msvamp", lang, 25)]
        elif lang == "te":
            cells += [("mgsm", lang, 10)]
        else:
            cells += [("mgsm", lang, 5), ("msvamp", lang, 5)]
    return cells


def main():
    rng = random.Random(SEED)
    drawn = []
    for bench, lang, n in plan():
        path = "outputs/mcot_ft_%s_%s.json" % (bench, lang)
        rows = [json.loads(x) for x in git("show", "%s:%s" % (COMMIT, path)).decode("utf-8").splitlines() if x.strip()]
        wrong = [i for i, r in enumerate(rows) if not r["result"]]
        right = [i for i, r in enumerate(rows) if r["result"]]
        k_wrong = n // 2 + (n % 2 and rng.random() < 0.5)
        picks = rng.sample(wrong, k_wrong) + rng.sample(right, n - k_wrong)
        for i in sorted(picks):
            r = rows[i]
            rec = {"id": "%s#%d" % (path, i), "query": r["question"], "answer": num(r["answer"])}
            src = {"repo": REPO, "commit": COMMIT, "path": path, "item": str(i), "model": "laihuiyuan/mCoT",
                   "model_kind": "domain", "shots": "cot", "lang": LANG_FIELD.get(lang, "other")}
            hint = "source prediction %s; source result %s" % (r["prediction"], r["result"])
            drawn.append(("TaxCalc", rec, r["response"], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
