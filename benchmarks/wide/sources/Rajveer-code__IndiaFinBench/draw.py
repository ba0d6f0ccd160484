#!/usr/bin/env python3
"""Draw IndiaFinBench model predictions (Rajveer-code/IndiaFinBench, evaluation/results/*.csv) into drawn.jsonl.

stdlib only. Reads the snapshot with git show. Items come from annotation/raw_qa/indiafinbench_qa_combined_406.json
(context, question, gold answer); outputs from the per-model result CSVs (column `prediction`, as committed).
"""
import csv, io, json, os, random, subprocess

GIT = "/work/.mirror/Rajveer-code+IndiaFinBench/repo"
COMMIT = "a8c394bfcf5846abb2aeea560f02beea1e1f2d7e"
REPO = "Rajveer-code/IndiaFinBench"
PREFIX = "Rajveer-code__IndiaFinBench"
SEED = 20261206
QA = "annotation/raw_qa/indiafinbench_qa_combined_406.json"
RES = "evaluation/results"
HERE = os.path.dirname(os.path.abspath(__file__))
# per model: TaxCalc, TaxSCQ (yes/no contradiction), TaxRead (regulatory interpretation), TaxRead (temporal)
QUOTA = {"calc": 3, "scq": 3, "reg": 2, "tmp": 2}
# qwen3_235b is left out: every prediction is an API failure message ("FAIL: Error code: 402 ...")
SKIP = {"qwen3_235b_results.csv"}
# model file -> (model name as the scripts name it, kind)
MODELS = {
    "deepseek_r1_70b_results.csv": ("deepseek/deepseek-r1-distill-llama-70b", "reasoning"),
    "gemini25_pro_results.csv": ("gemini-2.5-pro", "api"),
    "gemini_results.csv": ("gemini-2.5-flash", "api"),
    "gemma4_e4b_results.csv": ("gemma4 (e4b, Ollama)", "chat"),
    "gpt_oss_120b_results.csv": ("openai/gpt-oss-120b", "reasoning"),
    "gpt_oss_20b_results.csv": ("openai/gpt-oss-20b", "reasoning"),
    "groq70b_results.csv": ("meta-llama/Llama-3.3-70B-Instruct", "chat"),
    "haiku_results.csv": ("claude-3-haiku-20240307", "api"),
    "kimi_k2_results.csv": ("moonshotai/kimi-k2-instruct", "chat"),
    "llama3_results.csv": ("meta-llama/Meta-Llama-3-8B-Instruct", "chat"),
    "llama4scout_results.csv": ("meta-llama/llama-4-scout-17b-16e-instruct", "chat"),
    "mistral_results.csv": ("mistralai/Mistral-7B-Instruct-v0.3", "chat"),
    "nemotron_120b_results.csv": ("nvidia/nemotron-3-super-120b-a12b", "reasoning"),
    "qwen3_32b_results.csv": ("qwen/qwen3-32b", "reasoning"),
}
# Gold numbers for numerical_reasoning items whose gold answer is one quantity (read by hand from the gold text;
# the number is in the gold's own unit: crore rupees, lakh rupees, per cent, days, months, directors, crore/lakh shares).
# Items whose gold is a date, a yes/no verdict, several values or a formula are not used as TaxCalc.
CALC_GOLD = {
    "NUM_001": 9, "NUM_002": 180, "NUM_003": 100, "NUM_004": 0.5, "NUM_005": 7.5, "NUM_006": 2, "NUM_007": 180,
    "NUM_008": 50, "NUM_011": 50, "NUM_012": 4, "NUM_033": 20, "NUM_067": 13750, "NUM_068": 5500, "NUM_069": 5500,
    "NUM_070": 32.35, "NUM_071": 625, "NUM_072": 38000, "NUM_074": 33000, "NUM_076": 57408, "NUM_077": 3900,
    "NUM_078": 10000, "NUM_079": 820000, "NUM_080": 63000, "NUM_081": 10000, "NUM_083": 11.9, "NUM_084": 11.5,
    "NUM_087": 10, "NUM_088": 50, "NUM_090": 10, "NUM_094": 40, "NUM_095": 5500, "NUM_096": 625, "NUM_097": 19000,
    "NUM_102": 25, "NUM_104": 100, "NUM_105": 80, "NUM_112": 12, "NUM_115": 5, "NUM_116": 7.5, "NUM_127": 11,
    "NUM_131": 195, "NUM_132": 50, "NUM_133": 13, "NUM_135": 6, "NUM_136": 2, "NUM_138": 20,
}
MAX_SPAN_WORDS = 12  # TaxRead only where the gold is a short span

SYSTEM = ("You are an expert in Indian financial regulation and policy.\n"
          "Answer questions using ONLY the provided context passage.\n"
          "Do not use any external knowledge.\n"
          "Be concise and precise. Give only the answer \u2014 no preamble.")
SYSTEM_VERTEX = ("You are an expert in Indian financial regulation and policy. "
                 "Answer questions using ONLY the provided context passage. "
                 "Do not use any external knowledge. Be concise and precise. "
                 "Give only the answer \u2014 no preamble.")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def ctx_of(item):
    return " ".join(item.get("context", "").split()[:450])


