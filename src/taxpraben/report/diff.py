"""``taxpraben diff A B``: what changed from result directory A to result directory B.

Per task and metric the change B - A of the figures in results.json, each with the
leaderboard's paired bootstrap (:mod:`~taxpraben.report.significance`) on the items both runs
scored; the Overall Average likewise (the same test as the leaderboard's pair, so the two agree
on its p-value). The items whose score flipped (0 in one run and 1 in the other, for one
(task, id, run): right in A and wrong in B, or the reverse), read from both samples.jsonl; and
how the runs were made differently (the manifests, else the meta). Runs the leaderboard would
refuse to rank are refused here too (:func:`~taxpraben.report.leaderboard.check_compatible`),
unless ``force``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.report import format as fmt
from taxpraben.report import significance
from taxpraben.report.leaderboard import Entry, check_compatible, manifest_of
from taxpraben.report.load import ReportError
from taxpraben.report.markdown import cell
from taxpraben.report.review import review_side_by_side, reviewed_view
from taxpraben.report.view import load_run
from taxpraben.results import Sample, Stat

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

DIFF_JSON = "diff.json"

#: Manifest keys that differ from run to run by nature: not reported as differences.
UNCOMPARED = frozenset({"started_at", "finished_at"})
#: Without manifests: the meta keys compared instead.
META_COMPARED = (
    "data_hash", "package_version", "git_hash", "profile", "limit", "runs", "generation", "scorers",
)  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One figure in A and in B, and the paired test of B against A (None: no shared item
    scores, as for a figure over a whole run such as weighted F1)."""

    a: float | None
    b: float | None
    test: significance.PairedTest | None = None

    @property
    def change(self) -> float | None:
        """B - A, in the results' 0-1 scale; None when either is missing."""
        return None if self.a is None or self.b is None else self.b - self.a

    def to_json(self) -> JSONObject:
        test = self.test
        return {
            "a": self.a,
            "b": self.b,
            "change": self.change,
            "test": None if test is None else {
                "difference": test.difference, "ci95": list(test.ci95), "p_value": test.p_value,
                "significant": test.significant, "items": test.items, "tasks": list(test.tasks),
                "resamples": test.resamples, "seed": test.seed,
            },
        }  # fmt: skip


@dataclass(frozen=True)
class TaskDiff:
    """One task shared by both runs: its score's change and each metric's."""

    task: str
    score: Change
    metrics: dict[str, Change]


@dataclass(frozen=True)
class Flip:
    """One (task, id, run) scored 0 in one run and 1 in the other."""

    task: str
    id: str
    run: int
    a_extracted: JSONValue
    a_score: float
    b_extracted: JSONValue
    b_score: float

    @property
    def direction(self) -> str:
        """``fixed`` (wrong in A, right in B) or ``broken``."""
        return "fixed" if self.b_score > self.a_score else "broken"

    def to_json(self) -> JSONObject:
        return {
            "task": self.task, "id": self.id, "run": self.run, "direction": self.direction,
            "a": {"extracted": self.a_extracted, "score": self.a_score},
            "b": {"extracted": self.b_extracted, "score": self.b_score},
        }  # fmt: skip


@dataclass(frozen=True)
class Difference:
    """One key of how the runs were made (``data_files.TaxCalc.sha256``) that differs."""

    key: str
    a: JSONValue
    b: JSONValue


@dataclass
class Diff:
    """What changed from A to B (:func:`build_diff`)."""

    a: Entry
    b: Entry
    overall: Change
    tasks: list[TaskDiff]
    flips: list[Flip]
    differences: list[Difference]
    warnings: list[str] = field(default_factory=list)
    forced: bool = False

    def regressions(self, threshold: float, *, allow_partial: bool = False) -> list[str]:
        """Where B is worse than A by more than ``threshold`` (0-1 scale) and the paired test
        is significant at 95%: the Overall Average and each task score, one line each; first,
        unless ``allow_partial``, A or B partial (a task of the benchmark missing or not
        computed: a figure that could not be compared did not pass), naming the tasks."""
        found = [] if allow_partial else self.partial_lines()
        figures = [("Overall Average", self.overall)] + [(f"{t.task} score", t.score) for t in self.tasks]
        for name, figure in figures:
            change, test = figure.change, figure.test
            if change is not None and change < -threshold and test is not None and test.significant:
                found.append(
                    f"{name} fell by {-change:.4f} ({figure.a:.4f} -> {figure.b:.4f}), more than "
                    f"--fail-over-regression {threshold:g}, significant (paired test p {fmt.p_value(test.p_value)})"
                )
        return found

    def partial_lines(self) -> list[str]:
        """One line for A and for B when it is partial: its coverage and the tasks it lacks."""
        return [
            f"{entry.label} is {entry.partial_text} tasks of the benchmark (missing: {entry.coverage.listing()}), "
            "so --fail-over-regression cannot pass (--allow-partial accepts it)"
            for entry in (self.a, self.b)
            if entry.coverage.partial
        ]

    def to_json(self) -> JSONObject:
        """diff.json's object."""
        return {
            "a": {"directory": str(self.a.directory), "label": self.a.label, "notes": self.a.notes},
            "b": {"directory": str(self.b.directory), "label": self.b.label, "notes": self.b.notes},
            "forced": self.forced,
            "warnings": self.warnings,
            "overall": self.overall.to_json(),
            "tasks": {
                t.task: {"score": t.score.to_json(), "metrics": {k: c.to_json() for k, c in t.metrics.items()}}
                for t in self.tasks
            },
            "flipped": [f.to_json() for f in self.flips],
            "differences": [{"key": d.key, "a": d.a, "b": d.b} for d in self.differences],
        }


