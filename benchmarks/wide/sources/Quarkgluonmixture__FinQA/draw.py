#!/usr/bin/env python3
"""Draw FinQA test-set outputs of Qwen3-4B / Qwen3-8B (base and LoRA-SFT adapters) committed in
Quarkgluonmixture/FinQA (which also holds the whole history of Quarkgluonmixture/Affecting) into drawn.jsonl.

stdlib only. Each run file (one JSON line per FinQA test question, in test order) is read at a pinned commit.
Items whose gold is not numeric (yes/no questions, gold null) are left out. From each run a fixed number of items is
drawn with random.Random(20261213) (runs in the order of RUNS); all cases are then shuffled and numbered.

The FinQA test contexts (gold evidence sentences / pre_text, table, post_text) are not stored in the repository (the
harness loads them from the Hugging Face hub), so `query` carries the exact prompt template of the run with the
question filled in and the context replaced by a bracketed placeholder."""
import json, os, random, subprocess

GIT = "/work/.mirror/Quarkgluonmixture+FinQA/repo"
REPO = "Quarkgluonmixture/FinQA"
PREFIX = "Quarkgluonmixture__FinQA"
SEED = 20261213
HERE = os.path.dirname(os.path.abspath(__file__))

C_INIT = "a65698849ec688bc478d4e6427d0e0a45c653ce4"   # 2026-02-20 "Initial commit: FinQA baseline project"
C_SFT = "8735c0bdc04fe3d4c554bc5c5ed57c4ad898f710"    # 2026-04-12 "Add complete SFT ablation experiment results ..."
R = "finqa_baseline/results/"
PA = R + "sft_clean_strict_prompt_aligned_eval/"
SC = R + "sft_clean_strict/"
FS = R + "sft_clean_strict_fullsteps_eval/"

# run id -> (commit, path, model, model_kind, protocol, setting, max_new_tokens, n)
# protocol: plain = chat (system+user), plain-numeric instruction (code at C_INIT);
#           tag = chat (system+user), [FINAL_ANSWER] instruction (code at C_SFT, chat_default);
#           text = plain-text Stage-1 training-style prompt, no chat template (code at C_SFT, stage1_train_text).
RUNS = [
    ("init/4b_full", C_INIT, R + "finqa_Qwen_Qwen3-4B_full_test.jsonl", "Qwen3-4B", "chat", "plain", "full", 32, 5),
    ("init/4b_oracle", C_INIT, R + "finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B", "chat", "plain", "oracle", 32, 5),
    ("init/8b_full", C_INIT, R + "finqa_Qwen_Qwen3-8B_full_test.jsonl", "Qwen3-8B", "chat", "plain", "full", 32, 5),
    ("init/8b_oracle", C_INIT, R + "finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B", "chat", "plain", "oracle", 32, 5),
    ("thinking_false/4b_full", C_SFT, R + "thinking_false/finqa_Qwen_Qwen3-4B_full_test.jsonl", "Qwen3-4B", "chat", "tag", "full", 256, 6),
    ("thinking_false/4b_oracle", C_SFT, R + "thinking_false/finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B", "chat", "tag", "oracle", 256, 6),
    ("thinking_false/8b_full", C_SFT, R + "thinking_false/finqa_Qwen_Qwen3-8B_full_test.jsonl", "Qwen3-8B", "chat", "tag", "full", 256, 6),
    ("thinking_false/8b_oracle", C_SFT, R + "thinking_false/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B", "chat", "tag", "oracle", 256, 6),
    ("prompt_aligned/4b_zeroshot", C_SFT, PA + "4b_zeroshot_prompt_aligned/finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B", "chat", "text", "oracle", 256, 11),
    ("prompt_aligned/8b_zeroshot", C_SFT, PA + "8b_zeroshot_prompt_aligned/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B", "chat", "text", "oracle", 256, 11),
    ("prompt_aligned/4b_clean_full_answer_only", C_SFT, PA + "4b_clean_full_answer_only/finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B+LoRA:4b_clean_full_answer_only", "domain", "text", "oracle", 256, 11),
    ("prompt_aligned/4b_clean_full_formula_rationale", C_SFT, PA + "4b_clean_full_formula_rationale/finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B+LoRA:4b_clean_full_formula_rationale", "domain", "text", "oracle", 256, 11),
    ("prompt_aligned/8b_clean_full_answer_only", C_SFT, PA + "8b_clean_full_answer_only/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_full_answer_only", "domain", "text", "oracle", 256, 11),
    ("prompt_aligned/8b_clean_250_answer_only", C_SFT, PA + "8b_clean_250_answer_only/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_250_answer_only", "domain", "text", "oracle", 256, 11),
    ("prompt_aligned/8b_clean_1000_answer_only", C_SFT, PA + "8b_clean_1000_answer_only/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_1000_answer_only", "domain", "text", "oracle", 256, 11),
    ("prompt_aligned/8b_clean_full_formula_rationale", C_SFT, PA + "8b_clean_full_formula_rationale/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_full_formula_rationale", "domain", "text", "oracle", 256, 11),
    ("fullsteps/8b_text", C_SFT, FS + "8b_clean_full_answer_only_fullsteps_text/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_full_answer_only_fullsteps", "domain", "text", "oracle", 256, 8),
    ("fullsteps/8b_chat", C_SFT, FS + "8b_clean_full_answer_only_fullsteps_chat/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_full_answer_only_fullsteps", "domain", "tag", "oracle", 256, 4),
    ("sft_clean_strict/4b_clean_full_answer_only", C_SFT, SC + "4b_clean_full_answer_only/finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B+LoRA:4b_clean_full_answer_only", "domain", "tag", "oracle", 256, 1),
    ("sft_clean_strict/4b_clean_full_formula_rationale", C_SFT, SC + "4b_clean_full_formula_rationale/finqa_Qwen_Qwen3-4B_oracle_test.jsonl", "Qwen3-4B+LoRA:4b_clean_full_formula_rationale", "domain", "tag", "oracle", 256, 1),
    ("sft_clean_strict/8b_clean_full_answer_only", C_SFT, SC + "8b_clean_full_answer_only/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_full_answer_only", "domain", "tag", "oracle", 256, 1),
    ("sft_clean_strict/8b_clean_250_answer_only", C_SFT, SC + "8b_clean_250_answer_only/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_250_answer_only", "domain", "tag", "oracle", 256, 1),
    ("sft_clean_strict/8b_clean_1000_answer_only", C_SFT, SC + "8b_clean_1000_answer_only/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_1000_answer_only", "domain", "tag", "oracle", 256, 1),
    ("sft_clean_strict/8b_clean_full_formula_rationale", C_SFT, SC + "8b_clean_full_formula_rationale/finqa_Qwen_Qwen3-8B_oracle_test.jsonl", "Qwen3-8B+LoRA:8b_clean_full_formula_rationale", "domain", "tag", "oracle", 256, 1),
]

