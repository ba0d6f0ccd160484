#!/usr/bin/env python3
"""Draw HELM MMLU outputs committed in aryopg/mmlu-redux (outputs/original_helm) into drawn.jsonl. stdlib only."""
import json, os, random, subprocess

GIT = "/work/.mirror/aryopg+mmlu-redux/repo"
COMMIT = "4563cfa79b659d76716e5b6019f46bba85fa02db"
REPO = "aryopg/mmlu-redux"
PREFIX = "aryopg__mmlu-redux"
SEED = 20261206
PER_MODEL = 20
ROOT = "outputs/original_helm"
# writer_palmyra-x-v3 is left out: its completions equal google_text-unicorn@001's on every item
SKIP_MODELS = {"writer_palmyra-x-v3"}
HERE = os.path.dirname(os.path.abspath(__file__))
KIND = {"anthropic_claude-3-opus-20240229": "api", "google_gemini-1.5-flash-preview-0514": "api",
        "google_gemini-1.5-pro-preview-0409": "api", "google_text-unicorn@001": "api",
        "meta_llama-3-70b": "base", "mistralai_mixtral-8x22b": "base", "openai_gpt-4-0613": "api",
        "openai_gpt-4-1106-preview": "api", "openai_gpt-4o-2024-05-13": "api"}

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def main():
    files = git("ls-tree", "-r", "--name-only", COMMIT, ROOT).decode().split()
    pools = {}
    for p in sorted(files):
        model, subj = p.split("/")[2], p.split("/")[3][:-5]
        if model in SKIP_MODELS:
            continue
        try:
            raw = git("show", f"{COMMIT}:{p}")
        except subprocess.CalledProcessError:
            continue  # blob absent from the snapshot (large file): left out
        if not raw.strip():
            continue
        d = json.loads(raw)
        spec = d["adapter_spec"]
        for k, rs in enumerate(d["request_states"]):
            inst = rs["instance"]
            refs = [r["output"]["text"] for r in inst["references"]]
            gold = [i for i, r in enumerate(inst["references"]) if "correct" in r["tags"]]
            comps = rs["result"]["completions"]
            if len(gold) != 1 or not comps or not (2 <= len(refs) <= 10):
                continue
            letters = [chr(65 + i) for i in range(len(refs))]
            if rs.get("output_mapping") and list(rs["output_mapping"].values()) != refs:
                continue
            prompt = rs["request"]["prompt"]
            final = spec["input_prefix"] + inst["input"]["text"] + spec["input_suffix"] + "".join(
                "%s. %s%s" % (l, t, spec["reference_suffix"]) for l, t in zip(letters, refs)) + spec["output_prefix"].rstrip()
            if not prompt.endswith(final):
                continue  # the prompt's last question could not be rebuilt exactly
            query = spec["instructions"] + "\n" + final
            pools.setdefault(model, []).append({
                "path": p, "item": "%d:%s" % (k, inst["id"]), "query": query, "choices": refs, "gold": gold[0],
                "output": comps[0]["text"], "subject": subj})
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        for j in rng.sample(range(len(pool)), min(PER_MODEL, len(pool))):
            drawn.append((model, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (model, c) in enumerate(drawn, 1):
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "choices": c["choices"],
                              "gold": c["gold"], "answer": c["choices"][c["gold"]]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": model,
                              "model_kind": KIND[model], "shots": "few-shot", "lang": "en"}}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: len(p) for m, p in pools.items()}, len(drawn))

if __name__ == "__main__":
    main()
