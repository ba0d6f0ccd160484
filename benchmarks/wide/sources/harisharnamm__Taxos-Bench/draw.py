#!/usr/bin/env python3
"""Draw Taxos-Bench (US federal tax law multiple choice) model outputs committed in
harisharnamm/Taxos-Bench into drawn.jsonl.

stdlib only. taxos_benchmark_v1/results.jsonl holds one record per (model, question) with the
verbatim `raw_output`; records whose API call failed (`error` set, empty output) are not model
generations and are left out. From each model with outputs, 30 records are drawn with a fixed seed.
The prompt is rebuilt as run_eval.py builds it: the system prompt (evaluation_prompt.txt), a blank
line, then `Scenario: ...\nQuestion: ...\nChoices:\nA) ...` from benchmark_questions.json."""
import json, os, random, subprocess

GIT = "/work/.mirror/harisharnamm+Taxos-Bench/repo"
COMMIT = "f336150b7744ad5f40c8ce0425cb93981b2e8ec3"
REPO = "harisharnamm/Taxos-Bench"
PREFIX = "harisharnamm__Taxos-Bench"
SEED = 20261212
PER_MODEL = 30
HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = "taxos_benchmark_v1/results.jsonl"
QUESTIONS = "taxos_benchmark_v1/benchmark_questions.json"
PROMPT = "taxos_benchmark_v1/evaluation_prompt.txt"
LETTERS = "ABCDE"

# model -> model_kind (all were called through the Eden AI chat API)
KIND = {
    "openai/gpt-4o": "api",
    "google/gemini-2.0-flash": "api",
    "anthropic/claude-3-5-haiku-latest": "api",
    "mistral/mistral-large-latest": "api",
    "meta/llama3-1-70b-instruct-v1:0": "chat",
}


def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def user_prompt(q):
    choices = "".join("%s) %s\n" % (LETTERS[i], c) for i, c in enumerate(q["choices"]) if i < len(LETTERS))
    return "Scenario: %s\nQuestion: %s\nChoices:\n%s" % (q["scenario"], q["question"], choices)


def main():
    system = show(PROMPT)
    questions = {q["id"]: q for q in json.loads(show(QUESTIONS))}
    rows = [json.loads(l) for l in show(RESULTS).splitlines() if l.strip()]
    by_model = {}
    for n, r in enumerate(rows):
        if r.get("error") or not r.get("raw_output"):
            continue  # failed API call: no model output
        by_model.setdefault(r["model"], []).append((n, r))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(by_model):
        recs = by_model[model]
        picks = rng.sample(recs, min(PER_MODEL, len(recs)))
        picks.sort(key=lambda x: x[0])
        drawn.extend(picks)
    out = []
    for k, (n, r) in enumerate(drawn, 1):
        q = questions[r["question_id"]]
        gold = q["correct_choice_index"]
        assert LETTERS[gold] == r["correct_letter"]
        record = {"id": "%s#%s" % (QUESTIONS, q["id"]),
                  "query": system.rstrip("\n") + "\n\n" + user_prompt(q),
                  "choices": list(q["choices"]), "gold": gold, "answer": q["choices"][gold]}
        out.append({
            "id": "%s-%04d" % (PREFIX, k), "task": "TaxSCQ", "record": record,
            "output": r["raw_output"],
            "source": {"repo": REPO, "commit": COMMIT, "path": RESULTS,
                       "item": "line %d: %s" % (n + 1, q["id"]), "model": r["model"],
                       "model_kind": KIND.get(r["model"], "api"), "shots": "zero-shot", "lang": "en"},
            "hint": "source normalized_output=%s is_correct=%s" % (r["normalized_output"], r["is_correct"]),
        })
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")
    print(len(out), "cases;", {m: sum(1 for o in out if o["source"]["model"] == m) for m in sorted(by_model)})


if __name__ == "__main__":
    main()
