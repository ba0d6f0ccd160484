"""`taxpraben explain` (how one output was read) and `taxpraben rules` (the reading rules)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from taxpraben.commands.common import cli_console
from taxpraben.commands.options import TaskDirOpt
from taxpraben.report.explain import (
    Explanation,
    FieldLine,
    chain_used,
    explanation,
    marked,
    rule_rows,
    rules_json,
    shown_value,
    traced_reading,
)
from taxpraben.report.load import ReportError, iter_samples, read_results

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.results import Sample
    from taxpraben.results.json_value import JSONObject
    from taxpraben.tasks.registry import Registry

_STYLE = {"fired": "bold green", "vetoed": "bold red", "did not read": "dim", "did not apply": "dim", "not tried": "dim italic"}


def rules(as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False) -> None:
    """List the answer-reading rules: name, the kinds they read, tier, confidence, examples
    (a plugin's rules too: $TAXPRABEN_PLUGINS and the taxpraben.plugins entry points)."""
    from taxpraben.kinds import PluginError, load_plugins

    try:
        load_plugins()
    except PluginError as exc:
        cli_console().print(f"[red]{escape(str(exc))}[/red]", highlight=False)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(rules_json())
        return
    table = Table(title="Answer-reading rules (taxpraben explain OUT TASK ID shows one reading)", show_lines=True)
    for col in ("rule", "kinds", "chains", "tier", "confidence", "reads", "examples: output -> reading"):
        table.add_column(col, overflow="fold")
    for row in rule_rows():
        # Text cells: a description or an output is printed as written, never read as console
        # markup ("[X]...[/X]" is a tag style models use, not a style of rich's)
        examples = [_example_text(ex) for ex in row["examples"]]
        examples += [f"leaves alone: {_example_text(ex)}" for ex in row["leaves_alone"]]
        table.add_row(Text(row["name"]), Text(", ".join(row["kinds"])), Text(", ".join(row["chains"])),
                      Text(str(row["tier"])), Text(row["confidence"]), Text(row["description"]),
                      Text("\n".join(examples)))
    cli_console().print(table)


def _example_text(example: JSONObject) -> str:
    """One example as a line: its output (quoted, on one line) and the reading expected."""
    expect = example["expect"]
    reading = "no answer" if expect is None else repr(expect)
    return f"{json.dumps(example['output'], ensure_ascii=False)} -> {reading}"


def explain(
    out_dir: Annotated[Path, typer.Argument(help="A result directory of `run` or `score`.")],
    task: Annotated[str, typer.Argument(help="The task (TaxSCQ, TaxCalc, ...).")],
    item_id: Annotated[str, typer.Argument(metavar="ID", help="The item's id.")],
    run: Annotated[int, typer.Option("--run", min=0, help="Which run's output (default: 0).")] = 0,
    task_dir: TaskDirOpt = None,
) -> None:
    """Show how one output was read and why the point was given or withheld: the rules tried
    in order, the one that read it or vetoed it, the evidence in the output (highlighted; marked
    ⟦…⟧ when piped), the value, the gold, the comparison and its outcome, each field, the
    judge, and reviewers' verdicts."""
    from taxpraben.commands.inspect_data import registry_or_exit

    console = cli_console()
    try:
        item = next((it for it in iter_samples(out_dir) if (it.task, it.id, it.run) == (task, item_id, run)), None)
    except ReportError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]", highlight=False)
        raise typer.Exit(2) from exc
    if item is None:
        console.print(f"[red]No item {escape(task)} id {escape(item_id)} run {run} in {out_dir}/samples.jsonl.[/red]",
                      highlight=False)
        raise typer.Exit(2)
    registry = registry_or_exit(task_dir, console)
    shown = _explained(out_dir, registry, item)
    chain = f", chain {escape(shown.chain)}" if shown.chain else ""
    console.print(f"[bold]{escape(task)} id {escape(item_id)} run {run}[/bold]: {shown.kind} reader{chain}, "
                  f"status {shown.status}", highlight=False)
    if shown.untraced:
        console.print(f"  [yellow]No trace of the chain: {escape(shown.untraced)}.[/]", highlight=False)
    for step in shown.steps:
        detail = f": {escape(step.detail)}" if step.detail else ""
        console.print(f"  [{_STYLE[step.outcome]}]{step.outcome:>12}  {step.name}[/] ({step.confidence}){detail}",
                      highlight=False)
    _print_reading(console, shown)
    for line in review_lines(out_dir, item):
        console.print(escape(line), highlight=False)


