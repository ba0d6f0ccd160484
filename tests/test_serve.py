"""``run --serve CMD``: the server is started in its own process group, waited for, and
stopped afterwards however the run ends; the waits' logic on a fake clock."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import socket
import sys
import threading
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from helpers.cli_data import cli_app
from helpers.fake_clock import FakeClock
from taxpraben.commands.run import run
from taxpraben.run.serve import (
    DEFAULT_PORT,
    NotReady,
    ServeError,
    served_base_url,
    served_port,
    serving,
    stop_group,
    wait_until_ready,
)

APP = cli_app(run=run)
MOCK = Path(__file__).resolve().parent / "helpers" / "mock_openai_server.py"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(APP, ["run", *args], catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def mock_command(port: int, *options: str) -> str:
    """The project's mock server on ``port``, saying its process group first (``$$``: the
    shell, whose pid the exec'd server keeps)."""
    server = shlex.join([sys.executable, str(MOCK), "--port", str(port), *options])
    return f"echo PGID $$; exec {server}"


def logged_pgid(log: Path) -> int:
    line = next(line for line in log.read_text().splitlines() if line.startswith("PGID "))
    return int(line.split()[1])


# ---------------------------------------------------------------------------- the command's port


def test_the_port_comes_from_the_command() -> None:
    assert served_port("vllm serve Qwen/Qwen2.5-7B-Instruct --port 8011") == 8011
    assert served_port("python -m sglang.launch_server --model-path m --port=30000") == 30000
    assert served_port("vllm serve Qwen/Qwen2.5-7B-Instruct") == DEFAULT_PORT == 8000
    assert served_base_url("CUDA_VISIBLE_DEVICES=1 vllm serve m --port 9001") == "http://127.0.0.1:9001/v1"
    for bad, why in [("vllm serve m --port", "without a value"), ("vllm serve m --port 0", "not a port"),
                     ("vllm serve m --port x", "not a port"), ("vllm 'serve", "cannot read"), ("  ", "empty")]:
        with pytest.raises(ValueError, match=why):
            served_port(bad)
    code, output = invoke("--model", "openai:m", "--data", "sample", "--serve", "vllm serve m --port 99999")
    assert code == 2 and "not a port number" in output


# ---------------------------------------------------------------------------- the waits, on a fake clock


def test_polls_every_half_second_until_the_server_answers() -> None:
    clock = FakeClock()
    asked: list[float] = []

    async def probe(limit: float) -> bool:
        asked.append(clock.now())
        return len(asked) == 4

    waited = asyncio.run(wait_until_ready(probe, lambda: None, timeout=600, clock=clock))
    assert asked == [0.0, 0.5, 1.0, 1.5] and waited == 1.5


def test_gives_up_at_the_timeout_and_when_the_command_exits() -> None:
    clock = FakeClock()
    asked: list[tuple[float, float]] = []

    async def never(limit: float) -> bool:
        asked.append((clock.now(), limit))
        return False

    with pytest.raises(NotReady) as caught:
        asyncio.run(wait_until_ready(never, lambda: None, timeout=1.2, clock=clock))
    assert caught.value.exit_code is None and caught.value.waited == 1.2
    # Each probe may take what is left; none starts once the next poll would be past the timeout.
    assert asked == [(0.0, 1.2), (0.5, 0.7), (1.0, pytest.approx(0.2))]
    codes = iter([None, None, 3])
    clock = FakeClock()
    with pytest.raises(NotReady) as caught:
        asyncio.run(wait_until_ready(never, lambda: next(codes), timeout=600, clock=clock))
    assert caught.value.exit_code == 3 and clock.now() == 0.5


def test_stop_terms_the_group_then_kills_it_after_the_grace() -> None:
    sent: list[tuple[int, signal.Signals]] = []
    reaped: list[float] = []
    clock = FakeClock()
    stubborn = {"alive": True}

    def send(pgid: int, sig: signal.Signals) -> None:
        sent.append((pgid, sig))
        if sig == signal.SIGKILL:
            stubborn["alive"] = False

    killed = asyncio.run(stop_group(41, lambda: reaped.append(clock.now()), grace=10.0, clock=clock,
                                    alive=lambda pgid: stubborn["alive"], send=send))  # fmt: skip
    assert killed and sent == [(41, signal.SIGTERM), (41, signal.SIGKILL)]
    assert clock.now() == pytest.approx(10.0)
    sent.clear()
    obedient = {"alive": True}

    def term(pgid: int, sig: signal.Signals) -> None:
        sent.append((pgid, sig))
        obedient["alive"] = False

    clock = FakeClock()
    killed = asyncio.run(stop_group(42, lambda: None, clock=clock, alive=lambda pgid: obedient["alive"], send=term))
    assert not killed and sent == [(42, signal.SIGTERM)] and clock.now() == 0.0
    sent.clear()
    assert not asyncio.run(stop_group(43, lambda: None, clock=FakeClock(), alive=lambda pgid: False, send=term))
    assert sent == []  # already gone: nothing sent


# ---------------------------------------------------------------------------- real servers


