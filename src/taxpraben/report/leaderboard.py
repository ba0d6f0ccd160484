"""The leaderboard: several result directories ranked by Overall Average, with paired tests.

Results are compared only when they were computed alike: the same data and task specs (per
task, the hashes of ``meta.manifest`` when every result has one, else the one ``meta.data_hash``),
``--limit``, tasks, number of runs and scoring profile; otherwise ``IncompatibleResultsError``
is raised (naming the task and both hashes) unless ``force`` is given, and the forced leaderboard
says so at the top and marks its entries ("not comparable: TaxCalc data differs (ab12… vs
cd34…)"). Results of different taxpraben versions are ranked with a note; limited results
(``meta.limit``) and entries whose predictions errored are flagged. The "Δ next" column is the difference of the ranked
Overall Averages; the paired test's own estimate (over shared items) is shown beside it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from taxpraben.coverage import Coverage, coverage_of
from taxpraben.manifest import package_version
from taxpraben.report import format as fmt
from taxpraben.report import plots
from taxpraben.report.html import asset, environment
from taxpraben.report.load import ReportError
from taxpraben.report.markdown import cell
from taxpraben.report.overall_flags import flags_text, limit_words, scorer_refusal
from taxpraben.report.review import review_cell, reviewed_view
from taxpraben.report.significance import (
    ALPHA,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    PairedTest,
    item_scores,
    paired_bootstrap,
)
from taxpraben.report.tables import expected_predictions
from taxpraben.report.view import RunView, load_run
from taxpraben.results import OverallStat, Results

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

LEADERBOARD_MD = "leaderboard.md"
LEADERBOARD_HTML = "leaderboard.html"
LEADERBOARD_CSV = "summary.csv"


class IncompatibleResultsError(ReportError):
    """Result directories computed on different data or with different scoring profiles."""


@dataclass
class Entry:
    view: RunView  # the result directory, loaded once (:func:`~taxpraben.report.view.load_run`)
    label: str  # the view's label, with the directory's name where two entries share it
    items: dict[str, dict[str, float]] = field(default_factory=dict)
    #: What the table says of this entry: not comparable (forced), limited, its version.
    notes: list[str] = field(default_factory=list)

    @property
    def directory(self) -> Path:
        assert self.view.out_dir is not None  # a leaderboard's views are loaded from directories
        return self.view.out_dir

    @property
    def results(self) -> Results:
        return self.view.results

    @property
    def overall(self) -> OverallStat:
        return self.results.overall

    @property
    def computed_tasks(self) -> list[str]:
        return self.view.computed_tasks

    @property
    def coverage(self) -> Coverage:
        """What of the benchmark the entry covers (``partial: 13 of 14`` and why)."""
        return coverage_of(self.results)

    @property
    def partial_text(self) -> str:
        """``partial: 13 of 14`` beside a partial entry's Overall Average, '' otherwise."""
        return self.coverage.label

    @property
    def flags(self) -> str:
        """What is said beside the entry's Overall Average (``partial: 13 of 14 · non-standard
        scorer``, :mod:`taxpraben.report.overall_flags`), '' for the paper's figure."""
        return flags_text(self.results)

    @property
    def errors(self) -> tuple[int, int]:
        """(predictions that errored, predictions expected: records x runs), from ``meta``."""
        counts = self.results.meta.counts
        total = expected_predictions(self.results) or counts.scored_predictions or counts.predictions or 0
        return counts.errors or 0, total

    @property
    def error_flag(self) -> str:
        """``"12 of 40 errored"`` for an entry with errors, else ''."""
        errors, total = self.errors
        return f"{errors} of {total} errored" if errors else ""


def overall_gap(better: Entry, worse: Entry) -> float | None:
    """The difference of the two ranked Overall Averages (what the "Δ next" column shows)."""
    a, b = better.overall.mean, worse.overall.mean
    return None if a is None or b is None else float(a) - float(b)


