#!/usr/bin/env python3
"""Draw FrenchMedMCQA (DEFT 2023 pharmacy-exam MCQ, single and multiple answers) generations committed in
uy-rrodriguez/phd_deft23_medhsake (the LIS@DEFT'23 system by Benoit Favre; branch main = the original history)
into drawn.jsonl.

stdlib only. Each run log logs/<model>_prompt0.txt holds, for the 312 dev questions in order, the prompt, the raw
generation and a line "[extracted letters] [gold letters]". The prompt is rebuilt from data/dev.json with the prompt
variant the log carries (three variants across the history, see SOURCE.md) and checked against the log; the output is
the text the log prints after the prompt. Every item becomes TaxMCQ (options a-e, gold = the set of correct letters,
upper-cased). 15 models, 10 items each (6 with several correct answers, 4 with one), seed 20261214."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/uy-rrodriguez+phd_deft23_medhsake/repo"
REPO = "uy-rrodriguez/phd_deft23_medhsake"
PREFIX = "uy-rrodriguez__phd_deft23_medhsake"
SEED = 20261214
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = ("1d47dfb8618d9c3b7363d5b6c36a6f56e1d67a4a", "data/dev.json")
N_MULTI, N_SINGLE = 6, 4

C64 = "6420f70cc1b7cd10ae9fddee53d2026258de53b9"  # 2023-03-22 "add output and logs"
CA0 = "a089b403f6c0d94fc5d7f2bd87265eb70da20cfb"  # 2023-04-01 "add gpt-4 result"
C29 = "29404f504cf15a5aaa8b4d4a2b7aa6c80bd7e2a2"  # 2023-03-26 "add open assistant results"
C0F = "0f5ed6bf5b5acfbfb2fb34db51dd8e422e26b372"  # 2023-05-21 "add latest runs for submission"
C91 = "919ed606e4ff854a7c5abeb24c43d200a7ba66ab"  # 2023-09-26 "add llama2"
CF5 = "f5fc2acceeecfdc8ed3439169f1e9286a44c7c01"  # 2023-11-08 "add mistral and zephir runs" (main HEAD)

ZEPHYR_SYSTEM = "You are a friendly chatbot who responds accuractly to the user without explaining the answer."

# model name -> (commit, log file stem, model_kind, wrapper)
RUNS = {
    "gpt-4-0314": (CA0, "gpt-4-0314", "api", "chat"),
    "code-davinci-002": (C64, "code-davinci-002", "api", "plain"),
    "j1-jumbo": (C64, "j1-jumbo", "api", "plain"),
    "Llama-2-70b-chat-hf": (C91, "llama2-70b-chat", "chat", "plain"),
    "Llama-2-13b-chat-hf": (C91, "llama2-13b-chat", "chat", "plain"),
    "Mistral-7B-Instruct-v0.1": (CF5, "mistral-7b-instruct-0.1", "chat", "chat"),
    "zephyr-7b-beta": (CF5, "zerphir-7b", "chat", "zephyr"),
    "oasst-sft-1-pythia-12b": (C29, "oasst-sft-1-pythia-12b", "chat", "oasst"),
    "mpt-7b-instruct": (C0F, "mpt-7b-instruct", "chat", "plain"),
    "Llama-2-70b-hf": (C91, "llama2-70b", "base", "plain"),
    "galactica-6.7b": (C0F, "galactica-6.7b", "base", "plain"),
    "Llama-2-70b-hf+LoRA-deft": (C91, "llama2-70b-deft", "domain", "plain"),
    "PMC-LLaMA-7b": (C0F, "pmc_llama", "domain", "plain"),
    "bloomz-7b1-mt": (C64, "bloomz-7b1-mt", "chat", "plain"),
    "flan-ul2": (C64, "flan-ul2", "chat", "plain"),
}

HEAD_TEXT = ("Ceci est une question de QCM de l'examen de pharmacie. "
             "Réponds avec la ou les lettres correspondant à la bonne réponse.\n\n")
LIST = re.compile(r"^\[[^\n]*\] \[[^\n]*\]$", re.M)
MARKED = re.compile(r"PROMPT: \[(.*?)\]\nGENERATED: \[(.*?)\]\n(\[[^\n]*\] \[[^\n]*\])\n", re.S)


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def body(item):
    return item["question"] + "\n" + "\n".join("(%s) %s." % (k, v) for k, v in item["answers"].items())


def variants(item):
    """The three prompt texts found in the logs (deft.py changed between runs)."""
    b = body(item)
    return [HEAD_TEXT + b + "\nRéponse(s) :",      # deft.py from 0f5ed6b on (template 0, no parenthesis)
            HEAD_TEXT + b + "\nRéponse(s) : (",    # add_left_parenthesis=True (pmc_llama run)
            HEAD_TEXT + b + "\n\nRéponse : ("]     # the March 2023 template ("...\n\nRéponse : (")


def parse_log(text, dev):
    """[(prompt, output, list line)] for the 312 dev items, in order."""
    out = []
    if text.startswith("PROMPT: ["):
        for (prompt, gen, lst), item in zip(MARKED.findall(text), dev):
            assert prompt in variants(item), item["id"]
            out.append((prompt, gen, lst))
    else:
        pos = 0
        blocks = []
        for m in LIST.finditer(text):
            blocks.append((text[pos:m.start()], m.group(0)))
            pos = m.end() + 1
        for (block, lst), item in zip(blocks, dev):
            prompt = [p for p in variants(item) if block.startswith(p + "\n")]
            assert len(prompt) == 1, item["id"]
            prompt = prompt[0]
            gen = block[len(prompt) + 1:]
            assert gen.endswith("\n")
            gen = gen[:-1]  # the newline print() added after the generation
            if gen.startswith("This is a chat model\n"):  # a harness print, not model text
                gen = gen[len("This is a chat model\n"):]
            out.append((prompt, gen, lst))
    assert len(out) == len(dev), len(out)
    return out


def letters_of(lst_text):
    pred, gold = re.fullmatch(r"(\[[^\]]*\]) (\[[^\]]*\])", lst_text).groups()
    conv = lambda s: "".join(sorted(x.strip(" '").upper() for x in s.strip("[]").split(",") if x.strip()))
    return conv(pred), conv(gold)


def main():
    dev = json.loads(git(*DATA))
    rng = random.Random(SEED)
    drawn = []
    for model in RUNS:
        commit, stem, kind, wrapper = RUNS[model]
        path = "logs/%s_prompt0.txt" % stem
        recs = parse_log(git(commit, path), dev)
        multi = [i for i, it in enumerate(dev) if len(it["correct_answers"]) > 1]
        single = [i for i, it in enumerate(dev) if len(it["correct_answers"]) == 1]
        picks = rng.sample(multi, N_MULTI) + rng.sample(single, N_SINGLE)
        for i in picks:
            item = dev[i]
            prompt, gen, lst = recs[i]
            pred, gold_log = letters_of(lst)
            gold = "".join(sorted(a.upper() for a in item["correct_answers"]))
            assert gold == gold_log, (model, i)
            query = prompt
            if wrapper == "zephyr":
                query = ZEPHYR_SYSTEM + "\n\n" + prompt
            rec = {"id": "data/dev.json#%s" % item["id"], "query": query, "answer": gold}
            src = {"repo": REPO, "commit": commit, "path": path, "item": "dev %d:%s" % (i, item["id"]),
                   "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "fr",
                   "data": "%s@%s" % (DATA[1], DATA[0]), "prompt_wrapper": wrapper}
            hint = "source extract_answer: %s (source exact match: %s)" % (pred or "-", "yes" if pred == gold else "no")
            drawn.append(("TaxMCQ", rec, gen, src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as fp:
        for n, (task, rec, gen, src, hint) in enumerate(drawn, 1):
            fp.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": task, "record": rec, "output": gen,
                                 "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(RUNS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
