"""Draw the M3RG-IITD/MaScQA cases (stdlib only, re-runnable): writes drawn.jsonl next to this file.

Reads the fetched snapshot with `git --git-dir SNAP show COMMIT:PATH` at pinned commits:
- RAW_COMMIT 85db95d (2023-11-09): gate_*/N_<type>.txt (the question text) and the raw replies
  chatgpt_N_<type>.txt, detailed_chatgpt_..., gpt4_..., detailed_gpt4_... (removed from the tree later
  and zipped into raw_qa.zip, whose blob is absent from the snapshot);
- XLSX_COMMIT f524889 (HEAD): notebooks/all_QA.xlsx (gold 'Correct Answer', the authors' scored
  readings per model, and the CoT replies of Llama-3-8B and Phi-3-mini as lists of lines).
"""

from __future__ import annotations

import ast
import html
import io
import json
import random
import re
import subprocess
import zipfile
from pathlib import Path

SNAP = "/work/.mirror/M3RG-IITD+MaScQA/repo"
REPO = "M3RG-IITD/MaScQA"
RAW_COMMIT = "85db95d7042408947872d79768c620fec3f7de61"
XLSX_COMMIT = "f524889b9cbcec15f4d6216a3c66f9e6c57f0712"
XLSX = "notebooks/all_QA.xlsx"
SEED = 20261215
PREFIX = "M3RG-IITD__MaScQA"
OUT = Path(__file__).resolve().parent / "drawn.jsonl"

# Instructions as described in the MaScQA paper (Zaki et al., Digital Discovery 2024); the repository
# itself holds no prompt code.
ZS = "Solve the following question. Write the correct answer inside a list at the end."
COT = ("Solve the following question with highly detailed step by step explanation. "
       "Write the correct answer inside a list at the end.")

# config: (model name, kind, shots, where the reply is, hint column, instruction or None)
CONFIGS = [
    ("gpt-3.5-turbo (ChatGPT, zero-shot)", "api", "zero-shot", ("raw", "chatgpt_"), "GPT3.5", ZS),
    ("gpt-3.5-turbo (ChatGPT, CoT)", "api", "cot", ("raw", "detailed_chatgpt_"), "GPT3.5-COT", COT),
    ("gpt-4 (zero-shot)", "api", "zero-shot", ("raw", "gpt4_"), "GPT4", ZS),
    ("gpt-4 (CoT)", "api", "cot", ("raw", "detailed_gpt4_"), "GPT4-COT", COT),
    ("Llama-3-8B (instruct, CoT)", "chat", "cot", ("xlsx", "detailed_llama3_8b"), "LLAMA3-8B", None),
    ("Phi-3-mini (CoT)", "chat", "cot", ("xlsx", "detailed_phi3_mini"), None, None),
]
PER_CONFIG = {"TaxSCQ": 14, "TaxCalc": 3}  # plus every usable multiple-answer item (TaxMCQ)


