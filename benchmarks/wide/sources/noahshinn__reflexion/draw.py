#!/usr/bin/env python3
"""Draw first-trial chain-of-thought answers (HotpotQA with gold context) from Reflexion's committed logs.

Reads noahshinn/reflexion logs with `git show` (stdlib only), keeps trial 1 (the plain CoT agent, before any
reflection), splits it into one block per question, draws a fixed-seed sample per model, writes drawn.jsonl.
"""
import json, os, random, re, subprocess

GIT = os.environ.get("REFLEXION_GIT", "/work/.mirror/noahshinn+reflexion/repo")
REPO = "noahshinn/reflexion"
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = [  # (commit, path, model, kind, n)
    ("cefdb0ed53cfad4b95871a8060967cab99fb6b70", "hotpotqa_runs/root/CoT/context/reflexion_gpt4/100_questions_5_trials.txt",
     "gpt-4", "api", 35),
    ("cefdb0ed53cfad4b95871a8060967cab99fb6b70", "hotpotqa_runs/root/CoT/context/reflexion_gpt-3.5-turbo/100_questions_5_trials.txt",
     "gpt-3.5-turbo", "api", 35),
    ("218cf0ef1df84b05ce379dd4a8e47f17766733a0", "hotpotqa_runs/root/CoT/context/reflexion/100_questions_5_trials.txt",
     "text-davinci-003", "api", 35),
]
HEADER = "Solve a question answering task by having a Thought, then Finish with your answer."


def show(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout.decode("utf-8")


INSTRUCTION = (HEADER + " Thought can reason about the current situation. Finish[answer] returns the answer and "
               "finishes the task. You will be given context that you should use to help you answer the question.")


def trial1_blocks(log):
    t1 = log.split("BEGIN TRIAL 1", 1)[1].split("BEGIN TRIAL 2", 1)[0]
    if HEADER not in t1:
        # older log layout (text-davinci-003 run): "Context: <context> Question: <question>\nThought: ..."
        out = []
        for p in t1.split("\nContext: ")[1:]:
            m = re.match(r"(?s)(.*) Question: (.*?)\n(Thought:.*?)\nObservation: (Answer is (?:CORRECT|INCORRECT))\s*\nCorrect answer: (.*?)\n", p)
            if not m:
                continue
            context, question, output, flag, gold = m.groups()
            out.append({"instruction": INSTRUCTION, "context": context, "question": question,
                        "output": output, "flag": flag, "gold": gold.strip()})
        return out
    parts = t1.split(HEADER)[1:]
    out = []
    for p in parts:
        block = HEADER + p
        m = re.match(r"(?s)(.*?)\nRelevant Context: (.*?)\nQuestion: (.*?)\n(Thought:.*?)\nObservation: (Answer is (?:CORRECT|INCORRECT))\s*\nCorrect answer: (.*?)\n", block)
        if not m:
            continue
        instr, context, question, output, flag, gold = m.groups()
        out.append({"instruction": instr.strip(), "context": context, "question": question,
                    "output": output, "flag": flag, "gold": gold.strip()})
    return out


def main():
    rng = random.Random(SEED)
    cases = []
    for commit, path, model, kind, n in RUNS:
        blocks = trial1_blocks(show(commit, path))
        for bi in sorted(rng.sample(range(len(blocks)), min(n, len(blocks)))):
            b = blocks[bi]
            query = (f"{b['instruction']}\nRelevant Context: [the context given in `text`]\nQuestion: {b['question']}")
            rec = {"id": f"hotpotqa-trial1-{bi}",
                   "query": query, "text": b["context"], "answer": b["gold"]}
            src = {"repo": REPO, "commit": commit, "path": path, "item": f"trial 1, block {bi}",
                   "model": model, "model_kind": kind, "shots": "cot", "lang": "en"}
            cases.append({"task": "TaxRead", "record": rec, "output": b["output"], "source": src,
                          "hint": b["flag"]})
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            f.write(json.dumps({"id": f"noahshinn__reflexion-{i:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
