#!/usr/bin/env python3
"""Draw outputs committed in protimroy/crosslingual-test-time-scaling into drawn.jsonl. stdlib only.

Sources in the snapshot (the MGSM lm-eval logs under experiments/crosslingual_mgsm are Git LFS
pointers and are not in it):
- experiments/language_forcing/artifacts/<size>_<exp>/<qlang>/s1_infer_8000[_<rlang>].jsonl:
  s1.1-{3B,7B,14B,32B} on MGSM (TaxCalc), the prompt and the whole generation in `output`.
- experiments/crossdomain/artifacts/global_mmlu/...: lm-eval --log_samples of Global-MMLU
  (TaxSCQ, 4 options) for Qwen2.5-32B-Instruct and s1.1-32B (thinking budgets 500-8000).
- experiments/crossdomain/artifacts/{fork,copal_id}/...: lm-eval logs of FORK and COPAL-ID
  (TaxSCQ, 2 options), with the authors' GPT-extracted answer (hint).
- lm-evaluation-harness/qwenagg64/...: lm-eval log of Qwen2.5-0.5B-Instruct on mgsm_direct_de
  (TaxCalc, sampled at temperature 1).
"""
import json, os, random, re, subprocess

GIT = "/work/.mirror/protimroy+crosslingual-test-time-scaling/repo"
COMMIT = "2b21a157e072b9ec29825642099cab247c00e6bd"
REPO = "protimroy/crosslingual-test-time-scaling"
PREFIX = "protimroy__crosslingual-test-time-scaling"
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))
LANGS = {"zh", "en", "ja", "ko", "de", "fr", "es", "ru"}
_cache = {}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def rows_of(path):
    if path not in _cache:
        raw = git("show", f"{COMMIT}:{path}").decode("utf-8")
        _cache[path] = [json.loads(l) for l in raw.splitlines() if l.strip()]
    return _cache[path]


def tree(prefix):
    out = []
    for line in git("ls-tree", "-r", "-l", COMMIT, prefix).decode().splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        if size.isdigit() and int(size) > 200:  # real blobs only (not LFS pointers, not absent)
            out.append(path)
    return out


def lang_of(code):
    return code if code in LANGS else "other"


