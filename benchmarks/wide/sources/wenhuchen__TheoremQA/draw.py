#!/usr/bin/env python3
"""Draw cases from wenhuchen/TheoremQA model outputs (zero-shot, 10 models). stdlib only, re-runnable."""
import json, os, random, re, subprocess

GITDIR = '/work/.mirror/wenhuchen+TheoremQA/repo'
COMMIT = '0f6bbb061d0cbea9eea0e7eec4a3b6246e40cd6a'  # last commit holding outputs/ (deleted later in HEAD)
REPO = 'wenhuchen/TheoremQA'
PER_MODEL = 25
SEED = 20261206
HERE = os.path.dirname(os.path.abspath(__file__))

SYS_CHAT = """You are a mathematician, you are supposed to answer the given question. You need to output the answer in your final sentence like "Therefore, the answer is ...". The answer can only be one of the following forms:
1. a numerical value like 0.1, no symbol and no unit at all.
2. a list of number like [2, 3, 4].
3. True/False.
4. an option like (a), (b), (c), (d)
"""
SYS_GPT4 = SYS_CHAT.replace('no symbol and no unit at all.', 'no symbol at all.')
HUMAN, AI = '\n\nHuman:', '\n\nAssistant:'

def q_gpt(sysq, q, cot):
    # system message + user message (chat) / concatenated prompt (completion)
    s = f'Question: {q}\n' if not cot else f"Question: {q}\nLet's think step by step."
    return sysq + s

def q_claude(q, at):
    if at == 'bool':
        tail = "PPlease think step by step, and then conclude the answer as `therefore, the answer is True/False'"
    elif at == 'option':
        tail = "Please think step by step, and then conclude the answer as `therefore, the answer is (a)/(b)/(c)/(d)'."
    else:
        tail = "Please think step by step, and then conclude the answer as `therefore, the answer is ...'"
    return f'{HUMAN} Question: {q} \n {tail} {AI}'

def alpaca_prompt(q, at):
    if at == 'bool':
        ins = 'Please read a math problem, and then think step by step to derive the answer. The answer needs to be True or False.'
    elif at == 'option':
        ins = 'Please read a math problem, and then think step by step to derive the answer. The answer needs to be (a), (b), (c) or (d).'
    else:
        ins = 'Please read a math problem, and then think step by step to derive the answer. The answer needs to be in numerical form.'
    return ("Below is an instruction that describes a task, paired with an input that provides further context. "
            "Write a response that appropriately completes the request.\n\n### Instruction:\n" + ins +
            "\n\n### Input:\n" + q + "\n\n### Response:\n")

def pythia_prompt(q, at):
    if at == 'bool':
        ins = "Please think step by step and then answer `Therefore, the answer is True/False'."
    elif at == 'option':
        ins = 'Please think step by step to derive the answer. The answer should be (a), (b), (c) or (d).'
    else:
        ins = 'Please think step by step to derive the answer in deciaml form.'
    return f'<|prompter|>{q} {ins} <|endoftext|><|assistant|>'

MODELS = [
    # file stem, model name, kind, shots, prompt builder
    ('GPT4_s0_e-1_06_15_22_38', 'gpt-4', 'api', 'zero-shot', lambda q, at: q_gpt(SYS_GPT4, q, False)),
    ('ChatGPT_s0_e-1_05_13_10_25', 'gpt-3.5-turbo (ChatGPT, Azure)', 'api', 'zero-shot', lambda q, at: q_gpt(SYS_CHAT, q, False)),
    ('GPT3.5_s0_e-1_05_13_11_04', 'text-davinci-003', 'api', 'cot', lambda q, at: q_gpt(SYS_CHAT, q, True)),
    ('GPT3_s0_e-1_05_13_11_04', 'text-davinci-002', 'api', 'cot', lambda q, at: q_gpt(SYS_CHAT, q, True)),
    ('anthropic_v1_s0_e-1_05_12_23_41', 'claude-v1', 'api', 'cot', q_claude),
    ('anthropic_instant-v1_s0_e-1_05_27_09_42', 'claude-instant-v1', 'api', 'cot', q_claude),
    ('anthropic_v2_s0_e-1_08_02_00_15', 'claude-2', 'api', 'cot', q_claude),
    ('alpaca_s0_e-1_05_15_02_19', 'chavinlo/alpaca-13b', 'chat', 'cot', alpaca_prompt),
    ('vicuna_s0_e-1_05_16_19_54', 'vicuna (13b, local path)', 'chat', 'cot', alpaca_prompt),
    ('pythia_s0_e-1_05_17_00_17', 'OpenAssistant/oasst-sft-1-pythia-12b', 'chat', 'cot', pythia_prompt),
]

