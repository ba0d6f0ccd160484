#!/usr/bin/env python3
"""Draw MathCAMPS model responses published in gpoesia/mathcamps (the project website's per-model,
per-standard pages, www/models/<model>/<standard>/index.html) into drawn.jsonl.

stdlib only. Every model folder whose pages hold responses is one model (25). Only original problems
(not follow-up turns) whose expected answer is one number (integer, decimal or fraction a/b) are used
(TaxCalc). From each model 6 cases are drawn with a fixed seed: 4 from all its eligible responses and 2
more from those the source marks incorrect ("Correct? No"), so that wrong and malformed outputs are
represented."""
import html, json, os, random, re, subprocess
from fractions import Fraction

GIT = "/work/.mirror/gpoesia+mathcamps/repo"
COMMIT = "46593eb08001e0aa084a0a839195ce0a4615a45b"
REPO = "gpoesia/mathcamps"
PREFIX = "gpoesia__mathcamps"
SEED = 20261209
HERE = os.path.dirname(os.path.abspath(__file__))
PER_MODEL_ALL, PER_MODEL_WRONG = 4, 2

# model -> (model_kind, prompted as a completion LM with the "|role| ... @@@" format?)
KIND = {
    "claude-3-opus-20240229": ("api", False), "claude-3-sonnet-20240229": ("api", False),
    "claude-3-haiku-20240307": ("api", False), "gemini-1.5-pro-001": ("api", False),
    "gemini-1.5-flash-001": ("api", False), "gpt-4o-2024-05-13": ("api", False),
    "gpt-3.5-turbo-0125": ("api", False),
    "deepseek-ai/deepseek-coder-33b-instruct": ("chat", False), "deepseek-ai/deepseek-llm-67b-chat": ("chat", False),
    "codellama/CodeLlama-7b-Instruct-hf": ("chat", False), "codellama/CodeLlama-13b-Instruct-hf": ("chat", False),
    "codellama/CodeLlama-34b-Instruct-hf": ("chat", False), "meta-llama/Llama-3-8b-chat-hf": ("chat", False),
    "meta-llama/Llama-3-70b-chat-hf": ("chat", False), "google/gemma-2b-it": ("chat", False),
    "google/gemma-7b-it": ("chat", False), "mistralai/Mistral-7B-Instruct-v0.3": ("chat", False),
    "mistralai/Mixtral-8x7B-Instruct-v0.1": ("chat", False), "mistralai/Mixtral-8x22B-Instruct-v0.1": ("chat", False),
    "microsoft/phi-2": ("base", True), "EleutherAI/llemma_7b": ("base", True),
    "deepseek-ai/deepseek-math-7b-base": ("base", True), "internlm/internlm2-math-base-7b": ("base", True),
    "internlm/internlm2-math-base-20b": ("base", True), "Qwen/Qwen2-Math-7B": ("base", True),
    "Qwen/Qwen2-Math-72B": ("base", True), "AI-MO/NuminaMath-7B-TIR": ("domain", True),
}

PAT = re.compile(
    r'<div\s+class="model-response( model-response-followup)?"\s+id="([^"]+)"\s*>\s*<p>\s*'
    r'<span class="response-field">Problem:</span>(.*?)</p>.*?<pre class="model-raw-response">(.*?)</pre>\s*<p>\s*'
    r'<span class="response-field">Expected answer:</span>(.*?)</p>\s*<p>\s*'
    r'<span class="response-field">Correct\?</span>\s*<span class="[^"]*">(.*?)</span>', re.S)


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def gold_number(e):
    if re.fullmatch(r"-?\d+", e):
        return int(e)
    if re.fullmatch(r"-?\d*\.\d+", e):
        x = float(e)
        return int(x) if x == int(x) else round(x, 10)
    if re.fullmatch(r"-?\d+/\d+", e):
        x = Fraction(e)
        return int(x) if x.denominator == 1 else round(float(x), 10)
    return None


def build_query(system, statement, completion):
    if completion:  # evaluate.format_prompt_for_completion_lm, the one demonstration left out
        return "|system| %s\n@@@\n|user| %s\n@@@\n|assistant|" % (system, statement)
    return system + "\n\n" + statement


def main():
    system = json.loads(git("show", COMMIT + ":prompts/eval_prompt.json"))[0]["content"]
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "www/models/").decode().split("\n")
             if f.endswith("/index.html") and f.count("/") >= 4]
    pools = {}
    for f in sorted(files):
        model = "/".join(f.split("/")[2:-2])
        if model not in KIND:
            continue  # e.g. the "Model(vendor=...)" folder, which holds no responses
        raw = git("show", COMMIT + ":" + f).decode("utf-8", "replace")
        for m in PAT.finditer(raw):
            if m.group(1):
                continue  # follow-up turn: its prompt holds the model's own earlier answer
            exp = html.unescape(m.group(5).strip())
            g = gold_number(exp)
            if g is None:
                continue  # comparisons (<, >, =), systems of equations, lists of factor pairs
            pools.setdefault(model, []).append(dict(
                path=f, id=m.group(2), problem=html.unescape(m.group(3).strip()),
                output=html.unescape(m.group(4)), exp=exp, gold=g, correct=m.group(6).strip()))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = sorted(pools[model], key=lambda x: x["id"])
        chosen = rng.sample(pool, PER_MODEL_ALL)
        ids = {x["id"] for x in chosen}
        wrong = [x for x in pool if x["correct"] == "No" and x["id"] not in ids]
        chosen += rng.sample(wrong, PER_MODEL_WRONG)
        kind, completion = KIND[model]
        for x in chosen:
            rec = {"id": "%s#%s" % (x["path"], x["id"]), "query": build_query(system, x["problem"], completion),
                   "answer": x["gold"]}
            src = {"repo": REPO, "commit": COMMIT, "path": x["path"], "item": x["id"], "model": model,
                   "model_kind": kind, "shots": "few-shot", "lang": "en", "expected_answer_text": x["exp"]}
            drawn.append(("TaxCalc", rec, x["output"], src, "source graded correct: " + x["correct"]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(pools), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
