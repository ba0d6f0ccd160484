#!/usr/bin/env python3
"""Draw TAT-QA answers of the three TableLLM checkpoints committed in RUCKBReasoning/TableLLM into drawn.jsonl.

stdlib only. Each model's inference file (inference/results/.../Infer_tatqa.jsonl, 800 lines, one per item of
benchmark/tatqa.jsonl, same order) is read at a pinned commit of the snapshot. Items whose gold
(`reference_answer`) is a number (or a numeric string) become TaxCalc; items whose gold is a one-element list
(a single span) become TaxRead; multi-span golds are left out. From each model 35 TaxCalc and 15 TaxRead items
are drawn with a fixed seed; the source's own CritiqueLLM judgement scores (Grade_tatqa files) are the hint."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/RUCKBReasoning+TableLLM/repo"
REPO = "RUCKBReasoning/TableLLM"
PREFIX = "RUCKBReasoning__TableLLM"
SEED = 20261215
N_CALC, N_READ = 35, 15
HERE = os.path.dirname(os.path.abspath(__file__))

FIRST = "dd799239104d379cb885d635ae41d6f12e608264"  # 2024-02-07 "first commit": TLLM-7b / TLLM-13b results
HEAD = "068afdad5a166eeb17aa8de7c021550d76b8f08c"   # 2025-08-20: results of the 2025 checkpoint (TableLLM-8B)
BENCH = (FIRST, "benchmark/tatqa.jsonl")
INFER_CODE = (FIRST, "inference/inference_text.py")  # prompts = f"[INST]{data['prompt']}[/INST]" (unchanged at HEAD)

# model -> (commit, inference file, grade file)
RUNS = {
    "TableLLM-7b": (FIRST, "inference/results/TLLM-7b/Infer_tatqa.jsonl", "inference/results/TLLM-7b/Grade_tatqajsonl"),
    "TableLLM-13b": (FIRST, "inference/results/TLLM-13b/Infer_tatqa.jsonl", "inference/results/TLLM-13b/Grade_tatqa.jsonl"),
    "TableLLM-8B": (HEAD, "inference/results/Infer_tatqa.jsonl", "inference/results/Grade_tatqa.jsonl"),
}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def jsonl(commit, path):
    return [json.loads(line) for line in git(commit, path).splitlines() if line.strip()]


def number(gold):
    if isinstance(gold, bool):
        return None
    if isinstance(gold, (int, float)):
        return gold
    if isinstance(gold, str) and re.fullmatch(r"-?\d+(\.\d+)?", gold.strip()):
        x = float(gold)
        return int(x) if x == int(x) and "." not in gold else x
    return None


def hint_of(grade):
    scores = []
    for j in grade.get("judgement") or []:
        m = re.match(r"\s*\[\[(\d+(?:\.\d+)?)\]\]", j)
        scores.append(m.group(1) if m else "?")
    if scores:
        return "CritiqueLLM judge scores (1-10): " + ",".join(scores)
    if grade.get("score") not in (None, ""):  # the 2025 Grade file keeps one judge score from 0 to 1
        return "source judge score (0-1): %s" % grade["score"]
    return None


def main():
    assert "[INST]{data['prompt']}[/INST]" in git(*INFER_CODE)
    bench = jsonl(*BENCH)
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        commit, path, gpath = RUNS[model]
        outs = jsonl(commit, path)
        grades = jsonl(commit, gpath)
        assert len(outs) == len(bench) == len(grades) == 800
        calc, read = [], []
        for i, (b, o, g) in enumerate(zip(bench, outs, grades)):
            assert b["question"] == o["question"] == g["question"]
            assert g["assistant_answer"] == o["assistant_answer"]
            if not o["assistant_answer"].strip():
                continue
            gold = o["reference_answer"]
            n = number(gold)
            if n is not None:
                calc.append((i, n))
            elif isinstance(gold, list) and len(gold) == 1 and str(gold[0]).strip():
                read.append((i, str(gold[0]).strip()))
        for i, gold in rng.sample(calc, N_CALC) + [("R", x) for x in rng.sample(read, N_READ)]:
            if i == "R":
                (i, gold), task = gold, "TaxRead"
            else:
                task = "TaxCalc"
            b, o = bench[i], outs[i]
            rec = {"id": "benchmark/tatqa.jsonl#%d:%s" % (i, b["id"]), "query": "[INST]" + o["prompt"] + "[/INST]",
                   "answer": gold}
            if task == "TaxRead":
                passage = b["table_in_csv"]
                if b.get("text"):
                    passage += "\n" + b["text"]
                rec["text"] = passage
            src = {"repo": REPO, "commit": commit, "path": path, "item": "%d:%s" % (i, b["id"]), "model": model,
                   "model_kind": "domain", "shots": "zero-shot", "lang": "en"}
            case = {"task": task, "record": rec, "output": o["assistant_answer"], "source": src}
            h = hint_of(grades[i])
            if h:
                case["hint"] = h
            drawn.append(case)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, case in enumerate(drawn, 1):
            case = {"id": "%s-%04d" % (PREFIX, n), **case}
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
