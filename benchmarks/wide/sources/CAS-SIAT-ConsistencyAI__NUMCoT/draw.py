#!/usr/bin/env python3
"""Draw NUMCoT (ACL 2024 Findings) model outputs committed in CAS-SIAT-ConsistencyAI/NUMCoT into drawn.jsonl.

stdlib only. The repository commits one CSV per (experiment, model, level, language); each row holds the
item (`number`), the gold (`answer`) and, for every prompt setting (zeroshot, cot_zeroshot, fewshot,
cot_fewshot and, in experiment 2, numcot), the message list sent (`<model>_<setting>_quesion`), the
stored reply (`<model>_<setting>_answer`) and the authors' 0/1 score (`<model>_<setting>_score`).
Only Chinese files with a single-number gold are used (all TaxCalc):
  W  experiment 1, word2num: a Chinese numeral -> the number (easy, medium, hard decimal/point levels);
  U  experiment 2, unit conversion (easy, medium levels; the hard level asks for two numbers and is left out);
  M  experiment 3, math word problems (AddSub, MultiArith, SingleOp, Chinese translations).
Per model a fixed number of cases per stratum is drawn with a fixed seed: a level uniformly, then an
item uniformly among the rows whose reply for at least one setting is a real reply, then a setting
uniformly among those. chatglm2-6b's stored message lists lost their last user turn (the harness popped it
off the list it then stored), so its last user turn is rebuilt from the same template as stored for
gpt-3.5-turbo with the item substituted (checked: the kept history equals gpt-3.5-turbo's)."""
import ast, csv, io, json, os, random, re, subprocess

GIT = "/work/.mirror/CAS-SIAT-ConsistencyAI+NUMCoT/repo"
REPO = "CAS-SIAT-ConsistencyAI/NUMCoT"
PREFIX = "CAS-SIAT-ConsistencyAI__NUMCoT"
COMMIT = "437a60b6faf015b456c4ada48cdd78d3005befb1"  # HEAD, 2024-06-06 (CSVs unchanged since a7a871e)
SEED = 20261215
HERE = os.path.dirname(os.path.abspath(__file__))
HOW = {}  # how chatglm2-6b's last user turns were rebuilt (printed)

MODELS = {  # file key -> (model name, kind)
    "chatGPT": ("gpt-3.5-turbo", "api"),
    "zhipu": ("chatglm_turbo (Zhipu API)", "api"),
    "wenxinyy": ("ERNIE-Bot-turbo (eb-instant)", "api"),
    "chatglm26b": ("chatglm2-6b (langchain-chatchat, temperature 0.7)", "chat"),
}
# per model: stratum -> number of cases
PLAN = {
    "chatGPT": {"W": 13, "U": 13, "M": 12},
    "zhipu": {"W": 13, "U": 13, "M": 12},
    "wenxinyy": {"W": 19, "U": 18},
    "chatglm26b": {"W": 19, "U": 18},
}
SHOTS = {"zeroshot": "zero-shot", "cot_zeroshot": "cot", "fewshot": "few-shot", "cot_fewshot": "cot", "numcot": "cot"}
FILE_RE = re.compile(r"datasets/data/(experience_first|experience_second|experience_third)/"
                     r"(?:(word2num|num2word)_)?(chatGPT|chatglm26b|wenxinyy|zhipu)_(.+?)_2024\d+_\d+\.csv$")


def git(*args):
    return subprocess.run(["git", "--git-dir", GIT, "-c", "core.quotepath=off"] + list(args),
                          check=True, capture_output=True).stdout.decode("utf-8-sig")


def rows(path):
    return list(csv.DictReader(io.StringIO(git("show", "%s:%s" % (COMMIT, path)))))


def stratum(exp, task, level):
    """(stratum, level) for a usable Chinese file, else None."""
    if exp == "experience_first":
        if task != "word2num" or level not in ("easy_zh", "medium_zh", "hard_decimal_zh", "hard_point_zh"):
            return None
        return "W", {"hard_point_zh": "hard_decimal_zh"}.get(level, level)
    if exp == "experience_second":
        return ("U", level) if level in ("easy_zh", "medium_zh") else None
    if level in ("AddSub_zh", "MultiArith_zh", "SingleOp_zh"):
        return "M", level
    return None


def real_reply(text):
    t = (text or "").strip()
    if not t or "需要重跑" in t or t.startswith("error-") or t.startswith('{"text"'):
        return False
    return True


def gold_number(a):
    a = a.strip()
    if not re.fullmatch(r"-?\d+(\.\d+)?", a):
        return None
    return int(a) if "." not in a else float(a)


