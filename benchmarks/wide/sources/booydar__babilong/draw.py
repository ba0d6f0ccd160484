#!/usr/bin/env python3
"""Draw BABILong 0k (no distractor text) predictions of many models for hand grading.

Outputs: booydar/babilong, babilong_evals/<org>/<model>/qa{1..5}_0k_*.csv (target, output, question),
each with a .json holding the prompt parts the run used. The passages are not in that repository:
the 0k samples are bAbI en-10k test questions with their story facts (BABILong's TaskDataset; the
1000-sample files follow the test file in order, the 100-sample files follow data/test_100_idxs.json),
so the facts are rebuilt from the bAbI files in VinGarcia/bAbI and every row is checked against
the bAbI question and answer before it can be drawn. Stdlib only; fixed seed; writes drawn.jsonl.
"""
import csv, io, json, os, random, subprocess

BG = os.environ.get("BABILONG_GIT", "/work/.mirror/booydar+babilong/repo")
BA = os.environ.get("BABI_GIT", "/work/.mirror/VinGarcia+bAbI/repo")
REPO = "booydar/babilong"
BABI_COMMIT = "c4f149baa4ecc4ba9096d2706e5be845a98680e6"
HEAD = "7a6efee29f5cac03c3c410e6799c80fd2ffe3610"
SEED = 20261206
PER_MODEL = 8
EXTRA_PER_MODEL = 4
# babilong/prompts.py DEFAULT_TEMPLATE (identical in every version of the file)
DEFAULT_TEMPLATE = '{instruction}\n\n{examples}\n\n{post_prompt}\n\n<context>\n{context}\n</context>\n\nQuestion: {question}'
HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = {"qa1": "qa1_single-supporting-fact", "qa2": "qa2_two-supporting-facts", "qa3": "qa3_three-supporting-facts",
         "qa4": "qa4_two-arg-relations", "qa5": "qa5_three-arg-relations"}
# model directory -> (label, kind)
MODELS = {
    "01-ai/Yi-34B-200k": ("Yi-34B-200K", "base"),
    "01-ai/Yi-34B": ("Yi-34B", "base"),
    "01-ai/Yi-9B-200k": ("Yi-9B-200K", "base"),
    "CohereForAI/c4ai-command-r-v01": ("c4ai-command-r-v01", "chat"),
    "HuggingFaceTB/SmolLM2-360M-Instruct": ("SmolLM2-360M-Instruct", "chat"),
    "HuggingFaceTB/SmolLM2-360M": ("SmolLM2-360M", "base"),
    "NousResearch/Meta-Llama-3-8B-Instruct": ("Meta-Llama-3-8B-Instruct", "chat"),
    "NousResearch/Yarn-Mistral-7b-128k": ("Yarn-Mistral-7b-128k", "base"),
    "THUDM/chatglm3-6b-128k": ("chatglm3-6b-128k", "chat"),
    "Yukang/LongAlpaca-13B": ("LongAlpaca-13B", "chat"),
    "ai21labs/Jamba-v0.1": ("Jamba-v0.1", "base"),
    "google/gemini-3-flash-preview": ("gemini-3-flash-preview", "api"),
    "gpt2": ("gpt2", "base"),
    "lmsys/longchat-7b-v1.5-32k": ("longchat-7b-v1.5-32k", "chat"),
    "microsoft/Phi-3-medium-128k-instruct": ("Phi-3-medium-128k-instruct", "chat"),
    "microsoft/Phi-3-mini-128k-instruct": ("Phi-3-mini-128k-instruct", "chat"),
    "mistralai/Mistral-7B-Instruct-v0.2": ("Mistral-7B-Instruct-v0.2", "chat"),
    "mistralai/Mistral-7B-Instruct-v0.2-qa1": ("Mistral-7B-Instruct-v0.2 fine-tuned on BABILong qa1", "domain"),
    "mistralai/Mistral-7B-Instruct-v0.2-qa2": ("Mistral-7B-Instruct-v0.2 fine-tuned on BABILong qa2", "domain"),
    "mistralai/Mixtral-8x22B-Instruct-v0.1": ("Mixtral-8x22B-Instruct-v0.1", "chat"),
    "mistralai/Mixtral-8x7B-Instruct-v0.1": ("Mixtral-8x7B-Instruct-v0.1", "chat"),
    "namespace-Pt/activation-beacon-llama2-7b-chat": ("activation-beacon-llama2-7b-chat", "chat"),
    "namespace-Pt/activation-beacon-mistral-7b": ("activation-beacon-mistral-7b", "chat"),
    "openai/gpt-3.5-turbo-1106": ("gpt-3.5-turbo-1106", "api"),
    "openai/gpt-4-0125-preview": ("gpt-4-0125-preview", "api"),
    "togethercomputer/LLaMA-2-7B-32K": ("LLaMA-2-7B-32K", "base"),
    "togethercomputer/Llama-2-7B-32K-instruct": ("Llama-2-7B-32K-Instruct", "chat"),
}


def git(gd, *args):
    return subprocess.run(["git", "--git-dir", gd, *args], check=True, capture_output=True).stdout.decode("utf-8")


def show(gd, commit, path):
    return git(gd, "show", f"{commit}:{path}")


