#!/usr/bin/env python3
"""Draw CLIcK (Korean cultural and linguistic multiple choice) model responses committed in
hsr87/evaluate-llm-on-korean-dataset into drawn.jsonl.

stdlib only. The results CSVs (`results/[CLIcK] MODEL.csv`: id, trial, answer, pred, response) hold the
model's stripped response text; the questions come from the CLIcK benchmark's own repository
(rladmstn1714/CLIcK, Dataset/**/*.json, matched on `id`). Every CLIcK results file is one run; rows whose
response is an error placeholder of the harness (BAD_REQUEST_ERROR, CONTENT_FILTER_ERROR, [EMPTY_RESPONSE],
...) or whose pred is FAILED/FILTERED are left out, and so are ids duplicated in the CLIcK data or whose gold
letter does not match the data. From each run a fixed number of rows is drawn with a fixed seed; where a run
has responses longer than one character, about half of its cases are drawn from those (runs whose
responses are mostly longer are drawn at random); 10 cases from a run with at least 40 longer responses, 6
from one with 3 to 39, 4 from a run of bare letters only."""
import csv, io, json, os, random, subprocess

GIT = "/work/.mirror/hsr87+evaluate-llm-on-korean-dataset/repo"
COMMIT = "dc312a71d407d47c9979fdd02a8d19693f3b40dc"
DATA_GIT = "/work/.mirror/rladmstn1714+CLIcK/repo"
DATA_COMMIT = "38373acdf73a11e9fbf3667747da61021439d7b7"
REPO = "hsr87/evaluate-llm-on-korean-dataset"
PREFIX = "hsr87__evaluate-llm-on-korean-dataset"
SEED = 20261210
HERE = os.path.dirname(os.path.abspath(__file__))
PLACEHOLDERS = {"BAD_REQUEST_ERROR", "CONTENT_FILTER_ERROR", "[EMPTY_RESPONSE]", "RATE_LIMIT", "THROTTLING",
                "FAILED", "FILTERED", ""}


def git(d, *a):
    return subprocess.run(["git", "--git-dir", d] + list(a), check=True, capture_output=True).stdout


def kind_of(model):
    if model.startswith(("gpt-5-mini", "gpt-5-nano", "gpt-5.1-2", "gpt-51-medium", "gpt-5.2", "gpt-oss")) \
            or "medium" in model or model.startswith("gpt-5.1-2025"):
        return "reasoning"
    if model.startswith(("phi-", "llama-", "qwen3")):
        return "chat"
    return "api"


# prompts as in config/prompts.py and config/question_templates.py at COMMIT
def letters(n):
    return ", ".join(chr(65 + i) for i in range(n - 1)) + ", or " + chr(65 + n - 1)


