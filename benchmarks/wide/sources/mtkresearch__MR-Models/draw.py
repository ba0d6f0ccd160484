#!/usr/bin/env python3
"""Draw TC-Eval (Traditional Chinese evaluation suite) model responses committed in mtkresearch/MR-Models
(TC-Eval/results/<model>_result.json) into drawn.jsonl.

stdlib only. The repository committed the responses of three models (gpt3.5 = gpt-3.5-turbo-0613 through the
OpenAI chat API, model_7c_chat = MediaTek Research's "Model 7-C" chat model, tw_llama_v1.0 = Taiwan-LLaMa v1.0,
both served through text-generation-inference) on the TC-Eval tasks. Three multiple-choice tasks whose golds
are in the repository are used, all as TaxSCQ:
  - TTQA (Taiwanese-terms trivia, 4 options, TC-Eval/data/TTQA/TTQA_mc_2.0.0.json),
  - PenguinsInTable_TC (BIG-bench penguins-in-a-table translated, 5 options, data/PenguinsInTable_TC/data.json),
  - TMMLU, restricted to eight business / economics / law exam subjects (options parsed from the question
    text, gold = content.A of data/TMMLU/subjects/<subject>/data.csv).
DRCD and FGC (span tasks) are left out: their test files are downloaded by a script and are not in the
repository. XSum-TC and IMDB-TC are not answer-with-a-gold tasks of taxpraben's kinds.
Per model: gpt3.5 12 TTQA + 13 Penguins + 25 TMMLU; model_7c_chat and tw_llama_v1.0 20 + 20 + 10."""
import csv, io, json, os, random, re, subprocess

GIT = "/work/.mirror/mtkresearch+MR-Models/repo"
COMMIT = "407883886cf4a36303b35e146e72d14c96b2bfc1"  # 2023-10-27 "Update benchmark result"
REPO = "mtkresearch/MR-Models"
PREFIX = "mtkresearch__MR-Models"
SEED = 20261214
HERE = os.path.dirname(os.path.abspath(__file__))

# model -> (kind, counts per task)
MODELS = {
    "gpt3.5": ("api", {"TTQA": 12, "PenguinsInTable_TC": 13, "TMMLU": 25}),
    "model_7c_chat": ("chat", {"TTQA": 20, "PenguinsInTable_TC": 20, "TMMLU": 10}),
    "tw_llama_v1.0": ("chat", {"TTQA": 20, "PenguinsInTable_TC": 20, "TMMLU": 10}),
}
MODEL_NAMES = {"gpt3.5": "gpt-3.5-turbo-0613", "model_7c_chat": "model_7c_chat (MediaTek Research Model 7-C chat)",
               "tw_llama_v1.0": "Taiwan-LLaMa v1.0 (tw_llama_v1.0)"}
SUBJECTS = ["會計學經濟學", "總體經濟", "企業管理", "行銷管理", "商業道德", "法學知識", "綜合法政知識", "國際法"]


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, "-c", "core.quotepath=off"] + list(a),
                          check=True, capture_output=True).stdout


def show(commit, path):
    return git("show", "%s:%s" % (commit, path)).decode("utf-8")


def query_for(model, task, question):
    """The prompt as the generation code at the pinned commit builds it (TC-Eval/inference/tasks.py,
    prompt_template.py, configs/config_*.json). TTQA and Penguins carry prefix_resp ' 答案： '; TMMLU none."""
    prefix = " 答案： " if task in ("TTQA", "PenguinsInTable_TC") else ""
    if model == "gpt3.5":
        # model_template 'openai' (identity); task query = query + prefix_resp (user message); the same
        # prefix_resp is also sent as an assistant message by OpenAIResponseModel.
        return question + prefix
    if model == "tw_llama_v1.0":
        return "<s> [INST] <<SYS>>  <</SYS>> %s [/INST]%s" % (question, prefix)
    # model_7c_chat: no config for it is committed; the task query without a chat wrapper.
    return question + prefix


LETTERS = "ABCDE"
OPT = re.compile(r"[\(（]\s*([A-E])\s*[\)）]")


