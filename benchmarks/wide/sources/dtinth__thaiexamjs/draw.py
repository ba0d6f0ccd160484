#!/usr/bin/env python3
"""Draw ThaiExam model outputs committed in dtinth/thaiexamjs into drawn.jsonl.

No third-party Python packages. The snapshot's logs (`snapshot/<exam>/<model>.jsonl.br`) are
Brotli-compressed, which Python's standard library cannot read, so each log is decompressed by
the Node.js runtime's built-in zlib (`node`, called like `git`, through subprocess).

Every model run present in the snapshot (102 models, each answering the O-NET M6, IC and TPAT-1
exams) gets one case, from an exam and item drawn at random; 48 models drawn at random get a
second case from another exam: 150 cases in all. Each case is one log line whose task completed;
the output is the log's `result.text`, verbatim."""
import json, os, random, re, subprocess

GIT = "/work/.mirror/dtinth+thaiexamjs/repo"
COMMIT = "2187eac2c72053cb8cbba8a0ce36401ced017f76"
REPO = "dtinth/thaiexamjs"
PREFIX = "dtinth__thaiexamjs"
SEED = 20261211
EXAMS = ["ic", "onet_m6", "tpat1"]
N_SECOND = 48
HERE = os.path.dirname(os.path.abspath(__file__))
LETTERS = "abcdefghij"

NODE_BROTLI = ("const z=require('zlib');let b=[];process.stdin.on('data',d=>b.push(d))"
               ".on('end',()=>process.stdout.write(z.brotliDecompressSync(Buffer.concat(b))));")


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def unbrotli(raw):
    return subprocess.run(["node", "-e", NODE_BROTLI], input=raw, check=True, capture_output=True).stdout


_qcache = {}


def question(path, idx):
    if path not in _qcache:
        _qcache[path] = [json.loads(l) for l in git("show", "%s:%s" % (COMMIT, path)).decode().split("\n")
                         if l.strip()]
    return _qcache[path][idx]


REASONING = re.compile(r"thinking|-(high|medium|low)$|^o[134]-|^o1-|-r1|reasoner|qwq|^gpt-5(-|\.1-|\.2$)|^gpt-oss|"
                       r"^grok-3-mini|^grok-4|^gemini-2\.5-(pro|flash)$|^gemini-3|^glm-|^kimi-k2\.5|^minimax|^step-|"
                       r"^mimo|^nemotron|^qwen3")


def model_kind(m):
    """reasoning: thinking / reasoning-effort variants and models that reason by default; api: other
    closed models behind a vendor API; chat: other open-weight instruct models (all were called by API)."""
    if REASONING.search(m) and m != "qwen3-next-80b-a3b-instruct" and "no-thinking" not in m:
        return "reasoning"
    if re.match(r"claude|gpt-|gemini|grok|command|nova|qwen-max|mistral-large", m):
        return "api"
    return "chat"


def load_run(exam, model):
    raw = git("show", "%s:snapshot/%s/%s.jsonl.br" % (COMMIT, exam, model))
    lines = [json.loads(l) for l in unbrotli(raw).decode("utf-8").split("\n") if l.strip()]
    return [x for x in lines if x.get("state") == "completed" and x.get("result")
            and isinstance(x["result"].get("text"), str)]


def build(exam, model, entry):
    # _id = "<preset id>:<exam>:<question file>:<line index>"
    _, ex, path, idx = entry["_id"].rsplit(":", 3)
    assert ex == exam
    q = question(path, int(idx))
    # true/false items carry empty options c..e: those are left out of `choices` (they are always trailing)
    keys = [k for k in LETTERS if k in q and str(q[k]).strip()]
    assert keys == list(LETTERS[:len(keys)]), keys
    choices = [q[k] for k in keys]
    gold = keys.index(q["answer"])
    msgs = entry["result"]["inputMessages"]
    instruction = msgs[0]["content"].split("\n\n")[0]
    final = msgs[-1]["content"]
    query = instruction + "\n\n" + final
    text = entry["result"]["text"]
    found = re.findall(r'"correct_answer_key"\s*:\s*"(\w)"', text, re.I)
    hint = "source extraction: %s" % (found[0].lower() if len(found) == 1 else "none (%d matches)" % len(found))
    rec = {"id": "%s:%s:%s" % (exam, path, idx), "query": query, "choices": choices, "gold": gold,
           "answer": choices[gold]}
    lang = "other" if re.search(r"[\u0e00-\u0e7f]", q["question"] + "".join(choices)) else "en"
    src = {"repo": REPO, "commit": COMMIT, "path": "snapshot/%s/%s.jsonl.br" % (exam, model),
           "item": entry["_id"], "model": model, "model_kind": model_kind(model), "shots": "few-shot",
           "lang": lang}
    return rec, text, src, hint


def main():
    models = sorted(l.rsplit("/", 1)[1][:-len(".jsonl.br")] for l in
                    git("ls-tree", "--name-only", COMMIT, "snapshot/ic/").decode().split("\n") if l.strip())
    rng = random.Random(SEED)
    second = set(rng.sample(models, N_SECOND))
    drawn = []
    for model in models:
        exams = rng.sample(EXAMS, 2 if model in second else 1)
        for exam in exams:
            run = load_run(exam, model)
            entry = rng.choice(run)
            drawn.append(build(exam, model, entry))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": "TaxSCQ", "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(models), "models;", len(drawn), "cases")


if __name__ == "__main__":
    main()
