#!/usr/bin/env python3
"""Draw o1-preview / o1-mini answers to Chinese CPA accounting single-choice questions committed in
huqianghui/CPA-dataset-by-reasoning-models into drawn.jsonl.

stdlib only. The one result workbook of the repository (azure_O1_preview_and_mini_pushHard_v1_result.xlsx,
added in 4bee2a2 and deleted again in 1d8ca08) is read from the pinned commit with `git show` and parsed with
zipfile + regular expressions (inline strings; `_xHHHH_` escapes decoded). Each row holds the question (with its
four options A-D in the text), the gold letter, and per model the raw reply (`<model>-result`) plus the harness's
own JSON-parsed answer (`<model>-answer`, used as the hint). 150 distinct questions are drawn with a fixed seed;
the first 75 are paired with o1-preview's reply, the other 75 with o1-mini's; the cases are then shuffled and
numbered. The query is the user prompt of prompt/cpaUserPrompt_pushHard_v1.py (commit be78487) rendered the way
langchain's f-string template renders it ({{ -> {, ${cpa_question} -> "$" + question)."""
import html, io, json, os, random, re, subprocess, zipfile

GIT = "/work/.mirror/huqianghui+CPA-dataset-by-reasoning-models/repo"
REPO = "huqianghui/CPA-dataset-by-reasoning-models"
PREFIX = "huqianghui__CPA-dataset-by-reasoning-models"
SEED = 20261213
DATA = ("4bee2a25507c6d3e179408264554e2b6f17a52e2", "azure_O1_preview_and_mini_pushHard_v1_result.xlsx")
PROMPT = ("be78487b4783ddf3421bdf917cd89ce295c33026", "prompt/cpaUserPrompt_pushHard_v1.py")
MODELS = ["o1-preview", "o1-mini"]
PER_MODEL = 75
HERE = os.path.dirname(os.path.abspath(__file__))


def git_bytes(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout


def unescape_xlsx(s):
    return re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), s)


def col_index(ref):
    n = 0
    for ch in ref:
        n = n * 26 + ord(ch) - 64
    return n - 1


def cell_text(body):
    m = re.search(r"<is>(.*?)</is>", body, re.S)
    if m:
        raw = "".join(re.findall(r"<t[^>]*>(.*?)</t>", m.group(1), re.S))
    else:
        m = re.search(r"<v>(.*?)</v>", body, re.S)
        raw = m.group(1) if m else ""
    return unescape_xlsx(html.unescape(raw))


def read_sheet(data):
    sheet = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml").decode("utf-8")
    rows = []
    for row in re.findall(r"<row[^>]*>(.*?)</row>", sheet, re.S):
        cells = {}
        for ref, body in re.findall(r'<c r="([A-Z]+)\d+"[^>]*?(?:/>|>(.*?)</c>)', row, re.S):
            cells[col_index(ref)] = cell_text(body or "")
        rows.append(cells)
    header = [rows[0][i] for i in sorted(rows[0])]
    return [{header[i]: r.get(i, "") for i in range(len(header))} for r in rows[1:]]


def parse_options(q):
    """The four option texts from the question's tail (options run on after the last line-initial 'A.')."""
    i = max(q.rfind(sep + "A" + dot) for sep in "\n\r" for dot in ".．、")
    if i < 0:
        return None
    m = re.fullmatch(r"\s*A\s*[.．、](.*?)B\s*[.．、](.*?)C\s*[.．、](.*?)D\s*[.．、](.*?)", q[i + 1:].rstrip(), re.S)
    if not m:
        return None
    opts = [g.strip().strip("\u3000").strip() for g in m.groups()]
    return opts if all(opts) else None


def prompt_template():
    src = git_bytes(*PROMPT).decode("utf-8")
    tpl = re.search(r"userPromptTemplateCPA = '''(.*?)'''", src, re.S).group(1)
    return tpl.replace("{{", "{").replace("}}", "}")


def main():
    rows = read_sheet(git_bytes(*DATA))
    tpl = prompt_template()
    items = []
    for n, r in enumerate(rows, 2):  # n = worksheet row number
        ch = parse_options(r["question"])
        if ch and r["answer"] in "ABCD" and len(r["answer"]) == 1 and \
                all(r[m + "-result"].strip() and not r[m + "-result"].startswith("ERR_001") for m in MODELS):
            items.append((n, r, ch))
    rng = random.Random(SEED)
    picked = rng.sample(items, PER_MODEL * len(MODELS))
    drawn = []
    for k, model in enumerate(MODELS):
        for n, r, ch in picked[k * PER_MODEL:(k + 1) * PER_MODEL]:
            gold = "ABCD".index(r["answer"])
            query = tpl.replace("{cpa_question}", r["question"])  # "${cpa_question}" -> "$" + question
            rec = {"id": "%s#row%d:ID=%s" % (DATA[1], n, r["ID"]), "query": query, "choices": ch,
                   "gold": gold, "answer": ch[gold]}
            src = {"repo": REPO, "commit": DATA[0], "path": DATA[1],
                   "item": "row %d, ID %s, difficulty %s, column %s-result" % (n, r["ID"], r["difficulitiy"], model),
                   "model": model, "model_kind": "reasoning", "shots": "zero-shot", "lang": "zh"}
            hint = "source parsed answer (%s-answer column): %s" % (model, json.dumps(r[model + "-answer"], ensure_ascii=False))
            drawn.append(("TaxSCQ", rec, r[model + "-result"], src, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as out:
        for i, (t, rec, output, src, hint) in enumerate(drawn, 1):
            out.write(json.dumps({"id": "%s-%04d" % (PREFIX, i), "task": t, "record": rec, "output": output,
                                  "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(rows), "rows;", len(items), "usable items;", len(drawn), "cases")


if __name__ == "__main__":
    main()