@dataclass
class Comparison:
    better: Entry
    worse: Entry
    test: PairedTest | None


@dataclass
class Leaderboard:
    entries: list[Entry]  # ranked, best first
    comparisons: list[Comparison]  # adjacent pairs, in rank order
    tasks: list[str]
    warnings: list[str]
    profile: str
    data_hash: str

    @property
    def partial(self) -> list[Entry]:
        """The entries that lack some task of the benchmark (missing or not computed)."""
        return [e for e in self.entries if e.coverage.partial]


#: What must be equal for two results to be ranked together: (meta key, what it is, whether
#: an absent value is itself a problem). ``limit`` None means "every record", a value.
COMPARED_META = (
    ("data_hash", "data hashes", True),
    ("limit", "--limit values", False),
    ("tasks", "task sets", False),
    ("runs", "run counts", False),
    ("profile", "scoring profiles", True),
)


def manifest_of(results: Results) -> JSONObject | None:
    """``meta.manifest`` as a plain object, None when the results have none (older files)."""
    manifest = getattr(results.meta, "manifest", None)
    if manifest is None:
        return None
    if isinstance(manifest, dict):
        return manifest
    dump = getattr(manifest, "to_json", None) or getattr(manifest, "model_dump", None)
    return dump() if callable(dump) else None


def version_of(results: Results) -> str | None:
    """The taxpraben version that made ``results``: the manifest's, else ``meta.package_version``."""
    manifest = manifest_of(results) or {}
    made_by = manifest.get("taxpraben")
    version = made_by.get("version") if isinstance(made_by, dict) else None
    return version or results.meta.package_version


def short_hash(value: str | None) -> str:
    """A hash as a table shows it: its first 12 hex digits (no ``sha256:``) and "…"."""
    if value is None:
        return "unknown"
    digits = value.split(":", 1)[-1]
    return digits[:12] + "…" if len(digits) > 12 else digits


@dataclass(frozen=True)
class Mismatch:
    """One task whose data file or spec differs between results: each label's hash."""

    task: str
    what: str  # "data" or "task spec"
    hashes: dict[str, str | None]

    def refusal(self) -> str:
        """For the error: the task and every hash in full."""
        listing = "; ".join(f"{label}: {_shown(h)}" for label, h in self.hashes.items())
        return f"different {self.what} for {self.task} ({listing})"

    def marker(self) -> str:
        """For the table: ``not comparable: TaxCalc data differs (ab12… vs cd34…)``."""
        shown = " vs ".join(dict.fromkeys(short_hash(h) for h in self.hashes.values()))
        return f"not comparable: {self.task} {self.what} differs ({shown})"


#: The manifest's sections of per-task hashes, and what each is called.
MANIFEST_FILES = (("data_files", "data"), ("task_specs", "task spec"))


def manifest_mismatches(entries: list[Entry]) -> list[Mismatch] | None:
    """The tasks (shared by every manifest) whose data file or spec hash differs; None
    unless every entry has a manifest (the comparison then falls back to ``data_hash``)."""
    manifests = [manifest_of(e.results) for e in entries]
    if any(m is None for m in manifests):
        return None
    found: list[Mismatch] = []
    for section, what in MANIFEST_FILES:
        tables = [m.get(section) or {} for m in manifests if m is not None]
        shared = [task for task in tables[0] if all(task in t for t in tables[1:])]
        for task in shared:
            hashes = {e.label: (t[task] or {}).get("sha256") for e, t in zip(entries, tables, strict=True)}
            if len(set(hashes.values())) > 1:
                found.append(Mismatch(task, what, hashes))
    return found


def _meta_value(entry: Entry, key: str) -> JSONValue:
    value: JSONValue = getattr(entry.results.meta, key, None)
    if key == "tasks":
        return ",".join(sorted(value))
    if key == "runs" and value is None:
        return len(entry.overall.runs) or None
    return value


