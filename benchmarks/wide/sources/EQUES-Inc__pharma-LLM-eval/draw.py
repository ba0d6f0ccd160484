#!/usr/bin/env python3
"""Draw YakugakuQA baseline outputs (Japanese National Pharmacist Licensing Examination, 2012-2024)
committed in EQUES-Inc/pharma-LLM-eval (baseline_results/) into drawn.jsonl. stdlib only."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/EQUES-Inc+pharma-LLM-eval/repo"
COMMIT = "34d7e09bf073b67b0f5eae881bbc73599d2a7113"   # first commit; baseline_results/ was deleted after b650793
REPO = "EQUES-Inc/pharma-LLM-eval"
PREFIX = "EQUES-Inc__pharma-LLM-eval"
SEED = 20261216
HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM = "薬剤師国家試験を解きます。"
# file suffix -> (model, model_kind, prompt file, system line?)
#   open models: scripts/generation/chatgpt.py run_openmodel -> create_input (system line + 3 demos)
#   API models:  run_chatgpt -> create_input1 (3 demos, no system line)
#   097-A/097-B chatgpt & gpt4 runs: scripts/README.md runs baseline_main.py with its default prompts/prompt.jsonl;
#   the full-year gpt4o runs use prompts/prompt_yakugaku.jsonl (README, pipeline.py default).
MODELS = {
    "EQUES_TinySwallow-Stratos-1.5B": ("EQUES/TinySwallow-Stratos-1.5B", "reasoning", "prompt_yakugaku", True),
    "SakanaAI_TinySwallow-1.5B-Instruct": ("SakanaAI/TinySwallow-1.5B-Instruct", "chat", "prompt_yakugaku", True),
    "Qwen_Qwen2.5-7B-Instruct": ("Qwen/Qwen2.5-7B-Instruct", "chat", "prompt_yakugaku", True),
    "bespokelabs_Bespoke-Stratos-7B": ("bespokelabs/Bespoke-Stratos-7B", "reasoning", "prompt_yakugaku", True),
    "elyza_Llama-3-ELYZA-JP-8B": ("elyza/Llama-3-ELYZA-JP-8B", "chat", "prompt_yakugaku", True),
    "tokyotech-llm_Llama-3-Swallow-8B-Instruct-v0.1": ("tokyotech-llm/Llama-3-Swallow-8B-Instruct-v0.1", "chat", "prompt_yakugaku", True),
    "google_gemma-2-27b-it": ("google/gemma-2-27b-it", "chat", "prompt_yakugaku", True),
    "google_gemma-2-9b-it": ("google/gemma-2-9b-it", "chat", "prompt_yakugaku", True),
    "google_gemma-7b-it": ("google/gemma-7b-it", "chat", "prompt_yakugaku", True),
    "gpt4o": ("gpt-4o", "api", "prompt_yakugaku", False),
    "chatgpt": ("chatgpt (config name; gpt-3.5-turbo in IgakuQA's scripts)", "api", "prompt", False),
    "gpt4": ("gpt-4", "api", "prompt", False),
}
PER_MODEL = {"messy": 5, "multi": 3, "single": 5}   # 13 a model
SIMPLE = re.compile(r"[0-9](\s*,\s*[0-9])*")
LABELS = ["1", "2", "3", "4", "5", "6", "7", "8", "9"]

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def load(path):
    return [json.loads(l) for l in git("show", "%s:%s" % (COMMIT, path)).decode().splitlines() if l.strip()]

def dict2problem(q, demo=True):   # scripts/generation/chatgpt.py, dict2problem (user turn, then assistant turn)
    p = "問題: " + q["problem_text"]
    if len(q["choices"]) > 0:
        for c, l in zip(q["choices"], LABELS):
            p = p + "\n" + l + ": " + c
        p = p + "\n必ず1,2,3,4,5,6の中からちょうど{}個選んでください。".format(len(q["answer"]))
        p = p + "\n答え:"
    turns = [p]
    if demo:
        turns.append(",".join(q["answer"]))
    return turns

def build_query(q, demos, system):
    # The chat messages rendered as text: the system line (open models), then each demonstration's user turn
    # followed by its assistant turn on the next line, then the final question; blocks separated by a blank line.
    blocks = [SYSTEM] if system else []
    for d in demos:
        u, a = dict2problem(d)
        blocks.append(u + "\n" + a)
    blocks.append(dict2problem(q, False)[0])
    return "\n\n".join(blocks)

def source_flag(out, gold):   # scripts/generation/evaluate.py, counting(): split on ',' and compare with the gold list
    return sorted(x.strip() for x in out.split(",")) == sorted(gold)

def main():
    files = git("ls-tree", "-r", "--name-only", COMMIT).decode().split()
    qs = {}
    for p in files:
        if p.startswith("data/") and p.endswith(".jsonl") and "metadata" not in p:
            for q in load(p):
                qs[q["problem_id"]] = q
    prompts = {n: load("scripts/prompts/%s.jsonl" % n) for n in ("prompt", "prompt_yakugaku")}
    pools = {}
    for p in sorted(files):
        if not p.startswith("baseline_results/") or p.endswith("_count.jsonl"):
            continue
        base = os.path.basename(p)[:-6]
        exam, suffix = base.split("_", 1)
        if suffix not in MODELS:
            continue   # 097_open.jsonl: byte-identical to 097_google_gemma-7b-it.jsonl
        if suffix == "gpt4o" and "-" in exam:
            continue   # 097-A/097-B gpt4o: the same model as the full-year gpt4o runs (kept those)
        model, mkind, pfile, system = MODELS[suffix]
        for r in load(p):
            q = qs[r["problem_id"]]
            if isinstance(q["choices"], str):   # figure items store the options as one string ("IMAGES", "ABCD",
                q = dict(q, choices=list(q["choices"]))   # "アイウエオ"); dict2problem's zip shows one character an option
            out = r["explanation"]   # identical to "prediction" in every file
            n = len(q["choices"])
            if any(a not in LABELS[:n] for a in q["answer"]):
                continue
            gold = [int(a) - 1 for a in q["answer"]]
            query = build_query(q, prompts[pfile], system)
            if len(gold) == 1:
                task = "TaxSCQ"
                if not 2 <= n <= 10:
                    continue
                rec = {"query": query, "choices": q["choices"], "gold": gold[0], "answer": q["choices"][gold[0]]}
            else:
                task = "TaxMCQ"
                if n > 5:
                    continue   # options A-E only
                rec = {"query": query, "answer": "".join(sorted("ABCDE"[g] for g in gold))}
            if not SIMPLE.fullmatch(out.strip()):
                kind = "messy"
            else:
                kind = "multi" if task == "TaxMCQ" else "single"
            rec = dict({"id": "%s#%s" % (p, r["problem_id"])}, **rec)
            hint = "source scorer (evaluate.py: output split on ',' vs gold %s): %s" % (
                ",".join(q["answer"]), "correct" if source_flag(out, q["answer"]) else "wrong")
            pools.setdefault(suffix, {}).setdefault(kind, []).append(
                {"task": task, "record": rec, "output": out, "path": p, "item": r["problem_id"], "hint": hint})
    rng = random.Random(SEED)
    drawn = []
    for suffix in sorted(pools):
        want = dict(PER_MODEL)
        messy = pools[suffix].get("messy", [])
        if len(messy) < want["messy"]:   # too few unusual outputs: the rest from bare digit-list outputs
            short = want["messy"] - len(messy)
            want["messy"] = len(messy)
            want["multi"] += short // 2
            want["single"] += short - short // 2
        for kind in ("messy", "multi", "single"):
            pool = pools[suffix].get(kind, [])
            for j in sorted(rng.sample(range(len(pool)), min(want[kind], len(pool)))):
                drawn.append((suffix, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (suffix, c) in enumerate(drawn, 1):
            model, mkind, _, _ = MODELS[suffix]
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": c["task"], "record": c["record"], "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": mkind, "shots": "few-shot", "lang": "ja"},
                   "hint": c["hint"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({s: {k: len(v) for k, v in d.items()} for s, d in pools.items()}, len(drawn))

if __name__ == "__main__":
    main()
