#!/usr/bin/env python3
"""Draw MathOdyssey (GAIC Math 2024) model solutions committed in protagolabs/odyssey-math into drawn.jsonl.

stdlib only. One output file a model (11 models), each read at a pinned commit of the snapshot (one file,
gpt-4o-2024-05-13, is read from the pull-request head refs/pull/3/head = a89d9c9). Items whose gold is a
plain number or a simple fraction become TaxCalc; items whose gold is an option letter and whose options
(\\text{A)} ... in an align block) parse become TaxSCQ; the other items (expressions, intervals, matrices,
proofs, several answers) are left out. From each model 9 TaxCalc and 5 TaxSCQ items are drawn with a fixed
seed."""
import json, os, random, re, subprocess
from fractions import Fraction

GIT = "/work/.mirror/protagolabs+odyssey-math/repo"
REPO = "protagolabs/odyssey-math"
PREFIX = "protagolabs__odyssey-math"
SEED = 20261212
HEAD = "fe9e83df06111728e1b06ddaee0a60837c07d6c9"
DATA = (HEAD, "final-odyssey-math-with-levels.jsonl")
HERE = os.path.dirname(os.path.abspath(__file__))
N_CALC, N_SCQ = 9, 5

C48 = "48133f6bd50720a47bb1828d36a8f81de5654e80"   # 2024-04-30 "update with other model"
C4C = "4cb0c21b85f8ee6f31ef00b6650e1a1aa55b5046"   # 2024-04-26 "open-source odyssey-math"
C98 = "980cde548a78cd501df9be77d4676a9ef0b38e60"   # 2024-10-02 (last version of the Qwen file)
CPR = "a89d9c9c43278187172ea216cd2131ed926d77a6"   # refs/pull/3/head "gpt-4o-2024-05-13 results"

# model -> (output commit, output path, prompt style, prompt source (commit, path), model_kind)
RUNS = {
    "gpt-4-0125-preview": (HEAD, "jsonl/gpt-4-0125-preview-solution.jsonl", "solve", (C4C, "agents/solve.py"), "api"),
    "gpt-3.5-turbo-0125": (C48, "jsonl/gpt-3.5-turbo-0125-solution.jsonl", "solve", (C48, "agents/solve.py"), "api"),
    "gpt-4-0613": (C48, "jsonl/gpt-4-0613-solution.jsonl", "solve", (C48, "agents/solve.py"), "api"),
    "gpt-4-1106-preview": (C48, "jsonl/gpt-4-1106-preview-solution.jsonl", "solve", (C48, "agents/solve.py"), "api"),
    "gpt-4-turbo-2024-04-09": (C48, "jsonl/gpt-4-turbo-2024-04-09-solution.jsonl", "solve", (C48, "agents/solve.py"), "api"),
    "gpt-4o-2024-05-13": (CPR, "jsonl/gpt-4o-2024-05-13-solution.jsonl", "solve", (CPR, "agents/solve.py"), "api"),
    "o1-preview": (HEAD, "jsonl/gpt-4-o1-preview-solution.jsonl", "o1", (HEAD, "generate_response_o1.py"), "reasoning"),
    "dbrx-instruct": (C48, "jsonl/dbrx-instruct-solution.jsonl", "gradio", (C48, "generate_with_dbrx.py"), "chat"),
    "llama3-70b": (C48, "jsonl/llama3-70b-solution.jsonl", "gradio", (C48, "generate_with_llama.py"), "chat"),
    "Qwen2.5-72B-Instruct": (C98, "jsonl/Qwen2.5-72B-Instruct-solution.jsonl", "completion", (C98, "generate_with_qwen.py"), "chat"),
    "deepseek-v3": (HEAD, "jsonl/deepseek-v3-Instruct-solution.jsonl", "deepseek", (HEAD, "generate_with_deepseek.py"), "chat"),
}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def jsonl(commit, path):
    out = {}
    for line in git(commit, path).splitlines():
        if line.strip():
            d = json.loads(line)
            (k, v), = d.items()
            out[k] = v
    return out


