#!/usr/bin/env python3
"""Draw ENEM 2022 model responses committed in piresramon/gpt-4-enem into drawn.jsonl.

stdlib only. The repository's `reports/` folder holds, for 3 models x 3 prompt settings (zero-shot,
three-shot, three-shot with chain-of-thought), the raw response to each of the 118 ENEM 2022 questions
that need no image (tags IU and ML false), with the source's regex-extracted `pred` and the `gold`.
Everything (reports, data, task code, few-shot exemplars, CoT description) is read at one pinned commit,
702c51f (2023-04-01, the commit that added the reports; the reports are unchanged at HEAD).

The prompt each model saw is rebuilt from lm_eval/tasks/enem.py at that commit: the few-shot exemplars
are taken from `ENEM._get_train_examples` by parsing the module with `ast` and executing only that
function (string literals and dicts); the CoT description from description.json.
From each of the 9 runs 17 questions are drawn with a fixed seed (153 cases)."""
import ast
import json
import os
import random
import re
import subprocess

GIT = "/work/.mirror/piresramon+gpt-4-enem/repo"
REPO = "piresramon/gpt-4-enem"
PREFIX = "piresramon__gpt-4-enem"
SEED = 20261213
COMMIT = "702c51f16b971fafbb8783927a5ed1df3a2d9650"
DATA = "data/enem/2022.json"
TASK_CODE = "lm_eval/tasks/enem.py"
DESCRIPTIONS = "description.json"
HERE = os.path.dirname(os.path.abspath(__file__))
PER_RUN = 17

# (model, model_kind, num_fewshot, task)
RUNS = [
    ("code-davinci-002", "base", 0, "enem_2022"),
    ("code-davinci-002", "base", 3, "enem_2022"),
    ("code-davinci-002", "base", 3, "enem_cot_2022"),
    ("gpt-3.5-turbo-0301", "api", 0, "enem_2022"),
    ("gpt-3.5-turbo-0301", "api", 3, "enem_2022"),
    ("gpt-3.5-turbo-0301", "api", 3, "enem_cot_2022"),
    ("gpt-4-0314", "api", 0, "enem_2022"),
    ("gpt-4-0314", "api", 3, "enem_2022"),
    ("gpt-4-0314", "api", 3, "enem_cot_2022"),
]
LETTERS = "ABCDE"


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def train_examples():
    """ENEM._get_train_examples() of enem.py, executed on its own (it only builds literals)."""
    tree = ast.parse(git(TASK_CODE))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ENEM")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "_get_train_examples")
    ns = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), TASK_CODE, "exec"), ns)
    return ns["_get_train_examples"](None)


def format_example(doc, cot):
    """ENEM._process_doc / ENEM_CoT._process_doc format_example."""
    prompt = "Cabeçalho: " + doc["context"] + "\n"
    prompt += "Enunciado: " + doc["question"] + "\nAlternativas:\n"
    for choice, option in zip("abcde", doc["options"]):
        prompt += f"{choice.upper()}. {option}\n"
    if not cot:
        prompt += "Resposta:"
        return prompt
    prompt += "Explicação: " + doc.get("explanation", "")
    return prompt.strip()


def build_prompt(doc, shots, cot, train, description):
    """ENEM.fewshot_context: fixed exemplars in order, the evaluated question itself left out."""
    desc = description + "\n\n" if description else ""
    if shots == 0:
        labeled = ""
    else:
        ex = [e for e in train[:shots] if e["id"] != doc["id"]]
        labeled = ""
        for i, e in enumerate(ex):
            labeled += f"Questão {i + 1}:\n"
            labeled += format_example(e, cot) + " " + LETTERS["abcde".index(e["label"])] + "."
            labeled += "\n##\n"
        labeled += f"Questão {len(ex) + 1}:\n"
    return desc + labeled + format_example(doc, cot)


def main():
    docs = {d["id"]: d for d in json.loads(git(DATA)) if d["IU"] is False and d["ML"] is False}
    train = train_examples()
    descriptions = json.loads(git(DESCRIPTIONS))
    rng = random.Random(SEED)
    drawn = []
    for model, kind, shots, task in RUNS:
        cot = task == "enem_cot_2022"
        path = "reports/engine=%s_numfewshot=%d_task=%s.json" % (model, shots, task)
        report = json.loads(git(path))
        assert len(report) == len(docs) == 118, (path, len(report))
        description = descriptions.get(task) if cot else None
        for r in rng.sample(report, PER_RUN):
            doc = docs[r["id"]]
            gold = "abcde".index(doc["label"])
            assert r["gold"] == LETTERS[gold] + ".", (r["id"], r["gold"], doc["label"])
            choices = [re.sub(r"\s+", " ", o).strip() for o in doc["options"]]
            query = build_prompt(doc, shots, cot, train, description)
            rec = {"id": "%s#%s" % (DATA, doc["id"]), "query": query, "choices": choices, "gold": gold,
                   "answer": choices[gold]}
            src = {"repo": REPO, "commit": COMMIT, "path": path, "item": "%s:%s" % (doc["id"], r["area"]),
                   "model": model, "model_kind": kind,
                   "shots": "cot" if cot else ("few-shot" if shots else "zero-shot"), "lang": "other"}
            hint = "source pred %r (regex over the response), gold %r" % (r["pred"], r["gold"])
            drawn.append(("TaxSCQ", rec, r["response"], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(docs), "questions;", len(RUNS), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