def _mean(figure: Stat | None) -> float | None:
    return None if figure is None or figure.mean is None else float(figure.mean)


def metric_item_scores(samples: Iterable[Sample]) -> dict[str, dict[str, dict[str, float]]]:
    """Per metric, per task, each item's value of the metric averaged over its runs (the
    shape :func:`~taxpraben.report.significance.paired_bootstrap` takes)."""
    sums: dict[tuple[str, str, str], list[float]] = {}
    for item in samples:
        for metric, value in item.scores.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                sums.setdefault((metric, item.task, item.id), []).append(float(value))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (metric, task, item_id), values in sums.items():
        out.setdefault(metric, {}).setdefault(task, {})[item_id] = sum(values) / len(values)
    return out


def _binary(score: object) -> float | None:
    """A score that is exactly 0 or 1 (right or wrong), else None."""
    return float(score) if isinstance(score, (int, float)) and score in (0, 1) else None


def flipped_items(a: Iterable[Sample], b: Iterable[Sample]) -> list[Flip]:
    """The (task, id, run) scored 0 in one run and 1 in the other, in B's order; A is held
    in memory only for its right-or-wrong items (their reading and score)."""
    held: dict[tuple[str, str, int], tuple[JSONValue, float]] = {}
    for item in a:
        score = _binary(item.score)
        if score is not None:
            held[(item.task, item.id, item.run)] = (item.extracted, score)
    flips = []
    for item in b:
        score = _binary(item.score)
        before = held.get((item.task, item.id, item.run))
        if score is not None and before is not None and before[1] != score:
            flips.append(Flip(item.task, item.id, item.run, before[0], before[1], item.extracted, score))
    return flips


def _flatten(value: JSONValue, prefix: str = "") -> Iterator[tuple[str, JSONValue]]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def made_differently(a: Entry, b: Entry) -> list[Difference]:
    """How A and B were made differently, key by key: from their manifests when both have
    one (data files, task specs, versions, packages, generation, model arguments, scorer
    models...; not the times), else from the meta (:data:`META_COMPARED`); the model first."""
    ma, mb = manifest_of(a.results), manifest_of(b.results)
    if ma is not None and mb is not None:
        flat_a = dict(_flatten({k: v for k, v in ma.items() if k not in UNCOMPARED}))
        flat_b = dict(_flatten({k: v for k, v in mb.items() if k not in UNCOMPARED}))
    else:
        meta_a, meta_b = a.results.meta.to_json(), b.results.meta.to_json()
        flat_a = dict(_flatten({k: meta_a.get(k) for k in META_COMPARED}))
        flat_b = dict(_flatten({k: meta_b.get(k) for k in META_COMPARED}))
    keys = list(dict.fromkeys([*flat_a, *flat_b]))
    found = [Difference(k, flat_a.get(k), flat_b.get(k)) for k in keys if flat_a.get(k) != flat_b.get(k)]
    if a.results.meta.model != b.results.meta.model:  # the manifest does not name the model
        found.insert(0, Difference("model", a.results.meta.model, b.results.meta.model))
    return found


