#!/usr/bin/env python3
"""Draw cases from iamyb/llm-gaokao-math-eval result files (stdlib only, fixed seed)."""
import json, os, random, re, subprocess, collections

REPO = "iamyb/llm-gaokao-math-eval"
GITDIR = "/work/.mirror/iamyb+llm-gaokao-math-eval/repo"
COMMIT = "7b58eaf4574046c73e49cd75590dd4e30bfe3adf"
SEED = 20261206
PER_MODEL = 12
HERE = os.path.dirname(os.path.abspath(__file__))
SRCID = "iamyb__llm-gaokao-math-eval"

def git(*a):
    return subprocess.run(["git", "-c", "core.quotepath=off", "--git-dir", GITDIR] + list(a),
                          capture_output=True, check=True).stdout

def base_model(name):
    m = re.match(r"(deepseek-v4-flash|Muse-Glimmer-30B|Qwen3\.\d-\d+b(?:-A3B)?|Qwen3\.\d-\d+B|Ternary-Bonsai-27B|gemma-4-26B-A4B|gemma-4-31B)", name, re.I)
    return m.group(1) if m else name

rows = [l.split("\t") for l in git("ls-tree", "-r", "-l", COMMIT, "eval/results/").decode().splitlines()]
seen_blobs = set()
files = []
for meta, path in sorted(rows, key=lambda r: r[1]):
    if not path.endswith(".json"):
        continue
    blob = meta.split()[2]
    if blob in seen_blobs:
        continue  # the same result file copied into several experiment folders
    seen_blobs.add(blob)
    files.append(path)

# golds: the repository's corrected data file at the snapshot (early runs carried a since-fixed key for item 11)
DATA = [l.split("\t")[1] for l in git("ls-tree", "-r", COMMIT, "data/final_data/").decode().splitlines()
        if l.endswith("/questions.jsonl")][0]
GOLD = {}
for line in git("show", f"{COMMIT}:{DATA}").decode("utf-8").splitlines():
    q = json.loads(line)
    GOLD[q["question"].split(".", 1)[0].strip()] = q["answer"].strip()

bymodel = collections.defaultdict(list)
for path in files:
    d = json.loads(git("show", f"{COMMIT}:{path}").decode("utf-8"))
    model = d.get("model_name") or path.split("/")[-2]
    if path.split("/")[-2].endswith(("_high", "_low")):
        model = path.split("/")[-2]  # reasoning-effort variants are stored under the folder name
    for tid, c in d["task_states"]["cases"].items():
        exp = str(c.get("expected", "")).strip()
        prompt = c["prompt"]
        opts = re.findall(r"^([A-D])\. (.*)$", prompt, flags=re.M)
        if [o[0] for o in opts] != list("ABCD") or not re.fullmatch(r"[A-D]+", exp):
            continue  # fill-in items (surds, pairs of values) left out
        num = prompt.split("\n\n", 1)[1].split(".", 1)[0].strip()
        exp = GOLD[num]
        if len(exp) == 1:
            choices = [o[1].strip() for o in opts]
            g = "ABCD".index(exp)
            task, rec = "TaxSCQ", {"choices": choices, "gold": g, "answer": choices[g]}
        else:
            task, rec = "TaxMCQ", {"answer": "".join(sorted(exp))}
        rec = {"id": f"{path}#{tid}", "query": prompt, **rec}
        case = {"task": task, "record": rec, "output": c.get("response") or "",
                "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": tid, "model": model,
                           "model_kind": "reasoning", "shots": "cot", "lang": "zh"},
                "hint": f"source correct={c.get('correct')}; source answer={c.get('answer')!r}"}
        bymodel[base_model(model)].append(case)

rng = random.Random(SEED)
out = []
for bm in sorted(bymodel):
    cands = bymodel[bm]
    out += rng.sample(cands, min(PER_MODEL, len(cands)))
rng.shuffle(out)
with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
    for n, c in enumerate(out, 1):
        f.write(json.dumps({"id": f"{SRCID}-{n:04d}", **c}, ensure_ascii=False) + "\n")
print(len(out), "cases;", {k: len(v) for k, v in bymodel.items()})
print(collections.Counter(c["source"]["model"] for c in out))
print(collections.Counter(c["task"] for c in out))
