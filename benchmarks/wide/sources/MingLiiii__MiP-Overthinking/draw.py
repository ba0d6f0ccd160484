#!/usr/bin/env python3
"""Draw GSM8K (well-defined questions) responses committed in MingLiiii/MiP-Overthinking into drawn.jsonl.

stdlib only. The repository holds, per dataset and model, one response file (response/<dataset>/<normal|MiP>/<model>/
response.json, a JSON array). Only the well-defined GSM8K runs (response/gsm8k/normal/*, 12 models, 582 questions each)
are used: their gold is the GSM8K '#### N' number. The MiP (missing-premise) runs have no gold answer and are left out.
The prompt every model saw is the bare question text as a single user message (inference.py, api_inference/*.py).
156 distinct questions are drawn with a fixed seed and dealt 13 to each model; cases are then shuffled and numbered."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/MingLiiii+MiP-Overthinking/repo"
REPO = "MingLiiii/MiP-Overthinking"
PREFIX = "MingLiiii__MiP-Overthinking"
COMMIT = "4090d3b"  # resolved to the full hash below
SEED = 20261213
PER_MODEL = 13
HERE = os.path.dirname(os.path.abspath(__file__))

# folder -> (output field, model name as given by the folder / the inference script, model_kind)
MODELS = {
    "DSQ": ("model_answer", "DSQ (DeepSeek-R1-Distill-Qwen)", "reasoning"),
    "QwQ": ("model_answer", "QwQ", "reasoning"),
    "s1.1": ("model_answer", "s1.1", "reasoning"),
    "deepseekR1": ("deepseek-reasoner (question)", "deepseek-reasoner (DeepSeek-R1)", "reasoning"),
    "o1": ("o1 (question)", "o1", "reasoning"),
    "o1mini_medium": ("o1-mini (question)", "o1-mini (medium)", "reasoning"),
    "o3mini_medium": ("o3-mini (question)", "o3-mini (medium)", "reasoning"),
    "gpt4o": ("gpt-4o (question)", "gpt-4o", "api"),
    "gemini1_5": ("gemini-1.5-flash (question)", "gemini-1.5-flash", "api"),
    "Gemma227": ("model_answer", "Gemma227 (Gemma-2-27B instruct)", "chat"),
    "Qwen32": ("model_answer", "Qwen32 (Qwen2.5-32B-Instruct)", "chat"),
    "phi3": ("model_answer", "phi3 (Phi-3)", "chat"),
}


def git(*args):
    return subprocess.run(["git", "--git-dir", GIT] + list(args), check=True, capture_output=True).stdout.decode("utf-8")


def gold_number(ans):
    g = ans.split("####")[-1].strip().replace(",", "")
    assert re.fullmatch(r"-?\d+(\.\d+)?", g), g
    x = float(g)
    return int(x) if x == int(x) else x


def main():
    commit = git("rev-parse", COMMIT).strip()
    data = json.loads(git("show", "%s:data/gsm8k.json" % commit))
    questions = [d["question"] for d in data]
    assert len(set(questions)) == len(questions)
    runs = {}
    for folder, (field, name, kind) in MODELS.items():
        path = "response/gsm8k/normal/%s/response.json" % folder
        rows = json.loads(git("show", "%s:%s" % (commit, path)))
        by_q = {}
        for r in rows:
            by_q[r["question"]] = r
        assert set(by_q) == set(questions), folder
        runs[folder] = (path, by_q)
    rng = random.Random(SEED)
    # questions every model answered with a real response (not a harness error string)
    ok = [i for i, q in enumerate(questions)
          if all((runs[f][1][q].get(MODELS[f][0]) or "").strip()
                 and not runs[f][1][q][MODELS[f][0]].startswith("Error after") for f in MODELS)]
    picked = rng.sample(ok, PER_MODEL * len(MODELS))
    drawn = []
    for n, folder in enumerate(MODELS):
        field, name, kind = MODELS[folder]
        path, by_q = runs[folder]
        for i in sorted(picked[n * PER_MODEL:(n + 1) * PER_MODEL]):
            q = questions[i]
            row = by_q[q]
            rec = {"id": "data/gsm8k.json#%d" % i, "query": q, "answer": gold_number(data[i]["answer"])}
            case = {"task": "TaxCalc", "record": rec, "output": row[field],
                    "source": {"repo": REPO, "commit": commit, "path": path, "item": "gsm8k.json[%d]" % i,
                               "model": name, "model_kind": kind, "shots": "zero-shot", "lang": "en"}}
            if "eval_result" in row:
                case["hint"] = "source eval_result (GPT-4o judge: 1 correct, 2 wrong, 0 abstain) = %s" % row["eval_result"]
            drawn.append(case)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, c in enumerate(drawn, 1):
            c = dict([("id", "%s-%04d" % (PREFIX, n))] + list(c.items()))
            out.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(questions), "questions;", len(ok), "usable;", len(MODELS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
