"""The tables of a report, as plain text cells, shared by the Markdown and HTML renderers.

Building them once means report.md and report.html cannot disagree about a figure. Each
takes the run's :class:`~taxpraben.report.view.RunView` (loaded and ordered once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from taxpraben.coverage import coverage_of
from taxpraben.kinds import all_metrics, kinds
from taxpraben.report import format as fmt
from taxpraben.report.load import TaskRow
from taxpraben.report.overall_flags import flags_text
from taxpraben.report.view import RunView
from taxpraben.results import GenerationMeta, Manifest, Results, RunCounts, ScorerInfo, TokenTally

NOT_COMPUTED_CELL = "not computed"
NOT_APPLICABLE = ""


@dataclass
class Row:
    cells: list[str]
    task: str | None = None  # the task a row is about (HTML links it to the sample browser)
    group: str | None = None  # the Bloom level heading a row sits under
    muted: bool = False  # a task that was not computed


@dataclass
class Table:
    key: str
    title: str
    headers: list[str]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def paper_table(run: RunView) -> Table:
    """Tasks grouped by Bloom level; each metric as mean ± std over runs; the task score last."""
    table = Table(
        "tasks",
        "Results by task",
        [
            "Bloom level",
            "Task",
            "名称",
            "Type",
            "N",
            *(label for _, label in fmt.metric_columns()),
            "Score",
        ],
    )
    for row in run.tasks:
        task = row.entry
        cells = [
            fmt.bloom_label(row.bloom),
            row.name,
            task.name_zh or "",
            fmt.type_label(row.kind),
            "" if task.n is None else str(task.n),
        ]
        for key, _ in fmt.metric_columns():
            if key not in task.metrics:
                cells.append(NOT_APPLICABLE)
            else:
                cells.append(fmt.stat(task.metrics[key], key))
        cells.append(fmt.stat(task.score) if row.computed else NOT_COMPUTED_CELL)
        table.rows.append(Row(cells, task=row.name, group=row.bloom, muted=not row.computed))
    table.notes.append(
        "Scores are points out of 100: the mean over runs ± the sample standard deviation over runs. "
        "BARTScore is exp(mean token log-likelihood); BARTScore (raw) is the mean log-likelihood itself."
    )
    # One note per distinct reason (a missing scorer usually stops several tasks at once).
    by_reason: dict[str, list[str]] = {}
    for row in run.tasks:
        if not row.computed:
            by_reason.setdefault(row.entry.reason or "no reason recorded", []).append(row.name)
    for reason, names in by_reason.items():
        table.notes.append(f"Not computed ({', '.join(names)}): {reason.rstrip('.')}.")
    for line in run.scorer_problems:
        table.notes.append(f"Scorer unavailable: {line}")
    return table


def group_tables(run: RunView) -> list[Table]:
    """Group scores by output type and by Bloom level (unweighted means of task scores)."""
    groups = {"type": run.results.groups.type, "bloom": run.results.groups.bloom}
    members: dict[tuple[str, str], list[str]] = {}
    for row in run.tasks:
        name = row.name if row.computed else f"{row.name} ({NOT_COMPUTED_CELL})"
        members.setdefault(("type", row.kind), []).append(name)
        members.setdefault(("bloom", row.bloom), []).append(name)
    out = []
    order = {
        "type": [kind.name for kind in kinds()],
        "bloom": list(run.bloom_levels),
    }
    titles = {"type": ("By output type", "Type"), "bloom": ("By Bloom level", "Bloom level")}
    for dimension in ("type", "bloom"):
        title, heading = titles[dimension]
        table = Table(f"groups-{dimension}", title, [heading, "Tasks", "Score", "95% CI over runs"])
        values = groups[dimension]
        names = [k for k in order[dimension] if k in values or (dimension, k) in members]
        names += [k for k in values if k not in names]
        for name in names:
            figure = values.get(name)
            label = fmt.bloom_label(name) if dimension == "bloom" else fmt.type_label(name)
            tasks = ", ".join(members.get((dimension, name), [])) or "(none)"
            table.rows.append(
                Row(
                    [label, tasks, fmt.stat(figure), fmt.interval(figure.ci95 if figure is not None else None)],
                    group=name if dimension == "bloom" else None,
                    muted=figure is None,
                )
            )
        table.notes.append(
            "A group's score is the unweighted mean of its computed tasks' scores, per run."
        )
        out.append(table)
    return out


def run_counts(row: TaskRow) -> RunCounts:
    """A task's items by status, summed over its runs."""
    runs = [run.counts for run in row.entry.per_run if run.counts is not None]
    return RunCounts(
        ok=sum(c.ok for c in runs),
        format_failure=sum(c.format_failure for c in runs),
        error=sum(c.error for c in runs),
    )


