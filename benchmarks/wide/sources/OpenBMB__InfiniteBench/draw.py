#!/usr/bin/env python3
"""Draw InfiniteBench predictions (OpenBMB/InfiniteBench, results/<model>/preds_<task>.jsonl) into drawn.jsonl.

Only the tasks whose question is the same for every item are used, since the repository holds the
predictions and golds but not the data set's per-item questions or options: longdialogue_qa_eng
(En.Dia: name the character replaced by $$MASK$$ in a script), passkey and number_string (Retrieve.PassKey,
Retrieve.Number: a digit string hidden in repeated filler text). The prompt is the run's template from
src/prompt.py (chosen per model as src/eval_utils.py MODEL_TO_PROMPT_TEMPLATE does), with the context replaced
by a marker; the passages (100k+ tokens) are not in the repository and `text` is a placeholder.
Stdlib only; fixed seed; writes drawn.jsonl.
"""
import json, os, random, subprocess

GIT = "/work/.mirror/OpenBMB+InfiniteBench/repo"
COMMIT = "88b3daa6989da2fbe0077170d7a3c84c25d5ae58"
REPO = "OpenBMB/InfiniteBench"
PREFIX = "OpenBMB__InfiniteBench"
SEED = 20261206
PER_TASK = {"longdialogue_qa_eng": 12, "passkey": 3, "number_string": 3}
# second round (added after the first 126 were graded): 3 more longdialogue items per model, own seed,
# drawn from the rows the first round left and appended after it so that earlier ids keep their cases
EXTRA = {"longdialogue_qa_eng": 3}
HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "[the passage given in `text`]"
# results folder -> (model label, kind, template family)  (src/eval_utils.py MODEL_TO_PROMPT_TEMPLATE)
MODELS = {
    "gpt4": ("GPT-4 (gpt-4-1106-preview, 128k)", "api", "gpt4"),
    "claude2": ("Claude 2", "api", "claude2"),
    "kimi": ("Kimi-Chat (Moonshot)", "api", "kimi"),
    "yarn-mistral": ("Yarn-Mistral-7b-128k", "base", "yarn"),
    "yi-6b-200k": ("Yi-6B-200K", "base", "yarn"),
    "yi-34b-200k": ("Yi-34B-200K", "base", "yarn"),
    "chatglm3": ("chatglm3-6b-128k", "chat", "yarn"),
}
DIA_GPT4 = ("Below is a dialogue script where one random occurrence of a character name is replaced with \"$$MASK$$\", "
            "and you should try to guess who that character is.\n\nThe dialogue:\n\n---\n\n{context}\n\n---\n\nEnd of dialogue.\n\n"
            "Which character is most likely \"$$MASK$$\"? Just say the name used by the scriptwriter (before the colon marks) "
            "of one single character and nothing else.")
TEMPLATES = {
    "gpt4": {
        "passkey": "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the important information there.\n\n{context}\n\n{input}",
        "number_string": "There is an important info hidden inside a lot of irrelevant text. Find it. I will quiz you about the important information there.\n\n{context}\n\n{input}",
        "longdialogue_qa_eng": DIA_GPT4},
    "claude2": {
        "passkey": "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the important information there.\n\n{context}\n{input}\nThe pass key is",
        "number_string": "There is an important info hidden inside a lot of irrelevant text. Find it. I will quiz you about the important information there.\n\n{context}\n{input}\nThe sequence of digits is",
        "longdialogue_qa_eng": DIA_GPT4},
    "kimi": {
        "passkey": "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the important information there.\n\n{context}\n{input}\nThe pass key is",
        "number_string": "There is an important info hidden inside a lot of irrelevant text. Find it. I will quiz you about the important information there.\n\n{context}\n{input}\nThe sequence of digits is",
        "longdialogue_qa_eng": "Below is a dialogue script where one random occurrence of a character name is replaced with \"$$MASK$$\", and you should try to guess who that character is. Give me the answer using the name before the colons, don't say anything else.\n\n{context}"},
    "yarn": {
        "passkey": "There is an important info hidden inside a lot of irrelevant text. Find it and memorize it. I will quiz you about the important information.\n\n{context}\n\n{input}\n\nThe pass key is",
        "number_string": "There is an important info hidden inside a lot of irrelevant text. Find it. I will quiz you about the important information there.\n\n{context}\n\n{input}\n\nThe sequence of digits is",
        "longdialogue_qa_eng": "Below is a dialogue script where one random occurrence of a character name is replaced with \"$$MASK$$\", and you should try to guess who that character is.\n\n{context}\n\nThe name that has been replaced with $$MASK$$ is likely"},
}
# the fixed questions of the synthetic tasks (data/construct_synthetic_dataset.py)
INPUT = {"passkey": "What is the pass key?", "number_string": "What is the sequence of digits?"}
FILLER = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
NEEDLE = {"passkey": "The pass key is {k}. Remember it. {k} is the pass key.",
          "number_string": "The sequence of digits is {k}. Remember it. {k} is the sequence of digits."}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout.decode("utf-8")


