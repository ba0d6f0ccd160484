#!/usr/bin/env python3
"""Draw InstructGPT paper samples (openai/following-instructions-human-feedback) for hand grading.

The repository's `automatic-eval-samples/` CSVs hold, for 12 models (GPT-3 1.3B/6B/175B, their SFT
and PPO / PPO-ptx fine-tunes) and two prompt settings (zeroshot, fewshot), one sample per item of
100 SQuAD v2 items and 100 DROP items: `context` (the final item's prompt), `ref_text` (gold answers,
alternatives joined by '|') and `sample` (the model's completion, verbatim).

Stdlib only; reads the snapshot with `git show COMMIT:PATH`; fixed seed; N items per
(dataset, model, prompt setting) cell, drawn at random without looking at the samples.
"""
import csv, io, json, os, random, re, subprocess

GIT = os.environ.get("IGPT_GIT", "/work/.mirror/openai+following-instructions-human-feedback/repo")
REPO = "openai/following-instructions-human-feedback"
COMMIT = "5c0534c78136809ab0118c5c1b74d159befa2467"
SEED = 20261206
N = 3
HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"squadv2": "automatic-eval-samples/squadv2_samples.csv",
         "drop": "automatic-eval-samples/drop_samples.csv"}
MODELS = ["gpt-xl", "gpt-6b", "gpt-175b", "sft-xl", "sft-6b", "sft-175b",
          "ppo-ptx-xl", "ppo-ptx-6b", "ppo-ptx-175b", "ppo-noptx-xl", "ppo-noptx-6b", "ppo-noptx-175b"]
LABEL = {"gpt": "GPT-3", "sft": "InstructGPT-SFT", "ppo-ptx": "InstructGPT-PPO-ptx", "ppo-noptx": "InstructGPT-PPO"}
SIZE = {"xl": "1.3B", "6b": "6B", "175b": "175B"}
SHOTS = {"zeroshot": "zero-shot", "fewshot": "few-shot"}
MARK = "[the passage given in `text`]"
NUM = re.compile(r"-?\d+(\.\d+)?")


def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")


def label(model_type):
    fam, size = model_type.rsplit("-", 1)
    return f"{LABEL[fam]}-{SIZE[size]} ({model_type})"


def record(ds, item, ctx, ref):
    alts = [a.strip() for a in ref.split("|") if a.strip()]
    if ds == "squadv2":
        m = re.search(r"\nBackground: (.*?)\n\nQ:", ctx, re.S)
        passage = m.group(1)
        query = ctx.replace("Background: " + passage, "Background: " + MARK, 1)
        return "TaxRead", {"id": f"squadv2-{item}", "query": query, "text": passage,
                           "answer": alts[0], "answers": alts}
    m = re.match(r"Passage: (.*?)\nQuestion:", ctx, re.S)
    passage = m.group(1)
    nums = [a for a in alts if NUM.fullmatch(a)]
    if NUM.fullmatch(alts[0]) and len({float(a) for a in nums}) == 1:
        v = float(alts[0])
        return "TaxCalc", {"id": f"drop-{item}", "query": ctx, "answer": int(v) if v == int(v) else v,
                           "answers": alts}
    query = ctx.replace("Passage: " + passage, "Passage: " + MARK, 1)
    return "TaxRead", {"id": f"drop-{item}", "query": query, "text": passage, "answer": alts[0], "answers": alts}


def main():
    rng = random.Random(SEED)
    cases = []
    for ds, path in FILES.items():
        rows = list(csv.DictReader(io.StringIO(show(path))))
        for model in MODELS:
            for pt in ("zeroshot", "fewshot"):
                cell = [r for r in rows if r["model_type"] == model and r["prompt_type"] == pt]
                assert len(cell) == 100, (ds, model, pt, len(cell))
                for item in sorted(rng.sample(range(100), N)):
                    r = cell[item]
                    task, rec = record(ds, item, r["context"], r["ref_text"])
                    src = {"repo": REPO, "commit": COMMIT, "path": path,
                           "item": f"row {r['']} ({ds} item {item}, {model}, {pt})",
                           "model": label(model), "model_kind": "base" if model.startswith("gpt-") else "chat",
                           "shots": SHOTS[pt], "lang": "en"}
                    cases.append({"task": task, "record": rec, "output": r["sample"], "source": src})
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            f.write(json.dumps({"id": f"openai__following-instructions-human-feedback-{i:04d}", **c},
                               ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
