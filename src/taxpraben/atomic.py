"""Writing output files whole or not at all.

Every file taxpraben writes goes through :func:`atomic_writer`: it is written beside its
final name, flushed to disk, then renamed into place; on any failure (a full disk, Ctrl-C)
the partial file is removed. Readers therefore see the old file or the complete new one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A text handle whose content replaces ``path`` only when the block ends cleanly."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    with atomic_writer(path) as fh:
        fh.write(text)


def write_lines_atomically(path: Path, lines: Iterable[str]) -> int:
    """Write each string as given (callers include the newline); returns how many."""
    n = 0
    with atomic_writer(path) as fh:
        for line in lines:
            fh.write(line)
            n += 1
    return n