TAG = "FINAL_ANSWER"
SYS_PLAIN = "You are a financial QA assistant. ONLY output the final numeric answer; no explanation; no units."
INSTR_PLAIN = "Return ONLY the final numeric answer; no explanation; no units."
SYS_TAG = ("You are a financial QA assistant. Output exactly one final answer wrapped as [%s]...[/%s]. "
           "Inside the tag, include only the final numeric answer (no explanation, no units). "
           "Do not output anything outside the tag." % (TAG, TAG))
INSTR_TAG = "Return exactly one final answer as [%s]<number>[/%s]. No text outside the tag." % (TAG, TAG)
INSTR_TEXT = ("Solve the financial numerical reasoning problem. "
              "Return exactly one tagged final answer as [%s]...[/%s] in the output." % (TAG, TAG))
CTX = {
    "oracle": "[context not stored in the repository: the gold evidence sentences (gold_inds) of this FinQA test item]",
    "full": "[PRE_TEXT]\n[not stored in the repository: pre_text of this FinQA test item]\n[TABLE]\n"
            "[not stored in the repository: table of this FinQA test item]\n[POST_TEXT]\n"
            "[not stored in the repository: post_text of this FinQA test item]",
}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def check_prompt_code():
    """The prompt texts above, checked against the prompt code at the pinned commits."""
    init = git(C_INIT, "finqa_baseline/utils/prompting.py")
    assert SYS_PLAIN.split(". ")[1] in init and INSTR_PLAIN in init
    sft = git(C_SFT, "finqa_baseline/utils/prompting.py")
    for piece in ["Inside the tag, include only the final numeric answer (no explanation, no units). ",
                  "Do not output anything outside the tag.", "No text outside the tag.",
                  "Solve the financial numerical reasoning problem. ", '"Instruction:\\n"', '"Input:\\n"']:
        assert piece in sft, piece


def build_query(protocol, setting, question):
    ctx = CTX[setting]
    if protocol == "plain":
        return SYS_PLAIN + "\n\n" + "Context:\n%s\n\nQuestion:\n%s\n\n%s" % (ctx, question, INSTR_PLAIN)
    if protocol == "tag":
        return SYS_TAG + "\n\n" + "Context:\n%s\n\nQuestion:\n%s\n\n%s" % (ctx, question, INSTR_TAG)
    if protocol == "text":
        return "Instruction:\n%s\n\nInput:\nContext:\n%s\n\nQuestion:\n%s\n" % (INSTR_TEXT, ctx, question)
    raise ValueError(protocol)


def as_number(x):
    x = float(x)
    return int(x) if x == int(x) and abs(x) < 1e15 else round(x, 6)


def main():
    check_prompt_code()
    rng = random.Random(SEED)
    drawn = []
    for run, commit, path, model, kind, protocol, setting, max_new, n in RUNS:
        rows = [json.loads(l) for l in git(commit, path).splitlines() if l.strip()]
        assert len(rows) == 1147, (run, len(rows))
        eligible = [i for i, r in enumerate(rows) if r.get("gold") is not None]
        for i in rng.sample(eligible, n):
            r = rows[i]
            q = r["question"].strip()
            rec = {"id": "finqa-test#%d" % i, "query": build_query(protocol, setting, q), "answer": as_number(r["gold"])}
            hint = "source pred=%s correct=%s" % (r.get("pred"), r.get("correct"))
            src = {"repo": REPO, "commit": commit, "path": path, "item": "%d (gold_text %r)" % (i, r.get("gold_text", "")),
                   "model": model, "model_kind": kind, "shots": "zero-shot", "lang": "en",
                   "run": run, "setting": setting, "protocol": {"plain": "chat_plain_numeric", "tag": "chat_default",
                                                                 "text": "stage1_train_text"}[protocol],
                   "max_new_tokens": max_new, "enable_thinking": False}
            drawn.append(("TaxCalc", rec, r["raw_output"], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for k, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, k), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(RUNS), "runs;", len(drawn), "cases")


if __name__ == "__main__":
    main()
