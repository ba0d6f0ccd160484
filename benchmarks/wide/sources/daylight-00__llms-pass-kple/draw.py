#!/usr/bin/env python3
"""Draw Korean Pharmacist Licensing Examination (KPLE) outputs committed in daylight-00/llms-pass-kple
(1_run/output/<model> [f1_p1_q<lang>].json) into drawn.jsonl. stdlib only.

The question texts and the prompts the models saw are read at commit 464dad8 (the first commit that
holds them); later commits blank them (`input` "", `question_text` "<자료(비공개)>"/""), with
identical responses (checked for every output file)."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/daylight-00+llms-pass-kple/repo"
COMMIT = "464dad80ba34c81be92e67e79e2f003987f55ee1"
REPO = "daylight-00/llms-pass-kple"
PREFIX = "daylight-00__llms-pass-kple"
SEED = 20261206
PER_LANG = 2  # stratum 1: per model and exam language (q1 Korean original, q2 English translation)
PER_MODEL_NONTRIVIAL = 1  # stratum 2: per model, among its outputs that are more than one numeral (+ its option text)
TOK = re.compile(r"<\|[^|>]*\|>|</s>|<s>")
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMS = {"q1": ("0_data/exam_origin.json", "ko"), "q2": ("0_data/exam_sonnet.json", "en")}
INST = ("You are taking the Pharmacist Licensing Examination. Read the question carefully and use your judgment "
        "to select one of the options beginning with '①, ②, ③, ④, ⑤' as an answer. Submit only one symbol from "
        "'①, ②, ③, ④, ⑤' without any explanation, as this is an OMR exam.")
NUMS = "①②③④⑤"
API = ("gpt-", "claude-", "gemini-", "chat-bison", "text-unicorn")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def load(path):
    return json.loads(git("show", f"{COMMIT}:{path}"))


def options(text):
    """Option texts after ①..⑤ (each up to the next option line)."""
    starts = [m.start() for m in re.finditer(r"^[①②③④⑤]", text, re.M)]
    if [text[s] for s in starts] != list(NUMS):
        return None, None
    opts = []
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(text)
        opts.append(text[s + 1:e].strip())
    return text[:starts[0]].rstrip(), opts


def trivial(resp):
    """A bare circled numeral, optionally with option text, after stripping special tokens, ':' and '#'."""
    t = TOK.sub("", resp).strip()
    t = re.sub(r"^[:：]\s*", "", t)
    t = re.sub(r"^#+\s*", "", t)
    return bool(re.fullmatch(r"[①②③④⑤][^①-⑩\n]{0,80}", t))


def main():
    exams = {k: load(p) for k, (p, _) in EXAMS.items()}
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "1_run/output").decode().split("\n") if f.endswith(".json")]
    pools, nontrivial = {}, {}
    for f in sorted(files):
        m = re.match(r"1_run/output/(.+) \[f1_p1_(q[12])\]\.json$", f)
        model, q = m.group(1), m.group(2)
        data = load(f)
        exam = exams[q]
        assert len(data) == len(exam)
        for k, (r, x) in enumerate(zip(data, exam)):
            qt = x["question_text"]
            placeholder = "비공개" in qt or "onfidential" in qt
            if r["response"] is None or qt not in r["input"]:
                continue
            assert (r["year"], r["question_number"], r["answer"]) == (x["year"], x["question_number"], x["answer"])
            stem, opts = options(qt)
            if opts is None or not (1 <= x["answer"] <= 5):
                continue
            query = INST + "\n\n" + qt
            if r["input"].rstrip().endswith("Answer:"):
                query += "\n\nAnswer:"  # local models: the assistant turn was opened with "Answer: "
            case = {"path": f, "item": "%d:%d-%s-%d" % (k, x["year"], x["subject_id"], x["question_number"]),
                    "query": query, "choices": opts, "gold": x["answer"] - 1, "output": r["response"], "q": q}
            if not placeholder:  # stratum 1 leaves out the items whose question shows the withheld-material placeholder
                pools.setdefault(model, {}).setdefault(q, []).append(case)
            if not trivial(r["response"]):
                nontrivial.setdefault(model, []).append(case)
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        for q in ("q1", "q2"):
            pool = pools[model][q]
            for j in rng.sample(range(len(pool)), PER_LANG):
                drawn.append((model, q, pool[j]))
    rng.shuffle(drawn)
    taken = {(m, c["path"], c["item"]) for m, _, c in drawn}
    rng2 = random.Random(SEED + 1)
    drawn2 = []
    for model in sorted(nontrivial):
        pool = [c for c in nontrivial[model] if (model, c["path"], c["item"]) not in taken]
        for j in rng2.sample(range(len(pool)), min(PER_MODEL_NONTRIVIAL, len(pool))):
            drawn2.append((model, pool[j]["q"], pool[j]))
    rng2.shuffle(drawn2)
    drawn += drawn2
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as fh:
        for n, (model, q, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "choices": c["choices"],
                              "gold": c["gold"], "answer": c["choices"][c["gold"]]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": "api" if model.startswith(API) else "chat", "shots": "zero-shot",
                              "lang": EXAMS[q][1]}}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: {q: len(v) for q, v in p.items()} for m, p in pools.items()})
    print({m: len(v) for m, v in nontrivial.items()}, len(drawn), len(drawn2))


if __name__ == "__main__":
    main()
