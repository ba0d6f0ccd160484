#!/usr/bin/env python3
"""Draw MMLU-Pro and GPQA-diamond model outputs committed in kuk/simple-evals-ru into drawn.jsonl.

stdlib only. Every file under data/results/mmlu/ (MMLU-Pro sample, 10 options) is one model run and
gives 4 cases; every file under data/results/gpqa/ (GPQA diamond, 4 options) gives 2 cases. Items are
drawn with a fixed seed among the records whose stored prompt (`instruction`) is exactly the prompt
rebuilt from the benchmark file at the pinned commit (so that `choices` and `gold` are those the model
saw). All are TaxSCQ."""
import json, os, random, subprocess

GIT = "/work/.mirror/kuk+simple-evals-ru/repo"
COMMIT = "5fb1507eafd70be92ff3379440c13ee5272963ce"
REPO = "kuk/simple-evals-ru"
PREFIX = "kuk__simple-evals-ru"
SEED = 20261209
PER_RUN = {"mmlu": 4, "gpqa": 2}
HERE = os.path.dirname(os.path.abspath(__file__))

# run id -> (model name as in simple/registry.py, model_kind)
MODELS = {
    "04_llama_3_1_8b": ("llama-3.1-8b", "chat"),
    "05_llama_3_3_70b": ("llama-3.3-70b", "chat"),
    "06_qwen_2_5_7b": ("qwen-2.5-7b", "chat"),
    "07_yandexgpt_4_lite": ("yandexgpt-4-lite", "api"),
    "08_gigachat_lite": ("gigachat-lite", "api"),
    "10_llama_3_1_8b": ("llama-3.1-8b:yandex", "chat"),
    "11_yandexgpt_4_pro": ("yandexgpt-4-pro", "api"),
    "12_gigachat_pro": ("gigachat-pro", "api"),
    "13_llama_3_3_70b": ("llama-3.3-70b:yandex", "chat"),
    "14_gigachat_max": ("gigachat-max", "api"),
    "15_qwen_2_5_72b": ("qwen-2.5-72b", "chat"),
    "16_deepseek_v3": ("deepseek-v3", "chat"),
    "17_yandexgpt_5_pro": ("yandexgpt-5-pro", "api"),
    "18_cotype_nano": ("cotype-nano", "chat"),
    "19_t_lite": ("t-lite-8b", "chat"),
    "20_t_pro": ("t-pro-32b", "chat"),
    "21_saiga": ("saiga-yandexgpt-8b", "chat"),
    "22_vikhr": ("vikhr-yandexgpt-8b", "chat"),
    "23_saiga": ("saiga-nemo-12b", "chat"),
    "24_ruadapt": ("ruadapt-qwen-32b", "chat"),
    "25_gigachat_lite": ("gigachat-2-lite", "api"),
    "26_gigachat_pro": ("gigachat-2-pro", "api"),
    "27_gigachat_max": ("gigachat-2-max", "api"),
    "28_qwen_2_5_32b": ("qwen-2.5-32b", "chat"),
    "29_ruadapt": ("ruadapt-qwen-pro-32b", "chat"),
    "30_yandexgpt_5_lite": ("yandexgpt-5-lite", "api"),
}


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def jsonl(path):
    return [json.loads(l) for l in git("show", "%s:%s" % (COMMIT, path)).decode().split("\n") if l.strip()]


def instruction(bench, question, options):
    letters = "ABCDEFGHIJ" if bench == "mmlu" else "ABCD"
    lines = ["%s) %s" % (l, options[l]) for l in letters[:len(options)]]
    return ("Answer the following multiple choice question. The last line of your response should be of the "
            "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of %s. Think step by step "
            "before answering.\n\n%s\n\n%s" % (letters, question, "\n".join(lines)))


def main():
    rng = random.Random(SEED)
    drawn = []
    for bench in ("mmlu", "gpqa"):
        items = {x["id"]: x for x in jsonl("data/benches/%s.jsonl" % bench)}
        files = sorted(f for f in git("ls-tree", "-r", "--name-only", COMMIT, "data/results/%s/" % bench)
                       .decode().split("\n") if f.endswith(".jsonl"))
        for f in files:
            run = os.path.basename(f)[:-len(".jsonl")]
            model, kind = MODELS[run]
            pool = []
            for i, r in enumerate(jsonl(f)):
                x = items.get(r["id"])
                if x is None or r["instruction"] != instruction(bench, x["question"], x["options"]):
                    continue
                pool.append((i, r, x))
            for i, r, x in rng.sample(pool, PER_RUN[bench]):
                letters = sorted(x["options"])
                choices = [x["options"][l] for l in letters]
                g = letters.index(x["target"])
                rec = {"id": "%s:%s" % (bench, x["id"]), "query": r["instruction"], "choices": choices,
                       "gold": g, "answer": choices[g]}
                drawn.append(("TaxSCQ", rec, r["answer"], {
                    "repo": REPO, "commit": COMMIT, "path": f, "item": "%d:%s" % (i, x["id"]),
                    "model": model, "model_kind": kind, "shots": "cot", "lang": "en",
                    "bench": "mmlu-pro" if bench == "mmlu" else "gpqa-diamond", "run": run},
                    "source pred (gemini-flash-1.5 extraction): %s; is_correct: %s" % (r["pred"], r["is_correct"])))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
