#!/usr/bin/env python3
"""Draw TabMWP (tabular math word problem) model outputs committed in lupantech/PromptPG into drawn.jsonl.

stdlib only. The result files (results/gpt3, results/t5, results/tapex) hold, for every one of the 7,686 TabMWP
test problems, the gold answer and the verbatim model output. The problem texts (tables, questions, options)
of the full test split (data/tabmwp/problems_test.json) are not in the snapshot (blob absent); the 1,000-problem
subset data/tabmwp/problems_test1k.json is, so cases are drawn from those 1,000 problems.

14 runs (one result file each); from each run 8 free-text numeric problems (TaxCalc) and 3 multiple-choice
problems (TaxSCQ) are drawn with a fixed seed. The query is rebuilt from the repository's prompt code for that
run (run_gpt3/base_prompt*.py + run_gpt3*.py, run_t5/inference.py, run_tapex/inference.py)."""
import json, os, random, re, subprocess
from fractions import Fraction

GIT = "/work/.mirror/lupantech+PromptPG/repo"
REPO = "lupantech/PromptPG"
PREFIX = "lupantech__PromptPG"
SEED = 20261214
HEAD = "7cf61b1bec07222fc24b4f5a1410911f77c2d2c9"  # main, 2022 "fix shot_pids arg"
DATA = "data/tabmwp/problems_test1k.json"
HERE = os.path.dirname(os.path.abspath(__file__))
N_CALC, N_SCQ = 8, 3
OPT = ["A", "B", "C", "D", "E", "F"]

# path -> (model, model_kind, shots, prompt style)
RUNS = [
    # exp1/exp2: the files' contents are swapped relative to the labels of the README and scripts: the exp1 file
    # (acc 57.61, every record with a first-stage "steps" text) is the zero-shot-CoT run of run_gpt3_step.py, the
    # exp2 file (acc 56.96, no "steps") the plain zero-shot run of run_gpt3.py; the paper's table has zero-shot
    # 56.96 and zero-shot-CoT 57.61.
    ("results/gpt3/exp1_test_TQ-A_0_seed_2.json", "text-davinci-002", "api", "cot", "gpt3_step"),
    ("results/gpt3/exp2_test_TQ-A_0_seed_2.json", "text-davinci-002", "api", "zero-shot", "gpt3_TQ-A"),
    ("results/gpt3/exp3_test_TQ-A_2_seed_2.json", "text-davinci-002", "api", "few-shot", "gpt3_TQ-A"),
    ("results/gpt3/exp4_test_TQ-SA_2_seed_2.json", "text-davinci-002", "api", "cot", "gpt3_TQ-SA"),
    ("results/t5/exp1_pretrained_unifiedqa_small.json", "unifiedqa-t5-small", "base", "zero-shot", "t5"),
    ("results/t5/exp2_pretrained_unifiedqa_base.json", "unifiedqa-t5-base", "base", "zero-shot", "t5"),
    ("results/t5/exp3_pretrained_unifiedqa_large.json", "unifiedqa-t5-large", "base", "zero-shot", "t5"),
    ("results/t5/exp4_small.json", "unifiedqa-t5-small+tabmwp-ft", "domain", "zero-shot", "t5"),
    ("results/t5/exp5_base.json", "unifiedqa-t5-base+tabmwp-ft", "domain", "zero-shot", "t5"),
    ("results/t5/exp6_large.json", "unifiedqa-t5-large+tabmwp-ft", "domain", "zero-shot", "t5"),
    ("results/tapex/exp1_tapex-base.json", "tapex-base-finetuned-wtq", "base", "zero-shot", "tapex"),
    ("results/tapex/exp2_tapex-base.json", "tapex-base-finetuned-wtq+tabmwp-ft", "domain", "zero-shot", "tapex"),
    ("results/tapex/exp3_tapex-large.json", "tapex-large-finetuned-wtq", "base", "zero-shot", "tapex"),
    ("results/tapex/exp4_tapex-large.json", "tapex-large-finetuned-wtq+tabmwp-ft", "domain", "zero-shot", "tapex"),
]


def git(*args):
    return subprocess.run(["git", "--git-dir", GIT] + list(args), check=True, capture_output=True).stdout.decode("utf-8")


def show(commit, path):
    return git("show", "%s:%s" % (commit, path))


# ---- prompts, as the repository's code builds them ----

def gpt3_table(p):  # run_gpt3/base_prompt.py get_table_text
    t = p["table"]
    if p["table_title"]:
        t = "[TITLE]: %s\n%s" % (p["table_title"], t)
    return t


def gpt3_question(p):  # run_gpt3/base_prompt.py get_question_text
    q = p["question"]
    if p["unit"]:
        q = "%s (Unit: %s)" % (q, p["unit"])
    if p["choices"]:
        q = "%s\nOptions: %s" % (q, " ".join("(%s) %s" % (OPT[i], c) for i, c in enumerate(p["choices"])))
    return q


