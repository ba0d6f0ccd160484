"""``run --serve "CMD"``: start a model server, wait until it answers, stop it afterwards.

:func:`serving` is a context manager around what needs the server (generation):

1. ``CMD`` runs through ``/bin/sh -c`` (so ``CUDA_VISIBLE_DEVICES=0 vllm serve ...`` works)
   in a session and process group of its own, so that a Ctrl-C at the terminal reaches
   taxpraben only (which then stops the server in order) and so that stopping reaches every
   process the command started (vLLM's engine and worker processes). Its standard output and
   error go to ``OUT/serve.log``.
2. ``GET {base_url}/models`` is asked every :data:`POLL_S` seconds until it answers 200 (a
   401/403 counts too: the server is up, and the run's preflight then reports the key with
   its usual message). A command that exits first, or a server that does not answer within
   the timeout, is a :class:`ServeError` carrying the last :data:`LOG_LINES` lines of its
   output.
3. On leaving, however it is left (done, an error, Ctrl-C): SIGTERM to the process group,
   SIGKILL after :data:`GRACE_S` seconds if any of it is still running.

The server that answers is the one started: before the command starts, a port that already
accepts connections is refused (:func:`refuse_taken_port`, naming the process that holds it
where ``/proc`` tells), since the new server would fail to bind and every request would go to
the old one; a command that exits before or while it is used is a :class:`ServeError`
(:func:`watch_server` races generation with the command's exit). ``/models``' listing is kept
(:attr:`Server.models`), so that the run records it and warns when the model asked for is not
in it.

The waits are read on a :class:`~taxpraben.clock.Clock` (``wait_until_ready``,
``stop_group``), so that their logic is tested on a fake one; the context manager itself
is synchronous (it runs them with ``asyncio.run``) and must not be entered from a running
event loop. POSIX only (process groups).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from taxpraben.clock import SYSTEM_CLOCK, Clock

#: The port of a serving command without ``--port`` (vLLM's default).
DEFAULT_PORT = 8000
#: Seconds between two ``GET /models`` while the server starts.
POLL_S = 0.5
#: Seconds the server has to exit after SIGTERM before it is killed.
GRACE_S = 10.0
#: Lines of the server's output shown when it fails to start.
LOG_LINES = 20
#: The server's output, in the run's output directory.
SERVE_LOG = "serve.log"
#: Longest single ``GET /models`` (a server that accepts but does not answer is asked again).
PROBE_TIMEOUT_S = 5.0
#: Seconds to wait for the group to vanish after SIGKILL (the kernel's part).
KILL_WAIT_S = 5.0
#: How often the group is looked at while it stops.
STOP_POLL_S = 0.05


class ServeError(Exception):
    """The serving command could not be started or did not come up: ``lines`` say why,
    then the last lines of its output."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class NotReady(Exception):
    """:func:`wait_until_ready` gave up: ``exit_code`` when the command exited, else None
    (the timeout)."""

    def __init__(self, exit_code: int | None, waited: float) -> None:
        super().__init__(f"exited with status {exit_code}" if exit_code is not None else f"no answer in {waited:g} s")
        self.exit_code = exit_code
        self.waited = waited


def served_port(command: str) -> int:
    """The port a serving command listens on: its ``--port N`` (or ``--port=N``), else
    :data:`DEFAULT_PORT`; ValueError for a command that cannot be split or a bad port."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"cannot read the command {command!r}: {exc}") from exc
    if not words:
        raise ValueError("the serving command is empty")
    port: str | None = None
    for i, word in enumerate(words):
        if word == "--port":
            if i + 1 >= len(words):
                raise ValueError(f"--port without a value in {command!r}")
            port = words[i + 1]
        elif word.startswith("--port="):
            port = word.partition("=")[2]
    if port is None:
        return DEFAULT_PORT
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--port {port!r} in {command!r} is not a port number (1-65535)")
    return int(port)


def served_base_url(command: str) -> str:
    """``http://127.0.0.1:PORT/v1``, PORT from the command (:func:`served_port`)."""
    return f"http://127.0.0.1:{served_port(command)}/v1"


def log_tail(path: Path, lines: int = LOG_LINES) -> list[str]:
    """The last ``lines`` lines of ``path`` (none if it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


def models_answer(base_url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when ``GET {base_url}/models`` answers 200 (or 401/403: up, but keyed); no proxy
    (as the backend's own client)."""
    return models_listing(base_url, timeout) is not None


