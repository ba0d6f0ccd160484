#!/usr/bin/env python3
"""Draw ENEM 2022 model answers committed in viniciusarruda/llm-enem into drawn.jsonl.

stdlib only. Five models (gpt-3.5-turbo-0613, gpt-4-0613, MariTalk, Falcon-7B, LLaMA-2-7B), each run in three
prompt settings (zero-shot, three-shot, three-shot with chain of thought): 15 report files, read at the pinned
commit of the snapshot. From each report 10 questions are drawn with a fixed seed (150 cases). Every item is a
five-option ENEM question (TaxSCQ); the record's query is the user message the model received (the dataset's
`prompt` field, which already holds the few-shot demonstrations), preceded for Falcon-7B and LLaMA-2-7B by the
default system prompt the HF wrappers insert."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/viniciusarruda+llm-enem/repo"
REPO = "viniciusarruda/llm-enem"
PREFIX = "viniciusarruda__llm-enem"
SEED = 20261217
COMMIT = "58a15ec606b532be7f054a75f66dcc760c4de924"  # main HEAD, 2023-09-01 "fix readme"
HERE = os.path.dirname(os.path.abspath(__file__))
N_PER_RUN = 10

SETTINGS = [  # (dataset file stem, shots label)
    ("enem_2022_0_shot", "zero-shot"),
    ("enem_2022_3_shot", "few-shot"),
    ("enem_cot_2022_3_shot", "cot"),
]
MODELS = [  # (model name in the file names, folder, model_kind, system prompt?)
    ("gpt-3.5-turbo-0613", "reports", "api", False),
    ("gpt-4-0613", "reports", "api", False),
    ("MariTalk", "reports", "api", False),
    ("Falcon-7B", "unreleased-reports", "chat", True),
    ("LLaMA-2-7B", "unreleased-reports", "chat", True),
]


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def default_system_prompt():
    src = git("code/chat_completion_wrapper/hf_chat_completion_wrapper.py").replace("\r\n", "\n")  # CRLF file
    m = re.search(r'DEFAULT_SYSTEM_PROMPT = """\\\n(.*?)"""', src, re.S)
    return m.group(1)


def main():
    sys_prompt = default_system_prompt()
    rng = random.Random(SEED)
    drawn = []
    for model, folder, kind, with_sys in MODELS:
        for stem, shots in SETTINGS:
            data = {d["id"]: d for d in json.loads(git("dataset/enem/%s.json" % stem))}
            path = "%s/%s_%s.json" % (folder, model, stem)
            report = json.loads(git(path))
            rows = [(i, r) for i, r in enumerate(report) if r["id"] in data]
            for i, r in rng.sample(rows, N_PER_RUN):
                q = data[r["id"]]
                assert "ABCDE"[q["gold"]] + "." == r["gold"], (path, r["id"])
                choices = [c.strip() for c in q["choices"]]
                query = (sys_prompt + "\n\n" + q["prompt"]) if with_sys else q["prompt"]
                rec = {"id": "dataset/enem/%s.json#%s" % (stem, q["id"]), "query": query, "choices": choices,
                       "gold": q["gold"], "answer": choices[q["gold"]]}
                src = {"repo": REPO, "commit": COMMIT, "path": path, "item": "%d:%s:%s" % (i, q["id"], q["area"]),
                       "model": model, "model_kind": kind, "shots": shots, "lang": "other"}
                drawn.append(("TaxSCQ", rec, r["response"], src, "source regex pred: %s" % r["pred"]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