def failure_table(run: RunView) -> Table:
    """Format failures (unparseable output), generation errors and missing classification labels."""
    table = Table(
        "failures",
        "Format failures and errors",
        [
            "Task",
            "Format failures",
            "Errors",
            "Missing label",
            "Items ok / format failure / error (all runs)",
            "Why not read (all runs)",
        ],
    )
    for row in run.tasks:
        task = row.entry
        counts = run_counts(row)
        table.rows.append(
            Row(
                [
                    row.name,
                    fmt.stat(task.format_failure_rate, "format_failure_rate"),
                    fmt.stat(task.error_rate, "error_rate"),
                    fmt.stat(task.metrics["missing_rate"], "missing_rate")
                    if "missing_rate" in task.metrics
                    else NOT_APPLICABLE,
                    f"{counts.ok} / {counts.format_failure} / {counts.error}",
                    ", ".join(f"{why} {n}" for why, n in (task.format_failures or {}).items()),
                ],
                task=row.name,
            )
        )
    table.notes.append(
        "A format failure is an output the scorer could not parse; it scores 0 and is counted here, "
        "apart from wrong answers. Errors are generations that failed (they also score 0). Why: "
        "copy of the prompt, answers another question (an invented one), several different answers, "
        "hedges between options, no answer asserted (options only mentioned), no answer found."
    )
    return table


def field_table(run: RunView) -> Table | None:
    """Per-field figures of mixed tasks and multi-aspect generation, or None when there are none."""
    table = Table(
        "fields",
        "Fields and aspects",
        ["Task", "Field", "Kind", "Metric", "Value", "Format failures"],
    )
    declared = all_metrics()
    for row in run.tasks:
        for name, figures in (row.entry.fields or {}).items():
            # The field's first figure that a kind declares as a metric is the one shown.
            metrics = figures.metric_figures
            metric = next((k for k in metrics if k in declared), None)
            value = fmt.stat(metrics[metric], metric) if metric else NOT_APPLICABLE
            if not row.computed and metric and metrics[metric] is None:
                value = NOT_COMPUTED_CELL
            table.rows.append(
                Row(
                    [
                        row.name,
                        name,
                        figures.kind,
                        fmt.metric_label(metric) if metric else "",
                        value,
                        fmt.stat(figures.format_failure_rate, "format_failure_rate"),
                    ],
                    task=row.name,
                    muted=not row.computed,
                )
            )
    if not table.rows:
        return None
    table.notes.append(
        "A field missing from a prediction scores 0 and counts as a format failure of that field."
    )
    return table


def per_run_table(run: RunView) -> Table:
    """Each task's score in each run, then the Overall Average per run."""
    runs = run.results.meta.runs or 0
    for row in run.tasks:
        runs = max(runs, len(row.entry.per_run))
    table = Table(
        "per-run",
        "Scores per run",
        ["Task", *(f"Run {k}" for k in range(runs)), "Mean ± std", "95% CI over runs"],
    )
    for row in run.tasks:
        by_run = {r.run: r for r in row.entry.per_run}
        cells = [row.name]
        for k in range(runs):
            entry = by_run.get(k)
            cells.append(fmt.number(entry.score) if entry else "")
        score = row.entry.score
        cells += [
            fmt.stat(score) if row.computed else NOT_COMPUTED_CELL,
            fmt.interval(score.ci95 if score is not None else None),
        ]
        table.rows.append(Row(cells, task=row.name, muted=not row.computed))
    overall = run.results.overall
    per_run = list(overall.runs)
    table.rows.append(
        Row(
            [
                "Overall Average",
                *(fmt.number(v) for v in per_run + [None] * (runs - len(per_run))),
                fmt.stat(overall),
                fmt.interval(overall.ci95),
            ]
        )
    )
    return table


def expected_predictions(results: Results) -> int | None:
    """The predictions a result is over: its records x its runs (every (record, run) pair is
    scored, answered or not: a missing prediction is an error, not one fewer to count);
    None for results that do not say both."""
    items, runs = results.meta.counts.items, results.meta.runs
    return items * runs if items and runs else None


