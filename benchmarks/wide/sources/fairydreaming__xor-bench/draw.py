#!/usr/bin/env python3
"""Draw xor-bench outputs (fairydreaming/xor-bench, results/<n>/<model>.log) into drawn.jsonl. stdlib only."""
import ast, json, os, random, re, subprocess, sys

GIT = "/work/.mirror/fairydreaming+xor-bench/repo"
COMMIT = "139d4d851a36585f45c4909bef422b1322037ca3"
REPO = "fairydreaming/xor-bench"
PREFIX = "fairydreaming__xor-bench"
SEED = 20261206
PER_MODEL = 10
HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = re.compile(r"^(\d+): (\d+\.\d\d) \(C: (\d+), I: (\d+), M: (\d+) A: (\d+)\)$")
CHOICES = ["True", "False"]

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def gold_of(quiz):
    """The quiz's value, computed as xor_bench.py computes correct_answer (XOR of the literals)."""
    values = dict(re.findall(r"^(x_\d+) = (True|False)$", quiz, re.M))
    formula = re.search(r"^Evaluate the boolean expression: (.*)$", quiz, re.M).group(1)
    result = False
    for lit in formula.split(" xor "):
        lit = lit.strip()
        neg = lit.startswith("not ")
        v = values[lit[4:] if neg else lit] == "True"
        result ^= (not v) if neg else v
    return result

def kind(model):
    if "o1-" in model:
        return "reasoning"
    if model.startswith(("openai-", "anthropic-", "google-gemini", "mistralai-mistral-large")):
        return "api"
    return "chat"

def main():
    files = [p for p in git("ls-tree", "-r", "--name-only", COMMIT, "results").decode().split() if p.endswith(".log")]
    pools = {}
    for p in sorted(files):
        text = git("show", f"{COMMIT}:{p}").decode("utf-8")
        lines = text.split("\n")
        while lines and lines[-1] == "":
            lines.pop()
        summ = None
        if lines and SUMMARY.match(lines[-1]):
            summ = SUMMARY.match(lines[-1]).groups()
            lines.pop()
        starts = [i for i, l in enumerate(lines) if l.startswith("[{'role'")]
        n_correct = 0
        items = []
        for k, i in enumerate(starts):
            msgs = ast.literal_eval(lines[i])
            quiz = [m["content"] for m in msgs if m["role"] == "user"][-1]
            sysp = next((m["content"] for m in msgs if m["role"] == "system"), None)
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            out = "\n".join(lines[i + 1:end])
            g = gold_of(quiz)
            found = re.findall(r"<ANSWER>(.*?)</ANSWER>", out)
            if found and found[0].strip() == str(g):
                n_correct += 1
            items.append((k, sysp, quiz, out, g, found))
        if summ is None or int(summ[5]) != len(items) or int(summ[2]) != n_correct:
            print("skipped (summary does not match the rebuilt gold):", p, summ, len(items), n_correct, file=sys.stderr)
            continue
        model = os.path.basename(p)[:-4]
        for k, sysp, quiz, out, g, found in items:
            pools.setdefault(model, []).append((p, k, sysp, quiz, out, g, found))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(pools):
        pool = pools[model]
        for j in rng.sample(range(len(pool)), min(PER_MODEL, len(pool))):
            drawn.append((model, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (model, (p, k, sysp, quiz, out, g, found)) in enumerate(drawn, 1):
            gi = CHOICES.index(str(g))
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%d" % (p, k), "query": (sysp + "\n\n" + quiz) if sysp else quiz,
                              "choices": CHOICES, "gold": gi, "answer": CHOICES[gi]},
                   "output": out,
                   "source": {"repo": REPO, "commit": COMMIT, "path": p, "item": str(k), "model": model,
                              "model_kind": kind(model), "shots": "zero-shot", "lang": "en"},
                   "hint": "source regex (first <ANSWER> tag): " + (repr(found[0].strip()) if found else "none")}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print({m: len(v) for m, v in pools.items()}, len(drawn), file=sys.stderr)

if __name__ == "__main__":
    main()
