#!/usr/bin/env python3
"""Draw numeric-answer cases from XuZhao0/tts-knowledge (reasoning-model outputs on SimpleQA and FRAMES)
into drawn.jsonl. stdlib only.

Only items whose gold answer is a plain number (digits, optional thousands commas and decimal point)
are drawn; they become TaxCalc cases. 12 cases per model, spread over that model's output files.
"""
import json, os, random, re, subprocess

GIT = "/work/.mirror/XuZhao0+tts-knowledge/repo"
COMMIT = "9b9674be0a428f7516ee3f68b13c3ccb9b872ba1"
REPO = "XuZhao0/tts-knowledge"
PREFIX = "XuZhao0__tts-knowledge"
SEED = 20261206
PER_MODEL = 12
HERE = os.path.dirname(os.path.abspath(__file__))

SURE = ("Give me the answer to the following question only when you are sure of it. "
        "Otherwise, say 'I don't know'. Put your answer on its own line after 'Answer:'.\n")
PLAIN = "Give me the answer to the following question. Put your answer on its own line after 'Answer:'.\n"

def claude_prompt(setting):
    if setting.startswith("budget"):
        b = setting[len("budget"):]
        return ("Give me the answer to the following question. You have a thinking token budget of about %s tokens. "
                "YOU MUST USE ALL OF YOUR THINKING TOKENS. Put your answer on its own line after 'Answer:'.\n" % b)
    return PLAIN

# model -> (output folder, file stem, settings drawn). Prompt and model_kind follow from model and setting;
# the output is thought + "\n\n" + response for open models in thinking mode (R1 distills, Qwen3 exd0), else response.
# Budget-forced runs (exd2/exd4/...) are left out: the harness injects text into the chain.
MODELS = {
    "claude-sonnet-4": ("claude-sonnet-4", "claude-sonnet4", ["budget1024", "budget2048", "budget4096", "no_think"]),
    "gemini-2.5-flash": ("gemini-2_5-flash", "gemini-2.5-flash", ["budget256", "budget512", "budget1024", "budget2048", "no_think"]),
    "gpt-5-mini": ("gpt-5-mini", "gpt-5-mini", ["low_effort", "medium_effort", "high_effort"]),
    "gpt-oss-20b": ("gpt-oss-20b", "gpt-oss-20b", ["low_effort", "medium_effort", "high_effort"]),
    "grok-3-mini": ("grok-3-mini", "grok-3-mini", ["low_effort", "high_effort"]),
    "o3-mini": ("o3-mini", "o3-mini", ["low_effort", "medium_effort", "high_effort"]),
    "o4-mini": ("o4-mini", "o4-mini", ["low_effort", "medium_effort", "high_effort"]),
    "Qwen3-14B": ("qwen3-14b", "Qwen3-14B", ["exd0", "no_think"]),
    "Qwen3-8B": ("qwen3-8b", "Qwen3-8B", ["exd0", "no_think"]),
    "DeepSeek-R1-Distill-Llama-8B": ("r1-distill-llama-8b", "DeepSeek-R1-Distill-Llama-8B", ["exd0"]),
    "DeepSeek-R1-Distill-Qwen-14B": ("r1-distill-qwen-14b", "DeepSeek-R1-Distill-Qwen-14B", ["exd0"]),
    "DeepSeek-R1-Distill-Qwen-7B": ("r1-distill-qwen-7b", "DeepSeek-R1-Distill-Qwen-7B", ["exd0"]),
}
API = {"claude-sonnet-4", "gemini-2.5-flash", "gpt-5-mini", "grok-3-mini", "o3-mini", "o4-mini"}
# DeepSeek-R1-Distill-Llama-8B_simpleqa_exd0.jsonl is the same blob as the FRAMES file
# (824 FRAMES rows under a SimpleQA name), so it is skipped.
SKIP_FILES = {"outputs/r1-distill-llama-8b/DeepSeek-R1-Distill-Llama-8B_simpleqa_exd0.jsonl"}
NOT_DECIMAL = re.compile(r"binary|hexadecimal|octal|roman numeral|base[ -]\d", re.I)
NUM = re.compile(r"-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?")

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def prompt_for(model, setting):
    if model == "claude-sonnet-4":
        return claude_prompt(setting)
    if model == "gpt-5-mini":
        return PLAIN
    return SURE

def kind_for(model, setting):
    if model in API:
        return "api"
    if setting == "no_think":
        return "chat"
    return "reasoning"

def main():
    pools = {}
    for model, (folder, stem, settings) in MODELS.items():
        for bench in ("simpleqa", "frames"):
            for setting in settings:
                path = "outputs/%s/%s_%s_%s.jsonl" % (folder, stem, bench, setting)
                if path in SKIP_FILES:
                    continue
                try:
                    raw = git("show", "%s:%s" % (COMMIT, path)).decode("utf-8")
                except subprocess.CalledProcessError:
                    continue  # not in the snapshot (large blob) or never committed
                for n, line in enumerate(raw.splitlines()):
                    if not line.strip():
                        continue
                    r = json.loads(line)
                    gold = str(r.get("answer", "")).strip()
                    if not NUM.fullmatch(gold):
                        continue
                    if NOT_DECIMAL.search(r["problem"]):
                        continue  # the gold is written in another base or notation (e.g. "in binary")
                    resp = r.get("response")
                    if resp is None:
                        continue
                    use_thought = kind_for(model, setting) == "reasoning" and "thought" in r and model != "gpt-oss-20b"
                    output = (r["thought"] + "\n\n" + resp) if use_thought else resp
                    g = gold.replace(",", "")
                    value = float(g) if "." in g else int(g)
                    pools.setdefault(model, []).append({
                        "path": path, "item": "%d:%s" % (n, r["id"]), "bench": bench, "setting": setting,
                        "qid": "%s:%s" % (bench, r["id"]), "query": prompt_for(model, setting) + r["problem"],
                        "answer": value, "output": output, "grading": r.get("grading")})
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        order = list(range(len(pool)))
        rng.shuffle(order)
        seen, got = set(), 0
        for j in order:
            c = pool[j]
            if c["qid"] in seen:
                continue
            seen.add(c["qid"])
            drawn.append((model, c))
            got += 1
            if got == PER_MODEL:
                break
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (model, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "answer": c["answer"]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": kind_for(model, c["setting"]), "shots": "zero-shot", "lang": "en",
                              "benchmark": c["bench"], "setting": c["setting"]},
                   "hint": "source LLM-judge grading: %s (A correct, B incorrect, C not attempted)" % c["grading"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: len(p) for m, p in sorted(pools.items())}, len(drawn))

if __name__ == "__main__":
    main()
