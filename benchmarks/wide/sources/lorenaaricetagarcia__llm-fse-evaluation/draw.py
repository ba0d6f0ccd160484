#!/usr/bin/env python3
"""Draw Spanish FSE exam (MIR and the other FSE specialities) model outputs committed in
lorenaaricetagarcia/llm-fse-evaluation into drawn.jsonl.

stdlib only. The per-model result files under results/2_models/<condition>/<model>/<EXAM>_<model>.json (HEAD
e4fc860) hold, for every question, the question record (stem, 4 options, gold `respuesta_correcta` 1-4), the
model's raw reply (`<model>_texto`) and the harness's extracted option (`<model>`, first standalone digit 1-4).
The blobs are identical to those the author committed under Lorena/results/2_models/1_prompt/ at 66b452d, next to
the scripts that produced them (Lorena/code/2_models/*.py at 66b452d), from which the prompts are rebuilt.

Six models; 25 cases a model, spread over the prompt conditions the model has (no prompt, Spanish instruction,
English instruction). Items: gold 1-4, non-empty reply, reply at most 8000 characters. Seed 20261213."""
import ast, json, os, random, re, subprocess

GIT = "/work/.mirror/lorenaaricetagarcia+llm-fse-evaluation/repo"
REPO = "lorenaaricetagarcia/llm-fse-evaluation"
PREFIX = "lorenaaricetagarcia__llm-fse-evaluation"
SEED = 20261213
HEAD = "e4fc860b2a8cdb440af86d493f8a2e7a2ba27af8"
CODE = "66b452d4afbc8824b6c55c541aa7de190ef04570"   # 2025-11-14 "Results updated": the author's own scripts
HERE = os.path.dirname(os.path.abspath(__file__))
PER_MODEL = 25
MAX_CHARS = 8000
EXAMS = ["BIOLOGÍA", "ENFERMERÍA", "FARMACIA", "FÍSICA", "MEDICINA", "PSICOLOGÍA", "QUÍMICA"]

# condition -> (result folder, script whose prompt prefix was used, or None for the bare question)
CONDITIONS = {
    "no_prompt": ("results/2_models/1_no_prompt", None),
    "prompt_es": ("results/2_models/2_prompt_es", "Lorena/code/2_models/2_prompt_es.py"),
    "prompt_es_deepseek": ("results/2_models/2_prompt_es", "Lorena/code/2_models/3_prompt_deepseek_phi3.py"),
    "prompt_en": ("results/2_models/3_prompt_en", "Lorena/code/2_models/4_prompt_en.py"),
}
# model name (as reported) -> list of (condition, folder/file model key)
MODELS = {
    "llama3": [("no_prompt", "llama3"), ("prompt_es", "llama3"), ("prompt_en", "llama3")],
    "mistral": [("no_prompt", "mistral"), ("prompt_es", "mistral"), ("prompt_en", "mistral")],
    "gemma": [("no_prompt", "gemma"), ("prompt_es", "gemma"), ("prompt_en", "gemma")],
    "deepseek-coder": [("no_prompt", "deepseek-coder"), ("prompt_es", "deepseek-coder"), ("prompt_en", "deepseek-coder")],
    "phi3": [("no_prompt", "phi3"), ("prompt_es", "phi3"), ("prompt_en", "phi3")],
    # the Spanish run of deepseek-llm was made by 3_prompt_deepseek_phi3.py under the key "deepseek"
    "deepseek-llm": [("prompt_es_deepseek", "deepseek"), ("prompt_en", "deepseek-llm")],
}


def git(commit, path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True).stdout.decode("utf-8")


def prompt_prefix(script):
    if script is None:
        return ""
    tree = ast.parse(git(CODE, script))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PROMPT_INICIAL" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(script)


def build_query(prefix, q):
    # prompt = PROMPT_INICIAL + enunciado + "\n\n" + "1. opt\n2. opt\n..." (sent to Ollama /api/generate)
    s = prefix + q["enunciado"] + "\n\n"
    for i, o in enumerate(q["opciones"], 1):
        s += "%d. %s\n" % (i, o)
    return s


def main():
    rng = random.Random(SEED)
    drawn = []
    for model in sorted(MODELS):
        runs = MODELS[model]
        n = len(runs)
        quotas = [PER_MODEL // n + (1 if i < PER_MODEL % n else 0) for i in range(n)]
        for (cond, key), quota in zip(runs, quotas):
            folder, script = CONDITIONS[cond]
            prefix = prompt_prefix(script)
            pool = []
            for exam in EXAMS:
                path = "%s/%s/%s_%s.json" % (folder, key, exam, key)
                qs = json.loads(git(HEAD, path))["preguntas"]
                for idx, q in enumerate(qs):
                    gold = q.get("respuesta_correcta")
                    out = q.get(key + "_texto") or ""
                    opts = q.get("opciones") or []
                    if not isinstance(gold, int) or not 1 <= gold <= len(opts) or len(opts) != 4:
                        continue
                    if not all(isinstance(o, str) and o.strip() for o in opts):
                        continue
                    if not out.strip() or len(out) > MAX_CHARS:
                        continue
                    pool.append((path, idx, q, out))
            for path, idx, q, out in rng.sample(pool, quota):
                rec = {"id": "%s/%s#%s" % (q.get("titulacion"), q.get("convocatoria"), q.get("numero")),
                       "query": build_query(prefix, q), "choices": list(q["opciones"]),
                       "gold": q["respuesta_correcta"] - 1, "answer": q["opciones"][q["respuesta_correcta"] - 1]}
                sel = q.get(key)
                hint = "source extracted option: %s" % (sel if sel is not None else "none")
                drawn.append(("TaxSCQ", rec, out, {
                    "repo": REPO, "commit": HEAD, "path": path,
                    "item": "%d:%s:%s:%s" % (idx, q.get("archivo_origen"), q.get("numero"), cond.replace("_deepseek", "")),
                    "model": model, "model_kind": "chat", "shots": "zero-shot", "lang": "es"}, hint))
    rng.shuffle(drawn)
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for n, (t, rec, out, src, hint) in enumerate(drawn, 1):
            f.write(json.dumps({"id": "%s-%04d" % (PREFIX, n), "task": t, "record": rec, "output": out,
                                "source": src, "hint": hint}, ensure_ascii=False) + "\n")
    print(len(drawn), "cases")


if __name__ == "__main__":
    main()
