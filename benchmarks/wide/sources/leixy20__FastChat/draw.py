#!/usr/bin/env python3
"""Draw answers of five chat models to the numeric elementary-math questions of an early AlignBench
(alignment_bench) copy committed in leixy20/FastChat (Chinese; stdlib only, fixed seed)."""
import json, random, subprocess
from pathlib import Path

GIT = "/work/.mirror/leixy20+FastChat/repo"
REPO = "leixy20/FastChat"
COMMIT = "09638f5190f184974cb7bea504fb2f976dfb4c72"  # the commit that holds model_answer_pre/ (removed later)
BASE = "fastchat/llm_judge/data/alignment_bench"
HERE = Path(__file__).resolve().parent
SEED = 20261206
PER_MODEL = 20

# Golds: the number the source's reference answer (reference_answer/gpt-4-API.jsonl) arrives at, kept
# only where the grader re-derived the same number by hand; questions whose reference is wrong, that ask
# for several numbers, an expression, a set of solutions, a shape or a yes/no are left out (SOURCE.md).
GOLD = {
    338: -44.583333333333336,  # 20+5/12-10*6.5
    339: 0.148,                # 8.35/(4.7+2.8)^2, three decimals asked
    340: 3.21,                 # sin45°+log10(100)+cos60°, to 0.01 asked
    341: 80779853376,
    342: 20681315134437771537,
    344: 540, 345: 105, 346: 2000, 347: 80, 348: 10, 349: 88, 350: 270, 351: 366, 352: 694,
    354: 60,                   # percent
    355: 300, 356: 280, 357: 54, 358: 50, 359: 3, 360: 540, 362: 64, 363: 260, 364: 160, 365: 45,
    366: 460, 368: 5600, 369: 32, 370: 15, 371: 34, 374: 6,
    380: 0.17857142857142858,  # 5/28
    383: 0.578125,             # 37/64
    384: 3.3333333333333335,   # 10/3
    385: 2.6457513110645907,   # sqrt(7)
    386: 100,                  # square centimetres
    388: 4.898979485566356,    # 2*sqrt(6) cm
    399: 0.6666666666666666,   # 2/3
    401: 90, 402: 24, 405: 2520, 746: 135,
}
# Z-Bench (z_bench/) questions with one numeric answer, golds re-derived by hand as above
ZGOLD = {
    67: 7.220779220779221,     # 27.8 / 3.85 m/s^2
    78: 80779853376, 83: 24, 102: 27043, 123: 270,
    149: 1,                    # intersections of the three segments (checked by computation)
    175: 3, 176: 540, 178: 64, 179: 260, 182: 460, 183: 366, 184: 694, 187: 60, 188: 5600,
    189: 300, 190: 32, 191: 280, 192: 15, 193: 54, 194: 34, 195: 50,
}
ZMODELS = {"ChatGLM-130B-2-v0.2": ("chat", 12), "ChatGLM-130B-v0.8": ("chat", 12), "ChatGLM-130B-v0.9": ("chat", 12),
           "ChatGLM-130B-xxl-v0.1": ("chat", 12), "SenseChat": ("api", 12), "GPT-3.5": ("api", 5), "GPT-4": ("api", 5)}
MODELS = {"ChatGLM2": "chat", "ChatGLM2_6B": "chat", "ChatGLM_6B_v1": "chat", "GPT-3.5": "api", "GPT-4": "api"}

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True, check=True).stdout

def main():
    qs = {}
    for line in git("show", f"{COMMIT}:{BASE}/question.jsonl").splitlines():
        if line.strip():
            d = json.loads(line)
            qs[d["question_id"]] = d
    rng = random.Random(SEED)
    keys = sorted(GOLD)
    out = []
    for model, kind in MODELS.items():
        path = f"{BASE}/model_answer_pre/{model}.jsonl"
        ans = {}
        for line in git("show", f"{COMMIT}:{path}").splitlines():
            if line.strip():
                d = json.loads(line)
                ans[d["question_id"]] = d
        for qid in sorted(rng.sample(keys, PER_MODEL)):
            text = ans[qid]["choices"][0]["turns"][0]
            if isinstance(text, list):  # a few records store the turn as a one-element list
                assert len(text) == 1 and isinstance(text[0], str)
                text = text[0]
            out.append({
                "task": "TaxCalc",
                "record": {"id": f"alignment_bench-{qid}", "query": qs[qid]["turns"][0], "answer": GOLD[qid]},
                "output": text,
                "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": f"question_id {qid}", "model": model,
                           "model_kind": kind, "shots": "zero-shot", "lang": "zh"},
            })
    # second part: Z-Bench answers (own random stream, so the first part does not change)
    zq = {}
    for line in git("show", f"{COMMIT}:fastchat/llm_judge/data/z_bench/question.jsonl").splitlines():
        if line.strip():
            d = json.loads(line)
            zq[d["question_id"]] = d
    zrng = random.Random(SEED + 1)
    zkeys = sorted(ZGOLD)
    for model, (kind, n) in ZMODELS.items():
        path = f"fastchat/llm_judge/data/z_bench/model_answer/{model}.jsonl"
        ans = {}
        for line in git("show", f"{COMMIT}:{path}").splitlines():
            if line.strip():
                d = json.loads(line)
                ans[d["question_id"]] = d
        for qid in sorted(zrng.sample(zkeys, n)):
            text = ans[qid]["choices"][0]["turns"][0]
            if isinstance(text, list):
                assert len(text) == 1 and isinstance(text[0], str)
                text = text[0]
            out.append({
                "task": "TaxCalc",
                "record": {"id": f"z_bench-{qid}", "query": zq[qid]["turns"][0], "answer": ZGOLD[qid]},
                "output": text,
                "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": f"question_id {qid}", "model": model,
                           "model_kind": kind, "shots": "zero-shot", "lang": "zh"},
            })
    with open(HERE / "drawn.jsonl", "w", encoding="utf-8") as f:
        for k, c in enumerate(out, 1):
            f.write(json.dumps({"id": f"leixy20__FastChat-{k:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(out), "cases")

if __name__ == "__main__":
    main()
