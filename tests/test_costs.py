"""What a run costs and whether answers were cut: usage and finish_reason per sample, the
ledger (truncation, tokens, cost) in results.json and the reports, and budgets."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.cli_data import quarterly_calc_rows, scq_rows, write_data
from helpers.mock_openai_server import MockConfig, MockServerThread, is_cut, request_digest
from taxpraben.cli import app
from taxpraben.costs.budget import BUDGET_EXIT, Budget
from taxpraben.costs.ledger import task_ledger, total_ledger
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
PRICES = {"input": 2.0, "output": 8.0, "cached_input": 0.5}  # per million tokens


def _item(run: int, text: str, *, id: str = "1", **generation: Any) -> Any:
    record = Record("TaxCalc", id, "求销项税额", "130")
    return prepare_item(REG["TaxCalc"], record, run, Prediction("TaxCalc", id, run, text, **generation))


def _cost(prompt: int, completion: int, cached: int) -> float:
    return ((prompt - cached) * PRICES["input"] + cached * PRICES["cached_input"] + completion * PRICES["output"]) / 1e6


# ---------------------------------------------------------------------------- the ledger


def test_the_ledger_counts_cut_answers_and_the_tokens_paid_here_and_from_the_cache() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 50, "reasoning_tokens": 20, "cached_prompt_tokens": 40}
    rows = [
        [_item(0, "130元", usage=usage, finish_reason="stop", latency_s=0.5)],
        [_item(1, "答案是", usage={"prompt_tokens": 100, "completion_tokens": 512}, finish_reason="length", latency_s=2.0)],
        [_item(2, "130元", usage=usage, finish_reason="stop", cached=True, latency_s=0.7)],
        [_item(3, "", error="HTTP 500: boom")],
        [_item(4, "130", finish_reason="stop")],  # no usage reported
    ]
    ledger = task_ledger(rows, cost_of=_cost)
    assert (ledger["answers"], ledger["truncated"]) == (5, 1)
    assert ledger["truncated_rate"] == pytest.approx(0.2)
    assert ledger["finish_reasons"] == {"stop": 3, "length": 1, "error": 1}
    generated, cached = ledger["generated"], ledger["from_cache"]
    assert generated["generations"] == 3 and generated["without_usage"] == 1  # the error is not billed
    assert (generated["prompt_tokens"], generated["completion_tokens"]) == (200, 562)
    assert (generated["reasoning_tokens"], generated["cached_prompt_tokens"]) == (20, 40)
    assert generated["cost"] == pytest.approx(_cost(100, 50, 40) + _cost(100, 512, 0))
    assert cached["generations"] == 1 and cached["prompt_tokens"] == 100
    assert cached["cost"] == pytest.approx(_cost(100, 50, 40))
    assert task_ledger(rows)["generated"]["cost"] is None  # no prices: no cost


def test_a_generation_shared_or_copied_over_runs_is_counted_once() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    copies = [[_item(run, "130元", usage=usage, finish_reason="length", latency_s=0.25)] for run in range(3)]
    ledger = task_ledger(copies)
    assert ledger["answers"] == 3 and ledger["truncated"] == 3  # every run's answer was cut...
    assert ledger["generated"]["generations"] == 1  # ...but one generation was paid for
    assert task_ledger(copies, shared_generation=True)["generated"]["prompt_tokens"] == 10
    apart = [[_item(run, "130元", usage=usage, latency_s=0.25 + run)] for run in range(3)]
    assert task_ledger(apart)["generated"]["generations"] == 3  # same text, three requests
    # Two requests of one record that happen to agree to the 0.1 ms are not a copy when the
    # task's other records' runs differ: the test is made over the whole task.
    coincide = [[_item(run, "130元", id=i, usage=usage, latency_s=0.25 + run * (i == "2")) for i in "12"]
                for run in range(2)]  # fmt: skip
    assert task_ledger(coincide)["generated"]["generations"] == 4
    every = [[_item(run, "130元", id=i, usage=usage, latency_s=0.25 + int(i)) for i in "12"] for run in range(2)]
    assert task_ledger(every)["generated"]["generations"] == 2  # every record's runs copied: one each
    assert task_ledger(every[:1])["generated"]["generations"] == 2  # one run: nothing to compare
    unknown = [[_item(run, "130元", usage=usage)] for run in range(2)]  # no latency: cannot tell
    assert task_ledger(unknown)["generated"]["generations"] == 2
    total = total_ledger([ledger, task_ledger(apart)])
    assert total["answers"] == 6 and total["truncated"] == 3 and total["generated"]["generations"] == 4
    assert total["generated"]["completion_tokens"] == 20 and total["generated"]["cost"] is None


# ---------------------------------------------------------------------------- the budget


def test_the_budget_admits_what_fits_with_the_attempts_in_flight_and_charges_what_was_reported() -> None:
    budget = Budget(tokens=1000)
    assert budget.admit(100, 300) and budget.admit(100, 300)  # 800 reserved
    assert not budget.admit(100, 300) and budget.refused == 1  # 1,200 would not fit
    budget.settle(100, 300, {"prompt_tokens": 90, "completion_tokens": 10})  # 100 spent, 400 reserved
    assert (budget.spent_tokens, budget.reserved_tokens) == (100, 400)
    budget.release(100, 300)  # a failed attempt costs nothing
    assert budget.admit(100, 300) and budget.admit(100, 300)  # 100 + 800 <= 1000
    budget.settle(100, 300, None)  # nothing reported: charged its worst case
    assert budget.spent_tokens == 500
    priced = Budget(cost=0.01, cost_of=_cost)
    assert priced.admit(1000, 1000)  # 0.01: fits exactly
    assert not priced.admit(1, 0)
    with pytest.raises(ValueError, match="needs prices"):
        Budget(cost=1.0)


# ---------------------------------------------------------------------------- end to end


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxCalc": quarterly_calc_rows(12), "TaxSCQ": scq_rows(8)})


def _run(server: MockServerThread, data: Path, out: Path, cache: Path, *extra: str) -> Any:
    args = ["run", "--model", "openai:mock-model", "--base-url", server.base_url, "--data", str(data), "--tasks", "TaxCalc,TaxSCQ",
            "--runs", "2", "--temperature", "0.5", "--max-tokens", "64", "--out", str(out), "--cache", str(cache),
            "--no-semantic", *extra]  # fmt: skip
    return CliRunner().invoke(app, args, catch_exceptions=False, env={**os.environ, "COLUMNS": "200"})


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_cut_answers_and_their_tokens_are_shown_everywhere(data_dir: Path, tmp_path: Path) -> None:
    """A mock that cuts 30% of its answers (finish_reason length) and reports usage with
    reasoning tokens: each sample says so, results.json counts them per task and overall,
    both reports and the terminal show them, and a priced run states what it cost."""
    pricing = tmp_path / "prices.yaml"
    pricing.write_text("currency: USD\nmodels:\n  mock-*: {input: 2.0, output: 8.0, cached_input: 0.5}\n",
                       encoding="utf-8")  # fmt: skip
    out = tmp_path / "out"
    with MockServerThread(MockConfig(truncate_rate=0.3, reasoning=True)) as server:
        done = _run(server, data_dir, out, tmp_path / "c.sqlite", "--pricing", str(pricing))
    assert done.exit_code == 0, done.output
    samples = _lines(out / "samples.jsonl")
    cut = [s for s in samples if s.get("finish_reason") == "length"]
    assert 0 < len(cut) < len(samples) and all(s["usage"]["completion_tokens"] == 64 for s in cut)
    assert all(s["usage"]["reasoning_tokens"] > 0 for s in samples)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for task, entry in results["tasks"].items():
        mine = [s for s in samples if s["task"] == task]
        assert entry["ledger"]["truncated"] == sum(s.get("finish_reason") == "length" for s in mine)
        assert entry["ledger"]["generated"]["completion_tokens"] == sum(s["usage"]["completion_tokens"] for s in mine)
    ledger = results["ledger"]
    assert ledger["answers"] == len(samples) and ledger["truncated"] == len(cut)
    prompt = sum(s["usage"]["prompt_tokens"] for s in samples)
    completion = sum(s["usage"]["completion_tokens"] for s in samples)
    assert ledger["generated"]["cost"] == pytest.approx(_cost(prompt, completion, 0), abs=1e-6)
    assert results["meta"]["pricing"]["entry"] == "mock-*" and results["meta"]["pricing"]["currency"] == "USD"
    report = (out / "report.md").read_text(encoding="utf-8")
    # One line for every cut task (not one per task), true of each kind: TaxCalc and TaxSCQ are read exactly.
    tasks = results["tasks"]
    order = sorted((t for t in tasks if tasks[t]["ledger"]["truncated"]),
                   key=lambda t: -tasks[t]["ledger"]["truncated"] / tasks[t]["ledger"]["answers"])  # fmt: skip
    counts = ", ".join(f"{t} {tasks[t]['ledger']['truncated']}/{tasks[t]['ledger']['answers']}" for t in order)
    line = f"Answers cut at max_tokens=64 (cut/answers): {counts}. A cut answer is scored as it is: "
    said = " ".join(done.output.split())
    assert said.count("Answers cut at") == 1 and line in said, said
    assert "an exact-answer task reads its answer from what was written" in said
    assert "a classification task reads its label" in said and "count as wrong" not in said
    assert "generation task" not in said  # no generation task here
    assert line in " ".join(report.split()) and "Answers: truncation, tokens and cost" in report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="ledger"' in page and 'value="truncated"' in page and '"tr":1' in page
    assert "cost" in done.output


def test_answers_streamed_without_usage_are_counted_by_taxpraben_in_the_ledger(data_dir: Path, tmp_path: Path) -> None:
    """A server that streams no usage (llama.cpp): every sample's usage is taxpraben's count,
    marked; the ledger sums them, says how many it counted, and none is without counts."""
    out = tmp_path / "out"
    with MockServerThread(MockConfig(stream_without_usage=True)) as server:
        done = _run(server, data_dir, out, tmp_path / "c.sqlite")
    assert done.exit_code == 0, done.output
    samples = _lines(out / "samples.jsonl")
    assert samples and all(s["usage"]["counted_by"] == "taxpraben: approximation (Qwen2.5-calibrated)" for s in samples)
    generated = json.loads((out / "results.json").read_text(encoding="utf-8"))["ledger"]["generated"]
    assert generated["counted_by_taxpraben"] == generated["generations"] == len(samples)
    assert generated["without_usage"] == 0
    assert generated["prompt_tokens"] == sum(s["usage"]["prompt_tokens"] for s in samples) > 0
    assert generated["completion_tokens"] == sum(s["usage"]["completion_tokens"] for s in samples) > 0
    assert f"{len(samples)} counted by taxpraben" in " ".join(done.output.split())


def test_the_mock_cuts_the_answers_its_digest_says(data_dir: Path, tmp_path: Path) -> None:
    """The cut answers are exactly those the mock chose (is_cut of the request's digest)."""
    out = tmp_path / "out"
    with MockServerThread(MockConfig(truncate_rate=0.3)) as server:
        assert _run(server, data_dir, out, tmp_path / "c.sqlite", "--no-score").exit_code == 0
    preds = _lines(out / "predictions.jsonl")
    rows = {**{r["id"]: r for r in quarterly_calc_rows(12)}}
    for p in preds:
        if p["task"] != "TaxCalc":
            continue
        body = {"model": "mock-model", "messages": [{"role": "user", "content": rows[p["id"]]["query"]}], "seed": p["run"]}
        assert (p["finish_reason"] == "length") == is_cut(request_digest(body), 0.3)


def test_a_budget_stops_a_run_partway_and_a_rerun_finishes_it_paying_nothing_twice(
    data_dir: Path, tmp_path: Path
) -> None:
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    with MockServerThread(MockConfig()) as server:
        stopped = _run(server, data_dir, out, cache, "--budget-tokens", "1500", "--concurrency", "2")
        first = server.stats.requests
        assert stopped.exit_code == BUDGET_EXIT, stopped.output
        assert "Budget reached" in stopped.output
        said = " ".join(stopped.output.split())
        named = re.search(r"To finish, run the same command with --budget-tokens (\d+) \(the worst case of the (\d+) "
                          r"generation\(s\) not sent", said)  # fmt: skip
        assert named is not None, said
        needed, unsent = int(named.group(1)), int(named.group(2))
        assert unsent == 40 - first and needed >= unsent * 64  # --max-tokens 64 each, at least
        assert f"--budget-tokens {needed}" in said.split("paid for again):")[1]  # the command to go on with
        assert "--budget-tokens 1500" not in said
        assert not (out / "results.json").exists()  # a part is not scored
        kept = _lines(out / "predictions.jsonl")
        assert 0 < len(kept) == first < 40
        spent = sum(p["usage"]["prompt_tokens"] + p["usage"]["completion_tokens"] for p in kept)
        assert spent <= 1500  # stopped before, not after, the budget
        done = _run(server, data_dir, out, cache, "--budget-tokens", str(needed))  # the budget named finishes it
        assert done.exit_code == 0, done.output
        assert server.stats.requests == 40  # 20 records x 2 runs, each sent once over both runs
    preds = _lines(out / "predictions.jsonl")
    assert len(preds) == 40 and sum(bool(p.get("cached")) for p in preds) == first
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["ledger"]["from_cache"]["generations"] == first
    assert results["ledger"]["generated"]["generations"] == 40 - first
    assert f"resumed: {first} from the cache" in done.output


def test_a_cost_budget_needs_prices(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig()) as server:
        refused = _run(server, data_dir, tmp_path / "out", tmp_path / "c.sqlite", "--budget-cost", "1")
        assert server.stats.requests == 0
    assert refused.exit_code == 2 and "--budget-cost needs prices" in refused.output


def test_a_budget_with_a_batch_is_refused_before_anything_is_sent(data_dir: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig()) as server:
        refused = _run(server, data_dir, tmp_path / "out", tmp_path / "c.sqlite", "--batch", "--budget-tokens", "100")
        assert server.stats.requests == 0 and server.stats.batches_created == 0
    assert refused.exit_code == 2 and "a budget cannot stop it partway" in refused.output


def test_the_command_to_go_on_with_has_the_budget_named() -> None:
    from taxpraben.jobs.stops import with_options_set

    argv = ["run", "--model", "openai:m", "--budget-tokens", "1500", "--budget-cost=0.5", "--runs", "2"]
    assert with_options_set(argv, {"--budget-tokens": "4200", "--budget-cost": "0.7300"}) == [
        "run", "--model", "openai:m", "--runs", "2", "--budget-tokens", "4200", "--budget-cost", "0.7300"]  # fmt: skip
    assert with_options_set(["run"], {"--budget-tokens": "9"}) == ["run", "--budget-tokens", "9"]
