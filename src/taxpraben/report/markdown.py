"""``report.md``: the paper-style table and everything needed to read it, as Markdown."""

from __future__ import annotations

from taxpraben.report import format as fmt
from taxpraben.report import review, tables
from taxpraben.report.view import RunView, as_view
from taxpraben.results import Results


def cell(text: str) -> str:
    """Text made safe for a Markdown table cell: no pipes, newlines or raw HTML."""
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\r", " ")
        .replace("\n", " ")
    )


def _numeric(text: str) -> bool:
    return bool(text) and (text[0] in "0123456789-+[" or text in (fmt.NOT_COMPUTED, "n/a"))


def render_table(table: tables.Table, *, heading_level: int = 2, group_column: bool = False) -> str:
    """A Markdown table; with ``group_column`` the first column is shown only where it changes."""
    lines = [f"{'#' * heading_level} {table.title}", ""]
    lines.append("| " + " | ".join(cell(h) for h in table.headers) + " |")
    align = []
    for i in range(len(table.headers)):
        column = [row.cells[i] for row in table.rows if i < len(row.cells) and row.cells[i]]
        numeric = column and sum(_numeric(c) for c in column) > len(column) / 2
        align.append("---:" if numeric else "---")
    lines.append("|" + "|".join(align) + "|")
    previous = None
    for row in table.rows:
        cells = [cell(c) for c in row.cells]
        if row.muted:  # a task that was not computed
            cells = [f"*{c}*" if c else c for c in cells]
        if group_column:
            cells[0] = f"**{cell(row.cells[0])}**" if row.cells[0] != previous else ""
            previous = row.cells[0]
        lines.append("| " + " | ".join(cells) + " |")
    for note in table.notes:
        lines += ["", cell(note)]
    return "\n".join(lines) + "\n"


def render_markdown(run: RunView | Results, *, label: str | None = None) -> str:
    """The whole report.md for one result directory (its view, or its results as loaded);
    ``label`` overrides the view's."""
    run = as_view(run)
    label = label or run.label
    overall = tables.overall_summary(run)
    meta = run.results.meta
    parts = [f"# TaxPraBen report: {cell(label)}", ""]
    parts.append(
        f"Profile `{cell(meta.profile or '?')}` · data `{cell(meta.data_hash or '?')}` · "
        f"{overall['runs']} run(s) · {len(run.results.tasks)} tasks"
    )
    for line in tables.problem_banner(run):
        parts += ["", f"> **Warning:** {cell(line)}"]
    for line in review.review_banner(run.results):
        parts += ["", f"> **Warning:** {cell(line)}"]
    parts += ["", "## Overall Average", ""]
    beside = f" · **{overall['coverage']}**" if overall["coverage"] else ""
    parts.append(f"**{overall['value']}**{beside} (mean ± std over runs, points out of 100)")
    parts.append("")
    parts.append(f"- 95% interval over runs (t): {overall['ci95']}")
    parts.append(f"- 95% bootstrap interval over items: {overall['bootstrap_ci95']}")
    human = run.results.review
    if human is not None:
        parts.append(f"- Human review: {cell(review.agreement_text(human.overall))}")
        if human.corrected_overall:
            parts.append(f"- Corrected by the human review (an estimate, not the protocol's figure): "
                         f"{review.corrected_text(human.corrected_overall)}")
    if overall["partial"]:
        parts += ["", f"> **{cell(overall['partial'])}**"]
    parts.append("")
    parts.append(render_table(tables.paper_table(run), group_column=True))
    for table in tables.group_tables(run):
        parts.append(render_table(table, heading_level=3))
    parts.append(render_table(tables.failure_table(run)))
    judge = tables.judge_lines(run)
    if judge:
        parts += ["## Judge (second reader)", "", *(f"- {cell(line.strip())}" for line in judge), ""]
    human_table = review.review_table(run.results)
    if human_table is not None:
        parts.append(render_table(human_table))
        parts += [*(f"- {cell(line)}" for line in review.review_lines(run.results)[1:]), ""]
    ledger = tables.ledger_table(run)
    if ledger is not None:
        parts.append(render_table(ledger))
    fields = tables.field_table(run)
    if fields is not None:
        parts.append(render_table(fields))
    parts.append(render_table(tables.per_run_table(run)))
    parts += ["## Run configuration", ""]
    for key, value in tables.configuration(run):
        parts.append(f"- **{cell(key)}**: {cell(value)}")
    parts.append("")
    parts.append(
        f'_Intervals: "95% CI over runs" is a t-interval over the {overall["runs"]} runs; '
        '"bootstrap" intervals resample items. Figures marked '
        f'{fmt.NOT_COMPUTED} or "not computed" could not be computed (see the notes)._'
    )
    return "\n".join(parts) + "\n"
