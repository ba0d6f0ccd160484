"""``run --serve``: the served command around generation, as the job sees it (the process
itself is :mod:`taxpraben.run.serve`'s): what is said while it starts and stops, its refusals as
JobErrors (exit 2), and the warning when its ``/models`` lists models but not the one asked for."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.jobs.common import JobError, say, warn
from taxpraben.models.base import Backend
from taxpraben.options import EndpointOptions
from taxpraben.run.serve import (
    SERVE_LOG,
    ServeError,
    Server,
    ServerExited,
    exited_while_used,
    served_base_url,
    serving,
)

if TYPE_CHECKING:
    from rich.console import Console


def served_url(endpoint: EndpointOptions) -> str:
    """Where the served command is asked: the first ``--base-url``, else the command's own URL."""
    return endpoint.base_url[0] if endpoint.base_url else served_base_url(endpoint.serve or "")


@contextlib.contextmanager
def serve_context(
    endpoint: EndpointOptions, backend: Backend, out_dir: Path, console: Console
) -> Iterator[Server | None]:
    """``--serve``: the serving command runs (and answers) while the block runs, which gets
    its :class:`Server` (None without ``--serve``). JobError (exit 2) when its port already
    answers, when it does not come up or exits while used (the block's
    :func:`~taxpraben.run.serve.watch_server` raises ServerExited), or for a backend that
    sends no HTTP requests."""
    if not endpoint.serve:
        yield None
        return
    if backend.kind != "openai":
        raise JobError(f"--serve starts an OpenAI-compatible server, which {backend.spec} does not use: "
                       "use --model openai:NAME with it", code=2)  # fmt: skip
    url = served_url(endpoint)
    log = out_dir / SERVE_LOG
    say(console, f"Serving: {endpoint.serve} (output in {log}); waiting for {url}/models ...")
    ready = False
    try:
        with serving(endpoint.serve, url, log, timeout=endpoint.serve_timeout) as server:
            ready = True
            say(console, f"The server answers (after {server.ready_after:.1f} s, process group {server.pgid}).")
            warn_unlisted_model(backend, server, console)
            yield server
    except ServeError as exc:
        raise JobError(*exc.lines, code=2) from exc
    except ServerExited as exc:
        raise JobError(*exited_while_used(endpoint.serve, log, exc.code).lines, code=2) from None
    except KeyboardInterrupt:
        if ready:
            raise
        raise JobError("Interrupted while waiting for the server (--serve); it was stopped, nothing was sent.",
                       code=130, style="yellow") from None  # fmt: skip
    say(console, "The server was stopped.")


def served_model_name(backend: Backend) -> str:
    """``openai:NAME`` -> ``NAME``: the model the requests ask for."""
    return backend.spec.partition(":")[2] or backend.spec


def warn_unlisted_model(backend: Backend, server: Server, console: Console) -> None:
    """A warning naming both when the server's ``/models`` lists models but not the one asked
    for (llama.cpp lists its file's name and answers any: not an error by itself)."""
    asked = served_model_name(backend)
    if server.models and asked not in server.models:
        warn(console, f"--serve: the server lists {', '.join(server.models[:20])} at {server.base_url}/models, "
                      f"not {asked!r} (--model); its answers may be another model's (llama.cpp answers any "
                      "name with its one file).")  # fmt: skip


