#!/usr/bin/env python3
"""Draw numeric-answer model outputs from tommccoy1/embers-of-autoregression ("Embers of Autoregression",
McCoy et al.) into drawn.jsonl.

stdlib only. The repository's logs/ hold one JSON file per task condition and model, with the exact prompts
sent (`prompts`), the gold outputs (`gts`), the raw model replies (`res`) and the logging script's own
substring flag (`accs`). Three task families have a number as the answer and become TaxCalc:
multiplication (3-digit times 3-digit, four spellings of the operands, one worked example in the prompt),
conversion (a linear function: Celsius/Fahrenheit and invented variants, forward and inverse), and counting
(words or letters in a quoted list). Five models ran all three families; two fine-tuned gpt-3.5-turbo models
ran one counting condition. From each of the five main models 8 multiplication, 10 conversion and 10
counting items are drawn, from each fine-tuned model 8 counting items, with a fixed seed."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/tommccoy1+embers-of-autoregression/repo"
REPO = "tommccoy1/embers-of-autoregression"
PREFIX = "tommccoy1__embers-of-autoregression"
SEED = 20261214
COMMIT = "5dd6c91ad57cd2d913402b98e4253fda806fbe93"
HERE = os.path.dirname(os.path.abspath(__file__))

MULT = ["multiplication_number", "multiplication_word", "multiplication_allcaps", "multiplication_alternatingcaps"]
CONV = ["conversion_" + c for c in ("actual", "actualinverse", "actualprimed", "actualprimedcontrol", "fake",
                                    "fakeinverse", "ood_actual", "ood_actualinverse", "ood_actualprimed",
                                    "ood_actualprimedcontrol", "ood_fake", "ood_fakeinverse")]
COUNT = ["counting_%s_%s" % (u, c) for u in ("words", "chars")
         for c in ("common", "rare", "common_common", "common_rare", "rare_common", "rare_rare")]

CLAUDE_SYSTEM = "Provide only your answer, without any explanation."  # run_claude3.py: system= for every call

# model -> (model_kind, {family: (conditions, n)})
MAIN = {"gpt-3.5-turbo-0613": "api", "gpt-4-0613": "api", "claude-3-opus-20240229": "api",
        "gemini-1.0-pro-001": "api", "llama-3-70b-chat-hf": "chat"}
FT = ["ft:gpt-3.5-turbo-0613:personal:count-10shot:9NYCyc4X", "ft:gpt-3.5-turbo-0613:personal:count-100shot:9NYN8hZQ"]
N_MULT, N_CONV, N_COUNT, N_FT = 8, 10, 10, 8

def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def log_path(cond, model):
    return "logs/%s_%s_temp=0.0_n=1.json" % (cond, model)


def number(gt):
    s = gt.strip().strip('"').strip()
    if not re.fullmatch(r"-?\d+(\.\d+)?", s):
        raise ValueError(gt)
    return float(s) if "." in s else int(s)


def pool(conds, model):
    out = []
    for cond in conds:
        path = log_path(cond, model)
        d = json.loads(git(path))
        for i, (p, g, r, a) in enumerate(zip(d["prompts"], d["gts"], d["res"], d["accs"])):
            out.append((cond, i, path, p, number(g), r, a))
    return out


def main():
    rng = random.Random(SEED)
    drawn = []
    plan = [(m, MAIN[m], [(MULT, N_MULT), (CONV, N_CONV), (COUNT, N_COUNT)]) for m in MAIN]
    plan += [(m, "domain", [(["counting_words_common"], N_FT)]) for m in FT]
    for model, kind, fams in plan:
        for conds, n in fams:
            for cond, i, path, prompt, gold, res, acc in rng.sample(pool(conds, model), n):
                query = (CLAUDE_SYSTEM + "\n\n" + prompt) if model.startswith("claude") else prompt
                shots = "few-shot" if cond.startswith("multiplication") else "zero-shot"
                rec = {"id": "%s#%d" % (cond, i), "query": query, "answer": gold}
                drawn.append(("TaxCalc", rec, res, {
                    "repo": REPO, "commit": COMMIT, "path": path, "item": "%s:%d" % (cond, i),
                    "model": model, "model_kind": kind, "shots": shots, "lang": "en"},
                    "log accs=%s (logging script's flag: gold string is a substring of the reply)" % acc))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for k, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, k), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
