#!/usr/bin/env python3
"""Draw ACG-SimpleQA replies committed in xixixiaoyu/ACG-SimpleQA into drawn.jsonl.

stdlib only. ACG-SimpleQA is a Chinese SimpleQA-style set of short factual questions on anime, comics and games
(gold = a short span). The repository commits one result file per model run (`details`: question, gold_answer,
predicted_answer, the harness's own grade). Six runs of six different models are used (one file a model); from each,
25 rows with a non-empty reply are drawn with a fixed seed, and every case is a TaxRead record with an empty passage
(closed-book question). All files are read at the pinned HEAD commit; the prompt text is rebuilt from the harness that
wrote each file (see SOURCE.md)."""
import json, os, random, subprocess

GIT = "/work/.mirror/xixixiaoyu+ACG-SimpleQA/repo"
REPO = "xixixiaoyu/ACG-SimpleQA"
PREFIX = "xixixiaoyu__ACG-SimpleQA"
SEED = 20261217
HEAD = "198147aa96c5454fb877b4158e5b6778cd1cdfd7"
N_PER_MODEL = 25
HERE = os.path.dirname(os.path.abspath(__file__))

# harness commits (where the prompt text is read from)
C_DFB = "dfbfbb2c0223b33aa34ed9514d20603159b917a7"   # acg_simpleqa_eval.py used for the deepseek-v4-pro 300 run
C_B77 = "b77754ba365ba14de32514feffdeeda40a90cfe0"   # acg_simpleqa_eval.py (final version): glm-5.1, gemini runs
C_3C7 = "3c79151f35c39f659f70e7ff8cb4f51be56d0b1b"   # eval_cli.py (opencode CLI): kimi-k2.6, qwen3.7-max

# model -> (result file at HEAD, harness style, (commit, harness path), model_kind)
RUNS = {
    "deepseek-v4-pro": ("results_300_dsv4pro.json", "api", (C_DFB, "acg_simpleqa_eval.py"), "chat"),
    "glm-5.1": ("results_300_glm51.json", "api", (C_B77, "acg_simpleqa_eval.py"), "reasoning"),
    "kimi-k2.6": ("results_300_kimi-k2.6.json", "cli", (C_3C7, "eval_cli.py"), "reasoning"),
    "qwen3.7-max": ("results_300_qwen3.7-max.json", "cli", (C_3C7, "eval_cli.py"), "api"),
    "gemini-3.5-flash": ("results_gemini35flash_500.json", "api", (C_B77, "acg_simpleqa_eval.py"), "api"),
    "gemini-3-flash-preview": ("results_gemini3flash_500.json", "api", (C_B77, "acg_simpleqa_eval.py"), "api"),
}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def py_string(src, name):
    """The value of a module-level string constant NAME = \"\"\"...\"\"\" or \"...\" in the harness source."""
    import ast
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError(name)


def build_query(style, src, question):
    if style == "api":  # system message + user message = the bare question
        return py_string(src, "CHINESE_SYSTEM_PROMPT") + "\n\n" + question
    # opencode CLI: one input text f"{PROMPT}\n\n问题：{question}"
    return py_string(src, "PROMPT") + "\n\n问题：" + question


def main():
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        path, style, (pc, pp), kind = RUNS[model]
        data = json.loads(git(HEAD, path))
        src = git(pc, pp)
        details = data["details"]
        pool = [i for i, r in enumerate(details) if r["predicted_answer"].strip()]
        for i in rng.sample(pool, N_PER_MODEL):
            r = details[i]
            rec = {"id": "%s#details[%d]" % (path, i), "query": build_query(style, src, r["question"]),
                   "text": "", "answer": r["gold_answer"]}
            if "grade" in r:
                hint = "source grader (%s): %s" % (data["config"].get("grader_model", "?"), r["grade"])
            else:
                hint = "source is_correct: %s" % json.dumps(r["is_correct"])
            src_rec = {"repo": REPO, "commit": HEAD, "path": path, "item": "details[%d] category=%s" % (i, r["category"]),
                       "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "zh",
                       "prompt_from": "%s:%s" % (pc, pp)}
            drawn.append(("TaxRead", rec, r["predicted_answer"], src_rec, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (t, rec, output, src_rec, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src_rec, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(RUNS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
