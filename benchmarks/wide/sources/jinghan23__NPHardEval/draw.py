#!/usr/bin/env python3
"""Draw NPHardEval base-model generations (jinghan23/NPHardEval, a development fork of casmlab/NPHardEval)
into drawn.jsonl.

stdlib only. Reads the snapshot at the pinned commit fe4dd81 ("add results"): the 3-shot runs of 18
open base models on two P-class tasks, Edit Distance (EDP, `Results/edp_prompts13_3s/`) and Binary Search
(BSP, `Results/bsp_prompts123_3s/`), 100 instances each, one JSON list a model and task, records
`{"output": <raw vLLM completion>, "correctness": "[bool, message]"}` in instance order.

Both tasks become TaxCalc: EDP gold = the Levenshtein distance of the two strings (the repo's own
`compute_min_edit_distance` recurrence), BSP gold = the 0-based index of the target in the sorted array
(instances whose target occurs more than once are left out: two indices would be right). The prompt is
rebuilt exactly as `run/run_open_fewshot/run_p_EDP.py` / `run_p_BSP.py` at that commit build it: three
demonstrations of the instance's complexity level from `Data/Fewshot/FewshotExample/*_few_shots.json`,
each "Question: <question>\\nAnswer:\\n<demo output>\\n\\n", then "Question: <question>\\nAnswer:\\n".
Per model 4 EDP + 4 BSP instances are drawn with a fixed seed, then 6 models (drawn) get one more
case each; all cases are shuffled and numbered."""
import json, os, random, subprocess

GIT = "/work/.mirror/jinghan23+NPHardEval/repo"
REPO = "jinghan23/NPHardEval"
PREFIX = "jinghan23__NPHardEval"
SEED = 20261216
COMMIT = "fe4dd8103985f2dfa235c0982d8883697fb686fb"
HERE = os.path.dirname(os.path.abspath(__file__))
PER_TASK = 4
EXTRA = 6

MODELS = [  # (file stem, display name, kind)
    ("models--01-ai--Yi-34B", "01-ai/Yi-34B", "base"),
    ("models--01-ai--Yi-6B", "01-ai/Yi-6B", "base"),
    ("models--EleutherAI--llemma_34b", "EleutherAI/llemma_34b", "domain"),
    ("models--EleutherAI--llemma_7b", "EleutherAI/llemma_7b", "domain"),
    ("models--Qwen--Qwen-14B", "Qwen/Qwen-14B", "base"),
    ("models--Qwen--Qwen-7B", "Qwen/Qwen-7B", "base"),
    ("models--codellama--CodeLlama-13b-hf", "codellama/CodeLlama-13b-hf", "domain"),
    ("models--codellama--CodeLlama-7b-hf", "codellama/CodeLlama-7b-hf", "domain"),
    ("models--deepseek-ai--deepseek-llm-7b-base", "deepseek-ai/deepseek-llm-7b-base", "base"),
    ("models--huggyllama--llama-13b", "huggyllama/llama-13b", "base"),
    ("models--huggyllama--llama-30b", "huggyllama/llama-30b", "base"),
    ("models--huggyllama--llama-7b", "huggyllama/llama-7b", "base"),
    ("models--meta-llama--Llama-2-13b-hf", "meta-llama/Llama-2-13b-hf", "base"),
    ("models--meta-llama--Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf", "base"),
    ("models--mistralai--Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1", "base"),
    ("models--mosaicml--mpt-30b", "mosaicml/mpt-30b", "base"),
    ("models--mosaicml--mpt-7b", "mosaicml/mpt-7b", "base"),
    ("models--tiiuae--falcon-7b", "tiiuae/falcon-7b", "base"),
]

# prompts as in run/prompts.py at COMMIT (edpPrompt, bspPrompt)
EDP_Q = ("Find the minimum number of operations required to transform the first string \"{string_a}\" into the "
         "second string \"{string_b}\". The operations are insertion, deletion, and substitution of a single "
         "character, each requiring 1 edit operation.")
EDP_FMT = ("Enclose your output within <root></root> tags. Present your reasoning in <reasoning></reasoning> tags "
           "and the final minimum number of operations in <final_answer></final_answer> tags, like "
           "<final_answer>{'Operations': 'MINIMUM_NUMBER_OF_OPERATIONS'}</final_answer>.")
BSP_Q = "Find the position of the target value {target_value} in the sorted array. The index begins with 0. The array elements are: "
BSP_CONTENT = ("Please identify the position of the target value in the array. Offer a brief, step-by-step account "
               "of your search process. Aim for conciseness in your response.")
