#!/usr/bin/env python3
"""Draw cases from g1y5x3/llm_gaokao response files (stdlib only, fixed seed)."""
import ast, json, os, random, re, subprocess, collections

REPO = "g1y5x3/llm_gaokao"
GITDIR = "/work/.mirror/g1y5x3+llm_gaokao/repo"
HEAD = "2931413992a9a25a22509a1656a98cfb595cf214"
SEED = 20261206
PER_MODEL = 14
HERE = os.path.dirname(os.path.abspath(__file__))
SRCID = "g1y5x3__llm_gaokao"

def git(*a):
    return subprocess.run(["git", "--git-dir", GITDIR] + list(a), capture_output=True, check=True).stdout.decode("utf-8")

def full(c):
    return git("rev-parse", c).strip()

# (commit-ish, path): HEAD files, and files deleted later read from the parent of the deleting commit
VERSIONS = []
for p in git("ls-tree", "-r", "--name-only", HEAD, "response/").splitlines():
    if p.endswith(".md") and not p.startswith("response/Yi-1.5-9B-Chat"):
        VERSIONS.append((HEAD, p))
for c, names in [("27c1702^", ["Meta-Llama-3-70B-Instruct-2024_math_national1", "Meta-Llama-3-70B-Instruct-2024_math_shanghai",
                               "Meta-Llama-3-8B-Instruct-2024_math_national1", "Meta-Llama-3-8B-Instruct-2024_math_shanghai",
                               "Qwen2-7B-Instruct-2024_math_national1", "Qwen2-7B-Instruct-2024_math_shanghai",
                               "Yi-1.5-34B-Chat-2024_math_national1", "Yi-1.5-34B-Chat-2024_math_shanghai",
                               "Yi-1.5-9B-Chat-2024_math_national1", "Yi-1.5-9B-Chat-2024_math_shanghai",
                               "deepseek-chat-2024_math_national1", "deepseek-chat-2024_math_shanghai"]),
                 ("961c955^", ["Mistral-7B-Instruct-v0.3-2024_math_shanghai"]),
                 ("80b158f^", ["deepseek-math-7b-instruct-2024_math_shanghai"]),
                 ("4490a7d^", ["DeepSeek-V2-Lite-Chat-2024_math_shanghai"])]:
    for n in names:
        VERSIONS.append((full(c), f"response/{n}.md"))

SCRIPT = [("claude", "llm_gaokao_claude.py"), ("deepseek-coder", "llm_gaokao_deepseek.py"), ("deepseek-chat", "llm_gaokao_deepseek.py"),
          ("deepseek-math", "llm_gaokao_deepseek.py"), ("DeepSeek-V2", "llm_gaokao_deepseek.py"), ("gpt-4o", "llm_gaokao_gpt4.py"),
          ("gemini", "llm_gaokao_gemini.py"), ("Qwen2", "llm_gaokao_qwen.py"), ("yi-large", "llm_gaokao_yi-large.py"),
          ("Yi-1.5", "llm_gaokao_yi.py"), ("Llama", "llm_gaokao_llama.py"), ("Mistral", "llm_gaokao_mistral.py")]

def last_commit(commit, path):
    return git("log", "-1", "--format=%H", commit, "--", path).strip()

def instruct_for(commit, path, english):
    """The instruction the generating script appended, read from that script at the commit that wrote the file."""
    wc = last_commit(commit, path)
    script = next(s for k, s in SCRIPT if k in path)
    for s in [script, "llm_gaokao_deepseek_api.py", "llm_gaokao_deepseek_hf.py"]:
        try:
            src = git("show", f"{wc}:{s}")
        except subprocess.CalledProcessError:
            continue
        pat = r'"(\\n)?Please solve[^"]*"' if english else r'"\\n请通过逐步推理[^"]*"'
        m = re.search(pat, src)
        if m:
            return ast.literal_eval(m.group(0)), wc, s
    return None, wc, None

def parse(text):
    secs = re.split(r"^#### (\d+)\n", text, flags=re.M)
    out = []
    for k in range(1, len(secs), 2):
        num, body = secs[k], secs[k + 1]
        m = re.match(r"Prompt: (.*?)\n\nResponse:\n\n(.*)\n\nAnswer:(.*?)\s*$", body, flags=re.S)
        if not m:
            continue
        out.append((int(num), m.group(1), m.group(2), m.group(3).strip()))
    return out

def options(prompt):
    # options either on their own lines ("\nA. ...") or inline (" A. ... B. ...")
    parts = re.split(r"(?:^|\n|\s)([A-D])[\.．]\s*", prompt)
    if len(parts) < 9:
        return None
    letters = parts[1::2]
    if letters != ["A", "B", "C", "D"]:
        return None
    return [x.strip() for x in parts[2::2]]

def number(ans):
    a = ans.strip().strip("$").strip()
    a = a.replace("\\dfrac", "\\frac")
    m = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", a)
    if m:
        v = int(m.group(2)) / int(m.group(3))
        return -v if m.group(1) else v
    m = re.fullmatch(r"-?\d+(\.\d+)?", a)
    if m:
        return float(a) if "." in a else int(a)
    return None

def model_of(path):
    n = path.rsplit("/", 1)[1][:-3]
    return re.sub(r"-2024_math_.*$", "", n)

def kind(m):
    l = m.lower()
    if any(k in l for k in ["claude", "gpt-4o", "gemini", "yi-large", "deepseek-coder", "deepseek-chat"]):
        return "api"
    if "math" in l:
        return "domain"
    return "chat"

bymodel = collections.defaultdict(list)
notes = []
for commit, path in VERSIONS:
    english = path.endswith("_english.md")
    ins, wc, script = instruct_for(commit, path, english)
    notes.append((path, commit, wc, script, ins))
    for num, prompt, resp, ans in parse(git("show", f"{commit}:{path}")):
        opts = options(prompt)
        if opts and re.fullmatch(r"[A-D]+", ans):
            if len(ans) == 1:
                task = "TaxSCQ"
                g = "ABCD".index(ans)
                rec = {"choices": opts, "gold": g, "answer": opts[g]}
            else:
                task = "TaxMCQ"
                rec = {"answer": "".join(sorted(ans))}
        elif not opts and number(ans) is not None:
            task = "TaxCalc"
            rec = {"answer": number(ans)}
        else:
            continue  # open-ended, proof, expression or set answers left out
        query = prompt + (ins or "")
        rec = {"id": f"{path}#{num}", "query": query, **rec}
        m = model_of(path)
        bymodel[m].append({"task": task, "record": rec, "output": resp,
                           "source": {"repo": REPO, "commit": commit, "path": path, "item": str(num), "model": m,
                                      "model_kind": kind(m), "shots": "cot", "lang": "en" if english else "zh"},
                           "hint": f"source gold line: Answer:{ans}"})

rng = random.Random(SEED)
out = []
for m in sorted(bymodel):
    cands = bymodel[m]
    out += rng.sample(cands, min(PER_MODEL, len(cands)))
rng.shuffle(out)
with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
    for n, c in enumerate(out, 1):
        c.pop("hint", None)
        f.write(json.dumps({"id": f"{SRCID}-{n:04d}", **c}, ensure_ascii=False) + "\n")
with open(os.path.join(HERE, "versions.txt"), "w", encoding="utf-8") as f:
    for path, commit, wc, script, ins in notes:
        f.write(f"{path}\tread_at={commit}\twritten_at={wc}\tscript={script}\tinstruct={ins!r}\n")
print(len(out), "cases;", {m: len(v) for m, v in bymodel.items()})
