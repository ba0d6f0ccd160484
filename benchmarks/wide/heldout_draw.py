"""Draw the held-out sources of the wide corpus, once, before any rule is developed on it.

Takes the sources claimed in CLAIMS.tsv and groups them into families (repositories of one owner,
or of one name under two owners, as a fork: their outputs share a harness and a style, so a family
is held out whole or not at all); sorts the families by name and draws ``max(5, 30%)`` of them
with ``random.Random(SEED)``; writes HELDOUT.md (the seed, the families, the draw). Refuses to
draw again when HELDOUT.md exists: the held-out set is fixed once.

    python3 benchmarks/wide/heldout_draw.py --seed 20261206

A later round (``--round 2 --since UTC --hold K``) draws again among the sources claimed since
``UTC`` only, after the earlier held-out sources were measured once and became development
sources: a new source that shares a family with an earlier claim (read during development) is
never held out; ``K`` of the new families are drawn with the seed. The earlier "## Held out"
section is kept under its round's name, and the new draw becomes "## Held out".

    python3 benchmarks/wide/heldout_draw.py --round 2 --since 2026-12-06T21:50:00Z --hold 6 --seed 20261207
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
    parser.add_argument("--round", type=int, default=1)
    parser.add_argument("--since", help="round 2 on: draw among sources claimed at or after this UTC time")
    parser.add_argument("--hold", type=int, help="round 2 on: how many new families to hold out")
    args = parser.parse_args()
    out = HERE / "HELDOUT.md"
    if args.round > 1:
        draw_again(args.round, args.since, args.hold, args.seed, out)
        return
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


def claims() -> list[tuple[str, str]]:
    """(repository, claim time) for each line of CLAIMS.tsv."""
    rows = [line.split("\t") for line in (HERE / "CLAIMS.tsv").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [(row[0], row[2]) for row in rows]


def draw_again(round_no: int, since: str | None, hold: int | None, seed: int, out: Path) -> None:
    if not since or not hold or hold < 5:
        sys.exit("a later round needs --since UTC and --hold K (at least 5)")
    text = out.read_text(encoding="utf-8")
    if f"## Round {round_no}:" in text or f"round {round_no} draw" in text:
        sys.exit(f"round {round_no} was drawn already: the held-out sources are drawn once a round")
    # a claim its grader found unusable (its folder holds UNUSABLE.md and no cases) is no source
    everything = [(r, at) for r, at in claims()
                  if not (HERE / "sources" / r.replace("/", "__") / "UNUSABLE.md").is_file()]
    earlier = [r for r, at in everything if at < since]
    new = sorted({r for r, at in everything if at >= since}, key=str.lower)
    families = family_of(sorted(set(earlier) | set(new), key=str.lower))
    candidates = sorted(((name, members) for name, members in families.items()
                         if not set(members) & set(earlier)), key=lambda kv: kv[0].lower())
    joined = sorted(r for name, members in families.items() if set(members) & set(earlier)
                    for r in members if r in new)
    if len(candidates) < hold + 1:
        sys.exit(f"only {len(candidates)} new families: too few to hold out {hold} and develop on one")
    drawn = random.Random(seed).sample([name for name, _ in candidates], hold)
    held = sorted((r for name, members in candidates if name in drawn for r in members), key=str.lower)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    earlier_part = text.replace("## Held out", f"## Round {round_no - 1}: held out, measured once "
                                "(development sources since the next round)", 1)
    lines = [
        earlier_part.rstrip(),
        "",
        "## Held out",
        "",
        f"Round {round_no} draw, {now}: `heldout_draw.py --round {round_no} --since {since} --hold {hold} "
        f"--seed {seed}` (`random.Random({seed}).sample` of the {len(candidates)} new families, sorted by name, "
        f"claimed at or after {since}; {hold} held out). Drawn before the developer read any output of a "
        "new source. Measured once, at the end of the round.",
        "",
        *[f"- `{repo}`" for repo in held],
        "",
        f"## Round {round_no}: families at the draw",
        "",
        *[f"- {name}{' (held out)' if name in drawn else ''}: {', '.join(members)}" for name, members in candidates],
        *([f"- joined to an earlier source's family, development: {', '.join(joined)}"] if joined else []),
        "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"round {round_no}: held out {hold} of {len(candidates)} new families: {', '.join(held)}")


if __name__ == "__main__":
    main()
