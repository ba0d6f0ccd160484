#!/usr/bin/env python3
"""Draw LongEval predictions of 5 long-context models committed in DachengLi1/LongChat into drawn.jsonl.

stdlib only. LongEval (LongChat blog, LMSYS, June 2023) has two synthetic long-context retrieval tasks:
- lines: a record of N lines "line <word-word>: REGISTER_CONTENT is <number>"; the model is asked for the
  REGISTER_CONTENT of one line (gold: a number) -> TaxCalc.
- topics: a record of K multi-turn conversations, each on one topic; the model is asked for the first topic
  (gold: a topic name) -> TaxRead, the conversation record in `text`.
The repository holds, for each model, one text file per setting (50 test cases, one line each:
"Label: ..., Predict: <output>, [Parsed: n, ]prompt length: L") and the test cases themselves (prompts and gold).
The wrapping of the prompt for each model is rebuilt from longeval/utils.py (test_lines_one_sample,
test_topics_one_sample)."""
import ast, json, os, random, subprocess

GIT = "/work/.mirror/DachengLi1+LongChat/repo"
REPO = "DachengLi1/LongChat"
PREFIX = "DachengLi1__LongChat"
SEED = 20261217
COMMIT = "4b5faa52fda961b8ea5125b15ae984ff0d1c0f9d"  # HEAD, 2023-10-02
HERE = os.path.dirname(os.path.abspath(__file__))
PER_TASK = 15  # per model and task -> 5 models x 2 tasks x 15 = 150

# prediction folder -> (model label, model_kind, wrapper)
MODELS = {
    "longchat-7b-16k": ("lmsys/longchat-7b-16k", "chat", "vicuna"),
    "longchat-13b-16k": ("lmsys/longchat-13b-16k", "chat", "vicuna"),
    "mpt-30b-chat": ("mosaicml/mpt-30b-chat", "chat", "mpt-30b-chat"),
    "chatglm2-6b": ("THUDM/chatglm2-6b", "chat", "chatglm2"),
    "mpt-7b-storywriter": ("mosaicml/mpt-7b-storywriter", "base", "storywriter"),
}
VICUNA_SYS = ("A chat between a curious user and an artificial intelligence assistant. "
              "The assistant gives helpful, detailed, and polite answers to the user's questions.")
MPT_SYS = ("<|im_start|>system\nA conversation between a user and an LLM-based AI assistant. "
           "The assistant gives helpful and honest answers.")
MARK = "[the conversation record given in `text`]"
REC_START = "Now the record start. "
REC_END = " Now the record ends."


def git(*args):
    return subprocess.run(["git", "--git-dir", GIT] + list(args), check=True, capture_output=True).stdout.decode("utf-8")


def show(path):
    return git("show", "%s:%s" % (COMMIT, path))


def wrap(wrapper, task, prompt, tc):
    """The text the model was given (longeval/utils.py)."""
    if wrapper == "storywriter":  # no template, next-word continuation, 15 sampled tokens
        if task == "topics":
            return prompt + "\n ASSISTANT: The first topic is"
        return prompt + "Line <%s>: <REGISTER_CONTENT> is" % tc["random_idx"][0]
    if wrapper == "chatglm2":  # model.chat(tokenizer, prompt, history=[]) -> ChatGLM2 build_prompt
        return "[Round 1]\n\n问：" + prompt + "\n\n答："
    if wrapper == "vicuna":  # fastchat get_conversation_template("vicuna")
        return VICUNA_SYS + " USER: " + prompt + " ASSISTANT:"
    if wrapper == "mpt-30b-chat":  # fastchat "mpt-30b-chat" (ChatML)
        if task == "lines":
            prompt += "Answer in the format <%s> <REGISTER_CONTENT>." % tc["random_idx"][0]
        return MPT_SYS + "<|im_end|>\n<|im_start|>user\n" + prompt + "<|im_end|>\n<|im_start|>assistant\n"
    raise ValueError(wrapper)


def parse(line, label, task):
    head = "Label: %s, Predict: " % label
    assert line.startswith(head), (line[:80], label)
    rest = line[len(head):]
    parsed = None
    if task == "lines":
        i = rest.rindex(", Parsed: ")
        out, tail = rest[:i], rest[i + len(", Parsed: "):]
        parsed = tail.split(", prompt length: ")[0]
    else:
        out = rest[:rest.rindex(", prompt length: ")]
    listed = False
    if out.startswith("['") or out.startswith('["'):
        try:
            v = ast.literal_eval(out)
            if isinstance(v, list) and len(v) == 1 and isinstance(v[0], str):
                out, listed = v[0], True
        except (ValueError, SyntaxError):
            pass
    return out, parsed, listed


def main():
    files = [p for p in git("ls-tree", "-r", "--name-only", COMMIT).splitlines()
             if p.startswith("longeval/evaluation/") and "/predictions/" in p]
    testcases = {}
    pools = {(m, t): [] for m in MODELS for t in ("lines", "topics")}
    for path in sorted(files):
        _, _, task, _, folder, fname = path.split("/")
        n = fname.split("_")[0]
        key = (task, n)
        if key not in testcases:
            testcases[key] = [json.loads(x) for x in show("longeval/evaluation/%s/testcases/%s_%s.jsonl" % (task, n, task)).splitlines() if x.strip()]
        lines = [x for x in show(path).splitlines() if x.startswith("Label: ")]
        assert len(lines) == len(testcases[key]) == 50, path
        for k, (tc, line) in enumerate(zip(testcases[key], lines)):
            pools[(folder, task)].append((path, n, k, tc, line))
    rng = random.Random(SEED)
    drawn = []
    for folder in MODELS:
        model, kind, wrapper = MODELS[folder]
        for task in ("lines", "topics"):
            for path, n, k, tc, line in rng.sample(pools[(folder, task)], PER_TASK):
                tpath = "longeval/evaluation/%s/testcases/%s_%s.jsonl" % (task, n, task)
                if task == "lines":
                    label = str(tc["expected_number"])
                    out, parsed, listed = parse(line, label, task)
                    rec = {"id": "lines-%s:%d" % (n, k), "query": wrap(wrapper, task, tc["prompt"], tc),
                           "answer": int(tc["expected_number"])}
                    hint = "LongEval's own parse (last integer in the output): %s" % parsed
                    t = "TaxCalc"
                else:
                    label = tc["topics"][0]
                    out, parsed, listed = parse(line, label, task)
                    p = tc["prompt"]
                    a = p.index(REC_START) + len(REC_START)
                    b = p.rindex(REC_END)
                    q = wrap(wrapper, task, p[:a] + MARK + p[b:], tc)
                    rec = {"id": "topics-%s:%d" % (n, k), "query": q, "text": p[a:b], "answer": label}
                    hint = None
                    t = "TaxRead"
                src = {"repo": REPO, "commit": COMMIT, "path": path, "item": "line %d (test case %d of %s)" % (k + 1, k, tpath),
                       "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en",
                       "testcases_path": tpath,
                       "output_stored_as": "python list repr, unwrapped" if listed else "plain string (newlines written as spaces)"}
                if task == "topics":
                    src["all_topics"] = tc["topics"]
                drawn.append((t, rec, out, src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as f:
        for i, (t, rec, out, src, hint) in enumerate(drawn, 1):
            case = {"id": "%s-%04d" % (PREFIX, i), "task": t, "record": rec, "output": out, "source": src}
            if hint:
                case["hint"] = hint
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    from collections import Counter
    print(len(drawn), Counter((d[3]["model"], d[0]) for d in drawn))
    print({k: len(v) for k, v in pools.items()})


if __name__ == "__main__":
    main()
