"""``run``'s readings in a worker process (``taxpraben.jobs.reading_process``): the same items as
read on the scoring thread, the parent's own records and predictions in them; a worker that
cannot start or dies leaves the rest of the answers to the scoring thread, with the same
readings, and the run says so; ``$TAXPRABEN_READINGS`` chooses."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.cli_data import (
    RUN_SCRIPT,
    cli_app,
    quarterly_calc_rows,
    scq_rows,
    stacks_of,
    write_data,
)
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.commands.run import run
from taxpraben.data.loader import LoadedData, load_data
from taxpraben.jobs import alongside, reading_process
from taxpraben.jobs.read_ahead import ReadAhead
from taxpraben.jobs.reading_process import ReadingProcess, ReadingProcessError, items_of, read_item
from taxpraben.models.base import GenerationConfig, Request, build_request
from taxpraben.records import Record
from taxpraben.results import Sample
from taxpraben.results.predictions import Prediction
from taxpraben.scoring.items import Readings
from taxpraben.tasks import TaskSpec, load_registry

REG = load_registry(use_env=False)
APP = cli_app(run=run)
TASKS = "TaxCalc,TaxSCQ"


@pytest.fixture(scope="module")
def sample() -> LoadedData:
    return load_data("sample", REG)


def answers(sample: LoadedData) -> list[tuple[Request, Prediction]]:
    """Every record of the sample, two runs: its gold, a wrong or unreadable answer, a failed
    generation; run 1 repeats some of run 0's answers (read once)."""
    out = []
    for run_id in (0, 1):
        for task, records in sample.records.items():
            for k, record in enumerate(records):
                request = build_request(record, run_id, GenerationConfig(), REG[task])
                gold = str(record.answer_text) if REG[task].type != "classification" else str(record.gold_label)
                text = [gold, "我不确定", f"答案：{k}", ""][(k + run_id * (k % 2)) % 4]  # even k: run 1 = run 0
                error = "HTTP 500" if not text else None
                out.append((request, Prediction(task, record.id, run_id, text, error=error)))
    return out


def read_all(
    pairs: list[tuple[Request, Prediction]], process: ReadingProcess | None, batch_size: int = 16, settle: bool = False,
    ready: bool = True,
) -> tuple[Readings, ReadAhead]:  # fmt: skip
    """Every answer of ``pairs`` read ahead; ``settle``: each batch taken from the worker before
    the end (as when a task completes), not read by the end's thread (the batches not started);
    ``ready``: the worker up before the first answer (else the first are read on the thread)."""
    if process is not None and ready:
        with contextlib.suppress(ReadingProcessError):
            process.wait_until_ready()
    with ThreadPoolExecutor(1) as worker:
        ahead = ReadAhead(worker, "taxpraben", process, batch_size=batch_size)
        for request, prediction in pairs:
            ahead(request, prediction)
        if settle:
            ahead.after_readings(lambda readings: None).result()
        readings = ahead.result()
    if process is not None:
        process.close()
    return readings, ahead


def item_values(item: Sample) -> dict[str, Any]:
    """Everything a sample holds: its fields, and what scoring works with (generation,
    text pairs, labels)."""
    working = ("generation", "pairs", "label_gold", "label_pred")
    return {name: getattr(item, name) for name in [*Sample.model_fields, *working]}


def assert_same_readings(pairs: list[tuple[Request, Prediction]], ours: Readings, theirs: Readings) -> None:
    assert (ours.ahead, ours.taken) == (theirs.ahead, theirs.taken)
    for request, prediction in pairs:
        assert request.spec is not None
        mine, thread = ours.peek(request.spec, request.record, prediction), theirs.peek(request.spec, request.record, prediction)
        assert mine is not None and thread is not None
        assert item_values(mine) == item_values(thread)
        assert any(mine.generation is p for _, p in pairs)  # one of the parent's own predictions, not a copy


def test_answers_read_in_the_worker_process_are_those_read_on_the_scoring_thread(sample: LoadedData) -> None:
    pairs = answers(sample)
    thread, _ = read_all(pairs, None)
    process = ReadingProcess("taxpraben")
    in_process, ahead = read_all(pairs, process)
    assert ahead.fallback is None and process.started
    assert in_process.ahead == len({(r.record.task, r.record.id, p.prediction, p.error) for r, p in pairs}) < len(pairs)
    statuses = {item.status for request, prediction in pairs if request.spec is not None
                for item in [in_process.peek(request.spec, request.record, prediction)] if item is not None}  # fmt: skip
    assert statuses >= {"ok", "error", "format_failure"}
    assert_same_readings(pairs, in_process, thread)
    starting, ahead = read_all(pairs, ReadingProcess("taxpraben"), ready=False)  # the first ones on the thread
    assert ahead.fallback is None
    assert_same_readings(pairs, starting, thread)
    # What scoring then takes: the same item, handed to the run that asks first.
    request, prediction = pairs[3]
    assert request.spec is not None
    taken = in_process.read(request.spec, request.record, 0, prediction)
    assert taken.generation is prediction and in_process.taken == 1