def chat_parts(prompt):
    """system and user texts of a Qwen chat-template prompt."""
    sys_m = re.search(r"<\|im_start\|>system\n(.*?)<\|im_end\|>", prompt, re.S)
    usr_m = re.search(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", prompt, re.S)
    return (sys_m.group(1) if sys_m else ""), (usr_m.group(1) if usr_m else prompt)


def lf_pool(size):
    files = [p for p in tree("experiments/language_forcing/artifacts")
             if p.endswith(".jsonl") and p.split("/")[3].startswith(size + "_")]
    return files


def draw_lf(rng, size, n, taken):
    files = lf_pool(size)
    cases = []
    while len(cases) < n:
        p = rng.choice(files)
        rows = rows_of(p)
        if not rows:
            files.remove(p)
            continue
        k = rng.randrange(len(rows))
        if (p, k) in taken:
            continue
        taken.add((p, k))
        r = rows[k]
        full = r["output"]
        cut = full.find("<|im_start|>assistant\n")
        if cut < 0:
            continue
        system, user = chat_parts(full[:cut])
        out = full[cut + len("<|im_start|>assistant\n"):]
        exp = p.split("/")[3]            # e.g. 14B_NxN, 32B_combined
        qlang = p.split("/")[4]
        m = re.search(r"s1_infer_8000_([a-z]{2})\.jsonl$", p)
        rlang = m.group(1) if m else None
        query = (system + "\n\n" + user) if system and not system.startswith("You are Qwen") else user
        cases.append({
            "task": "TaxCalc",
            "record": {"id": f"{p}#{k}", "query": query, "answer": r["gold_answer"]},
            "output": out,
            "source": {"repo": REPO, "commit": COMMIT, "path": p, "item": str(k),
                       "model": f"simplescaling/s1.1-{size}", "model_kind": "reasoning", "shots": "zero-shot",
                       "lang": lang_of(qlang), "lang_code": qlang, "experiment": exp,
                       "forced_reasoning_lang": rlang or qlang, "thinking_budget": 8000}})
    return cases


def scq_from_lm_eval(p, k, r, model, kind, bench, extra):
    doc = r["doc"]
    if bench == "global_mmlu":
        choices = [doc["option_a"], doc["option_b"], doc["option_c"], doc["option_d"]]
    elif bench == "fork":
        choices = [doc["option_A"], doc["option_B"]]
    else:  # copal_id: options as the prompt showed them (lm-eval rewrites them)
        prompt = r["arguments"]["gen_args_0"]["arg_0"]
        _, user = chat_parts(prompt)
        ma = re.search(r"\nA\. (.*)\nB\. (.*)$", user, re.S)
        choices = [ma.group(1), ma.group(2)]
    gold = "ABCD".index(r["target"].strip())
    _, user = chat_parts(r["arguments"]["gen_args_0"]["arg_0"])
    out = r["resps"][0][0]
    hint = {}
    if "exact_match" in r:
        hint["lm_eval_exact_match"] = r["exact_match"]
    if "extracted_answer" in r:
        hint["gpt_extracted_answer"] = r["extracted_answer"]
    src = {"repo": REPO, "commit": COMMIT, "path": p, "item": str(r["doc_id"]),
           "model": model, "model_kind": kind, "shots": "zero-shot"}
    src.update(extra)
    return {"task": "TaxSCQ",
            "record": {"id": f"{p}#{r['doc_id']}", "query": user, "choices": choices, "gold": gold,
                       "answer": choices[gold]},
            "output": out, "source": src, "hint": json.dumps(hint) if hint else None}


def draw_gmmlu(rng, model_dir_prefix, model, kind, n, taken):
    files = [p for p in tree("experiments/crossdomain/artifacts/global_mmlu")
             if p.split("/")[4].startswith(model_dir_prefix) and "/samples_global_mmlu_" in p]
    cases = []
    while len(cases) < n:
        p = rng.choice(files)
        rows = rows_of(p)
        k = rng.randrange(len(rows))
        if (p, k) in taken:
            continue
        taken.add((p, k))
        r = rows[k]
        lcode = re.search(r"samples_global_mmlu_([a-z]{2})_", p).group(1)
        extra = {"lang": lang_of(lcode), "lang_code": lcode, "benchmark": "Global-MMLU"}
        budget = re.search(r"global_mmlu_(\d+)/", p)
        if budget:
            extra["thinking_budget"] = int(budget.group(1))
        cases.append(scq_from_lm_eval(p, k, r, model, kind, "global_mmlu", extra))
    return cases


def draw_cd(rng, bench, model_dir_prefix, model, kind, n, taken):
    files = [p for p in tree(f"experiments/crossdomain/artifacts/{bench}")
             if p.split("/")[4].startswith(model_dir_prefix) and "/extracted_samples_" in p]
    cases = []
    while len(cases) < n:
        p = rng.choice(files)
        rows = rows_of(p)
        k = rng.randrange(len(rows))
        if (p, k) in taken:
            continue
        taken.add((p, k))
        r = rows[k]
        lcode = "id" if bench == "copal_id" else "en"
        extra = {"lang": lang_of(lcode), "lang_code": lcode, "benchmark": {"fork": "FORK", "copal_id": "COPAL-ID"}[bench]}
        budget = re.search(r"_(\d+)/", p)
        if budget:
            extra["thinking_budget"] = int(budget.group(1))
        cases.append(scq_from_lm_eval(p, k, r, model, kind, bench, extra))
    return cases


def draw_qwen05(rng, n, taken):
    p = "lm-evaluation-harness/qwenagg64/Qwen__Qwen2.5-0.5B-Instruct/samples_mgsm_direct_de_2025-03-06T00-25-15.450624.jsonl"
    rows, seen = [], set()
    for r in rows_of(p):  # two rows a document (two filters), the same response
        if r["doc_id"] not in seen:
            seen.add(r["doc_id"])
            rows.append(r)
    cases = []
    for k in rng.sample(range(len(rows)), n):
        r = rows[k]
        _, user = chat_parts(r["arguments"]["gen_args_0"]["arg_0"])
        cases.append({
            "task": "TaxCalc",
            "record": {"id": f"{p}#{r['doc_id']}", "query": user, "answer": r["doc"]["answer_number"]},
            "output": r["resps"][0][0],
            "source": {"repo": REPO, "commit": COMMIT, "path": p, "item": str(r["doc_id"]),
                       "model": "Qwen/Qwen2.5-0.5B-Instruct", "model_kind": "chat", "shots": "zero-shot",
                       "lang": "de", "lang_code": "de", "benchmark": "MGSM (mgsm_direct_de)", "temperature": 1}})
    return cases


def main():
    rng = random.Random(SEED)
    taken = set()
    cases = []
    for size in ("3B", "7B", "14B"):
        cases += draw_lf(rng, size, 22, taken)
    cases += draw_lf(rng, "32B", 8, taken)
    cases += draw_gmmlu(rng, "s1.1-32B", "simplescaling/s1.1-32B", "reasoning", 8, taken)
    cases += draw_cd(rng, "fork", "s1.1-32B", "simplescaling/s1.1-32B", "reasoning", 3, taken)
    cases += draw_cd(rng, "copal_id", "s1.1-32B", "simplescaling/s1.1-32B", "reasoning", 3, taken)
    cases += draw_gmmlu(rng, "qwen-32B", "Qwen/Qwen2.5-32B-Instruct", "chat", 14, taken)
    cases += draw_cd(rng, "fork", "qwen-32B", "Qwen/Qwen2.5-32B-Instruct", "chat", 4, taken)
    cases += draw_cd(rng, "copal_id", "qwen-32B", "Qwen/Qwen2.5-32B-Instruct", "chat", 4, taken)
    cases += draw_qwen05(rng, 14, taken)
    rng.shuffle(cases)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, c in enumerate(cases, 1):
            c = dict(id="%s-%04d" % (PREFIX, n), **c)
            if c.get("hint") is None:
                c.pop("hint", None)
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    from collections import Counter
    print(len(cases), Counter(c["source"]["model"] for c in cases), Counter(c["task"] for c in cases))


if __name__ == "__main__":
    main()
