"""Progress without a terminal (issue 45, item 6): redirected, a run prints plain progress lines
at a steady pace (every 30 s, or every 5% with at least 1 s between lines, and a last one);
the pace on a fake clock, and a real redirected run."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from helpers.fake_clock import FakeClock
from taxpraben.terminal.plain_progress import PlainProgress, duration_text, progress_line, rate_text
from taxpraben.terminal.progress import RunStats

LINE = re.compile(r"^(?P<spec>\S+): (?P<done>\d+)/(?P<total>\d+)( \(\d+%\))? · (\S+/s|\S+ s/item) · failed \d+ · "
                  r"ETA \S+ · tokens [\d,]+$")  # fmt: skip


def test_rates_and_durations_in_words() -> None:
    assert rate_text(0, 10) == "-/s"
    assert rate_text(24, 10) == "2.4/s"
    assert rate_text(3, 126) == "42.0 s/item"  # a slow model: not 0.0/s
    assert duration_text(117) == "1m57s" and duration_text(9) == "9s" and duration_text(3720) == "1h02m"
    stats = RunStats(failed=2, prompt_tokens=80_000, completion_tokens=4_210)
    assert progress_line("openai:qwen", stats, 120, 400, 50.0) == \
        "openai:qwen: 120/400 (30%) · 2.4/s · failed 2 · ETA 1m57s · tokens 84,210"  # fmt: skip


def test_the_pace_every_30_s_or_every_5_percent() -> None:
    """100 generations of a slow model on a fake clock: one answer at t=10 (1%: no line), none
    until t=70 (lines at 30 and 60 all the same), then 5 at t=71 (5%: a line), 5 more at t=71.5
    (within the second: none), the rest at t=100, and the last line when sending stops."""
    clock = FakeClock()
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    stats = RunStats()

    async def drive() -> None:
        bar = PlainProgress("openai:slow", stats, console, 100, clock)
        for at, done in ((10.0, 1), (71.0, 6), (71.5, 11), (100.0, 100)):
            await clock.sleep(at - clock.now())
            bar.show_completed(done)
        bar.stop()

    asyncio.run(drive())
    lines = out.getvalue().splitlines()
    assert all(LINE.match(line) for line in lines), lines
    assert [line.split(" · ")[0] for line in lines] == [
        "openai:slow: 1/100 (1%)",  # t=30: the clock's line, nothing new since t=10
        "openai:slow: 1/100 (1%)",  # t=60
        "openai:slow: 6/100 (6%)",  # t=71: 5% more
        "openai:slow: 100/100 (100%)",  # t=100
        "openai:slow: 100/100 (100%)",  # stopped
    ]
    assert "30.0 s/item" in lines[0] and "ETA 49m30s" in lines[0]


def test_a_redirected_run_writes_progress_lines(tmp_path: Path) -> None:
    """stderr to a file, as under nohup or a scheduler: the log has plain progress lines."""
    log = tmp_path / "log"
    with open(log, "w", encoding="utf-8") as fh:
        done = subprocess.run(
            [sys.executable, "-m", "taxpraben", "run", "--model", "baseline:oracle", "--data", "sample", "--runs",
             "2", "--no-semantic", "--no-cache", "--out", str(tmp_path / "out")],
            stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "200"}, timeout=300,
        )  # fmt: skip
    text = log.read_text(encoding="utf-8")
    assert done.returncode == 0, text
    lines = [line for line in text.splitlines() if LINE.match(line)]
    assert lines, text
    assert lines[-1].startswith("baseline:oracle: ") and "(100%)" in lines[-1]
    assert not any(line.startswith("baseline:oracle ━") for line in text.splitlines())  # no bar drawn into a file
