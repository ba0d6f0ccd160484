#!/usr/bin/env python3
"""Draw GSM8K / SVAMP outputs (vanilla and CoT prompts, read once or twice) of three OpenAI models
from Tebmer/Rereading-LLM-Reasoning (stdlib only, fixed seed)."""
import json, random, subprocess
from pathlib import Path

GIT = "/work/.mirror/Tebmer+Rereading-LLM-Reasoning/repo"
REPO = "Tebmer/Rereading-LLM-Reasoning"
HERE = Path(__file__).resolve().parent
SEED = 20261206
PER_CONFIG = 7

SYS = "You are a helpful assistant."
# prompter.py: TEXT_PROMPT_GSM (used for gsm and svamp) and the methodology line per act
TEXT_PROMPT_GSM = "\nQ: {question}\n\nYour final answer should be a single numerical number, in the form \\boxed{{answer}}, at the end of your response.\n"
METHOD = {"vanilla": "", "cot": "Let's think step by step."}

# (path, model, dataset, read_times) - which file is which model / read times: results/README.md and file names
FILES = [
    ("results/gsm_topp1.0_temp0.0_majority1_20230828_141934.jsonl", "text-davinci-003", "gsm8k", 1),
    ("results/gsm_topp1.0_temp0.0_majority1_20230828_142302.jsonl", "text-davinci-003", "gsm8k", 2),
    ("results/gsm_topp1.0_temp0.0_majority1_20230828_1157.jsonl", "gpt-3.5-turbo", "gsm8k", 1),
    ("results/gsm_topp1.0_temp0.0_majority1_20230828_1200.jsonl", "gpt-3.5-turbo", "gsm8k", 2),
    ("results/gsm_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240926_221724.jsonl", "gpt-4o-mini-2024-07-18", "gsm8k", 1),
    ("results/gsm_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes2_20240926_222057.jsonl", "gpt-4o-mini-2024-07-18", "gsm8k", 2),
    ("results/svamp_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240926_223003.jsonl", "gpt-4o-mini-2024-07-18", "svamp", 1),
]

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True, check=True).stdout

def build_prompt(question, act, read_times):
    inp = " \n\nRead the question again: ".join([question] * read_times)
    return TEXT_PROMPT_GSM.format(question=inp) + f"\nA: {METHOD[act]}"

def main():
    commit = git("rev-parse", "HEAD").strip()
    rng = random.Random(SEED)
    out = []
    for path, model, dataset, rt in FILES:
        rows = [json.loads(l) for l in git("show", f"{commit}:{path}").splitlines() if l.strip()]
        for act in ("vanilla", "cot"):
            n = PER_CONFIG if dataset == "gsm8k" else 4
            for i in sorted(rng.sample(range(len(rows)), n)):
                r = rows[i]
                gen = r[act]["generation"]
                assert len(gen) == 1
                gold = r["target"]
                if isinstance(gold, float) and gold.is_integer():
                    gold = int(gold)
                out.append({
                    "task": "TaxCalc",
                    "record": {"id": f"{dataset}-{r['id']}", "query": f"[system]\n{SYS}\n\n[user]\n{build_prompt(r['input'], act, rt)}",
                               "answer": gold},
                    "output": gen[0],
                    "source": {"repo": REPO, "commit": commit, "path": path, "item": f"line {i} ({act})", "model": model,
                               "model_kind": "api", "shots": "cot" if act == "cot" else "zero-shot", "lang": "en"},
                    "hint": f"answer={r[act].get('answer')} score={r[act].get('score')}",
                })
    with open(HERE / "drawn.jsonl", "w", encoding="utf-8") as f:
        for k, c in enumerate(out, 1):
            f.write(json.dumps({"id": f"Tebmer__Rereading-LLM-Reasoning-{k:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(out), "cases")

if __name__ == "__main__":
    main()
