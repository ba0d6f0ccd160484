#!/usr/bin/env python3
"""Draw MedAgentsBench (hard subsets of ten medical multiple-choice benchmarks) model outputs committed in
xk-huang/medagents-benchmark (the development fork of gersteinlab/medagents-benchmark) into drawn.jsonl.

stdlib only. The output files are read at commit c5bf425 ("[update] update repo and readme", 2025-03-12), the
commit that added them (HEAD 56ca11e holds the same blobs). Five runs with the full generated text kept:
DeepSeek-R1, QwQ-32B and QwQ-32B-Preview with the zero-shot prompt (`completion` field), gpt-4o and gpt-4o-mini
with the chain-of-thought prompt (`raw_response` field). 30 cases a model, spread evenly over the datasets
that run covers, drawn with a fixed seed among the items whose output is not empty. Every case is TaxSCQ."""
import json, os, random, subprocess

GIT = "/work/.mirror/xk-huang+medagents-benchmark/repo"
REPO = "xk-huang/medagents-benchmark"
PREFIX = "xk-huang__medagents-benchmark"
SEED = 20261217
PER_MODEL = 30
HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = ["medbullets", "medexqa", "medmcqa", "medqa", "medxpertqa-r", "medxpertqa-u", "mmlu", "mmlu-pro",
            "pubmedqa"]

# model -> (method, output field, model_kind, shots)
RUNS = {
    "DeepSeek-R1": ("zero_shot", "completion", "reasoning", "zero-shot"),
    "QwQ-32B": ("zero_shot", "completion", "reasoning", "zero-shot"),
    "QwQ-32B-Preview": ("zero_shot", "completion", "reasoning", "zero-shot"),
    "gpt-4o": ("cot", "raw_response", "api", "cot"),
    "gpt-4o-mini": ("cot", "raw_response", "api", "cot"),
}

# The prompts of baselines/MedPrompt/zero_shot.py and cot.py at the same commit, for models outside the
# o1-mini/o3-mini/claude branch (a system message and a user message).
ZS_SYSTEM = ("You are a knowledgeable medical assistant. Provide accurate answers to the medical question based on "
             "the given information.")
ZS_USER = ("Given the following question and options, select the correct answer by returning only the answer index "
           "(e.g., 'A', 'B', 'C', or 'D').\n\nQuestion:\n{q}\n\nOptions:\n{o}\n\nReply with the answer index only.")
COT_SYSTEM = ("You are a helpful medical expert. Your task is to answer multi-choice medical questions by thinking "
              "step-by-step and providing clear explanations.")
COT_USER = ("Please answer this medical question by first thinking step-by-step and then choosing from the provided "
            "options. Your responses will be used for research purposes only, so please have a definite answer "
            "(e.g., 'A', 'B', 'C', etc.).\n\nQuestion:\n{q}\n\nOptions:\n{o}\n\n")


def git(*args):
    return subprocess.run(["git", "--git-dir", GIT] + list(args), check=True, capture_output=True).stdout.decode("utf-8")


def check_prompts(commit):
    """The prompt texts above must be the code's (string pieces of the message literals)."""
    zs = git("show", "%s:baselines/MedPrompt/zero_shot.py" % commit)
    cot = git("show", "%s:baselines/MedPrompt/cot.py" % commit)
    for piece in ['"content": "You are a knowledgeable medical assistant. Provide accurate answers to the medical '
                  'question based on the given information."',
                  '"Given the following question and options, select the correct answer by returning only the answer '
                  'index (e.g., \'A\', \'B\', \'C\', or \'D\').\\n\\n"',
                  'f"Question:\\n{question_text}\\n\\n"', 'f"Options:\\n{options_text}\\n\\n"',
                  '"Reply with the answer index only."',
                  "options_text = ' '.join([f\"({key}) {value}\" for key, value in options.items()])"]:
        assert piece in zs, piece
    for piece in ['"content": "You are a helpful medical expert. Your task is to answer multi-choice medical questions '
                  'by thinking step-by-step and providing clear explanations."',
                  '"Please answer this medical question by first thinking step-by-step and then choosing from the '
                  'provided options. "',
                  '"Your responses will be used for research purposes only, so please have a definite answer (e.g., '
                  '\'A\', \'B\', \'C\', etc.).\\n\\n"']:
        assert piece in cot, piece


def main():
    commit = git("rev-parse", "c5bf425").strip()
    check_prompts(commit)
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        method, field, kind, shots = RUNS[model]
        pools = []
        for ds in DATASETS:
            path = "output/%s/%s-%s-test_hard-%s.json" % (ds, model, ds, method)
            try:
                data = json.loads(git("show", "%s:%s" % (commit, path)))
            except subprocess.CalledProcessError:
                continue
            items = [x for x in data if (x.get(field) or "").strip()]
            if items:
                pools.append((ds, path, items))
        order = list(range(len(pools)))
        rng.shuffle(order)
        counts = [0] * len(pools)
        for k in range(PER_MODEL):
            counts[order[k % len(pools)]] += 1
        for (ds, path, items), n in zip(pools, counts):
            for x in rng.sample(items, n):
                opts = x["options"]
                letters = list(opts)
                assert letters == [chr(65 + i) for i in range(len(letters))] and 2 <= len(letters) <= 10
                options_text = " ".join("(%s) %s" % (k, v) for k, v in opts.items())
                if method == "zero_shot":
                    query = ZS_SYSTEM + "\n\n" + ZS_USER.format(q=x["question"], o=options_text)
                else:
                    query = COT_SYSTEM + "\n\n" + COT_USER.format(q=x["question"], o=options_text)
                gold = letters.index(x["answer_idx"])
                choices = [opts[k] for k in letters]
                rec = {"id": "%s:test_hard:%s" % (ds, x["realidx"]), "query": query, "choices": choices,
                       "gold": gold, "answer": choices[gold]}
                src = {"repo": REPO, "commit": commit, "path": path, "item": "%s#realidx=%s" % (ds, x["realidx"]),
                       "model": model, "model_kind": kind, "shots": shots, "lang": "en"}
                hint = "predicted_answer=%s" % x.get("predicted_answer")
                drawn.append(("TaxSCQ", rec, x[field], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
