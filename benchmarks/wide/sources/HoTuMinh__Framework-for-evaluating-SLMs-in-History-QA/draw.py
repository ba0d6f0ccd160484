#!/usr/bin/env python3
"""Draw Vietnamese high-school history multiple-choice outputs of small language models committed in
HoTuMinh/Framework-for-evaluating-SLMs-in-History-QA into drawn.jsonl.

stdlib only. Every run file is a CSV (one row per question of the 560-question set: id, gold letter, choices as a
Python list literal, question, ..., `<model>_response` (the decoded continuation), `<model>_answer` (the notebook's
extracted letter)). Runs used: the five-shot chain-of-thought runs (MCQ_FewshotCOT/FewshotCOT_*, the "C_*_5shot_cot"
files of MCQ_ZeroshotCOT/, Fewshot_Gemma3_4b_it) and the zero-shot chain-of-thought runs (MCQ_ZeroshotCOT/ZeroshotCOT_*,
BB_ZeroshotCOT_*, NQ_*_cot_*, B_Viet-Mistral_*_cot_*). Prompts are rebuilt from the prompt functions of
mcq_notebook.ipynb (fewshot: build_fewshot_cot_prompt, English or Vietnamese version by the notebook's
is_vietnamese_model; zero-shot CoT: prompter_en, or prompter for the Vietnamese models; Gemma-3-4b-it: the messages of
test_gemma3_accuracy_batched). 6 cases a model with several runs (spread over them), 5 a model with one run, with a fixed seed."""
import ast, csv, io, json, os, random, re, subprocess

GIT = "/work/.mirror/HoTuMinh+Framework-for-evaluating-SLMs-in-History-QA/repo"
REPO = "HoTuMinh/Framework-for-evaluating-SLMs-in-History-QA"
PREFIX = "HoTuMinh__Framework-for-evaluating-SLMs-in-History-QA"
SEED = 20261215
HEAD = "2a50750658fa8415a254a2bba59f356c58df2cb2"
NB = (HEAD, "mcq_notebook.ipynb")
HERE = os.path.dirname(os.path.abspath(__file__))
PER_MODEL = 6      # models with two or three runs
PER_MODEL_ONE = 5  # models with one run

