"""Sharded runs: which share of the work a shard owns, and the merge of the shards' predictions.

A run with ``--shard I/N`` owns the records whose per-task position ``k`` (0-based, in data
order) satisfies ``(k + offset(task, N)) % N == I``, with every run of each record it owns.
Whole records, not single (record, run) pairs, because a greedy generation is shared by the
runs of a record (it is paid once, and its cache entry lives in one shard's cache). Each task
is split round-robin, so every shard gets within one record of ``n / N`` records of each task;
the offset, a stable digest of the task name (never ``hash()``, which differs between Python
processes), spreads the tasks' leftover records over different shards. The share depends
only on the data, ``--tasks`` and ``--limit``, so every machine computes the same one.

The merge is independent of the assignment: it takes any set of predictions files and checks
them against the data and the runs asked: an item predicted twice with different predictions
is an overlap, an item no file predicts is a gap; both are listed compactly.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.atomic import write_text_atomically

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.predictions import Prediction

#: Written beside a shard's predictions.jsonl: which shard of which run it is.
SHARD_MANIFEST = "shard.json"

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based); ``Shard(0, 1)`` is the whole, unsharded run."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(
                f"shard {self.index}/{self.count}: expected I/N with N >= 1 and 0 <= I < N"
            )

    @property
    def whole(self) -> bool:
        return self.count == 1

    def owns(self, task: str, position: int) -> bool:
        """True when the record at 0-based ``position`` of ``task`` (data order) is ours."""
        return self.whole or shard_of(task, position, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def to_meta(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


def parse_shard(text: str) -> Shard:
    """``"1/3"`` -> ``Shard(1, 3)``; ValueError with the expected form otherwise."""
    match = _SHARD.fullmatch(text)
    if not match:
        raise ValueError(f"--shard {text!r}: expected I/N, e.g. 0/3 (shard 0 of 3)")
    return Shard(int(match.group(1)), int(match.group(2)))


def task_offset(task: str, count: int) -> int:
    """A stable offset in ``range(count)`` for ``task``: the same on every machine."""
    digest = hashlib.blake2b(task.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def shard_of(task: str, position: int, count: int) -> int:
    """The shard (of ``count``) that owns the record at ``position`` of ``task``."""
    return (position + task_offset(task, count)) % count


def write_manifest(out_dir: Path, shard: Shard, facts: Mapping[str, JSONValue]) -> Path:
    """Write ``OUT/shard.json``: the shard and the ``facts`` every shard of one run shares
    (model, endpoint, generation, runs, data hash, tasks, limit), so that a merge can tell
    a missing shard or a shard of another run."""
    path = out_dir / SHARD_MANIFEST
    write_text_atomically(path, json.dumps({"shard": shard.to_meta(), **facts}, ensure_ascii=False, indent=2) + "\n")
    return path


def read_manifest(path: Path) -> JSONObject | None:
    """The manifest at ``path``, or None when there is none (a plain predictions file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    manifest = json.loads(text)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shard"), dict):
        raise ValueError(f"{path}: not a shard manifest (no 'shard' object)")
    return manifest


def manifest_problems(manifests: Mapping[str, Mapping[str, JSONValue]]) -> list[str]:
    """Why the shards' manifests (source name -> manifest) are not one complete sharded
    run: different shard counts or shared facts, a shard given twice, shards missing."""
    if not manifests:
        return []
    problems: list[str] = []
    facts = ("model", "endpoint", "generation", "runs", "data_hash", "tasks", "limit")
    first_name, first = next(iter(manifests.items()))
    for name, m in manifests.items():
        for fact in ("count", *facts):
            mine = m["shard"].get("count") if fact == "count" else m.get(fact)
            theirs = first["shard"].get("count") if fact == "count" else first.get(fact)
            if mine != theirs:
                problems.append(f"{name}: {fact} {mine!r} differs from {first_name}: {theirs!r}")
    count = first["shard"].get("count")
    seen: dict[int, list[str]] = {}
    for name, m in manifests.items():
        seen.setdefault(m["shard"].get("index"), []).append(name)
    for index, names in sorted(seen.items()):
        if len(names) > 1:
            problems.append(f"shard {index}/{count} given {len(names)} times: {', '.join(names)}")
    if isinstance(count, int):
        absent = [i for i in range(count) if i not in seen]
        if absent:
            listed = ", ".join(f"{i}/{count}" for i in absent)
            problems.append(f"shard(s) {listed} not given: rerun them (same command, --shard I/{count})")
    return problems


# ---------------------------------------------------------------------------- merge

Key = tuple[str, str, int]


@dataclass
class MergeResult:
    """The merged predictions (one per key, in the order first seen) and what is wrong."""

    predictions: list[Prediction]
    #: key -> the sources whose predictions for it differ (the first source first).
    overlaps: dict[Key, list[str]] = field(default_factory=dict)
    #: Keys of the data x runs that no source predicts, in data order then run.
    gaps: list[Key] = field(default_factory=list)
    #: Keys predicted more than once with the same prediction (kept once).
    repeated: int = 0


def _same(a: Prediction, b: Prediction) -> bool:
    return (a.prediction, a.error) == (b.prediction, b.error)


def merge_predictions(
    sources: Iterable[tuple[str, Iterable[Prediction]]],
    expected: Mapping[str, Sequence[str]],
    runs: Sequence[int],
) -> MergeResult:
    """Merge the predictions of ``sources`` (name, predictions) and check them.

    ``expected`` maps each task to its record ids in data order; ``runs`` are the runs
    asked. A key seen twice with the same prediction and error is kept once (a shard
    directory given twice, a rerun); with a different one it is an overlap and every
    source that gave it is named. Predictions outside ``expected`` are kept (scoring
    reports them); gaps are the expected keys that no source predicts.
    """
    merged: dict[Key, Prediction] = {}
    origin: dict[Key, str] = {}
    result = MergeResult(predictions=[])
    for name, predictions in sources:
        for p in predictions:
            key = p.key
            first = merged.get(key)
            if first is None:
                merged[key], origin[key] = p, name
            elif _same(first, p):
                result.repeated += 1
            else:
                names = result.overlaps.setdefault(key, [origin[key]])
                if name not in names:
                    names.append(name)
    result.predictions = list(merged.values())
    for task, ids in expected.items():
        for run in runs:
            result.gaps.extend((task, i, run) for i in ids if (task, i, run) not in merged)
    return result


def describe_gaps(
    gaps: Sequence[Key],
    expected: Mapping[str, Sequence[str]],
    max_lines: int = 20,
    max_spans: int = 8,
) -> list[str]:
    """The gaps as a few lines, one per task and set of missing runs: the records (in data
    order; consecutive ones as a span) that lack exactly those runs, e.g.
    ``TaxCalc runs 0-4: 4 records: 2..4, 7`` (a shard that never ran misses every run of
    every N-th record: one line per task)."""
    missing_runs: dict[str, dict[str, list[int]]] = {}
    for task, item, run in gaps:
        missing_runs.setdefault(task, {}).setdefault(item, []).append(run)
    lines: list[str] = []
    for task, ids in expected.items():
        per_id = missing_runs.get(task)
        if not per_id:
            continue
        groups: dict[tuple[int, ...], list[tuple[int, str]]] = {}
        for position, item in enumerate(ids):
            if item in per_id:
                groups.setdefault(tuple(sorted(per_id[item])), []).append((position, item))
        for runs, records in groups.items():
            spans = _spans(records)
            shown = ", ".join(spans[:max_spans]) + (", ..." if len(spans) > max_spans else "")
            noun = "record" if len(records) == 1 else "records"
            lines.append(f"{task} {compact_runs(runs)}: {len(records)} {noun}: {shown}")
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... and {len(lines) - max_lines} more line(s)"]
    return lines


def _spans(records: Sequence[tuple[int, str]]) -> list[str]:
    """(position, id) pairs in data order -> ``["2..4", "7"]`` (consecutive positions joined)."""
    spans: list[str] = []
    first = last = records[0]
    for record in [*records[1:], None]:
        if record is not None and record[0] == last[0] + 1:
            last = record
            continue
        spans.append(first[1] if first is last else f"{first[1]}..{last[1]}")
        if record is not None:
            first = last = record
    return spans


def compact_runs(runs: Sequence[int]) -> str:
    """``(0, 1, 2, 4)`` -> ``runs 0-2,4``; ``(3,)`` -> ``run 3``."""
    parts: list[str] = []
    start = prev = None
    for r in [*sorted(runs), None]:
        if start is not None and (r is None or r != prev + 1):  # type: ignore[operator]  # prev is set with start
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if r is not None and start is None:
            start = r
        prev = r
    word = "run" if len(runs) == 1 else "runs"
    return f"{word} {','.join(parts)}"


def describe_overlaps(overlaps: Mapping[Key, list[str]], max_lines: int = 20) -> list[str]:
    """One line per overlapping key (at most ``max_lines``): ``TaxCalc/17/run 0: a, b``."""
    lines = [f"{t}/{i}/run {r}: {', '.join(names)}" for (t, i, r), names in overlaps.items()]
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... and {len(lines) - max_lines} more"]
    return lines
