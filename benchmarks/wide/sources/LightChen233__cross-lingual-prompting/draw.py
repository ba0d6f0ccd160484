#!/usr/bin/env python3
"""Draw MGSM outputs (gpt-3.5-turbo, cross-lingual self-consistent prompting) committed in
LightChen233/cross-lingual-prompting (mgsm/output/clsp/<question language>/<reasoning language>.jsonl)
into drawn.jsonl. stdlib only. Balanced per reasoning language (the language the output is written in)."""
import json, os, random, subprocess

GIT = "/work/.mirror/LightChen233+cross-lingual-prompting/repo"
COMMIT = "affd839ba89745cf181a405395a1b410c41871d5"
REPO = "LightChen233/cross-lingual-prompting"
PREFIX = "LightChen233__cross-lingual-prompting"
SEED = 20261206
PER_LANG = 28
ROOT = "mgsm/output/clsp"
# the output's language: only the reasoning languages other than English and Chinese are drawn
TARGETS = ["de", "es", "fr", "ja", "ru"]
HERE = os.path.dirname(os.path.abspath(__file__))


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def number(s):
    s = s.replace(",", "").strip()
    v = float(s)
    return int(v) if v == int(v) else v


def main():
    files = git("ls-tree", "-r", "--name-only", COMMIT, ROOT).decode().split("\n")
    pools = {t: [] for t in TARGETS}
    for p in sorted(f for f in files if f.endswith(".jsonl")):
        src, tgt = p.split("/")[-2], p.split("/")[-1][:-6]
        if tgt not in pools:
            continue
        for k, line in enumerate(git("show", f"{COMMIT}:{p}").decode("utf-8").splitlines()):
            if not line.strip():
                continue
            d = json.loads(line)
            m = d["message"]
            if len(m) != 4 or [x["role"] for x in m] != ["user", "assistant", "user", "assistant"]:
                continue
            try:
                gold = number(d["origin"]["answer"])
            except ValueError:
                continue
            # the prompt the model saw for its final turn: the two user turns and its own first answer
            query = "User: %s\n\nAssistant: %s\n\nUser: %s" % (m[0]["content"], m[1]["content"], m[2]["content"])
            pools[tgt].append({"path": p, "item": str(k), "src": src, "query": query, "gold": gold,
                               "output": m[3]["content"], "question": d["origin"]["text"]})
    rng = random.Random(SEED)
    drawn = []
    for t in TARGETS:
        pool = pools[t]
        for j in rng.sample(range(len(pool)), min(PER_LANG, len(pool))):
            drawn.append((t, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (t, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "answer": c["gold"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"],
                              "model": "gpt-3.5-turbo", "model_kind": "api", "shots": "cot", "lang": t,
                              "question_lang": c["src"]}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({t: len(p) for t, p in pools.items()}, len(drawn))


if __name__ == "__main__":
    main()