def parse_options(q):
    """Option texts from '(A) ... (B) ... (C) ... (D) ...' (optionally (E)): the first (A), then the
    first (B) after it, and so on; None unless at least A-D are found in order."""
    ms = list(OPT.finditer(q))
    chain, pos = [], 0
    for letter in LETTERS:
        nxt = [m for m in ms if m.group(1) == letter and m.start() >= pos]
        if not nxt:
            break
        chain.append(nxt[0])
        pos = nxt[0].end()
    if len(chain) < 4:
        return None
    texts = []
    for i, m in enumerate(chain):
        end = chain[i + 1].start() if i + 1 < len(chain) else len(q)
        t = re.sub(r"\s+", " ", q[m.end():end]).strip()
        if not t:
            return None
        texts.append(t)
    # a stray option marker after the last option would make the last text swallow it
    if OPT.search(q[chain[-1].end():]):
        return None
    return texts


def main():
    results = {m: json.loads(show(COMMIT, "TC-Eval/results/%s_result.json" % m))["results"] for m in MODELS}

    items = {"TTQA": [], "PenguinsInTable_TC": [], "TMMLU": []}
    # TTQA
    ttqa = json.loads(show(COMMIT, "TC-Eval/data/TTQA/TTQA_mc_2.0.0.json"))
    for k, v in ttqa.items():
        choices = v["choices"]
        msg = ";".join("(%s) %s" % (LETTERS[i], c) for i, c in enumerate(choices))
        q = "問題: %s \n\n請從以下選項中選擇並回答: %s\n" % (v["question"], msg)
        items["TTQA"].append(("TTQA", k, q, choices, v["answer"], "TC-Eval/data/TTQA/TTQA_mc_2.0.0.json"))
    # Penguins
    peng = json.loads(show(COMMIT, "TC-Eval/data/PenguinsInTable_TC/data.json"))
    for k, v in peng.items():
        sq = v["question"]
        if sq.endswith("回答："):
            sq = sq.rstrip("回答：")  # as the scenario code does (rstrip of the characters)
        choices = v["choices"]
        msg = ";".join("(%s) %s" % (LETTERS[i], c) for i, c in enumerate(choices))
        q = "%s \n請從以下選項中選擇並回答: %s\n" % (sq, msg)
        items["PenguinsInTable_TC"].append(("PenguinsInTable_TC", k, q, choices, v["answer"],
                                            "TC-Eval/data/PenguinsInTable_TC/data.json"))
    # TMMLU (eight subjects)
    dropped = 0
    for s in SUBJECTS:
        path = "TC-Eval/data/TMMLU/subjects/%s/data.csv" % s
        rows = list(csv.DictReader(io.StringIO(show(COMMIT, path))))
        for m in MODELS:
            assert len(results[m]["TMMLU/" + s]) == len(rows), (m, s)
        for i, r in enumerate(rows):
            q, a = r["content.Q"], r["content.A"].strip()
            opts = parse_options(q)
            if not opts or len(a) != 1 or a not in LETTERS[:len(opts)]:
                dropped += 1
                continue
            items["TMMLU"].append(("TMMLU/" + s, str(i), q, opts, LETTERS.index(a), path))

    rng = random.Random(SEED)
    drawn = []
    for model in sorted(MODELS):
        kind, counts = MODELS[model]
        resp = {t: {str(x["id"]): x["response"] for x in lst} for t, lst in results[model].items()}
        for task in ("TTQA", "PenguinsInTable_TC", "TMMLU"):
            pool = [it for it in items[task] if it[1] in resp[it[0]]]
            for (tname, key, q, choices, gold, dpath) in rng.sample(pool, counts[task]):
                out = resp[tname][key]
                rec = {"id": "%s#%s" % (tname, key), "query": query_for(model, task, q),
                       "choices": choices, "gold": gold, "answer": choices[gold]}
                src = {"repo": REPO, "commit": COMMIT, "path": "TC-Eval/results/%s_result.json" % model,
                       "item": "%s:%s (gold from %s)" % (tname, key, dpath), "model": MODEL_NAMES[model],
                       "model_kind": kind, "shots": "zero-shot", "lang": "zh"}
                drawn.append(("TaxSCQ", rec, out, src))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (t, rec, out, src) in enumerate(drawn, 1):
            f.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": out,
                                "source": src}, ensure_ascii=False) + "\n")
    print({k: len(v) for k, v in items.items()}, "TMMLU dropped", dropped, "cases", len(drawn))


if __name__ == "__main__":
    main()
