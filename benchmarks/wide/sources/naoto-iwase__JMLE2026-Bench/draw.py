#!/usr/bin/env python3
"""Draw JMLE2026-Bench (120th Japanese Medical Licensing Examination) model outputs committed in
naoto-iwase/JMLE2026-Bench into drawn.jsonl.

stdlib only. Every results file whose blob is present in the snapshot is one run (a model, or a model
with one reasoning setting); from each run 8 cases are drawn with a fixed seed: 6 multiple-answer items
("2つ選べ" / "3つ選べ", TaxMCQ), 1 single-answer item (TaxSCQ) and 1 more item that is a numeric-entry
item (TaxCalc) with probability 1/4, else another single-answer item."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/naoto-iwase+JMLE2026-Bench/repo"
COMMIT = "76c4b29475d3008072a77a091a0d27df049dadcd"
REPO = "naoto-iwase/JMLE2026-Bench"
PREFIX = "naoto-iwase__JMLE2026-Bench"
SEED = 20261212
HERE = os.path.dirname(os.path.abspath(__file__))

# benchmark.py at COMMIT
SYSTEM_PROMPT_CHOICE = """\
あなたは医師国家試験を解く医学の専門家です。
問題を読み、正解を{n}つ選んでください。

最終回答は必ず以下の形式で出力してください:
【回答】{example}"""

SYSTEM_PROMPT_CALC = """\
あなたは医師国家試験を解く医学の専門家です。
問題を読み、数値で回答してください。

最終回答は必ず以下の形式で出力してください:
【回答】3.14"""


def kind_of(path, meta):
    name = os.path.basename(path)
    if name.startswith(("anthropic_", "google_", "openai_gpt-5")):
        return "api"
    if name.endswith("_nothink.json"):
        return "chat"
    if "MedRECT" in name:
        return "domain"
    return "reasoning"


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def system_prompt(e):
    if e["question_type"] == "calculation":
        return SYSTEM_PROMPT_CALC
    n = e["num_choices_to_select"]
    return SYSTEM_PROMPT_CHOICE.format(n=n, example=",".join(list("ace")[:n]))


def user_text(e):
    parts = []
    if e.get("serial_group"):
        parts.append(e["serial_group"]["context_text"])
        parts.append("")
    parts.append(e["question_text"])
    return "\n".join(parts)


def options(e):
    opts = re.findall(r"(?m)^[ \u3000]*([a-e])[\u3000 ]+(.+?)\s*$", e["question_text"])
    return opts if "".join(o[0] for o in opts) == "abcde" else None


def num(s):
    x = float(s)
    return int(x) if x == int(x) else x


def main():
    data = json.loads(git("show", "%s:jmle2026_dataset.json" % COMMIT))
    by_id = {e["question_id"]: e for e in data}
    multi = sorted(q for q, e in by_id.items() if e["question_type"] == "multiple_choice"
                   and e["num_choices_to_select"] > 1)
    single = sorted(q for q, e in by_id.items() if e["question_type"] == "multiple_choice"
                    and e["num_choices_to_select"] == 1 and options(e))
    calc = sorted(q for q, e in by_id.items() if e["question_type"] == "calculation")
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "results/").decode().split("\n")
             if f.endswith(".json")]
    runs = []
    for f in sorted(files):
        try:
            raw = git("show", "%s:%s" % (COMMIT, f))
            d = json.loads(raw)
        except (subprocess.CalledProcessError, ValueError):
            continue  # blob absent from the snapshot (large file): left out
        runs.append((f, d))
    rng = random.Random(SEED)
    drawn = []
    for f, d in runs:
        meta = d["metadata"]
        res = {r["question_id"]: r for r in d["results"]}
        qids = rng.sample(multi, 6) + rng.sample(single, 2)
        if rng.random() < 0.25:
            qids[-1] = rng.choice(calc)
        for q in qids:
            e, r = by_id[q], res[q]
            query = system_prompt(e) + "\n\n" + user_text(e)
            rid = "%s#%s" % (f, q)
            if e["question_type"] == "calculation":
                t, rec = "TaxCalc", {"id": rid, "query": query, "answer": num(e["answer"][0])}
            elif e["num_choices_to_select"] > 1:
                t, rec = "TaxMCQ", {"id": rid, "query": query,
                                    "answer": "".join(sorted(a.upper() for a in e["answer"]))}
            else:
                choices = [o[1] for o in options(e)]
                g = "abcde".index(e["answer"][0])
                t, rec = "TaxSCQ", {"id": rid, "query": query, "choices": choices, "gold": g,
                                    "answer": choices[g]}
            hint = "predicted=%s parse_success=%s correct=%s" % (
                ",".join(r["predicted"]), r["parse_success"], r["correct"])
            item = q + (":image" if e["requires_image"] else "")
            drawn.append((t, rec, r["raw_response"] or "", hint, {
                "repo": REPO, "commit": COMMIT, "path": f, "item": item,
                "model": meta.get("display_name") or meta["model"],
                "model_kind": kind_of(f, meta), "shots": "zero-shot", "lang": "ja"}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, hint, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(runs), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
