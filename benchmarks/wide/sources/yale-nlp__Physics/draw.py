#!/usr/bin/env python3
"""Draw PHYSICS (yale-nlp/Physics, PhD-qualifying physics problems) model solutions into drawn.jsonl.

stdlib only. Re-runnable. Reads the fetched snapshot with `git show COMMIT:PATH`.

Items: problems of the text-only split (PHYSICS/PHYSICS-textonly/*.jsonl) whose `final_answers` list holds exactly
one answer that is a single number (optionally `symbol =`/`\\approx` before it, a `\\times 10^{n}` factor and a unit
after it), with 0.1 <= |value| < 1e6, in a single-part question; symbolic answers, bare orders of magnitude
(`10^{n}`), multi-answer and multi-part problems are left out. Each becomes a TaxCalc record whose `answer` is the
number in the gold's own unit (the unit is kept in `source.item`).

Models: 10 of the 38 output folders (4 reasoning models, 3 API chat models, 3 open chat/domain models); from each,
15 items are drawn with a fixed seed among the items it answered with a non-empty text, then all cases are shuffled.
"""
import json, os, random, re, subprocess

GIT = "/work/.mirror/yale-nlp+Physics/repo"
REPO = "yale-nlp/Physics"
PREFIX = "yale-nlp__Physics"
SEED = 20261214
HEAD = "15dc8d90e7196690c279827f472bf27993b3d04e"     # 2025-03-31 "Update README.md"
OFFLINE_PROMPT = ("4c1a1d9", "offline_evaluation/get_answer.py")
API_PROMPT = (HEAD, "api_evaluation/evaluate_r1.py")
PER_MODEL = 15
HERE = os.path.dirname(os.path.abspath(__file__))
DOMAINS = ["atomic", "electro", "mechanics", "optics", "quantum", "statistics"]

# model -> (output folder, subfolder suffix, text field, kind, prompt style, model name as called)
RUNS = {
    "DeepSeek-R1": ("deepseek-r1_together_output", "_dataset_textonly", "solution", "reasoning", "api"),
    "o3-mini": ("o3-mini_together_output", "_dataset_textonly", "solution", "reasoning", "api"),
    "QwQ-32B-Preview": ("QwQ_32B_Preview_outputs", "_dataset_textonly", "llm_answers", "reasoning", "offline"),
    "DeepSeek-R1-Distill-Qwen-32B": ("DeepSeek_R1_Distill_Qwen_32B_outputs", "_dataset_textonly", "llm_answers",
                                     "reasoning", "offline"),
    "gpt-4o": ("gpt-4o_output", "_dataset", "solution", "api", "api"),
    "claude-3-5-sonnet-20241022": ("claude-3-5-sonnet-20241022_output", "_dataset", "solution", "api", "api"),
    "gemini-1.5-pro": ("gemini-1.5-pro_output", "_dataset", "solution", "api", "api"),
    "Llama-3.3-70B-Instruct": ("Llama_3.3_70B_Instruct_outputs", "_dataset_textonly", "llm_answers", "chat", "offline"),
    "Qwen2.5-72B-Instruct": ("Qwen2.5_72B_Instruct_outputs", "_dataset_textonly", "llm_answers", "chat", "offline"),
    "Qwen2.5-Math-72B-Instruct": ("Qwen2.5_Math_72B_Instruct_output", "_dataset_textonly", "llm_answers", "domain",
                                  "offline"),
}

# answers the number pattern accepts but that are symbolic (a variable after the number), or a bare 10^n estimate
EXCLUDE = {"mechanics/1_8", "mechanics/2_35", "statistics/1-31"}