def git_show(commit: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", SNAP, "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout


def git_files(commit: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", SNAP, "ls-tree", "-r", "--name-only", commit],
                         check=True, capture_output=True, text=True).stdout
    return out.split("\n")


def read_sheet(blob: bytes) -> list[dict]:
    z = zipfile.ZipFile(io.BytesIO(blob))
    strings: list[str] = []
    if "xl/sharedStrings.xml" in z.namelist():
        xml = z.read("xl/sharedStrings.xml").decode("utf-8")
        strings = [html.unescape("".join(re.findall(r"<t[^>]*>(.*?)</t>", s, re.S)))
                   for s in re.findall(r"<si>(.*?)</si>", xml, re.S)]
    xml = z.read("xl/worksheets/sheet1.xml").decode("utf-8")
    rows = []
    for body in re.findall(r"<row[^>]*>(.*?)</row>", xml, re.S):
        row = {}
        for m in re.finditer(r'<c r="([A-Z]+)\d+"([^>]*?)(?:/>|>(.*?)</c>)', body, re.S):
            col, attrs, inner = m.group(1), m.group(2), m.group(3) or ""
            t = re.findall(r"<t[^>]*>(.*?)</t>", inner, re.S)
            v = re.findall(r"<v>(.*?)</v>", inner, re.S)
            if 't="s"' in attrs and v:
                val = strings[int(v[0])]
            elif t:
                val = html.unescape("".join(t))
            elif v:
                val = html.unescape(v[0])
            else:
                val = ""
            row[col] = val
        rows.append(row)
    header = rows[0]
    return [{header.get(k, k): v for k, v in r.items()} for r in rows[1:]]


def options(q: str) -> list[str] | None:
    """The four option texts: the last '(A)' and the '(B)', '(C)', '(D)' after it."""
    idx = [q.rfind("(A)")]
    if idx[0] < 0:
        return None
    for letter in "BCD":
        j = q.find(f"({letter})", idx[-1] + 3)
        if j < 0:
            return None
        idx.append(j)
    if q.find("(E)", idx[-1]) >= 0:
        return None
    parts = [q[idx[i] + 3:(idx[i + 1] if i < 3 else len(q))].strip() for i in range(4)]
    return parts if all(parts) else None


def exact_number(gold: str) -> float | None:
    g = gold.strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", g):
        return float(g)
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*(?:to|TO|T0|:)\s*(-?\d+(?:\.\d+)?)", g)
    if m and float(m.group(1)) == float(m.group(2)):
        return float(m.group(1))
    return None  # a range: left out


def main() -> None:
    rows = read_sheet(git_show(XLSX_COMMIT, XLSX))
    files = set(git_files(RAW_COMMIT))
    items = []
    for n, r in enumerate(rows):
        qid, qtype, gold = r["Question Info"], r["Question Type"], r["Correct Answer"].strip()
        kind, year, num = re.match(r"G-(XEC|META)-(\d+)-(.+)$", qid).groups()
        folder = f"gate_xec_{year}" if kind == "XEC" else f"gate_meta_{year}"
        num = num.split("-")[-1]
        cands = sorted(f for f in files if re.fullmatch(rf"{re.escape(folder)}/{re.escape(num)}_[a-z]+\.txt", f))
        if len(cands) != 1:
            continue
        base = cands[0].split("/")[1]
        if f"{folder}/{base[:-4]}.jpg" in files:
            continue  # the question has a figure the text-only prompt did not carry
        question = git_show(RAW_COMMIT, cands[0]).decode("utf-8")
        item = {"row": n, "qid": qid, "qtype": qtype, "gold": gold, "folder": folder, "base": base,
                "question": question, "topic": r.get("TOPIC", ""), "sheet": r}
        if qtype == "NUM":
            value = exact_number(gold)
            if value is None:
                continue
            item.update(task="TaxCalc", answer=int(value) if value.is_integer() else value)
        else:
            opts = options(question)
            if opts is None:
                continue
            letters = gold.replace(" ", "").split(",")
            if not all(l in "ABCD" and len(l) == 1 for l in letters):
                continue
            if len(letters) > 1:
                item.update(task="TaxMCQ", answer="".join(sorted(set(letters))), choices=opts)
            else:
                item.update(task="TaxSCQ", choices=opts, gold_index="ABCD".index(letters[0]))
        items.append(item)

    rng = random.Random(SEED)
    cases = []
    for model, mkind, shots, (where, key), hint_col, instruction in CONFIGS:
        def reply(it):
            if where == "raw":
                path = f"{it['folder']}/{key}{it['base']}"
                if path not in files:
                    return None, None
                return git_show(RAW_COMMIT, path).decode("utf-8"), (RAW_COMMIT, path, it["qid"])
            cell = it["sheet"].get(key, "")
            if not cell:
                return None, None
            text = "".join(ast.literal_eval(cell))
            return text, (XLSX_COMMIT, XLSX, f"{it['qid']} (row {it['row'] + 2}, column {key})")

        pool = {t: [it for it in items if it["task"] == t and reply(it)[0] is not None]
                for t in ("TaxSCQ", "TaxMCQ", "TaxCalc")}
        chosen = list(pool["TaxMCQ"])
        for t, k in PER_CONFIG.items():
            chosen += rng.sample(pool[t], k)
        for it in chosen:
            text, (commit, path, item_ref) = reply(it)
            query = (instruction + "\n" + it["question"]) if instruction else it["question"]
            record = {"id": it["qid"], "query": query}
            if it["task"] == "TaxSCQ":
                record.update(choices=it["choices"], gold=it["gold_index"],
                              answer=it["choices"][it["gold_index"]])
            else:
                record["answer"] = it["answer"]
            source = {"repo": REPO, "commit": commit, "path": path, "item": item_ref, "model": model,
                      "model_kind": mkind, "shots": shots, "lang": "en",
                      "question_path": f"{RAW_COMMIT[:7]}:{it['folder']}/{it['base']}",
                      "question_type": it["qtype"], "gold_as_written": it["gold"]}
            if instruction is None:
                source["prompt_note"] = "instruction not published; query holds the question text only"
            case = {"task": it["task"], "record": record, "output": text, "source": source}
            if hint_col:
                hv = it["sheet"].get(hint_col, "").strip()
                if hv:
                    case["hint"] = f"authors' scoresheet reading ({hint_col}): {hv}"
            cases.append(case)
    rng.shuffle(cases)
    with OUT.open("w", encoding="utf-8") as f:
        for i, case in enumerate(cases, 1):
            case = {"id": f"{PREFIX}-{i:04d}", **case}
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(cases), "cases ->", OUT)


if __name__ == "__main__":
    main()