def test_a_run_against_a_served_mock_stops_it_afterwards(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "out"
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "2", "--runs", "1",
                          "--no-semantic", "--no-cache", "--out", str(out), "--serve", mock_command(port))  # fmt: skip
    assert code == 0, output
    assert f"waiting for http://127.0.0.1:{port}/v1/models" in output and "The server was stopped." in output
    log = out / "serve.log"
    assert f"PORT {port}" in log.read_text()
    pgid = logged_pgid(log)
    assert f"process group {pgid}" in output
    assert not port_open(port) and group_gone(pgid)
    predictions = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert predictions and all('"error"' not in line for line in predictions)


def test_the_server_is_stopped_when_the_run_fails(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "out"
    # The mock serves only "mock": the first request's 404 stops the run (exit 2).
    code, output = invoke("--model", "openai:other", "--data", "sample", "--limit", "2", "--runs", "1",
                          "--no-semantic", "--no-cache", "--out", str(out),
                          "--serve", mock_command(port, "--models", "mock"))  # fmt: skip
    assert code == 2 and "is not served there" in output
    assert not port_open(port) and group_gone(logged_pgid(out / "serve.log"))


def test_an_explicit_base_url_wins(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "out"
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "1", "--runs", "1",
                          "--no-semantic", "--no-cache", "--out", str(out), "--base-url", f"http://127.0.0.1:{port}/v1",
                          "--serve", mock_command(port) + " --latency 0")  # fmt: skip
    assert code == 0, output
    assert f"waiting for http://127.0.0.1:{port}/v1/models" in output  # the command names no --port first


def test_a_command_that_exits_at_once_is_exit_2_with_its_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "1", "--no-semantic",
                          "--no-cache", "--out", str(out), "--runs", "1",
                          "--serve", f"echo loading model; echo 'CUDA out of memory' >&2; exit 3 # --port {free_port()}")  # fmt: skip
    assert code == 2
    assert "the serving command exited (status 3) before" in output
    assert "loading model" in output and "CUDA out of memory" in output
    assert not (out / "predictions.jsonl").exists()


def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "out"
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "1", "--runs", "1",
                          "--no-semantic", "--no-cache", "--out", str(out), "--serve-timeout", "1",
                          "--serve", f"echo PGID $$; echo still loading; exec sleep 600 # --port {port}")  # fmt: skip
    assert code == 2
    assert f"http://127.0.0.1:{port}/v1/models did not answer within 1 s (--serve-timeout)" in output
    assert "still loading" in output
    assert group_gone(logged_pgid(out / "serve.log"))


def test_a_server_deaf_to_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    # SIGTERM ignored by the shell and, through exec, by the server it becomes.
    command = "trap '' TERM; " + mock_command(port)
    with serving(command, f"http://127.0.0.1:{port}/v1", log, timeout=60, grace=0.2) as server:
        assert port_open(port)
        pgid = server.pgid
    assert not port_open(port) and group_gone(pgid)
    assert server.process.returncode == -signal.SIGKILL