UNIT = (r"(?:\\text\{\s*[^}]*\}|\\mathrm\{[^}]*\}|\^\\circ\s*(?:\\text\{C\}|C)|\\%|\\mu\s*m|\\overset\{\\circ\}\{A\}"
        r"|Å|[A-Za-z]{1,3})?(?:\^\{?-?\d+\}?)?")


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def jsonl(commit, path):
    try:
        text = git(commit, path)
    except subprocess.CalledProcessError:
        return []  # blob absent from the snapshot (files of 4 MiB and more)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def parse_gold(a):
    s = a.strip().strip("$").strip()
    s = re.sub(r"\\[,;! ]|~", " ", s)
    s = re.sub(r"\s+", " ", s).strip()
    m = re.match(r"^(?:[^=]{0,40}?(?:=|\\approx|\\simeq)\s*)?([-+]?\d+(?:\.\d+)?)\s*"
                 r"(?:(?:\\times|\\cdot)\s*10\^\{?\s*([-+]?\d+)\s*\}?)?\s*(.*)$", s)
    if not m:
        return None
    rest = m.group(3).strip()
    if rest.startswith("^") and not rest.startswith("^\\circ"):
        return None  # 10^{n}: an order of magnitude, not a number with a unit
    if not re.fullmatch(UNIT, rest):
        return None
    value = float(m.group(1)) * 10 ** (int(m.group(2)) if m.group(2) else 0)
    if value == int(value) and abs(value) < 1e15:
        value = int(value)
    else:
        value = round(value, 6)
    return value, rest


def multi_part(q):
    return bool(re.search(r"\(b\)|\(ii\)|\bb\)", q))


def system_prompt(style):
    commit, path = OFFLINE_PROMPT if style == "offline" else API_PROMPT
    src = git(commit, path)
    if style == "offline":  # adjacent string literals inside ( ... ), as written (escaped backslashes)
        block = re.search(r'"role": "system",\s*"content": \((.*?)\),\s*\}', src, re.S).group(1)
        parts = re.findall(r'"((?:[^"\\]|\\.)*)"', block)
    else:
        parts = [re.search(r'"role": "system",\s*"content": "((?:[^"\\]|\\.)*)"', src, re.S).group(1)]
    return "".join(p.encode("latin-1", "backslashreplace").decode("unicode_escape") for p in parts)


def main():
    items = {}
    for dom in DOMAINS:
        for d in jsonl(HEAD, "PHYSICS/PHYSICS-textonly/%s_dataset_textonly.jsonl" % dom):
            fa = d.get("final_answers") or []
            if len(fa) != 1 or d["id"] in EXCLUDE or multi_part(d["questions"]):
                continue
            p = parse_gold(fa[0])
            if p is None or not (0.1 <= abs(p[0]) < 1e6):
                continue
            items[d["id"]] = (dom, d["questions"], fa[0], p[0])
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        folder, suffix, field, kind, style = RUNS[model]
        sys_ = system_prompt(style)
        outs, hints, paths = {}, {}, {}
        for dom in DOMAINS:
            path = "outputs/%s/%s%s/response.jsonl" % (folder, dom, suffix)
            for r in jsonl(HEAD, path):
                if r.get("id") in items and (r.get(field) or "").strip():
                    outs[r["id"]] = r[field]
                    paths[r["id"]] = path
                    if "final_answers" in r:
                        hints[r["id"]] = "source extraction %s; source accuracy %s" % (r["final_answers"], r["accuracy"])
            if style == "offline":
                for r in jsonl(HEAD, path.replace("response.jsonl", "final_evaluation.jsonl")):
                    if r.get("id") in outs:
                        hints[r["id"]] = "source extraction %s; source accuracy %s" % (r["final_answers"], r["accuracy"])
        pool = sorted(outs)
        for key in rng.sample(pool, min(PER_MODEL, len(pool))):
            dom, q, gold_text, gold = items[key]
            rec = {"id": "PHYSICS-textonly#%s" % key, "query": sys_ + "\n\n" + q, "answer": gold}
            src = {"repo": REPO, "commit": HEAD, "path": paths[key], "item": "%s | gold: %s" % (key, gold_text),
                   "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en"}
            drawn.append((rec, outs[key], src, hints.get(key)))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (rec, output, src, hint) in enumerate(drawn, 1):
            case = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc", "record": rec, "output": output, "source": src}
            if hint:
                case["hint"] = hint
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(items), "items;", len(RUNS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
