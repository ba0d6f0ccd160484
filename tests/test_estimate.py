"""`taxpraben estimate` against the mock server and a tiny local model: it sends nothing, and
what it predicts is what `run` then sends, exactly; after the run nothing is left; the cost is
the one worked out by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.cli_data import cli_app
from helpers.mock_openai_server import MockConfig, MockServer, MockServerThread
from taxpraben.commands.estimate import estimate
from taxpraben.commands.run import run
from taxpraben.costs.tokens import approximate_prompt_tokens

APP = cli_app(run=run, estimate=estimate)
SAMPLE = Path(__file__).resolve().parent.parent / "src" / "taxpraben" / "data" / "sample"


def sample_queries(task: str) -> list[str]:
    """The bundled sample's queries of ``task``, in file order (read here, not by taxpraben)."""
    lines = (SAMPLE / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(APP, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    return result.exit_code, result.output


def estimated(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    """``estimate ARGS --json FILE``: the figures it wrote, and what it printed."""
    out = tmp_path / f"estimate-{len(list(tmp_path.glob('estimate-*.json')))}.json"
    code, output = invoke("estimate", *args, "--json", str(out))
    assert code == 0, output
    return json.loads(out.read_text(encoding="utf-8")), output


def sent(server: MockServer) -> tuple[int, int]:
    """Chat requests and model listings the mock has received."""
    return server.stats.requests, server.stats.model_listings


def usage_mean(predictions: Path, task: str | None = None) -> float:
    """Mean completion tokens of a predictions file's answers (of ``task``)."""
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    counts = [r["usage"]["completion_tokens"] for r in rows if task is None or r["task"] == task]
    return sum(counts) / len(counts)


@pytest.mark.parametrize("temperature", ["0", "0.7"])
def test_the_estimate_is_what_run_sends_and_then_nothing_is_left(tmp_path: Path, temperature: str) -> None:
    cache = tmp_path / "cache" / "c.sqlite"
    with MockServerThread(MockConfig()) as server:
        common = ["--model", "openai:mock-model", "--base-url", server.base_url, "--data", "sample",
                  "--limit", "2", "--runs", "2", "--temperature", temperature, "--cache", str(cache)]  # fmt: skip
        before, output = estimated(tmp_path, *common)
        assert sent(server) == (0, 0)  # not even the preflight
        assert not cache.exists() and not cache.parent.exists()  # nor a cache file
        records = sum(min(2, len(sample_queries(p.stem))) for p in SAMPLE.glob("*.jsonl"))
        total = before["total"]
        # hosted endpoints vary between calls even at temperature 0: every run is its own generation
        assert before["shared_generation"] is False
        assert (total["requests"], total["generations"], total["cached"], total["to_send"]) == (
            2 * records, 2 * records, 0, 2 * records)  # fmt: skip
        assert f"{2 * records} requests to send" in output
        code, log = invoke("run", *common, "--no-score", "--out", str(tmp_path / "out"))
        assert code == 0, log
        assert server.stats.requests == total["to_send"]
        after, output = estimated(tmp_path, *common)
        assert server.stats.requests == total["to_send"]  # the second estimate sent nothing either
    assert f"nothing left to send: all {2 * records} generations are in the cache" in output
    left = after["total"]
    assert (left["to_send"], left["cached"], left["prompt_tokens"], left["output_high"]) == (0, 2 * records, 0, 0)
    assert after["nothing_left"] is True and before["nothing_left"] is False
    assert left["output_mean"] == pytest.approx(usage_mean(tmp_path / "out" / "predictions.jsonl"))


def test_tasks_and_limit_select_what_run_sends(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    with MockServerThread(MockConfig()) as server:
        common = ["--model", "openai:mock-model", "--base-url", server.base_url, "--data", "sample",
                  "--tasks", "TaxCalc,TaxSCQ", "--limit", "3", "--runs", "2", "--cache", str(cache)]  # fmt: skip
        figures, _ = estimated(tmp_path, *common)
        assert set(figures["tasks"]) == {"TaxCalc", "TaxSCQ"}
        assert {t: f["to_send"] for t, f in figures["tasks"].items()} == {"TaxCalc": 6, "TaxSCQ": 6}
        # prompt tokens: each record's one user message, counted once per run
        for task, row in figures["tasks"].items():
            assert row["prompt_tokens"] == 2 * sum(
                approximate_prompt_tokens([{"role": "user", "content": q}]) for q in sample_queries(task)[:3])
        assert figures["counter"] == {"name": "approximation (Qwen2.5-calibrated)", "exact": False}
        code, log = invoke("run", *common, "--no-score", "--out", str(tmp_path / "out"))
        assert code == 0, log
        assert server.stats.requests == figures["total"]["to_send"] == 12


def test_output_tokens_with_nothing_measured_are_an_upper_bound(tmp_path: Path) -> None:
    """No cached answer to take a mean length from: "up to" the most, not "0 - most"."""
    figures, output = estimated(tmp_path, "--model", "openai:mock-model", "--base-url", "http://127.0.0.1:9/v1",
                                "--data", "sample", "--tasks", "TaxCalc", "--limit", "2", "--runs", "1",
                                "--max-tokens", "64", "--no-cache")  # fmt: skip
    assert figures["tasks"]["TaxCalc"]["output_low"] == 0  # the JSON keeps both ends
    assert re.search(r"│ TaxCalc .*│ +up to 128 │", output), output
    assert "0 - " not in output and "Output tokens: up to --max-tokens per generation to send" in output


def test_a_partly_cached_run_costs_what_is_computed_by_hand(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: CNY\nmodels:\n  mock-*: {input: 2.0, output: 8.0}\n  other: {input: 1, output: 1}\n",
                      encoding="utf-8")  # fmt: skip
    with MockServerThread(MockConfig()) as server:
        common = ["--model", "openai:mock-model", "--base-url", server.base_url, "--data", "sample",
                  "--tasks", "TaxCalc", "--runs", "1", "--temperature", "0.7", "--max-tokens", "64",
                  "--cache", str(cache)]  # fmt: skip
        code, log = invoke("run", *common, "--limit", "1", "--no-score", "--out", str(tmp_path / "first"))
        assert code == 0, log
        figures, output = estimated(tmp_path, *common, "--limit", "3", "--pricing", str(prices))
        assert server.stats.requests == 1
        row = figures["tasks"]["TaxCalc"]
        assert (row["generations"], row["cached"], row["to_send"]) == (3, 1, 2)
        measured = usage_mean(tmp_path / "first" / "predictions.jsonl")
        prompt = sum(approximate_prompt_tokens([{"role": "user", "content": q}]) for q in sample_queries("TaxCalc")[1:3])
        low = min(2 * 64, round(2 * measured))
        assert (row["prompt_tokens"], row["output_mean"], row["output_low"], row["output_high"]) == (
            prompt, measured, low, 128)  # fmt: skip
        assert row["cost_low"] == pytest.approx((prompt * 2.0 + low * 8.0) / 1e6, rel=1e-12)
        assert row["cost_high"] == pytest.approx((prompt * 2.0 + 128 * 8.0) / 1e6, rel=1e-12)
        assert figures["total"]["cost_high"] == pytest.approx(row["cost_high"], rel=1e-12)
        assert figures["currency"] == "CNY" and figures["pricing"]["entry"] == "mock-*"
        assert "CNY" in output
        # the measured range as a range (low to high), never "0 -"
        assert re.search(rf"│ TaxCalc .*│ +{low:,} to 128 │", output), output
        code, log = invoke("run", *common, "--limit", "3", "--no-score", "--out", str(tmp_path / "second"))
        assert code == 0, log
        assert server.stats.requests == 1 + row["to_send"]


def test_an_unpriced_model_and_no_cache(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nmodels:\n  deepseek-chat: {input: 0.27, output: 1.10}\n", encoding="utf-8")
    with MockServerThread(MockConfig()) as server:
        common = ["--model", "openai:mock-model", "--base-url", server.base_url, "--data", "sample",
                  "--tasks", "TaxSCQ", "--limit", "2", "--runs", "1", "--cache", str(tmp_path / "c.sqlite")]  # fmt: skip
        assert invoke("run", *common, "--no-score", "--out", str(tmp_path / "out"))[0] == 0
        figures, output = estimated(tmp_path, *common, "--no-cache", "--pricing", str(prices))
        assert server.stats.requests == 2
    assert "no price for openai:mock-model" in output
    assert figures["total"]["to_send"] == 2 and figures["total"]["cached"] == 0
    assert figures["total"]["cost_low"] is None and figures["cache"]["path"] is None


def test_unusable_inputs_exit_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "prices.yaml"
    bad.write_text("currency: USD\nmodels:\n  m: {input: 1, outptu: 2}\n", encoding="utf-8")
    code, output = invoke("estimate", "--model", "baseline:oracle", "--data", "sample", "--pricing", str(bad))
    assert code == 2 and "models.m.outptu: unknown key; did you mean 'output'?" in output
    code, output = invoke("estimate", "--model", "baseline:oracle", "--data", "sample", "--tasks", "TaxNope")
    assert code != 0 and "TaxNope" in output
    code, output = invoke("estimate", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                          "--data", "sample", "--tokenizer", str(tmp_path / "absent"))  # fmt: skip
    assert code == 2 and "no such directory" in output


def test_baselines_share_their_runs_and_cost_nothing(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nmodels:\n  '*': {input: 5, output: 5}\n", encoding="utf-8")
    figures, output = estimated(tmp_path, "--model", "baseline:oracle", "--data", "sample", "--limit", "1",
                                "--runs", "3", "--pricing", str(prices))  # fmt: skip
    total = figures["total"]
    assert figures["shared_generation"] is True
    assert (total["requests"], total["generations"]) == (3 * 14, 14)
    assert total["cost_low"] == total["cost_high"] == 0.0
    assert "none (baseline" in output


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_models_hf import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def test_a_greedy_local_model_shares_one_generation(tmp_path: Path, tiny_llama: Path) -> None:
    from transformers import AutoTokenizer

    cache = tmp_path / "c.sqlite"
    common = ["--model", f"hf:{tiny_llama}", "--data", "sample", "--tasks", "TaxCalc,TaxQA", "--limit", "2",
              "--runs", "2", "--max-tokens", "4", "--cache", str(cache)]  # fmt: skip
    figures, _ = estimated(tmp_path, *common)
    total = figures["total"]
    assert figures["shared_generation"] is True
    assert (total["requests"], total["generations"], total["to_send"]) == (8, 4, 4)
    assert figures["counter"] == {"name": f"tokenizer {tiny_llama}", "exact": True}
    tokenizer = AutoTokenizer.from_pretrained(tiny_llama)
    for task in ("TaxCalc", "TaxQA"):
        expected = 0
        for query in sample_queries(task)[:2]:
            text = tokenizer.apply_chat_template([{"role": "user", "content": query}], add_generation_prompt=True,
                                                 tokenize=False)  # fmt: skip
            expected += len(tokenizer(text, add_special_tokens=False)["input_ids"])
        assert figures["tasks"][task]["prompt_tokens"] == expected
    code, log = invoke("run", *common, "--device", "cpu", "--no-score", "--out", str(tmp_path / "out"))
    assert code == 0, log
    generated = re.search(r"(\d+) generations from the cache, (\d+) generated", log)
    assert generated is not None and (int(generated[1]), int(generated[2])) == (0, total["to_send"])
    after, output = estimated(tmp_path, *common)
    assert "nothing left to send: all 4 generations are in the cache" in output
    assert after["total"]["output_mean"] == pytest.approx(usage_mean(tmp_path / "out" / "predictions.jsonl"))


def test_shards_split_the_estimate(tmp_path: Path) -> None:
    common = ["--model", "baseline:first-choice", "--data", "sample", "--limit", "3", "--runs", "2"]
    whole, _ = estimated(tmp_path, *common)
    parts = [estimated(tmp_path, *common, "--shard", f"{i}/2")[0] for i in range(2)]
    for key in ("requests", "generations", "to_send", "prompt_tokens", "output_high"):
        assert sum(p["total"][key] for p in parts) == whole["total"][key], key
    assert 0 < parts[0]["total"]["requests"] < whole["total"]["requests"]
    assert [p["shard"] for p in parts] == ["0/2", "1/2"]


def test_an_estimate_needs_no_api_key_and_says_run_will(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An estimate sends nothing, so a hosted endpoint's missing key does not stop it; it says
    that the run would stop for it. ``.invalid`` never resolves: nothing could be reached."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    figures, output = estimated(tmp_path, "--model", "openai:gpt-4o-mini", "--base-url", "https://api.invalid/v1",
                                "--data", "sample", "--tasks", "TaxSCQ", "--runs", "2", "--no-cache")  # fmt: skip
    assert figures["total"]["to_send"] == 2 * len(sample_queries("TaxSCQ"))
    assert "run would stop before sending: no API key for https://api.invalid/v1" in output
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _, output = estimated(tmp_path, "--model", "openai:gpt-4o-mini", "--base-url", "https://api.invalid/v1",
                          "--data", "sample", "--tasks", "TaxSCQ", "--runs", "2", "--no-cache")  # fmt: skip
    assert "run would stop" not in output
