#!/usr/bin/env python3
"""Draw 2026 gaokao math (national papers I and II) answers of 10 models for hand grading.

Reads rongrongrong233/GaoKao-bench with `git show` (stdlib only): items from data/reviewed/*.jsonl, runs from
data/results/runs/<model>.<paper>.jsonl. Uses each run's first response (the answer to the question prompt;
the second turn only asks the model to restate it). Fixed seed; writes drawn.jsonl.
"""
import json, math, os, random, re, subprocess

GIT = os.environ.get("GAOKAO_GIT", "/work/.mirror/rongrongrong233+GaoKao-bench/repo")
REPO = "rongrongrong233/GaoKao-bench"
COMMIT = "67070b0dac31bbdd509c640e7f938940ff745280"
SEED = 20261206
SCQ_PER_MODEL = 5
HERE = os.path.dirname(os.path.abspath(__file__))
PAPERS = ["2026-national-i-math", "2026-national-ii-math"]
MODELS = ["GLM 5.1", "GPT-5.5", "claude-opus-4.6", "deepseek-v4-flash", "deepseek-v4-pro",
          "doubao-seed-2-0-lite-260428", "doubao-seed-2-0-pro-260215", "gemini-3.1-pro-preview", "kimi-k2.6"]
# fill-blank items whose gold is a single number (value written out from the gold expression)
CALC = {"2026-national-i-math-q12": math.sqrt(66) / 6, "2026-national-i-math-q14": (3 / 2) ** (1 / 3),
        "2026-national-ii-math-q12": 24, "2026-national-ii-math-q14": 5 * math.sqrt(3) / 4}


def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout.decode("utf-8")


def jl(s):
    return [json.loads(l) for l in s.splitlines() if l.strip()]


def options(content):
    """Split 'A. ...  B. ...  C. ...  D. ...' (full-width spaces / new lines between) into four option texts."""
    m = re.search(r"(?s)(?:^|\n|\u3000)A\.\s*(.*?)(?:\u3000|\s)+B\.\s*(.*?)(?:\u3000|\s)+C\.\s*(.*?)(?:\u3000|\s)+D\.\s*(.*)$", content)
    if not m:
        return None
    opts = [re.sub(r"[\u3000\s]+$", "", o).strip() for o in m.groups()]
    if not all(opts) or any(re.search(r"(?:^|\s)[A-D]\.\s", o) for o in opts):
        return None
    return opts


def main():
    rng = random.Random(SEED)
    items = {}
    for p in PAPERS:
        for d in jl(show(f"data/reviewed/{p}.jsonl")):
            items[d["id"]] = d
    cases = []
    skipped = []
    for model in MODELS:
        runs = []
        for p in PAPERS:
            path = f"data/results/runs/{model}.{p}.jsonl"
            for li, r in enumerate(jl(show(path))):
                runs.append((path, li, r))
        scq, rest = [], []
        for path, li, r in runs:
            it = items[r["item_id"]]
            qt = it["question_type"]
            if qt == "single_choice":
                scq.append((path, li, r))
            elif qt == "multiple_choice" or r["item_id"] in CALC:
                rest.append((path, li, r))
        chosen = sorted(rng.sample(scq, SCQ_PER_MODEL), key=lambda t: (t[0], t[1])) + rest
        for path, li, r in chosen:
            it = items[r["item_id"]]
            m = r["messages"]
            query = m["system"] + "\n\n" + m["first_user"]
            content = it["question"]["content"]
            gold = it["answer"]["standard"]
            qt = it["question_type"]
            if qt == "single_choice":
                opts = options(content)
                if opts is None or gold not in "ABCD" or len(gold) != 1:
                    skipped.append(r["item_id"])
                    continue
                g = "ABCD".index(gold)
                task, rec = "TaxSCQ", {"id": it["id"], "query": query, "choices": opts, "gold": g, "answer": opts[g]}
            elif qt == "multiple_choice":
                task, rec = "TaxMCQ", {"id": it["id"], "query": query, "answer": "".join(sorted(set(gold)))}
            else:
                task, rec = "TaxCalc", {"id": it["id"], "query": query, "answer": CALC[it["id"]]}
            mc = r["model_config"]
            src = {"repo": REPO, "commit": COMMIT, "path": path, "item": f"line {li} ({it['id']})",
                   "model": f"{mc['name']} ({mc.get('model')})", "model_kind": "reasoning", "shots": "zero-shot",
                   "lang": "zh"}
            cases.append({"task": task, "record": rec, "output": r["first_response_text"], "source": src,
                          "hint": f"extracted_answer (after the second turn): {r.get('extracted_answer')}"})
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            f.write(json.dumps({"id": f"rongrongrong233__GaoKao-bench-{i:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(cases), "cases; skipped", skipped)


if __name__ == "__main__":
    main()
