"""Several endpoints for one run (issue 14, item 1): the pool's choice and ejection rules, and
`taxpraben run` over several mock replicas, one of which dies mid-run. Counts asserted are
the mocks' own; predictions are compared with a single-endpoint run's."""

from __future__ import annotations

import asyncio
import json
import socket
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.cli_data import cli_app, sales_calc_rows, write_data
from helpers.mock_openai_server import MockConfig, MockServer, MockServerThread
from taxpraben.commands.run import run
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.models.endpoints import EndpointPool, split_base_urls
from taxpraben.models.openai import OpenAIBackend
from taxpraben.records import Record

APP = cli_app(run=run)


ROWS = sales_calc_rows(30)
RUNS = 2


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxCalc": ROWS})


def invoke(data_dir: Path, tmp_path: Path, out: str, *args: str, cache: str = "c.sqlite") -> tuple[int, list[str]]:
    base = ["run", "--data", str(data_dir), "--tasks", "TaxCalc", "--runs", str(RUNS), "--no-semantic", "--cache", str(tmp_path / cache),
            "--out", str(tmp_path / out), "--max-retries", "6", "--retry-backoff", "0.05",
            "--model", "openai:mock", "--concurrency", "8"]  # fmt: skip
    result = CliRunner().invoke(APP, [*base, *args], env={"OPENAI_API_KEY": ""}, catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


def predictions(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in r.items() if k != "latency_s"} for r in rows]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the pool alone ------------------------------------------------------------------------


def pool_of(n: int, **kwargs: Any) -> EndpointPool:
    return EndpointPool([(f"http://h{i}/v1", f"http://h{i}/v1") for i in range(n)], **kwargs)


def test_choice_is_the_least_expected_wait() -> None:
    pool = pool_of(2)
    fast, slow = pool.endpoints
    fast.rate, slow.rate = 30.0, 10.0
    fast.min_latency = slow.min_latency = 0.1
    fast.outstanding, slow.outstanding = 4, 1
    # expected waits (o + 1) / rate: 5 / 30 < 2 / 10, then 6 / 30 == 2 / 10: the tie goes
    # to the one holding fewer
    assert pool.choose(0.0) is fast
    assert pool.choose(0.0) is slow
    assert (fast.outstanding, slow.outstanding, fast.sent, slow.sent) == (5, 2, 1, 1)


def test_service_time_is_the_floor_and_an_unqueued_endpoint_has_no_limit() -> None:
    pool = pool_of(2)
    slow, fast = pool.endpoints
    slow.min_latency, slow.rate = 0.4, 100.0  # idle, but it takes 0.4 s
    fast.min_latency, fast.outstanding = 0.1, 20  # never seen queueing: 0.1 s however many
    assert pool.choose(0.0) is fast
    fast.rate = 100.0  # now known: 22 / 100 = 0.22 s
    fast.outstanding = 21
    assert pool.choose(0.0) is fast
    fast.outstanding = 40  # 41 / 100 > 0.4
    assert pool.choose(0.0) is slow


def test_unmeasured_endpoints_go_first() -> None:
    pool = pool_of(3)
    measured, new1, new2 = pool.endpoints
    measured.rate, measured.min_latency, measured.outstanding = 50.0, 0.01, 0
    picks = [pool.choose(0.0) for _ in range(4)]
    assert picks == [new1, new2, new1, new2]  # wait 0 each, the fewer outstanding first


def test_rate_is_measured_where_requests_queued() -> None:
    pool = pool_of(2)
    ep = pool.endpoints[0]
    pool.finish(ep, 0.0, latency=0.1, in_flight=1)  # the service time; no queue, no limit yet
    assert (ep.min_latency, ep.rate) == (0.1, None)
    pool.finish(ep, 0.0, latency=0.5, in_flight=4)  # queued: 4 / 0.5 = 8 per second
    assert ep.rate == pytest.approx(8.0)
    pool.finish(ep, 0.0, latency=0.5, in_flight=3)  # 6: EWMA 8 + 0.2 * (6 - 8)
    assert ep.rate == pytest.approx(7.6)
    pool.finish(ep, 0.0, latency=0.1, in_flight=2)  # unqueued at 20/s: the limit is higher
    assert ep.rate == pytest.approx(20.0)
    assert ep.to_meta()["mean_latency_s"] == pytest.approx(0.3)
    assert ep.to_meta()["completed"] == 4


