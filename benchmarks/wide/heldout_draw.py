"""Draw the held-out sources of the wide corpus, once, before any rule is developed on it.

Takes the sources claimed in CLAIMS.tsv and groups them into families (repositories of one owner,
or of one name under two owners, as a fork: their outputs share a harness and a style, so a family
is held out whole or not at all); sorts the families by name and draws ``max(5, 30%)`` of them
with ``random.Random(SEED)``; writes HELDOUT.md (the seed, the families, the draw). Refuses to
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


def family_of(repos: list[str]) -> dict[str, list[str]]:
    """The families of ``repos``: joined when they share an owner or a repository name."""
    parent = {r: r for r in repos}

    def root(r: str) -> str:
        while parent[r] != r:
            r = parent[r]
        return r

    for a in repos:
        for b in repos:
            if a < b and (a.split("/")[0].lower() == b.split("/")[0].lower()
                          or a.split("/")[1].lower() == b.split("/")[1].lower()):
                parent[root(b)] = root(a)
    families: dict[str, list[str]] = {}
    for r in repos:
        families.setdefault(root(r), []).append(r)
    return {members[0] if len(members) == 1 else "family " + members[0]: sorted(members, key=str.lower)
            for members in families.values()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    out = HERE / "HELDOUT.md"
    if out.exists():
        sys.exit(f"{out} exists: the held-out sources are drawn once")
    repos = sorted({line.split("\t")[0] for line in (HERE / "CLAIMS.tsv").read_text(encoding="utf-8").splitlines()
                    if line.strip()}, key=str.lower)
    families = sorted(family_of(repos).items(), key=lambda kv: kv[0].lower())
    k = max(5, round(len(families) * 0.3))
    if len(families) < k + 5:
        sys.exit(f"only {len(families)} families claimed: too few to hold out {k} and develop on the rest")
    drawn = random.Random(args.seed).sample([name for name, _ in families], k)
    held = sorted((r for name, members in families if name in drawn for r in members), key=str.lower)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Held-out sources of the wide corpus",
        "",
        f"Drawn {now} by `heldout_draw.py --seed {args.seed}` (`random.Random({args.seed}).sample` of the "
        f"{len(families)} families of the {len(repos)} sources claimed then, sorted by name; {k} families held out), "
        "before any rule was developed on the "
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
        "## Families at the draw",
        "",
        *[f"- {name}{' (held out)' if name in drawn else ''}: {', '.join(members)}" for name, members in families],
        "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"held out {k} of {len(repos)}: {', '.join(held)}")


if __name__ == "__main__":
    main()
