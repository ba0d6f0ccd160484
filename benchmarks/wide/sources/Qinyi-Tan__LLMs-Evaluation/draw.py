#!/usr/bin/env python3
"""Draw GAOKAO-Bench objective-question answers committed in Qinyi-Tan/LLMs-Evaluation
(Objective_Questions_Answers/<model>_answer/...) into drawn.jsonl.

stdlib only. The repository ran three Azure OpenAI chat models (gpt-35-turbo, gpt-4o-mini, gpt-4o) on the
first items of each GAOKAO-Bench objective subject with the GAOKAO-Bench prompts (Bench/Obj_Prompt.json,
sent as the system message; the question as the user message). Items with one question and one correct
option become TaxSCQ (options parsed from the question text); Physics MCQs (the prompt asks for all
correct options) become TaxMCQ. Items that bundle several sub-questions (Geography, Chinese modern
literature reading, English reading/cloze/fill-in) are left out. 50 cases are drawn from each model."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/Qinyi-Tan+LLMs-Evaluation/repo"
COMMIT = "7be484bbe0b38cc0bc0536e54396d959bbd203e3"
REPO = "Qinyi-Tan/LLMs-Evaluation"
PREFIX = "Qinyi-Tan__LLMs-Evaluation"
SEED = 20261211
PER_MODEL = 50
HERE = os.path.dirname(os.path.abspath(__file__))

SINGLE = {"2010-2013_English_MCQs", "2010-2022_Biology_MCQs", "2010-2022_Chemistry_MCQs",
          "2010-2022_Chinese_Lang_and_Usage_MCQs", "2010-2022_History_MCQs", "2010-2022_Math_I_MCQs",
          "2010-2022_Math_II_MCQs", "2010-2022_Political_Science_MCQs"}
MULTI = {"2010-2022_Physics_MCQs"}

MARK = re.compile(r"(?<![A-Za-z])([A-D])\s*[\.．、:：]")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, "-c", "core.quotepath=off"] + list(a),
                          check=True, capture_output=True).stdout


def parse_options(q):
    """Texts of options A-D: the last D marker, the last C before it, and so on."""
    ms = list(MARK.finditer(q))
    chain, limit = [], len(q) + 1
    for letter in "DCBA":
        cands = [m for m in ms if m.group(1) == letter and m.start() < limit]
        if not cands:
            return None
        m = cands[-1]
        chain.append(m)
        limit = m.start()
    chain.reverse()
    texts = []
    for i, m in enumerate(chain):
        end = chain[i + 1].start() if i + 1 < len(chain) else len(q)
        t = q[m.end():end].strip()
        if not t:
            return None
        texts.append(t)
    return texts


def main():
    prompts = {p["keyword"]: p["prefix_prompt"]
               for p in json.loads(git("show", COMMIT + ":Bench/Obj_Prompt.json"))["examples"]}
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT).decode().split("\n")
             if f.startswith("Objective_Questions_Answers/") and f.endswith(".json")]
    pools = {}
    skipped = 0
    for f in sorted(files):
        model = f.split("/")[1][:-len("_answer")]
        data = json.loads(git("show", "%s:%s" % (COMMIT, f)))
        kw = data["keyword"]
        if kw not in SINGLE and kw not in MULTI:
            continue
        for x in data["example"]:
            gold = x["standard_answer"]
            if len(gold) != 1:
                skipped += 1
                continue
            q = x["question"]
            query = prompts[kw] + "\n" + q.strip()
            src = {"repo": REPO, "commit": COMMIT, "path": f, "item": "%s#%d" % (kw, x["index"]),
                   "model": model, "model_kind": "api", "shots": "zero-shot",
                   "lang": "zh" if re.search(r"[\u4e00-\u9fff]", q) else "en"}
            hint = "source's extracted answer: %s" % ("".join(x.get("model_answer") or []) or "(none)")
            if kw in MULTI:
                letters = "".join(sorted(set(gold[0])))
                if not re.fullmatch("[A-D]+", letters):
                    skipped += 1
                    continue
                rec = {"id": "%s#%d" % (kw, x["index"]), "query": query, "answer": letters}
                task = "TaxMCQ"
            else:
                choices = parse_options(q)
                if choices is None or gold[0] not in "ABCD":
                    skipped += 1
                    continue
                g = "ABCD".index(gold[0])
                rec = {"id": "%s#%d" % (kw, x["index"]), "query": query, "choices": choices, "gold": g,
                       "answer": choices[g]}
                task = "TaxSCQ"
            pools.setdefault(model, []).append((task, rec, x["model_output"] or "", src, hint))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        for j in sorted(rng.sample(range(len(pool)), min(PER_MODEL, len(pool)))):
            drawn.append(pool[j])
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (task, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": task, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print({m: len(p) for m, p in pools.items()}, "skipped", skipped, "drawn", len(drawn))


if __name__ == "__main__":
    main()
