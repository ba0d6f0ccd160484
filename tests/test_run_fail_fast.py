"""`taxpraben run` fails fast (issue 11, item 3): a refused key, an unknown model, nothing
listening at --base-url, a missing key for a remote endpoint. Each through the CLI, against
the mock server; the counts asserted are the mock's own."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.cli_data import cli_app, sales_calc_rows, write_data
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.commands.run import run

APP = cli_app(run=run)


ROWS = sales_calc_rows(6)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxCalc": ROWS})


def invoke(data_dir: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    base = ["run", "--data", str(data_dir), "--tasks", "TaxCalc", "--runs", "2", "--no-semantic", "--cache", str(tmp_path / "c.sqlite"),
            "--out", str(tmp_path / "out"), "--max-retries", "6", "--retry-backoff", "0.05"]  # fmt: skip
    result = CliRunner().invoke(APP, [*base, *args], env=env, catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("preflight", [True, False])
def test_refused_key_stops_the_run_and_names_the_variable(data_dir: Path, tmp_path: Path, preflight: bool) -> None:
    key = "sk-wrong-key-0123456789"
    with MockServerThread(MockConfig(api_key="sk-right")) as server:
        extra = () if preflight else ("--no-preflight", "--concurrency", "1")
        code, lines = invoke(
            data_dir, tmp_path, "--model", "openai:mock", "--base-url", server.base_url,
            "--api-key-env", "VENDOR_KEY", *extra, env={"VENDOR_KEY": key},
        )  # fmt: skip
        sent = server.stats.requests
    assert code == 2, lines
    # With the preflight nothing is generated; without it, the first refusal stops the run.
    assert sent == (0 if preflight else 1)
    stop = [line for line in lines if line.startswith("Stopped: ")]
    assert len(stop) == 1 and "refused the API key read from $VENDOR_KEY" in stop[0]
    assert "HTTP 401" in stop[0]
    assert all(key not in line for line in lines)
    assert not (tmp_path / "out").exists()
    assert not any("Rerun the same command" in line for line in lines)


def test_unknown_model_stops_and_lists_the_served_models(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(models=("qwen-plus", "deepseek-chat"))) as server:
        code, lines = invoke(
            data_dir, tmp_path, "--model", "openai:qwen-pluss", "--base-url", server.base_url,
            "--concurrency", "1",
        )  # fmt: skip
        sent = server.stats.requests
    assert code == 2, lines
    assert sent == 1  # the first 404 stops the run: the 11 others are never sent
    stop = next(line for line in lines if line.startswith("Stopped: "))
    assert "HTTP 404" in stop and "model 'qwen-pluss' is not served there" in stop
    assert "It serves: qwen-plus, deepseek-chat" in stop


@pytest.mark.parametrize("preflight", [True, False])
def test_nothing_listening_stops_quickly_with_the_redacted_url(data_dir: Path, tmp_path: Path, preflight: bool) -> None:
    port = free_port()
    url = f"http://user:secret-pw@127.0.0.1:{port}/v1?key=sk-in-query"
    extra = () if preflight else ("--no-preflight",)
    code, lines = invoke(data_dir, tmp_path, "--model", "openai:m", "--base-url", url, *extra)
    assert code == 2, lines
    stop = next(line for line in lines if line.startswith("Stopped: "))
    assert f"cannot connect to http://127.0.0.1:{port}/v1" in stop
    assert all("secret-pw" not in line and "sk-in-query" not in line for line in lines)
    if not preflight:
        # Given up at the first item out of retries, not after 6 retries of all 12 items.
        assert "nothing has answered" in stop


def test_missing_key_for_a_remote_endpoint_is_an_error_before_sending(data_dir: Path, tmp_path: Path) -> None:
    code, lines = invoke(
        data_dir, tmp_path, "--model", "openai:gpt-4o", "--base-url", "https://api.example.invalid/v1",
        env={"OPENAI_API_KEY": ""},
    )  # fmt: skip
    assert code == 2, lines
    assert any(
        line.startswith("no API key for https://api.example.invalid/v1: environment variable OPENAI_API_KEY is not set")
        for line in lines
    ), lines


def test_local_endpoint_needs_no_key_and_preflight_lists_once(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig()) as server:
        code, lines = invoke(
            data_dir, tmp_path, "--model", "openai:mock", "--base-url", server.base_url,
            env={"OPENAI_API_KEY": ""},
        )  # fmt: skip
        listings, sent = server.stats.model_listings, server.stats.requests
    assert code == 0, lines
    assert (listings, sent) == (1, len(ROWS) * 2)


def test_streamed_and_plain_runs_share_cache_keys_and_predictions(data_dir: Path, tmp_path: Path) -> None:
    """A run with --no-stream fills the cache; the same run streamed sends nothing and writes
    the same predictions (same text, usage and cache key in both modes)."""
    with MockServerThread(MockConfig(reasoning=True)) as server:
        common = ["--model", "openai:mock", "--base-url", server.base_url]
        code, lines = invoke(data_dir, tmp_path, *common, "--no-stream", "--out", str(tmp_path / "plain"))
        assert code == 0, lines
        plain_sent, plain_streamed = server.stats.requests, server.stats.streamed
        code, lines = invoke(data_dir, tmp_path, *common, "--out", str(tmp_path / "streamed"))
        assert code == 0, lines
        assert (plain_sent, plain_streamed) == (len(ROWS) * 2, 0)
        assert server.stats.requests == plain_sent  # all from the cache
        code, lines = invoke(data_dir, tmp_path, *common, "--out", str(tmp_path / "fresh"), "--no-cache")
        assert code == 0, lines
        assert server.stats.streamed == len(ROWS) * 2  # sent again, streamed this time

    def predictions(name: str) -> list[dict]:
        rows = [json.loads(x) for x in (tmp_path / name / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
        return [{k: v for k, v in r.items() if k not in ("latency_s", "cached")} for r in rows]

    assert predictions("plain") == predictions("streamed") == predictions("fresh")


def test_stalled_streams_are_cut_by_the_idle_limit_and_retried(data_dir: Path, tmp_path: Path) -> None:
    """Streams that stop after their first chunk (for 3 s) are given up after --idle-timeout
    and retried: every item ends with the clean answer."""
    with MockServerThread(MockConfig(failure_rate=0.3, failure_kinds=("stall",), hang_s=3.0, seed=3)) as server:
        code, lines = invoke(
            data_dir, tmp_path, "--model", "openai:mock", "--base-url", server.base_url,
            "--idle-timeout", "0.3", "--max-retries", "20", "--no-cache",
        )  # fmt: skip
        stalls, sent = server.stats.failures["stall"], server.stats.requests
    assert code == 0, lines
    assert stalls > 0 and sent == len(ROWS) * 2 + stalls  # each stall cost one more request
    rows = [json.loads(x) for x in (tmp_path / "out" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["prediction"].startswith("答案：") and not r.get("error") for r in rows)
