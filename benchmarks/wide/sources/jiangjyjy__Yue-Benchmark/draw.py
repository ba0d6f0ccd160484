#!/usr/bin/env python3
"""Draw cases from jiangjyjy/Yue-Benchmark prediction dumps (stdlib only, fixed seed)."""
import ast, json, os, random, re, subprocess, collections

REPO = "jiangjyjy/Yue-Benchmark"
GITDIR = "/work/.mirror/jiangjyjy+Yue-Benchmark/repo"
COMMIT = "675254d79f831ffccc21965a17a1f6bd4545581f"
SEED = 20261206
PER_MODEL = 6
HERE = os.path.dirname(os.path.abspath(__file__))
SRCID = "jiangjyjy__Yue-Benchmark"

def git(*a):
    return subprocess.run(["git", "--git-dir", GITDIR] + list(a), capture_output=True, check=True).stdout

def norm_model(m):
    m = m.replace("_", ".").replace("llama-3.1", "llama-3.1")
    syn = {"Claude-3.5": "Claude3.5-Sonnet", "Claude3.5-Sonnet": "Claude3.5-Sonnet", "GLM-4": "GLM4",
           "Sensechat-5": "SenseChat-5-Cantonese", "ERNIE-Lite-8K": "ERNIE-Lite", "ERNIE-Tiny-8K": "ERNIE-Tiny",
           "ERNIE-Speed-8K": "ERNIE-Speed", "mixtral-large-2-instruct-hf": "mistral-large-2-instruct-hf"}
    return syn.get(m, m)

def kind(m):
    l = m.lower()
    if any(k in l for k in ["chatgpt", "gpt-", "claude", "ernie", "glm", "sensechat"]):
        return "api"
    if any(k in l for k in ["chat", "instruct", "-it-"]):
        return "chat"
    return "base"

files = [l.split("\t") for l in git("ls-tree", "-r", "-l", COMMIT).decode().splitlines()]
pool = []  # (path, subset, shots)
for meta, path in files:
    sz = meta.split()[3]
    size = int(sz) if sz.isdigit() else 0
    if not path.endswith(".json") or size < 1000:
        continue  # LFS pointers and tiny files left out
    if "/evaluation/" in path or "-eval/" in path or path.endswith("Yue-GSM8K.json") or path.startswith("data/"):
        continue
    name = path.rsplit("/", 1)[1]
    m = re.search(r"_(\d)shot\.json$", name)
    if not m:
        continue
    shots = "zero-shot" if m.group(1) == "0" else "few-shot"
    if "/GSM8K" in path:
        subset = "gsm8k"
    elif "/ARC_c" in path:
        subset = "arc"
    elif "/CMMLU" in path:
        subset = "cmmlu"
    else:
        continue
    pool.append((path, subset, shots))

cache = {}
def load(path):
    if path not in cache:
        cache[path] = json.loads(git("show", f"{COMMIT}:{path}").decode("utf-8"))
    return cache[path]

# group files by model (model_name from the first record of each file)
bymodel = collections.defaultdict(lambda: collections.defaultdict(list))
for path, subset, shots in sorted(pool):
    recs = load(path)
    if not recs:
        continue
    bymodel[norm_model(recs[0]["model_name"])][subset].append((path, shots))
    cache.pop(path, None)

rng = random.Random(SEED)
out = []
for model in sorted(bymodel):
    subs = bymodel[model]
    plan = []
    if subs.get("gsm8k"): plan += ["gsm8k"] * 2
    if subs.get("arc"): plan += ["arc"]
    while len(plan) < PER_MODEL:
        plan.append("cmmlu" if subs.get("cmmlu") else rng.choice([s for s in subs]))
    seen = set()
    for subset in plan:
        for _try in range(50):
            path, shots = rng.choice(subs[subset])
            recs = load(path)
            i = rng.randrange(len(recs))
            if (path, i) in seen:
                continue
            r = recs[i]
            if subset == "gsm8k":
                try:
                    gold = float(str(r["correct_answer"]).replace(",", ""))
                except ValueError:
                    continue
                gold = int(gold) if gold == int(gold) else gold
                record = {"id": f"{path}#{i}", "query": r["question"], "answer": gold}
                task = "TaxCalc"
                hint = None
            else:
                try:
                    opts = ast.literal_eval(r["standard_answer_range"])
                except Exception:
                    continue
                letters = [o[0] for o in opts]
                if letters != list("ABCDEFGHIJ"[:len(letters)]) or r["correct_answer"] not in letters or not (2 <= len(letters) <= 10):
                    continue
                choices = [str(o[1]) for o in opts]
                q = r["question"] + "\n" + "\n".join(f"{l}. {c}" for l, c in zip(letters, choices))
                g = letters.index(r["correct_answer"])
                record = {"id": f"{path}#{i}", "query": q, "choices": choices, "gold": g, "answer": choices[g]}
                task = "TaxSCQ"
                hint = f"is_correct={r.get('is_correct')}" if "is_correct" in r else None
            seen.add((path, i))
            lang = "en" if ("english" in path or "-en/" in path) else "zh"
            case = {"task": task, "record": record, "output": r["llm_output"],
                    "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": str(i),
                               "model": model, "model_kind": kind(model), "shots": shots, "lang": lang}}
            if hint:
                case["hint"] = hint
            out.append(case)
            break

rng.shuffle(out)
with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
    for n, c in enumerate(out, 1):
        c = {"id": f"{SRCID}-{n:04d}", **c}
        f.write(json.dumps(c, ensure_ascii=False) + "\n")
print(len(out), "cases,", len(bymodel), "models")