def test_ctrl_c_inside_the_block_stops_the_server(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with pytest.raises(KeyboardInterrupt), serving(mock_command(port), f"http://127.0.0.1:{port}/v1", log,
                                                   timeout=60) as server:  # fmt: skip
        pgid = server.pgid
        raise KeyboardInterrupt
    assert not port_open(port) and group_gone(pgid)
    assert server.process.returncode == -signal.SIGTERM


def test_a_command_that_cannot_start_says_so(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="exited \\(status 127\\)") as caught, serving(
        "no-such-server-binary --port 1", "http://127.0.0.1:1/v1", tmp_path / "serve.log", timeout=60
    ):
        pass
    assert any("not found" in line for line in caught.value.lines)


class ConnectionCounter:
    """A listening socket on 127.0.0.1 that accepts, counts and closes every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # the timeout: look at stopped again
                continue
            self.connections += 1
            conn.close()

    def __enter__(self) -> ConnectionCounter:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()
        self.sock.close()


def test_serve_decides_the_base_url_over_an_ambient_openai_base_url(tmp_path: Path) -> None:
    """$OPENAI_BASE_URL left over from another session names a port that listens: with
    --serve not one connection reaches it; the served mock gets every request."""
    port = free_port()
    out = tmp_path / "out"
    with ConnectionCounter() as elsewhere:
        result = CliRunner().invoke(
            APP, ["run", "--model", "openai:mock", "--data", "sample", "--limit", "1", "--runs", "1", "--no-semantic",
                  "--no-cache", "--out", str(out), "--serve-timeout", "60", "--serve", mock_command(port)],
            env={"OPENAI_BASE_URL": f"http://127.0.0.1:{elsewhere.port}/v1", "OPENAI_API_KEY": "sk-test"},
            catch_exceptions=False,
        )  # fmt: skip
    output = " ".join(result.output.split())
    assert result.exit_code == 0, output
    assert elsewhere.connections == 0
    assert f"--serve: $OPENAI_BASE_URL (http://127.0.0.1:{elsewhere.port}/v1) is ignored; requests go to " \
           f"http://127.0.0.1:{port}/v1" in output  # fmt: skip
    assert f"waiting for http://127.0.0.1:{port}/v1/models" in output
    predictions = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(predictions) == 14 and all('"error"' not in line for line in predictions)
    assert yaml.safe_load((out / "config.yaml").read_text(encoding="utf-8"))["base_url"] is None


# ---------------------------------------------------------------------------- the server that answers is the one started


def test_a_taken_port_is_refused_before_the_command_starts_or_any_request(tmp_path: Path) -> None:
    """Something already answers on the command's port (an old server left running): the
    new one could not listen there, and every request would reach the old one. Refused,
    exit 2, naming the port and the process holding it (this test's own), nothing sent."""
    from helpers.mock_openai_server import MockConfig, MockServerThread

    out = tmp_path / "out"
    with MockServerThread(MockConfig()) as old:
        code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "1", "--runs", "1",
                              "--no-semantic", "--no-cache", "--out", str(out),
                              "--serve", mock_command(old.port))  # fmt: skip
        chat_requests = old.stats.requests
    assert code == 2, output
    assert f"--serve: port {old.port} (127.0.0.1) already answers, held by pid {os.getpid()}" in output
    assert "Stop that process, or give the command another --port" in output
    assert chat_requests == 0
    assert not (out / "serve.log").exists()  # the command never started
    assert "The server answers" not in output and "The server was stopped" not in output


def test_port_holder_reads_proc(tmp_path: Path) -> None:
    """The holder of a listening port from /proc/net/tcp and /proc/PID/fd (a fake /proc)."""
    from taxpraben.run.serve import port_holder

    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    (proc / "net" / "tcp").write_text(
        header
        + "   0: 0100007F:4985 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 777 1\n"
        + "   1: 0100007F:1F90 00000000:0000 01 00000000:00000000 00:00000000 00000000  1000        0 888 1\n"
    )  # 0x4985 = 18821 listening (0A); 0x1F90 = 8080 only connected (01)
    (proc / "4242" / "fd").mkdir(parents=True)
    (proc / "4242" / "fd" / "5").symlink_to("socket:[777]")
    (proc / "4242" / "cmdline").write_bytes(b"vllm\0serve\0m\0--port\x0018821\0")
    assert port_holder(18821, proc) == "pid 4242 (vllm serve m --port 18821)"
    assert port_holder(8080, proc) is None


def test_a_served_process_that_dies_fails_the_run(tmp_path: Path) -> None:
    """The started server exits mid-run (after 2 answers): the run stops with exit 2 saying so,
    and does not say the server was stopped (it was not: it died)."""
    port = free_port()
    out = tmp_path / "out"
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "2", "--runs", "1",
                          "--no-semantic", "--no-cache", "--concurrency", "1", "--out", str(out),
                          "--serve", mock_command(port, "--latency", "0.05", "--exit-after", "2"))  # fmt: skip
    assert code == 2, output
    assert "the serving command exited (status 3) while the run was using it" in output
    assert "EXITING (--exit-after)" in output  # its last lines of output
    assert "The server was stopped." not in output
    assert not (out / "results.json").exists()


def test_a_command_whose_leader_exits_while_something_still_answers_fails(tmp_path: Path) -> None:
    """The started command exits while what it left behind still answers on the port: the
    run does not go on talking to a server it no longer controls."""
    port = free_port()
    out = tmp_path / "out"
    server = shlex.join([sys.executable, str(MOCK), "--port", str(port), "--latency", "30"])
    # The leader exits once the run's first request is in flight (the mock's /stats counts it),
    # not after a guessed delay: on a loaded machine the server may take longer to start.
    in_flight = (f"import json, time, urllib.request\nwhile True:\n    try:\n        with urllib.request.urlopen("
                 f"'http://127.0.0.1:{port}/stats') as r:\n            if json.load(r)['requests']: break\n"
                 "    except OSError: pass\n    time.sleep(0.05)\n")  # fmt: skip
    waiter = shlex.join([sys.executable, "-c", in_flight])
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "2", "--runs", "1",
                          "--no-semantic", "--no-cache", "--concurrency", "1", "--out", str(out),
                          "--serve", f"{server} & {waiter}; exit 7")  # fmt: skip
    assert code == 2, output
    assert "exited (status 7) while the run was using it" in output


def test_the_served_models_are_recorded_and_an_unlisted_model_is_named(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "out"
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "1", "--runs", "1",
                          "--no-semantic", "--no-cache", "--out", str(out), "--serve", mock_command(port))  # fmt: skip
    assert code == 0, output
    manifest = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]["manifest"]
    assert manifest["served_models"] == ["mock"]
    assert "the server lists" not in output
    port = free_port()
    code, output = invoke("--model", "openai:mock", "--data", "sample", "--limit", "1", "--runs", "1",
                          "--no-semantic", "--no-cache", "--out", str(tmp_path / "other"),
                          "--serve", mock_command(port, "--models", "qwen2.5-7b-q4.gguf"))  # fmt: skip
    assert f"--serve: the server lists qwen2.5-7b-q4.gguf at http://127.0.0.1:{port}/v1/models, not 'mock' (--model)" \
        in output  # fmt: skip