def _print_reading(console: Console, shown: Explanation) -> None:
    """The output with its evidence (highlighted on a terminal, else between ⟦ and ⟧), the
    reading, the gold, the comparison and its outcome, each field, and the judge."""
    spans = shown.spans
    what = "each field's value" if shown.fields else "the stretch the answer was read from"
    if console.is_terminal:
        console.print(f"Output (evidence highlighted: {what}):", highlight=False)
        console.print(_highlighted(shown.prediction, spans), highlight=False)
    else:
        console.print(f"Output (evidence between ⟦ and ⟧: {what}):", highlight=False)
        console.print(escape(marked(shown.prediction, spans)), highlight=False)
    if not spans:
        console.print("  (no evidence: nothing was read from the output)", highlight=False)
    span = f" [{shown.evidence[0]}, {shown.evidence[1]})" if shown.evidence else ""
    score = "not computed" if shown.score is None else f"{shown.score:g}"
    if shown.read_by:
        confidence = f"; confidence {shown.confidence}" if shown.confidence else ""
        console.print(f"Read by {escape(shown.read_by)}{span}{confidence}; value {escape(shown_value(shown.value))}; "
                      f"score {score}", highlight=False)
    else:
        console.print(f"Read by nothing ({escape(shown.failure or shown.status)}); score {score}", highlight=False)
    console.print(f"Gold: {escape(shown_value(shown.gold, 'none given'))}", highlight=False)
    console.print(f"Comparison: {escape(shown.comparison)}", highlight=False)
    console.print(f"Outcome: {escape(shown.outcome)}", highlight=False)
    if shown.fields:
        console.print("Fields:", highlight=False)
        for f in shown.fields:
            console.print(f"  {escape(_field_line(f))}", highlight=False)
    console.print(f"Judge: {escape(shown.judge)}", highlight=False)


def _highlighted(text: str, spans: list[tuple[int, int]]) -> str:
    out, at = [], 0
    for start, end in spans:
        if start < at:
            continue
        out += [escape(text[at:start]), f"[reverse bold]{escape(text[start:end])}[/]"]
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def _field_line(f: FieldLine) -> str:
    """One field: what was read and where, the gold, the outcome."""
    where = ""
    if f.span is not None:
        where = f" at [{f.span[0]}, {f.span[1]})" + (" (found after the field's name)" if f.located else "")
    if f.kind == "text":
        score = "not computed (semantic scoring off or pending)" if f.score is None else f"{f.score:.4f}"
        read = "nothing" if f.read is None else f"{len(str(f.read))} characters{where}"
        return f"{f.name} (text): read {read}; scored by BERTScore against the gold's: {score}"
    if f.read is None:
        outcome = f"{f.status}: no value read, scores 0"
    elif f.status == "format_failure":
        outcome = f"format failure of the field ({f.failure or 'no value read'}), scores 0"
    elif f.score == 1:
        outcome = "equal: 1"
    else:
        outcome = f"not equal: {0 if f.score is None else f.score:g}"
    key = f", key matched {f.matched_by}" if f.matched_by not in ("?", "exact", "missing") else ""
    return (f"{f.name} ({f.kind}{key}): read {shown_value(f.read)}{where}; gold {shown_value(f.gold, 'none')}; "
            f"{outcome}")


def review_lines(out_dir: Path, item: Sample) -> list[str]:
    """What people said of ``item``'s readings (OUT/review.jsonl): each reviewer's last
    verdict, stale ones marked; "Review: not reviewed" without one."""
    from taxpraben.review.draw import readings_of
    from taxpraben.review.store import REVIEW_FILE, ReviewFileError, is_stale, latest, read_verdicts

    try:
        verdicts = read_verdicts(Path(out_dir) / REVIEW_FILE)
        results = read_results(out_dir)
    except (ReviewFileError, ReportError) as exc:
        return [f"Review: cannot be read ({exc})"]
    task_type = results.tasks[item.task].type or "" if item.task in results.tasks else ""
    current = {r.field: r for r in readings_of(item, task_type)}
    found = []
    for (key, reviewer), v in latest(verdicts).items():
        if key[:3] != (item.task, item.id, item.run):
            continue
        reading = current.get(key[3])
        stale = reading is None or is_stale(v, reading.read, reading.output)
        said = f"wrong, the output gives {shown_value(v.answer, 'no answer')}" if v.verdict == "wrong" else v.verdict
        field = f" (field {key[3]})" if key[3] is not None else ""
        note = " [stale: the reading changed since; not counted]" if stale else ""
        found.append(f"Review{field}: {reviewer} said {said}{f' at {v.at}' if v.at else ''}{note}")
    return found or ["Review: not reviewed (taxpraben review OUT_DIR draws readings to check)"]


def _explained(out_dir: Path, registry: Registry, item: Sample) -> Explanation:
    """``item`` explained with the trace of its chain: its record is read from the data
    directory results.json names and its output read again with the results' profile;
    without them, the explanation says why there is no trace."""
    from taxpraben.data.loader import load_data
    from taxpraben.data.problems import DataError

    spec = registry.get(item.task)
    if spec is None:
        return explanation(item, None, untraced=f"task {item.task} is not in the task registry")
    try:
        results = read_results(out_dir)
    except ReportError as exc:
        return explanation(item, spec, untraced=str(exc))
    data_dir = results.meta.data_dir
    if not data_dir or not Path(data_dir).exists():
        return explanation(item, spec, untraced=f"the data directory {data_dir!r} of {out_dir}/results.json "
                                                "is not at hand to read the record again")
    try:
        records = load_data(data_dir, registry, [item.task]).records.get(item.task, [])
    except (DataError, OSError, ValueError) as exc:
        return explanation(item, spec, untraced=f"cannot read {item.task} from {data_dir}: {exc}")
    record = next((r for r in records if r.id == item.id), None)
    if record is None:
        return explanation(item, spec, untraced=f"no record {item.id} in {data_dir}")
    profile = results.meta.profile or "taxpraben"
    trace = traced_reading(spec, record, item.run, item.text, profile)
    return explanation(item, spec, trace, None if trace else f"profile {profile} reads it without a chain",
                       chain_used(spec, profile), profile)
