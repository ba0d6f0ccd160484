#!/usr/bin/env python3
"""Draw MMLU-Pro outputs of three reasoning models from wgantt/reasoning-models-lie into drawn.jsonl.

stdlib only, re-runnable. Reads the fetched snapshot with `git show COMMIT:PATH` at the pinned commit.
Source files: experiments/mmlu_pro/results/all_responses/mmlu_pro_test200_verbalize_<condition>_<model>.jsonl
(one JSON line per item: instance_id, system_message, user_message, meta{answer, candidates, hinted_answer,
...}, result{response, reasoning_trace, content, metadata}); where the all_responses file of a (model,
condition) has no blob in the snapshot, the changed_responses/<...>_changed.jsonl file of that pair is used
(the subset whose answer changed from the baseline; it carries the repository's own extracted answers
previous_answer / new_answer, kept as hint). GPQA files are not used (none of them is needed to reach the
draw size, and GPQA asks that its questions not be posted in plain text).

Output = the model's visible reply as the API returned it: for Qwen3-Next the message content (its thinking
trace, closed by </think>, then the final text, all in one string, as Together returns it); for Kimi K2
Thinking the message content (the API returns the reasoning separately; not included); for Claude Haiku 4.5
with extended thinking the text block(s) of the content (the thinking block is separate; not included).
Records whose result is an API error are left out. 50 records are drawn per model at random from the pooled
(condition, item) records of that model."""
import json, os, random, subprocess

GIT = "/work/.mirror/wgantt+reasoning-models-lie/repo"
REPO = "wgantt/reasoning-models-lie"
PREFIX = "wgantt__reasoning-models-lie"
COMMIT = "72ce365ff6e1f7cc7899f742aefc3b0bbae484c6"
SEED = 20261216
N_PER_MODEL = 50
HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "experiments/mmlu_pro/results"
CONDITIONS = ["baseline"] + ["%s_%s" % (h, c) for h in ("grader_hacking", "metadata", "sycophancy_v1",
                                                         "unethical_information") for c in ("correct", "incorrect")]
MODELS = {  # file suffix -> (model name, api model id)
    "claude_4.5_haiku": "claude-haiku-4-5-20251001",
    "kimi_k2_thinking": "moonshotai/Kimi-K2-Thinking",
    "qwen3_next": "Qwen/Qwen3-Next-80B-A3B-Thinking",
}
LETTERS = "ABCDEFGHIJ"


def git_blob(path):
    r = subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (COMMIT, path)], capture_output=True)
    if r.returncode != 0 or not r.stdout.strip():
        return None
    return r.stdout.decode("utf-8")


def output_of(result):
    content = result.get("content")
    if isinstance(content, list):  # Anthropic content blocks: keep the text block(s) only
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return content if isinstance(content, str) else ""


def pool(suffix):
    rows = []
    for cond in CONDITIONS:
        path = "%s/all_responses/mmlu_pro_test200_verbalize_%s_%s.jsonl" % (BASE, cond, suffix)
        text = git_blob(path)
        changed = False
        if text is None and cond != "baseline":
            path = "%s/changed_responses/mmlu_pro_test200_verbalize_%s_%s_changed.jsonl" % (BASE, cond, suffix)
            text = git_blob(path)
            changed = True
        if text is None:
            continue
        for line in text.splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            r = d.get("result") or {}
            if "error" in r or "content" not in r:
                continue
            rows.append((cond, path, changed, d))
    return rows


def main():
    rng = random.Random(SEED)
    drawn = []
    for suffix in sorted(MODELS):
        rows = pool(suffix)
        rows.sort(key=lambda x: (x[0], x[3]["instance_id"]))
        for cond, path, changed, d in rng.sample(rows, N_PER_MODEL):
            meta = d["meta"]
            choices = []
            for i, c in enumerate(meta["candidates"]):
                assert c.startswith(LETTERS[i] + ". "), c
                choices.append(c[3:])
            gold = LETTERS.index(meta["answer"])
            sys_, user = (d.get("system_message") or "").strip(), d["user_message"]
            query = (sys_ + "\n\n" + user) if sys_ else user
            rec = {"id": "mmlu_pro_test200#%s#%s" % (cond, d["instance_id"]), "query": query,
                   "choices": choices, "gold": gold, "answer": choices[gold]}
            src = {"repo": REPO, "commit": COMMIT, "path": path, "item": d["instance_id"],
                   "model": MODELS[suffix], "model_kind": "reasoning", "shots": "zero-shot", "lang": "en",
                   "condition": cond, "hinted_answer": meta.get("hinted_answer"), "domain": meta.get("domain")}
            case = {"task": "TaxSCQ", "record": rec, "output": output_of(d["result"]), "source": src}
            if changed and d.get("new_answer") is not None:
                case["hint"] = "repository's extracted answer: %s (baseline: %s)" % (d.get("new_answer"),
                                                                                   d.get("previous_answer"))
            drawn.append(case)
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, case in enumerate(drawn, 1):
            case = {"id": "%s-%04d" % (PREFIX, i), **case}
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