def models_listing(base_url: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[str, ...] | None:
    """What ``GET {base_url}/models`` says: None while it does not answer (200, or 401/403:
    up, but keyed), else the model ids it lists (empty when it lists none or is keyed)."""
    import urllib.error  # here: only --serve asks (urllib.request is 4 ms of run's start-up)
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(base_url.rstrip("/") + "/models", timeout=timeout) as resp:
            if resp.status != 200:
                return None
            return listed_models(resp.read())
    except urllib.error.HTTPError as exc:
        return () if exc.code in (401, 403) else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def listed_models(raw: bytes) -> tuple[str, ...]:
    """The ids of an OpenAI ``/models`` listing (``{"data": [{"id": ...}]}``); () otherwise."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return ()
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, list):
        return ()
    return tuple(str(m["id"]) for m in data if isinstance(m, dict) and m.get("id"))


def url_address(base_url: str) -> tuple[str, int]:
    """The host and port ``base_url`` connects to (80/443 by its scheme when it names none)."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "127.0.0.1", port


def port_answers(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when a TCP connection to ``host:port`` is accepted (something listens there)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def listening_inodes(port: int, proc: Path = Path("/proc")) -> set[str]:
    """The socket inodes listening on ``port`` (``/proc/net/tcp`` and ``tcp6``; state 0A)."""
    inodes: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rpartition(":")[2], 16) == port:
                inodes.add(fields[9])
    return inodes


def port_holder(port: int, proc: Path = Path("/proc")) -> str | None:
    """``pid 4242 (python -m vllm ...)``: the process listening on ``port``, where ``/proc``
    says (Linux, and only a process of this user can be seen); None otherwise."""
    wanted = {f"socket:[{inode}]" for inode in listening_inodes(port, proc)}
    if not wanted:
        return None
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        if _fd_links(entry / "fd") & wanted:
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                command = ""
            return f"pid {entry.name}" + (f" ({command[:120]})" if command else "")
    return None


def _fd_links(fds: Path) -> set[str]:
    """What the descriptors in ``fds`` (``/proc/PID/fd``) point to; those that close while
    read (or cannot be read) are left out."""
    try:
        entries = list(fds.iterdir())
    except OSError:
        return set()
    links = set()
    for fd in entries:
        with suppress(OSError):
            links.add(os.readlink(fd))
    return links


def refuse_taken_port(command: str, base_url: str) -> None:
    """ServeError when ``base_url``'s port already accepts connections before ``command``
    starts: the new server could not bind it, and the old one would answer every request."""
    host, port = url_address(base_url)
    if not port_answers(host, port):
        return
    holder = port_holder(port)
    held = f"by {holder}" if holder else "by another process (not one of yours, or not on Linux: see `ss -ltnp`)"
    raise ServeError(
        f"--serve: port {port} ({host}) already answers, held {held}; the server of {command!r} could not "
        "listen there and the run would be sent to the old one. Stop that process, or give the command "
        "another --port.",
    )


async def wait_until_ready(
    probe: Callable[[float], Awaitable[bool]],
    exited: Callable[[], int | None],
    *,
    timeout: float,
    poll: float = POLL_S,
    clock: Clock = SYSTEM_CLOCK,
) -> float:
    """Ask ``probe`` (its argument: the most seconds it may take) every ``poll`` seconds
    until it says yes; the seconds waited. NotReady when ``exited`` gives the command's exit
    status first, or after ``timeout`` seconds."""
    start = clock.now()
    while True:
        code = exited()
        if code is not None:
            raise NotReady(code, clock.now() - start)
        left = timeout - (clock.now() - start)
        if left <= 0:
            raise NotReady(None, timeout)
        if await probe(min(PROBE_TIMEOUT_S, left)):
            return clock.now() - start
        code = exited()
        if code is not None:
            raise NotReady(code, clock.now() - start)
        if clock.now() - start + poll > timeout:
            raise NotReady(None, timeout)
        await clock.sleep(poll)


def group_alive(pgid: int) -> bool:
    """True while a process of group ``pgid`` runs (zombies, dead but not yet reaped by
    their parent, do not count: on Linux /proc says which)."""
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to group ``pgid``; a group already gone is fine."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def stop_group(
    pgid: int,
    reap: Callable[[], object],
    *,
    grace: float = GRACE_S,
    clock: Clock = SYSTEM_CLOCK,
    alive: Callable[[int], bool] = group_alive,
    send: Callable[[int, signal.Signals], None] = signal_group,
) -> bool:
    """SIGTERM to group ``pgid``, SIGKILL when some of it still runs ``grace`` seconds later;
    ``reap`` collects the leader's exit status (so it is not left a zombie). True when the
    group had to be killed."""
    reap()
    if not alive(pgid):
        return False
    send(pgid, signal.SIGTERM)
    start = clock.now()
    while clock.now() - start < grace:
        reap()
        if not alive(pgid):
            return False
        await clock.sleep(STOP_POLL_S)
    send(pgid, signal.SIGKILL)
    killed = clock.now()
    while alive(pgid) and clock.now() - killed < KILL_WAIT_S:
        reap()
        await clock.sleep(STOP_POLL_S)
    reap()
    return True


