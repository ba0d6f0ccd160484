"""``taxpraben review OUT_DIR``: check a draw of the run's readings on a local page."""

from __future__ import annotations

import getpass
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from taxpraben.commands.common import cli_console
from taxpraben.commands.options import TaskDirOpt


def has_display() -> bool:
    """Whether a browser can be shown here (a desktop session, not a headless machine)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a TERM stops the server as Ctrl-C does: the reports are written


def default_reviewer() -> str:
    try:
        return getpass.getuser() or "reviewer"
    except (KeyError, OSError):
        return "reviewer"


def review(
    out_dir: Annotated[Path, typer.Argument(help="A result directory of `run` or `score`.")],
    # 60: taxpraben.report.review.DEFAULT_DRAW, chosen with the banner's bound (a clean review raises none).
    n: Annotated[int, typer.Option("--n", min=1, help="Distinct readings to draw (stratified by task and by how each "
                                   "was read, offered interleaved).")] = 60,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (default: a free one).")] = 0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw (the same seed draws the same readings).")] = 0,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Your name in review.jsonl (default: the login name).")] = None,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser (never opened on a headless machine).")] = False,
    task_dir: TaskDirOpt = None,
) -> None:
    """Serve a page on 127.0.0.1 over a seeded draw of the run's readings: one a screen, its
    evidence highlighted, your verdict by keyboard, each appended to OUT_DIR/review.jsonl.
    Ctrl-C stops it and rewrites the reports with the human review figure."""
    from taxpraben.jobs.review import build_session
    from taxpraben.report import ReportError, write_reports
    from taxpraben.report.load import load_results
    from taxpraben.report.review import attach_review, review_lines
    from taxpraben.review.server import make_server, url_of
    from taxpraben.review.store import ReviewFileError

    console = cli_console()
    try:
        session = build_session(out_dir, n, seed, reviewer or default_reviewer(), task_dir or ())
        server = make_server(session, port)
    except (ReportError, ReviewFileError) as exc:
        cli_console(stderr=True).print(f"[red]Error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    except OSError as exc:
        cli_console(stderr=True).print(f"[red]Error:[/] cannot listen on 127.0.0.1:{port}: {escape(str(exc))} "
                                       "(choose another --port, or 0 for a free one)", highlight=False)
        raise typer.Exit(2) from exc
    url = url_of(server)
    if session.repaired is not None:
        console.print(f"{escape(str(session.path))}: its last line was cut off (the review was killed while a verdict "
                      f"was written) and is removed: {escape(session.repaired[:80])!s}; that reading is offered "
                      "again.", highlight=False)
    if session.stale:
        console.print(f"{session.stale} of your verdicts judged readings that have changed since (a rescore, new "
                      "rules or another output): those readings are offered again.", highlight=False)
    console.print(f"Reviewing {len(session.readings)} readings of {escape(str(out_dir))} as "
                  f"{escape(session.reviewer)} ({session.graded} graded already).", highlight=False)
    console.print(f"Open {url}  (Ctrl-C stops; verdicts go to {session.path} as they are given)", highlight=False)
    if not no_browser and has_display():
        import webbrowser

        webbrowser.open(url)
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("Stopped.", highlight=False)
    finally:
        server.server_close()
    try:
        if attach_review(out_dir):
            paths = write_reports(out_dir)
            for line in review_lines(load_results(out_dir)):
                console.print(escape(line), highlight=False)
            for path in paths:
                console.print(f"Wrote {path}", highlight=False)
    except (ReportError, ReviewFileError) as exc:
        cli_console(stderr=True).print(f"[red]Error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
