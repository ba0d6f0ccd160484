#!/usr/bin/env python3
"""Draw Malay grammar / PT3 exam choice answers committed in mesolitica/llm-benchmarks into drawn.jsonl.

stdlib only. Only the runs that store the model's whole reply are used (OpenAI chat, Anthropic Messages,
Anthropic Bedrock completions); the local Hugging Face runs store only the first word of a 3-token sample
and are left out. Claude 1.3 / Claude 2 replies are in pickles of plain lists and dicts; they are opened
only after checking (pickletools) that the pickle holds no global, reduce or object opcode, so nothing in
them can run. Per model, a fixed number of items is drawn in each (benchmark, shots) cell with a fixed
seed among the items whose reply is present; all cases are then shuffled and numbered."""
import io, json, os, pickle, pickletools, random, re, subprocess

GIT = "/work/.mirror/mesolitica+llm-benchmarks/repo"
REPO = "mesolitica/llm-benchmarks"
PREFIX = "mesolitica__llm-benchmarks"
SEED = 20261214
HERE = os.path.dirname(os.path.abspath(__file__))

C_GPT35 = "312404662d0cc5cb0286685072d62c00501654e3"   # 2023-11-10 (gpt-3.5-turbo-0613 BM-PT3 files)
C_GPT35T = "a5172cb15cd8dcca192e67693dcdb8a79eb383ef"  # 2023-11-11 (gpt-3.5-turbo-0613 tatabahasa files)
C_GPT4 = "63ce55cda551894afc4420f113e97d3ccd5ada03"    # 2023-11-11 (gpt-4-1106-preview files)
C_CL12 = "5151b3bb0d285aeea43ac612ed0e6919bab4a8ae"    # 2023-11-28 "added claude" (Claude 1.3 / 2 pickles)
C_CL3 = "6f87de758dc4b2dded3587ae99b74e4c2be5be7f"     # 2024-04-01 HEAD (Claude 3 jsonl, last versions)

SYS_GPT = "answer only, no need to explain"
SYS_CL3 = "You are a helpful and smart malaysia assistant who answer only in Malay language."
HUMAN_CL12 = ("\n\nHuman:I will ask you a question in Malay. Give me the correct option only and nothing else. "
              "\n\n{input}\n\nAssistant:")

# model -> (kind, style, {(bench, shots): (commit, path)})
T, P = "tatabahasa", "BM-PT3"
RUNS = {
    "gpt-3.5-turbo-0613": ("api", "gpt", {
        (T, 0): (C_GPT35T, "tatabahasa/gpt-3.5-turbo-0613/output-0shot.json"),
        (T, 1): (C_GPT35T, "tatabahasa/gpt-3.5-turbo-0613/output-1shot.json"),
        (T, 3): (C_GPT35T, "tatabahasa/gpt-3.5-turbo-0613/output-3shot.json"),
        (P, 0): (C_GPT35, "BM-PT3/gpt-3.5-turbo-0613/output-0shot.json"),
        (P, 1): (C_GPT35, "BM-PT3/gpt-3.5-turbo-0613/output-1shot.json"),
        (P, 3): (C_GPT35, "BM-PT3/gpt-3.5-turbo-0613/output-3shot.json")}),
    "gpt-4-1106-preview": ("api", "gpt", {
        (T, 0): (C_GPT4, "tatabahasa/gpt-4-1106-preview/output-0shot.json"),
        (T, 1): (C_GPT4, "tatabahasa/gpt-4-1106-preview/output-1shot.json"),
        (T, 3): (C_GPT4, "tatabahasa/gpt-4-1106-preview/output-3shot.json"),
        (P, 0): (C_GPT4, "BM-PT3/gpt-4-1106-preview/output-0shot.json"),
        (P, 1): (C_GPT4, "BM-PT3/gpt-4-1106-preview/output-1shot.json"),
        (P, 3): (C_GPT4, "BM-PT3/gpt-4-1106-preview/output-3shot.json")}),
    "claude-1.3 (bedrock anthropic.claude-v1)": ("api", "cl12", {
        (T, 0): (C_CL12, "tatabahasa/claude1.3/0shot/save_c1_2.pkl"),
        (T, 1): (C_CL12, "tatabahasa/claude1.3/1shot/save_c1.pkl"),
        (T, 3): (C_CL12, "tatabahasa/claude1.3/3shot/save_c1_2.pkl")}),
    "claude-2 (bedrock anthropic.claude-v2)": ("api", "cl12", {
        (T, 0): (C_CL12, "tatabahasa/claude2/0shot/save_c2.pkl"),
        (T, 1): (C_CL12, "tatabahasa/claude2/1shot/save_c2_3.pkl"),
        (T, 3): (C_CL12, "tatabahasa/claude2/3shot/save_c2.pkl")}),
}
for _m in ("claude-3-haiku-20240307", "claude-3-sonnet-20240229", "claude-3-opus-20240229"):
    RUNS[_m] = ("api", "cl3", {
        (T, k): (C_CL3, "tatabahasa/%s/tatabahasa-shot-%d-%s.jsonl" % (_m, k, _m)) for k in (0, 1, 3)})
    RUNS[_m][2].update({
        (P, k): (C_CL3, "BM-PT3/%s/bm_pt3-shot-%d-%s.jsonl" % (_m, k, _m)) for k in (0, 1, 3)})

