"""Draw the held-out outputs (ungraded, to /tmp/heldout_drawn.jsonl) from the dev corpus's own repositories.

Reads the fetched snapshots (bare git dirs, ``--mirror``), leaves out every item that a case in
tests/corpus/real_outputs*.jsonl already uses, and draws with a fixed seed. It writes the cases
without grades; the grades were written by hand afterwards (benchmarks/heldout/grades.tsv)
and merged by ``merge.py``. The parsing code is not imported here.

    python benchmarks/heldout/draw.py --mirror /work/.mirror --out /tmp/heldout_drawn.jsonl
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SEED = 20261204
DISC = ("FudanDISC/DISC-LawLLM", "f40d023488b4deb5eb369c85d4e9e8ebcde35c95")
DISC_GOLD = "f16b5da925a958762cf9ba4411135cc79a844b06"
LLADA = ("Aien68668/Implementation-and-Optimization-of-Large-Language-Diffusion-Models-for-Dialogue-Systems",
         "6b80868352095dfc6a5195e7fc7ae0af0573a0ad")
AGI = ("ruixiangcui/AGIEval", "faac3067bcb5bfb10da4f745e0279c8fb5fe79a0")
LLMEVAL = ("llmeval/llmeval-2", "5add6d8d3834f212bb2e6d76f29d65eb1cf1f8d8")
LETTERS = "ABCDE"
Case = dict[str, Any]


def show(mirror: Path, repo: tuple[str, str], path: str) -> str:
    git_dir = mirror / (repo[0].replace("/", "+")) / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{repo[1]}:{path}"],
                          capture_output=True, text=True, check=True).stdout


def dev_cases() -> list[Case]:
    cases = []
    for name in ("real_outputs.jsonl", "real_outputs_2.jsonl"):
        for line in (ROOT / "tests" / "corpus" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                cases.append(json.loads(line))
    return cases


def case(task: str, record: dict[str, Any], output: str, repo: tuple[str, str], path: str, item: str,
         model: str, shots: str) -> Case:
    return {"task": task, "record": record, "output": output,
            "source": {"repo": repo[0], "path": path, "commit": repo[1], "item": item, "model": model,
                       "shots": shots}}


DISC_MODELS = ["Baichuan-13b-Chat", "ChatGLM", "ChatLaw", "Chinese-Alpaca2", "DISC-LawLLM", "GPT-3.5-turbo",
               "LawGPT", "Lawyer-LLaMa", "LexiLaw"]


def disc_query(multi: bool, question: str, options: list[str]) -> str:
    kind = "多项" if multi else "单项"
    opts = "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(options))
    return f"以下是一道{kind}选择题，不需要做任何分析和解释，直接输出答案选项。\n\n问题：{question}\n{opts}\n答案："


def disc_gold(mirror: Path, multi: bool, subset: str) -> dict[str, str]:
    name = f"eval/datasets/objective/mcq_{'mult' if multi else 'sing'}_{subset}.csv"
    golds: dict[str, set[str]] = {}
    for row in csv.DictReader(io.StringIO(show(mirror, (DISC[0], DISC_GOLD), name))):
        golds.setdefault(row["input"], set()).add(row["output"].strip())
    return {q: next(iter(g)) for q, g in golds.items() if len(g) == 1}


def draw_disc(mirror: Path, rng: random.Random, used_ids: set[str], used_questions: set[str]) -> list[Case]:
    out: list[Case] = []
    # per model: one multi/pae (never drawn before), one other multi, three single from distinct subsets
    for model in DISC_MODELS:
        plan = [(True, "pae"), (True, rng.choice(["cpa", "ungee", "nje"]))]
        plan += [(False, s) for s in rng.sample(["cpa", "pae", "pfe", "lbk", "ungee", "nje"], 3)]
        for multi, subset in plan:
            kind = "multi" if multi else "single"
            path = f"eval/stats/objective/{model}/{kind}/{subset}_results.csv"
            rows = list(csv.DictReader(io.StringIO(show(mirror, DISC, path))))
            gold = disc_gold(mirror, multi, subset)
            pool = []
            for i, row in enumerate(rows):
                rid = f"disc-{'mult' if multi else 'sing'}-{subset}-{i}"
                options = [row[x] for x in LETTERS if row.get(x)]
                answer = gold.get(row["input"], "")
                if rid in used_ids or row["input"] in used_questions or not answer or len(options) < 2:
                    continue
                if not multi and (len(answer) != 1 or answer not in LETTERS[: len(options)]):
                    continue
                if multi and not set(answer) <= set(LETTERS[: len(options)]):
                    continue
                pool.append((i, rid, row, options, answer))
            i, rid, row, options, answer = rng.choice(pool)
            used_questions.add(row["input"])
            record: dict[str, Any] = {"id": rid, "query": disc_query(multi, row["input"], options)}
            if multi:
                record["answer"] = "".join(sorted(answer))
                task = "TaxMCQ"
            else:
                g = LETTERS.index(answer)
                record.update(answer=options[g], choices=options, gold=g)
                task = "TaxSCQ"
            item = f"row {i} (mcq_{'mult' if multi else 'sing'}_{subset})"
            out.append(case(task, record, row["model_output"], DISC, path, item, model, "few-shot"))
    return out


LLADA_PROMPT = ("Given the following multiple choice question, please provide a detailed step-by-step reasoning "
                "process.\nProblem: {p}\nExplain each step clearly and logically, showing all necessary "
                "calculations.\nAt the end, only output the final answer inside LaTeX \\boxed{{}}.\nThe final "
                "answer must be a symbol.\nDo not include the text or explanation after the letter (e.g., do not "
                "output \\boxed{{A. 3/4}}, only \\boxed{{A}}).\nDo not add any extra text after the boxed answer.\n")
LLADA_MATH = ("Given the following math problem, please provide a detailed step-by-step reasoning process.\n"
              "Problem: {p}\nExplain each step clearly and logically, showing all necessary calculations.\n"
              "At the end, put your final answer inside LaTeX \\boxed{{}} notation.\nMake sure the final boxed "
              "answer is explicit and unambiguous.\nDo not add any extra text after the boxed answer.\n")
LLADA_MODEL = "LLaDA-8B (local checkpoint, raw prompt without chat template)"


def draw_llada(mirror: Path, rng: random.Random, used_ids: set[str]) -> list[Case]:
    out: list[Case] = []
    path = "out/LLDA_cmmlu1_test_nothink.res"
    data = json.loads(show(mirror, LLADA, path))
    pool = [i for i in range(len(data)) if f"llada-cmmlu1-{i}" not in used_ids]
    for i in sorted(rng.sample(pool, 36)):
        d = data[i]
        lines = d["problem"].split("\n")
        opts = [ln for ln in lines if re.match(r"^[A-D]\. ", ln)]
        if len(opts) != 4 or lines[-4:] != opts:
            continue
        query = LLADA_PROMPT.format(p=d["problem"])
        assert d["output"].startswith(query.rstrip("\n")), i
        choices = [o[3:] for o in opts]
        g = LETTERS.index(d["ground_truth"].strip())
        record = {"id": f"llada-cmmlu1-{i}", "query": query, "answer": choices[g], "choices": choices, "gold": g}
        out.append(case("TaxSCQ", record, d["generated_answer"], LLADA, path,
                        f"index {i} (field generated_answer)", LLADA_MODEL, "zero-shot"))
    path = "out/LLDA_gsm8k_test_nothink.res"
    data = json.loads(show(mirror, LLADA, path))
    for i in sorted(rng.sample(range(len(data)), 10)):
        d = data[i]
        query = LLADA_MATH.format(p=d["problem"])
        assert d["output"].startswith(query.rstrip("\n")), i
        gold = float(d["ground_truth"].replace(",", ""))
        record = {"id": f"llada-gsm8k-{i}", "query": query, "answer": int(gold) if gold.is_integer() else gold}
        out.append(case("TaxCalc", record, d["generated_answer"], LLADA, path,
                        f"index {i} (field generated_answer)", LLADA_MODEL, "zero-shot"))
    return out


def agi_options(options: list[str]) -> list[str] | None:
    text = "\t".join(options)
    parts = re.split(r"\(?([A-E])[\)\.．]\s*", text)
    if len(parts) < 3 or parts[0].strip():
        return None
    letters, texts = parts[1::2], [t.strip() for t in parts[2::2]]
    if "".join(letters) != LETTERS[: len(letters)] or not all(texts):
        return None
    return texts


def agi_query(context: str) -> str:
    header, _, rest = context.partition("\n")
    last = rest[rest.rfind("问题 "):] if "问题 " in rest else rest
    return f"{header}\n{last}"


def draw_agieval(mirror: Path, rng: random.Random, used_ids: set[str]) -> list[Case]:
    out: list[Case] = []
    plan = [("geography", "scq", 8), ("biology", "scq", 6), ("chemistry", "scq", 6), ("physics", "scq", 5),
            ("physics", "mcq", 8), ("mathqa", "scq", 6), ("mathcloze", "calc", 10)]
    for subset, kind, k in plan:
        path = f"output/davinci-003/few_shot/gaokao/{subset}_samples.0.jsonl"
        outputs = [json.loads(ln) for ln in show(mirror, AGI, path).splitlines() if ln.strip()]
        golds = [json.loads(ln) for ln in show(mirror, AGI, f"data/gaokao/splits/test/{subset}.jsonl").splitlines()
                 if ln.strip()]
        pool = []
        for o in outputs:
            i = o["line_idx"]
            rid = f"agieval-gaokao-{subset}-{i}"
            g = golds[i]
            if rid in used_ids:
                continue
            record: dict[str, Any] = {"id": rid, "query": agi_query(o["context"])}
            if kind == "calc":
                plain = str(g["answer"]).replace("$", "").strip().rstrip(".").strip()
                if not re.fullmatch(r"-?\d+(\.\d+)?", plain):
                    continue
                num = float(plain)
                record["answer"] = int(num) if num.is_integer() else num
                task = "TaxCalc"
            else:
                choices = agi_options(g["options"] or [])
                label = g["label"]
                if choices is None:
                    continue
                if kind == "mcq":
                    if not isinstance(label, list) or len(label) < 2:
                        continue
                    record["answer"] = "".join(sorted(label))
                    task = "TaxMCQ"
                else:
                    if not isinstance(label, str) or label not in LETTERS[: len(choices)]:
                        continue
                    gi = LETTERS.index(label)
                    record.update(answer=choices[gi], choices=choices, gold=gi)
                    task = "TaxSCQ"
            pool.append(case(task, record, o["choices"][0]["text"], AGI, path, f"line_idx {i}", "text-davinci-003",
                             "few-shot"))
        out.extend(rng.sample(pool, k))
    return out


LLMEVAL_ITEMS: dict[str, tuple[str, str, int]] = {
    # question -> (task, gold: letter(s) or number, how many outputs to draw)
    "Economics_2": ("TaxSCQ", "C", 3), "Economics_4": ("TaxSCQ", "B", 3), "Economics_17": ("TaxSCQ", "A", 3),
    "Computer_Science_33": ("TaxSCQ", "A", 2), "Computer_Science_34": ("TaxSCQ", "C", 2),
    "Computer_Science_36": ("TaxSCQ", "C", 2), "Computer_Science_39": ("TaxSCQ", "D", 2),
    "Law_4": ("TaxSCQ", "B", 2), "Law_18": ("TaxSCQ", "C", 2), "Mathematics_10": ("TaxSCQ", "C", 2),
    "Medicine_15": ("TaxSCQ", "C", 2), "Medicine_25": ("TaxSCQ", "D", 2), "Social_Science_9": ("TaxSCQ", "C", 2),
    "Law_13": ("TaxMCQ", "ABCD", 2), "Law_16": ("TaxMCQ", "ABD", 2), "Law_33": ("TaxMCQ", "AC", 2),
    "Law_34": ("TaxMCQ", "BD", 2), "Law_35": ("TaxMCQ", "AB", 2), "Law_37": ("TaxMCQ", "BD", 2),
    "Medicine_6": ("TaxMCQ", "AC", 2),
    "Computer_Science_29": ("TaxCalc", "11", 3), "Mathematics_16": ("TaxCalc", "4", 3),
    "Social_Science_19": ("TaxCalc", "1", 2),
}


def llmeval_choices(prompt: str) -> list[str] | None:
    """The option texts after 'A.'/'a)' style labels, in order; None when they do not read cleanly."""
    marks = list(re.finditer(r"(?:(?<=[\s，,：:？?。）)])|^)([A-Ea-e])(?:[\.．、\)）]|\s)\s*", prompt))
    start = [m for m in marks if m.group(1).upper() == "A"]
    if not start:
        return None
    seq = [m for m in marks if m.start() >= start[-1].start()]
    picked = []
    for m in seq:
        if m.group(1).upper() == LETTERS[len(picked)]:
            picked.append(m)
        if len(picked) == 5:
            break
    texts = []
    for j, m in enumerate(picked):
        end = picked[j + 1].start() if j + 1 < len(picked) else len(prompt)
        texts.append(prompt[m.end():end].strip().rstrip("，,").strip())
    return texts if len(texts) >= 2 and all(texts) else None


def draw_llmeval(mirror: Path, rng: random.Random, used_questions: set[str]) -> list[Case]:
    out: list[Case] = []
    files: dict[str, list[dict[str, Any]]] = {}
    for q, (task, gold, k) in LLMEVAL_ITEMS.items():
        assert q not in used_questions, q
        subject = q.rsplit("_", 1)[0]
        path = f"results/human-score/{subject}_data.json"
        if path not in files:
            files[path] = json.loads(show(mirror, LLMEVAL, path))
        rows = [(i, r) for i, r in enumerate(files[path]) if r["question_uuid"] == q]
        for i, r in sorted(rng.sample(rows, k), key=lambda x: x[0]):
            prompt = r["dialog"][0]["content"]
            record: dict[str, Any] = {"id": f"llmeval2-{q}", "query": prompt}
            if task == "TaxCalc":
                record["answer"] = int(gold)
            elif task == "TaxMCQ":
                record["answer"] = gold
            else:
                choices = llmeval_choices(prompt)
                if choices is None or LETTERS.index(gold) >= len(choices):
                    print("skip (options do not read):", r["dialog_uuid"])
                    continue
                gi = LETTERS.index(gold)
                record.update(answer=choices[gi], choices=choices, gold=gi)
            out.append(case(task, record, r["dialog"][1]["content"], LLMEVAL, path,
                            f"{r['dialog_uuid']} (array index {i})", r["llm_name"], "zero-shot"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/heldout_drawn.jsonl"))
    args = parser.parse_args()
    dev = dev_cases()
    used_ids = {c["record"]["id"] for c in dev}
    used_questions = {m.group(1) for c in dev if c["source"]["repo"] == DISC[0]
                      for m in [re.search(r"问题：(.*?)\n+A\. ", c["record"]["query"], re.S)] if m}
    used_llmeval = {c["record"]["id"].removeprefix("llmeval2-") for c in dev if c["source"]["repo"] == LLMEVAL[0]}
    rng = random.Random(SEED)
    cases = draw_disc(args.mirror, rng, used_ids, used_questions)
    cases += draw_llada(args.mirror, rng, used_ids)
    cases += draw_agieval(args.mirror, rng, used_ids)
    cases += draw_llmeval(args.mirror, rng, used_llmeval)
    with args.out.open("w", encoding="utf-8") as fh:
        for n, c in enumerate(cases, 1):
            fh.write(json.dumps({"id": f"held3-{n:04d}", **c}, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()
