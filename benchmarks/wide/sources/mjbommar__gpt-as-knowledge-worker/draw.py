#!/usr/bin/env python3
"""Draw the two committed Assessment-2 exam sessions of mjbommar/gpt-as-knowledge-worker into drawn.jsonl.

stdlib only. Each session file (results/questions-02/sessions-01/cpa-exam-NNN/exam_data.json, pinned commit)
holds 208 four- (or three-) option CPA-exam questions (AUD, BEC, FAR, REG) with the gold letter, the exact prompt
sent to text-davinci-003 (`model_prompt`) and the raw completions API response. 150 distinct questions are drawn
with a fixed seed and split 75/75 between the two sessions (prompt 018 at temperature 0, prompt 020 at temperature
1 with best_of 2); every case is a TaxSCQ. The repository stores no extracted answer, so `hint` is null."""
import json, os, random, subprocess

GIT = "/work/.mirror/mjbommar+gpt-as-knowledge-worker/repo"
REPO = "mjbommar/gpt-as-knowledge-worker"
PREFIX = "mjbommar__gpt-as-knowledge-worker"
SEED = 20261216
COMMIT = "40eb4e6a4086a0aa2fae594b032e1508bfe3b71b"   # HEAD of the snapshot (2023-01-23)
SESSIONS = [
    "results/questions-02/sessions-01/cpa-exam-020/exam_data.json",   # generate_prompt_018, temperature 0.0
    "results/questions-02/sessions-01/cpa-exam-180/exam_data.json",   # generate_prompt_020, temperature 1.0, best_of 2
]
N_TOTAL, N_PER = 150, 75
HERE = os.path.dirname(os.path.abspath(__file__))


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def main():
    sessions = []
    for path in SESSIONS:
        d = json.loads(git(COMMIT, path))
        sessions.append((path, d))
    n = len(sessions[0][1]["questions"])
    # both sessions hold the same 208 questions in the same order
    for _, d in sessions[1:]:
        assert len(d["questions"]) == n
        for a, b in zip(sessions[0][1]["questions"], d["questions"]):
            assert a["question_input"] == b["question_input"]
    rng = random.Random(SEED)
    idx = sorted(rng.sample(range(n), N_TOTAL))
    rng.shuffle(idx)
    assign = [(sessions[0], i) for i in sorted(idx[:N_PER])] + [(sessions[1], i) for i in sorted(idx[N_PER:])]
    cases = []
    for (path, d), i in assign:
        q = d["questions"][i]
        qi = q["question_input"]
        letters = sorted(qi["choices"])
        assert letters == list("ABCD"[:len(letters)]), letters
        choices = [qi["choices"][k] for k in letters]
        gold = letters.index(qi["answer"])
        resp = q["model_response"]
        assert len(resp["choices"]) == 1
        out = resp["choices"][0]["text"]
        key = "%s-%d" % (qi["question_section"], qi["question_number"])
        cases.append({
            "task": "TaxSCQ",
            "record": {"id": "%s#%s" % (path.split("/")[-2], key), "query": q["model_prompt"],
                       "choices": choices, "gold": gold, "answer": choices[gold]},
            "output": out,
            "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "questions[%d] (%s)" % (i, key),
                       "model": d["model_name"], "model_kind": "api", "shots": "zero-shot", "lang": "en",
                       "prompt_method": d["prompt_method"], "parameters": d["parameters"],
                       "finish_reason": resp["choices"][0]["finish_reason"]},
            "hint": None,
        })
    rng.shuffle(cases)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for k, c in enumerate(cases, 1):
            c = dict(id="%s-%04d" % (PREFIX, k), **c)
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