def render(messages):
    if len(messages) == 1:
        return messages[0]["content"]
    parts = []
    for m in messages:
        role = {"user": "User", "assistant": "Assistant", "system": "System"}[m["role"]]
        parts.append("%s: %s" % (role, m["content"]))
    return "\n\n".join(parts)


def main():
    files = [f for f in git("ls-tree", "-r", "--name-only", COMMIT).splitlines() if FILE_RE.match(f)]
    table = {}  # (model, stratum) -> {level: [(path, exp, task, levelname)]}
    ref = {}  # (exp, task, level) -> gpt-3.5-turbo file (template for chatglm2-6b's last turn)
    for f in sorted(files):
        exp, task, model, level = FILE_RE.match(f).groups()
        s = stratum(exp, task, level)
        if not s:
            continue
        table.setdefault((model, s[0]), {}).setdefault(s[1], []).append((f, exp, task, level))
        ref[(model, exp, task, level)] = f
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = rows(path)
        return cache[path]

    def prompt_for(model, path, exp, task, level, row, setting):
        q = row["%s_%s_quesion" % (model, setting)]
        msgs = ast.literal_eval(q) if q.strip() else []
        if model != "chatglm26b":
            assert msgs and msgs[-1]["role"] == "user" and row["number"] in msgs[-1]["content"], (path, setting)
            return msgs
        # the last user turn as stored for another model of the same run whose kept history is the same
        for other in ("chatGPT", "zhipu", "wenxinyy"):
            rpath = ref.get((other, exp, task, level))
            if not rpath:
                continue
            for rrow in get(rpath):
                rmsgs = ast.literal_eval(rrow["%s_%s_quesion" % (other, setting)])
                last = rmsgs[-1]["content"]
                if last.count(rrow["number"]) == 1:
                    break
            if rmsgs[:-1] == msgs:
                HOW[("same history as " + other)] = HOW.get("same history as " + other, 0) + 1
                return msgs + [{"role": "user", "content": last.replace(rrow["number"], row["number"])}]
        # else (few-shot): its own last demonstration's user turn with the item substituted
        assert len(msgs) >= 2 and msgs[-2]["role"] == "user", (path, setting)
        demo = msgs[-2]["content"]
        m = re.search(r"题目：(.*?)\s*答案：", demo, re.S)
        assert m, (path, setting)
        HOW["own last demonstration"] = HOW.get("own last demonstration", 0) + 1
        return msgs + [{"role": "user", "content": demo[:m.start(1)] + row["number"] + demo[m.end(1):]}]

    rng = random.Random(SEED)
    drawn = []
    for model in ("chatGPT", "zhipu", "wenxinyy", "chatglm26b"):
        name, kind = MODELS[model]
        for st, n in PLAN[model].items():
            levels = table[(model, st)]
            seen = set()
            picked = 0
            while picked < n:
                level = rng.choice(sorted(levels))
                path, exp, task, lev = rng.choice(levels[level])
                rs = get(path)
                i = rng.randrange(len(rs))
                if (path, i) in seen:
                    continue
                seen.add((path, i))
                row = rs[i]
                gold = gold_number(row["answer"])
                if gold is None:
                    continue
                settings = [s for s in SHOTS if ("%s_%s_answer" % (model, s)) in row
                            and real_reply(row["%s_%s_answer" % (model, s)])]
                if not settings:
                    continue
                setting = rng.choice(settings)
                msgs = prompt_for(model, path, exp, task, lev, row, setting)
                rec = {"id": "%s#%d" % (path.split("/")[-1], i), "query": render(msgs), "answer": gold}
                drawn.append({
                    "task": "TaxCalc", "record": rec, "output": row["%s_%s_answer" % (model, setting)],
                    "source": {"repo": REPO, "commit": COMMIT, "path": path, "item": "row %d (%s) %s" % (i, row["number"], setting),
                               "model": name, "model_kind": kind, "shots": SHOTS[setting], "lang": "zh",
                               "prompt_setting": setting, "experiment": exp + (("/" + task) if task else ""),
                               "level": lev},
                    "hint": "source score %s" % row.get("%s_%s_score" % (model, setting), "").strip(),
                })
                picked += 1
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as fh:
        for k, c in enumerate(drawn, 1):
            c = {"id": "%s-%04d" % (PREFIX, k), **c}
            fh.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(len(drawn), "cases;", "chatglm2-6b last turns:", HOW)


if __name__ == "__main__":
    main()