def judge_of(results: Results) -> str | None:
    """The judge that read the results (model and prompt version), None without one."""
    judge = results.meta.judge
    return None if judge is None else f"{judge.model} (prompt {judge.prompt_version})"


def check_compatible(entries: list[Entry], *, force: bool = False, action: str = "build the leaderboard") -> list[str]:
    """Raise unless every entry shares data (per task with manifests, else the data hash),
    task specs (with manifests), limit, tasks, run count, profile, second reader and scorer
    setup (:func:`~taxpraben.report.overall_flags.scorer_setup_of`); the refusal says to pass
    --force to ``action`` anyway.

    With ``force``, return the problems as warnings instead, and mark the entries (their
    ``notes``). Entries with errored predictions, limited entries and different taxpraben
    versions are flagged in a warning either way.
    """
    problems = []
    mismatches = manifest_mismatches(entries)
    for key, what, absent_is_problem in COMPARED_META:
        if key == "data_hash" and mismatches is not None:
            continue  # the manifests compare the data task by task
        values = {e.label: _meta_value(e, key) for e in entries}
        if len(set(values.values())) > 1 or (absent_is_problem and None in values.values()):
            shown = _limit_shown if key == "limit" else _shown
            listing = "; ".join(f"{label}: {shown(value)}" for label, value in values.items())
            problems.append(f"different {what} ({listing})")
            if key == "data_hash":
                marker = "not comparable: data differs (" + " vs ".join(
                    dict.fromkeys(short_hash(v) for v in values.values())) + ")"  # fmt: skip
                for e in entries:
                    e.notes.append(marker)
    for mismatch in mismatches or []:
        problems.append(mismatch.refusal())
        for e in entries:
            e.notes.append(mismatch.marker())
    unlike = coverage_problem(entries)
    if unlike is not None:
        problems.append(unlike)
    unlike_scorers = scorer_problem(entries)
    if unlike_scorers is not None:
        problems.append(unlike_scorers)
    judges = {e.label: judge_of(e.results) for e in entries}
    if len(set(judges.values())) > 1:  # a judge reads what the rules cannot: scores rise with it
        listing = "; ".join(f"{label}: {_shown(value) if value else 'no judge'}" for label, value in judges.items())
        problems.append(f"different second readers (--judge) ({listing})")
        for e in entries:
            e.notes.append(f"not comparable: judge {judges[e.label] or 'none'}")
    if problems and not force:
        raise IncompatibleResultsError(
            "refusing to compare results computed "
            + " and ".join(p.replace("different", "with different", 1) for p in problems)
            + ". Scores on different data or scoring rules are not comparable; "
            f"pass --force to {action} anyway (it will be marked as forced)."
        )
    warnings = [f"Forced comparison despite {p}." for p in problems]
    warnings += _version_and_limit_notes(entries)
    flagged = [f"{e.label} ({e.error_flag})" for e in entries if e.error_flag]
    if flagged:
        warnings.append(
            "Predictions errored (scored 0) for: " + ", ".join(flagged)
            + "; their scores measure failed requests as well as the model."
        )
    partial = [f"{e.label} ({e.partial_text}; missing: {e.coverage.listing()})" for e in entries if e.coverage.partial]
    if partial:
        warnings.append(
            "Partial Overall Average (tasks of the benchmark missing or not computed) for: "
            + ", ".join(partial)
            + "; their rank is not like for like."
        )
    return warnings


def coverage_problem(entries: list[Entry]) -> str | None:
    """A partial entry beside a full one (or beside one that computed other tasks): the
    problem, as ``check_compatible`` words unlike runs; None when every entry computed the
    same tasks. The entries are marked with their coverage (table Notes) either way."""
    for e in entries:
        if e.coverage.partial:
            e.notes.append(f"{e.partial_text} (missing: {e.coverage.listing()})")
    computed = {e.label: frozenset(e.coverage.computed) for e in entries}
    if len(set(computed.values())) <= 1:
        return None
    listing = "; ".join(f"{e.label}: {e.partial_text or 'all ' + str(len(e.coverage.benchmark))}" for e in entries)
    partial = sum(e.coverage.partial for e in entries)
    beside = ("partial runs of different tasks" if partial == len(entries) else
              "a partial run beside a full one" if partial == 1 else "partial runs beside a full one")  # fmt: skip
    return f"different computed tasks, {beside} ({listing})"