def prompt(item, vertex):
    """The prompt as the repository's scripts build it (scripts/evaluate.py and evaluate_new_models*.py,
    evaluate_v7_models.py; scripts/eval_vertex_models.py for gemini-2.5-pro)."""
    task, q = item["task_type"], item["question"]
    if vertex:
        if task == "contradiction_detection":
            block = "PASSAGE A:\n%s\n\nPASSAGE B:\n%s" % (item.get("context_a", "")[:1500], item.get("context_b", "")[:800])
            ins = "Answer Yes or No, then give a one-sentence explanation of why the passages contradict or don't contradict."
        elif task == "numerical_reasoning":
            block, ins = "CONTEXT:\n%s" % item.get("context", ""), "Show your calculation steps and include the unit in your final answer."
        else:
            block, ins = "CONTEXT:\n%s" % item.get("context", ""), "Give the exact answer as it appears in or is derivable from the context."
        return SYSTEM_VERTEX + "\n\n" + "%s\n\nQUESTION: %s\n\n%s" % (block, q, ins)
    ctx = ctx_of(item)
    if task == "contradiction_detection":
        body = ("Passage A:\n%s\n\nPassage B:\n%s\n\nQuestion: %s\n\nAnswer with 'Yes' or 'No' then one sentence of explanation:"
                % (item.get("context_a", "")[:1500], item.get("context_b", "")[:1500], q))
    elif task == "numerical_reasoning":
        body = "Context:\n%s\n\nQuestion: %s\n\nShow your calculation and give the final answer with units:" % (ctx, q)
    elif task == "temporal_reasoning":
        body = "Context:\n%s\n\nQuestion: %s\n\nAnswer precisely, noting relevant dates or sequences:" % (ctx, q)
    else:
        body = "Context:\n%s\n\nQuestion: %s\n\nAnswer:" % (ctx, q)
    return SYSTEM + "\n\n" + body


def bucket(item):
    t = item["task_type"]
    if t == "numerical_reasoning":
        return "calc" if item["id"] in CALC_GOLD else None
    if t == "contradiction_detection":
        return "scq" if item["answer"].strip().rstrip(".").lower() in ("yes", "no") else None
    if len(item["answer"].split()) > MAX_SPAN_WORDS:
        return None
    return "reg" if t == "regulatory_interpretation" else "tmp"


def main():
    items = {x["id"]: x for x in json.loads(git("show", "%s:%s" % (COMMIT, QA)))}
    files = [p.split("/")[-1] for p in git("ls-tree", "--name-only", COMMIT, RES + "/").decode().split()]
    rng = random.Random(SEED)
    drawn = []
    for fn in sorted(f for f in files if f.endswith(".csv")):
        if fn in SKIP:
            continue
        model, kind = MODELS[fn]
        rows = list(csv.DictReader(io.StringIO(git("show", "%s:%s/%s" % (COMMIT, RES, fn)).decode("utf-8"))))
        pools = {k: [] for k in QUOTA}
        for k, r in enumerate(rows):
            p = r["prediction"]
            if not p.strip() or p.startswith("FAIL:") or p.startswith("ERROR"):
                continue  # API failure or empty response: no model output
            it = items.get(r["id"])
            if it is None:
                continue
            b = bucket(it)
            if b:
                pools[b].append((k, r, it))
        for b, n in QUOTA.items():
            for j in rng.sample(range(len(pools[b])), min(n, len(pools[b]))):
                drawn.append((fn, model, kind, b) + pools[b][j])
    rng.shuffle(drawn)
    out = []
    for n, (fn, model, kind, b, k, r, it) in enumerate(drawn, 1):
        vertex = fn == "gemini25_pro_results.csv"
        q = prompt(it, vertex)
        if b == "calc":
            task, rec = "TaxCalc", {"id": it["id"], "query": q, "answer": CALC_GOLD[it["id"]]}
        elif b == "scq":
            g = 0 if it["answer"].strip().rstrip(".").lower() == "yes" else 1
            task, rec = "TaxSCQ", {"id": it["id"], "query": q, "choices": ["Yes", "No"], "gold": g,
                                   "answer": ["Yes", "No"][g]}
        else:
            text = it.get("context", "") if vertex else ctx_of(it)
            task, rec = "TaxRead", {"id": it["id"], "query": q, "text": text, "answer": it["answer"]}
        case = {"id": "%s-%04d" % (PREFIX, n), "task": task, "record": rec, "output": r["prediction"],
                "source": {"repo": REPO, "commit": COMMIT, "path": "%s/%s" % (RES, fn), "item": "%d:%s" % (k, r["id"]),
                           "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en"},
                "hint": "source correct=%s; gold text: %s" % (r.get("correct", ""), it["answer"])}
        out.append(case)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for c in out:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    import collections
    print(len(out), collections.Counter(c["task"] for c in out), collections.Counter(c["source"]["model"] for c in out))


if __name__ == "__main__":
    main()