class _NoProcesses:
    """A ProcessPoolExecutor where no process can be started (fork refused)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def submit(self, *args: object, **kwargs: object) -> object:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    def shutdown(self, *args: object, **kwargs: object) -> None:
        pass


def test_a_worker_that_cannot_start_leaves_the_readings_to_the_scoring_thread(
    sample: LoadedData, monkeypatch: pytest.MonkeyPatch
) -> None:
    pairs = answers(sample)
    thread, _ = read_all(pairs, None)
    monkeypatch.setattr(reading_process, "new_pool", _NoProcesses)
    fell_back, ahead = read_all(pairs, ReadingProcess("taxpraben"))
    assert ahead.fallback is not None and "could not start" in ahead.fallback and "Resource temporarily" in ahead.fallback
    assert_same_readings(pairs, fell_back, thread)


_read_here = 0


def dies_at_the_third_answer(spec: TaskSpec, record: Record, prediction: Prediction, profile: str) -> Sample:
    """In the worker: reads two answers, then the process dies (as if killed)."""
    global _read_here
    _read_here += 1
    if _read_here > 2:
        os._exit(3)
    return read_item(spec, record, prediction, profile)


def test_a_worker_that_dies_leaves_the_rest_to_the_scoring_thread_and_nothing_is_lost(sample: LoadedData) -> None:
    pairs = answers(sample)
    thread, _ = read_all(pairs, None)
    died, ahead = read_all(pairs, ReadingProcess("taxpraben", reader=dies_at_the_third_answer), batch_size=2, settle=True)
    assert ahead.fallback is not None and "stopped" in ahead.fallback
    assert_same_readings(pairs, died, thread)  # the first batch from the worker, every other one read here


def slow_reader(spec: TaskSpec, record: Record, prediction: Prediction, profile: str) -> Sample:
    """In the worker: a reading that takes a while (a busy machine)."""
    time.sleep(0.02)
    return read_item(spec, record, prediction, profile)


def test_a_small_run_reads_on_the_scoring_thread_and_starts_no_worker(sample: LoadedData) -> None:
    pairs = answers(sample)[:100]
    thread, _ = read_all(pairs, None)
    process = ReadingProcess("taxpraben", start_after=len(pairs))
    small, ahead = read_all(pairs, process, ready=False)
    assert not process.started and ahead.fallback is None
    assert_same_readings(pairs, small, thread)


def test_the_batches_the_worker_has_not_started_are_read_by_the_end_meanwhile(sample: LoadedData) -> None:
    """When generation ends with the worker behind, its batches not yet started are read in
    this process (its CPU is free again), the last first, while the worker reads the others."""
    pairs = answers(sample)[:120]
    thread, _ = read_all(pairs, None)
    behind, ahead = read_all(pairs, ReadingProcess("taxpraben", reader=slow_reader), batch_size=4)
    assert ahead.fallback is None and 0 < ahead.read_at_the_end <= len(pairs)
    assert_same_readings(pairs, behind, thread)


def test_what_cannot_be_read_back_is_an_error_that_says_so() -> None:
    with pytest.raises(ReadingProcessError, match="cannot be read"):
        items_of(b"not a pickle", [])


def test_the_environment_chooses_where_the_readings_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert alongside.reading_process("taxpraben", {"TAXPRABEN_READINGS": "thread"}) is None
    forced = alongside.reading_process("taxpraben", {"TAXPRABEN_READINGS": "process"})
    assert forced is not None and forced.start_after == 0
    monkeypatch.setattr(alongside, "worker_wanted", lambda: True)  # two CPUs
    for auto in ({}, {"TAXPRABEN_READINGS": "auto"}):
        chosen = alongside.reading_process("taxpraben", auto)
        assert chosen is not None and chosen.start_after == alongside.AUTO_START_AFTER == 256
    monkeypatch.setattr(alongside, "worker_wanted", lambda: False)  # one CPU
    assert alongside.reading_process("taxpraben", {}) is None
    assert isinstance(alongside.reading_process("taxpraben", {"TAXPRABEN_READINGS": "Process"}), ReadingProcess)
    with pytest.raises(ValueError, match=r"\$TAXPRABEN_READINGS is 'gpu': use one of auto, process, thread"):
        alongside.reading_process("taxpraben", {"TAXPRABEN_READINGS": "gpu"})


# ---------------------------------------------------------------------------- whole runs


def run_once(data: Path, out: Path, base_url: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(APP, [
        "run", "--model", "openai:mock-model", "--base-url", base_url, "--data", str(data), "--tasks", TASKS,
        "--runs", "2", "--temperature", "0.5", "--out", str(out), "--no-semantic", "--allow-failures", "--no-cache",
    ], env=env, catch_exceptions=False)  # fmt: skip
    return result.exit_code, result.output


def written(out: Path) -> tuple[str, Any, list[dict[str, Any]]]:
    """samples.jsonl, results.json's task figures, predictions.jsonl without the latencies."""
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    for line in predictions:
        line.pop("latency_s", None)
    return (out / "samples.jsonl").read_text(encoding="utf-8"), results["tasks"], predictions