BSP_FMT = ("Your output should be enclosed in <root></root> tags. Include your search process in <reasoning></reasoning> "
           "tags and the final position of the target value in <final_answer></final_answer> tags, like "
           "<final_answer>{'Position': 'TARGET_POSITION'}</final_answer>.")


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def check_prompts():
    """The prompt strings above must be the ones in run/prompts.py at COMMIT."""
    src = git("run/prompts.py")
    for s in (EDP_FMT, BSP_CONTENT, BSP_FMT):
        assert json.dumps(s)[1:-1] in src or s in src, s[:40]
    assert 'transform the first string \\"{string_a}\\" into the second string \\"{string_b}\\"' in src
    assert BSP_Q in src
    for f in ("run/run_open_fewshot/run_p_EDP.py", "run/run_open_fewshot/run_p_BSP.py"):
        code = git(f)
        assert 'prompt_text = construct_fewshot_examples(examples, p) + "Question: "+ doc_to_text(q, p) + "\\nAnswer:\\n"' in code
        assert "[:3]" in code


def edp_text(d):
    return EDP_Q.format(string_a=d["string_a"], string_b=d["string_b"]) + " " + EDP_FMT + " "


def bsp_text(d):
    return (BSP_Q.format(target_value=d["target"]) + ", ".join(str(a) for a in d["array"]) + ". "
            + BSP_CONTENT + " " + BSP_FMT + " ")


def fewshot(examples, text):
    s = ""
    for ex in examples:
        s += "Question: " + text(ex["question"]) + "\nAnswer:\n" + str(ex["output"]) + "\n\n"
    return s


def levenshtein(a, b):
    m, n = len(a), len(b)
    dp = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0:
                dp[i][j] = j
            elif j == 0:
                dp[i][j] = i
            elif a[i - 1] == b[j - 1]:
                dp[i][j] = dp[i - 1][j - 1]
            else:
                dp[i][j] = 1 + min(dp[i - 1][j], dp[i][j - 1], dp[i - 1][j - 1])
    return dp[m][n]


def main():
    check_prompts()
    edp = json.loads(git("Data/Zeroshot/EDP/edp_instances.json"))
    bsp = json.loads(git("Data/Zeroshot/BSP/bsp_instances.json"))
    edp_fs = json.loads(git("Data/Fewshot/FewshotExample/EDP_few_shots.json"))
    bsp_fs = json.loads(git("Data/Fewshot/FewshotExample/BSP_few_shots.json"))
    assert len(edp) == len(bsp) == 100

    items = {"EDP": [], "BSP": []}
    for i, d in enumerate(edp):
        lvl = i // 10
        ex = [x for x in edp_fs if x["complexity_level"] == lvl + 1][:3]
        q = fewshot(ex, edp_text) + "Question: " + edp_text(d) + "\nAnswer:\n"
        items["EDP"].append((i, lvl, q, levenshtein(d["string_a"], d["string_b"])))
    for i, d in enumerate(bsp):
        lvl = i // 10
        d = {"array": sorted(d["array"]), "target": d["target"]}
        if d["array"].count(d["target"]) != 1:
            continue
        ex = [x for x in bsp_fs if x["complexity_level"] == lvl + 1][:3]
        q = fewshot(ex, bsp_text) + "Question: " + bsp_text(d) + "\nAnswer:\n"
        items["BSP"].append((i, lvl, q, d["array"].index(d["target"])))

    paths = {"EDP": "Results/edp_prompts13_3s/{}_edpResults_3shot_EDP_0.json",
             "BSP": "Results/bsp_prompts123_3s/{}_bspResults_BSP_0.json"}
    rng = random.Random(SEED)
    drawn = []
    outs = {}
    for stem, name, kind in MODELS:
        for task in ("EDP", "BSP"):
            path = paths[task].format(stem)
            recs = json.loads(git(path))
            assert len(recs) == 100
            outs[(stem, task)] = (path, recs)
    taken = set()
    plan = []
    for stem, name, kind in MODELS:
        for task in ("EDP", "BSP"):
            for it in rng.sample(items[task], PER_TASK):
                plan.append((stem, name, kind, task, it))
                taken.add((stem, task, it[0]))
    for stem, name, kind in rng.sample(MODELS, EXTRA):
        task = rng.choice(["EDP", "BSP"])
        pool = [it for it in items[task] if (stem, task, it[0]) not in taken]
        it = rng.choice(pool)
        plan.append((stem, name, kind, task, it))
        taken.add((stem, task, it[0]))
    for stem, name, kind, task, (i, lvl, q, gold) in plan:
        path, recs = outs[(stem, task)]
        r = recs[i]
        drawn.append(({"id": "%s/%s#%d" % ("Data/Zeroshot/%s" % task, task.lower() + "_instances.json", i),
                       "query": q, "answer": gold}, r["output"],
                      {"repo": REPO, "commit": COMMIT, "path": path, "item": "%s:%d:level%d" % (task, i, lvl + 1),
                       "model": name, "model_kind": kind, "shots": "few-shot", "lang": "en"},
                      "source check: %s (%s)" % (r["correctness"][0], r["correctness"][1])))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": "TaxCalc", "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(items["EDP"]), "EDP items;", len(items["BSP"]), "BSP items;", len(MODELS), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
