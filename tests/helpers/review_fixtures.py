"""A small result directory for the review tests: the first-choice baseline on five tasks of
the sample data (wrong readings to find), one run, no semantic scorers; and a server thread."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.review.server import make_server, url_of
from taxpraben.review.session import Session

TASKS = "TaxSCQ,TaxCalc,TaxMCQ,TaxRead,TaxInspect"


def first_choice_run(out: Path) -> Path:
    """``taxpraben run --model baseline:first-choice`` on the sample data into ``out``."""
    result = CliRunner().invoke(app, ["run", "--model", "baseline:first-choice", "--data", "sample", "--runs", "1",
                                      "--no-semantic", "--tasks", TASKS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def copy_of(source: Path, where: Path) -> Path:
    """A copy of a result directory (each test writes its own review.jsonl and reports)."""
    return Path(shutil.copytree(source, where))


@contextmanager
def serving(session: Session, port: int = 0) -> Iterator[str]:
    """``session``'s review server on 127.0.0.1 in a thread; its URL; stopped at the end."""
    server = make_server(session, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url_of(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
