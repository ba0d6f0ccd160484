#!/usr/bin/env python3
"""Draw lineage-bench outputs (fairydreaming/lineage-bench, results/*.csv at the last commit that held
them) into drawn.jsonl. stdlib only."""
import csv, io, json, os, random, re, subprocess, sys
csv.field_size_limit(10**9)

GIT = "/work/.mirror/fairydreaming+lineage-bench/repo"
# results/ was removed from the repository in 82f9417d (Dec 2025); this is its parent, the last
# commit holding the result files.
COMMIT = "50a20eeee727bf89fb1f7b3a2e3b11fb30e06d04"
REPO = "fairydreaming/lineage-bench"
PREFIX = "fairydreaming__lineage-bench"
SEED = 20261206
PER_MODEL = 3
HERE = os.path.dirname(os.path.abspath(__file__))
REASONING = ["-r1", "r1-", "thinking", "o1", "o3", "o4", "qwq", "gpt-5", "gpt-oss", "grok-4", "deepseek-v3.2-speciale",
             "kimi-k1.5", "ring-1t", "intellect-3", "olmo-3", "reasoner", "opus-4.5", "minimax-m2", "glm-4.5", "glm-4.6",
             "r1-1776", "seed-oss", "ernie-5.0-thinking"]

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def kind(model):
    m = model.lower()
    if any(x in m for x in REASONING):
        return "reasoning"
    if any(x in m for x in ["claude", "gemini", "gpt-4o", "grok", "qwen-max", "qwen3-max", "minimax-01", "mistral-large"]):
        return "api"
    return "chat"

def main():
    files = [p for p in git("ls-tree", "-r", "--name-only", COMMIT, "results").decode().split("\n")
             if p.endswith(".csv") and p.count("/") == 1]
    pools = {}
    bad = []
    for p in sorted(files):
        try:
            raw = git("show", f"{COMMIT}:{p}")
        except subprocess.CalledProcessError:
            bad.append((p, -1, "blob absent from the snapshot"))
            continue
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
        for k, row in enumerate(rows):
            if len(row) == 10:
                row = row[:9]  # one file (qwq-32b_16) has a 10th column: the reasoning trace, not the answer
            if len(row) != 9:
                bad.append((p, k, "columns %d" % len(row)))
                continue
            size, rel, correct, quiz, model, provider, effort, sysp, resp = row
            lines = quiz.split("\n")
            if "Select the correct answer:" not in lines:
                bad.append((p, k, "no options")); continue
            i = lines.index("Select the correct answer:")
            choices = []
            for l in lines[i + 1:]:
                m = re.match(r"^(\d+)\. (.*)$", l)
                if not m:
                    break
                if int(m.group(1)) != len(choices) + 1:
                    break
                choices.append(m.group(2))
            if not (2 <= len(choices) <= 10) or not correct.isdigit() or not (1 <= int(correct) <= len(choices)):
                bad.append((p, k, "options/gold")); continue
            name = model.split("/")[-1] + (("_" + effort) if effort else "")
            pools.setdefault(name, []).append({"path": p, "item": str(k), "size": size, "query": (sysp + "\n\n" + quiz) if sysp else quiz,
                                               "choices": choices, "gold": int(correct) - 1, "output": resp})
    rng = random.Random(SEED)
    drawn = []
    for name in sorted(pools):
        pool = pools[name]
        for j in rng.sample(range(len(pool)), min(PER_MODEL, len(pool))):
            drawn.append((name, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (name, c) in enumerate(drawn, 1):
            found = re.findall(r"<ANSWER>([0-9])</ANSWER>", c["output"])
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%s" % (c["path"], c["item"]), "query": c["query"], "choices": c["choices"],
                              "gold": c["gold"], "answer": c["choices"][c["gold"]]},
                   "output": c["output"],
                   "source": {"repo": REPO, "commit": COMMIT, "path": c["path"], "item": c["item"], "model": name,
                              "model_kind": kind(name), "shots": "zero-shot", "lang": "en"},
                   "hint": "source strict regex (first <ANSWER>digit</ANSWER>): " + (found[0] if found else "none")}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(len(pools), "models", len(drawn), "drawn;", len(bad), "rows skipped", file=sys.stderr)
    for b in bad:
        if b[1] == -1 or len(bad) < 40:
            print("skipped", b, file=sys.stderr)

if __name__ == "__main__":
    main()