def build_diff(
    a_dir: Path,
    b_dir: Path,
    *,
    force: bool = False,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = significance.DEFAULT_SEED,
) -> Diff:
    """Load A and B, check that they are comparable (IncompatibleResultsError unless
    ``force``), and compute every change, test, flip and difference; nothing written."""
    a, b = Entry(reviewed_view(load_run(Path(a_dir))), ""), Entry(reviewed_view(load_run(Path(b_dir))), "")
    for entry, name in ((a, "A"), (b, "B")):
        entry.label = f"{name}: {entry.view.label}"
    warnings = check_compatible([a, b], force=force, action="compare the two runs")
    a.items, b.items = significance.item_scores(a.view.samples()), significance.item_scores(b.view.samples())
    a_metrics, b_metrics = metric_item_scores(a.view.samples()), metric_item_scores(b.view.samples())
    shared = [t for t in b.computed_tasks if t in set(a.computed_tasks)]

    def test(b_items: dict[str, dict[str, float]], a_items: dict[str, dict[str, float]], tasks: list[str]) -> significance.PairedTest | None:
        return significance.paired_bootstrap(b_items, a_items, tasks, resamples=resamples, seed=seed)

    tasks = []
    for task in shared:
        ra, rb = a.results.tasks[task], b.results.tasks[task]
        metrics = {
            key: Change(_mean(ra.metrics.get(key)), _mean(figure),
                        test(b_metrics.get(key, {}), a_metrics.get(key, {}), [task]))
            for key, figure in rb.metrics.items()
            if key in ra.metrics
        }  # fmt: skip
        tasks.append(TaskDiff(task, Change(_mean(ra.score), _mean(rb.score), test(b.items, a.items, [task])), metrics))
    overall = Change(_mean(a.results.overall), _mean(b.results.overall), test(b.items, a.items, shared))
    flips = flipped_items(a.view.samples(), b.view.samples())
    return Diff(a, b, overall, tasks, flips, made_differently(a, b), warnings, force)


def _signed(value: float | None, metric: str) -> str:
    """A change in ``metric``'s units: points for fractions and rates, as is for raw BARTScore."""
    if value is not None and fmt.number(0.0, metric) == "0.000":  # a raw figure (not in points)
        return f"{value:+.3f}"
    return fmt.signed_points(value)


def _p(test: significance.PairedTest | None) -> str:
    if test is None:
        return "n/a"
    return f"{fmt.p_value(test.p_value)}" + (" *" if test.significant else "")


def _value(value: object) -> str:
    text = "–" if value is None else json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return cell(text if len(text) <= 80 else text[:79] + "…")


def render_diff_markdown(diff: Diff, *, shown_flips: int = 50) -> str:
    """The diff as Markdown: changes (points, B - A), flipped items, how the runs differ."""
    lines = ["# taxpraben diff", "", f"- A: {cell(diff.a.view.label)} (`{cell(str(diff.a.directory))}`)",
             f"- B: {cell(diff.b.view.label)} (`{cell(str(diff.b.directory))}`)", ""]  # fmt: skip
    lines += [f"> **Warning:** {cell(w)}" for w in diff.warnings] + ([""] if diff.warnings else [])
    lines += ["| Task | Figure | A | B | B - A | paired Δ | p |", "|---|---|---:|---:|---:|---:|---:|"]
    rows: list[tuple[str, str, Change]] = [("Overall Average", "score", diff.overall)]
    for t in diff.tasks:
        rows.append((t.task, "score", t.score))
        rows += [(t.task, key, change) for key, change in t.metrics.items()]
    for task, figure, change in rows:
        paired = _signed(change.test.difference, figure) if change.test else "n/a"
        lines.append(f"| {cell(task)} | {cell(figure)} | {fmt.number(change.a, figure)} | "
                     f"{fmt.number(change.b, figure)} | {_signed(change.change, figure)} | {paired} | "
                     f"{_p(change.test)} |")  # fmt: skip
    lines += ["", "Points out of 100 (rates in %, raw BARTScore as is); paired Δ and p: the paired bootstrap over the items both runs scored "
              "(* significant at 0.05); n/a: a figure over a whole run, with no item scores.", ""]  # fmt: skip
    fixed = sum(1 for f in diff.flips if f.direction == "fixed")
    lines += [f"## Flipped items ({fixed} fixed, {len(diff.flips) - fixed} broken)", ""]
    if diff.flips:
        lines += ["| Task | Id | Run | | A read | A | B read | B |", "|---|---|---:|---|---|---:|---|---:|"]
        for f in diff.flips[:shown_flips]:
            lines.append(f"| {cell(f.task)} | {cell(f.id)} | {f.run} | {f.direction} | {_value(f.a_extracted)} | "
                         f"{f.a_score:g} | {_value(f.b_extracted)} | {f.b_score:g} |")  # fmt: skip
        if len(diff.flips) > shown_flips:
            lines.append(f"\n... and {len(diff.flips) - shown_flips} more (all in {DIFF_JSON}).")
    else:
        lines.append("None.")
    lines += review_side_by_side(diff.a.results, diff.b.results)
    lines += ["", "## How the runs were made differently", ""]
    if diff.differences:
        lines += ["| Key | A | B |", "|---|---|---|"]
        lines += [f"| `{cell(d.key)}` | {_value(d.a)} | {_value(d.b)} |" for d in diff.differences]
    else:
        lines.append("No difference.")
    return "\n".join(lines) + "\n"


def write_diff(diff: Diff, out: Path) -> Path:
    """``out/diff.json`` (``out`` created when missing)."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        path = out / DIFF_JSON
        path.write_text(json.dumps(diff.to_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write {out / DIFF_JSON}: {exc}") from exc
    return path
