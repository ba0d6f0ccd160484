#!/usr/bin/env python3
"""Draw cases from TIGER-AI-Lab/TheoremQA outputs/ (5-shot base-model runs with vLLM). stdlib only."""
import json, os, random, re, subprocess

GITDIR = '/work/.mirror/TIGER-AI-Lab+TheoremQA/repo'
COMMIT = 'acfc9686aa9b49f3c8f189364a9a9ee9c53da039'
REPO = 'TIGER-AI-Lab/TheoremQA'
PER_MODEL = 25
EXTRA_PER_MODEL = 3   # second draw (seed SEED+1, items not drawn in the first), appended with later ids
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))

SHORT_HEAD = 'You are supposed to provide a solution to a given problem.\n\n'
def q_short(q):
    # data_loader.get_short_format: header + 5 demonstrations (dropped here) + '\nProblem:\n{query}\nSolution:\n'
    return SHORT_HEAD + '\nProblem:\n' + q + '\nSolution:\n'
def q_mistral(q):
    # data_loader.get_mistral_wo_input: 5 '[INST] q [/INST]a' demonstrations (dropped here) + '[INST] {query} [/INST]'
    return '[INST] ' + q + ' [/INST]'

MODELS = [
    ('outputs/Mistral_7B_Base_V0.2_5shots_mistral.jsonl', 'mistral-7b-v0.2 (base)', 'base', q_mistral),
    ('outputs/Mistral_7B_v0.1_5shots_mistral.jsonl', 'mistralai/Mistral-7B-v0.1', 'base', q_mistral),
    ('outputs/internlm2_20b_5shots_short.jsonl', 'internlm/internlm2-20b', 'base', q_short),
    ('outputs/internlm2_math_20b_5shots_short.jsonl', 'internlm/internlm2-math-20b', 'domain', q_short),
]

def show(path):
    return subprocess.run(['git', '--git-dir', GITDIR, 'show', f'{COMMIT}:{path}'], capture_output=True, text=True, check=True).stdout

OPT_RE = re.compile(r'\(([a-d])\)')
def parse_options(q):
    ms = list(OPT_RE.finditer(q))
    for start in range(len(ms)):
        if ms[start].group(1) == 'a':
            run = [ms[start]]
            for m in ms[start + 1:]:
                if m.group(1) == chr(ord(run[-1].group(1)) + 1):
                    run.append(m)
            if len(run) >= 2:
                texts = []
                for i, m in enumerate(run):
                    end = run[i + 1].start() if i + 1 < len(run) else len(q)
                    tx = q[m.end():end].strip()
                    tx = re.sub(r'\s*Which (option|one) is correct\?\s*$', '', tx)
                    if i + 1 == len(run):
                        tx = re.sub(r',\s*which\b[^?]*\?\s*$', '', tx, flags=re.I)
                    texts.append(tx.rstrip(',;').strip().lstrip(':').strip())
                if all(texts):
                    return texts
    return None

def main():
    test = json.loads(show('theoremqa_test.json'))
    rng = random.Random(SEED)
    cases = []
    picks_by_model = []
    for path, model, kind, builder in MODELS:
        rows = [json.loads(l) for l in show(path).splitlines() if l.strip()]
        assert len(rows) == len(test)
        elig = []
        for i, (r, t) in enumerate(zip(rows, test)):
            if r['question'] != t['Question']:
                continue
            at, a = t['Answer_type'], t['Answer']
            if at in ('integer', 'float') and isinstance(a, (int, float)) and not isinstance(a, bool):
                elig.append(i)
            elif at == 'bool' and isinstance(a, bool):
                elig.append(i)
            elif at == 'option' and isinstance(a, str) and re.fullmatch(r'\([a-d]\)', a.strip()) and parse_options(t['Question']):
                elig.append(i)
        first = sorted(rng.sample(elig, PER_MODEL))
        picks_by_model.append((path, model, kind, builder, rows, elig, first))
    for path, model, kind, builder, rows, elig, first in picks_by_model:
        for i in first:
            add_case(cases, path, model, kind, builder, rows, test, i)
    rng.shuffle(cases)
    extra = []
    rng2 = random.Random(SEED + 1)
    for path, model, kind, builder, rows, elig, first in picks_by_model:
        rest = [i for i in elig if i not in set(first)]
        for i in sorted(rng2.sample(rest, EXTRA_PER_MODEL)):
            add_case(extra, path, model, kind, builder, rows, test, i)
    rng2.shuffle(extra)
    cases += extra
    with open(os.path.join(HERE, 'drawn.jsonl'), 'w') as f:
        for n, c in enumerate(cases, 1):
            f.write(json.dumps({'id': f'TIGER-AI-Lab__TheoremQA-{n:04d}', **c}, ensure_ascii=False) + '\n')
    print(len(cases))

def add_case(cases, path, model, kind, builder, rows, test, i):
    if True:
        if True:
            r, t = rows[i], test[i]
            at, a, q = t['Answer_type'], t['Answer'], t['Question']
            query = builder(q)
            if at in ('integer', 'float'):
                task, rec = 'TaxCalc', {'id': t['id'], 'query': query, 'answer': a}
            elif at == 'bool':
                ch = ['True', 'False']; g = 0 if a else 1
                task, rec = 'TaxSCQ', {'id': t['id'], 'query': query, 'choices': ch, 'gold': g, 'answer': ch[g]}
            else:
                ch = parse_options(q); g = 'abcd'.index(a.strip()[1])
                if g >= len(ch):
                    return
                task, rec = 'TaxSCQ', {'id': t['id'], 'query': query, 'choices': ch, 'gold': g, 'answer': ch[g]}
            cases.append({'task': task, 'record': rec, 'output': r['solution'],
                          'source': {'repo': REPO, 'commit': COMMIT, 'path': path, 'item': str(i),
                                     'model': model, 'model_kind': kind, 'shots': 'few-shot', 'lang': 'en'},
                          'hint': f"source pred: {r.get('pred')}"})

if __name__ == '__main__':
    main()
