#!/usr/bin/env python3
"""Draw model outputs committed in open-thought/reasoning-gym-eval into drawn.jsonl.

stdlib only. Two parts of the snapshot:
- reasoninggym-paper-experiments/zero-shot/{easy,hard}/<model>_<date>/<category>/<dataset>.json: reasoning-gym
  datasets answered through OpenRouter by 11 models (3 completions a question, 1 for one run). From each model
  (easy and hard runs pooled) PER_MODEL cases are drawn from the datasets with a numeric gold (TaxCalc).
- reasoninggym-paper-experiments/math-evals/: Qwen2.5-Math-evaluation-style jsonl of Qwen2.5-3B-Instruct and of
  an RL-finetuned Qwen-2.5-3B (aime24, amc23, gsm8k: TaxCalc; aqua, sat_math: TaxSCQ), and results.json of two
  checkpoints of an RL-finetuned Llama-3.2-3B-Instruct on AIME 2024 and AMC 2023 (TaxCalc).
"""
import json, os, random, re, subprocess

GIT = "/work/.mirror/open-thought+reasoning-gym-eval/repo"
COMMIT = "5f09fecc342a25d693895b7304a9dec43b47f436"
REPO = "open-thought/reasoning-gym-eval"
PREFIX = "open-thought__reasoning-gym-eval"
SEED = 20261210
HERE = os.path.dirname(os.path.abspath(__file__))
ZS = "reasoninggym-paper-experiments/zero-shot/"
ME = "reasoninggym-paper-experiments/math-evals/"
PER_MODEL = 9

DATASETS = ["algebra/simple_equations", "algorithmic/count_primes", "algorithmic/letter_counting",
            "algorithmic/binary_alternation", "algorithmic/rotten_oranges", "arithmetic/basic_arithmetic",
            "arithmetic/chain_sum", "arithmetic/count_bits", "arithmetic/decimal_arithmetic",
            "arithmetic/decimal_chain_sum", "arithmetic/gcd", "arithmetic/lcm", "arithmetic/gsm_symbolic",
            "arithmetic/leg_counting", "arithmetic/products", "cognition/number_sequence",
            "cognition/rectangle_count", "games/maze", "geometry/simple_geometry", "graphs/largest_island",
            "logic/aiw", "logic/self_reference"]

KIND = {"anthropic_claude-3.5-sonnet": "api", "anthropic_claude-sonnet-4": "api",
        "deepseek_deepseek-r1": "reasoning", "google_gemma-3-27b-it": "chat",
        "meta-llama_llama-3.3-70b-instruct": "chat", "meta-llama_llama-4-maverick": "chat",
        "meta-llama_llama-4-scout": "chat", "mistralai_mistral-small-3.1-24b-instruct": "chat",
        "openai_o3-mini": "reasoning", "qwen_qwq-32b": "reasoning", "x-ai_grok-3-mini-beta": "reasoning"}

# reasoning_gym.utils.SYSTEM_PROMPTS["DeepSeekZero"] (reasoning-gym training prompt; see SOURCE.md)
DSZ = ("A conversation between User and Assistant. The user asks a question, and the Assistant solves it.\n"
       "The assistant first thinks about the reasoning process in the mind and then provides the user with the answer. "
       "The reasoning process and answer are enclosed within <think> </think> and <answer> </answer> tags, "
       "respectively, i.e., <think> reasoning process here </think>\n<answer>answer here</answer>\n"
       "Do not explain your reasoning inside the answer tags, provide only the final answer. When an example is "
       "provided, you should strictly follow the format of the output/answer in that example.\n")
QMATH = "Please reason step by step, and put your final answer within \\boxed{}."


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def show(path):
    return git("show", "%s:%s" % (COMMIT, path))


def ls(path, recursive=False):
    args = ["ls-tree", "--name-only"] + (["-r"] if recursive else []) + [COMMIT, path]
    return [x for x in git(*args).decode().split("\n") if x]


def num(s):
    x = float(str(s).replace(",", ""))
    return int(x) if x == int(x) else x


def zero_shot(rng):
    runs = {}
    for level in ("easy", "hard"):
        for d in ls(ZS + level + "/"):
            name = re.sub(r"_\d{8}_\d{6}$", "", os.path.basename(d))
            runs.setdefault(name, []).append((level, d))
    out = []
    for name in sorted(runs):
        used = set()
        while sum(1 for c in out if c[3]["model"] == name) < PER_MODEL:
            level, d = rng.choice(sorted(runs[name]))
            ds = rng.choice(DATASETS)
            path = "%s/%s.json" % (d, ds)
            try:
                data = json.loads(show(path))
            except subprocess.CalledProcessError:
                continue
            i = rng.randrange(len(data["results"]))
            if (path, i) in used:
                continue
            used.add((path, i))
            r = data["results"][i]
            j = rng.randrange(len(r["completions"]))
            c = r["completions"][j]
            if c.get("full_model_response") is None:
                continue
            rec = {"id": "%s#%d" % (path, i), "query": data["system_prompt"] + "\n" + r["question"],
                   "answer": num(r["expected_answer"])}
            out.append(("TaxCalc", rec, c["full_model_response"], {
                "repo": REPO, "commit": COMMIT, "path": path, "item": "%d:completion%d" % (i, j), "model": name,
                "model_kind": KIND[name], "shots": "zero-shot", "lang": "en"},
                "model_answer=%r score=%s" % (c.get("model_answer"), c.get("score"))))
    return out


