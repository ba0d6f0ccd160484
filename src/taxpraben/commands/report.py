"""``taxpraben report DIR [DIR...]``: rebuild the reports; with several directories, a leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taxpraben.commands.common import cli_console
from taxpraben.report.significance import DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.report.leaderboard import Leaderboard


def report(
    dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Result directories (each with results.json and samples.jsonl).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Where to write leaderboard.md/.html (several directories; default: .)."
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Compare results with different data hashes or scoring profiles anyway."
        ),
    ] = False,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Bootstrap resamples of the paired tests.")
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the paired bootstrap.")
    ] = DEFAULT_SEED,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only the paths written.")] = False,
    allow_partial: Annotated[
        bool,
        typer.Option(
            "--allow-partial",
            help="With several directories, accept entries that lack tasks of the benchmark (missing or not "
            "computed); without it the leaderboard is written and the command exits 6, naming them.",
        ),
    ] = False,
    rebuild_reports: Annotated[
        bool,
        typer.Option(
            "--rebuild-reports",
            help="With several directories, also rewrite each one's report.md and report.html "
            "(by default a leaderboard leaves its inputs untouched).",
        ),
    ] = False,
) -> None:
    """Rebuild report.md and report.html of one directory; with several, rank them in a leaderboard."""
    # The report code (jinja2, numpy) is loaded here, not when the command line is built.
    from taxpraben.report import ReportError, build_leaderboard, print_leaderboard
    from taxpraben.report.leaderboard import save_leaderboard
    from taxpraben.review.store import ReviewFileError

    console = cli_console()
    try:
        board = None
        if len(dirs) > 1:  # check comparability before writing anything
            board = build_leaderboard(dirs, force=force, resamples=resamples, seed=seed)
        for directory in dirs if board is None or rebuild_reports else []:
            _rebuild(directory, quiet or board is not None, console)
        if board is not None:
            paths = save_leaderboard(board, out or Path("."))
            if quiet:
                for path in paths:
                    console.print(str(path), highlight=False)
            else:
                print_leaderboard(board, paths, console)
    except (ReportError, ReviewFileError) as exc:
        cli_console(stderr=True).print(f"[red]Error:[/] {exc}", highlight=False)
        raise typer.Exit(code=2) from exc
    if board is not None and board.partial and not allow_partial:
        exit_on_partial_entries(board)


def _rebuild(directory: Path, paths_only: bool, console: Console) -> None:
    """One directory's reports rewritten (its review, when there is one, into results.json);
    the paths written, or its summary."""
    from taxpraben.report import load_results, print_summary, write_reports
    from taxpraben.report.review import attach_review

    attach_review(directory)  # OUT/review.jsonl, when there is one, into results.json
    paths = write_reports(directory)
    if paths_only:  # with a leaderboard, its table is the summary
        for path in paths:
            console.print(str(path), highlight=False)
    else:
        print_summary(load_results(directory), paths, console)


def exit_on_partial_entries(board: Leaderboard) -> None:
    """After the leaderboard is written: each entry that lacks tasks of the benchmark named
    (on stderr), then exit 6 (``coverage.PARTIAL_EXIT``)."""
    from taxpraben.coverage import PARTIAL_EXIT

    errors = cli_console(stderr=True)
    for entry in board.partial:
        errors.print(f"Partial: {entry.label} is {entry.partial_text} tasks of the benchmark (missing: "
                     f"{entry.coverage.listing()}).", style="red", markup=False, highlight=False)  # fmt: skip
    errors.print("The leaderboard is written; pass --allow-partial to accept partial entries.",
                 style="red", markup=False, highlight=False)  # fmt: skip
    raise typer.Exit(code=PARTIAL_EXIT)
