"""Helpers shared by the benchmark scripts (and by the fault tests, which import them).

- :data:`ROOT`, and ``tests/`` put on ``sys.path`` so that the mock server
  (``helpers.mock_openai_server``) and the tiny scorer models (``helpers.tiny_models``) import;
- :func:`run_measured`: run a command as a child process and return its wall time, CPU
  time and peak RSS, from ``os.wait4`` (that child and its own children only, so several
  measured commands in one benchmark never mix their figures);
- :func:`machine`: one line describing the machine, for the README table.
"""

from __future__ import annotations

import contextlib
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

#: The ``taxpraben`` console script of the interpreter running the benchmark.
TAXPRABEN = str(Path(sys.executable).with_name("taxpraben"))


@dataclass(frozen=True)
class Measured:
    """One child process: exit status, wall seconds, CPU seconds (user + system), peak RSS."""

    returncode: int
    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    stdout: str
    stderr: str

    def check(self, what: str) -> Measured:
        if self.returncode != 0:
            tail = (self.stderr or self.stdout)[-3000:]
            raise SystemExit(f"{what} failed with exit status {self.returncode}:\n{tail}")
        return self


def run_measured(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    preexec_fn=None,
) -> Measured:
    """Run ``cmd`` to completion; its output is captured through temporary files."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=err,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            preexec_fn=preexec_fn,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(
            returncode=proc.returncode,
            wall_s=wall,
            cpu_s=usage.ru_utime + usage.ru_stime,
            peak_rss_mib=usage.ru_maxrss / 1024,  # kilobytes on Linux
            stdout=out.read().decode("utf-8", errors="replace"),
            stderr=err.read().decode("utf-8", errors="replace"),
        )


def quiet_env(**extra: str) -> dict[str, str]:
    """The environment for a measured child: offline, no colours, no key."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        NO_COLOR="1",
        TERM="dumb",
        COLUMNS="120",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def machine() -> str:
    """E.g. ``2 cores, 23 GiB, Linux 6.1, Python 3.11.7``."""
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f", {int(line.split()[1]) / 2**20:.0f} GiB"
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores{mem}, {platform.system()} {platform.release().split('-')[0]}, "
        f"Python {platform.python_version()}"
    )


def header(title: str) -> None:
    print(f"\n== {title}", flush=True)


def peak_rss_mib(reset: bool = False) -> float:
    """The process's peak RSS in MiB (Linux: VmHWM, which ``reset`` restarts from the current
    RSS, so a phase's growth can be measured on its own)."""
    status = Path("/proc/self/status")
    if reset:
        with contextlib.suppress(OSError):
            Path("/proc/self/clear_refs").write_text("5")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def torch_environment(device: str) -> dict[str, str]:
    """Date, device name, machine and library versions: the head of a GPU/CPU figures file."""
    from datetime import datetime, timezone

    import torch
    import transformers

    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else platform.processor() or "cpu"
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "device": name,
        "machine": machine(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