def babi(task):
    """bAbI en-10k test as BABILong's TaskDataset reads it: one sample per question, facts of its story so far."""
    out, story = [], []
    for line in show(BA, BABI_COMMIT, f"tasks_1-20_v1-2/en-10k/{TASKS[task]}_test.txt").strip().split("\n"):
        num, rest = line.split(" ", 1)
        if num == "1":
            story = []
        if "\t" in rest:
            q, a = rest.split("\t")[:2]
            out.append((list(story), q.strip(), a.strip()))
        else:
            story.append(rest)
    return out


def latest_files():
    """Every 0k csv ever committed under babilong_evals, with the newest commit that holds it."""
    log = git(BG, "log", "--all", "--format=@%H", "--name-only", "--", "babilong_evals").split("\n")
    found, cur = {}, None
    for l in log:
        if l.startswith("@"):
            cur = l[1:]
        elif l.endswith(".csv") and "_0k_" in l and l not in found:
            found[l] = cur
    files = {}
    for path, commit in found.items():
        try:
            show(BG, commit, path)
        except subprocess.CalledProcessError:      # the commit deleted it: read its parent
            commit = git(BG, "rev-parse", commit + "^").strip()
        files[path] = commit
    return files


def make_case(B, path, commit, task, cfg, li, bi, r, label, kind):
    facts, q, a = B[task][bi]
    shots = "few-shot" if cfg.get("examples") else "zero-shot"
    query = cfg["template"].format(instruction=cfg.get("instruction", ""), examples=cfg.get("examples", ""),
                                   post_prompt=cfg.get("post_prompt", ""),
                                   context="[the facts given in `text`]", question=r["question"]).strip()
    rec = {"id": f"{task}-0k-{bi}", "query": query, "text": " ".join(facts), "answer": r["target"].strip()}
    src = {"repo": REPO, "commit": commit, "path": path, "item": f"row {li} (bAbI en-10k {TASKS[task]} test question {bi})",
           "model": label, "model_kind": kind, "shots": shots, "lang": "en"}
    return {"task": "TaxRead", "record": rec, "output": r["output"], "source": src}


def main():
    rng = random.Random(SEED)
    B = {t: babi(t) for t in TASKS}
    idx100 = json.loads(show(BG, HEAD, "data/test_100_idxs.json"))
    files = latest_files()
    cases, extra = [], {}
    rng2 = random.Random(SEED + 1)
    for mdir, (label, kind) in MODELS.items():
        pool = []
        for path, commit in sorted(files.items()):
            rel = path[len("babilong_evals/"):]
            if rel.rsplit("/", 1)[0] != mdir:
                continue
            name = rel.rsplit("/", 1)[1]
            task = name.split("_")[0]
            if task not in TASKS:
                continue
            rows = list(csv.DictReader(io.StringIO(show(BG, commit, path))))
            if not rows or "question" not in rows[0]:
                continue
            try:
                cfg = json.loads(show(BG, commit, path[:-4] + ".json"))["prompt"]
            except subprocess.CalledProcessError:
                continue                                   # no prompt record next to the csv: not used
            if not cfg.get("template"):
                # older runs stored no template; their code formatted with babilong.prompts.DEFAULT_TEMPLATE
                cfg = dict(cfg, template=DEFAULT_TEMPLATE)
            seq = all(i < len(B[task]) and r["question"].strip() == B[task][i][1] and r["target"].strip() == B[task][i][2]
                      for i, r in enumerate(rows))
            if seq:
                where = list(range(len(rows)))
            elif len(rows) == len(idx100[task]) and all(
                    r["question"].strip() == B[task][i][1] and r["target"].strip() == B[task][i][2]
                    for r, i in zip(rows, idx100[task])):
                where = idx100[task]
            else:
                continue                                   # rows cannot be matched to bAbI: not used
            for li, (r, bi) in enumerate(zip(rows, where)):
                pool.append((path, commit, name, task, cfg, li, bi, r))
        first = sorted(rng.sample(pool, min(PER_MODEL, len(pool))), key=lambda t: (t[0], t[5]))
        taken = {(t[0], t[5]) for t in first}
        rest = [t for t in pool if (t[0], t[5]) not in taken]
        extra[mdir] = sorted(rng2.sample(rest, min(EXTRA_PER_MODEL, len(rest))), key=lambda t: (t[0], t[5]))
        for path, commit, name, task, cfg, li, bi, r in first:
            facts, q, a = B[task][bi]
            context = " ".join(facts)
            shots = "few-shot" if cfg.get("examples") else "zero-shot"
            query = cfg["template"].format(instruction=cfg.get("instruction", ""), examples=cfg.get("examples", ""),
                                           post_prompt=cfg.get("post_prompt", ""),
                                           context="[the facts given in `text`]", question=r["question"]).strip()
            rec = {"id": f"{task}-0k-{bi}", "query": query, "text": context, "answer": r["target"].strip()}
            src = {"repo": REPO, "commit": commit, "path": path, "item": f"row {li} (bAbI en-10k {TASKS[task]} test question {bi})",
                   "model": label, "model_kind": kind, "shots": shots, "lang": "en"}
            cases.append({"task": "TaxRead", "record": rec, "output": r["output"], "source": src})
    # second round (added after the first 200 were graded): EXTRA_PER_MODEL more rows per model, drawn with
    # its own seed from the rows the first round left, appended after them so earlier ids keep their cases
    for mdir, (label, kind) in MODELS.items():
        for path, commit, name, task, cfg, li, bi, r in extra.get(mdir, []):
            cases.append(make_case(B, path, commit, task, cfg, li, bi, r, label, kind))
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            f.write(json.dumps({"id": f"booydar__babilong-{i:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