def scorer_problem(entries: list[Entry]) -> str | None:
    """Entries whose semantic scorers were set up differently (:func:`scorer_refusal`): the
    problem, the entries marked; None when every setup is one."""
    problem, markers = scorer_refusal({e.label: e.results for e in entries})
    for e in entries:
        if e.label in markers:
            e.notes.append(markers[e.label])
    return problem


def _version_and_limit_notes(entries: list[Entry]) -> list[str]:
    """Notes (and the entries' marks) for different taxpraben versions and for limited runs."""
    warnings = []
    versions = {e.label: version_of(e.results) for e in entries}
    if len(set(versions.values())) > 1:
        common = Counter(versions.values()).most_common(1)[0][0]
        for e in entries:
            if versions[e.label] != common:
                e.notes.append(f"taxpraben {_shown(versions[e.label])}")
        warnings.append(
            "Made with different taxpraben versions ("
            + "; ".join(f"{label}: {_shown(v)}" for label, v in versions.items())
            + "): ranked together, but scoring may differ between versions."
        )
    limited = [(e, getattr(e.results.meta, "limit", None)) for e in entries]
    limited = [(e, limit) for e, limit in limited if limit is not None]
    for e, limit in limited:
        e.notes.append(f"limited: {limit_words(limit)}")
    if limited:
        warnings.append(
            "Limited runs (--limit: not every record) for: "
            + ", ".join(f"{e.label} ({limit_words(limit)})" for e, limit in limited)
            + "; their scores are of a subset of the data."
        )
    return warnings


def _shown(value: object) -> str:
    return "unknown" if value is None else str(value)


def _limit_shown(value: object) -> str:
    """A ``--limit`` as the refusal lists it: none is every record, not an unknown."""
    return "every record (no --limit)" if value is None else limit_words(value)


