#!/usr/bin/env python3
"""Draw RoLM (prompt-format robustness) model outputs committed in CheongWoong/RoLM into drawn.jsonl.

stdlib only. Every `results_shared/<dataset>/<model>/<strategy>_raw_predictions.jsonl` whose blob is in
the snapshot is one run; each record holds 8 raw outputs, one per prompt format (formats "0".."7":
descriptor casing, a space before the descriptor, a space after the separator). A case is one
(run, item, format). Per model a fixed number of cases is drawn with a fixed seed, spread round-robin
over that model's runs. The prompt is rebuilt with the repository's own template logic
(src/utils/prompt_formatting.py `format_example`, prefilling disabled, as in src/inference.py), and the
rebuild is checked against the `*_input_examples.jsonl` files the runs saved (their first item)."""
import json, os, random, subprocess

GIT = "/work/.mirror/CheongWoong+RoLM/repo"
COMMIT = "32294ebbdb49c81e63aba87ca28d9b39b0efec68"
REPO = "CheongWoong/RoLM"
PREFIX = "CheongWoong__RoLM"
SEED = 20261211
HERE = os.path.dirname(os.path.abspath(__file__))

KIND = {
    "Llama-3.1-8B": "base", "Llama-3.1-8B-Instruct": "chat", "Phi-3.5-mini-instruct": "chat",
    "Phi-3.5-vision-instruct": "chat", "DeepSeek-R1-Distill-Llama-8B": "reasoning",
    "gpt-4o-2024-11-20": "api",
}
PER_MODEL = {"gpt-4o-2024-11-20": 20, "DeepSeek-R1-Distill-Llama-8B": 20}
DEFAULT_PER_MODEL = 28

# --- the repository's templates (src/utils/prompt_formatting.py, src/utils/task_instructions/*) ---
FORMAT_TYPE_MAP = {
    "0": {"separator": ":", "casing": "capitalize", "space": ""},
    "1": {"separator": ":", "casing": "capitalize", "space": " "},
    "2": {"separator": ":", "casing": "upper", "space": ""},
    "3": {"separator": ":", "casing": "upper", "space": " "},
    "4": {"separator": ": ", "casing": "capitalize", "space": ""},
    "5": {"separator": ": ", "casing": "capitalize", "space": " "},
    "6": {"separator": ": ", "casing": "upper", "space": ""},
    "7": {"separator": ": ", "casing": "upper", "space": " "},
}
DESC = {
    "capitalize": {"statement_descriptor": "Statement", "question_descriptor": "Question",
                   "options_descriptor": "Options", "explanation_descriptor": "Explanation",
                   "answer_descriptor": "Answer"},
    "upper": {"statement_descriptor": "STATEMENT", "question_descriptor": "QUESTION",
              "options_descriptor": "OPTIONS", "explanation_descriptor": "EXPLANATION",
              "answer_descriptor": "ANSWER"},
}
INSTR = {
    ("MCQA", "standard"): (
        "Answer the following multiple-choice questions. "
        "Select the best answer from the given options and provide your output in the following valid JSON format: "
        "```json {{\"{space}{answer_descriptor}\"{separator}\"{{letter}}\"}}``` "
        "Do not include any additional text. "),
    ("MCQA", "cot"): (
        "Answer the following multiple-choice questions. "
        "Think step-by-step and provide a concise reasoning process that justifies your answer. "
        "Based on the reasoning, select the best answer from the given options and provide your output in the following valid JSON format: "
        "```json {{\"{space}{explanation_descriptor}\"{separator}\"{{concise reasoning}}\", \"{space}{answer_descriptor}\"{separator}\"{{letter}}\"}}``` "
        "Ensure the explanation is minimal sufficient. "
        "Do not include any additional text. "),
    ("TFQA", "standard"): (
        "Answer the following true or false questions. "
        "Determine whether the statement is True or False and provide your output in the following valid JSON format: "
        "```json {{\"{space}{answer_descriptor}\"{separator}\"{{True/False}}\"}}``` "
        "Do not include any additional text. "),
    ("TFQA", "cot"): (
        "Answer the following true or false questions. "
        "Think step-by-step and provide a concise reasoning process that justifies your answer. "
        "Based on the reasoning, determine whether the statement is True or False and provide your output in the following valid JSON format: "
        "```json {{\"{space}{explanation_descriptor}\"{separator}\"{{concise reasoning}}\", \"{space}{answer_descriptor}\"{separator}\"{{True/False}}\"}}``` "
        "Ensure the explanation is minimal sufficient. "
        "Do not include any additional text. "),
    ("Math", "standard"): (
        "Answer the following math questions. "
        "Compute the correct numerical answer and provide your output in the following valid JSON format: "
        "```json {{\"{space}{answer_descriptor}\"{separator}\"{{numeric answer}}\"}}``` "
        "Ensure that the answer is a pure number without any symbols, units, or explanations. "
        "Do not include any additional text. "),
    ("Math", "cot"): (
        "Answer the following math questions. "
        "Think step-by-step and provide a concise reasoning process that justifies your answer. "
        "Based on the reasoning, compute the correct numerical answer and provide your output in the following valid JSON format: "
        "```json {{\"{space}{explanation_descriptor}\"{separator}\"{{concise reasoning}}\", \"{space}{answer_descriptor}\"{separator}\"{{numeric answer}}\"}}``` "
        "Ensure the explanation is minimal sufficient. "
        "Ensure that the answer is a pure number without any symbols, units, or explanations. "
        "Do not include any additional text. "),
}
FAMILY = {"CommonsenseQA": "MCQA", "QASC": "MCQA", "100TFQA": "TFQA", "GSM8K": "Math"}
TASK = {"CommonsenseQA": "TaxSCQ", "QASC": "TaxSCQ", "100TFQA": "TaxSCQ", "GSM8K": "TaxCalc"}


