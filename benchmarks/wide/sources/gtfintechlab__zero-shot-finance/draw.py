#!/usr/bin/env python3
"""Draw the committed LLM outputs of "Zero is Not Hero Yet" (gtfintechlab/zero-shot-finance) and of its
fork mika-okamoto/zero-shot-finance (2024 replication and few-shot runs) into drawn.jsonl.

stdlib only. Two financial classification tasks with the label options written in the prompt:
FOMC sentence stance (HAWKISH / DOVISH / NEUTRAL) and Financial PhraseBank sentiment (NEGATIVE /
POSITIVE / NEUTRAL, all-agree subset). Each is a TaxSCQ item whose choices are the labels in the order
the prompt lists them. Outputs are the `text_output` column of the committed CSVs (columns true_label,
original_sent, text_output), read at pinned commits with `git show`. From each of 7 runs, 11 FOMC and
11 sentiment rows are drawn with a fixed seed (22 a run, 154 cases)."""
import csv, io, json, os, random, subprocess

SEED = 20261217
PREFIX = "gtfintechlab__zero-shot-finance"
HERE = os.path.dirname(os.path.abspath(__file__))
N_PER_TASK = 11

ORIG = ("gtfintechlab/zero-shot-finance", "/work/.mirror/gtfintechlab+zero-shot-finance/repo",
        "d8a6aad6db29eb7f85f73a50d1dc06d08b77bc91")
FORK = ("mika-okamoto/zero-shot-finance", "/work/.mirror/mika-okamoto+zero-shot-finance/repo",
        "bfa919e869f941dc12cd34b62e5e1c5fe047ba9b")

FOMC_DIR = "fomc_communication/data/llm_prompt_outputs/"
SENT_DIR = "sentiment_analysis/data/llm_prompt_outputs/"

# task -> (choices in prompt order, label id -> choice index)
# FOMC labels: 0 dovish, 1 hawkish, 2 neutral (fomc_communication/code/generative_llm_res.py decode)
# FPB labels: 0 positive, 1 negative, 2 neutral (sentiment_analysis/data/create_train_test_data.py encode)
TASKS = {
    "fomc": (["HAWKISH", "DOVISH", "NEUTRAL"], {0: 1, 1: 0, 2: 2}),
    "sentiment": (["NEGATIVE", "POSITIVE", "NEUTRAL"], {0: 1, 1: 0, 2: 2}),
}

FOMC_INSTR = ("Discard all the previous instructions. Behave like you are an expert sentence classifier. Classify the "
              "following sentence from FOMC into 'HAWKISH', 'DOVISH', or 'NEUTRAL' class. Label 'HAWKISH' if it is "
              "corresponding to tightening of the monetary policy, 'DOVISH' if it is corresponding to easing of the "
              "monetary policy, or 'NEUTRAL' if the stance is neutral.")
SENT_INSTR = ("Discard all the previous instructions. Behave like you are an expert sentence sentiment classifier. "
              "Classify the following sentence into 'NEGATIVE', 'POSITIVE', or 'NEUTRAL' class. Label 'NEGATIVE' if it "
              "is corresponding to negative sentiment, 'POSITIVE' if it is corresponding to positive sentiment, or "
              "'NEUTRAL' if the sentiment is neutral.")
TAIL = " Provide the label in the first line and provide a short explanation in the second line. The sentence: "
FEWSHOT_NOTE = ("[demonstrations not recorded in the repository: up to 3 training sentences per class, drawn "
                "at random (no fixed seed) from the seed's training split, each written as "
                "'Sentence: <text>\\nLabel: <label>\\n\\n']")

# dolly-v2 InstructionTextGenerationPipeline (instruct_pipeline_dolly.py) and h2oGPT (h2oai_pipeline.py) templates
DOLLY = ("Below is an instruction that describes a task. Write a response that appropriately completes the request.\n"
         "### Instruction:\n{p}\n### Response:\n")
H2O = "<human>: {p}\n<bot>:"

