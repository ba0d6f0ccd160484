"""`taxpraben lm-eval-path`: where the lm-evaluation-harness tasks are (``--include_path``)."""

from __future__ import annotations

import typer


def lm_eval_path() -> None:
    """Print the folder of TaxPraBen's lm-evaluation-harness tasks (lm_eval's --include_path).

    lm_eval --tasks taxpraben --include_path "$(taxpraben lm-eval-path)" --metadata '{"data": "DIR"}'
    """
    from taxpraben.integrations.lm_eval_tasks import include_path

    typer.echo(str(include_path()))
