#!/usr/bin/env python3
"""Draw TempAnswerQA model responses committed in aauss/temporal-answer-qa into drawn.jsonl.

stdlib only. TempAnswerQA ("Time to Rethink Exact Match", EMNLP 2025 Findings) = numeric temporal questions
sampled from Test of Time (ToT, arithmetic split) and TempTabQA (TTQA, head and tail splits, questions over
Wikipedia infobox tables). Six instruction-tuned models, each run zero-shot and few-shot; one CSV a run
(dataset columns + `response`). Items whose gold is a plain number (years, months, days, a year) become
TaxCalc; items whose gold is a full calendar date become TaxRead (text = the table for TTQA, empty for ToT).
ToT items with several answer fields (X/Y/Z, H/M/S, day+time) and `<year> <era>` golds are left out.

Per model and prompting: TTQA 8 (zero-shot) or 7 (few-shot) items, one of them a date item, and ToT 5 items,
two of them date items; 25 cases a model, 150 in all; seed 20261214."""
import ast, csv, io, json, os, random, re, subprocess

GIT = "/work/.mirror/aauss+temporal-answer-qa/repo"
REPO = "aauss/temporal-answer-qa"
PREFIX = "aauss__temporal-answer-qa"
SEED = 20261214
COMMIT = "e28dc1ef9638391c2e25f4cfd607dad738174f34"  # HEAD, "Initial commit." 2025-09-15
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["Llama-3.1-8B-Instruct", "Llama-3.3-70B-Instruct", "Phi-4-mini-instruct", "Phi-4",
          "Qwen2.5-14B-Instruct", "Qwen2.5-7B-Instruct"]
PROMPTINGS = ["zero-shot", "few-shot"]
N_TTQA = {"zero-shot": 8, "few-shot": 7}
N_TTQA_DATE = 1
N_TOT, N_TOT_DATE = 5, 2

csv.field_size_limit(10 ** 9)


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def rows(path):
    return list(csv.DictReader(io.StringIO(git(path))))


def num(s):
    s = str(s).strip()
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    if re.fullmatch(r"-?\d+\.\d+", s):
        x = float(s)
        return int(x) if x == int(x) else x
    return None


def ttqa_item(r):
    """(task, gold) or None."""
    lab = r["label"].strip()
    if r["answer_format"] == "%B %d, %Y":
        return ("TaxRead", lab)
    n = num(lab)
    if n is not None and r["answer_format"] in ("<num_years>", "<num_months>", "<num_days>", "yyyy"):
        return ("TaxCalc", n)
    return None


DATE_RE = re.compile(r"\d\d/\d\d/\d{4}|\d{4}-\d\d-\d\d|\d\d-\d\d-\d{4}|[A-Za-z]+ \d{1,2}, \d{4}|\d{1,2} [A-Za-z]+, \d{4}")


def tot_item(r):
    d = ast.literal_eval(r["label"])
    if len(d) != 1:
        return None
    (key, v), = d.items()
    v = str(v).strip()
    if DATE_RE.fullmatch(v):
        return ("TaxRead", v)
    n = num(v)
    if n is not None and r["answer_format"] in ("<num_days>", "<num_months>", "<your_answer>", '"mm/dd/yyyy"'):
        return ("TaxCalc", n)
    return None


def ttqa_query(prompting, r, sys_zero, sys_few):
    user = "Table:\n\n%s\n%s\n\n\nA: " % (r["table_context"], r["question"])
    if prompting == "zero-shot":
        return sys_zero + "\n\n" + user + "Let\u2019s think step by step. "
    return sys_few + "\n\n" + user


def tot_query(r):
    # system = instruction, user = question without instruction, then the assistant turn opened with
    # 'JSON = {"explanation":' (continue_final_message): the output continues it.
    return r["instruction"] + "\n\n" + r["question_wo_instruct"] + "\n\n" + 'JSON = {"explanation":'


def main():
    rng = random.Random(SEED)
    sys_zero = git("data/prompts/ttqa_system_prompt_zero_shot.txt")
    sys_few = json.loads(git("data/prompts/ttqa_few_shot.json"))["messages"][0]["content"]
    drawn = []
    ref = {}
    for model in MODELS:
        for prompting in PROMPTINGS:
            # TTQA: head and tail pooled
            pool_date, pool_num = [], []
            for split in ("head", "tail"):
                path = "data/responses/ttqa_%s_%s_%s_add_generation_prompt.csv" % (split, model, prompting)
                rs = rows(path)
                key = [(r["table_id"], r["question"]) for r in rs]
                if ("ttqa", split) in ref:
                    assert ref[("ttqa", split)] == key, path
                ref[("ttqa", split)] = key
                for i, r in enumerate(rs):
                    it = ttqa_item(r)
                    if it is None or not r["response"].strip():
                        continue
                    (pool_date if it[0] == "TaxRead" else pool_num).append((split, i, r, it, path))
            picks = rng.sample(pool_date, N_TTQA_DATE) + rng.sample(pool_num, N_TTQA[prompting] - N_TTQA_DATE)
            for split, i, r, (task, gold), path in picks:
                rec = {"id": "TTQA-%s:%s:%s" % (split, r["table_id"], i), "query": ttqa_query(prompting, r, sys_zero, sys_few)}
                if task == "TaxRead":
                    rec.update({"text": r["table_context"], "answer": gold})
                else:
                    rec["answer"] = gold
                drawn.append((task, rec, r["response"], {
                    "repo": REPO, "commit": COMMIT, "path": path,
                    "item": "row %d (table_id %s, category %s)" % (i, r["table_id"], r["category"]),
                    "model": model, "model_kind": "chat",
                    "shots": "cot" if prompting == "zero-shot" else "few-shot", "lang": "en",
                    "dataset": "TTQA-" + split, "answer_format": r["answer_format"],
                    "answer_temporal_unit": r["answer_temporal_unit"]}))
            # ToT arithmetic
            path = "data/responses/tot_arithmetic_%s_%s_continue_final_message.csv" % (model, prompting)
            rs = rows(path)
            key = [r["question"] for r in rs]
            if "tot" in ref:
                assert ref["tot"] == key, path
            ref["tot"] = key
            pool_date, pool_num = [], []
            for i, r in enumerate(rs):
                it = tot_item(r)
                if it is None or not r["response"].strip():
                    continue
                (pool_date if it[0] == "TaxRead" else pool_num).append((i, r, it))
            picks = rng.sample(pool_date, N_TOT_DATE) + rng.sample(pool_num, N_TOT - N_TOT_DATE)
            for i, r, (task, gold) in picks:
                rec = {"id": "ToT-arithmetic:%d" % i, "query": tot_query(r)}
                if task == "TaxRead":
                    rec.update({"text": "", "answer": gold})
                else:
                    rec["answer"] = gold
                drawn.append((task, rec, r["response"], {
                    "repo": REPO, "commit": COMMIT, "path": path,
                    "item": "row %d (question_type %s)" % (i, r["question_type"]),
                    "model": model, "model_kind": "chat",
                    "shots": "zero-shot" if prompting == "zero-shot" else "few-shot", "lang": "en",
                    "dataset": "ToT-arithmetic", "answer_format": r["answer_format"],
                    "answer_temporal_unit": r["answer_temporal_unit"]}))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
