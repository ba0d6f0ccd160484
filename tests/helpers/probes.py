"""A fresh interpreter that runs a few lines and prints one JSON value: what a process loads
or how it stands can only be seen in one that has imported nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def probe(code: str, *args: str) -> Any:
    """Run ``code`` (``python -c``, with ``args`` as ``sys.argv[1:]``) in a child process and
    return the JSON value on the last line it prints."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
