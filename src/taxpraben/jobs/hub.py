"""Before scoring: the Hugging Face hub probed once, so that a machine without internet
uses its cached scorer models at once instead of retrying for minutes."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


#: Seconds the hub gets to answer before scorer models are taken from the local cache only.
HUB_PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


def hub_reachable(endpoint: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """True when ``endpoint`` answers anything (any HTTP status) within ``timeout`` seconds.

    Runs in a daemon thread joined with the timeout, because a DNS lookup is not bounded by
    a socket timeout (without a network it can take as long as the resolver likes).
    """
    import urllib.error  # here: only a job that scores semantically probes the hub
    import urllib.request

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
