#!/usr/bin/env python3
"""Draw CTIBench (CTI-MCQ) model responses committed in xashru/cti-bench into drawn.jsonl.

stdlib only. The repository holds the unprocessed responses of three API models (gpt-3.5-turbo, gpt-4-turbo,
gemini-1.5-pro) to the 2,500 CTI-MCQ items (logs/<model>/cti-mcq.txt, one '#####N#####' block per TSV row)
and the items with their exact prompt and gold letter (data/cti-mcq.tsv). Every case is a TaxSCQ (four options
A-D). Per model 50 items are drawn with a fixed seed: up to 25 among the responses that are not a bare option
letter, the rest among all remaining responses; no item is drawn twice."""
import csv, io, json, os, random, re, subprocess

GIT = "/work/.mirror/xashru+cti-bench/repo"
REPO = "xashru/cti-bench"
PREFIX = "xashru__cti-bench"
SEED = 20261213
COMMIT = "57ce8c246e5fc66a16c6cef743f3a983831b90f0"  # HEAD 2024-10-11 (logs/data unchanged since 2024-06-12)
DATA = "data/cti-mcq.tsv"
HINTS = "evaluation/responses/cti-mcq-responses.tsv"
NB = "evaluation/model-prediction.ipynb"
HERE = os.path.dirname(os.path.abspath(__file__))
PER_MODEL, PER_MODEL_LONG = 50, 25

SYS = "You are a cybersecurity expert specializing in cyberthreat intelligence."
# log folder -> (model name, hint column, prompt style)
RUNS = {
    "gpt3": ("gpt-3.5-turbo", "ChatGPT-3.5", "chat"),
    "gpt4": ("gpt-4-turbo", "ChatGPT-4", "chat"),
    "gemini": ("gemini-1.5-pro", "Gemini-1.5", "concat"),
}
BARE = re.compile(r"\s*\(?[A-D]\)?\.?\s*")


def git(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def tsv(path):
    csv.field_size_limit(10 ** 9)
    rows = list(csv.reader(io.StringIO(git(path)), delimiter="\t"))
    return rows[0], rows[1:]


def responses(model_dir):
    """The harness writes '#####i#####\\n' + response + '\\n\\n' for i = 1..N."""
    text = git("logs/%s/cti-mcq.txt" % model_dir)
    parts = re.split(r"^#####(\d+)#####\n", text, flags=re.M)
    assert parts[0] == ""
    out = {}
    for i in range(1, len(parts), 2):
        body = parts[i + 1]
        if body.endswith("\n\n"):
            body = body[:-2]
        out[int(parts[i])] = body
    return out


def main():
    head, items = tsv(DATA)
    assert head == ["URL", "Question", "Option A", "Option B", "Option C", "Option D", "Prompt", "GT"]
    hhead, hints = tsv(HINTS)
    assert len(items) == len(hints) == 2500
    for it, h in zip(items, hints):  # the extracted-answer table is row-aligned with the data
        assert it[7].upper() == h[0].upper()
    assert "'You are a cybersecurity expert specializing in cyberthreat intelligence.'" in git(NB)
    rng = random.Random(SEED)
    used, drawn = set(), []
    for mdir in sorted(RUNS):
        model, hcol, style = RUNS[mdir]
        resp = responses(mdir)
        assert sorted(resp) == list(range(1, 2501))
        nonbare = [n for n in sorted(resp) if not BARE.fullmatch(resp[n]) and n not in used]
        pick = rng.sample(nonbare, min(PER_MODEL_LONG, len(nonbare)))
        rest = [n for n in sorted(resp) if n not in used and n not in pick]
        pick += rng.sample(rest, PER_MODEL - len(pick))
        for n in pick:
            used.add(n)
            url, q, a, b, c, d, prompt, gt = items[n - 1]
            # an empty option cell was sent as the text 'nan' (pandas NaN formatted into the prompt)
            choices = [x if x.strip() else "nan" for x in (a, b, c, d)]
            for L, x in zip("ABCD", choices):
                assert "%s) %s" % (L, x.strip()) in prompt or "%s) %s" % (L, x) in prompt, (n, L)
            gold = "ABCD".index(gt.strip().upper())
            if style == "chat":
                query = SYS + "\n\n" + prompt
            else:
                query = SYS + " " + prompt
            rec = {"id": "cti-mcq.tsv#%d" % n, "query": query, "choices": choices, "gold": gold,
                   "answer": choices[gold]}
            hint = hints[n - 1][hhead.index(hcol)]
            drawn.append(("TaxSCQ", rec, resp[n], {
                "repo": REPO, "commit": COMMIT, "path": "logs/%s/cti-mcq.txt" % mdir, "item": "%d:%s" % (n, url),
                "model": model, "model_kind": "api", "shots": "zero-shot", "lang": "en"},
                "source's extracted answer (%s column of %s): %s" % (hcol, HINTS, hint)))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for k, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, k), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