# cases per (bench, shots) cell: 21 a model
N_WITH_PT3 = {(T, 0): 5, (T, 1): 5, (T, 3): 5, (P, 0): 2, (P, 1): 2, (P, 3): 2}
N_TATA_ONLY = {(T, 0): 7, (T, 1): 7, (T, 3): 7}

BAD_OPS = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "BUILD",
           "EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID"}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout


def safe_pickle(b):
    for op, _, _ in pickletools.genops(io.BytesIO(b)):
        if op.name in BAD_OPS:
            raise ValueError("pickle opcode %s refused" % op.name)
    return pickle.loads(b)


def load(commit, path, style):
    """[(question dict, reply text, prompt as stored or None)] for the items with a reply."""
    b = git(commit, path)
    out = []
    if style == "cl3":
        for line in b.decode("utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                out.append((d["question"], d["message"], d["prompt"]))
    else:
        rows = safe_pickle(b) if path.endswith(".pkl") else json.loads(b)
        for d in rows:
            if isinstance(d.get("output"), str) and d["output"].strip():
                out.append((d, d["output"], None))
    return out


def convert_prompt(q):  # the repo's convert_prompt(row, answer=False)
    return ("\nobjektif: %s\nsoalan: %s\n    " % (q["objektif"], q["soalan"])).strip()


def parse_choices(soalan):
    lines = soalan.split("\n")
    opts = []
    for ln in lines:
        m = re.match(r"^([A-J])\.\s*(.*)$", ln.strip())
        if m:
            opts.append((m.group(1), m.group(2).strip()))
    # the options are the last run A, B, C, ... in order
    letters = [l for l, _ in opts]
    for start in range(len(opts)):
        seq = letters[start:]
        if seq == [chr(65 + i) for i in range(len(seq))] and 2 <= len(seq) <= 10:
            texts = [t for _, t in opts[start:]]
            if all(texts):
                return texts
    return None


def gold_letter(j):
    j = (j or "").strip()
    return j[0] if j and j[0] in "ABCDEFGHIJ" and (len(j) == 1 or not j[1].isalpha()) else None


def build_query(style, q, shots, stored):
    if style == "cl3":
        return SYS_CL3 + "\n\n" + stored
    user = convert_prompt(q)
    if style == "gpt":
        return SYS_GPT + "\n\n" + user
    return HUMAN_CL12.format(input=user)


def main():
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(RUNS):
        kind, style, cells = RUNS[model]
        plan = N_WITH_PT3 if (P, 0) in cells else N_TATA_ONLY
        for cell in sorted(plan):
            commit, path = cells[cell]
            usable = []
            for q, reply, stored in load(commit, path, style):
                g = gold_letter(q["jawapan"])
                ch = parse_choices(q["soalan"])
                if g is None or ch is None or ord(g) - 65 >= len(ch):
                    continue
                usable.append((q, reply, stored, g, ch))
            usable.sort(key=lambda x: int(x[0]["no"]))
            for q, reply, stored, g, ch in rng.sample(usable, plan[cell]):
                bench, shots = cell
                gi = ord(g) - 65
                rec = {"id": "%s#%s" % (bench, q["no"]), "query": build_query(style, q, shots, stored),
                       "choices": ch, "gold": gi, "answer": ch[gi]}
                src = {"repo": REPO, "commit": commit, "path": path,
                       "item": "%s:no=%s:%d-shot" % (bench, q["no"], shots),
                       "model": model, "model_kind": kind,
                       "shots": "zero-shot" if shots == 0 else "few-shot", "lang": "other"}
                drawn.append(("TaxSCQ", rec, reply, src))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w") as out:
        for n, (t, rec, output, src) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": output,
                                  "source": src}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