def direct_prompt(n):
    ex = ["A", chr(65 + n // 2), chr(65 + n - 1)]
    return ("CRITICAL: You MUST respond with EXACTLY ONE LETTER ONLY (%s).\n\n"
            "ABSOLUTELY NO explanations, reasoning, or additional text.\n\nJust the letter. Period.\n\n"
            "Examples of CORRECT responses:\n%s\n\nExamples of WRONG responses (NEVER do this):\n"
            "- \"A. The answer is...\"\n- \"I think the answer is C\"\n- \"C\\n\\nBecause...\"\n- \"Answer: B\"\n"
            "- \"The correct choice is D\"\n\nRESPOND WITH ONLY ONE LETTER.") % (letters(n), "\n".join(ex))


def reasoning_prompt(n, effort):
    ins = {"low": "Keep your reasoning CONCISE (2-3 sentences maximum)",
           "medium": "Provide clear reasoning (3-4 sentences maximum)"}[effort]
    return ("You are a multiple-choice question answerer. Your task is to analyze the question carefully and select "
            "the single best answer.\n\nINSTRUCTIONS:\n1. %s\n2. After reasoning, provide your answer in the format: "
            "### ANSWER followed by a single letter\n3. Your answer must be ONLY one uppercase letter: %s\n\n"
            "CORRECT OUTPUT FORMAT:\n[Reasoning based on %s effort level]\n\n### ANSWER\nA\n\n"
            "INCORRECT OUTPUT EXAMPLES:\n- \"C\"\n- The answer is C\n- C.\n- Answer: C\n- (C)\n- [C]\n- ```C```\n\n"
            "Remember: Follow the %s reasoning level and always use ### ANSWER format.") % (ins, letters(n), effort, effort)


def question_prompt(x):
    n = len(x["choices"])
    opts = ", ".join(chr(65 + i) for i in range(n - 1)) + ", " + chr(65 + n - 1)
    fmt = ", ".join("%s: %s" % (chr(65 + i), c) for i, c in enumerate(x["choices"]))
    if x["paragraph"]:
        return ("<instruction>\nYou are taking a multiple choice exam. Read the context carefully, then select the single "
                "correct answer from the choices provided and respond with ONLY the letter (%s). Do not include any "
                "explanation or additional text.\n</instruction>\n\n<context>\n%s\n</context>\n\n<question>%s</question>"
                "\n\n<choices>\n%s\n</choices>\n\n<answer>") % (opts, x["paragraph"], x["question"], fmt)
    return ("<instruction>\nYou are taking a multiple choice exam. Select the single correct answer from the choices "
            "provided and respond with ONLY the letter (%s). Do not include any explanation or additional text.\n"
            "</instruction>\n\n<question>%s</question>\n\n<choices>\n%s\n</choices>\n\n<answer>") % (opts, x["question"], fmt)


def load_click():
    recs, dup = {}, set()
    for f in git(DATA_GIT, "ls-tree", "-r", "--name-only", DATA_COMMIT).decode().split("\n"):
        if not f.endswith(".json"):
            continue
        for r in json.loads(git(DATA_GIT, "show", "%s:%s" % (DATA_COMMIT, f))):
            if r["id"] in recs:
                dup.add(r["id"])
            recs[r["id"]] = dict(r, _path=f)
    return {k: v for k, v in recs.items() if k not in dup}


def main():
    click = load_click()
    files = sorted(f for f in git(GIT, "ls-tree", "-r", "--name-only", COMMIT, "results/").decode().split("\n")
                   if f.startswith("results/[CLIcK] ") and f.endswith(".csv"))
    rng = random.Random(SEED)
    drawn = []
    for f in files:
        model = f[len("results/[CLIcK] "):-len(".csv")]
        rows = list(csv.DictReader(io.StringIO(git(GIT, "show", "%s:%s" % (COMMIT, f)).decode("utf-8"))))
        pool = []
        for i, r in enumerate(rows):
            resp = r["response"] or ""
            if resp.strip() in PLACEHOLDERS or r["pred"] in ("FAILED", "FILTERED"):
                continue
            x = click.get(r["id"])
            if x is None:
                continue
            ch = [c.strip() for c in x["choices"]]
            if x["answer"].strip() not in ch or not 2 <= len(ch) <= 10:
                continue
            g = ch.index(x["answer"].strip())
            if chr(65 + g) != r["answer"]:
                continue
            pool.append((i, r, x, g))
        if not pool:
            continue
        longp = [p for p in pool if len(p[1]["response"].strip()) > 1]
        shortp = [p for p in pool if len(p[1]["response"].strip()) <= 1]
        n = 10 if len(longp) >= 40 else 6 if len(longp) >= 3 else 4
        if os.environ.get("DRAW_DEBUG"):
            print(model, len(pool), len(longp), len(shortp), n)
        if len(longp) > len(shortp):
            pick = rng.sample(pool, n)
        else:
            k_long = min(len(longp), n // 2)
            pick = rng.sample(longp, k_long) + rng.sample(shortp, n - k_long)
        any_hash = any("### ANSWER" in p[1]["response"] for p in longp)
        kind = kind_of(model)
        for i, r, x, g in pick:
            n_ch = len(x["choices"])
            if any_hash:
                sysp = reasoning_prompt(n_ch, "low" if "-low-" in model else "medium")
            else:
                sysp = direct_prompt(n_ch)
            query = sysp + "\n\n" + question_prompt(x)
            choices = [c for c in x["choices"]]
            rec = {"id": "CLIcK#" + x["id"], "query": query, "choices": choices, "gold": g, "answer": choices[g]}
            drawn.append(("TaxSCQ", rec, r["response"], {
                "repo": REPO, "commit": COMMIT, "path": f, "item": "%d:%s" % (i, x["id"]), "model": model,
                "model_kind": kind, "shots": "zero-shot", "lang": "ko"}, r["pred"]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, pred) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": "harness pred: %s" % pred}, ensure_ascii=False) + "\n")
    print(len(files), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
