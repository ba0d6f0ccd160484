"""Reports: report.md and report.html for one result directory, a leaderboard for several.

Reads only ``results.json`` and ``samples.jsonl`` (docs/results-schema.md).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taxpraben.report.html import render_html
    from taxpraben.report.leaderboard import (
        IncompatibleResultsError,
        build_leaderboard,
        write_leaderboard,
    )
    from taxpraben.report.load import ReportError, load_results, load_samples
    from taxpraben.report.markdown import render_markdown
    from taxpraben.report.terminal import print_leaderboard, print_summary

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
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


REPORT_MD = "report.md"
REPORT_HTML = "report.html"


def write_reports(out_dir: Path) -> list[Path]:
    """Read ``out_dir/results.json`` and ``samples.jsonl``; write report.md and report.html.

    Returns the two paths. Raises ``ReportError`` when results.json is missing or unreadable;
    a missing samples.jsonl only leaves the sample browser empty.
    """
    from taxpraben.atomic import atomic_writer, write_text_atomically
    from taxpraben.report.html import write_html
    from taxpraben.report.load import iter_samples, load_results, model_label
    from taxpraben.report.markdown import render_markdown

    out_dir = Path(out_dir)
    results = load_results(out_dir)
    label = model_label(results, out_dir)
    md_path, html_path = out_dir / REPORT_MD, out_dir / REPORT_HTML
    write_text_atomically(md_path, render_markdown(results, label=label))
    with atomic_writer(html_path) as fh:  # samples streamed: never all in memory at once
        write_html(fh, results, iter_samples(out_dir), label=label)
    return [md_path, html_path]


__all__ = [
    "IncompatibleResultsError",
    "ReportError",
    "build_leaderboard",
    "load_results",
    "load_samples",
    "print_leaderboard",
    "print_summary",
    "render_html",
    "render_markdown",
    "write_leaderboard",
    "write_reports",
]