FS, ZS, G3 = "fewshot", "zeroshot", "gemma3"
Z, F = "MCQ_ZeroshotCOT/", "MCQ_FewshotCOT/"
# model -> (kind, [(style, path), ...])
RUNS = {
    "Qwen/Qwen2-0.5B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2-0.5B-Instruct_on_50_maxNewTokens_0.26071428571428573.csv")]),
    "Qwen/Qwen2-1.5B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2-1.5B-Instruct_on_50_maxNewTokens_0.55.csv"),
                                          (ZS, Z + "ZeroshotCOT_Qwen_Qwen2-1.5B-Instruct_on_50_maxNewTokens_0.4357142857142857.csv")]),
    "Qwen/Qwen2-1.5B": ("base", [(FS, F + "FewshotCOT_Qwen_Qwen2-1.5B_on_50_maxNewTokens_0.5321428571428571.csv"),
                                 (ZS, Z + "ZeroshotCOT_Qwen_Qwen2-1.5B_on_50_maxNewTokens_0.49107142857142855.csv")]),
    "Qwen/Qwen2-7B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2-7B-Instruct_on_50_maxNewTokens_0.6089285714285714.csv"),
                                        (ZS, Z + "ZeroshotCOT_Qwen_Qwen2-7B-Instruct_on_50_maxNewTokens_0.7285714285714285.csv")]),
    "Qwen/Qwen2.5-0.5B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2.5-0.5B-Instruct_on_50_maxNewTokens_0.40535714285714286.csv"),
                                            (ZS, Z + "NQ_Qwen_Qwen2.5-0.5B-Instruct_cot_on_50_maxNewTokens_0.25892857142857145.csv")]),
    "Qwen/Qwen2.5-0.5B": ("base", [(ZS, Z + "NQ_Qwen_Qwen2.5-0.5B_cot_on_50_maxNewTokens_0.21428571428571427.csv")]),
    "Qwen/Qwen2.5-1.5B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2.5-1.5B-Instruct_on_50_maxNewTokens_0.5821428571428572.csv"),
                                            (ZS, Z + "NQ_Qwen_Qwen2.5-1.5B-Instruct_cot_on_50_maxNewTokens_0.575.csv")]),
    "Qwen/Qwen2.5-3B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2.5-3B-Instruct_on_50_maxNewTokens_0.2732142857142857.csv")]),
    "Qwen/Qwen2.5-3B": ("base", [(FS, Z + "C_Qwen_Qwen2.5-3B_on_5shot_cot_50_maxNewTokens_0.6339285714285714.csv")]),
    "Qwen/Qwen2.5-7B-Instruct": ("chat", [(FS, F + "FewshotCOT_Qwen_Qwen2.5-7B-Instruct_on_50_maxNewTokens_0.3964285714285714.csv"),
                                          (ZS, Z + "NQ_Qwen_Qwen2.5-7B-Instruct_cot_on_25_maxNewTokens_0.7803571428571429.csv"),
                                          (FS, Z + "C_Qwen_Qwen2.5-7B-Instruct_on_5shot_cot_50_maxNewTokens_0.6071428571428571.csv")]),
    "Qwen/Qwen2.5-7B": ("base", [(FS, F + "FewshotCOT_Qwen_Qwen2.5-7B_on_50_maxNewTokens_0.3.csv"),
                                 (ZS, Z + "NQ_Qwen_Qwen2.5-7B_cot_on_50_maxNewTokens_0.7464285714285714.csv")]),
    "Qwen/Qwen3-0.6B": ("reasoning", [(FS, F + "FewshotCOT_Qwen_Qwen3-0.6B_on_50_maxNewTokens_0.4625.csv"),
                                      (FS, Z + "C_Qwen_Qwen3-0.6B_on_5shot_cot_50_maxNewTokens_0.4160714285714286.csv")]),
    "Qwen/Qwen3-4B": ("reasoning", [(FS, F + "FewshotCOT_Qwen_Qwen3-4B_on_50_maxNewTokens_0.6571428571428571.csv"),
                                    (ZS, Z + "ZeroshotCOT_Qwen_Qwen3-4B_on_50_maxNewTokens_0.7357142857142858.csv")]),
    "Qwen/Qwen3-8B": ("reasoning", [(FS, F + "FewshotCOT_Qwen_Qwen3-8B_on_50_maxNewTokens_0.8303571428571429.csv"),
                                    (ZS, Z + "ZeroshotCOT_Qwen_Qwen3-8B_on_50_maxNewTokens_0.7785714285714286.csv")]),
    "Viet-Mistral/Vistral-7B-Chat": ("chat", [(FS, F + "FewshotCOT_Viet-Mistral_Vistral-7B-Chat_on_50_maxNewTokens_0.19464285714285715.csv"),
                                              (ZS, Z + "B_Viet-Mistral_Vistral-7B-Chat_cot_on_50_maxNewTokens_0.5892857142857143.csv")]),
    "google/gemma-1.1-2b-it": ("chat", [(FS, F + "FewshotCOT_google_gemma-1.1-2b-it_on_50_maxNewTokens_0.2857142857142857.csv"),
                                        (ZS, Z + "BB_ZeroshotCOT_google_gemma-1.1-2b-it_on_50_maxNewTokens_0.4107142857142857.csv")]),
    "google/gemma-1.1-7b-it": ("chat", [(FS, F + "FewshotCOT_google_gemma-1.1-7b-it_on_50_maxNewTokens_0.6696428571428571.csv"),
                                        (ZS, Z + "BB_ZeroshotCOT_google_gemma-1.1-7b-it_on_50_maxNewTokens_0.6517857142857143.csv")]),
    "google/gemma-2-2b-it": ("chat", [(FS, F + "FewshotCOT_google_gemma-2-2b-it_on_50_maxNewTokens_0.5946428571428571.csv"),
                                      (ZS, Z + "BB_ZeroshotCOT_google_gemma-2-2b-it_on_50_maxNewTokens_0.6125.csv")]),
    "google/gemma-2-2b": ("base", [(FS, F + "FewshotCOT_google_gemma-2-2b_on_50_maxNewTokens_0.18571428571428572.csv")]),
    "google/gemma-2-9b-it": ("chat", [(FS, F + "FewshotCOT_google_gemma-2-9b-it_on_50_maxNewTokens_0.014285714285714285.csv"),
                                      (ZS, Z + "NQ_google_gemma-2-9b-it_cot_on_50_maxNewTokens_0.8142857142857143.csv")]),
    "google/gemma-2b-it": ("chat", [(FS, F + "FewshotCOT_google_gemma-2b-it_on_50_maxNewTokens_0.3196428571428571.csv"),
                                    (ZS, Z + "ZeroshotCOT_google_gemma-2b-it_on_50_maxNewTokens_0.38392857142857145.csv")]),
    "google/gemma-2b": ("base", [(FS, F + "FewshotCOT_google_gemma-2b_on_50_maxNewTokens_0.17142857142857143.csv")]),
    "google/gemma-3-1b-it": ("chat", [(FS, F + "FewshotCOT_google_gemma-3-1b-it_on_50_maxNewTokens_0.26964285714285713.csv"),
                                      (ZS, Z + "BB_ZeroshotCOT_google_gemma-3-1b-it_on_50_maxNewTokens_0.34464285714285714.csv"),
                                      (FS, Z + "C_google_gemma-3-1b-it_on_5shot_cot_50_maxNewTokens_0.20357142857142857.csv")]),
    "google/gemma-7b-it": ("chat", [(FS, Z + "C_google_gemma-7b-it_on_5shot_cot_50_maxNewTokens_0.22142857142857142.csv"),
                                    (ZS, Z + "BB_ZeroshotCOT_google_gemma-7b-it_on_50_maxNewTokens_0.30714285714285716.csv")]),
    "google/gemma-3-4b-it": ("chat", [(G3, F + "Fewshot_Gemma3_4b_it_on_50maxnewtokens_0.65.csv")]),
    "vilm/vinallama-2.7b": ("base", [(FS, F + "FewshotCOT_vilm_vinallama-2.7b_on_50_maxNewTokens_0.20357142857142857.csv"),
                                     (FS, Z + "C_vilm_vinallama-2.7b_on_5shot_cot_50_maxNewTokens_0.21964285714285714.csv")]),
    "vilm/vinallama-7b-chat": ("chat", [(FS, Z + "C_vilm_vinallama-7b-chat_on_5shot_cot_50_maxNewTokens_0.5178571428571429.csv")]),
}
VILM_SYSTEM = "Bạn là một trợ lí AI hữu ích. Hãy trả lời người dùng một cách chính xác."
GEMMA3_SYSTEM = "You are a helpful assistant."


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def notebook_cells():
    nb = json.loads(git(*NB))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def fstring(src, name):
    """The body of `name = f\"\"\"...\"\"\"` in src."""
    m = re.search(re.escape(name) + r' = f"""(.*?)"""', src, re.S)
    return m.group(1)


