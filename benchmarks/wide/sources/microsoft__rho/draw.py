#!/usr/bin/env python3
"""Draw Rho-1 (microsoft/rho) evaluation outputs on GSM8K and MATH (minerva_math, 500 problems) into drawn.jsonl.

stdlib only. The outputs are the authors' own reproduced runs, shipped as rho-1/outputs.zip (read from the
commit that added it, afe2e8f). Four models: rho-math-1b-v0.1 and rho-math-7b-v0.1 (base models, few-shot CoT,
prompt type "cot") and rho-math-1b-interpreter-v0.1 and rho-math-7b-interpreter-v0.1 (SFT tool-integrated models,
prompt type "tora"), each on gsm8k and minerva_math. Prompts are rebuilt from the math-evaluation-harness
submodule at the commit pinned by afe2e8f (dcfa46a2): utils.load_prompt / construct_prompt and prompts/cot/*.md.
Only items whose gold is a plain number (commas removed) or a simple fraction are kept (TaxCalc). From each of the
8 runs 19 items are drawn with a fixed seed; all cases are shuffled and numbered."""
import io, json, os, random, re, subprocess, zipfile
from fractions import Fraction

RHO_GIT = "/work/.mirror/microsoft+rho/repo"
HARNESS_GIT = "/work/.mirror/ZubinGou+math-evaluation-harness/repo"
REPO = "microsoft/rho"
PREFIX = "microsoft__rho"
SEED = 20261215
RHO_COMMIT = "afe2e8f0332ae768fa1786d2233c1b9cfc4f0c16"      # "model release": adds rho-1/outputs.zip
HARNESS_COMMIT = "dcfa46a2e476a71dc46c957822808435d4e2c3cc"  # submodule commit pinned by RHO_COMMIT
ZIP_PATH = "rho-1/outputs.zip"
PER_RUN = 19
HERE = os.path.dirname(os.path.abspath(__file__))

# model -> (prompt type, model_kind, shots)
MODELS = {
    "rho-math-1b-v0.1": ("cot", "base", "few-shot"),
    "rho-math-7b-v0.1": ("cot", "base", "few-shot"),
    "rho-math-1b-interpreter-v0.1": ("tora", "domain", "zero-shot"),
    "rho-math-7b-interpreter-v0.1": ("tora", "domain", "zero-shot"),
}
DATASETS = ["gsm8k", "minerva_math"]


def git(gitdir, commit, path, binary=False):
    out = subprocess.run(["git", "--git-dir", gitdir, "show", "%s:%s" % (commit, path)],
                         check=True, capture_output=True).stdout
    return out if binary else out.decode("utf-8")


def demo_prompt(data_name):
    # utils.load_prompt: fp.read().strip() + "\n\n\n"
    return git(HARNESS_GIT, HARNESS_COMMIT, "prompts/cot/%s.md" % data_name).strip() + "\n\n\n"


def build_query(prompt_type, data_name, question):
    # utils.construct_prompt
    if prompt_type == "cot":
        if data_name == "minerva_math":
            context = "Problem:\n%s\nSolution:" % question
        else:
            context = "Question: %s\nAnswer:" % question
        return demo_prompt(data_name) + context
    if prompt_type == "tora":
        return "<|user|>\n%s\n<|assistant|>\n" % question
    raise ValueError(prompt_type)


def gold_number(gt):
    s = str(gt).strip()
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?|-?\d+(\.\d+)?", s):
        s = s.replace(",", "")
        return int(s) if re.fullmatch(r"-?\d+", s) else float(s)
    m = re.fullmatch(r"(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}", s)
    if m:
        f = Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) else 1)
        return int(f) if f.denominator == 1 else round(float(f), 6)
    return None


def main():
    zbytes = git(RHO_GIT, RHO_COMMIT, ZIP_PATH, binary=True)
    z = zipfile.ZipFile(io.BytesIO(zbytes))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(MODELS):
        ptype, kind, shots = MODELS[model]
        for data in DATASETS:
            member = "outputs/%s/%s/test_%s_-1_seed0_t0.0_s0_e-1.jsonl" % (model, data, ptype)
            rows = [json.loads(l) for l in z.read(member).decode("utf-8").splitlines() if l.strip()]
            pool = [r for r in rows if gold_number(r["gt"]) is not None and r["code"] and r["code"][0] is not None]
            for r in rng.sample(pool, PER_RUN):
                rec = {"id": "%s/test.jsonl#%s" % (data, r["idx"]),
                       "query": build_query(ptype, data, r["question"]),
                       "answer": gold_number(r["gt"])}
                src = {"repo": REPO, "commit": RHO_COMMIT, "path": "%s:%s" % (ZIP_PATH, member),
                       "item": "%s:%s" % (data, r["idx"]) + (":level%s" % r["level"] if "level" in r else ""),
                       "model": model, "model_kind": kind, "shots": shots, "lang": "en",
                       "prompt_source": "ZubinGou/math-evaluation-harness@%s utils.py construct_prompt, prompts/cot/%s.md"
                                        % (HARNESS_COMMIT, data)}
                hint = "pred=%s; score=%s" % (json.dumps(r["pred"][0], ensure_ascii=False), r["score"][0])
                drawn.append(("TaxCalc", rec, r["code"][0], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for n, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
