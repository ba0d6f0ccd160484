"""Reports: report.md and report.html for one result directory, a leaderboard for several.

Reads only ``results.json`` and ``samples.jsonl`` (docs/results-schema.md), once per run: every
renderer takes the run's :class:`~taxpraben.report.view.RunView` (``load_run``, ``view_of``).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.report.html import render_html
    from taxpraben.report.leaderboard import (
        IncompatibleResultsError,
        build_leaderboard,
        write_leaderboard,
    )
    from taxpraben.report.load import ReportError, load_results, load_samples
    from taxpraben.report.markdown import render_markdown
    from taxpraben.report.samples import BrowserData
    from taxpraben.report.terminal import print_leaderboard, print_summary
    from taxpraben.report.view import RunView, load_run, view_of

#: Where each public name lives; imported on first use (PEP 562), so that importing one
#: submodule (or a command that reports at its end) does not load jinja2 and numpy at start.
_EXPORTS = {
    "render_html": "html",
    "IncompatibleResultsError": "leaderboard",
    "build_leaderboard": "leaderboard",
    "write_leaderboard": "leaderboard",
    "ReportError": "load",
    "load_results": "load",
    "load_samples": "load",
    "render_markdown": "markdown",
    "print_leaderboard": "terminal",
    "print_summary": "terminal",
    "RunView": "view",
    "load_run": "view",
    "view_of": "view",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


REPORT_MD = "report.md"
REPORT_HTML = "report.html"


def write_reports(out_dir: Path, view: RunView | None = None, browser: BrowserData | None = None) -> list[Path]:
    """Write ``out_dir``'s report.md, report.html and summary.csv from ``view``, its run (by default
    loaded from ``out_dir/results.json``, :func:`~taxpraben.report.view.load_run`); the
    sample browser streams ``out_dir/samples.jsonl``, unless ``browser`` holds its data
    already (built from the items that were written there).

    Returns the three paths. Raises ``ReportError`` when results.json is missing or unreadable;
    a missing samples.jsonl only leaves the sample browser empty. A ``view`` must be of
    ``out_dir`` (``load_run(out_dir)`` or ``view_of(results, out_dir)``).
    """
    from taxpraben.atomic import atomic_writer, write_text_atomically
    from taxpraben.report.html import write_html
    from taxpraben.report.markdown import render_markdown
    from taxpraben.report.summary_csv import write_summary_csv
    from taxpraben.report.view import load_run

    out_dir = Path(out_dir)
    if view is None:
        view = load_run(out_dir)
    elif view.out_dir is None or view.out_dir.resolve() != out_dir.resolve():
        raise ValueError(f"the view is of {view.out_dir or 'no directory'}, not of {out_dir}")
    md_path, html_path = out_dir / REPORT_MD, out_dir / REPORT_HTML
    write_text_atomically(md_path, render_markdown(view))
    with atomic_writer(html_path) as fh:  # samples streamed: never all in memory at once
        write_html(fh, view, browser)
    return [md_path, html_path, write_summary_csv(out_dir, view)]


__all__ = [
    "IncompatibleResultsError",
    "ReportError",
    "RunView",
    "build_leaderboard",
    "load_results",
    "load_run",
    "load_samples",
    "print_leaderboard",
    "print_summary",
    "render_html",
    "render_markdown",
    "view_of",
    "write_leaderboard",
    "write_reports",
]
