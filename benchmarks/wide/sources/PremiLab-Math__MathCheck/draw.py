#!/usr/bin/env python3
"""Draw MathCheck (GSM and GEO checklist) model predictions committed in PremiLab-Math/MathCheck into drawn.jsonl.

stdlib only. Every results file whose blob is present in the snapshot is one model run; from each run
6 cases are drawn with a fixed seed: 2 problem-solving items (TaxCalc), 1 outcome-judging item
(TaxSCQ Correct/Incorrect), 1 answerable-judging item (TaxSCQ Answerable/Unanswerable), 1
process-judging item (TaxCalc: the number of the first wrong step) and 1 more judging item
(outcome or answerable, drawn)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/PremiLab-Math+MathCheck/repo"
COMMIT = "fc0454ed5333b5e33d70760a03fc8c5d33814491"
REPO = "PremiLab-Math/MathCheck"
PREFIX = "PremiLab-Math__MathCheck"
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))

# model name -> (model_kind, shots)
KIND = {
    "claude-3-haiku-20240307": ("api", "zero-shot"), "claude-3-opus-20240229": ("api", "zero-shot"),
    "claude-3-sonnet-20240229": ("api", "zero-shot"), "claude-3-5-sonnet-20240620": ("api", "zero-shot"),
    "cogvlm-2": ("chat", "zero-shot"), "gemini-1.5-flash": ("api", "zero-shot"),
    "gemini-1.5-pro": ("api", "zero-shot"), "gemini-1.5-pro-latest": ("api", "zero-shot"),
    "gpt-4-turbo-2024-04-09": ("api", "zero-shot"), "gpt-4-vision-preview": ("api", "zero-shot"),
    "gpt-4o": ("api", "zero-shot"), "gpt-4o-mini": ("api", "zero-shot"), "gpt-3.5-turbo": ("api", "zero-shot"),
    "gpt-3.5-turbo-0613": ("api", "zero-shot"), "o1-mini": ("reasoning", "zero-shot"),
    "internvl-1.5": ("chat", "zero-shot"), "phi-3": ("chat", "zero-shot"),
    "llava1_6-mistral-7b-instruct": ("chat", "zero-shot"), "llava1_6-vicuna-7b-instruct": ("chat", "zero-shot"),
    "minicpm_v_v2_5_chat": ("chat", "zero-shot"), "minicpm_v_v2_6_chat": ("chat", "zero-shot"),
    "qwen2-vl-72B": ("chat", "zero-shot"), "qwen2-vl-7B": ("chat", "zero-shot"),
    "chatglm3-6b": ("chat", "zero-shot"), "internlm2-math-20b": ("domain", "few-shot"),
    "deepseek-debug": ("chat", "few-shot"),
}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def prompts(kind):
    return json.loads(git("show", "%s:scripts/utils/task_prompt_%s.json" % (COMMIT, kind)))


ZS, FS = prompts("zeroshot"), prompts("fewshot")


def model_of(path):
    base = os.path.basename(path)
    m = re.match(r"(?:[Gg]eo_checklist_|gsm_checklist_)?(.+?)_task_all_question_all_(?:(zeroshot|fewshot)_)?prediction\.json$", base)
    return m.group(1), ("geo" if base.lower().startswith("geo_") else "gsm")


def build_query(task, question, solution, shots):
    p = (FS if shots == "few-shot" else ZS)[task]
    user = p["user-prompt"] + "\n\n" + "Question: " + question
    if task == "solving":
        user += "\nAnswer: "
    elif task in ("outcome_judging", "process_judging"):
        user += "\nSolution: " + solution + "\nJudgement: "
    else:
        user += "\nJudgement: "
    return p["system-prompt"] + "\n\n" + user


def num(x):
    x = float(x)
    return int(x) if x == int(x) else x


def main():
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "results/").decode().split("\n")
             if f.endswith(".json")]
    runs = {}
    for f in sorted(files):
        try:
            raw = git("show", "%s:%s" % (COMMIT, f))
        except subprocess.CalledProcessError:
            continue  # blob absent from the snapshot (large file): left out
        model, bench = model_of(f)
        runs[model] = (f, bench, json.loads(raw))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(runs):
        f, bench, data = runs[model]
        kind, shots = KIND[model]
        by_task = {}
        for i, x in enumerate(data):
            gold = x.get("answer", x.get("asnwer"))
            if gold is None or not x.get("model_prediction"):
                continue
            by_task.setdefault(x["task_type"], []).append((i, x, gold))
        slots = ["solving", "solving", "outcome_judging", "answerable_judging", "process_judging",
                 rng.choice(["outcome_judging", "answerable_judging"])]
        used = set()
        for task in slots:
            pool = [c for c in by_task.get(task, []) if c[0] not in used]
            i, x, gold = rng.choice(pool)
            used.add(i)
            sol = x.get("solution")
            if isinstance(sol, list):
                sol = sol[0]
            query = build_query(task, x["question"], sol, shots)
            item = "%d:%s:%s" % (i, task, x["question_type"])
            if x.get("image"):
                item += ":" + x["image"]
            if task == "solving":
                t, rec = "TaxCalc", {"query": query, "answer": num(gold)}
            elif task == "process_judging":
                t, rec = "TaxCalc", {"query": query, "answer": int(re.match(r"Step\s*(\d+)", gold).group(1))}
            else:
                choices = ["Correct", "Incorrect"] if task == "outcome_judging" else ["Answerable", "Unanswerable"]
                g = choices.index(gold)
                t, rec = "TaxSCQ", {"query": query, "choices": choices, "gold": g, "answer": choices[g]}
            rec = dict({"id": "%s#%d" % (f, i)}, **rec)
            drawn.append((t, rec, x["model_prediction"], {
                "repo": REPO, "commit": COMMIT, "path": f, "item": item, "model": model,
                "model_kind": kind, "shots": shots,
                "lang": "zh" if re.search(r"[\u4e00-\u9fff]", x["question"]) else "en"}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    print(len(runs), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
