#!/usr/bin/env python3
"""Draw GPQA Diamond model responses committed in HaveFunWithAI/gpqa_diamond_exp into drawn.jsonl.

stdlib only. The source repository holds one CSV per model run (198 rows, the GPQA Diamond questions in
the order of gpqa_diamond.csv) with the verbatim responses r1..r4 to four versions of each question (the
correct option placed at A, B, C, D) and the author's extracted letters a1..a4 (E = unknown). It does not
hold the questions (GPQA asks that they not be posted); they are taken from the GPQA Diamond copy committed
in echohive42/testing-deepseek-with-Groq-on-GPQA-diamond (gpqa_questions.json: the 198 Diamond questions in
the same order, options A = correct answer, B, C, D = incorrect answers 1, 2, 3).

Version k puts the correct answer at position k and the three incorrect answers, in their dataset order,
in the other positions (checked against responses that quote the option list). From each of the 8 runs 19
(question, version) pairs are drawn with a fixed seed (distinct questions within a run; versions balanced).
"""
import csv, gzip, io, json, os, random, subprocess

GIT = "/work/.mirror/HaveFunWithAI+gpqa_diamond_exp/repo"
COMMIT = "532103bdb378613bfa0dbec93a4ba160482837b0"
QGIT = "/work/.mirror/echohive42+testing-deepseek-with-Groq-on-GPQA-diamond/repo"
QCOMMIT = "b0f742de6d206b87708a0180be042f9315004e0c"
REPO = "HaveFunWithAI/gpqa_diamond_exp"
PREFIX = "HaveFunWithAI__gpqa_diamond_exp"
SEED = 20261211
PER_RUN = 19
HERE = os.path.dirname(os.path.abspath(__file__))

# csv stem -> (model as named in the README, model_kind, provider)
RUNS = {
    "deepseek": ("deepseek-v2.5", "chat", "openrouter"),
    "flash": ("gemini-1.5-flash", "api", "google"),
    "flash_openrouter": ("gemini-1.5-flash@openrouter", "api", "openrouter"),
    "gpt4o": ("gpt-4o", "api", "openai"),
    "groq": ("llama-3.1-70b", "chat", "groq"),
    "pro_openrouter": ("gemini-1.5-pro", "api", "openrouter"),
    "sonnet": ("claude-3.5-sonnet", "api", "anthropic"),
    "together": ("llama-3.1-405b", "chat", "together"),
}


def git(gitdir, *a):
    return subprocess.run(["git", "--git-dir", gitdir] + list(a), check=True, capture_output=True).stdout


def options_for(q, version):
    correct = q["options"][q["correct_answer"]]
    wrong = [q["options"][k] for k in "ABCD" if k != q["correct_answer"]]
    opts = list(wrong)
    opts.insert(version - 1, correct)
    return opts


def build_query(q, opts):
    lines = ["Question: ", q["question"], "", "Options: "]
    lines += ["%s. %s" % (L, o) for L, o in zip("ABCD", opts)]
    return "\n".join(lines)


def main():
    csv.field_size_limit(10 ** 9)
    qs = json.loads(git(QGIT, "show", "%s:gpqa_questions.json" % QCOMMIT))["questions"]
    assert len(qs) == 198
    rng = random.Random(SEED)
    drawn = []
    for stem in sorted(RUNS):
        model, kind, provider = RUNS[stem]
        path = "gpqa_diamond_%s_eval.csv" % stem
        rows = list(csv.DictReader(io.StringIO(git(GIT, "show", "%s:%s" % (COMMIT, path)).decode("utf-8"))))
        assert len(rows) == 198
        idx = rng.sample(range(198), PER_RUN)
        versions = ([1, 2, 3, 4] * 5)[:PER_RUN]
        rng.shuffle(versions)
        for i, v in zip(idx, versions):
            q = qs[i]
            opts = options_for(q, v)
            rec = {"id": "gpqa_diamond#%d:v%d" % (i, v), "query": build_query(q, opts), "choices": opts,
                   "gold": v - 1, "answer": opts[v - 1]}
            src = {"repo": REPO, "commit": COMMIT, "path": path, "item": "row %d, r%d" % (i, v),
                   "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en",
                   "provider": provider,
                   "question_source": "echohive42/testing-deepseek-with-Groq-on-GPQA-diamond@%s:gpqa_questions.json#%d"
                                      % (QCOMMIT, i)}
            drawn.append(("TaxSCQ", rec, rows[i]["r%d" % v], src, "author's extracted answer: %s" % rows[i]["a%d" % v]))
    rng.shuffle(drawn)
    # GPQA's authors ask that its questions not be posted online in plain text: the drawn cases are
    # kept gzipped (drawn.jsonl.gz; join.py then writes cases.jsonl.gz)
    lines = "".join(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                "source": src, "hint": hint}, ensure_ascii=False) + "\n"
                    for n, (t, rec, output, src, hint) in enumerate(drawn, 1))
    with open(os.path.join(HERE, "drawn.jsonl.gz"), "wb") as out:
        out.write(gzip.compress(lines.encode("utf-8"), mtime=0))
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
