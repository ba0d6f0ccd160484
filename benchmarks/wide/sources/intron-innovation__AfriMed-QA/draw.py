#!/usr/bin/env python3
"""Draw AfriMed-QA / MedQA multiple-choice model outputs committed in intron-innovation/AfriMed-QA into drawn.jsonl.

stdlib only. Every results CSV (results/<model dir>/...mcq...csv) whose blob is in the snapshot and that has the
columns answer / model_prompt / outputs is one run of one model on one MCQ set; the set is told by its row count
(289 = AfriMed-QA v2.5 expert MCQ, 1273 = MedQA-USMLE 4-option test, 3910 = AfriMed-QA v2 MCQ). Byte-identical
blobs are kept once. For every model, 4 items are drawn from its AfriMed-QA v2.5 runs and 2 from its other MCQ runs
(MedQA or AfriMed-QA v2; 6 from v2.5 when it has no other run), distinct questions, seed 20261211."""
import csv, io, json, os, random, subprocess

GIT = "/work/.mirror/intron-innovation+AfriMed-QA/repo"
COMMIT = "9bb0ffc03ef41a0568c3f47223a23997922afb52"
REPO = "intron-innovation/AfriMed-QA"
PREFIX = "intron-innovation__AfriMed-QA"
SEED = 20261211
HERE = os.path.dirname(os.path.abspath(__file__))
csv.field_size_limit(10 ** 9)

# results/<dir> -> (model name, model_kind)
MODELS = {
    "BioMistral-7B": ("BioMistral-7B", "domain"),
    "Llama3-OpenBioLLM-70B": ("Llama3-OpenBioLLM-70B", "domain"),
    "Llama3-OpenBioLLM-8B": ("Llama3-OpenBioLLM-8B", "domain"),
    "Meditron-7B-FT": ("Meditron-7B (fine-tuned)", "domain"),
    "Meta-Llama-3-70B-Instruct": ("Meta-Llama-3-70B-Instruct", "chat"),
    "Meta-Llama-3-8B": ("Meta-Llama-3-8B", "base"),
    "Meta-Llama-3.1-8B-Instruct": ("Meta-Llama-3.1-8B-Instruct", "chat"),
    "Mistral-7B-Instruct-v02": ("Mistral-7B-Instruct-v0.2", "chat"),
    "Mistral-7B-Instruct-v03": ("Mistral-7B-Instruct-v0.3", "chat"),
    "Mixtral-8x7B-Instruct-v0.1": ("Mixtral-8x7B-Instruct-v0.1", "chat"),
    "PMC-LLAMA-7B-FT": ("PMC-LLaMA-7B (fine-tuned)", "domain"),
    "Phi-3-medium-128k-instruct": ("Phi-3-medium-128k-instruct", "chat"),
    "Phi-3-mini-128k-instruct": ("Phi-3-mini-128k-instruct", "chat"),
    "phi3-mini-4k": ("Phi-3-mini-4k-instruct", "chat"),
    "claude-3-5-sonnet-20240620": ("claude-3-5-sonnet-20240620", "api"),
    "claude-3-haiku-20240307": ("claude-3-haiku-20240307", "api"),
    "claude-3-opus-20240229": ("claude-3-opus-20240229", "api"),
    "claude-3-sonnet-20240229": ("claude-3-sonnet-20240229", "api"),
    "gpt-3.5-turbo-1106": ("gpt-3.5-turbo-1106", "api"),
    "gpt-4": ("gpt-4", "api"),
    "gpt-4o-mini": ("gpt-4o-mini", "api"),
    "gpt-4o": ("gpt-4o", "api"),
    "jsl-med-llama-8b": ("JSL-MedLlama-3-8B-v2.0", "domain"),
    "llama3-405b-instruct-maas": ("llama3-405b-instruct-maas", "api"),
}
SETS = {289: "afrimed-qa-v2.5", 1273: "medqa-usmle", 3910: "afrimed-qa-v2"}
LETTERS = "ABCDE"


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def runs():
    out, seen = [], set()
    for line in git("ls-tree", "-r", "-l", COMMIT, "results/").decode("utf-8").splitlines():
        meta, path = line.split("\t", 1)
        _, _, sha, size = meta.split()
        if size == "-" or not path.endswith(".csv") or "mcq" not in path or path.startswith('"'):
            continue
        d = path.split("/")[1]
        if d not in MODELS or sha in seen:
            continue
        try:
            raw = git("show", "%s:%s" % (COMMIT, path))
        except subprocess.CalledProcessError:
            continue  # blob absent from the snapshot: left out
        rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8"))))
        if not rows or not {"answer", "model_prompt", "outputs"} <= set(rows[0]) or len(rows) not in SETS:
            continue
        seen.add(sha)
        out.append((d, path, SETS[len(rows)], rows))
    return out


def choices_of(r):
    ch = []
    for L in LETTERS:
        v = (r.get(L) or "").strip()
        if not v or v.lower() == "nan":
            break
        ch.append(v)
    return ch


def main():
    rng = random.Random(SEED)
    by_model = {}
    for d, path, ds, rows in runs():
        by_model.setdefault(d, []).append((path, ds, rows))
    cases = []
    for d in sorted(by_model):
        main_pool, other_pool = [], []
        for path, ds, rows in sorted(by_model[d], key=lambda x: x[0]):
            for i, r in enumerate(rows):
                ch = choices_of(r)
                ans = (r["answer"] or "").strip()
                if len(ch) < 2 or ans not in LETTERS[:len(ch)]:
                    continue
                (main_pool if ds == "afrimed-qa-v2.5" else other_pool).append((path, ds, i, r, ch))
        want = [(main_pool, 4), (other_pool, 2)] if other_pool else [(main_pool, 6)]
        taken = set()
        for pool, n in want:
            order = list(range(len(pool)))
            rng.shuffle(order)
            k = 0
            for j in order:
                path, ds, i, r, ch = pool[j]
                key = (ds, r["sample_id"])
                if key in taken:
                    continue
                taken.add(key)
                cases.append((d, path, ds, i, r, ch))
                k += 1
                if k == n:
                    break
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (d, path, ds, i, r, ch) in enumerate(cases, 1):
            name, kind = MODELS[d]
            gold = LETTERS.index(r["answer"].strip())
            rec = {"id": "%s:%s" % (ds, r["sample_id"]), "query": r["model_prompt"], "choices": ch,
                   "gold": gold, "answer": ch[gold]}
            case = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ", "record": rec, "output": r["outputs"],
                    "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "%d:%s" % (i, ds),
                               "model": name, "model_kind": kind, "shots": "zero-shot", "lang": "en"},
                    "hint": "preds=%s; correct=%s" % (r.get("preds", ""), r.get("correct", ""))}
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
