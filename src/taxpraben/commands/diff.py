"""``taxpraben diff A B``: what changed from result directory A to B, and whether it is real.

The diff is ``report.diff``'s (:func:`~taxpraben.report.diff.build_diff`); the CI gate
``--fail-over-regression`` is declared in ``taxpraben.options`` (``RegressionGateOptions``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from taxpraben.commands.common import cli_console
from taxpraben.commands.options import with_options
from taxpraben.options import RegressionGateOptions
from taxpraben.report.significance import DEFAULT_RESAMPLES, DEFAULT_SEED

#: The exit status of a significant regression beyond --fail-over-regression.
REGRESSION_EXIT = 5


def default_diff_dir(a: Path, b: Path) -> Path:
    """``diffs/A-vs-B`` in the working directory, by the result directories' names."""
    return Path("diffs") / f"{a.resolve().name}-vs-{b.resolve().name}"


@with_options
def diff(
    a: Annotated[Path, typer.Argument(metavar="A", help="Result directory A (the baseline).", show_default=False)],
    b: Annotated[Path, typer.Argument(metavar="B", help="Result directory B (the candidate).", show_default=False)],
    gate: RegressionGateOptions,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Directory to write diff.json in (default: diffs/A-vs-B, A and B the "
                     "directories' names; neither run's directory is written to)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Compare runs over different data, specs or settings anyway (marked).")
    ] = False,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Bootstrap resamples of the paired tests.")
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the paired bootstrap.")] = DEFAULT_SEED,
) -> None:
    """Per task and metric the change B - A with a paired test, the flipped items, how the runs differ."""
    from taxpraben.report import ReportError
    from taxpraben.report.diff import build_diff, render_diff_markdown, write_diff

    console, errors = cli_console(), cli_console(stderr=True)
    try:
        result = build_diff(a, b, force=force, resamples=resamples, seed=seed)
        path = write_diff(result, out or default_diff_dir(a, b))
    except ReportError as exc:
        errors.print(f"[red]Error:[/] {exc}", highlight=False)
        raise typer.Exit(code=2) from exc
    console.print(render_diff_markdown(result), markup=False, highlight=False)
    console.print(f"Wrote {path}", highlight=False)
    if gate.fail_over_regression is None:
        return
    regressions = result.regressions(gate.fail_over_regression, allow_partial=gate.allow_partial)
    for line in regressions:
        errors.print(f"Regression: {line}", style="red", markup=False, highlight=False)
    if regressions:
        raise typer.Exit(code=REGRESSION_EXIT)
