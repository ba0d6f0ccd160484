"""What every command shares: the console it prints through, and the hub probe before scoring.

The options shared by several commands are declared in ``commands.options``.
"""

from __future__ import annotations

import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console

#: Width of tables printed to a pipe or file: wide enough that no table of ours wraps
#: (tables take their natural width, not this one).
PIPE_WIDTH = 240


def cli_console(*, stderr: bool = False) -> Console:
    """The console every command prints through.

    On a terminal, rich wraps to its width. When the stream is not a terminal (a pipe, a
    log file, a test's captured output), printed messages are never hard-wrapped: one
    message per line, paths whole, so that ``grep`` finds them (``soft_wrap``); and tables
    get room for their natural width (a pipe has no width; ``COLUMNS`` describes a
    terminal), so the same command prints the same lines whatever terminal launched it.
    """
    stream = sys.stderr if stderr else sys.stdout
    if getattr(stream, "isatty", lambda: False)():
        return Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=PIPE_WIDTH)


#: Seconds the hub gets to answer before scorer models are taken from the local cache only.
HUB_PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


def hub_reachable(endpoint: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """True when ``endpoint`` answers anything (any HTTP status) within ``timeout`` seconds.

    Runs in a daemon thread joined with the timeout, because a DNS lookup is not bounded by
    a socket timeout (without a network it can take as long as the resolver likes).
    """
    answered: list[bool] = []

    def probe() -> None:
        try:
            urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout)
            answered.append(True)
        except urllib.error.HTTPError:
            answered.append(True)  # a status is an answer
        except (OSError, ValueError):
            answered.append(False)

    worker = threading.Thread(target=probe, daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    return bool(answered and answered[0])


def use_local_models_if_hub_unreachable(models: Iterable[str], console: Console) -> None:
    """Before scoring: if a scorer model must come from the Hugging Face hub and the hub does
    not answer within seconds, set ``HF_HUB_OFFLINE=1`` for this process and say so.

    Without this, the hub client retries for minutes on a machine without internet before
    the scorer gives up (or before it uses the copy it already has in its cache). With it,
    a cached model is used at once, and a model that is not cached makes its tasks "not
    computed" at once, with the way to get it. Nothing is probed when the models are local
    directories or ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` is already set.
    """
    if any(os.environ.get(flag, "").strip().lower() in _TRUE for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return
    hub_ids = [m for m in models if m and not Path(m).expanduser().exists()]
    if not hub_ids:
        return
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    if hub_reachable(endpoint):
        return
    os.environ["HF_HUB_OFFLINE"] = "1"
    console.print(
        f"The Hugging Face hub ({endpoint}) did not answer within {HUB_PROBE_TIMEOUT_S:g} s: "
        f"the scorer models ({', '.join(hub_ids)}) are taken from the local cache only "
        "(HF_HUB_OFFLINE=1 for this run; set it yourself to skip this check).",
        style="yellow", markup=False, highlight=False,
    )  # fmt: skip
