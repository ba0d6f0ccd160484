#!/usr/bin/env python3
"""Draw SeaEval model predictions on its Chinese multiple-choice sets into drawn.jsonl.

stdlib only. Reads the SeaEval/SeaEval snapshot at commit 2fa805e (2024-07-15, the last commit that
still holds the `log/` folder of per-model predictions; later commits deleted it). Each log file is a
JSON list of records with `question`, `choices` ("(A) ..." strings), `answer` (the gold choice string),
`model_input` (the exact prompt) and `model_prediction` (the verbatim generation).

Sets used (all Chinese, four options, TaxSCQ): `c_eval_full` (C-Eval val with subject `category`),
`c_eval` (SeaEval's C-Eval sample), `cmmlu` (CMMLU sample), `cn_eval` (China-culture questions), and the
Chinese half of `cross_mmlu`. Instruction/chat models were run zero-shot with five prompt templates
(zero_shot_p1..p5); base models five-shot (five_shot_p1; the five demonstrations are dropped from
`query`). The `random` baseline is not a model and is left out.

Per model (seed 20261210): chat models 4 cases (2 from c_eval_full tax/accounting/law/economics
subjects, 1 cmmlu, 1 cn_eval; the two GPT API runs have only cn_eval and cross_mmlu: 2 + 2);
flan-t5/flan-ul2/mt0 3 cases (2 c_eval_full focus, 1 cmmlu or cn_eval); base models 3 cases
(c_eval, cmmlu, cn_eval, five-shot)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/SeaEval+SeaEval/repo"
COMMIT = "2fa805e215ec10e3f7bac5625fa73a5b2f9bd26a"
REPO = "SeaEval/SeaEval"
PREFIX = "SeaEval__SeaEval"
SEED = 20261210
HERE = os.path.dirname(os.path.abspath(__file__))

FOCUS = ("tax_accountant", "accountant", "law", "legal_professional", "college_economics",
         "business_administration")

CHAT = ["LLaMA_3_Merlion_8B", "LLaMA_3_Merlion_8B_v1_1", "gemma_2b_it", "gemma_7b_it", "llama_2_7b_chat",
        "meta_llama_3_70b_instruct", "meta_llama_3_8b_instruct", "mistral_7b_instruct_v0_2",
        "qwen1_5_110b_chat", "qwen_1_5_7b_chat", "sailor_0_5b_chat", "sailor_1_8b_chat", "sailor_4b_chat",
        "sailor_7b_chat", "sea_lion_7b_instruct", "sea_lion_7b_instruct_research",
        "sea_mistral_highest_acc_inst_7b", "seallm_7b_v2"]
SEQ2SEQ = ["flan_t5_base", "flan_t5_large", "flan_t5_small", "flan_t5_xl", "flan_t5_xxl", "flan_ul2", "mt0_xxl"]
API = ["gpt4_1106_preview", "gpt_35_turbo_1106"]
BASE = ["gemma_2b", "gemma_7b", "meta_llama_3_70b", "meta_llama_3_8b", "mistral_7b_v0_1", "mistral_7b_v0_2",
        "qwen1_5_110b", "qwen_1_5_7b", "sailor_0_5b", "sailor_1_8b", "sailor_4b", "sailor_7b", "sea_lion_3b",
        "sea_lion_7b"]


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def load(commit, path):
    return json.loads(git("show", "%s:%s" % (commit, path)))


def strip_letter(c):
    return re.sub(r"^\([A-J]\)\s*", "", c).strip()


def query_of(rec, shots):
    q = rec["model_input"]
    if shots == "few-shot":
        # five demonstrations then the test item: keep only the last "Question:" block
        q = q[q.rfind("Question:"):]
    return q


def make(commit, model, kind, shots, dset, path, idx, rec, extra_item=""):
    choices = [strip_letter(c) for c in rec["choices"]]
    gold = rec["choices"].index(rec["answer"])
    out = {"id": "%s#%s" % (path, idx), "query": query_of(rec, shots), "choices": choices, "gold": gold,
           "answer": choices[gold]}
    item = "%s:%s" % (idx, rec.get("id", ""))
    if rec.get("category"):
        item += ":" + rec["category"]
    item += extra_item
    src = {"repo": REPO, "commit": commit, "path": path, "item": item, "model": model, "model_kind": kind,
           "shots": shots, "lang": "zh"}
    return ("TaxSCQ", out, rec["model_prediction"], src)


def main():
    commit = COMMIT
    files = set(git("ls-tree", "-r", "--name-only", commit, "log/").decode().split("\n"))
    rng = random.Random(SEED)
    drawn = []

    def pick(model, dset, shots, pred=None):
        if shots == "few-shot":
            path = "log/%s/%s/five_shot_p1.json" % (model, dset)
        else:
            options = ["log/%s/%s/zero_shot_p%d.json" % (model, dset, p) for p in range(1, 6)]
            path = rng.choice([p for p in options if p in files])
        data = load(commit, path)
        if dset == "cross_mmlu":
            data = [d["Chinese"] for d in data]
        pool = [i for i, r in enumerate(data) if (pred is None or pred(r)) and r["answer"] in r["choices"]
                and (model, path, i) not in used]
        i = rng.choice(pool)
        used.add((model, path, i))
        return path, i, data[i]

    used = set()
    focus = lambda r: r.get("category") in FOCUS
    for model in sorted(CHAT + SEQ2SEQ + API + BASE):
        if model in API:
            kind, shots, slots = "api", "zero-shot", [("cn_eval", None)] * 2 + [("cross_mmlu", None)] * 2
        elif model in BASE:
            kind, shots, slots = "base", "few-shot", [("c_eval", None), ("cmmlu", None), ("cn_eval", None)]
        elif model in SEQ2SEQ:
            kind, shots = "chat", "zero-shot"
            slots = [("c_eval_full", focus)] * 2 + [(rng.choice(["cmmlu", "cn_eval"]), None)]
        else:
            kind, shots = "chat", "zero-shot"
            slots = [("c_eval_full", focus)] * 2 + [("cmmlu", None), ("cn_eval", None)]
        for dset, pred in slots:
            path, i, rec = pick(model, dset, shots, pred)
            drawn.append(make(commit, model, kind, shots, dset, path, i, rec))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases;", len({d[3]["model"] for d in drawn}), "models")


if __name__ == "__main__":
    main()
