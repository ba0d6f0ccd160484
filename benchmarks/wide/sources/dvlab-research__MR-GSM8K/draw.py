#!/usr/bin/env python3
"""Draw MR-GSM8K (meta-reasoning on GSM8K solutions) model evaluations committed in dvlab-research/MR-GSM8K.

stdlib only. The snapshot holds six model runs whose blobs are present (eval_results/gpt4-grading/*.json;
the full eval_results/*.json files are absent from the snapshot). Each record is a GSM8K question (original,
program-of-thought or reversed variant), a step-numbered student solution that is wrong, and the evaluated
model's verbatim grading response (Final Judgement / First Error Step / Error Analysis).

From each record one case is built: TaxCalc (the number of the first wrong step) or TaxSCQ (the solution's
correctness: correct / wrong). Small runs are taken whole; the three large runs give the rest."""
import json, os, random, subprocess

GIT = "/work/.mirror/dvlab-research+MR-GSM8K/repo"
COMMIT = "3f666d60dd5f2fe31d619c528076bac54f4a13b7"
REPO = "dvlab-research/MR-GSM8K"
PREFIX = "dvlab-research__MR-GSM8K"
SEED = 20261212
TOTAL = 150
HERE = os.path.dirname(os.path.abspath(__file__))

# file stem -> (model name, model_kind, shots, prompt style)
RUNS = {
    "Claude": ("claude-2", "api", "zero-shot", "api"),
    "GPT3_5": ("gpt-3.5-turbo", "api", "zero-shot", "api"),
    "llama2_70b": ("llama2-70B-diag", "domain", "zero-shot", "ft"),
    "mammoth_70B": ("MAmmoTH-70B", "domain", "few-shot", "alpaca"),
    "metamath_70B": ("MetaMath-70B", "domain", "few-shot", "alpaca"),
    "wizardmath_70B": ("WizardMath-70B", "domain", "few-shot", "alpaca"),
}

API_PROMPT = """Act as a grade school math teacher and score the following problem solution.

Question:
{question}

Student Solution:
{steps}

Your task involves three parts:
1. **Step-by-step Evaluation:** Go through the student solution carefully and identify key errors and potential misunderstandings that led to the incorrect solution.
2. **Final Judgement:**  Provide an overall judgement on the correctness of the student's solution.
3. **First Error Step:** If the solution is incorrect, generate the step number where the first error occurs, otherwise generate N/A here
4. **Error Analysis:** If the solution is incorrect, analyse the cause and reasons for the first error step, otherwise generate N/A here 

Here's the format I want:
Step-by-step Evaluation: [Provide a step by step examination of the student solution and identify key errors and misunderstandings here.]
Final Judgement: [Insert only **correct** or **wrong** here]
First Error Step: [Insert either N/A or the step number where the first error occurs]
Error Analysis: [Insert either N/A or the analysis of error in the first error among solution steps]

Please follow this format without any additional introductory or concluding statements.
"""

# the question part of grade_diagGSM8k (eval_open_source_models.py at 1c49cfe), after the 3 demonstrations
ALPACA_QUESTION = ("Act as a grade school math teacher and score the following problem solution.\nQuestion: "
                   "{question}\n\nStudent Solution:\n{steps}\n\n### Response: Let's think step by step. \n")
DEMO_COMMIT = "1c49cfe"


# the QLoRA fine-tuned Llama-2-70B (scripts/eval_finetuned_llama2.py at 1c49cfe): the API prompt as the
# instruction of an Alpaca template ending in "### Response: Let's think step by step."
FT_PROMPT = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
             "request.\n\n### Instruction:\n{instruction}\n\n### Response: Let's think step by step.")


def demo_prefix():
    """The 3-shot prefix of get_k_shot_demo_str in scripts/eval_open_source_models.py at 1c49cfe."""
    demos = json.loads(git("show", "%s:dataset/k-shot-demos.json" % DEMO_COMMIT))
    s = ("Below is an instruction that describes a task. \nWrite a response that appropriately completes the "
         "request.\n\n### Instruction:\n")
    for d in demos[:3]:
        steps = "\n".join(d["output_steps"])
        s += ("Act as a grade school math teacher and score the following problem solution.\nQuestion: %s\n\n"
              "Student Solution:\n%s" % (d["question"], steps))
        s += "\n\n### Response:\n%s" % d["evaluation"]
        s += "\n\n### Instruction:\n"
    return s


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def main():
    runs = {}
    for stem in sorted(RUNS):
        path = "eval_results/gpt4-grading/%s_eval_results.json" % stem
        data = json.loads(git("show", "%s:%s" % (COMMIT, path)))
        key = [k for k in data[0] if k.endswith("_eval_output")][0]
        runs[stem] = (path, key, data)
    prefix = demo_prefix()
    rng = random.Random(SEED)
    # small runs whole, the rest split evenly over the large runs
    small = [s for s in sorted(runs) if len(runs[s][2]) < 30]
    large = [s for s in sorted(runs) if s not in small]
    quota = {s: len(runs[s][2]) for s in small}
    left = TOTAL - sum(quota.values())
    for i, s in enumerate(large):
        quota[s] = left // len(large) + (1 if i < left % len(large) else 0)
    drawn = []
    for stem in sorted(runs):
        path, key, data = runs[stem]
        model, kind, shots, style = RUNS[stem]
        idx = sorted(rng.sample(range(len(data)), quota[stem]))
        for i in idx:
            x = data[i]
            steps = "\n".join(x["model_output_steps"])
            if style == "alpaca":
                query = prefix + ALPACA_QUESTION.format(question=x["question"], steps=steps)
            else:
                query = API_PROMPT.format(question=x["question"], steps=steps)
                if style == "ft":
                    query = FT_PROMPT.format(instruction=query)
            gold_step = int(x["model_output_solution_first_error_step"])
            ev = x[key]
            if rng.random() < 0.25:
                choices = ["correct", "wrong"]
                g = choices.index(x["model_output_solution_correctness"].strip().lower())
                t, rec = "TaxSCQ", {"query": query, "choices": choices, "gold": g, "answer": choices[g]}
                hint = "correctness_pred: %s" % ev.get("correctness_pred", "")
            else:
                t, rec = "TaxCalc", {"query": query, "answer": gold_step}
                hint = "error_step_pred: %s" % ev.get("error_step_pred", "")
            rec = dict({"id": "%s#%s" % (path, x["uuid"])}, **rec)
            drawn.append((t, rec, ev["response"], {
                "repo": REPO, "commit": COMMIT, "path": path,
                "item": "%d:%s:%s" % (i, x["uuid"], x["question_type"]), "model": model,
                "model_kind": kind, "shots": shots, "lang": "en"}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(runs), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