def query_for(style, p, steps):
    if style in ("gpt3_TQ-A", "gpt3_TQ-SA"):
        # test example of create_one_example(test_example=True): "Table: ...\nQuestion: ...\nAnswer:";
        # the two training demonstrations that precede it (pids 3109, 4995) are not in the snapshot: left out.
        text = "Table: %s\nQuestion: %s\nAnswer:" % (gpt3_table(p), gpt3_question(p))
        return text.replace("  ", " ").strip()
    if style == "gpt3_step":
        # run_gpt3_step.py: first call = prompt + "\nAnswer: Let's think step by step." -> "steps" (stop at a
        # newline); second call = that prompt, the steps and "Therefore, the answer is" -> "output" (the text graded).
        # The committed code joins the steps only when they are empty (its two branches are swapped), but the stored
        # outputs follow their steps (they repeat the steps' final figure or option), so the run joined them:
        # "\n".join([prompt, steps, "Therefore, the answer is"]) as in zero-shot-CoT.
        text = ("Table: %s\nQuestion: %s" % (gpt3_table(p), gpt3_question(p))).replace("  ", " ").strip()
        text = text + "\nAnswer: Let's think step by step."
        return "\n".join([text, steps, "Therefore, the answer is"])
    if style == "t5":  # run_t5/inference.py get_input_text (newlines become a literal " \n ")
        t = p["table"]
        if p["table_title"]:
            t = p["table_title"] + "\n" + t
        q = p["question"]
        if p["unit"]:
            q = q + " (Unit: %s)" % p["unit"]
        if p["choices"]:
            for i, c in enumerate(p["choices"]):
                q += " (%s) %s" % (OPT[i], c)
        return (t + "\n" + q).replace("\n", " \\n ").strip()
    if style == "tapex":
        # run_tapex/inference.py: tokenizer(pd.DataFrame(table_for_pd), question); the TAPEX tokenizer lowercases
        # and appends the linearised table "col : h1 | h2 row 1 : v1 | v2 ..." to the question.
        q = p["question"]
        if p["unit"]:
            q = q + " (Unit: %s)" % p["unit"]
        if p["choices"]:
            for i, c in enumerate(p["choices"]):
                q += " (%s) %s" % (OPT[i], c)
        tab = p["table_for_pd"]
        cols = list(tab)
        n = len(tab[cols[0]]) if cols else 0
        lin = "col : " + " | ".join(cols)
        for r in range(n):
            lin += " row %d : " % (r + 1) + " | ".join(str(tab[c][r]) for c in cols)
        return (q.strip() + " " + lin).lower()
    raise ValueError(style)


def gold_number(a):
    a = a.replace(",", "").strip()
    if re.fullmatch(r"-?\d+", a):
        return int(a)
    if re.fullmatch(r"-?\d*\.\d+", a):
        return float(a)
    m = re.fullmatch(r"(-?\d+)/(\d+)", a)
    if m:
        f = Fraction(int(m.group(1)), int(m.group(2)))
        return int(f) if f.denominator == 1 else round(float(f), 6)
    return None


def main():
    head = HEAD
    data = json.loads(show(head, DATA))
    calc, scq = [], []
    for pid in data:  # file order
        p = data[pid]
        if p["ques_type"] == "free_text":
            n = gold_number(p["answer"])
            if n is not None:
                calc.append((pid, n))
        elif p["choices"] and p["answer"] in p["choices"] and 2 <= len(p["choices"]) <= 6:
            scq.append((pid, p["choices"].index(p["answer"])))
    rng = random.Random(SEED)
    drawn = []
    for path, model, kind, shots, style in RUNS:
        res = json.loads(show(head, path))["results"]
        c = rng.sample([x for x in calc if x[0] in res], N_CALC)
        s = rng.sample([x for x in scq if x[0] in res], N_SCQ)
        for pid, g in c + s:
            p, r = data[pid], res[pid]
            assert r["answer"] == p["answer"], (path, pid)
            rec = {"id": "tabmwp-test#%s" % pid, "query": query_for(style, p, r.get("steps", ""))}
            if (pid, g) in c and p["ques_type"] == "free_text":
                task = "TaxCalc"
                rec["answer"] = g
            else:
                task = "TaxSCQ"
                rec.update({"choices": list(p["choices"]), "gold": g, "answer": p["choices"][g]})
            src = {"repo": REPO, "commit": head, "path": path,
                   "item": "%s:%s:%s:grade%s" % (pid, p["ques_type"], p["ans_type"], p["grade"]),
                   "model": model, "model_kind": kind, "shots": shots, "lang": "en"}
            hint = "prediction=%r true_false=%s" % (r["prediction"], r["true_false"])
            drawn.append((task, rec, r["output"], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(calc), "calc items;", len(scq), "scq items;", len(RUNS), "runs;", len(drawn), "cases; HEAD", head)


if __name__ == "__main__":
    main()
