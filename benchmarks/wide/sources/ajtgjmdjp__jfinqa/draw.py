#!/usr/bin/env python3
"""Draw jfinqa (Japanese financial numerical reasoning QA) baseline model outputs committed in
ajtgjmdjp/jfinqa (scripts/data/baselines/*predictions.json) into drawn.jsonl. stdlib only.

Each predictions file is one model run. The context each model saw (pre_text, the table as Markdown,
post_text) is rebuilt from the dataset file as it stood at the commit where that predictions file was
last written (the dataset changed between runs); a record whose question or gold differs from that
dataset version's is left out. 25 cases a model (runs of one model in two regimes share its 25),
stratified by subtask: 13 numerical_reasoning, 6 temporal_reasoning, 6 consistency_checking."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/ajtgjmdjp+jfinqa/repo"
COMMIT = "04831da9a5cdf1d1399c8adcc499faed25adb41a"
REPO = "ajtgjmdjp/jfinqa"
PREFIX = "ajtgjmdjp__jfinqa"
SEED = 20261210
HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "scripts/data/baselines/"
# predictions file -> (model, regime, model_kind, dataset file)
RUNS = {
    "gpt-4o_predictions.json": ("gpt-4o", "", "api", "jfinqa_v1.json"),
    "gpt-4o-mini_predictions.json": ("gpt-4o-mini", "", "api", "jfinqa_v1.json"),
    "gemini-2.0-flash_predictions.json": ("gemini-2.0-flash", "", "api", "jfinqa_v1.json"),
    "qwen2.5-3b-instruct_predictions.json": ("qwen2.5-3b-instruct", "", "chat", "jfinqa_v1.json"),
    "gemini-2.5-flash__R0__predictions.json": ("gemini-2.5-flash", "R0", "api", "jfinqa_lite_v1.json"),
    "gemini-2.5-flash__R1__predictions.json": ("gemini-2.5-flash", "R1", "reasoning", "jfinqa_lite_v1.json"),
    "gpt-5.4-mini__R0__predictions.json": ("gpt-5.4-mini", "R0", "api", "jfinqa_lite_v1.json"),
    "gpt-5.4-mini__R1__predictions.json": ("gpt-5.4-mini", "R1", "reasoning", "jfinqa_lite_v1.json"),
}
PER_MODEL = {"numerical_reasoning": 13, "temporal_reasoning": 6, "consistency_checking": 6}

# scripts/run_baseline.py (same text at f70c2ba and at COMMIT)
SYSTEM_PROMPT = (
    "あなたは日本の企業の財務諸表を分析する金融アナリストです。"
    "与えられた財務データを読み、質問に正確に答えてください。"
    "最終的な答えを必ず「Answer: 値」の形式で最終行に出力してください。"
    "パーセントが問われている場合は%記号を含めてください。"
    "「はい」「いいえ」で答える場合もAnswer:の形式で出力してください。"
)


def build_prompt(question, context):
    return (f"以下の財務データを読み、質問に答えてください。\n\n{context}\n\n"
            f"質問: {question}\n\n"
            f"計算過程を示した後、最終行に「Answer: 値」の形式で答えを出力してください。")


def format_context(row):  # src/jfinqa/models.py JFinQAQuestion.format_context / Table.to_markdown
    parts = []
    if row.get("pre_text"):
        parts.append("\n".join(row["pre_text"]))
    t = row.get("table") or {}
    if t.get("headers"):
        lines = ["| " + " | ".join(t["headers"]) + " |", "| " + " | ".join("---" for _ in t["headers"]) + " |"]
        lines += ["| " + " | ".join(r) + " |" for r in t["rows"]]
        parts.append("\n".join(lines))
    if row.get("post_text"):
        parts.append("\n".join(row["post_text"]))
    return "\n\n".join(parts)


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def last_commit(path):
    return git("log", "-1", "--format=%H", COMMIT, "--", path).decode().strip()


def gold_number(g):
    s = g.replace(",", "")
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)(%|ポイント|百万円|倍)?", s)
    if not m:
        return None
    x = float(m.group(1))
    return int(x) if x == int(x) and "." not in m.group(1) else x


def make_case(x, row):
    q = x["question"]
    query = SYSTEM_PROMPT + "\n\n" + build_prompt(q, format_context(row))
    g = x["gold"]
    if g in ("はい", "いいえ"):
        ch = ["はい", "いいえ"]
        return "TaxSCQ", {"query": query, "choices": ch, "gold": ch.index(g), "answer": g}
    m = re.search(r"(増益|増収|改善|増加)(?:したか|か)(減益|減収|悪化|減少)(?:したか|か)。$", q)
    if m:
        ch = [m.group(1), m.group(2)]
        if g not in ch:
            return None
        return "TaxSCQ", {"query": query, "choices": ch, "gold": ch.index(g), "answer": g}
    n = gold_number(g)
    if n is None:
        return None
    return "TaxCalc", {"query": query, "answer": n}


def main():
    pools = {}
    for fname, (model, regime, kind, dsname) in RUNS.items():
        path = BASE + fname
        c = last_commit(path)
        dspath = "scripts/data/final/" + dsname
        ds = {r["id"]: r for r in json.loads(git("show", "%s:%s" % (c, dspath)))}
        preds = json.loads(git("show", "%s:%s" % (COMMIT, path)))
        for key in sorted(preds):
            x = preds[key]
            row = ds.get(x["id"])
            if row is None or row["qa"]["question"] != x["question"] or row["qa"]["answer"] != x["gold"]:
                continue
            if x.get("error"):
                continue
            built = make_case(x, row)
            if built is None:
                continue
            pools.setdefault(model, {}).setdefault(x["subtask"], []).append(
                (fname, regime, kind, c, dspath, x, built))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        for sub in sorted(PER_MODEL):
            pool = pools[model].get(sub, [])
            drawn += [pool[j] for j in rng.sample(range(len(pool)), min(PER_MODEL[sub], len(pool)))]
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (fname, regime, kind, c, dspath, x, (task, rec)) in enumerate(drawn, 1):
            model = RUNS[fname][0]
            rec = dict({"id": "%s%s#%s" % (BASE, fname, x["id"])}, **rec)
            src = {"repo": REPO, "commit": COMMIT, "path": BASE + fname, "item": "%s:%s" % (x["id"], x["subtask"]),
                   "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "ja",
                   "context_from": "%s@%s" % (dspath, c)}
            if regime:
                src["regime"] = regime
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": task, "record": rec,
                                  "output": x["raw_response"], "source": src,
                                  "hint": "source predicted=%r correct=%s" % (x.get("predicted"), x.get("correct"))},
                                 ensure_ascii=False) + "\n")
    print({m: {s: len(p) for s, p in v.items()} for m, v in pools.items()}, len(drawn))


if __name__ == "__main__":
    main()