def problem_banner(run: RunView) -> list[str]:
    """What makes the figures less than a model's score, one line each, with counts.

    Shown at the top of report.md, report.html and the terminal summary whenever
    predictions errored or were missing, or tasks were not computed; [] otherwise.
    """
    counts = run.results.meta.counts
    rows = run.tasks
    by_task = [run_counts(row) for row in rows]
    total = expected_predictions(run.results) or sum(c.ok + c.format_failure + c.error for c in by_task)
    errors = counts.errors or sum(c.error for c in by_task)
    missing = counts.missing_predictions or 0
    lines = []
    if errors:
        every = "every prediction" if errors >= total else f"{errors} of {total} predictions"
        why = f" ({missing} of them had no prediction at all)" if missing else ""
        lines.append(
            f"{every} failed{why} and score 0 as errors: "
            + ("the scores below measure no model output." if errors >= total else "the scores below are lowered by them.")
        )
    elif missing:
        lines.append(f"{missing} of {total} predictions are missing and score 0.")
    lines += coverage_lines(run, [row.name for row in rows if not row.computed])
    judge = run.results.meta.judge
    banner = [judge.banner] if judge is not None and judge.banner else []
    return lines + truncation_lines(run) + banner


def coverage_lines(run: RunView, skipped: list[str]) -> list[str]:
    """One line for a partial Overall Average, its counts all of the benchmark's tasks:
    ``The Overall Average is partial: 5 of 14 tasks of the benchmark computed; 8 scored but not
    computed (...); 1 not scored (...)``, the label the reports show beside it; none for a
    whole one."""
    coverage = coverage_of(run.results)
    unscored = [task for task in coverage.missing if task not in run.results.tasks]
    if not skipped and not unscored:
        return []
    parts = []
    if skipped:
        parts.append(f"{len(skipped)} scored but not computed ({', '.join(skipped)})")
    if unscored:
        parts.append(f"{len(unscored)} not scored ({coverage.listing(unscored)})")
    return [f"The Overall Average is {coverage.label or 'partial'} tasks of the benchmark computed; "
            f"{'; '.join(parts)}."]  # fmt: skip


def _share(ci: list[float] | None) -> str:
    return f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""


def judge_lines(run: RunView) -> list[str]:
    """What the second reader did (``--judge``), one line each: the judge and how many items
    it read, the low-confidence outputs it was asked about (per task, only when some task
    had any), then the audit's agreement with its 95% Wilson interval, overall and per task;
    [] without a judge."""
    return [line for _, line in judge_pairs(run)]


def judge_pairs(run: RunView) -> list[tuple[str, str]]:
    """:func:`judge_lines`, each with what it is about (a label of the configuration table:
    Judge, Judge low confidence, Judge cap, Judge audit)."""
    judge = run.results.meta.judge
    if judge is None:
        return []
    entries = [(row.name, row.entry.judge) for row in run.tasks if row.entry.judge is not None]
    before = sum(e.items * (e.format_failure_rate_before or 0) for _, e in entries)
    after = sum(e.items * (e.format_failure_rate_after or 0) for _, e in entries)
    # Not "N of the format failures": it also reads unread fields of items the rules read in part,
    # and low-confidence readings.
    pairs = [("Judge", f"Judge {judge.model} (prompt {judge.prompt_version}): decided the reading of "
              f"{judge.read_by_judge or 0} items (format failures: {before:.0f} before it, {after:.0f} after); "
              f"{judge.requests or 0} requests ({judge.from_cache or 0} from the cache).")]  # fmt: skip
    low = [(name, e.low_confidence) for name, e in entries if e.low_confidence]
    if low:
        pairs.append(("Judge low confidence",
                      f"Low confidence: {sum(n for _, n in low)} output(s) the rules read only by a fallback (a field "
                      "matched by a fuzzy key) were asked as well, the judge's reading kept where it read a value ("
                      + ", ".join(f"{name} {n}" for name, n in low) + ")."))  # fmt: skip
    rejected = [(name, e.not_grounded) for name, e in entries if e.not_grounded]
    if rejected:
        whys: dict[str, int] = {}
        for _, e in entries:
            for why, n in (e.not_grounded_whys or {}).items():
                whys[why] = whys.get(why, 0) + n
        pairs.append(("Judge not grounded",
                      f"Not grounded: the judge's reading of {sum(n for _, n in rejected)} output(s) was rejected, "
                      "its quote no evidence in the output (" + ", ".join(f"{name} {n}" for name, n in rejected)
                      + "; " + ", ".join(f"{why}: {n}" for why, n in whys.items()) + ")."))  # fmt: skip
    capped = sum(e.capped for _, e in entries)
    if capped:
        pairs.append(("Judge cap", f"--judge-max-items {judge.max_items}: {capped} output(s) were left unread."))
    audit = judge.audit
    if audit is not None and audit.audited:
        pairs.append(("Judge audit", f"Audit ({judge.audit_per_task} per task, seed {judge.audit_seed}): rules and "
                      f"judge agree on {audit.agreed} of {audit.audited} outputs, {100 * (audit.agreement or 0):.1f}%"
                      f"{_share(audit.ci95)} (95% Wilson interval)"
                      + (f"; {audit.not_grounded} ungrounded repl(ies) left out." if audit.not_grounded else ".")))  # fmt: skip
        for name, entry in entries:
            a = entry.audit
            if a is not None and a.audited:
                pairs.append(("Judge audit", f"  {name}: {a.agreed} of {a.audited} agree, "
                              f"{100 * (a.agreement or 0):.1f}%{_share(a.ci95)}; failure rate "
                              f"{100 * (entry.format_failure_rate_before or 0):.1f}% -> "
                              f"{100 * (entry.format_failure_rate_after or 0):.1f}%"))  # fmt: skip
    return pairs


