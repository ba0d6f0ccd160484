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
    chain_used,
    explanation,
    rule_rows,
    rules_json,
    traced_reading,
)
from taxpraben.report.load import ReportError, iter_samples, read_results

if TYPE_CHECKING:
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
    """Show how one output was read: the rules tried in order, the one that read it or
    vetoed it, the evidence highlighted in the output, the value and the score."""
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
    console.print("Output (evidence highlighted):", highlight=False)
    console.print(escape(shown.before) + f"[reverse bold]{escape(shown.shown)}[/]" + escape(shown.after),
                  highlight=False)
    read = shown.read_by or f"nothing ({shown.failure})"
    span = f" [{shown.evidence[0]}, {shown.evidence[1]})" if shown.evidence else ""
    console.print(f"Read by {escape(read)}{span}; confidence {shown.confidence}; value "
                  f"{escape(repr(shown.value))}; score {shown.score}", highlight=False)


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
                       chain_used(spec, profile))
