"""`taxpraben lm-eval-path` (where the lm-evaluation-harness tasks are) and `taxpraben export`
(an output directory in Inspect AI's or lm-evaluation-harness's format)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from taxpraben.commands.common import cli_console


def lm_eval_path() -> None:
    """Print the folder of TaxPraBen's lm-evaluation-harness tasks (lm_eval's --include_path).

    lm_eval --tasks taxpraben --include_path "$(taxpraben lm-eval-path)" --metadata '{"data": "DIR"}'
    """
    from taxpraben.integrations.lm_eval_tasks import include_path

    typer.echo(str(include_path()))


class Harness(str, Enum):
    """The formats ``export`` writes."""

    inspect = "inspect"
    lm_eval = "lm-eval"


def export(
    out_dir: Annotated[Path, typer.Argument(help="An output directory of run, score or merge.", show_default=False)],
    to: Annotated[Harness, typer.Option("--to", help="inspect: an Inspect AI log (inspect view opens it); lm-eval: "
                                        "results_*.json and samples_*.jsonl as lm-evaluation-harness writes them.")],
    out: Annotated[Path | None, typer.Option("--out", help="The folder to write into [default: OUT_DIR/inspect "
                                             "or OUT_DIR/lm-eval].", show_default=False)] = None,
) -> None:
    """Write an output directory's results in another harness's format: every sample with its
    answer, reading and scores, and the figures. `taxpraben score --predictions` reads both back."""
    from taxpraben.api.evaluation import load_results
    from taxpraben.report.load import ReportError

    console = cli_console()
    try:
        results = load_results(out_dir)
    except ReportError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(1) from None
    if results.file is None:
        console.print(f"{out_dir} holds generations not scored (no results.json): score them first "
                      f"(taxpraben score --predictions {out_dir / 'predictions.jsonl'} --data DIR)", style="red",
                      markup=False, highlight=False)  # fmt: skip
        raise typer.Exit(1)
    dest = out if out is not None else out_dir / to.value
    if to is Harness.inspect:
        try:
            from taxpraben.integrations.inspect_log import export_inspect
        except ImportError:
            console.print("--to inspect needs Inspect AI: pip install 'taxpraben[inspect]'", style="red", markup=False)
            raise typer.Exit(2) from None
        written = [export_inspect(results, dest)]
    else:
        from taxpraben.integrations.lm_eval_files import export_lm_eval

        written = export_lm_eval(results, dest)
    for path in written:
        console.print(str(path), markup=False, highlight=False)