def fmt_data(ft):
    f = FORMAT_TYPE_MAP[ft]
    return dict(DESC[f["casing"]], **f)


def fmt_input(ex, strategy, fd, demo=False):
    statement = "{space}{statement_descriptor}{separator}{s}\n".format(s=ex["statements"]["original"], **fd) if "statements" in ex else ""
    question = "{space}{question_descriptor}{separator}{q}\n".format(q=ex["questions"]["original"], **fd) if "questions" in ex else ""
    options = ""
    if "options" in ex:
        opts = "\n".join("%s. %s" % (o["label"], o["text"]) for o in ex["options"])
        options = "{space}{options_descriptor}:\n{o}\n".format(o=opts, **fd)
    if demo:
        expl = "\"{space}{explanation_descriptor}\"{separator}\"{e}\", ".format(e=ex["explanation"], **fd) if "cot" in strategy else ""
        ans = "\"{space}{answer_descriptor}\"{separator}\"{a}\"".format(a=ex["answer"], **fd)
        return "%s%s%s```json {%s%s}```\n" % (statement, question, options, expl, ans)
    return statement + question + options


def format_example(ex, dataset, strategy, ft):
    fd = fmt_data(ft)
    instr = INSTR[(FAMILY[dataset], "cot" if "cot" in strategy else "standard")].format(**fd)
    demos = ""
    if "few-shot" in strategy:
        demos = "\n".join(fmt_input(d, strategy, fd, demo=True) for d in ex["demonstrations"]) + "\n"
    return "%s\n\n%s%s" % (instr, demos, fmt_input(ex, strategy, fd))


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout.decode("utf-8")


def show(path):
    try:
        return git("show", "%s:%s" % (COMMIT, path))
    except subprocess.CalledProcessError:
        return None  # blob absent from the snapshot


def jsonl(text):
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def num(s):
    x = float(str(s).replace(",", ""))
    return int(x) if x == int(x) else x


def main():
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT, "results_shared/").split("\n")
             if f.endswith("_raw_predictions.jsonl") and "_ext_" not in f]
    datasets = {}
    runs = {}  # model -> list of (path, dataset, strategy, records)
    for f in sorted(files):
        _, dataset, model, base = f.split("/")
        strategy = base[: -len("_raw_predictions.jsonl")]
        raw = show(f)
        if raw is None:
            continue
        if dataset not in datasets:
            datasets[dataset] = jsonl(show("preprocessed_datasets/%s_test_4_shot.jsonl" % dataset))
        recs = jsonl(raw)
        preds = show(f.replace("_raw_predictions", "_predictions"))
        preds = {p["id"]: p for p in jsonl(preds)} if preds else {}
        runs.setdefault(model, []).append((f, dataset, strategy, recs, preds))
        # check the prompt rebuild against the run's saved input examples
        ie = show(f.replace("_raw_predictions.jsonl", "_input_examples.jsonl"))
        if ie is not None:
            ex = datasets[dataset][0]
            rebuilt = "".join(format_example(ex, dataset, strategy, str(k)) + "\n\n" for k in range(8))
            assert rebuilt.strip() in ie, "prompt rebuild differs for %s" % f  # some files add a run header/footer
    rng = random.Random(SEED)
    cases = []
    for model in sorted(runs):
        rl = runs[model]
        n = PER_MODEL.get(model, DEFAULT_PER_MODEL)
        order = list(range(len(rl)))
        rng.shuffle(order)
        seen = set()
        k = 0
        while k < n:
            f, dataset, strategy, recs, preds = rl[order[k % len(order)]]
            i = rng.randrange(len(recs))
            ft = str(rng.randrange(8))
            if (f, i, ft) in seen:
                continue
            rec = recs[i]
            out = rec["raw_predictions"][ft]
            if isinstance(out, list):
                out = out[0]
            ex = datasets[dataset][i]
            assert str(ex["id"]) == str(rec["id"]), (f, i)
            seen.add((f, i, ft))
            k += 1
            query = format_example(ex, dataset, strategy, ft)
            rid = "%s/%s/%s#%s:format%s" % (dataset, model, strategy, ex["id"], ft)
            if dataset == "GSM8K":
                record = {"id": rid, "query": query, "answer": num(ex["answer"])}
            elif dataset == "100TFQA":
                choices = ["True", "False"]
                g = choices.index(ex["answer"])
                record = {"id": rid, "query": query, "choices": choices, "gold": g, "answer": choices[g]}
            else:
                choices = [o["text"] for o in ex["options"]]
                g = [o["label"] for o in ex["options"]].index(ex["answer"])
                record = {"id": rid, "query": query, "choices": choices, "gold": g, "answer": choices[g]}
            case = {"task": TASK[dataset], "record": record, "output": out,
                    "source": {"repo": REPO, "commit": COMMIT, "path": f, "item": "%d:%s:format%s" % (i, ex["id"], ft),
                               "model": model, "model_kind": KIND[model],
                               "shots": "cot" if "cot" in strategy else ("few-shot" if "few-shot" in strategy else "zero-shot"),
                               "lang": "en"}}
            p = preds.get(rec["id"])
            if p is not None and ft in p.get("predictions", {}):
                case["hint"] = "source extracted %r, accuracy %s" % (p["predictions"][ft], p.get("accuracy", {}).get(ft))
            cases.append(case)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as fo:
        for n_, c in enumerate(cases, 1):
            c = dict({"id": "%s-%04d" % (PREFIX, n_)}, **c)
            fo.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
