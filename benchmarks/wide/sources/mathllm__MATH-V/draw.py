#!/usr/bin/env python3
"""Draw MATH-Vision (MATH-V) model outputs committed in mathllm/MATH-V into drawn.jsonl.

stdlib only. Every outputs/**/*.jsonl run whose blob is present in the snapshot (15 model runs; the
Random-Chance baseline is not a model and is left out) gives cases: 16 from each of the 5 step-by-step
(CoT) runs, 7 from each of the 10 short-answer runs (4 drawn at random, 3 drawn among outputs longer
than 20 characters, so that the few longer outputs of those runs are represented). Items: questions
with 5 options -> TaxSCQ; questions without options whose gold is a plain number -> TaxCalc; the 94
questions whose gold is a closed form or expression (fractions, roots, pi) are left out."""
import json, os, random, subprocess

GIT = "/work/.mirror/mathllm+MATH-V/repo"
COMMIT = "a1f5cc3add200c0cd080fad463e500f44ef1fb41"
REPO = "mathllm/MATH-V"
PREFIX = "mathllm__MATH-V"
SEED = 20261209
HERE = os.path.dirname(os.path.abspath(__file__))

# Prompts, from models/GPT4.py, models/Qwen-VL.py, models/GPT4V.py, models/Gemini.py,
# models/GPT_with_caption.py at COMMIT. The open-source models' scripts are not in the repository;
# their short-answer runs are given the repository's short-answer prompt (models/Qwen-VL.py).
COT = ('Please solve the problem step by step and put your answer in one "\\boxed{}". '
       'If it is a multiple choice question, only one letter is allowed in the "\\boxed{}".\n')
GEMINI_COT = ("Please first solve the problem step by step, then put your final answer or a single letter "
              "(if it is a multiple choice question) in one \"\\boxed{}\". \n")
GEMINI_SHORT = "Answer the question using a single letter or number or word. \n"
SHORT_TAIL = "\nAnswer the question using a single word or phrase."
CAPTION = ("Please first solve the problem step by step, then put your final answer or a single letter "
           "(if it is a multiple choice question) in one \"\\boxed{}\". \n"
           "Here is the natural description of the figure, please solve the following problem based on the "
           "description: \n[GPT-4V description of the figure; not stored in the repository]\n\nThe problem is: \n")

# path -> (model_kind, shots, prompt style, cases)
RUNS = {
    "outputs/closed-source/GPT/ChatGPT3.5-CoT (Text+Image Caption).jsonl": ("api", "cot", "caption", 16),
    "outputs/closed-source/GPT/GPT4-CoT (Text Only).jsonl": ("api", "cot", "cot_text", 16),
    "outputs/closed-source/Gemini/Gemini-Pro-CoT.jsonl": ("api", "cot", "gemini_cot", 16),
    "outputs/closed-source/Qwen/Qwen-VL-Max-CoT.jsonl": ("api", "cot", "cot", 16),
    "outputs/open-source/Internlm/InternLM-XComposer2-VL-CoT.jsonl": ("chat", "cot", "cot", 16),
    "outputs/closed-source/Gemini/Gemini-Pro.jsonl": ("api", "zero-shot", "gemini_short", 7),
    "outputs/closed-source/Qwen/Qwen-VL-Max.jsonl": ("api", "zero-shot", "short", 7),
    "outputs/closed-source/Qwen/Qwen-VL-Plus.jsonl": ("api", "zero-shot", "short", 7),
    "outputs/open-source/Internlm/InternLM-XComposer2-VL.jsonl": ("chat", "zero-shot", "short", 7),
    "outputs/open-source/LLavA/LLaVA-v1.5-13B.jsonl": ("chat", "zero-shot", "short", 7),
    "outputs/open-source/LLavA/LLaVA-v1.5-7B.jsonl": ("chat", "zero-shot", "short", 7),
    "outputs/open-source/ShereGPT4V/ShareGPT4V-13B.jsonl": ("chat", "zero-shot", "short", 7),
    "outputs/open-source/ShereGPT4V/ShareGPT4V-7B.jsonl": ("chat", "zero-shot", "short", 7),
    "outputs/open-source/Sphinx/SPHINX-MoE.jsonl": ("chat", "zero-shot", "short", 7),
    "outputs/open-source/Sphinx/SPHINX-v2.jsonl": ("chat", "zero-shot", "short", 7),
}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def jsonl(path):
    return [json.loads(l) for l in git("show", "%s:%s" % (COMMIT, path)).decode().split("\n") if l.strip()]


def options_text(ex):
    if ex["options"] and "".join(ex["options"]) != "ABCDE":
        return "".join("(%s) %s\n" % (l, o) for l, o in zip("ABCDE", ex["options"]))
    return ""


def build_query(style, ex):
    q, opts = ex["question"], options_text(ex)
    if style == "cot":
        return COT + "%s\n%s" % (q, opts)
    if style == "cot_text":  # text only: the <imageN> tags were removed
        s = COT + "%s\n%s" % (q, opts)
        for i in range(10):
            s = s.replace("<image%d>" % i, "")
        return s.strip()
    if style == "gemini_cot":
        return GEMINI_COT + q + ("\n" + opts if opts else "")
    if style == "gemini_short":
        return GEMINI_SHORT + q + ("\n" + opts if opts else "")
    if style == "caption":
        return CAPTION + q + ("\n" + opts if opts else "")
    return "%s\n%s%s" % (q, opts, SHORT_TAIL)


def num(a):
    x = float(a)
    return int(x) if x == int(x) else x


def record(ex, style):
    query = build_query(style, ex)
    if ex["options"]:
        if len(ex["options"]) != 5 or ex["answer"] not in "ABCDE" or len(ex["answer"]) != 1:
            return None
        choices = list(ex["options"])
        g = "ABCDE".index(ex["answer"])
        return "TaxSCQ", {"id": "test#%s" % ex["id"], "query": query, "choices": choices, "gold": g,
                          "answer": choices[g]}
    try:
        v = num(ex["answer"])
    except ValueError:
        return None
    return "TaxCalc", {"id": "test#%s" % ex["id"], "query": query, "answer": v}


def main():
    data = {ex["id"]: ex for ex in jsonl("data/test.jsonl")}
    rng = random.Random(SEED)
    drawn = []
    for path in sorted(RUNS):
        kind, shots, style, n = RUNS[path]
        rows = [r for r in jsonl(path) if r["id"] in data and record(data[r["id"]], style)]
        picks = []
        if shots == "cot":
            picks = rng.sample(rows, n)
        else:
            picks = rng.sample(rows, 4)
            longer = [r for r in rows if len(r["response"] or "") > 20 and r not in picks]
            picks += rng.sample(longer, min(3, len(longer)))
            rest = [r for r in rows if r not in picks]
            picks += rng.sample(rest, n - len(picks))
        for r in picks:
            ex = data[r["id"]]
            task, rec = record(ex, style)
            drawn.append((task, rec, r["response"], {
                "repo": REPO, "commit": COMMIT, "path": path, "item": "id=%s;image=%s;subject=%s;level=%s" % (
                    r["id"], ex["image"], ex["subject"], ex["level"]),
                "model": r["model"], "model_kind": kind, "shots": shots, "lang": "en"},
                "source's extracted answer: %r; correct: %s" % (r.get("model_answer"), r.get("correct"))))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for i, (task, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, i), "task": task, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(RUNS), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