#: What a cut answer scores, by the task's output kind (what the kind does with it).
_CUT_SCORED = {
    "classification": "a classification task reads its label from what was written (none there: a format failure, 0)",
    "structured": "an exact-answer task reads its answer from what was written (not reached: a format failure, 0)",
    "mixed": "a mixed task reads the fields written and scores its text part on the cut text",
    "generation": "a generation task scores the cut text as it is (its overlap and semantic scores are lower)",
}


def truncation_lines(run: RunView) -> list[str]:
    """One line for every task whose answers were cut at the token budget (per-task counts,
    the most cut first) and what a cut answer scores for the kinds of those tasks; [] when
    none was (or the results say nothing of it)."""
    cut = [(row.name, row.entry.type or "", row.entry.ledger) for row in run.tasks
           if row.entry.ledger and row.entry.ledger.truncated]  # fmt: skip
    if not cut:
        return []
    generation = run.results.meta.generation
    at = f" at max_tokens={generation.max_tokens}" if generation and generation.max_tokens else " at the token budget"
    cut.sort(key=lambda x: -x[2].truncated_rate)
    counts = ", ".join(f"{task} {lg.truncated:,}/{lg.answers:,}" for task, _, lg in cut)
    kinds = dict.fromkeys(kind for _, kind, _ in cut)
    scored = "; ".join(_CUT_SCORED.get(kind, f"a {kind or 'task'} task scores what was written") for kind in kinds)
    return [f"Answers cut{at} (cut/answers): {counts}. A cut answer is scored as it is: {scored}. "
            "Raise --max-tokens, or see 'truncated' in the report's sample browser."]  # fmt: skip


def _tokens(tally: TokenTally) -> str:
    if not tally.generations:
        return NOT_APPLICABLE
    text = f"{tally.prompt_tokens:,} in / {tally.completion_tokens:,} out"
    if tally.reasoning_tokens:
        text += f" ({tally.reasoning_tokens:,} reasoning)"
    if tally.without_usage:
        text += f"; {tally.without_usage:,} without counts"
    if tally.counted_by_taxpraben:
        text += f"; {tally.counted_by_taxpraben:,} counted by taxpraben"
    return text


def _cost(tally: TokenTally, currency: str) -> str:
    return NOT_APPLICABLE if tally.cost is None or not tally.generations else f"{tally.cost:,.4f} {currency}"


