#!/usr/bin/env python3
"""Draw FLaME (gtfintechlab/FLaME, formerly SuperFLUE) model outputs into drawn.jsonl.

stdlib only. Reads the committed inference CSVs of three tasks at one commit:
FOMC (hawkish/dovish/neutral, TaxSCQ), Financial PhraseBank (negative/positive/neutral, TaxSCQ)
and FiQA task 1 (aspect sentiment score in [-1, 1], TaxCalc). For every model one run file a task
is used (the latest by the date in its name; the post-processed `_no_think` copies are left out);
from each model 2 cases a task are drawn (6 a model), rows whose call failed (no ModelResponse)
left out."""
import csv, io, json, os, random, re, subprocess

GIT = "/work/.mirror/gtfintechlab+FLaME/repo"
COMMIT = "fdc93eb5f7aa86951d33e5654c0dc253f5f8baea"
REPO = "gtfintechlab/FLaME"
PREFIX = "gtfintechlab__FLaME"
SEED = 20261210
PER_TASK = 2
HERE = os.path.dirname(os.path.abspath(__file__))
csv.field_size_limit(10 ** 9)

# The prompts, verbatim from src/superflue/code/prompts_oldsuperflue.py at COMMIT (fpb_prompt returns
# its first prompt; the prompt_format branches after that `return` are dead code).
FOMC = """Discard all the previous instructions. Behave like you are an expert sentence clas-
                sifier. Classify the following sentence from FOMC into ‘HAWKISH’, ‘DOVISH’, or ‘NEU-
                TRAL’ class. Label ‘HAWKISH’ if it is corresponding to tightening of the monetary policy,
                ‘DOVISH’ if it is corresponding to easing of the monetary policy, or ‘NEUTRAL’ if the
                stance is neutral. Provide the label in the first line and provide a short explanation in the
                second line. This is the sentence: {sentence}"""
FPB = """Discard all the previous instructions. Behave like you are an expert sentence clas-
                    sifier. Classify the following sentence into ‘NEGATIVE’, ‘POSITIVE’, or ‘NEUTRAL’
                    class. Label ‘NEGATIVE’ if it is corresponding to negative sentiment, ‘POSITIVE’ if it is
                    corresponding to positive sentiment, or ‘NEUTRAL’ if the sentiment is neutral. Provide
                    the label in the first line and provide a short explanation in the second line. This is the sentence: {sentence}"""
FIQA = """You are a financial sentiment analysis expert. Analyze the provided sentence, identify relevant target aspects (such as companies, products, or strategies), and assign a sentiment score for each target. 
                The sentiment score should be between -1 (highly negative) and 1 (highly positive), using up to three decimal places to capture nuances in sentiment.

                Financial sentence:
                {sentence}"""

# choices in the order the prompt names them; dataset label number -> index into choices
TASKS = {
    "fomc": ("TaxSCQ", FOMC, ["HAWKISH", "DOVISH", "NEUTRAL"], {0: 1, 1: 0, 2: 2}),
    "fpb": ("TaxSCQ", FPB, ["NEGATIVE", "POSITIVE", "NEUTRAL"], {0: 0, 1: 2, 2: 1}),
    "fiqa_task1": ("TaxCalc", FIQA, None, None),
}

KIND = {
    "o1-mini": "reasoning", "QwQ-32B-Preview": "reasoning", "DeepSeek-r1": "reasoning",
    "gpt-4o-2024-08-06": "api", "claude-3-5-sonnet-20240620": "api", "claude-3-haiku-20240307": "api",
    "gemini-1.5-pro-latest": "api", "gemini-2.0-flash-exp": "api", "command-r-plus-08-2024": "api",
    "command-r7b-12-2024": "api", "jamba-1.5-large": "api", "jamba-1.5-mini": "api",
}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def runs_of(task):
    """model -> latest run file of that task."""
    files = git("ls-tree", "-r", "--name-only", COMMIT, "results/%s/" % task).decode().split("\n")
    best = {}
    for f in files:
        m = re.match(r"results/%s/%s_[a-z0-9_]+/(?:[A-Za-z0-9-]+/)?(.+?)_(\d\d)_(\d\d)_(\d{4})\.csv$"
                     % (task, task), f)
        if not m or "glennmatlin" in f:
            continue  # _no_think copies, regex re-runs, the fine-tuned glennmatlin model: left out
        model, date = m.group(1), (m.group(4), m.group(3), m.group(2))
        if model not in best or date > best[model][0]:
            best[model] = (date, f)
    return {k: v[1] for k, v in best.items()}


def main():
    rng = random.Random(SEED)
    drawn = []
    for task in ("fomc", "fpb", "fiqa_task1"):
        t, template, choices, labmap = TASKS[task]
        runs = runs_of(task)
        for model in sorted(runs):
            f = runs[model]
            rows = list(csv.DictReader(io.StringIO(git("show", "%s:%s" % (COMMIT, f)).decode("utf-8"))))
            pool = [(i, r) for i, r in enumerate(rows)
                    if (r.get("complete_responses") or "").startswith("ModelResponse(")
                    and (r.get("llm_responses") or "").strip()]
            for i, r in rng.sample(pool, min(PER_TASK, len(pool))):
                if task == "fiqa_task1":
                    sentence = r["context"]
                    rec = {"query": template.format(sentence=sentence), "answer": float(r["actual_sentiment"])}
                    item = "%d:target=%s" % (i, r["actual_target"])
                else:
                    sentence = r["sentences"]
                    g = labmap[int(r["actual_labels"])]
                    rec = {"query": template.format(sentence=sentence), "choices": choices, "gold": g,
                           "answer": choices[g]}
                    item = str(i)
                rec = dict({"id": "%s#%d" % (f, i)}, **rec)
                drawn.append((t, rec, r["llm_responses"], {
                    "repo": REPO, "commit": COMMIT, "path": f, "item": item, "model": model,
                    "model_kind": KIND.get(model, "chat"), "shots": "zero-shot", "lang": "en",
                    "task": task}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    models = sorted({d[3]["model"] for d in drawn})
    print(len(drawn), "cases;", len(models), "models")


if __name__ == "__main__":
    main()