@dataclass(frozen=True)
class Server:
    """A serving command that answers: its process (the group's leader), URL and log."""

    process: subprocess.Popen[bytes]
    base_url: str
    log: Path
    #: Seconds it took to answer.
    ready_after: float
    #: The model ids its ``/models`` listed when it first answered (empty: none, or keyed).
    models: tuple[str, ...] = ()

    @property
    def pgid(self) -> int:
        return self.process.pid  # a session of its own: the leader's pid is the group's id


def start(command: str, log: Path) -> subprocess.Popen[bytes]:
    """``command`` through ``/bin/sh -c`` in a new session, output to ``log``; ServeError
    when it cannot be started."""
    try:
        with open(log, "wb") as out:  # the child holds its own copy of the descriptor
            return subprocess.Popen(
                ["/bin/sh", "-c", command], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
    except OSError as exc:
        raise ServeError(f"--serve: cannot start {command!r}: {exc}") from exc


class ServerExited(Exception):
    """The served command exited while the run was using it: ``code``, its exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(f"the serving command exited (status {code}) while the run was using it")
        self.code = code


Result = TypeVar("Result")


async def watch_server(
    work: Coroutine[object, None, Result],
    exited: Callable[[], int | None],
    *,
    poll: float = POLL_S,
    clock: Clock = SYSTEM_CLOCK,
) -> Result:
    """``work``'s result, unless the served command exits first (``exited`` gives its exit
    status, asked every ``poll`` seconds): then ``work`` is cancelled and ServerExited raised,
    so that no request goes on to whatever holds the port next."""
    task: asyncio.Future[Result] = asyncio.ensure_future(work)
    codes: list[int] = []

    async def watch() -> None:
        while True:
            code = exited()
            if code is not None:
                codes.append(code)
                task.cancel()
                return
            await clock.sleep(poll)

    watcher = asyncio.ensure_future(watch())
    try:
        return await task
    except asyncio.CancelledError:
        if codes:
            raise ServerExited(codes[0]) from None
        raise
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()


@contextmanager
def serving(
    command: str,
    base_url: str,
    log: Path,
    *,
    timeout: float,
    poll: float = POLL_S,
    grace: float = GRACE_S,
) -> Iterator[Server]:
    """Run ``command`` until the block is left, from the moment ``base_url`` answers (module
    doc); ServeError (with the output's last lines) when its port already answers before it
    starts, when it exits before answering or before the block is left, or when it does not
    answer within ``timeout`` seconds. The server is stopped however the block is left."""
    refuse_taken_port(command, base_url)
    process = start(command, log)
    listed: list[tuple[str, ...]] = []

    async def probe(limit: float) -> bool:
        models = await asyncio.to_thread(models_listing, base_url, limit)
        if models is not None:
            listed.append(models)
        return models is not None

    def stop() -> None:
        asyncio.run(stop_group(process.pid, process.poll, grace=grace))
        process.wait()

    try:
        try:
            waited = asyncio.run(wait_until_ready(probe, process.poll, timeout=timeout, poll=poll))
            if process.poll() is not None:  # something else answered while it was dying
                raise NotReady(process.returncode, waited)
        except NotReady as exc:
            stop()  # first, so that its last words are in the log
            raise failed_to_start(command, base_url, log, exc) from None
        yield Server(process, base_url, log, waited, listed[-1] if listed else ())
        if process.poll() is not None:
            raise exited_while_used(command, log, process.returncode)
    finally:
        stop()


def exited_while_used(command: str, log: Path, code: int) -> ServeError:
    """What a served command that exited during the run says: its status and last output."""
    return ServeError(f"--serve: the serving command exited (status {code}) while the run was using it; "
                      "the generations answered before are in the cache, a rerun sends the rest.",
                      f"Command: {command}", *_log_lines(log))  # fmt: skip


def failed_to_start(command: str, base_url: str, log: Path, exc: NotReady) -> ServeError:
    """What a serving command that did not come up says: why, and its last output lines."""
    if exc.exit_code is not None:
        why = f"--serve: the serving command exited (status {exc.exit_code}) before {base_url}/models answered"
    else:
        why = (f"--serve: {base_url}/models did not answer within {exc.waited:g} s (--serve-timeout); the server "
               "was stopped")  # fmt: skip
    return ServeError(why, f"Command: {command}", *_log_lines(log))


def _log_lines(log: Path) -> list[str]:
    tail = log_tail(log)
    if not tail:
        return [f"It wrote nothing ({log})."]
    return [f"Its last {len(tail)} lines of output ({log}):", *(f"  {line}" for line in tail)]