# run -> (model, kind, shots, wrapper, note, {task: [(repo, path, seed)]})
RUNS = {
    "chatgpt-2023": ("gpt-3.5-turbo", "api", "zero-shot", None, "2023-05 run (chatgpt_api_run.py)", {
        "fomc": [(ORIG, FOMC_DIR + "chatgpt_lab-manual-split-combine_%s.csv" % s, s.split("_")[0])
                 for s in ("5768_11_05_2023_32", "78516_11_05_2023_31", "944601_11_05_2023_34")],
        "sentiment": [(ORIG, SENT_DIR + "chatgpt_FPB-sentiment-analysis-allagree_%s.csv" % s, s.split("_")[0])
                      for s in ("5768_13_05_2023_32", "78516_13_05_2023_28", "944601_13_05_2023_33")]}),
    "gpt4-2023": ("gpt-4", "api", "zero-shot", None, "2023-07 run (gpt_4_api_run.py)", {
        "fomc": [(ORIG, FOMC_DIR + "gpt4_lab-manual-split-combine_%s.csv" % s, s.split("_")[0])
                 for s in ("5768_06_07_2023_75", "78516_06_07_2023_77", "944601_06_07_2023_79")],
        "sentiment": [(ORIG, SENT_DIR + "gpt4_FPB-sentiment-analysis-allagree_%s.csv" % s, s.split("_")[0])
                      for s in ("5768_07_07_2023_76", "78516_07_07_2023_70", "944601_07_07_2023_65")]}),
    "dolly": ("databricks/dolly-v2-12b", "chat", "zero-shot", DOLLY, "dolly_run.py, sampling (top_p 0.92), 256 new tokens", {
        "fomc": [(ORIG, FOMC_DIR + "dolly_%s.csv" % s, s.split("_")[0])
                 for s in ("5768_12_05_2023_50", "78516_12_05_2023_48", "944601_12_05_2023_48")],
        "sentiment": [(ORIG, SENT_DIR + "dolly_%s.csv" % s, s.split("_")[0])
                      for s in ("5768_15_05_2023_50", "78516_15_05_2023_55", "944601_15_05_2023_52")]}),
    "h2o": ("h2oai/h2ogpt-oasst1-512-12b", "chat", "zero-shot", H2O, "h2o_run.py, max_length 512", {
        "fomc": [(ORIG, FOMC_DIR + "h2o_%s.csv" % s, s.split("_")[0])
                 for s in ("5768_12_05_2023_244", "78516_12_05_2023_253", "944601_12_05_2023_238")],
        "sentiment": [(ORIG, SENT_DIR + "h2o_%s.csv" % s, s.split("_")[0])
                      for s in ("5768_15_05_2023_413", "78516_15_05_2023_413", "944601_15_05_2023_412")]}),
    "falcon": ("tiiuae/falcon-7b-instruct", "chat", "zero-shot", None, "falcon_run.py, raw prompt, sampling top_k 10", {
        "fomc": [(ORIG, FOMC_DIR + "falcon_7b_%s.csv" % s, s.split("_")[0])
                 for s in ("5768_26_05_2023_27", "78516_26_05_2023_29", "944601_26_05_2023_28")],
        "sentiment": [(ORIG, SENT_DIR + "falcon_7b_%s.csv" % s, s.split("_")[0])
                      for s in ("5768_15_07_2023_17", "78516_15_07_2023_16", "944601_15_07_2023_18")]}),
    "chatgpt-2024": ("gpt-3.5-turbo", "api", "zero-shot", None, "2024-02 replication in the fork", {
        "fomc": [(FORK, FOMC_DIR + "chatgpt_lab-manual-split-combine_%s.csv" % s, s.split("_")[0])
                 for s in ("5768_24_02_2024_7", "78516_24_02_2024_5", "944601_24_02_2024_1")],
        "sentiment": [(FORK, SENT_DIR + "gpt4_FPB-sentiment-analysis-allagree_%s.csv" % s, s.split("_")[0])
                      for s in ("5768_17_02_2024_3", "78516_17_02_2024_17", "944601_17_02_2024_5")]}),
    "chatgpt-fewshot": ("gpt-3.5-turbo", "api", "few-shot", None, "2024-03/04 few-shot runs in the fork", {
        "fomc": [(FORK, FOMC_DIR + "few_shot_3_chatgpt_lab-manual-split-combine_5768_07_04_2024.csv", "5768")],
        "sentiment": [(FORK, SENT_DIR + "few_shot_3_chatgpt_FPB-sentiment-analysis-allagree_%s_05_03_2024.csv" % s, s)
                      for s in ("5768", "78516", "944601")]}),
}


def git(repo, path):
    _, gitdir, commit = repo
    return subprocess.run(["git", "--git-dir", gitdir, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def rows(repo, path):
    return list(csv.DictReader(io.StringIO(git(repo, path), newline="")))


def query(task, wrapper, shots, sentence):
    instr = FOMC_INSTR if task == "fomc" else SENT_INSTR
    if shots == "few-shot":
        p = instr + " Examples:\n" + FEWSHOT_NOTE + "\n\n" + TAIL.lstrip(" ") + sentence
    else:
        p = instr + TAIL + sentence
    return wrapper.format(p=p) if wrapper else p


def main():
    rng = random.Random(SEED)
    drawn = []
    for run in sorted(RUNS):
        model, kind, shots, wrapper, note, files = RUNS[run]
        for task in ("fomc", "sentiment"):
            choices, label_to_idx = TASKS[task]
            pool = []
            for repo, path, seed in files[task]:
                for n, r in enumerate(rows(repo, path)):
                    pool.append((repo, path, seed, n, r))
            for repo, path, seed, n, r in rng.sample(pool, N_PER_TASK):
                gold = label_to_idx[int(r["true_label"])]
                rec = {"id": "%s:%s:seed%s:row%d" % (task, "FOMC" if task == "fomc" else "FPB-allagree", seed, n),
                       "query": query(task, wrapper, shots, r["original_sent"]),
                       "choices": choices, "gold": gold, "answer": choices[gold]}
                drawn.append(("TaxSCQ", rec, r["text_output"], {
                    "repo": repo[0], "commit": repo[2], "path": path,
                    "item": "%s seed %s row %d (true_label %s)" % (task, seed, n, r["true_label"]),
                    "model": model, "model_kind": kind, "shots": shots, "lang": "en", "run": "%s: %s" % (run, note)}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for i, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, i), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    print(len(RUNS), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