def test_repeated_connection_failures_eject_then_one_probe_decides() -> None:
    pool = pool_of(2, max_failures=3, backoff=1.0)
    bad, good = pool.endpoints
    good.answered = True
    for i in range(3):
        ep = pool.choose(float(i)) if i == 0 else bad
        bad.outstanding += 0 if i == 0 else 1
        pool.finish(ep, 10.0, connection_failed=True)
    assert bad.down_until == 11.0 and bad.ejections == 1
    assert all(pool.choose(10.5) is good for _ in range(5))  # out: every request elsewhere
    probe = pool.choose(11.0)
    assert probe is bad and bad.probing
    assert pool.choose(11.0) is good  # one probe at a time
    pool.finish(bad, 11.2, connection_failed=True)  # the probe failed: out for twice as long
    assert bad.down_until == pytest.approx(13.2) and not bad.probing
    assert pool.choose(13.2) is bad
    pool.finish(bad, 13.3, latency=0.1)  # the probe answered: back in service
    assert bad.down_until is None and bad.consecutive_failures == 0 and bad.backoff == 1.0
    assert bad.ejections == 1


def test_an_answer_resets_the_failure_count() -> None:
    pool = pool_of(2, max_failures=3)
    ep = pool.endpoints[0]
    for fail in (True, True, False, True, True):
        ep.outstanding += 1
        if fail:
            pool.finish(ep, 0.0, connection_failed=True)
        else:
            pool.finish(ep, 0.0, answered=True)  # an HTTP 500 is an answer: it is alive
    assert ep.down_until is None and ep.consecutive_failures == 2


def test_a_pool_of_one_never_ejects() -> None:
    pool = pool_of(1, max_failures=2)
    (ep,) = pool.endpoints
    for _ in range(5):
        assert pool.choose(0.0) is ep
        pool.finish(ep, 0.0, connection_failed=True)
    assert ep.down_until is None and ep.ejections == 0
    pool.eject(ep, 0.0)
    assert ep.down_until is None


def test_others_live_needs_an_answer_and_service() -> None:
    pool = pool_of(3)
    a, b, _ = pool.endpoints
    assert not pool.others_live(a)
    b.answered = True
    assert pool.others_live(a) and not pool.others_live(b)
    b.down_until = 5.0
    assert not pool.others_live(a)


def test_base_urls_split_and_cache_endpoint() -> None:
    assert split_base_urls(" http://b:1/v1/ , http://a:1/v1,http://b:1/v1") == ["http://b:1/v1", "http://a:1/v1"]
    with pytest.raises(ValueError, match="must start with http"):
        split_base_urls("http://a/v1,ftp://b")
    one = OpenAIBackend("m", base_url="http://u:pw@a:1/v1/")
    assert one.endpoint == "http://a:1/v1"  # as before (no user info, no slash): caches from before: old caches stay valid
    two = OpenAIBackend("m", base_url="http://b:1/v1,http://a:1/v1")
    assert two.endpoint == "http://a:1/v1,http://b:1/v1"
    assert OpenAIBackend("m", base_url="http://a:1/v1,http://b:1/v1").endpoint == two.endpoint


# --- runs over several mock replicas --------------------------------------------------------


def test_a_replica_dying_mid_run_costs_no_item_and_pays_none_twice(data_dir: Path, tmp_path: Path) -> None:
    # Bounded replicas, so that the load spreads over all three (the dying one included).
    configs = [MockConfig(latency=0.01, capacity=2), MockConfig(latency=0.02, capacity=2, die_after=6),
               MockConfig(latency=0.04, capacity=2)]  # fmt: skip
    with ExitStack() as stack:
        servers: list[MockServer] = [stack.enter_context(MockServerThread(c)) for c in configs]
        urls = ",".join(s.base_url for s in servers)
        code, lines = invoke(data_dir, tmp_path, "multi", "--base-url", urls)
        assert code == 0, lines
        answered = [d for s in servers for d in s.stats.answered]
        completed = [s.stats.completed for s in servers]
        assert servers[1].dead
    total = len(ROWS) * RUNS
    counts = Counter(answered)
    assert len(counts) == total and set(counts.values()) == {1}  # every item once, none twice
    assert completed[1] == 6
    meta = json.loads((tmp_path / "multi" / "results.json").read_text(encoding="utf-8"))["meta"]
    eps = {e["endpoint"]: e for e in meta["endpoints"]}
    assert [eps[s.base_url]["completed"] for s in servers] == completed
    # Every attempt the client made is accounted for, and each failed one was retried.
    assert all(e["sent"] == e["completed"] + e["failed"] for e in eps.values())
    assert sum(e["failed"] for e in eps.values()) == meta["generation_stats"]["retries"]
    assert meta["endpoint"] == ",".join(sorted(s.base_url for s in servers))
    assert meta["generation_stats"]["generated"] == total and meta["generation_stats"]["failed"] == 0

    # The same predictions as one endpoint gives (the mock's replies are pure functions).
    with MockServerThread(MockConfig()) as single:
        code, lines = invoke(data_dir, tmp_path, "single", "--base-url", single.base_url, cache="single.sqlite")
        assert code == 0, lines
    assert predictions(tmp_path / "multi") == predictions(tmp_path / "single")
    single_meta = json.loads((tmp_path / "single" / "results.json").read_text(encoding="utf-8"))["meta"]
    assert "endpoints" not in single_meta


