"""Two processes, one output directory or cache (issue 11, item 7), through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import typer
from typer.testing import CliRunner

from helpers.cli_data import RUN_SCRIPT
from helpers.mock_openai_server import server_call, spawn
from taxpraben.commands.run import run
from taxpraben.run.locks import LOCK_NAME

APP = typer.Typer()
APP.command("run")(run)


@APP.command("noop")
def _noop() -> None:
    """A second command, so that `run` is addressed by name as in the real CLI."""


def write_data(directory: Path, n: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    rows = [{"id": str(i), "query": f"销售额{i}元，求税额。", "answer": i} for i in range(n)]
    (directory / "TaxCalc.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return directory


def test_second_run_on_the_same_out_is_refused_and_a_shared_cache_is_announced(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", 6)
    server, root = spawn("--latency", "0.3")
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    common = ["--model", "openai:m", "--base-url", root + "/v1", "--data", str(data), "--tasks", "TaxCalc", "--runs", "2",
              "--concurrency", "1", "--no-semantic", "--cache", str(cache)]  # fmt: skip
    try:
        first = subprocess.Popen(
            [sys.executable, "-c", RUN_SCRIPT, *common, "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "40"},
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while server_call(root, "/stats")["requests"] < 1:  # the first run is generating
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)

        second = CliRunner().invoke(APP, ["run", *common, "--out", str(out)])
        assert second.exit_code == 2, second.output
        line = next(x for x in second.output.splitlines() if "is in use by" in x)
        assert line.startswith(f"{out} is in use by taxpraben pid {first.pid}, started ")
        assert "choose another --out" in line and "Traceback" not in second.output

        # Another --out on the same cache: allowed, and it says requests may be sent twice.
        other = CliRunner().invoke(APP, ["run", *common, "--out", str(tmp_path / "other")])
        assert other.exit_code == 0, other.output
        assert any(x.startswith(f"Another taxpraben run is using the cache {cache}") for x in other.output.splitlines())

        stdout, stderr = first.communicate(timeout=120)
        assert first.returncode == 0, stdout + stderr
        assert (out / "results.json").exists() and not (out / LOCK_NAME).exists()
        # Once the first run has ended, its lock no longer holds: the same --out works again.
        again = CliRunner().invoke(APP, ["run", *common, "--out", str(out)])
        assert again.exit_code == 0, again.output
        assert not any("Another taxpraben run" in x for x in again.output.splitlines())
    finally:
        server.kill()
        server.wait()


def test_a_run_stopped_before_writing_leaves_no_directory(tmp_path: Path) -> None:
    out = tmp_path / "never"
    result = CliRunner().invoke(APP, ["run", "--model", "baseline:oracle", "--data", str(tmp_path / "no-data"), "--out", str(out)])
    assert result.exit_code != 0
    assert not out.exists() and not (out / LOCK_NAME).exists()
