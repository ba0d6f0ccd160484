#!/usr/bin/env python3
"""Draw cases from KbsdJames/Omni-MATH GPT_eval/examples (model generations on Omni-MATH, numeric golds only). stdlib only."""
import json, math, os, random, re, subprocess

GITDIR = '/work/.mirror/KbsdJames+Omni-MATH/repo'
COMMIT = '5aac08bc8ebeef5511e244c094194321209550af'  # last commit where both example files are plain text (later: LFS / deleted)
REPO = 'KbsdJames/Omni-MATH'
SEED = 20261206
PER_MODEL = 25
HERE = os.path.dirname(os.path.abspath(__file__))
FILES = [('GPT_eval/examples/internlm2-math-plus-mixtral8x22b_gpteval.jsonl', 'internlm/internlm2-math-plus-mixtral8x22b', 'domain'),
         ('GPT_eval/examples/meta_llama_3-1_70b_instruct_gpteval.jsonl', 'meta-llama/Meta-Llama-3.1-70B-Instruct', 'chat')]

def show(path):
    return subprocess.run(['git', '--git-dir', GITDIR, 'show', f'{COMMIT}:{path}'], capture_output=True, text=True, check=True).stdout

def gold_number(a):
    """The reference answer as a number when it is plainly one (integer, decimal, a/b, k*sqrt(m), degrees); else None."""
    s = a.strip()
    s = re.sub(r'^\\\(\s*\\boxed\{(.*)\}\s*\\\)$', r'\1', s)
    s = s.strip('$ ').replace('^\\circ', '').replace('^{\\circ}', '')
    if re.fullmatch(r'-?\d+(\.\d+)?', s):
        v = float(s)
    elif re.fullmatch(r'\\frac\{(\d+)\}\{(\d+)\}', s):
        p, q = re.fullmatch(r'\\frac\{(\d+)\}\{(\d+)\}', s).groups(); v = int(p) / int(q)
    elif re.fullmatch(r'(\d*)\\sqrt\{(\d+)\}', s):
        k, m = re.fullmatch(r'(\d*)\\sqrt\{(\d+)\}', s).groups(); v = (int(k) if k else 1) * math.sqrt(int(m))
    else:
        return None
    return int(v) if v == int(v) else round(v, 6)

def judge_hint(gen):
    """The source's own GPT-judge extraction and verdict (field 'gen'), shortened."""
    if isinstance(gen, list):
        gen = gen[0] if gen else ''
    gen = gen or ''
    m = re.search(r'## Student Final Answer\s*(.*?)\s*## Equivalence Judgement\s*(\w+)', gen, re.S)
    if not m:
        return 'source judge output not parsed'
    return f'source judge: extracted {m.group(1).strip()[:120]!r}, verdict {m.group(2)}'

def main():
    rng = random.Random(SEED)
    cases = []
    for path, model, kind in FILES:
        rows = [json.loads(l) for l in show(path).splitlines() if l.strip()]
        elig = []
        for i, r in enumerate(rows):
            o = json.loads(r['original_json'])
            if gold_number(o['answer']) is not None and o.get('model_generation'):
                elig.append(i)
        pick = sorted(rng.sample(elig, min(PER_MODEL, len(elig))))
        for i in pick:
            o = json.loads(rows[i]['original_json'])
            cases.append({'task': 'TaxCalc',
                          'record': {'id': rows[i]['uuid'], 'query': o['problem'], 'answer': gold_number(o['answer'])},
                          'output': o['model_generation'],
                          'source': {'repo': REPO, 'commit': COMMIT, 'path': path, 'item': rows[i]['uuid'],
                                     'model': model, 'model_kind': kind, 'shots': 'zero-shot', 'lang': 'en'},
                          'hint': judge_hint(rows[i].get('gen'))})
    rng.shuffle(cases)
    with open(os.path.join(HERE, 'drawn.jsonl'), 'w') as f:
        for k, c in enumerate(cases, 1):
            f.write(json.dumps({'id': f'KbsdJames__Omni-MATH-{k:04d}', **c}, ensure_ascii=False) + '\n')
    print(len(cases))

if __name__ == '__main__':
    main()
