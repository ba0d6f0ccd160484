#!/usr/bin/env python3
"""Draw farel-bench outputs (fairydreaming/farel-bench) into drawn.jsonl. stdlib only."""
import ast, codecs, csv, io, json, os, random, re, subprocess, sys
from collections import defaultdict

GIT = "/work/.mirror/fairydreaming+farel-bench/repo"
COMMIT = "1fc255d75a4448011eb8accd4872d174496a7af8"
REPO = "fairydreaming/farel-bench"
PREFIX = "fairydreaming__farel-bench"
SEED = 20261206
PER_MODEL = 3
HERE = os.path.dirname(os.path.abspath(__file__))
SYS_EN = ("You are a master of logical thinking. You carefully analyze the premises step by step, take "
          "detailed notes and draw intermediate conclusions based on which you can find the final answer to any question.")
QEND = "for example: <ANSWER>1</ANSWER>."
SUFFIXES = [
    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|im_end|><|im_start|>assistant<|im_sep|>",
    "<|im_end|>\n<|im_start|>assistant\n",
    "<|im_end|>\n<|im_start|>assistant",
    "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "<end_of_turn>\n<start_of_turn>model\n",
    "\n<extra_id_1>Assistant\n", "<extra_id_1>Assistant\n",
    "<｜Assistant｜>", "<|end|>\n<|assistant|>", "\n<|assistant|>\n",
    "\nASSISTANT: ", "\nASSISTANT:", "\n\nAssistant:", "[/INST]\n",
]
SUMMARY = re.compile(r"\n[a-z ]+: \d+\.\d\d \(C: \d+, I: \d+, M: \d+ A: \d+\)\n")
TIMEOUT = "Execution timeout of 600s expired.\n"

def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout

def decode(q):
    return codecs.escape_decode(bytes(q, "utf-8"))[0].decode("utf-8")

def key(q):
    # the quiz without its last (instruction) line: one run (qvq) used another instruction line
    return q.rsplit("\n", 1)[0]

def gold_table():
    table = {}
    for p in git("ls-tree", "-r", "--name-only", COMMIT, "results").decode().split("\n"):
        if p.endswith(".csv") and "/pl/" not in p:
            for dist, rel, ans, quiz in csv.reader(io.StringIO(git("show", f"{COMMIT}:{p}").decode())):
                q = key(decode(quiz))
                if q in table and table[q][1] != ans:
                    table[q] = None  # conflicting gold: unusable
                elif q not in table:
                    table[q] = (p, ans, rel, dist)
    return table

def parse_api(text):
    out = []
    lines = text.split("\n")
    starts = [i for i, l in enumerate(lines) if l.startswith("[{'role'")]
    for k, i in enumerate(starts):
        msgs = ast.literal_eval(lines[i])
        sysp = next((m["content"] for m in msgs if m["role"] == "system"), None)
        quiz = [m["content"] for m in msgs if m["role"] == "user"][-1]
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        body = "\n".join(lines[i + 1:end])
        out.append((sysp, quiz, body))
    return out

def parse_cli(text):
    first = text.split("\n", 1)[0]
    exe = first.split(" ", 1)[0] + " "
    pos = [m.start() for m in re.finditer(r"(?m)^" + re.escape(exe), text)]
    out = []
    for k, s in enumerate(pos):
        e = pos[k + 1] if k + 1 < len(pos) else len(text)
        block = text[s:e]
        qe = block.index(QEND) + len(QEND)
        qs = block.rindex("Given the family relationships:", 0, qe)
        quiz = block[qs:qe]
        sysp = SYS_EN if SYS_EN in block[:qs] else None
        rest = block[qe:]
        for suf in SUFFIXES:
            if rest.startswith(suf + "\n"):
                rest = rest[len(suf) + 1:]
                break
        else:
            raise ValueError("unknown template suffix %r" % rest[:60])
        timed_out = rest.startswith(TIMEOUT)
        if timed_out:
            rest = rest[len(TIMEOUT):]
        out.append((sysp, quiz, rest, timed_out))
    return out

