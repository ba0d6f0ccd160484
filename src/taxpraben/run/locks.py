"""Advisory locks so that two processes never share an output directory by accident.

``taxpraben run`` and ``score`` hold :class:`DirectoryLock` on their ``--out`` for as long as
they run: a second command on the same directory stops at once with who holds it, instead
of both writing the same files (each write is atomic, but two writers replace each other's
temporary files, and one of them ends in a traceback). ``run`` also takes
:func:`sole_cache_user` on its completion cache: the cache itself
is safe to share (SQLite), but a request that another run has in flight and not yet stored
would be sent twice, which the second run says.

The locks are ``flock`` locks, released by the kernel when the process ends, however it
ends (``kill -9`` included): a lock file left by a killed process never blocks a later
run; a process that ends normally removes its lock file. Where ``fcntl`` is
missing (Windows) the locks are not taken.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no fcntl on Windows: the lock is the open file only

LOCK_NAME = ".taxpraben.lock"


class InUseError(RuntimeError):
    """The path is locked by another live process (the message names it)."""


def _try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive lock on ``path``, or None when another has it.

    The holder removes the file when it is done; a lock taken on a file that was removed in
    between (opened just before the holder removed it) is worth nothing, so the inode is
    checked after locking and the attempt repeated on the new file.
    """
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _holder(path: Path) -> str:
    with contextlib.suppress(OSError):
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
    return "another process"


def _stamp(fd: int) -> None:
    os.ftruncate(fd, 0)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    os.write(fd, f"taxpraben pid {os.getpid()}, started {started}".encode())


class DirectoryLock:
    """Hold ``directory/.taxpraben.lock`` while in the ``with`` block.

    Creates the directory if needed; on exit the lock file is removed, and so is a directory
    this lock created that is then empty (a run stopped before writing leaves nothing).
    Raises :class:`InUseError` when another process holds the lock.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self._fd: int | None = None
        self._created = False

    def __enter__(self) -> DirectoryLock:
        self._created = not self.directory.exists()
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = _try_lock(self.path)
        if fd is None:
            raise InUseError(
                f"{self.directory} is in use by {_holder(self.path)} (lock file {self.path}); "
                f"wait for it to finish, or choose another --out"
            )
        _stamp(fd)
        self._fd = fd
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()  # while still held: see _try_lock
            if self._created and not any(self.directory.iterdir()):
                self.directory.rmdir()
        os.close(self._fd)  # releases the lock
        self._fd = None


@contextlib.contextmanager
def sole_cache_user(cache_path: Path) -> Iterator[bool]:
    """Yield False when another ``run`` is using ``cache_path`` now, else True.

    The lock sits beside the cache (``CACHE.lock``) and is held for the ``with`` block;
    where it cannot be taken at all (a read-only directory) the answer is True.
    """
    lock = Path(f"{cache_path}.lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = _try_lock(lock)
    except OSError:
        yield True
        return
    try:
        yield fd is not None
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                lock.unlink()
            os.close(fd)
