#!/usr/bin/env python3
"""Draw JEEBench (JEE Advanced 2016-2023) model responses committed in somethingdevs/cs678-jeebench
(a fork of dair-iitd/jeebench that unpacks the original response files and adds new runs) into drawn.jsonl.

stdlib only. Each run (one responses file with a readable blob) is one model/prompting system; from each
run 12 cases are drawn with a fixed seed: 7 multiple-correct questions (TaxMCQ), 2 single-correct
questions (TaxSCQ) and 3 Integer/Numeric questions (TaxCalc)."""
import ast, json, os, random, re, subprocess

GIT = "/work/.mirror/somethingdevs+cs678-jeebench/repo"
COMMIT = "c640d56ad8fd0fad12e19cc0f86867fbb234b754"
REPO = "somethingdevs/cs678-jeebench"
PREFIX = "somethingdevs__cs678-jeebench"
SEED = 20261210
HERE = os.path.dirname(os.path.abspath(__file__))

# path, response key, lang, shots, label of the prompting mode
RUNS = [
    ("data/responses/GPT3_normal_responses/responses.json", "GPT3_normal_response", "en", "zero-shot", "normal"),
    ("data/responses/GPT3.5_normal_responses/responses.json", "GPT3.5_normal_response", "en", "zero-shot", "normal"),
    ("data/responses/GPT4_normal_responses/responses.json", "GPT4_normal_response", "en", "zero-shot", "normal"),
    ("data/responses/GPT4_CoT_responses/responses.json", "GPT4_CoT_response", "en", "cot", "CoT"),
    ("data/responses/GPT4_CoT+OneShot_responses/responses.json", "GPT4_CoT+OneShot_response", "en", "few-shot",
     "CoT+OneShot"),
    ("data/responses/GPT4_CoT_self_refine_responses/responses_old.json", "GPT4_CoT_self_refine_response", "en",
     "cot", "CoT_self_refine"),
    ("data/responses/GPT4_0613_normal_responses/responses.json", "GPT4_0613_normal_response", "en", "zero-shot",
     "normal"),
    ("data/cp2_responses/GPT3.5_normal_responses/arabic_responses.json", "GPT3.5_normal_response", "other",
     "zero-shot", "normal-arabic"),
    ("data/cp2_responses/GPT3.5_normal_responses/chinese_responses.json", "GPT3.5_normal_response", "zh",
     "zero-shot", "normal-chinese"),
    ("data/cp2_responses/GPT3.5_normal_responses/hindi_responses.json", "GPT3.5_normal_response", "other",
     "zero-shot", "normal-hindi"),
    ("data/cp2_responses/GPT4_0613_normal_responses/arabic_responses.json", "GPT4_0613_normal_response", "other",
     "zero-shot", "normal-arabic"),
    ("data/cp2_responses/GPT4_0613_normal_responses/chinese_responses.json", "GPT4_0613_normal_response", "zh",
     "zero-shot", "normal-chinese"),
    ("data/cp2_responses/GPT4_0613_normal_responses/hindi_responses.json", "GPT4_0613_normal_response", "other",
     "zero-shot", "normal-hindi"),
]
SLOTS = ["MCQ(multiple)"] * 7 + ["MCQ"] * 2 + ["Calc"] * 3
OPT = re.compile(r"^\s*[\(\[]([A-D])[\)\]]\s*(.*)$")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def options(question):
    """The four option texts (A)..(D) / [A]..[D], each from its line to the next option line."""
    opts, cur = {}, None
    for line in question.split("\n"):
        m = OPT.match(line)
        if m and m.group(1) not in opts:
            cur = m.group(1)
            opts[cur] = m.group(2).strip()
        elif cur and line.strip():
            opts[cur] += "\n" + line.strip()
    if sorted(opts) != ["A", "B", "C", "D"]:
        return None
    return [opts[k] for k in "ABCD"]


def num(s):
    x = float(s)
    return int(x) if x == int(x) else x


def output_of(resp):
    if isinstance(resp, str):
        resp = ast.literal_eval(resp)
    c = resp["choices"][0]
    return (c["message"]["content"] if "message" in c else c["text"]), resp["model"]


def main():
    rng = random.Random(SEED)
    drawn = []
    for path, key, lang, shots, mode in RUNS:
        data = json.loads(git("show", "%s:%s" % (COMMIT, path)))
        pools = {"MCQ(multiple)": [], "MCQ": [], "Calc": []}
        for i, x in enumerate(data):
            if not x.get(key) or not x.get("prompt"):
                continue
            t = x["type"]
            if t in ("MCQ", "MCQ(multiple)"):
                if options(x["question"]) is None or not re.fullmatch(r"[A-D]+", x["gold"]):
                    continue
                pools[t].append(i)
            elif t in ("Integer", "Numeric"):
                try:
                    num(x["gold"])
                except ValueError:
                    continue
                pools["Calc"].append(i)
        used = set()
        for slot in SLOTS:
            i = rng.choice([j for j in pools[slot] if j not in used])
            used.add(i)
            x = data[i]
            output, model = output_of(x[key])
            if slot == "MCQ(multiple)":
                t, rec = "TaxMCQ", {"query": x["prompt"], "answer": "".join(sorted(x["gold"]))}
            elif slot == "MCQ":
                ch = options(x["question"])
                g = "ABCD".index(x["gold"])
                t, rec = "TaxSCQ", {"query": x["prompt"], "choices": ch, "gold": g, "answer": ch[g]}
            else:
                t, rec = "TaxCalc", {"query": x["prompt"], "answer": num(x["gold"])}
            rec = dict({"id": "%s#%s/%s" % (path, x["description"], x["index"])}, **rec)
            src = {"repo": REPO, "commit": COMMIT, "path": path,
                   "item": "%d:%s:%s:%s:%s" % (i, x["description"], x["index"], x["type"], mode),
                   "model": model, "model_kind": "api", "shots": shots, "lang": lang}
            case = {"task": t, "record": rec, "output": output, "source": src}
            if x.get("extract") not in (None, ""):
                case["hint"] = "source extract: %s" % x["extract"]
            drawn.append(case)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, c in enumerate(drawn, 1):
            c = dict({"id": "%s-%04d" % (PREFIX, n)}, **c)
            out.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(RUNS), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
