"""The `taxpraben` command line: the one place that wires the pipeline together."""

from __future__ import annotations

from typing import Annotated

import typer

from taxpraben import __version__
from taxpraben.commands.inspect_data import tasks, validate
from taxpraben.commands.merge import merge
from taxpraben.commands.report import report
from taxpraben.commands.run import run
from taxpraben.commands.score import score

app = typer.Typer(
    name="taxpraben",
    help="Evaluate LLMs on TaxPraBen, the benchmark of Chinese real-world tax practice.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"taxpraben {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Evaluate LLMs on TaxPraBen (Hu et al., 2026): 14 Chinese tax datasets, 5 runs each."""


app.command("tasks")(tasks)
app.command("validate")(validate)
app.command("run")(run)
app.command("score")(score)
app.command("merge")(merge)
app.command("report")(report)