def build_leaderboard(
    dirs: list[Path],
    *,
    force: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Leaderboard:
    """Load, check, rank and test; no files written."""
    if len(dirs) < 2:
        raise ReportError("a leaderboard needs at least two result directories")
    entries = [Entry(reviewed_view(load_run(Path(d))), "") for d in dirs]
    labels = [e.view.label for e in entries]
    for e, label in zip(entries, labels, strict=True):
        e.label = f"{label} ({e.directory.name})" if labels.count(label) > 1 else label
    warnings = check_compatible(entries, force=force)
    entries.sort(key=lambda e: -(e.overall.mean if e.overall.mean is not None else -1.0))
    for e in entries:
        e.items = item_scores(e.view.samples())
    comparisons = []
    for better, worse in itertools.pairwise(entries):
        shared = [t for t in better.computed_tasks if t in set(worse.computed_tasks)]
        test = paired_bootstrap(better.items, worse.items, shared, resamples=resamples, seed=seed)
        comparisons.append(Comparison(better, worse, test))
    tasks: list[str] = []
    for e in entries:
        tasks += [name for name in e.view.task_names if name not in tasks]
    meta = entries[0].results.meta
    return Leaderboard(entries, comparisons, tasks, warnings, meta.profile or "?", meta.data_hash or "?")


def _task_score(entry: Entry, task: str) -> str:
    data = entry.results.tasks.get(task)
    if data is None:
        return "–"
    if not data.computed:
        return "not computed"
    return fmt.number(data.score.mean if data.score is not None else None)


def _verdict(test: PairedTest | None) -> str:
    if test is None:
        return "n/a (no shared items)"
    return "yes" if test.significant else "no (not significant)"


def method_note(resamples: int, seed: int) -> str:
    return (
        f"Paired bootstrap over items ({resamples} resamples, seed {seed}): each item's score is averaged "
        "over runs; the difference is the mean over shared tasks of the per-task mean differences on the "
        f"items both models scored; two-sided p-value; significant when p < {ALPHA}. Classification items "
        "count as correct or not, so a difference may differ slightly from the table's (ACC+F1)/2 scores."
    )


def render_leaderboard_markdown(board: Leaderboard) -> str:
    lines = ["# TaxPraBen leaderboard", ""]
    lines.append(
        f"Profile `{cell(board.profile)}` · data `{cell(board.data_hash)}` · {len(board.entries)} models"
    )
    lines.append("")
    for warning in board.warnings:
        lines.append(f"> **Warning:** {cell(warning)}")
        lines.append("")
    reviewed = any(e.results.review is not None for e in board.entries)
    headers = [
        "Rank",
        "Model",
        "Overall Average",
        *(["Human review"] if reviewed else []),
        "95% CI over runs",
        "Runs",
        "Errors",
        "Δ next",
        "vs next (paired test)",
        *board.tasks,
        "Notes",
    ]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|---:|---|---:|" + "---|" * reviewed + "---|---:|---|---:|---|" + "---:|" * len(board.tasks) + "---|")
    for rank, entry in enumerate(board.entries, 1):
        overall = entry.overall
        value = fmt.stat(overall) + (f" ({entry.flags})" if entry.flags else "")
        delta = vs = ""
        if rank <= len(board.comparisons):
            comparison = board.comparisons[rank - 1]
            delta = fmt.signed_points(overall_gap(comparison.better, comparison.worse))
            test = comparison.test
            vs = (
                "n/a"
                if test is None
                else f"Δ {fmt.signed_points(test.difference)}, p {fmt.p_value(test.p_value)}, "
                + ("significant" if test.significant else "**not significant**")
            )
        cells = [
            str(rank),
            cell(entry.label),
            value,
            *([cell(review_cell(entry.results))] if reviewed else []),
            fmt.interval(overall.ci95),
            str(len(overall.runs)),
            f"**{entry.error_flag}**" if entry.error_flag else "0",
            delta,
            vs,
            *(_task_score(entry, t) for t in board.tasks),
            cell("; ".join(entry.notes)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Overall Average: points out of 100, mean ± std over runs; task columns: mean task score. "
        "Δ next: this Overall Average minus the next one's; the paired test's Δ is its own estimate "
        "over the items both scored (see below).",
        "",
    ]
    lines += ["## Adjacent pairs", ""]
    lines.append(
        "| Pair | Difference (points) | 95% bootstrap CI | p-value | Significant at 0.05 | Tasks | Shared items |"
    )
    lines.append("|---|---:|---|---:|---|---:|---:|")
    for k, comp in enumerate(board.comparisons, 1):
        test = comp.test
        pair = f"#{k} {cell(comp.better.label)} vs #{k + 1} {cell(comp.worse.label)}"
        if test is None:
            lines.append(f"| {pair} | n/a | n/a | n/a | {_verdict(None)} | 0 | 0 |")
            continue
        lines.append(
            f"| {pair} | {fmt.signed_points(test.difference)} | "
            f"[{fmt.signed_points(test.ci95[0])}, {fmt.signed_points(test.ci95[1])}] | {fmt.p_value(test.p_value)} | "
            f"{_verdict(test)} | {len(test.tasks)} | {test.items} |"
        )
    resamples, seed = _method(board)
    lines += ["", method_note(resamples, seed), ""]
    lines += ["## Result directories", ""]
    for entry in board.entries:
        lines.append(f"- {cell(entry.label)}: `{cell(str(entry.directory))}`")
    return "\n".join(lines) + "\n"


def _method(board: Leaderboard) -> tuple[int, int]:
    test = next((c.test for c in board.comparisons if c.test is not None), None)
    return (test.resamples, test.seed) if test else (DEFAULT_RESAMPLES, DEFAULT_SEED)


def render_leaderboard_html(board: Leaderboard) -> str:
    resamples, seed = _method(board)
    rows = []
    for rank, entry in enumerate(board.entries, 1):
        test = board.comparisons[rank - 1].test if rank <= len(board.comparisons) else None
        gap = (
            overall_gap(entry, board.comparisons[rank - 1].worse)
            if rank <= len(board.comparisons)
            else None
        )
        rows.append(
            {
                "rank": rank,
                "label": entry.label,
                "errors": entry.error_flag,
                "delta": fmt.signed_points(gap) if rank <= len(board.comparisons) else "",
                "paired_delta": fmt.signed_points(test.difference) if test else "",
                "overall": fmt.stat(entry.overall),
                "partial": entry.flags,
                "ci95": fmt.interval(entry.overall.ci95),
                "review": review_cell(entry.results),
                "runs": len(entry.overall.runs),
                "vs": None
                if rank > len(board.comparisons)
                else ("n/a" if test is None else f"p {fmt.p_value(test.p_value)}"),
                "significant": None if test is None else test.significant,
                "tasks": [_task_score(entry, t) for t in board.tasks],
                "directory": str(entry.directory),
            }
        )
    pairs = []
    for k, comp in enumerate(board.comparisons, 1):
        test = comp.test
        pairs.append(
            {
                "better": f"#{k} {comp.better.label}",
                "worse": f"#{k + 1} {comp.worse.label}",
                "difference": fmt.signed_points(test.difference) if test else "n/a",
                "ci95": f"[{fmt.signed_points(test.ci95[0])}, {fmt.signed_points(test.ci95[1])}]"
                if test
                else "n/a",
                "p": fmt.p_value(test.p_value) if test else "n/a",
                "verdict": _verdict(test),
                "significant": test.significant if test else None,
                "tasks": len(test.tasks) if test else 0,
                "shared": test.items if test else 0,
            }
        )
    return (
        environment()
        .get_template("leaderboard.html.j2")
        .render(
            board=board,
            rows=rows,
            reviewed=any(e.results.review is not None for e in board.entries),
            pairs=pairs,
            plot=plots.overall_intervals([(e.label, e.overall) for e in board.entries]),
            method=method_note(resamples, seed),
            css=Markup(asset("report.css")),
            version=package_version(),
            csp="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        )
    )


def write_leaderboard(
    dirs: list[Path],
    out: Path,
    force: bool = False,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Path]:
    """Write ``out/leaderboard.md`` and ``out/leaderboard.html``; return their paths.

    Raises ``IncompatibleResultsError`` when the directories differ in data hash or scoring
    profile and ``force`` is false, and ``ReportError`` for fewer than two directories or an
    unreadable results file.
    """
    board = build_leaderboard(dirs, force=force, resamples=resamples, seed=seed)
    return save_leaderboard(board, out)


def save_leaderboard(board: Leaderboard, out: Path) -> list[Path]:
    """Write a built leaderboard to ``out/leaderboard.md``, ``out/leaderboard.html`` and
    ``out/summary.csv`` (a row per model and task, and per model its Overall Average)."""
    from taxpraben.report.summary_csv import LEADERBOARD_COLUMNS, leaderboard_rows, write_rows

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out / LEADERBOARD_MD, out / LEADERBOARD_HTML
    md_path.write_text(render_leaderboard_markdown(board), encoding="utf-8")
    html_path.write_text(render_leaderboard_html(board), encoding="utf-8")
    rows = leaderboard_rows(
        (rank, e.label, e.directory, e.view, "; ".join(e.notes)) for rank, e in enumerate(board.entries, 1)
    )
    return [md_path, html_path, write_rows(out / LEADERBOARD_CSV, LEADERBOARD_COLUMNS, rows)]
