#!/usr/bin/env python3
"""Draw Plan-and-Solve (PS+) zero-shot generations of text-davinci-003 committed in
AGI-Edgerunners/Plan-and-Solve-Prompting (generated_result/*.json) into drawn.jsonl.

stdlib only. Five arithmetic word-problem sets (GSM8K, SVAMP, MultiArith, AddSub, SingleEq) become TaxCalc
cases; AQuA (five lettered options) becomes TaxSCQ. 25 items a set are drawn with a fixed seed.
query = 'Q:' + question + '\\nA: ' + trigger sentence (prompt.construct_input), the question being the stored
`question` field, which is the string the harness fed the model (utils.load_data)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/AGI-Edgerunners+Plan-and-Solve-Prompting/repo"
REPO = "AGI-Edgerunners/Plan-and-Solve-Prompting"
PREFIX = "AGI-Edgerunners__Plan-and-Solve-Prompting"
SEED = 20261216
HEAD = "9d5a176f5b4de1011d426009ab6398dc76046e88"
HERE = os.path.dirname(os.path.abspath(__file__))
N_PER_SET = 25
MODEL = "text-davinci-003"

# prompt.py (HEAD): the trigger sentences by prompt_id
TRIGGERS = {
    "301": "Let's first understand the problem, extract relevant variables and their corresponding numerals, "
           "and devise a plan. Then, let's carry out the plan, calculate intermediate variables (pay attention to "
           "correct numeral calculation and commonsense), solve the problem step by step, and show the answer.",
    "302": "Let's first understand the problem, extract relevant variables and their corresponding numerals, "
           "and devise a complete plan. Then, let's carry out the plan, calculate intermediate variables "
           "(pay attention to correct numerical calculation and commonsense), "
           "solve the problem step by step, and show the answer.",
    "305": "Let's first understand the problem, extract relevant variables and  their corresponding numerals, "
           "and make a complete plan. Then, let's carry out the plan, calculate intermediate variables (pay "
           "attention to correct numerical calculation and commonsense), "
           "solve the problem step by step, and show the answer.",
    "307": "Let's first understand the problem, extract relevant variables and their corresponding numerals, "
           "and make and devise a complete plan. Then, let's carry out the plan, calculate intermediate variables "
           "(pay attention to correct numerical calculation and commonsense), "
           "solve the problem step by step, and show the answer.",
}

# dataset -> (file, prompt_id, task)
SETS = [
    ("gsm8k", "generated_result/gsm8k-zero_shot-305-text-davinci-003.json", "305", "TaxCalc"),
    ("SVAMP", "generated_result/SVAMP-zero_shot-307-text-davinci-003.json", "307", "TaxCalc"),
    ("MultiArith", "generated_result/MultiArith-zero_shot-302-text-davinci-003.json", "302", "TaxCalc"),
    ("AddSub", "generated_result/AddSub-zero_shot-301-text-davinci-003.json", "301", "TaxCalc"),
    ("SingleEq", "generated_result/SingleEq-zeri_shot-301-text-davinci-003.json", "301", "TaxCalc"),
    ("AQuA", "generated_result/AQuA-zero_shot-305-text-davinci-003.json", "305", "TaxSCQ"),
]


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def verify_triggers():
    src = git(HEAD, "prompt.py")
    for pid, text in TRIGGERS.items():
        m = re.search(r"prompt_%s = ((?:\"[^\"\n]*\"\s*\\?\s*)+)" % pid, src)
        got = "".join(re.findall(r"\"([^\"\n]*)\"", m.group(1)))
        assert got == text, (pid, got)


def number(x):
    v = float(x)
    return int(v) if v == int(v) else v


CHOICE = re.compile(r" \(([A-E])\) ")


def parse_choices(q):
    """The options from the question's 'Answer Choices: (A) ... (E) ...' tail, or None."""
    if q.count("Answer Choices:") != 1:
        return None
    tail = q.split("Answer Choices:", 1)[1]
    parts = CHOICE.split(tail)
    letters, texts = parts[1::2], parts[2::2]
    if parts[0].strip() or letters != list("ABCDE")[:len(letters)] or len(letters) != 5:
        return None
    return [t.strip() for t in texts]


def main():
    verify_triggers()
    rng = random.Random(SEED)
    drawn = []
    for name, path, pid, task in SETS:
        data = json.loads(git(HEAD, path))
        pool = []
        for i, d in enumerate(data):
            if not isinstance(d.get("chain-of-thought"), str) or not d["chain-of-thought"].strip():
                continue
            if task == "TaxSCQ":
                ch = parse_choices(d["question"])
                if ch is None or d["answer"] not in "ABCDE" or len(d["answer"]) != 1:
                    continue
                pool.append((i, ch))
            else:
                pool.append((i, None))
        for i, ch in rng.sample(pool, N_PER_SET):
            d = data[i]
            query = "Q:" + d["question"] + "\nA: " + TRIGGERS[pid]
            rec = {"id": "%s#%s" % (name, d["ID"]), "query": query}
            if task == "TaxSCQ":
                g = ord(d["answer"]) - 65
                rec.update({"choices": ch, "gold": g, "answer": ch[g]})
            else:
                rec["answer"] = number(d["answer"])
            hint = "source pred=%s, ans=%s (pred taken after 'The answer is' if present, else from a second, " \
                   "unstored completion after 'Therefore,the answer is')" % (json.dumps(d["pred"]), d["ans"])
            drawn.append((task, rec, d["chain-of-thought"], {
                "repo": REPO, "commit": HEAD, "path": path, "item": "%s (list index %d)" % (d["ID"], i),
                "model": MODEL, "model_kind": "api", "shots": "cot", "lang": "en",
                "dataset": name, "prompt_id": pid}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