def ledger_summary(run: RunView) -> str | None:
    """The whole run's ledger in one line (the terminal's), or None when there is none."""
    lg = run.results.ledger
    if lg is None or not lg.answers:
        return None
    currency = str((run.results.meta.pricing or {}).get("currency") or "")
    parts = [f"{lg.answers:,} answers" + (f" ({lg.truncated:,} cut at max tokens)" if lg.truncated else "")]
    parts.append(f"generated here {lg.generated.generations:,}" + (
        f": {_tokens(lg.generated)}" if lg.generated.generations else ""))  # fmt: skip
    if lg.from_cache.generations:
        parts.append(f"resumed: {lg.from_cache.generations:,} from the cache (nothing paid)")
    judged = judge_tally(run)
    if judged is not None:
        parts.append(f"judge {judged.generations:,} requests: {_tokens(judged)}")
    judge_cost = judged.cost if judged is not None else None
    if lg.generated.cost is not None and judge_cost is not None:
        parts.append(f"cost {lg.generated.cost + judge_cost:,.4f} {currency} (model {lg.generated.cost:,.4f} + "
                     f"judge {judge_cost:,.4f})")  # fmt: skip
    elif lg.generated.cost is not None:
        parts.append(f"cost {lg.generated.cost:,.4f} {currency}")
    elif judge_cost is not None:
        parts.append(f"judge cost {judge_cost:,.4f} {currency}")
    return " · ".join(parts)


def judge_tally(run: RunView) -> TokenTally | None:
    """The judge's requests sent in this scoring, their tokens and cost (``meta.judge.tokens``);
    None without a judge or when it sent nothing."""
    judge = run.results.meta.judge
    tally = (judge.tokens or {}).get("generated") if judge is not None else None
    return tally if tally is not None and tally.generations else None


def ledger_table(run: RunView) -> Table | None:
    """Per task and in total: answers cut at the token budget, generations made here and taken
    from the cache with their tokens, and what they cost; None when the results have no ledger."""
    rows = [(row.name, row.entry.ledger) for row in run.tasks if row.entry.ledger is not None]
    if not rows:
        return None
    pricing = run.results.meta.pricing or {}
    currency = str(pricing.get("currency") or "")
    headers = ["Task", "Answers", "Cut at max tokens", "Generated here: tokens", "From the cache: tokens"]
    if pricing:
        headers += [f"Cost ({currency})", f"Cached answers' cost ({currency})"]
    table = Table("ledger", "Answers: truncation, tokens and cost", headers)
    total = run.results.ledger
    for name, lg in [*rows, *([("All tasks", total)] if total is not None else [])]:
        cells = [
            name,
            f"{lg.answers:,}",
            f"{lg.truncated:,} ({lg.truncated_rate:.1%})" if lg.truncated else "0",
            f"{lg.generated.generations:,}: {_tokens(lg.generated)}" if lg.generated.generations else "0",
            f"{lg.from_cache.generations:,}: {_tokens(lg.from_cache)}" if lg.from_cache.generations else "0",
        ]
        if pricing:
            cells += [_cost(lg.generated, currency), _cost(lg.from_cache, currency)]
        table.rows.append(Row(cells, task=name if name != "All tasks" else None))
    judged = judge_tally(run)
    if judged is not None:  # the second reader's requests, counted apart from the model's answers
        cells = ["Judge", "", "", f"{judged.generations:,}: {_tokens(judged)}", ""]
        table.rows.append(Row(cells + ([_cost(judged, currency), ""] if pricing else [])))
    table.notes.append(
        "Cut answers stopped at the token budget (finish_reason length) and are scored as the rules read "
        "them. Generations count once when runs share one; tokens are as the backend reported them; answers "
        "from the completion cache were paid for by an earlier run."
    )
    if pricing:
        table.notes.append(f"Prices: {pricing.get('file') or 'the pricing file'}, per million tokens.")
    return table


def overall_summary(run: RunView) -> dict[str, str]:
    """The Overall Average as text pieces: value, coverage (what is said beside it:
    ``partial: 13 of 14``, ``non-standard scorer``, ``limited: ...``, ``1 run``, joined; ''
    for the paper's figure: :mod:`taxpraben.report.overall_flags`), intervals and a partial
    warning (or '')."""
    overall = run.results.overall
    coverage = coverage_of(run.results)
    partial = ""
    if coverage.partial:
        partial = (
            f"The Overall Average is {coverage.label} tasks of the benchmark; missing: "
            f"{coverage.listing() or 'see tasks'}. It is not comparable with a full Overall Average."
        )
    return {
        "value": fmt.stat(overall),
        "coverage": flags_text(run.results),
        "ci95": fmt.interval(overall.ci95),
        "bootstrap_ci95": fmt.interval(overall.bootstrap_ci95),
        "runs": str(len(overall.runs)),
        "partial": partial,
    }


