"""Show that a change to the scoring code leaves results.json and samples.jsonl as they were.

Record the outputs of a fixed set of evaluations with one checkout, record them again with
another, and compare: every value the first wrote must be in the second, equal to the last
bit; keys only the second has are listed as added (new schema fields are allowed, changed or
dropped values are not). Volatile facts (times, the git commit, paths) are left out.

Cases: the bundled sample with the first-choice and oracle baselines (5 runs each), and the
synthetic benchmark at ``--scale`` (default 0.1) with its model-like predictions, scored with
the taxpraben and the taxben profiles. The scorers are tiny random XLNet and BART models
built locally (``tests/helpers/tiny_models.py``): pass ``--models DIR`` to both recordings so that
they score with the same weights.

    python benchmarks/behaviour_check.py record /tmp/before --models /tmp/tiny   # old checkout
    python benchmarks/behaviour_check.py record /tmp/after --models /tmp/tiny    # new checkout
    python benchmarks/behaviour_check.py compare /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import ROOT, TAXPRABEN

#: meta facts that differ between any two runs, whatever the code.
VOLATILE_META = {"started_at", "finished_at", "git_hash", "package_version", "data_dir", "out_dir", "elapsed_s",
                 "timings", "started", "finished", "wall_s", "cache", "predictions_file"}


def _models(models: Path) -> tuple[Path, Path]:
    from helpers.tiny_models import build_tiny_bart, build_tiny_xlnet

    xlnet, bart = models / "xlnet", models / "bart"
    if not (xlnet / "config.json").exists():
        build_tiny_xlnet(xlnet)
    if not (bart / "config.json").exists():
        build_tiny_bart(bart)
    return xlnet, bart


def _run(cmd: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{(done.stderr or done.stdout)[-3000:]}")


def record(out: Path, models: Path, scale: float) -> None:
    xlnet, bart = _models(models)
    env = {**os.environ, "TAXPRABEN_BERTSCORE_MODEL": str(xlnet), "TAXPRABEN_BARTSCORE_MODEL": str(bart),
           "HF_HUB_OFFLINE": "1", "TAXPRABEN_BERTSCORE_LAYER": "2"}
    scoring = ["--device", "cpu"]
    for baseline in ("first-choice", "oracle"):
        _run([TAXPRABEN, "run", "--model", f"baseline:{baseline}", "--data", "sample", "--runs", "5",
              "--no-cache", "--out", str(out / f"sample-{baseline}"), *scoring], env)
    syn, preds = out / "synthetic-data", out / "synthetic-predictions.jsonl"
    _run([sys.executable, str(ROOT / "benchmarks" / "make_synthetic.py"), "--out", str(syn), "--scale", str(scale),
          "--predictions", str(preds), "--runs", "5"], env)
    for profile in ("taxpraben", "taxben"):
        _run([TAXPRABEN, "score", "--data", str(syn), "--predictions", str(preds), "--profile", profile,
              "--out", str(out / f"synthetic-{profile}"), *scoring], env)
    print(f"recorded into {out}")


def _strip(results: dict[str, Any]) -> dict[str, Any]:
    meta = results.get("meta", {})
    for key in VOLATILE_META:
        meta.pop(key, None)
    for info in (meta.get("scorers") or {}).values():
        info.pop("model", None)  # a path to the tiny model
    manifest = meta.get("manifest") or {}
    (manifest.get("taxpraben") or {}).pop("git_commit", None)  # the checkout's commit
    for key in ("started_at", "finished_at"):
        manifest.pop(key, None)
    for group in ("data_files", "task_specs"):  # where the recording's files lay (their hashes stay)
        for info in (manifest.get(group) or {}).values():
            if isinstance(info, dict):
                info.pop("path", None)
    return results


def _compare(old: Any, new: Any, where: str, added: list[str], changed: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in new.keys() - old.keys():
            added.append(f"{where}.{key}")
        for key, value in old.items():
            if key not in new:
                changed.append(f"{where}.{key}: dropped")
            else:
                _compare(value, new[key], f"{where}.{key}", added, changed)
        if [k for k in new if k in old] != list(old):
            changed.append(f"{where}: key order differs")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _compare(a, b, f"{where}[{i}]", added, changed)
    elif old != new or type(old) is not type(new):
        changed.append(f"{where}: {old!r} -> {new!r}")


_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z| UTC)?")


def _report_text(path: Path, root: Path, results: dict[str, Any]) -> str:
    """A report with what differs between any two recordings masked: times, the recording's
    directory, the commit, the package version and the data directory (the bundled sample
    lies inside the checkout that recorded it)."""
    text = path.read_text(encoding="utf-8").replace(str(root), "<DIR>")
    meta = results.get("meta", {})
    for key in ("data_dir", "git_hash", "package_version"):
        if meta.get(key):
            text = text.replace(str(meta[key]), f"<{key}>")
    return _TIME.sub("<TIME>", text)


def _compare_reports(before: Path, after: Path, case: str) -> list[str]:
    out = []
    for name in ("report.md", "report.html"):
        old_path, new_path = before / case / name, after / case / name
        if not (old_path.exists() and new_path.exists()):
            continue
        old_results = json.loads((before / case / "results.json").read_text())
        new_results = json.loads((after / case / "results.json").read_text())
        old = _report_text(old_path, before, old_results).splitlines()
        new = _report_text(new_path, after, new_results).splitlines()
        if old != new:
            diff = [f"    {line}" for line in difflib.unified_diff(old, new, lineterm="", n=0)][2:8]
            out.append(f"{name} differs:\n" + "\n".join(diff))
    return out


def compare(before: Path, after: Path, reports: bool = False) -> int:
    cases = sorted(p.name for p in before.iterdir() if (p / "results.json").exists())
    failed = 0
    for case in cases:
        added: list[str] = []
        changed: list[str] = []
        old = _strip(json.loads((before / case / "results.json").read_text()))
        new = _strip(json.loads((after / case / "results.json").read_text()))
        _compare(old, new, "results", added, changed)
        old_lines = (before / case / "samples.jsonl").read_text().splitlines()
        new_lines = (after / case / "samples.jsonl").read_text().splitlines()
        if len(old_lines) != len(new_lines):
            changed.append(f"samples.jsonl: {len(old_lines)} lines -> {len(new_lines)}")
        for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
            _compare(json.loads(a), json.loads(b), f"samples[{i}]", added, changed)
        if reports:
            changed.extend(_compare_reports(before, after, case))
        distinct_added = sorted({a.split("[")[0] if a.startswith("samples") else a for a in added})
        verdict = "identical" if not changed else f"{len(changed)} difference(s)"
        print(f"{case}: {len(new_lines)} sample lines, {verdict}; added: {', '.join(distinct_added) or 'none'}")
        for line in changed[:20]:
            print(f"    {line}")
        failed += bool(changed)
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="score the fixed cases into a directory")
    r.add_argument("out", type=Path)
    r.add_argument("--models", type=Path, required=True, help="where the tiny scorer models are (built if absent)")
    r.add_argument("--scale", type=float, default=0.1)
    c = sub.add_parser("compare", help="compare two recordings")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--reports", action="store_true", help="compare report.md and report.html too (times, paths "
                   "and the commit masked)")
    args = p.parse_args()
    if args.command == "record":
        record(args.out, args.models, args.scale)
        return 0
    return compare(args.before, args.after, args.reports)


if __name__ == "__main__":
    raise SystemExit(main())