def templates():
    cells = notebook_cells()
    src = "\n".join(cells)
    t = {}
    t["prompter_vi"] = re.search(r'def prompter\(question, choices\):.*?prompt = f"""(.*?)"""', src, re.S).group(1)
    t["prompter_en"] = re.search(r'def prompter_en\(question, choices\):.*?prompt = f"""(.*?)"""', src, re.S).group(1)
    fs = [c for c in cells if "def build_fewshot_cot_prompt" in c][0]
    t["fewshot_vi"] = fstring(fs, "fewshot_cot_vi")
    t["fewshot_en"] = fstring(fs, "fewshot_cot_en")
    g3 = [c for c in cells if "def test_gemma3_accuracy_batched" in c][0]
    t["gemma3"] = re.search(r'\{"type": "text", "text": f"""(.*?)"""\}', g3, re.S).group(1)
    return t


def is_vietnamese_model(name):
    return any(x in name.lower() for x in ["vinallama", "vistral", "viet", "vi-"])


def fill(tmpl, question, choices):
    choices_list = "\n".join("%s. %s" % (chr(65 + i), c) for i, c in enumerate(choices))
    return tmpl.replace("{question}", question).replace("{choices_list}", choices_list)


def build_query(t, style, model, question, choices):
    vi = is_vietnamese_model(model)
    if style == FS:
        text = fill(t["fewshot_vi"] if vi else t["fewshot_en"], question, choices).strip()
    elif style == ZS:
        text = fill(t["prompter_vi"] if vi else t["prompter_en"], question, choices).strip()
    else:  # gemma3: system + user turn (Gemma 3's template puts the system text before the user text)
        return GEMMA3_SYSTEM + "\n\n" + fill(t["gemma3"], question, choices).strip()
    if model == "vilm/vinallama-7b-chat":
        return VILM_SYSTEM + "\n\n" + text
    return text


def read_run(path):
    rows = list(csv.DictReader(io.StringIO(git(HEAD, path))))
    out = {}
    for r in rows:
        resp = [k for k in r if k.endswith("_response") or k == "Model Inference"][0]
        ans = [k for k in r if k.endswith("_answer") or k == "Model Answer"][0]
        out[r["id"]] = (r, r[resp], r[ans])
    return out


def main():
    t = templates()
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        kind, runs = RUNS[model]
        data = [(style, path, read_run(path)) for style, path in runs]
        common = sorted(set.intersection(*[set(d[2]) for d in data]))
        items = rng.sample(common, PER_MODEL if len(data) > 1 else PER_MODEL_ONE)
        for i, key in enumerate(items):
            style, path, rows = data[i % len(data)]
            r, output, ext = rows[key]
            choices = [re.sub(r"\s+", " ", c).strip() for c in ast.literal_eval(r["choices"])]
            choices_raw = ast.literal_eval(r["choices"])
            gold_letter = r["answer"].strip().upper()
            gold = ord(gold_letter) - 65
            assert 0 <= gold < len(choices), (model, key)
            query = build_query(t, style, model, r["question"], choices_raw)
            rec = {"id": "datasets/labeled-history-202x-dedup.csv#%s" % key, "query": query, "choices": choices,
                   "gold": gold, "answer": choices[gold]}
            m = re.search(r"_(\d+)_?maxnewtokens", path, re.I)
            src = {"repo": REPO, "commit": HEAD, "path": path,
                   "item": "%s:%s" % (key, r.get("dang_cau_hoi", "")),
                   "model": model, "model_kind": kind,
                   "shots": "few-shot" if style in (FS, G3) else "cot", "lang": "other",
                   "max_new_tokens": int(m.group(1)) if m else None}
            hint = "extracted answer: %s" % (ext if ext else "(none)")
            drawn.append(("TaxSCQ", rec, output, src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (task, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": task, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(RUNS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
