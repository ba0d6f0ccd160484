#!/usr/bin/env python3
"""Draw IgakuQA (Japanese medical licensing exam, 116th/2022) prompt-comparison outputs committed in
aki-wada/IgakuQA-evaluation into drawn.jsonl.

stdlib only. Source files: results/prompt_comparison_<model>_2022_<section>.json (one model, one exam
section, one or more system prompts). The script that wrote them stores `response[:200]`, so only
responses shorter than 200 characters (complete as generated) and not empty are drawn. Items: those of
data/2022/116-<section>.jsonl with 2..5 options a..e; one gold letter -> TaxSCQ, several -> TaxMCQ.
Per model a fixed number of cases; within a model, about half from items with several answers and, where
available, about half from responses longer than 8 characters."""
import json, os, random, string, subprocess

GIT = "/work/.mirror/aki-wada+IgakuQA-evaluation/repo"
COMMIT = "0ff492116458db9905279b4f8fffc62cdd3d1bb3"
REPO = "aki-wada/IgakuQA-evaluation"
PREFIX = "aki-wada__IgakuQA-evaluation"
SEED = 20261209
TARGET = 150
HERE = os.path.dirname(os.path.abspath(__file__))


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def question_text(q):
    text = "問題: " + q["problem_text"]
    for choice, label in zip(q["choices"], string.ascii_lowercase):
        text += "\n%s: %s" % (label, choice)
    text += "\n\n%d個選んで答えてください。\n答え:" % len(q["answer"])
    return text


def kind_of(model):
    m = model.lower()
    if any(k in m for k in ("think", "reasoning", "gpt-oss", "magistral", "nemotron", "qwen3.5", "glm-4.7",
                            "minimax", "olmo-3", "glm-4.6v")):
        return "reasoning"
    if any(k in m for k in ("medgemma", "openbiollm")):
        return "domain"
    return "chat"


def main():
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "results/").decode().split("\n")
             if f.startswith("results/prompt_comparison_") and f.endswith(".json")]
    qs = {}
    for sec in "ABCDEF":
        for line in git("show", "%s:data/2022/116-%s.jsonl" % (COMMIT, sec)).decode().splitlines():
            if line.strip():
                q = json.loads(line)
                qs[q["problem_id"]] = q
    pools = {}
    for f in sorted(files):
        d = json.loads(git("show", "%s:%s" % (COMMIT, f)))
        model = d["model"]
        for key, details in d["details"].items():
            system = d["prompts"][key]
            for i, x in enumerate(details):
                r = x.get("response") or ""
                if not r or len(r) >= 200:
                    continue
                q = qs.get(x["problem_id"])
                if not q or not q.get("choices") or not (2 <= len(q["choices"]) <= 5):
                    continue
                gold = sorted(q["answer"])
                if not all(g in "abcde"[:len(q["choices"])] for g in gold):
                    continue
                pools.setdefault(model, []).append((f, key, i, system, q, gold, x))
    rng = random.Random(SEED)
    models = sorted(pools)
    per = {m: TARGET // len(models) for m in models}
    for m in rng.sample(models, TARGET - sum(per.values())):
        per[m] += 1
    drawn = []
    for model in models:
        pool = pools[model]
        rng.shuffle(pool)
        k = per[model]
        chosen, seen = [], set()
        # slots: alternate multi/single and long/short preferences
        for s in range(k):
            want_multi = (s % 2 == 0)
            want_long = (s // 2) % 2 == 0
            best = None
            for c in pool:
                if id(c) in seen or c[4]["problem_id"] in {x[4]["problem_id"] for x in chosen}:
                    continue
                sc = ((len(c[5]) > 1) == want_multi) * 2 + ((len(c[6]["response"]) > 8) == want_long)
                if best is None or sc > best[0]:
                    best = (sc, c)
                    if sc == 3:
                        break
            if best:
                seen.add(id(best[1]))
                chosen.append(best[1])
        for f, key, i, system, q, gold, x in chosen:
            sysp = system + (" /no_think" if "qwen3" in model.lower() else "")
            query = sysp + "\n\n" + question_text(q)
            if len(gold) > 1:
                task, rec = "TaxMCQ", {"query": query, "answer": "".join(g.upper() for g in gold)}
            else:
                g = "abcde".index(gold[0])
                task, rec = "TaxSCQ", {"query": query, "choices": list(q["choices"]), "gold": g,
                                       "answer": q["choices"][g]}
            rec = dict({"id": "%s#%s#%d" % (f, key, i)}, **rec)
            drawn.append((task, rec, x["response"], {
                "repo": REPO, "commit": COMMIT, "path": f, "item": "%s:%s:%d:%s" % (key, x["problem_id"], i, f),
                "model": model, "model_kind": kind_of(model), "shots": "few-shot", "lang": "ja",
                "prompt_key": key}, "prediction=%r correct=%r" % (x.get("prediction"), x.get("correct"))))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(models), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
