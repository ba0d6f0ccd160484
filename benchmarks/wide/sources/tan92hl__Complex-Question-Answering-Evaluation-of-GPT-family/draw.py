#!/usr/bin/env python3
"""Draw closed-book KBQA answers committed in tan92hl/Complex-Question-Answering-Evaluation-of-GPT-family
(answers_from_LLMs/) into drawn.jsonl: MKQA and QALD-9 questions (multilingual) with a single gold answer,
as TaxRead records (no passage: text is empty). stdlib only; re-runnable, deterministic."""
import json, os, random, subprocess

GIT = "/work/.mirror/tan92hl+Complex-Question-Answering-Evaluation-of-GPT-family/repo"
COMMIT = "e6e790ef7d3548788598196845506cc6af6aa55a"
REPO = "tan92hl/Complex-Question-Answering-Evaluation-of-GPT-family"
PREFIX = "tan92hl__Complex-Question-Answering-Evaluation-of-GPT-family"
SEED = 20261212
HERE = os.path.dirname(os.path.abspath(__file__))

# model -> (kind, {dataset: path})
MODELS = {
    "gpt-3.5-turbo (ChatGPT, Feb 2023)": ("api", {
        "MKQA": "answers_from_LLMs/chatgpt/MKQA_chatgpt_answers.json",
        "QALD-9": "answers_from_LLMs/chatgpt/QALD-9_chatgpt_answers_February.json"}),
    "gpt-4": ("api", {
        "MKQA": "answers_from_LLMs/GPT-4/MKQA_GPT_4.json",
        "QALD-9": "answers_from_LLMs/GPT-4/QALD-9_GPT_4.json"}),
    "text-davinci-001": ("api", {
        "MKQA": "answers_from_LLMs/davinci1/davinci1_answers-MKQA.json",
        "QALD-9": "answers_from_LLMs/davinci1/davinci1_answers-QALD-9.json"}),
    "text-davinci-002": ("api", {
        "QALD-9": "answers_from_LLMs/davinci2/davinci2_answers-QALD-9.json"}),  # its MKQA file is not in the snapshot
    "text-davinci-003": ("api", {
        "MKQA": "answers_from_LLMs/davinci3/davinci3_answers-MKQA.json",
        "QALD-9": "answers_from_LLMs/davinci3/davinci3_answers-QALD-9.json"}),
    "flan-t5-xxl": ("chat", {
        "MKQA": "answers_from_LLMs/FLAN-T5/T5xxl_answers-MKQA_new.json",
        "QALD-9": "answers_from_LLMs/FLAN-T5/T5xxl_answers-QALD-9.json"}),
}
PER_MODEL = 25
MKQA_SHARE = 13  # per model with both datasets; the rest from QALD-9
LANG = {"en": "en", "zh_cn": "zh", "ru": "ru", "fr": "fr", "es": "es", "de": "de"}


def git_json(path):
    return json.loads(subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:{path}"],
                                     check=True, capture_output=True).stdout.decode("utf-8"))


def norm(s):
    return " ".join(str(s).split())


def qald_gold(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v).replace("_", " ")


def main():
    mkqa = {x["id"]: x for x in git_json("datasets/MKQA/mkqa_sample_label_final_processed.json")}
    qald = {x["ID"]: x for x in git_json("datasets/QALD-9/QALD-9_all_question_with_ans_label.json")}
    qald_alias = git_json("datasets/QALD-9/QALD-9_aliase_data.json")
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(MODELS):
        kind, files = MODELS[model]
        pools = {}
        for ds, path in files.items():
            pool = []
            for k, r in enumerate(git_json(path)):
                key = int(r.get("id", r.get("ID")))
                lang, q, out = r["language"], r["question"], r["answer"]
                if ds == "MKQA":
                    g = mkqa.get(key)
                    if g is None or norm(g["queries"].get(lang, "")) != norm(q):
                        continue
                    ans = g["answers"].get(lang) or []
                    if len(ans) != 1 or ans[0]["type"] in ("unanswerable", "long_answer"):
                        continue
                    gold, aliases, atype = ans[0]["text"], ans[0].get("aliases", []), ans[0]["type"]
                else:
                    g = qald.get(key)
                    if g is None or len(g["ans"]) != 1:
                        continue
                    qs = {x["language"]: x.get("string", "") for x in g["question"]}
                    if norm(qs.get(lang, "")) != norm(q):
                        continue
                    v = g["ans"][0]
                    gold = qald_gold(v)
                    aliases = [] if isinstance(v, bool) else (qald_alias.get(str(v)) or [])[:30]
                    atype = "qald type %d" % g["type_label"][0]
                pool.append({"path": path, "index": k, "key": key, "ds": ds, "lang": lang, "query": q,
                             "gold": gold, "aliases": aliases, "atype": atype, "output": out})
            pools[ds] = pool
        if len(pools) == 2:
            take = {"MKQA": MKQA_SHARE, "QALD-9": PER_MODEL - MKQA_SHARE}
        else:
            take = {ds: PER_MODEL for ds in pools}
        for ds in sorted(pools):
            pool = pools[ds]
            for j in rng.sample(range(len(pool)), min(take[ds], len(pool))):
                drawn.append((model, kind, pool[j]))
        print(model, {ds: len(p) for ds, p in pools.items()})
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (model, kind, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxRead",
                   "record": {"id": "%s:%s:%d:%s" % (c["ds"], c["path"].split("/")[-1], c["key"], c["lang"]),
                              "query": c["query"], "text": "", "answer": c["gold"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": "%d:id=%d:%s" % (c["index"], c["key"], c["lang"]),
                              "model": model, "model_kind": kind, "shots": "zero-shot",
                              "lang": LANG.get(c["lang"], "other"), "dataset": c["ds"], "question_lang": c["lang"],
                              "answer_type": c["atype"], "gold_aliases": c["aliases"]}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(len(drawn))


if __name__ == "__main__":
    main()
