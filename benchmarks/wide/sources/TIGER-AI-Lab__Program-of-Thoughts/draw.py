#!/usr/bin/env python3
"""Draw TAT-QA (dev) few-shot completions committed in TIGER-AI-Lab/Program-of-Thoughts into drawn.jsonl.

stdlib only. Four greedy runs of the PoT paper's baselines on TAT-QA dev (1667 questions each): code-davinci-002 and
text-davinci-002, each with a direct-answer and a chain-of-thought 8-shot prompt. The prompt of each run is rebuilt
from its run script (prompt_8shot read with ast, the reader request rebuilt as in create_reader_request_processed).
Arithmetic and count questions become TaxCalc (answer = the gold number, in the gold's scale), single-span questions
TaxRead (text = the passage and table of the prompt, answer = the gold span); multi-span questions are left out.
From each run 22 TaxCalc and 16 TaxRead items are drawn with a fixed seed."""
import ast, json, os, random, re, subprocess

GIT = "/work/.mirror/TIGER-AI-Lab+Program-of-Thoughts/repo"
REPO = "TIGER-AI-Lab/Program-of-Thoughts"
PREFIX = "TIGER-AI-Lab__Program-of-Thoughts"
COMMIT = "850399c3eff8c37458a9d642c4a98df287f50f3a"  # main HEAD 2024-05-14; outputs added in 7a435da, scripts in 5229bb9
SEED = 20261216
N_CALC, N_READ = 22, 16
HERE = os.path.dirname(os.path.abspath(__file__))

# run name -> (output file, run script, model, model_kind, shots)
RUNS = {
    "codex-direct": ("outputs/tatqa_direct_s0_e-1_11_12_11_46.jsonl", "run_tatqa_direct.py", "code-davinci-002", "base", "few-shot"),
    "codex-cot": ("outputs/tatqa_cot_s0_e-1_11_11_21_19.jsonl", "run_tatqa_cot.py", "code-davinci-002", "base", "cot"),
    "gpt3-direct": ("outputs/tatqa_direct_gpt3_s0_e-1_11_13_18_15.jsonl", "run_tatqa_direct_gpt3.py", "text-davinci-002", "api", "few-shot"),
    "gpt3-cot": ("outputs/tatqa_cot_gpt3_s0_e-1_11_13_21_05.jsonl", "run_tatqa_cot_gpt3.py", "text-davinci-002", "api", "cot"),
}


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def prompt_parts(src):
    """(prompt_8shot, reader header line, whether 'Answer:' is appended) from a run script."""
    shot = None
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "prompt_8shot":
            shot = node.value.value
    func = re.search(r"def create_reader_request_processed.*?return prompt", src, re.S).group(0)
    header = ast.literal_eval(re.search(r"prompt = ('[^\n]*')\n", func).group(1))
    answer_cue = re.search(r"^\s+prompt \+= 'Answer:'", func, re.M) is not None
    return shot, header, answer_cue


def reader_request(ex, header, answer_cue):
    prompt = header
    if ex["text"]:
        prompt += ex["text"].strip() + "\n"
    prompt += ex["table"].strip() + "\n"
    prompt += "Quesetion: %s\n" % ex["question"]
    if answer_cue:
        prompt += "Answer:"
    return prompt


def passage(ex):
    p = ""
    if ex["text"]:
        p += ex["text"].strip() + "\n"
    return p + ex["table"].strip()


def gold_number(ex):
    a = ex["answer"]
    if isinstance(a, (int, float)):
        return a
    if isinstance(a, str) and re.fullmatch(r"-?\d+(\.\d+)?", a.strip()):
        x = float(a)
        return int(x) if x == int(x) and "." not in a else x
    return None


def main():
    rng = random.Random(SEED)
    drawn = []
    for run in sorted(RUNS):
        path, script, model, kind, shots = RUNS[run]
        shot, header, cue = prompt_parts(git(script))
        rows = [json.loads(l) for l in git(path).splitlines() if l.strip()]
        calc, read = [], []
        for i, ex in enumerate(rows):
            if len(ex["generated"]) != 1:  # API error: the harness stored no completion
                continue
            if ex["answer_type"] in ("arithmetic", "count") and gold_number(ex) is not None:
                calc.append(i)
            elif ex["answer_type"] == "span" and isinstance(ex["answer"], list) and len(ex["answer"]) == 1:
                read.append(i)
        for t, idx in (("TaxCalc", rng.sample(calc, N_CALC)), ("TaxRead", rng.sample(read, N_READ))):
            for i in idx:
                ex = rows[i]
                query = shot + "\n\n" + reader_request(ex, header, cue)
                rec = {"id": "tatqa_dev#%s" % ex["question_id"], "query": query}
                if t == "TaxCalc":
                    rec["answer"] = gold_number(ex)
                else:
                    rec["text"] = passage(ex)
                    rec["answer"] = ex["answer"][0]
                hint = "pred_answer=%s; pred_scale=%s" % (json.dumps(ex["pred_answer"], ensure_ascii=False), json.dumps(ex["pred_scale"]))
                drawn.append((t, rec, ex["generated"][0], {
                    "repo": REPO, "commit": COMMIT, "path": path,
                    "item": "line %d; question_id %s; answer_type %s; scale %s" % (i + 1, ex["question_id"], ex["answer_type"], ex["scale"] or "none"),
                    "model": model, "model_kind": kind, "shots": shots, "lang": "en",
                    "run": run, "prompt_source": "%s:%s" % (COMMIT[:7], script)}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(RUNS), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
