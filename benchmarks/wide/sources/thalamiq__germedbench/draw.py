#!/usr/bin/env python3
"""Draw GerMedBench med_qa model outputs (thalamiq/germedbench) into drawn.jsonl.

stdlib only. GerMedBench's `med_qa` task: 49 German IMPP-style multiple-choice questions (options A-E, one
correct answer, `correct_answer` in data/med_qa.jsonl). 13 models were run through an OpenAI-compatible chat API
(Together AI / DeepInfra) with one user message, temperature 0; each result file
results/<model>/med_qa/<timestamp>.json keeps the raw reply (`raw`) and the harness's parsed letter (`answer`).
From each model 12 items with a stored reply are drawn with a fixed seed; all cases are then shuffled and
numbered. Every file is read with `git show COMMIT:PATH` at the pinned commits below."""
import json, os, random, subprocess

GIT = "/work/.mirror/thalamiq+germedbench/repo"
REPO = "thalamiq/germedbench"
PREFIX = "thalamiq__germedbench"
SEED = 20261217
N_PER_MODEL = 12
HEAD = "4ac972948ac20de043541ed25cdd4e45a474c445"      # main, 2026-03-30
RES = "d2aa51d1f261c71999f01ce21cccde11f22f7234"       # 2026-03-29 "udpate readme": the med_qa result files
PROMPT_C = "527758be64a3589a558450c17d6456f4f05d9c10"  # 2026-03-29 "run batch 1": scripts/run_eval_med_qa.py
DATA = (HEAD, "data/med_qa.jsonl")                      # same blob (dd577fc) at RES and HEAD
HERE = os.path.dirname(os.path.abspath(__file__))

# results directory -> (model id as served, model_kind)
MODELS = {
    "Qwen__Qwen2.5-72B-Instruct": ("Qwen/Qwen2.5-72B-Instruct", "chat"),
    "Qwen__Qwen2.5-7B-Instruct-Turbo": ("Qwen/Qwen2.5-7B-Instruct-Turbo", "chat"),
    "deepseek-ai__DeepSeek-V3.1": ("deepseek-ai/DeepSeek-V3.1", "chat"),
    "deepseek-ai__DeepSeek-V3.2": ("deepseek-ai/DeepSeek-V3.2", "chat"),
    "google__gemma-3-27b-it": ("google/gemma-3-27b-it", "chat"),
    "google__gemma-3n-E4B-it": ("google/gemma-3n-E4B-it", "chat"),
    "meta-llama__Llama-3.3-70B-Instruct-Turbo": ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "chat"),
    "meta-llama__Llama-4-Maverick-17B-128E-Instruct-FP8": ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "chat"),
    "meta-llama__Meta-Llama-3.1-8B-Instruct": ("meta-llama/Meta-Llama-3.1-8B-Instruct", "chat"),
    "mistralai__Mistral-Small-24B-Instruct-2501": ("mistralai/Mistral-Small-24B-Instruct-2501", "chat"),
    "mistralai__Mixtral-8x7B-Instruct-v0.1": ("mistralai/Mixtral-8x7B-Instruct-v0.1", "chat"),
    "nvidia__Llama-3.1-Nemotron-70B-Instruct": ("nvidia/Llama-3.1-Nemotron-70B-Instruct", "chat"),
    "openai__gpt-oss-120b": ("openai/gpt-oss-120b", "reasoning"),
}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def ls(commit, prefix):
    out = subprocess.run(["git", "--git-dir", GIT, "ls-tree", "-r", "--name-only", commit, prefix],
                         check=True, capture_output=True).stdout.decode("utf-8")
    return [l for l in out.splitlines() if l]


def qa_prompt():
    """QA_PROMPT of scripts/run_eval_med_qa.py; str.format turns {{ }} into { }."""
    src = git(PROMPT_C, "scripts/run_eval_med_qa.py")
    start = src.index('QA_PROMPT = """\\\n') + len('QA_PROMPT = """\\\n')
    end = src.index('"""', start)
    return src[start:end]


def main():
    template = qa_prompt()
    items = {}
    for line in git(*DATA).splitlines():
        if line.strip():
            d = json.loads(line)
            items[d["id"]] = d
    rng = random.Random(SEED)
    drawn = []
    for mdir in sorted(MODELS):
        model, kind = MODELS[mdir]
        paths = ls(RES, "results/%s/med_qa/" % mdir)
        assert len(paths) == 1, paths
        path = paths[0]
        res = json.loads(git(RES, path))
        assert res["summary"]["model"] == model
        preds = [p for p in res["predictions"] if "raw" in p]
        for p in rng.sample(preds, N_PER_MODEL):
            it = items[p["case_id"]]
            letters = sorted(it["options"])
            assert letters == ["A", "B", "C", "D", "E"]
            query = template.format(question=it["question"], option_a=it["options"]["A"],
                                    option_b=it["options"]["B"], option_c=it["options"]["C"],
                                    option_d=it["options"]["D"], option_e=it["options"]["E"])
            choices = [it["options"][l] for l in letters]
            gold = letters.index(it["correct_answer"])
            rec = {"id": "%s#%s" % (DATA[1], it["id"]), "query": query, "choices": choices,
                   "gold": gold, "answer": choices[gold]}
            parsed = p.get("answer")
            hint = "source parsed answer: %s; %s" % (
                parsed if parsed else "none (parse_error)",
                "correct" if parsed == it["correct_answer"] else "not correct")
            drawn.append((rec, p["raw"], {
                "repo": REPO, "commit": RES, "path": path,
                "item": "%s:%s:%s" % (it["id"], it["fachbereich"], it["schwierigkeitsgrad"]),
                "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "de"}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ", "record": rec,
                                  "output": output, "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(items), "items;", len(MODELS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
