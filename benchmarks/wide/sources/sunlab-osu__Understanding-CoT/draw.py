#!/usr/bin/env python3
"""Draw GSM8K few-shot completions committed in sunlab-osu/Understanding-CoT (result_gsm8k/*.jsonl)
into drawn.jsonl.

stdlib only. The repository ("Towards Understanding Chain-of-Thought Prompting: An Empirical Study of
What Matters", Wang et al., ACL 2023) holds, for 800 GSM8K test problems (indices_800.json), the
completions of two OpenAI completion models (text-davinci-002, text-davinci-003) under ten few-shot
prompt settings (standard answer-only demonstrations, the original CoT demonstrations, and
ablated CoT demonstrations: invalid reasoning, no coherence, no relevance, ...). 19 files: 10 settings for
text-davinci-002, 9 for text-davinci-003 (no CoT_original run). Each file's last line is the exact prompt
(the demonstrations); main_gsm8k.py sent  prompt + "\\n\\nQ: {question}\\nA:"  with stop ["Q:"] and
stored the completion .strip()ped.

152 distinct problem positions (of the 800) are drawn with a fixed seed and dealt to the 19 files in turn,
8 each, so no problem appears twice."""
import json, os, random, subprocess

GIT = "/work/.mirror/sunlab-osu+Understanding-CoT/repo"
COMMIT = "f03070c45dace69892fc594dfb3cf6c2afc657f9"
REPO = "sunlab-osu/Understanding-CoT"
PREFIX = "sunlab-osu__Understanding-CoT"
SEED = 20261217
PER_FILE = 8
SETTINGS = ["standard", "CoT_original", "chain_of_thought", "invalid_reasoning", "no_coherence",
            "no_lang_coherence", "no_lang_relevance", "no_num_coherence", "no_num_relevance", "no_relevance"]
ENGINES = ["text-davinci-002", "text-davinci-003"]
HERE = os.path.dirname(os.path.abspath(__file__))


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT] + list(a), check=True, capture_output=True).stdout


def number(s):
    x = float(s.replace(",", ""))
    return int(x) if x == int(x) else x


def main():
    commit = git("rev-parse", COMMIT).decode().strip()
    names = set(git("ls-tree", "-r", "--name-only", commit, "result_gsm8k").decode().split("\n"))
    files = []
    for eng in ENGINES:
        for s in SETTINGS:
            path = "result_gsm8k/gsm8k_%s.eng%s.sample800.seed1357.temp0.0..jsonl" % (s, eng)
            if path in names:
                files.append((eng, s, path))
    loaded, questions = {}, None
    for eng, s, path in files:
        lines = [l for l in git("show", "%s:%s" % (commit, path)).decode("utf-8").splitlines() if l.strip()]
        rows = [json.loads(l) for l in lines[:-1]]
        prompt = json.loads(lines[-1])
        assert isinstance(prompt, str) and len(rows) == 800, path
        qs = [r["question"] for r in rows]
        if questions is None:
            questions = qs
        assert qs == questions, path  # same 800 problems, same order, in every file
        loaded[path] = (rows, prompt)
    test_ind = json.loads(git("show", "%s:indices_800.json" % commit).decode())
    assert len(test_ind) == 800
    rng = random.Random(SEED)
    picks = rng.sample(range(800), PER_FILE * len(files))
    out = []
    for n, pos in enumerate(picks):
        eng, s, path = files[n % len(files)]
        rows, prompt = loaded[path]
        r = rows[pos]
        keys = [k for k in r if k.startswith("ans_")]
        assert len(keys) == 1, (path, r.keys())
        out.append({
            "task": "TaxCalc",
            "record": {"id": "gsm8k/test.jsonl#%d" % test_ind[pos],
                       "query": prompt + "\n\nQ: {}\nA:".format(r["question"]),
                       "answer": number(r["answer"])},
            "output": r[keys[0]],
            "source": {"repo": REPO, "commit": commit, "path": path, "item": "%d:test%d:%s" % (pos, test_ind[pos], keys[0]),
                       "model": eng, "model_kind": "api",
                       "shots": "few-shot" if s == "standard" else "cot", "lang": "en",
                       "prompt_setting": s},
        })
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for k, c in enumerate(out, 1):
            f.write(json.dumps(dict({"id": "%s-%04d" % (PREFIX, k)}, **c), ensure_ascii=False) + "\n")
    print(len(files), "files;", len(out), "cases")


if __name__ == "__main__":
    main()