def configuration(run: RunView) -> list[tuple[str, str]]:
    """The run configuration as (label, text) pairs, in reading order."""
    meta = run.results.meta
    pairs: list[tuple[str, str]] = [
        ("Model", str(meta.model or "(predictions scored with `taxpraben score`)")),
        ("Endpoint", str(meta.endpoint or "—")),
        ("Generation", _generation_text(meta.generation or GenerationMeta())),
        (
            "Runs",
            f"{'?' if meta.runs is None else meta.runs}"
            + (" (one shared deterministic generation)" if meta.shared_generation else ""),
        ),
        ("Scoring profile", str(meta.profile or "—")),
        ("Data directory", str(meta.data_dir or "—")),
        ("Data hash", str(meta.data_hash or "—")),
    ]
    if meta.limit is not None:
        limit = meta.limit
        pairs.append(("Limit", f"first {limit * 100:g}% per task" if isinstance(limit, float) and limit < 1
                      else f"first {limit} per task"))  # fmt: skip
    for name, scorer in meta.scorers.items():
        pairs.append((_scorer_label(name), _scorer_text(scorer)))
    if meta.manifest is not None:
        pairs += _manifest_pairs(meta.manifest)
    pairs += [(label, line.strip()) for label, line in judge_pairs(run)]
    counts = meta.counts.to_json()  # every counter written, newer writers' ones too
    if counts:
        pairs.append(("Counts", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())))
    version = str(meta.package_version or "?")
    if meta.git_hash:
        version += f" (git {meta.git_hash})"
    pairs.append(("taxpraben", version))
    pairs.append(
        (
            "Started / finished",
            f"{meta.started_at or '?'} / {meta.finished_at or '?'}",
        )
    )
    return pairs


def _short(digest: str | None) -> str:
    """A sha256 as the configuration shows it: its first 12 hex digits."""
    return "—" if not digest else digest.split(":", 1)[-1][:12]


def _manifest_pairs(manifest: Manifest) -> list[tuple[str, str]]:
    """The manifest's rows: versions, the data files' and specs' hashes (short), the scorers'
    revisions (the full values are in results.json's ``meta.manifest``)."""
    packages = ", ".join(f"{name} {version or '—'}" for name, version in manifest.packages.items())
    versions = f"taxpraben {manifest.taxpraben.version}, Python {manifest.python}" + (f", {packages}" if packages else "")
    pairs = [
        ("Versions", versions),
        ("Platform", f"{manifest.platform}; devices {', '.join(manifest.devices) or '—'}"),
        ("Data files (sha256)", ", ".join(f"{task} {_short(f.sha256)}" for task, f in manifest.data_files.items())
         or "—"),
        ("Task specs (sha256)", ", ".join(f"{task} {_short(f.sha256)}" for task, f in manifest.task_specs.items())
         or "—"),
        ("Prompt construction (sha256)", _short(manifest.prompt_template_sha256)),
    ]  # fmt: skip
    for name, scorer in manifest.scorers.items():
        revision = scorer.revision or "revision unknown"
        weights = f", weights {_short(scorer.weights_sha256)}" if scorer.weights_sha256 else ""
        pairs.append((f"{_scorer_label(name)} revision", f"{scorer.model} @ {revision}{weights}"))
    return pairs


def _generation_text(gen: GenerationMeta) -> str:
    parts = [
        f"{key}={value if value is not None else 'default'}"  # null: the backend's default
        for key, value in gen.given_items(("temperature", "top_p", "max_tokens", "seed_base"))
    ]
    if gen.system_prompt:
        prompt = gen.system_prompt
        parts.append(f"system_prompt={prompt[:80]!r}" + ("…" if len(prompt) > 80 else ""))
    else:
        parts.append("no system prompt")
    if gen.gen_kwargs:
        parts.append("gen_kwargs=" + ", ".join(f"{k}={v}" for k, v in gen.gen_kwargs.items()))
    return ", ".join(parts) if parts else "—"


def _scorer_label(name: str) -> str:
    return {"bertscore": "BERTScore scorer", "bartscore": "BARTScore scorer"}.get(
        name, f"{name} scorer"
    )


def _scorer_text(scorer: ScorerInfo) -> str:
    parts = [str(scorer.model or "?")]
    # Besides `layer`, each scorer writes settings of its own (extra keys): shown where written.
    for key, value in scorer.given_items(("layer", "idf", "max_tokens", "weights", "max_length")):
        parts.append(f"{key}={value if value is not None else 'none'}")
    if not scorer.available:
        parts.append(f"UNAVAILABLE ({scorer.reason or 'no reason recorded'})")
    return ", ".join(parts)