def model_kind(m):
    ml = m.lower()
    if any(x in ml for x in ["o1-", "o3", "deepseek-r1", "qwq", "sky-t1", "qvq", "thinking", "r1-distill", "reasoner"]):
        return "reasoning"
    if any(x in ml for x in ["gpt-", "claude", "gemini", "grok", "nova-", "mistral-large", "mistral-medium", "mistral-small", "mistral-nemo", "inflection", "minimax", "yi-large", "reka", "glm-4-", "command-r7b"]) and "q8" not in ml:
        return "api"
    return "chat"

def main():
    gold = gold_table()
    files = [p for p in git("ls-tree", "-r", "--name-only", COMMIT, "results").decode().split("\n")
             if p.endswith(".log") and "/pl/" not in p and not p.endswith("-pl.log")]
    cases_by_model = defaultdict(list)
    skipped = []
    for p in sorted(files):
        text = git("show", f"{COMMIT}:{p}").decode("utf-8")
        try:
            if text.startswith("[{'role'"):
                blocks = [(s, q, b, False) for s, q, b in parse_api(text)]
            elif text.startswith("/") or text.startswith("../"):
                blocks = parse_cli(text)
            else:
                skipped.append((p, "unrecognised log format")); continue
        except Exception as ex:
            skipped.append((p, "parse error: %s" % ex)); continue
        if not blocks or "Given the family relationships" not in blocks[0][1]:
            skipped.append((p, "not English quizzes")); continue
        # cut the run summary off the last block
        s, q, b, t = blocks[-1]
        m = SUMMARY.search("\n" + b)
        if m:
            b = ("\n" + b)[:m.start()][1:] + "\n"
        blocks[-1] = (s, q, b, t)
        model = os.path.basename(p)[:-4]
        sysflag = model.endswith("-sys")
        if sysflag:
            model = model[:-4]
        last = {key(q): idx for idx, (s, q, b, t) in enumerate(blocks)}
        for idx, (s, q, b, t) in enumerate(blocks):
            g = gold.get(key(q))
            if g is None or last[key(q)] != idx:  # a re-run of the same quiz in one log: keep the last
                continue
            out = b[:-1] if b.endswith("\n") else b  # print() adds one newline
            cases_by_model[model].append((p, idx, s, q, out, t, g))
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(cases_by_model):
        pool = cases_by_model[model]
        picks = rng.sample(range(len(pool)), min(PER_MODEL, len(pool)))
        for j in picks:
            drawn.append((model, pool[j]))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for n, (model, (p, idx, s, q, out, t, g)) in enumerate(drawn, 1):
            lines = q.split("\n")
            k = lines.index("Select the correct answer:")
            choices = []
            for l in lines[k + 1:]:
                mm = re.match(r"^(\d+)\. (.*)$", l)
                if not mm:
                    break
                assert int(mm.group(1)) == len(choices) + 1
                choices.append(mm.group(2))
            gi = int(g[1]) - 1
            query = (s + "\n\n" + q) if s else q
            found = re.findall(r"<ANSWER>(.*?)</ANSWER>", out)
            hint = "source regex (first <ANSWER> tag): " + (repr(found[0].strip()) if found else "none")
            if t:
                hint += "; run hit the 600s timeout"
            rec = {"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ",
                   "record": {"id": "%s#%d" % (p, idx), "query": query, "choices": choices, "gold": gi,
                              "answer": choices[gi]},
                   "output": out,
                   "source": {"repo": REPO, "commit": COMMIT, "path": p, "item": str(idx), "model": model,
                              "model_kind": model_kind(model), "shots": "zero-shot", "lang": "en"},
                   "hint": hint}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print("models", len(cases_by_model), "drawn", len(drawn), file=sys.stderr)
    for p, why in skipped:
        print("skipped", p, why, file=sys.stderr)

if __name__ == "__main__":
    main()