def test_replica_set_shares_the_cache_in_any_order(data_dir: Path, tmp_path: Path) -> None:
    """Comma-separated or repeated, in any order: one replica set, one set of cache keys."""
    with MockServerThread(MockConfig()) as a, MockServerThread(MockConfig()) as b:
        code, lines = invoke(data_dir, tmp_path, "one", "--base-url", f"{a.base_url},{b.base_url}")
        assert code == 0, lines
        sent = a.stats.requests + b.stats.requests
        assert min(a.stats.requests, b.stats.requests) > 0  # both served
        code, lines = invoke(data_dir, tmp_path, "two", "--base-url", b.base_url, "--base-url", a.base_url)
        assert code == 0, lines
        assert a.stats.requests + b.stats.requests == sent == len(ROWS) * RUNS


def test_a_dead_endpoint_at_start_is_taken_out_and_the_others_carry_on(data_dir: Path, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with MockServerThread(MockConfig(latency=0.01)) as live:
        code, lines = invoke(data_dir, tmp_path, "out", "--base-url", f"{dead},{live.base_url}")
        assert code == 0, lines
        assert live.stats.completed == len(ROWS) * RUNS
    meta = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["meta"]
    eps = {e["endpoint"]: e for e in meta["endpoints"]}
    assert eps[dead]["completed"] == 0 and eps[dead]["ejections"] >= 1


@pytest.mark.parametrize("preflight", [True, False])
def test_all_endpoints_unreachable_stops_the_run(data_dir: Path, tmp_path: Path, preflight: bool) -> None:
    urls = f"http://127.0.0.1:{free_port()}/v1,http://127.0.0.1:{free_port()}/v1"
    extra = () if preflight else ("--no-preflight",)
    code, lines = invoke(data_dir, tmp_path, "out", "--base-url", urls, *extra)
    assert code != 0
    text = "\n".join(lines)
    assert "cannot connect" in text
    assert not (tmp_path / "out" / "predictions.jsonl").exists()


@pytest.mark.parametrize("preflight", [True, False])
def test_a_refused_key_on_any_endpoint_stops_the_run(data_dir: Path, tmp_path: Path, preflight: bool) -> None:
    extra = () if preflight else ("--no-preflight",)
    with MockServerThread(MockConfig()) as open_, MockServerThread(MockConfig(api_key="sk-right")) as locked:
        code, lines = invoke(data_dir, tmp_path, "out", "--base-url", f"{open_.base_url},{locked.base_url}", *extra)
    assert code != 0
    assert any("401" in line for line in lines), lines


def test_a_cancelled_attempt_is_no_longer_outstanding() -> None:
    """A run stopped mid-request (Ctrl-C, RunAborted) leaves no phantom load on the pool."""

    async def scenario() -> tuple[int, int]:
        server = MockServer(MockConfig(latency=1.0))
        await server.start()
        # The same server under two host names makes a pool of two.
        backend = OpenAIBackend("mock", base_url=f"{server.base_url},http://localhost:{server.port}/v1")
        config = GenerationConfig()
        request = build_request(Record(task="T", id="1", query="x", answer=""), 0, config)
        try:
            attempt = asyncio.ensure_future(backend.complete(request, config))
            await asyncio.sleep(0.3)
            during = sum(ep.outstanding for ep in backend.pool.endpoints)
            attempt.cancel()
            with pytest.raises(asyncio.CancelledError):
                await attempt
            return during, sum(ep.outstanding for ep in backend.pool.endpoints)
        finally:
            await backend.aclose()
            await server.stop()

    assert asyncio.run(scenario()) == (1, 0)
