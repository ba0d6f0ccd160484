#!/usr/bin/env python3
"""Draw text-davinci-002 outputs on five arithmetic word-problem sets (zero-shot and zero-shot-CoT)
from the logs of kojima-takeshi188/zero_shot_cot (stdlib only, fixed seed)."""
import json, random, re, subprocess
from pathlib import Path

GIT = "/work/.mirror/kojima-takeshi188+zero_shot_cot/repo"
REPO = "kojima-takeshi188/zero_shot_cot"
HERE = Path(__file__).resolve().parent
SEED = 20261206
DATASETS = ["gsm8k", "svamp", "multiarith", "addsub", "singleeq"]
N_COT, N_DIRECT = 12, 4
COT = "Let's think step by step."
TRIG_COT = "\nTherefore, the answer (arabic numerals) is"   # stage-2 trigger appended after the reasoning
TRIG_DIRECT = "The answer (arabic numerals) is"

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True, check=True).stdout

def blocks(text):
    """Yield (index, question, answer_text, pred_before, gt) per logged item."""
    parts = re.split(r"\n\*{25}\n(?=\d+(?:st|nd|rd|th) data\n)", text)
    for p in parts[1:]:
        m = re.match(r"(\d+)(?:st|nd|rd|th) data\n1_th_sampling\nQ: (.*?)\nA: (.*)\npred_before : (.*?)\npred_after : .*?\nGT : (.*?)\n", p, re.S)
        if not m:
            continue
        yield int(m.group(1)), m.group(2), m.group(3), m.group(4), m.group(5)

def num(s):
    v = float(s.replace(",", ""))
    return int(v) if v.is_integer() else v

def main():
    commit = git("rev-parse", "HEAD").strip()
    rng = random.Random(SEED)
    out = []
    for ds in DATASETS:
        for method, n in (("zero_shot_cot", N_COT), ("zero_shot", N_DIRECT)):
            if ds == "multiarith" and method == "zero_shot":
                continue  # this log is written in an older layout without item numbers: left out
            path = f"log/{ds}_{method}.log"
            items = list(blocks(git("show", f"{commit}:{path}")))
            for idx in sorted(rng.sample(range(len(items)), n)):
                k, q, a, pred_before, gt = items[idx]
                if method == "zero_shot_cot":
                    assert a.startswith(COT), (path, k)
                    body = a[len(COT):]
                    cut = body.rfind(TRIG_COT)
                    assert cut >= 0 and body[cut - 1] == " ", (path, k)
                    output = body[:cut - 1]              # stage-1 reasoning z (the code adds one space before the trigger)
                    query = f"Q: {q}\nA: {COT}"
                    shots = "cot"
                else:
                    assert a.startswith(TRIG_DIRECT), (path, k)
                    output = a[len(TRIG_DIRECT):]
                    query = f"Q: {q}\nA: {TRIG_DIRECT}"
                    shots = "zero-shot"
                out.append({
                    "task": "TaxCalc",
                    "record": {"id": f"{ds}-{k}", "query": query, "answer": num(gt)},
                    "output": output,
                    "source": {"repo": REPO, "commit": commit, "path": path, "item": f"{k}th data", "model": "text-davinci-002",
                               "model_kind": "api", "shots": shots, "lang": "en"},
                    "hint": f"stage-2 answer after '{TRIG_COT.strip()}': {pred_before.strip()}" if method == "zero_shot_cot"
                            else f"source's cleansed prediction from this output",
                })
    with open(HERE / "drawn.jsonl", "w", encoding="utf-8") as f:
        for i, c in enumerate(out, 1):
            f.write(json.dumps({"id": f"kojima-takeshi188__zero_shot_cot-{i:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(out), "cases")

if __name__ == "__main__":
    main()
