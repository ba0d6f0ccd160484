#!/usr/bin/env python3
"""Draw PULSE-EVAL MedQA-Mainland (zh) and MedQA-USMLE (en) predictions of 12 models. stdlib only."""
import json, random, subprocess, os, re

GIT = "/work/.mirror/openmedlab+PULSE-EVAL/repo"
COMMIT = "92d70aa6c0ff3b6f4ce2cc605604371846725e4f"
REPO = "openmedlab/PULSE-EVAL"
PER = 8   # per model per dataset
SEED = 20261206
MODELS = {"Baichuan2": "chat", "BenTsao": "domain", "BianQue2": "domain", "ChatGLM3": "chat", "ChatGPT": "api",
          "DoctorGLM": "domain", "GPT-4": "api", "HuatuoGPT2": "domain", "MING": "domain", "PULSE-OS": "domain",
          "PULSE-Pro": "domain", "QiZhenGPT": "domain"}
DATASETS = [("MedQA-Mainland", "zh"), ("MedQA-USMLE", "en")]
OPT = re.compile(r"^([A-J])[:：]\s*(.*)$")

def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", f"{COMMIT}:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")

def parse(q, ref):
    letters, choices = [], []
    for line in q.split("\n"):
        m = OPT.match(line.strip())
        if m:
            letters.append(m.group(1)); choices.append(m.group(2).strip())
    if not letters or letters != [chr(65 + i) for i in range(len(letters))]:
        return None
    m = OPT.match(ref.strip())
    if not m or m.group(1) not in letters:
        return None
    g = letters.index(m.group(1))
    # the reference text must agree with the option text
    if m.group(2).strip() and m.group(2).strip() != choices[g]:
        return None
    return choices, g

def main():
    rng = random.Random(SEED)
    cases, skipped = [], 0
    for model, kind in MODELS.items():
        for ds, lang in DATASETS:
            path = f"eval/predicted/{model}/{ds}.jsonl"
            rows = [json.loads(l) for l in show(path).splitlines() if l.strip()]
            order = list(range(len(rows)))
            rng.shuffle(order)
            got = 0
            for i in order:
                if got == PER:
                    break
                r = rows[i]
                p = parse(r["question"], r["reference_answer"])
                if p is None:
                    skipped += 1
                    continue
                choices, g = p
                rec = {"id": f"{ds}-{i}", "query": r["question"], "choices": choices, "gold": g, "answer": choices[g]}
                cases.append({"task": "TaxSCQ", "record": rec, "output": r["predict_answer"],
                              "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": i, "model": model,
                                         "model_kind": kind, "shots": "zero-shot", "lang": lang}})
                got += 1
    for n, c in enumerate(cases, 1):
        c["id"] = f"openmedlab__PULSE-EVAL-{n:04d}"
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps({"id": c["id"], "task": c["task"], "record": c["record"], "output": c["output"],
                                "source": c["source"]}, ensure_ascii=False) + "\n")
    print(len(cases), "cases; skipped while drawing (unparseable options/gold):", skipped)

if __name__ == "__main__":
    main()