def gold_list(g):
    return [str(x).strip() for x in (g if isinstance(g, list) else [g])]


def make_case(mdir, label, kind, fam, task, path, li, rid, out, golds):
    tpl = TEMPLATES[fam][task]
    if task == "longdialogue_qa_eng":
        query = tpl.format(context=MARK)
        text = ("[a film or TV script of 100k+ tokens in which one occurrence of a character name is replaced "
                "with $$MASK$$ (InfiniteBench longdialogue_qa_eng item %s); the script is not in the repository]" % rid)
    else:
        query = tpl.format(context=MARK, input=INPUT[task])
        text = ("[about 128k tokens of the filler line '%s' repeated, with one line hidden at some depth: '%s']"
                % (FILLER, NEEDLE[task].format(k=golds[0])))
    rec = {"id": f"{task}-{rid}", "query": query, "text": text, "answer": golds[0], "answers": golds}
    src = {"repo": REPO, "commit": COMMIT, "path": path, "item": f"line {li} (id {rid})", "model": label,
           "model_kind": kind, "shots": "zero-shot", "lang": "en", "task": task}
    return {"task": "TaxRead", "record": rec, "output": out, "source": src}


def main():
    rng = random.Random(SEED)
    rng2 = random.Random(SEED + 1)
    cases, extra = [], []
    for mdir, (label, kind, fam) in MODELS.items():
        for task, n in PER_TASK.items():
            path = f"results/{mdir}/preds_{task}.jsonl"
            rows = [json.loads(l) for l in git("show", f"{COMMIT}:{path}").splitlines() if l.strip()]
            pool = []
            for li, r in enumerate(rows):
                out = r.get("prediction", r.get("pred"))
                gt = r.get("ground_truth", r.get("label"))
                if out is None or gt is None:
                    continue
                golds = [g for g in gold_list(gt) if g]
                if not golds:
                    continue
                pool.append((li, r.get("id", li), out, golds))
            first = sorted(rng.sample(pool, min(n, len(pool))))
            if EXTRA.get(task):
                rest = [t for t in pool if t not in first]
                for t in sorted(rng2.sample(rest, min(EXTRA[task], len(rest)))):
                    extra.append(make_case(mdir, label, kind, fam, task, path, *t))
            for li, rid, out, golds in first:
                tpl = TEMPLATES[fam][task]
                if task == "longdialogue_qa_eng":
                    query = tpl.format(context=MARK)
                    text = ("[a film or TV script of 100k+ tokens in which one occurrence of a character name is replaced "
                            "with $$MASK$$ (InfiniteBench longdialogue_qa_eng item %s); the script is not in the repository]" % rid)
                else:
                    query = tpl.format(context=MARK, input=INPUT[task])
                    text = ("[about 128k tokens of the filler line '%s' repeated, with one line hidden at some depth: '%s']"
                            % (FILLER, NEEDLE[task].format(k=golds[0])))
                rec = {"id": f"{task}-{rid}", "query": query, "text": text, "answer": golds[0], "answers": golds}
                src = {"repo": REPO, "commit": COMMIT, "path": path, "item": f"line {li} (id {rid})", "model": label,
                       "model_kind": kind, "shots": "zero-shot", "lang": "en", "task": task}
                cases.append({"task": "TaxRead", "record": rec, "output": out, "source": src})
    rng.shuffle(cases)
    rng2.shuffle(extra)
    cases += extra
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            f.write(json.dumps({"id": f"{PREFIX}-{i:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