def show(path):
    return subprocess.run(['git', '--git-dir', GITDIR, 'show', f'{COMMIT}:{path}'], capture_output=True, text=True, check=True).stdout

OPT_RE = re.compile(r'\(([a-d])\)')

def parse_options(q):
    """Options written inline as (a) ... (b) ... ; returns (stem, [texts]) or None."""
    ms = list(OPT_RE.finditer(q))
    letters = [m.group(1) for m in ms]
    # need the final run a,b,(c,(d)) in order
    for start in range(len(ms)):
        if letters[start] == 'a':
            run = [ms[start]]
            for m in ms[start + 1:]:
                if m.group(1) == chr(ord(run[-1].group(1)) + 1):
                    run.append(m)
            if len(run) >= 2 and [m.group(1) for m in run] == list('abcd'[:len(run)]):
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
    test = {x['id']: x for x in json.loads(show('theoremqa_test.json'))}
    rng = random.Random(SEED)
    cases = []
    for stem, model, kind, shots, builder in MODELS:
        path = f'outputs/{stem}.jsonl'
        rows = [json.loads(l) for l in show(path).splitlines() if l.strip()]
        elig = []
        for i, r in enumerate(rows):
            t = test.get(r['id'])
            if t is None or t['Answer'] != r['answer']:
                continue  # gold changed between run and data file: uncertain
            at = r['answer_type']
            if at in ('integer', 'float'):
                if isinstance(r['answer'], bool) or not isinstance(r['answer'], (int, float)):
                    continue
                elig.append(i)
            elif at == 'bool' and isinstance(r['answer'], bool):
                elig.append(i)
            elif at == 'option' and isinstance(r['answer'], str) and parse_options(r['question']) and \
                    re.fullmatch(r'\([a-d]\)', r['answer'].strip()):
                elig.append(i)
        pick = sorted(rng.sample(elig, PER_MODEL))
        for i in pick:
            r = rows[i]
            at = r['answer_type']
            q = r['question']
            query = builder(q, at)
            out = r['rationale']
            if out.startswith('Below is an instruction'):
                k = out.find('\n\n### Response:\n')
                if k < 0:
                    continue
                out = out[k + len('\n\n### Response:\n'):]  # the run stored prompt + generation
            if at in ('integer', 'float'):
                task = 'TaxCalc'
                rec = {'id': r['id'], 'query': query, 'answer': r['answer']}
            elif at == 'bool':
                task = 'TaxSCQ'
                choices = ['True', 'False']
                g = 0 if r['answer'] else 1
                rec = {'id': r['id'], 'query': query, 'choices': choices, 'gold': g, 'answer': choices[g]}
            else:
                task = 'TaxSCQ'
                choices = parse_options(q)
                g = 'abcd'.index(r['answer'].strip()[1])
                if g >= len(choices):
                    continue
                rec = {'id': r['id'], 'query': query, 'choices': choices, 'gold': g, 'answer': choices[g]}
            cases.append({'task': task, 'record': rec, 'output': out,
                          'source': {'repo': REPO, 'commit': COMMIT, 'path': path, 'item': r['id'],
                                     'model': model, 'model_kind': kind, 'shots': shots, 'lang': 'en'},
                          'hint': f"source prediction: {r.get('prediction')}"})
    rng.shuffle(cases)
    with open(os.path.join(HERE, 'drawn.jsonl'), 'w') as f:
        for n, c in enumerate(cases, 1):
            c = {'id': f'wenhuchen__TheoremQA-{n:04d}', **c}
            f.write(json.dumps(c, ensure_ascii=False) + '\n')
    print(len(cases))

if __name__ == '__main__':
    main()
