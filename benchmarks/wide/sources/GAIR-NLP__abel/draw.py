#!/usr/bin/env python3
"""Draw cases from GAIR-NLP/abel outputs/ (Abel-001 math models, zero-shot 'Let's think step by step'). stdlib only."""
import json, os, random, re, subprocess

GITDIR = '/work/.mirror/GAIR-NLP+abel/repo'
COMMIT = '3a24ef24e9ea32708fe4fa4c36bf504a74b4bdf0'
REPO = 'GAIR-NLP/abel'
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = {'7b': 'GAIR/GAIRMath-Abel-7b (Abel-7B-001)', '13b': 'GAIR/GAIRMath-Abel-13b (Abel-13B-001)',
         '70b': 'GAIR/GAIRMath-Abel-70b (Abel-70B-001)'}
# (path, model key, number of cases)
PLAN = [('outputs/gsm8k/7b.jsonl', '7b', 15), ('outputs/gsm8k_robust/7b.jsonl', '7b', 15),
        ('outputs/gsm8k/13b.jsonl', '13b', 15), ('outputs/gsm8k_robust/13b.jsonl', '13b', 15),
        ('outputs/gsm8k/70b.jsonl', '70b', 10), ('outputs/gsm8k_robust/70b.jsonl', '70b', 10),
        ('outputs/mathgpt/70b.jsonl', '70b', 15)]

def show(path):
    return subprocess.run(['git', '--git-dir', GITDIR, 'show', f'{COMMIT}:{path}'], capture_output=True, text=True, check=True).stdout

def parse_options(prompt):
    m = re.search(r'You are provided with the following options for your answer:\n(.*)\nAnswer:\n', prompt, re.S)
    if not m:
        return None
    block = m.group(1)
    parts = re.split(r'(?m)^([A-E])\. ', block)
    letters, texts = parts[1::2], [t.strip() for t in parts[2::2]]
    if parts[0].strip() or letters != list('ABCDE'[:len(letters)]) or len(letters) < 2 or not all(texts):
        return None
    return texts

def num(s):
    s = s.replace(',', '').strip()
    try:
        v = float(s)
    except ValueError:
        return None
    return int(v) if v == int(v) else v

def main():
    rng = random.Random(SEED)
    cases = []
    for path, key, n in PLAN:
        rows = [json.loads(l) for l in show(path).splitlines() if l.strip()]
        elig = []
        for i, r in enumerate(rows):
            if 'mathgpt' in path:
                ch = parse_options(r['prompt'])
                if ch and re.fullmatch(r'[A-E]', r['gold']) and 'ABCDE'.index(r['gold']) < len(ch):
                    elig.append(i)
            elif num(r['gold']) is not None:
                elig.append(i)
        for i in sorted(rng.sample(elig, n)):
            r = rows[i]
            if 'mathgpt' in path:
                ch = parse_options(r['prompt']); g = 'ABCDE'.index(r['gold'])
                task, rec = 'TaxSCQ', {'id': str(r['id']), 'query': r['prompt'], 'choices': ch, 'gold': g, 'answer': ch[g]}
            else:
                task, rec = 'TaxCalc', {'id': str(r['id']), 'query': r['prompt'], 'answer': num(r['gold'])}
            cases.append({'task': task, 'record': rec, 'output': r['response'],
                          'source': {'repo': REPO, 'commit': COMMIT, 'path': path, 'item': str(r['id']),
                                     'model': NAMES[key], 'model_kind': 'domain', 'shots': 'cot', 'lang': 'en'},
                          'hint': f"source pred: {r['pred']}; source result: {r['result']}"})
    rng.shuffle(cases)
    with open(os.path.join(HERE, 'drawn.jsonl'), 'w') as f:
        for k, c in enumerate(cases, 1):
            f.write(json.dumps({'id': f'GAIR-NLP__abel-{k:04d}', **c}, ensure_ascii=False) + '\n')
    print(len(cases))

if __name__ == '__main__':
    main()
