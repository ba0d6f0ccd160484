"""Draw the held-out sources of the wide corpus, once, before any rule is developed on it.

Takes the sources claimed in CLAIMS.tsv, sorted by name, and draws ``max(5, 30%)`` of them with
``random.Random(SEED)``; writes HELDOUT.md (the seed, the candidates, the draw). Refuses to
draw again when HELDOUT.md exists: the held-out set is fixed once.

    python3 benchmarks/wide/heldout_draw.py --seed 20261206
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    out = HERE / "HELDOUT.md"
    if out.exists():
        sys.exit(f"{out} exists: the held-out sources are drawn once")
    repos = sorted({line.split("\t")[0] for line in (HERE / "CLAIMS.tsv").read_text(encoding="utf-8").splitlines()
                    if line.strip()}, key=str.lower)
    k = max(5, round(len(repos) * 0.3))
    if len(repos) < k + 5:
        sys.exit(f"only {len(repos)} sources claimed: too few to hold out {k} and develop on the rest")
    held = sorted(random.Random(args.seed).sample(repos, k), key=str.lower)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Held-out sources of the wide corpus",
        "",
        f"Drawn {now} by `heldout_draw.py --seed {args.seed}` (`random.Random({args.seed}).sample` of the "
        f"{len(repos)} sources claimed then, sorted by name; {k} held out), before any rule was developed on the "
        "wide corpus and before any of its outputs was read by the developer. The graders of these sources "
        "do not develop rules. Their outputs are not read during development; they are measured once, at the "
        "end (`measure.py --split heldout`), and the figure is reported as it comes.",
        "",
        "Sources claimed after the draw are development sources.",
        "",
        "## Held out",
        "",
        *[f"- `{repo}`" for repo in held],
        "",
        "## Candidates at the draw",
        "",
        *[f"- {repo}" for repo in repos],
        "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"held out {k} of {len(repos)}: {', '.join(held)}")


if __name__ == "__main__":
    main()