def choices_of(q):
    m = re.search(r"Answer Choices:\s*(.*)$", q, re.S)
    parts = re.split(r"\(([A-E])\)\s*", m.group(1))
    letters, texts = parts[1::2], [t.strip() for t in parts[2::2]]
    assert letters == list("ABCDE")[:len(letters)], letters
    return texts


def qwen_evals(rng):
    out = []
    specs = [("Qwen/Qwen2.5-3B-Instruct", "Qwen2.5-3B-Instruct", "chat", "qwen25-math-cot", 11),
             ("starzmustdie/Qwen-2.5-3B-rlft", "Qwen-2.5-3B-rlft", "reasoning", "qwen25-rg-cot", 11)]
    for folder, model, kind, ptype, n in specs:
        pool = []
        for bench in ("aime24", "amc23", "gsm8k", "aqua", "sat_math"):
            mcq = bench in ("aqua", "sat_math")
            path = "%s%s/math_eval/%s/test_%s%s_-1_seed0_t0.0_s0_e-1.jsonl" % (ME, folder, bench, ptype, "-mcq" if mcq else "")
            for line in show(path).decode().split("\n"):
                if line.strip():
                    x = json.loads(line)
                    if mcq:  # items whose options are not written "(A) ... (B) ..." are left out
                        try:
                            if len(choices_of(x["question"])) <= "ABCDE".index(x["gt"]):
                                continue
                        except (AttributeError, AssertionError, ValueError):
                            continue
                    pool.append((bench, path, x))
        picks = []
        # spread over the benchmarks: 3 aime24, 2 amc23, 2 gsm8k, 2 aqua, 2 sat_math
        for bench, k in (("aime24", 3), ("amc23", 2), ("gsm8k", 2), ("aqua", 2), ("sat_math", 2)):
            sub = [p for p in pool if p[0] == bench]
            picks += rng.sample(sub, k)
        for bench, path, x in picks[:n]:
            q = x["question"]
            if ptype == "qwen25-math-cot":
                query = QMATH + "\n\n" + q
            else:
                query = DSZ + "\n" + q
            if bench in ("aqua", "sat_math"):
                ch = choices_of(q)
                g = "ABCDE".index(x["gt"])
                t, rec = "TaxSCQ", {"query": query, "choices": ch, "gold": g, "answer": ch[g]}
            else:
                t, rec = "TaxCalc", {"query": query, "answer": num(x["gt"])}
            rec = dict({"id": "%s#%d" % (path, x["idx"])}, **rec)
            out.append((t, rec, x["code"][0], {
                "repo": REPO, "commit": COMMIT, "path": path, "item": str(x["idx"]), "model": model,
                "model_kind": kind, "shots": "cot", "lang": "en"},
                "pred=%r score=%s" % (x["pred"][0], x["score"][0])))
    return out


def llama_evals(rng):
    out = []
    for step in ("step_400", "step_800"):
        files = [f for f in ls(ME + "llama-3b-instruct/" + step + "/", True) if f.endswith("results.json")]
        pool = []
        for f in sorted(files):
            data = json.loads(show(f))
            for cat in data["categories"]:
                for ds in cat["datasets"]:
                    for i, r in enumerate(ds["results"]):
                        pool.append((f, i, r))
        for f, i, r in rng.sample(pool, 5):
            j = rng.randrange(len(r["completions"]))
            c = r["completions"][j]
            rec = {"id": "%s#%d" % (f, i), "query": DSZ + "\n" + r["question"], "answer": num(r["expected_answer"])}
            out.append(("TaxCalc", rec, c["full_model_response"], {
                "repo": REPO, "commit": COMMIT, "path": f, "item": "%d:completion%d" % (i, j),
                "model": "llama-3.2-3b-instruct-rg-" + step.replace("_", ""), "model_kind": "reasoning",
                "shots": "cot", "lang": "en"},
                "model_answer=%r score=%s" % (c.get("model_answer"), c.get("score"))))
    return out


def main():
    rng = random.Random(SEED)
    drawn = zero_shot(rng) + qwen_evals(rng) + llama_evals(rng)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    models = sorted({d[3]["model"] for d in drawn})
    print(len(drawn), "cases;", len(models), "models")


if __name__ == "__main__":
    main()