def test_a_run_reading_in_a_worker_process_writes_what_a_run_reading_on_its_thread_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": quarterly_calc_rows(12), "TaxSCQ": scq_rows(6)})
    started: list[ReadingProcess] = []
    real_start = ReadingProcess.start

    def start(self: ReadingProcess) -> None:
        started.append(self)
        real_start(self)

    monkeypatch.setattr(ReadingProcess, "start", start)
    mock = MockConfig(truncate_rate=0.3)  # answers that depend on the request alone, not on the order
    outs = {}
    for where in ("process", "thread"):
        with MockServerThread(mock) as server:
            code, output = run_once(data, tmp_path / where, server.base_url, {"TAXPRABEN_READINGS": where})
        assert code == 0, output
        assert "read on the scoring thread" not in output
        outs[where] = written(tmp_path / where)
        assert bool(started) == (where == "process")
        started.clear()
    assert outs["process"] == outs["thread"]
    assert {json.loads(line)["status"] for line in outs["process"][0].splitlines()} == {"ok", "format_failure"}


def test_a_run_whose_worker_cannot_start_reads_on_its_thread_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": quarterly_calc_rows(6), "TaxSCQ": scq_rows(3)})
    with MockServerThread(MockConfig()) as server:
        code, output = run_once(data, tmp_path / "thread", server.base_url, {"TAXPRABEN_READINGS": "thread"})
        assert code == 0, output
        monkeypatch.setattr(reading_process, "new_pool", _NoProcesses)
        code, output = run_once(data, tmp_path / "fell", server.base_url, {"TAXPRABEN_READINGS": "process"})
    assert code == 0, output
    assert "The answers were read on the scoring thread (the readings' worker process could not start" in " ".join(output.split())
    assert written(tmp_path / "fell") == written(tmp_path / "thread")


def test_an_unknown_place_for_the_readings_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": quarterly_calc_rows(2), "TaxSCQ": scq_rows(1)})
    with MockServerThread(MockConfig()) as server:
        code, output = run_once(data, tmp_path / "o", server.base_url, {"TAXPRABEN_READINGS": "gpu"})
        assert server.stats.requests == 0
    assert code == 2 and "$TAXPRABEN_READINGS is 'gpu'" in output


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_a_run_killed_outright_leaves_no_reading_worker_behind(tmp_path: Path) -> None:
    """SIGKILL gives the run no chance to stop its worker, which holds both ends of its queue
    (so it never reads an end of file): the worker ends itself once its parent is gone."""
    data = write_data(tmp_path / "data", {"TaxCalc": quarterly_calc_rows(400), "TaxSCQ": scq_rows(10)})
    with MockServerThread(MockConfig(latency=0.05)) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN_SCRIPT, "--model", "openai:mock-model", "--base-url", server.base_url, "--data",
             str(data), "--tasks", TASKS, "--concurrency", "4", "--no-cache", "--no-semantic", "--out", str(tmp_path / "o")],
            env={**os.environ, "TAXPRABEN_READINGS": "process", "NO_COLOR": "1"},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not [c for c in children_of(proc.pid) if b"multiprocessing" in Path(f"/proc/{c}/cmdline").read_bytes()]:
            assert proc.poll() is None and time.monotonic() < deadline, stacks_of(proc)
            time.sleep(0.02)
        children = children_of(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
    left = children
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [c for c in children if Path(f"/proc/{c}").exists() and "Z" not in Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[0]]
    assert left == []
