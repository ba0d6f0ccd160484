#!/usr/bin/env python3
"""Draw BizBenchmark model responses committed in MandyHenderson/BizBenchmark (commit 6d94124, the per-model
result files Single_Choice/, Multipl_Choice/, Numerical_QA/) into drawn.jsonl. stdlib only.

Per model: 5 Numerical QA items with a plain-number gold (TaxCalc), 3 finance/econ single-choice items (TaxSCQ),
3 finance/econ multiple-choice items (TaxMCQ). The prompt is rebuilt with the repository's own template
(nipscode/prompt/prompt.py at the same commit)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/MandyHenderson+BizBenchmark/repo"
COMMIT = "6d94124cb7ba3aa5b75a6bd9ecba4919a979c879"
REPO = "MandyHenderson/BizBenchmark"
PREFIX = "MandyHenderson__BizBenchmark"
SEED = 20261211
N_CALC, N_SCQ, N_MCQ = 5, 3, 3
HERE = os.path.dirname(os.path.abspath(__file__))

KIND = {
    "claude-3-5-sonnet-latest": "api", "claude-3-7-sonnet-latest": "api", "claude-3-sonnet-20240229": "api",
    "deepseek-chat": "api", "deepseek-reasoner": "reasoning", "deepseek-r1": "reasoning",
    "gpt-3.5-turbo-0125": "api", "gpt-4-0125-preview": "api", "gpt-4o": "api",
    "llama-3.1-8b-instruct": "chat", "llama-3.1-8b": "base", "llama-3.3-70b-instruct": "chat",
    "llama3-8b-8192": "chat", "qwen-turbo": "api", "qwen2-72b-instruct": "chat", "qwen2.5-72b-instruct": "chat",
}
# deepseek-r1 (choice folders) and deepseek-reasoner (Numerical_QA folder) are the same DeepSeek model
MODEL_NAME = {"deepseek-r1": "deepseek-reasoner"}

JSON_MAIN = ("Respond with **exactly** one JSON object, with no markdown fences or other text outside the JSON structure. "
             "The JSON object must conform to the following structure:\n")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def load(path):
    """records of a result file (.jsonl, or the .json array when the .jsonl is absent)"""
    files = set(git("ls-tree", "-r", "--name-only", COMMIT, os.path.dirname(path)).decode().split("\n"))
    if path in files:
        txt = git("show", f"{COMMIT}:{path}").decode("utf-8")
        return path, [json.loads(l) for l in txt.splitlines() if l.strip()]
    alt = path[:-1]  # .jsonl -> .json
    if alt in files:
        return alt, json.loads(git("show", f"{COMMIT}:{alt}").decode("utf-8"))
    return None, []


def format_options(opts):
    return "\n".join(f"{chr(65 + i)}) {o}" for i, o in enumerate(opts))


def prompt_single(r):
    p = "You are an expert AI assistant. The user will provide a multiple-choice question and a list of options.\n\n"
    p += "Your task is to:\n1. Carefully analyze the question and the options.\n"
    p += "2. Identify the SINGLE BEST option that correctly answers the question.\n"
    p += "3. " + JSON_MAIN + '{\n  "answer": "B"\n}\n\n'
    ctx = r.get("question_context_used") or r.get("question_context")
    if ctx:
        p += f"Background Information:\n{ctx}\n\n"
    p += f"Question:\n{r['question']}\n\n"
    p += f"Options:\n{format_options(r['options'])}\n\n"
    p += "Your response (JSON object with the single correct option letter):"
    return p


def prompt_multiple(r):
    p = "You are an expert AI assistant. The user will provide a multiple-choice question and a list of options.\n\n"
    p += "Your task is to:\n1. Carefully analyze the question and the options.\n"
    p += "2. Identify ALL options that correctly answer the question. If no option is correct, the value for \"answer\" should be an empty list: [].\n"
    p += "3. " + JSON_MAIN + '{\n  "answer": ["A", "C"]\n}\n\n'
    ctx = r.get("background_text") or r.get("question_context_used")
    if ctx:
        p += f"Background Information:\n{ctx}\n\n"
    p += f"Question:\n{r['question']}\n\n"
    p += f"Options:\n{format_options(r['options'])}\n\n"
    p += "Your response (JSON object with a list of correct option letters):"
    return p


def prompt_numerical(r):
    p = ("You are an expert AI assistant in quantitative problem solving. The user will provide a numerical problem, "
         "possibly with context or formulas.\n\n")
    p += "Your task is to:\n1. Carefully analyze the problem statement, any provided context, and formulas.\n"
    p += "2. Solve the problem. The primary output must be the JSON with the final answer.\n"
    p += "3. " + JSON_MAIN
    p += '{\n  "answer": "The final numerical answer as a string (e.g., \'123.45\', or \'x = 5\')"\n}\n'
    p += "   The value of \"answer\" should be the final numerical result as a string.\n\n"
    ctx = r.get("question_context_used") or r.get("question_context")
    if ctx:
        p += f"Problem Context:\n{ctx}\n\n"
    if r.get("formula_context"):
        p += f"Relevant Formulas:\n{r['formula_context']}\n\n"
    p += f"Problem:\n{r['question']}\n\n"
    p += "Your response (JSON object with the numerical answer):"
    return p


def last_boxed(s):
    i = s.rfind("\\boxed{")
    if i < 0:
        return None
    j = i + len("\\boxed{")
    depth, k = 1, j
    while k < len(s) and depth:
        if s[k] == "{":
            depth += 1
        elif s[k] == "}":
            depth -= 1
        k += 1
    return s[j:k - 1] if depth == 0 else None


NUM = re.compile(r"-?(\d+(\.\d+)?|\.\d+)")


def numeric_gold(g):
    """the gold's final boxed value when it is one plain number (else None)"""
    b = last_boxed(g or "")
    if b is None:
        return None
    t = b.strip().strip("$").strip()
    t = re.sub(r"^\\text\{[^}]*\}", "", t).strip()
    t = re.sub(r"^[A-Za-z\\_{}()^0-9,' ]{0,40}?(=|\\approx|≈)\s*", "", t) if re.search(r"(=|\\approx|≈)", t) else t
    t = re.sub(r"^(\\approx|≈|~)\s*", "", t)
    t = t.rstrip(". ").replace("{,}", "").strip()
    t = re.sub(r"\\(,|;|!| )", "", t)
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", t):
        t = t.replace(",", "")
    if not NUM.fullmatch(t):
        return None
    v = float(t)
    return int(v) if v == int(v) and "." not in t else v