def triple_quoted(src, name):
    m = re.search(name + r'\s*=\s*"""(.*?)"""', src, re.S)
    return m.group(1)


def prompt_parts(style, src):
    """(system text, user text with {question}) as the model saw them."""
    if style == "solve":  # LLMAgent formats both messages with str.format: {{ -> {
        sys_ = re.search(r'"role": "system",\s*"content": """(.*?)"""', src, re.S).group(1)
        return sys_.replace("{{", "{").replace("}}", "}").strip(), "Here is the question: {question}."
    if style == "o1":  # one user message, str.format applied
        user = re.search(r'"role": "user",\s*"content": """(.*?)"""', src, re.S).group(1)
        return None, user.replace("{{", "{").replace("}}", "}").strip()
    request = triple_quoted(src, "request")  # sent as is (no str.format): {{ stays
    if style == "gradio":  # request_description + message
        return request.strip(), "The given question is:   \n{question}"
    if style == "deepseek":
        return request.strip(), "The given question is:  \n{question}"
    if style == "completion":  # raw completion prompt: request + "\n\n" + question prompt
        return request.strip(), "The given question is:  \n{question}"
    raise ValueError(style)


def clean_gold(a):
    a = a.replace("\\noindent", "").strip()
    a = re.sub(r"(\\\\\s*)+$", "", a).strip()
    a = a.rstrip(".").strip()
    a = a.strip("$").strip()
    return a


def gold_number(a):
    if re.fullmatch(r"-?\d+(\.\d+)?", a):
        x = float(a)
        return int(x) if x == int(x) and "." not in a else x
    m = re.fullmatch(r"(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}", a)
    if m:
        f = Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) else 1)
        return int(f) if f.denominator == 1 else round(float(f), 6)
    return None


OPT = re.compile(r"\\text\{\s*([A-J])\)\s*\}\\?\s*&(.*?)(?=\\text\{\s*[A-J]\)\s*\}|\\end\{align)", re.S)


def parse_options(q):
    opts = OPT.findall(q)
    if not opts:
        return None
    letters = [l for l, _ in opts]
    if letters != [chr(65 + i) for i in range(len(letters))] or not 2 <= len(letters) <= 10:
        return None
    out = []
    for _, t in opts:
        t = t.strip()
        t = re.sub(r"(\\\\|&)\s*$", "", t).strip()
        t = re.sub(r"(\\\\|&)\s*$", "", t).strip()
        if t.endswith("\\") and not t.endswith("\\\\"):
            t = t[:-1].strip()  # a stray line-break backslash after the last option
        out.append(t)
    return out


def main():
    data = jsonl(*DATA)
    items_calc, items_scq = [], []
    for key, v in data.items():
        a = clean_gold(v["answer"])
        n = gold_number(a)
        if n is not None:
            items_calc.append((key, n))
            continue
        if re.fullmatch(r"[A-J]", a):
            ch = parse_options(v["question"])
            if ch and ord(a) - 65 < len(ch):
                items_scq.append((key, ord(a) - 65, ch))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        commit, path, style, (pc, pp), kind = RUNS[model]
        outs = jsonl(commit, path)
        sys_, user = prompt_parts(style, git(pc, pp))
        calc = rng.sample([x for x in items_calc if outs.get(x[0])], N_CALC)
        scq = rng.sample([x for x in items_scq if outs.get(x[0])], N_SCQ)
        for it in calc + scq:
            key = it[0]
            v = data[key]
            u = user.replace("{question}", v["question"])
            query = (sys_ + "\n\n" + u) if sys_ else u
            rec = {"id": "%s#%s" % (DATA[1], key), "query": query}
            if len(it) == 2:
                t = "TaxCalc"
                rec["answer"] = it[1]
            else:
                t = "TaxSCQ"
                rec.update({"choices": it[2], "gold": it[1], "answer": it[2][it[1]]})
            drawn.append((t, rec, outs[key], {
                "repo": REPO, "commit": commit, "path": path, "item": "%s:%s:%s" % (key, v["level"], v["label"]),
                "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en"}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    print(len(items_calc), "calc items;", len(items_scq), "scq items;", len(RUNS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
