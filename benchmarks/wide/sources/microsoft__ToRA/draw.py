#!/usr/bin/env python3
"""Draw cases from microsoft/ToRA src/outputs (tool-integrated reasoning models on GSM8K). stdlib only."""
import json, os, random, subprocess

GITDIR = '/work/.mirror/microsoft+ToRA/repo'
COMMIT = '213c1c995038c73fab10343814df7a42f990f026'
REPO = 'microsoft/ToRA'
SEED = 20261206
PER_MODEL = 25
HERE = os.path.dirname(os.path.abspath(__file__))
FILES = [('src/outputs/llm-agents/tora-70b-v1.0/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl', 'llm-agents/tora-70b-v1.0'),
         ('src/outputs/llm-agents/tora-code-34b-v1.0/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl', 'llm-agents/tora-code-34b-v1.0')]

def show(path):
    return subprocess.run(['git', '--git-dir', GITDIR, 'show', f'{COMMIT}:{path}'], capture_output=True, text=True, check=True).stdout

def num(s):
    try:
        v = float(str(s).replace(',', ''))
    except ValueError:
        return None
    return int(v) if v == int(v) else v

def main():
    rng = random.Random(SEED)
    cases = []
    for path, model in FILES:
        rows = [json.loads(l) for l in show(path).splitlines() if l.strip()]
        elig = [i for i, r in enumerate(rows) if num(r['gt']) is not None and len(r['code']) == 1]
        for i in sorted(rng.sample(elig, PER_MODEL)):
            r = rows[i]
            # src/utils/utils.py construct_prompt with --use_train_prompt_format (src/scripts/infer.sh)
            query = f"<|user|>\n{r['question']}\n<|assistant|>\n"
            cases.append({'task': 'TaxCalc', 'record': {'id': str(r['idx']), 'query': query, 'answer': num(r['gt'])},
                          'output': r['code'][0],
                          'source': {'repo': REPO, 'commit': COMMIT, 'path': path, 'item': str(r['idx']),
                                     'model': model, 'model_kind': 'domain', 'shots': 'zero-shot', 'lang': 'en'},
                          'hint': f"source pred: {r['pred'][0]}"})
    rng.shuffle(cases)
    with open(os.path.join(HERE, 'drawn.jsonl'), 'w') as f:
        for k, c in enumerate(cases, 1):
            f.write(json.dumps({'id': f'microsoft__ToRA-{k:04d}', **c}, ensure_ascii=False) + '\n')
    print(len(cases))

if __name__ == '__main__':
    main()
