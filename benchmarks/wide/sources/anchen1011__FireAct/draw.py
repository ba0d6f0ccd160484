#!/usr/bin/env python3
"""Draw FireAct HotpotQA agent trajectories (ReAct with a search tool) of three fine-tuned models.

Outputs: anchen1011/FireAct, trajs/hotpotqa_dev_0_500_*.json (one object per HotpotQA dev index:
reward, em, f1, gt, pred, traj). Gold: data/hotpotqa/dev.json at the same commit (the log's `gt` is the
normalised gold; every drawn item's dev answer is checked to normalise to it). Stdlib only; fixed seed;
writes drawn.jsonl.
"""
import json, os, random, re, string, subprocess

GD = os.environ.get("FIREACT_GIT", "/work/.mirror/anchen1011+FireAct/repo")
REPO = "anchen1011/FireAct"
COMMIT = "94c6189f04b10fccae6bcd97a4632d6119266899"
SEED = 20261206
PER_MODEL = 45
HERE = os.path.dirname(os.path.abspath(__file__))
FILES = [
    ("trajs/hotpotqa_dev_0_500_ft_gpt-3.5-turbo-0613_princeton-nlp__7woQRsdi_0.0_2023-09-21-16-19-51.json",
     "gpt-3.5-turbo-0613 fine-tuned (FireAct, HotpotQA ReAct trajectories)", "api"),
    ("trajs/hotpotqa_dev_0_500_llama_models_lora_llama-2-13b-d_1000_0.7_2023-09-18-13-40-08.json",
     "Llama-2-13B LoRA fine-tuned (FireAct)", "domain"),
    ("trajs/hotpotqa_dev_0_500_llama_models_lora_llama-2-7b-d_1000_0.7_2023-09-19-00-49-36.json",
     "Llama-2-7B LoRA fine-tuned (FireAct)", "domain"),
]
END = re.compile(r"\nObservation: Episode finished, reward = (True|False)\n?$")


def show(path):
    return subprocess.run(["git", "--git-dir", GD, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout.decode("utf-8")


def normalize_answer(s):  # tasks/hotpotqa.py, to check the gold against the log's gt
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def split_traj(v):
    """(query, output, observations, final reward line) from one logged trajectory."""
    t = v["traj"]
    if isinstance(t, list):                       # chat format: user question, then assistant/observation turns
        query = t[0]["content"]
        body = "\n".join(m["content"] for m in t[1:])
    else:                                         # alpaca format: the prompt, then the transcript
        head, sep, body = t.partition("### Response:\n")
        assert sep, "no response marker"
        query = head + sep
        query = query.rstrip("\n")
    m = END.search(body if body.endswith("\n") else body + "\n")
    assert m, "no final reward observation"
    output = (body if body.endswith("\n") else body + "\n")[:m.start()]
    obs = [l[len("Observation:"):].strip() for l in output.split("\n") if l.startswith("Observation:")]
    return query, output, obs, m.group(0).strip()


def main():
    rng = random.Random(SEED)
    dev = json.loads(show("data/hotpotqa/dev.json"))
    cases = []
    for path, label, kind in FILES:
        d = json.loads(show(path))
        keys = sorted(d, key=int)
        for k in sorted(rng.sample(keys, PER_MODEL), key=int):
            v = d[k]
            gold = dev[int(k)]["answer"]
            assert normalize_answer(gold) == v["gt"], (k, gold, v["gt"])
            query, output, obs, last = split_traj(v)
            rec = {"id": f"hotpotqa-dev-{k}", "query": query, "text": "\n\n".join(obs), "answer": gold}
            src = {"repo": REPO, "commit": COMMIT, "path": path, "item": f"hotpotqa dev index {k}",
                   "model": label, "model_kind": kind, "shots": "zero-shot", "lang": "en"}
            hint = f"{last}; em={v['em']}; pred={v['pred']!r}"
            cases.append({"task": "TaxRead", "record": rec, "output": output, "source": src, "hint": hint})
    with open(os.path.join(HERE, "drawn.jsonl"), "w", encoding="utf-8") as f:
        for i, c in enumerate(cases, 1):
            f.write(json.dumps({"id": f"anchen1011__FireAct-{i:04d}", **c}, ensure_ascii=False) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