def letters_of(gold):
    if isinstance(gold, list):
        return [x.strip() for x in gold]
    return [x.strip() for x in re.split(r"[,\s]+", gold or "") if x.strip()]


def main():
    models = sorted(set(git("ls-tree", "--name-only", COMMIT, "Single_Choice/").decode().split())
                    | set(git("ls-tree", "--name-only", COMMIT, "Numerical_QA/").decode().split())
                    | set(git("ls-tree", "--name-only", COMMIT, "Multipl_Choice/").decode().split()))
    models = sorted({m.split("/")[1] for m in models})
    rng = random.Random(SEED)
    drawn = []
    for m in models:
        # TaxCalc
        path, recs = load(f"Numerical_QA/{m}/benchmark_numerical_filtered_final_eval.jsonl")
        pool = []
        for k, r in enumerate(recs):
            g = numeric_gold(r.get("gold_answer"))
            if g is None:
                continue
            pool.append(("TaxCalc", path, k, r, {"id": f"{r['qid']}", "query": prompt_numerical(r), "answer": g}))
        for j in sorted(rng.sample(range(len(pool)), min(N_CALC, len(pool)))):
            drawn.append((m, pool[j]))
        # TaxSCQ
        pool = []
        for sub in ("finance", "econ"):
            path, recs = load(f"Single_Choice/{m}/RESULT_{sub}_single_choice_eval_eval.jsonl")
            for k, r in enumerate(recs):
                opts = r.get("options") or []
                g = letters_of(r.get("gold_answer"))
                if not (2 <= len(opts) <= 10) or len(g) != 1 or not ("A" <= g[0] <= chr(64 + len(opts))):
                    continue
                gi = ord(g[0]) - 65
                choices = [re.sub(r"^[A-J]\)\s*", "", o) for o in opts]
                pool.append(("TaxSCQ", path, k, r, {"id": r["qid"], "query": prompt_single(r), "choices": choices,
                                                     "gold": gi, "answer": choices[gi]}))
        for j in sorted(rng.sample(range(len(pool)), min(N_SCQ, len(pool)))):
            drawn.append((m, pool[j]))
        # TaxMCQ
        pool = []
        for sub in ("finance", "econ"):
            path, recs = load(f"Multipl_Choice/{m}/RESULT_{sub}_Multiple_Choice_eval.jsonl")
            for k, r in enumerate(recs):
                opts = r.get("options") or []
                g = letters_of(r.get("gold_answer"))
                if not (2 <= len(opts) <= 5) or not g or any(not ("A" <= x <= chr(64 + len(opts))) or len(x) != 1 for x in g):
                    continue
                pool.append(("TaxMCQ", path, k, r, {"id": r["qid"], "query": prompt_multiple(r),
                                                     "answer": "".join(sorted(set(g)))}))
        for j in sorted(rng.sample(range(len(pool)), min(N_MCQ, len(pool)))):
            drawn.append((m, pool[j]))
    rng.shuffle(drawn)
    counts = {}
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (m, (task, path, k, r, rec)) in enumerate(drawn, 1):
            ev = r.get("model_evaluation_result") or {}
            out = ev.get("model_raw_response")
            name = MODEL_NAME.get(m, m)
            counts[(name, task)] = counts.get((name, task), 0) + 1
            case = {"id": "%s-%04d" % (PREFIX, n), "task": task, "record": rec,
                    "output": out if out is not None else "",
                    "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "%d:%s" % (k, r["qid"]),
                               "model": name, "model_kind": KIND[m], "shots": "zero-shot", "lang": "en"},
                    "hint": "source parsed answer: %s; source LLM-judge category: %s" % (
                        json.dumps(ev.get("model_answer"), ensure_ascii=False)[:200], r.get("category"))}
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(drawn), sorted(counts.items()))


if __name__ == "__main__":
    main()
