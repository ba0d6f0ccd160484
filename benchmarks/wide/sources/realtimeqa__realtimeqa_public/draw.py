#!/usr/bin/env python3
"""Draw RealTime QA generation-setting answers of 13 API models (weekly runs of 2026) committed in
realtimeqa/realtimeqa_public into drawn.jsonl.

stdlib only; reads the snapshot at one pinned commit. For every model the files
baseline_results/2026/<date>_qa_<model>_gen.jsonl (closed book) and <date>_qa_<model>_gcs_gen.jsonl
(with the week's Google custom search results) hold one free-text `prediction` a question. The gold
answer is the correct option's text (past/2026/<date>_qa.jsonl: choices[answer]). Each case is a TaxRead
record. From each model 11 or 12 items are drawn (half closed book, half with retrieval) with a fixed seed.
"""
import datetime, json, os, random, re, subprocess

GIT = "/work/.mirror/realtimeqa+realtimeqa_public/repo"
REPO = "realtimeqa/realtimeqa_public"
PREFIX = "realtimeqa__realtimeqa_public"
COMMIT = "bc15fba7f45535fbdb2674d03de7b65a2a9e065f"   # HEAD, 2026-07-18 "add"
SEED = 20261216
TOTAL = 150
HERE = os.path.dirname(os.path.abspath(__file__))

KIND = {  # all served through an API; the reasoning-first models are marked "reasoning"
    "anthropic_claude-haiku-4.5": "api",
    "anthropic_claude-opus-4.6": "api",
    "anthropic_claude-sonnet-4.5": "api",
    "anthropic_claude-sonnet-4.6": "api",
    "google_gemini-2.5-pro": "reasoning",
    "google_gemini-3-pro-preview": "reasoning",
    "google_gemini-3.1-pro-preview": "reasoning",
    "meta-llama_llama-4-maverick": "api",
    "meta-llama_llama-4-scout": "api",
    "openai_gpt-4.1": "api",
    "openai_gpt-5.2": "api",
    "openai_gpt-5.3-chat": "api",
    "openai_gpt-5.4": "api",
}


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def ls(path):
    out = subprocess.run(["git", "--git-dir", GIT, "ls-tree", "-r", "--name-only", COMMIT, path],
                         check=True, capture_output=True).stdout.decode("utf-8")
    return out.split()


def jsonl(path):
    return [json.loads(l) for l in git(path).splitlines() if l.strip()]


def parse_date(s):
    for fmt in ("%Y/%m/%d", "%Y-%m-%d"):
        try:
            return datetime.datetime.strptime(s, fmt)
        except (ValueError, TypeError):
            pass
    return None


def add_today(sentence, date):  # scripts/utils/tools.py add_today
    return "Today is {}. ".format(parse_date(date).strftime("%B %d, %Y")) + sentence


def retrieved_text(datum, top_k=5):  # scripts/generation/gpt4o.py get_retrieved_text
    text = ""
    for article in datum["search_result"][:top_k]:
        d = parse_date(article.get("publish_date"))
        content = article.get("text", "")
        if d is None or content == "":
            continue
        first = " ".join(content.split("\n\n")[:2])
        if "title" in article:
            first = article["title"] + " " + first
        text += "Article on {}: {}\n".format(d.strftime("%B %d, %Y"), first)
    return text


def build_query(question, retrieved):  # scripts/generation/gpt4o.py gpt4_question_gen
    demo = add_today("What is the capital city of Japan?", question["question_date"])
    sentence = add_today(question["question_sentence"], question["question_date"])
    prompt = "Question: " + demo + "\nAnswer: Tokyo\n" + "Question: " + sentence
    if retrieved is not None:
        prompt = retrieved + "\n" + prompt
    # user message = prompt; the script then sends an assistant turn "\nAnsewer:" (sic) to be continued
    return prompt + "\n\nAnsewer:"


def main():
    files = ls("baseline_results/2026")
    runs = {}  # model -> list of (date, setting, path)
    for f in files:
        m = re.match(r"baseline_results/2026/(\d{8})_qa_(?!nota_)(.+?)(_gcs)?_gen\.jsonl$", f)
        if m:
            date, model, gcs = m.groups()
            runs.setdefault(model, []).append((date, "gcs" if gcs else "closed", f))
    have = {re.match(r"past/2026/(\d{8})_qa\.jsonl$", f).group(1) for f in ls("past/2026")
            if re.match(r"past/2026/\d{8}_qa\.jsonl$", f)}
    # weeks whose questions are not under past/ (the latest week sits in latest/, not readable in the snapshot)
    runs = {m: [r for r in rs if r[0] in have] for m, rs in runs.items()}
    models = sorted(runs)
    assert models == sorted(KIND), models
    rng = random.Random(SEED)
    base, extra = divmod(TOTAL, len(models))
    lucky = set(rng.sample(models, extra))
    qa_cache, gcs_cache = {}, {}
    cases = []
    for model in models:
        n = base + (1 if model in lucky else 0)
        pools = {"closed": [], "gcs": []}
        for date, setting, path in sorted(runs[model]):
            for i, d in enumerate(jsonl(path)):
                pools[setting].append((date, setting, path, i + 1, d))
        n_closed = (n + 1) // 2 if rng.random() < 0.5 else n // 2
        picked = rng.sample(pools["closed"], n_closed) + rng.sample(pools["gcs"], n - n_closed)
        for date, setting, path, line, d in picked:
            if date not in qa_cache:
                qa_cache[date] = {q["question_id"]: q for q in jsonl("past/2026/%s_qa.jsonl" % date)}
            q = qa_cache[date][d["question_id"]]
            gold = q["choices"][int(q["answer"][0])]
            retrieved = None
            if setting == "gcs":
                if date not in gcs_cache:
                    gcs_cache[date] = {g["question_id"]: g for g in jsonl("past/2026/%s_gcs.jsonl" % date)}
                retrieved = retrieved_text(gcs_cache[date][d["question_id"]])
            output = d["prediction"]
            assert isinstance(output, str)
            cases.append({
                "task": "TaxRead",
                "record": {"id": q["question_id"], "query": build_query(q, retrieved),
                           "text": retrieved if retrieved is not None else "", "answer": gold},
                "output": output,
                "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "line %d: %s" % (line, q["question_id"]),
                           "model": model.replace("_", "/", 1), "model_kind": KIND[model], "shots": "few-shot",
                           "lang": "en", "setting": "closed-book" if setting == "closed" else "google-custom-search top-5",
                           "question_path": "past/2026/%s_qa.jsonl" % date,
                           "choices": q["choices"], "gold_index": int(q["answer"][0])},
            })
    rng.shuffle(cases)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as fo:
        for k, c in enumerate(cases, 1):
            c = dict(id="%s-%04d" % (PREFIX, k), **c)
            fo.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
