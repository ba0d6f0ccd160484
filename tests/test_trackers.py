"""Experiment trackers (--log mlflow, --log wandb): a finished run, logged and read back.

The end-to-end tests log for real, without a network: MLflow into a file store read back
through MLflow's own client, W&B in offline mode read back from the run's transaction log
(wandb >= 0.19 writes no ``files/wandb-summary.json`` offline: the summary and the config
live only in ``run-ID.wandb``, a LevelDB-style log of protobuf records, read here with
wandb's own ``Record`` message).
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.mock_openai_server import MockServerThread
from taxpraben.cli import build_app
from taxpraben.jobs.trackers import (
    csv_table,
    flat_params,
    install_hint,
    mlflow_name,
    mlflow_value,
    tracked_metrics,
)
from taxpraben.options import TrackerOptions, parse_trackers

#: A tiny run: two records of four tasks, two runs, no scorer models.
SMALL = ["--data", "sample", "--no-semantic", "--no-cache", "--limit", "2", "--runs", "2",
         "--tasks", "TaxCalc,TaxSCQ,TaxTopic,TaxMCQ"]  # fmt: skip


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``taxpraben ARGS`` in a process of its own (the trackers' global state stays there)."""
    return subprocess.run([sys.executable, "-m", "taxpraben", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, timeout=240)  # fmt: skip


def invoke(*args: str) -> tuple[int, str]:
    # Wide, so that messages are not wrapped across the error box's lines (whatever COLUMNS is)
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.output


def results_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- the payload


def test_tracker_names_repeat_or_comma_separate_and_unknown_ones_are_refused() -> None:
    assert parse_trackers(["mlflow,wandb", "MLflow", " wandb "]) == ["mlflow", "wandb"]
    assert TrackerOptions(log=["wandb"]).trackers == ["wandb"] and TrackerOptions().trackers == []
    with pytest.raises(ValueError, match="unknown tracker 'tensorboard'; choose one of wandb, mlflow"):
        parse_trackers(["mlflow,tensorboard"])
    code, output = invoke("run", "--model", "baseline:oracle", *SMALL, "--log", "neptune")
    assert code == 2 and "unknown tracker 'neptune'" in output


def test_metrics_follow_the_scheme_and_skip_what_was_not_computed() -> None:
    figure = {"mean": 0.5, "std": 0.1, "ci95": [0.3, 0.7], "runs": [0.4, 0.6], "bootstrap_ci95": [0.35, 0.65]}
    results = {
        "tasks": {
            "TaxSCQ": {"n": 3, "metrics": {"acc": {"mean": 0.75, "std": 0.25}, "macro_f1": {"mean": None}},
                       "score": figure, "format_failure_rate": {"mean": 0.2}, "error_rate": {"mean": 0.0},
                       "ledger": {"truncated": 1}},
            "TaxSum": {"n": 2, "metrics": {}, "score": None, "format_failure_rate": {"mean": 0.0}},
        },
        "groups": {"type": {"classification": {"mean": 0.5, "std": None, "ci95": None}}, "bloom": {}},
        "overall": {"mean": 0.5, "std": 0.1, "ci95": [0.3, 0.7], "bootstrap_ci95": None, "partial": True},
        "ledger": {"answers": 10, "truncated": 1, "generated": {"prompt_tokens": 120, "cost": None},
                   "finish_reasons": {"length": 1}},
    }  # fmt: skip
    assert tracked_metrics(results) == {
        "task/TaxSCQ/score": 0.5, "task/TaxSCQ/score.std": 0.1, "task/TaxSCQ/score.ci95_low": 0.3,
        "task/TaxSCQ/score.ci95_high": 0.7, "task/TaxSCQ/score.bootstrap_ci95_low": 0.35,
        "task/TaxSCQ/score.bootstrap_ci95_high": 0.65, "task/TaxSCQ/acc": 0.75, "task/TaxSCQ/acc.std": 0.25,
        "task/TaxSCQ/format_failure_rate": 0.2, "task/TaxSCQ/error_rate": 0.0, "task/TaxSCQ/n": 3.0,
        "task/TaxSCQ/truncated": 1.0, "task/TaxSum/format_failure_rate": 0.0, "task/TaxSum/n": 2.0,
        "type/classification": 0.5, "overall": 0.5, "overall.std": 0.1, "overall.ci95_low": 0.3,
        "overall.ci95_high": 0.7, "ledger/answers": 10.0, "ledger/truncated": 1.0,
        "ledger/generated/prompt_tokens": 120.0, "ledger/finish_reasons/length": 1.0,
    }  # fmt: skip


def test_params_flatten_and_mlflow_names_and_values_fit_its_limits() -> None:
    nested = {"model": "m", "tasks": ["A", "B"], "manifest": {"packages": {"torch": "2.13"}, "devices": []}}
    assert flat_params(nested) == {"model": "m", "tasks": ["A", "B"], "manifest.packages.torch": "2.13",
                                   "manifest.devices": []}  # fmt: skip
    assert mlflow_name("task/税务/score (raw)!") == "task/__/score _raw__"
    assert mlflow_value(["A", "B"], 100) == '["A", "B"]'
    cut = mlflow_value("x" * 20, 10)
    assert cut == "xxxxxxx..." and len(cut) == 10


def test_summary_csv_becomes_typed_rows(tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    path.write_text("row_kind,name,score_mean,n\ntask,TaxCalc,0.5,2\ntask,TaxSum,,2\n", encoding="utf-8")
    assert csv_table(path) == (["row_kind", "name", "score_mean", "n"],
                               [["task", "TaxCalc", 0.5, 2.0], ["task", "TaxSum", None, 2.0]])  # fmt: skip


# ---------------------------------------------------------------------------- MLflow


def mlflow_client(uri: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 asks for it to read a file store
    return MlflowClient(tracking_uri=uri)


def only_run(client: Any, project: str = "taxpraben") -> Any:
    experiment = client.get_experiment_by_name(project)
    assert experiment is not None, f"no MLflow experiment {project!r}"
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 1
    return runs[0]


def test_run_logs_params_metrics_and_files_to_mlflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uri, out = f"file:{tmp_path / 'mlruns'}", tmp_path / "random-run"
    done = cli("run", "--model", "baseline:random", *SMALL, "--out", str(out), "--log", "mlflow", "--log-uri", uri)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Logged to mlflow" in done.stdout
    results, client = results_of(out), mlflow_client(uri, monkeypatch)
    run = only_run(client)
    assert run.info.run_name == "random-run" and run.info.status == "FINISHED"
    params, metrics = run.data.params, run.data.metrics
    assert (params["model"], params["runs"], params["command"]) == ("baseline:random", "2", "run")
    assert params["tasks"] == "TaxCalc,TaxSCQ,TaxTopic,TaxMCQ" and params["out"] == str(out)
    assert params["manifest.data_files.TaxCalc.sha256"] == results["meta"]["manifest"]["data_files"]["TaxCalc"]["sha256"]
    overall = results["overall"]
    assert metrics["overall"] == overall["mean"] and metrics["overall.std"] == overall["std"]
    assert (metrics["overall.ci95_low"], metrics["overall.ci95_high"]) == tuple(overall["ci95"])
    for task, entry in results["tasks"].items():
        assert metrics[f"task/{task}/score"] == entry["score"]["mean"]
        for name, figure in entry["metrics"].items():
            assert metrics[f"task/{task}/{name}"] == figure["mean"]
    assert metrics["task/TaxSCQ/acc.std"] == results["tasks"]["TaxSCQ"]["metrics"]["acc"]["std"]
    # The Overall Average is the unweighted mean of the task scores: recomputed from what was logged.
    task_scores = [metrics[f"task/{task}/score"] for task in results["tasks"]]
    assert math.isclose(metrics["overall"], sum(task_scores) / len(task_scores), abs_tol=1e-12)
    assert metrics["type/classification"] == results["groups"]["type"]["classification"]["mean"]
    assert metrics["bloom/apply"] == results["groups"]["bloom"]["apply"]["mean"]
    assert metrics["ledger/answers"] == results["ledger"]["answers"] == 4 * 2 * 2
    assert metrics["ledger/truncated"] == 0
    files = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert files == {"results.json", "summary.csv", "report.md", "report.html", "config.yaml"}
    logged = Path(client.download_artifacts(run.info.run_id, "results.json", str(tmp_path / "dl")))
    assert json.loads(logged.read_text(encoding="utf-8")) == results


def test_a_failing_gate_is_still_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = mlflow_client(f"file:{tmp_path / 'mlruns'}", monkeypatch)
    out = tmp_path / "gated"
    code, output = invoke("run", "--model", "baseline:first-choice", *SMALL, "--out", str(out),
                          "--log", "mlflow", "--log-uri", f"file:{tmp_path / 'mlruns'}", "--fail-under", "0.99")  # fmt: skip
    assert code == 4 and "Gate failed" in output
    run = only_run(client)
    assert run.data.metrics["overall"] == results_of(out)["overall"]["mean"] < 0.99
    assert run.data.params["fail_under"] == '["0.99"]'


def test_a_tracker_failing_while_logging_warns_and_the_run_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = mlflow_client(f"file:{tmp_path / 'mlruns'}", monkeypatch)
    from mlflow.tracking import MlflowClient

    def refused(*_args: object, **_kwargs: object) -> None:
        raise ConnectionError("quota exceeded for this workspace")

    monkeypatch.setattr(MlflowClient, "log_batch", refused)
    out = tmp_path / "out"
    code, output = invoke("run", "--model", "baseline:oracle", *SMALL, "--out", str(out),
                          "--log", "mlflow", "--log-uri", f"file:{tmp_path / 'mlruns'}")  # fmt: skip
    assert code == 0, output
    assert "--log mlflow: the run could not be logged (ConnectionError: quota exceeded" in output
    assert f"the results are in {out}" in output
    assert (out / "results.json").is_file() and (out / "report.html").is_file()
    assert only_run(client).info.status == "FAILED"  # ended, not left running


# ---------------------------------------------------------------------------- W&B


def wandb_records(path: Path) -> Iterator[Any]:
    """The protobuf records of a W&B transaction log (``run-ID.wandb``): a 7-byte header
    (``:W&B``, an identifier, a version), then LevelDB log blocks of 32 KiB whose chunks
    (crc32, length, type: 1 full, 2 first, 3 middle, 4 last) carry one record each."""
    from wandb.proto import wandb_internal_pb2

    data, block = path.read_bytes(), 32768
    assert data[:4] == b":W&B", f"{path} is not a W&B transaction log"
    position, pending = 7, b""
    while position + 7 <= len(data):
        left = block - position % block
        if left < 7:  # a block's tail too short for a chunk header is padding
            position += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[position : position + 7])
        payload = data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending + payload)
            pending = b""
            yield record
        elif kind in (2, 3):
            pending += payload


def wandb_offline_run(out: Path) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(summary, config, artefact files) of the one offline run under ``out/wandb``."""
    logs = sorted((out / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(logs) == 1, logs
    summary: dict[str, Any] = {}
    config: dict[str, Any] = {}
    files: list[str] = []
    for record in wandb_records(logs[0]):
        kind = record.WhichOneof("record_type")
        if kind == "summary":
            for item in record.summary.update:
                key = item.key or "/".join(item.nested_key)
                summary[key] = json.loads(item.value_json)
        elif kind in ("run", "config"):
            updates = record.run.config.update if kind == "run" else record.config.update
            config.update({item.key: json.loads(item.value_json) for item in updates})
        elif kind == "artifact" and record.artifact.type == "evaluation":
            files += [entry.path for entry in record.artifact.manifest.contents]
    return summary, config, files


def test_run_logs_to_wandb_offline(tmp_path: Path) -> None:
    pytest.importorskip("wandb")
    homes = {name: str(tmp_path / name.lower()) for name in ("WANDB_DIR", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR",
                                                              "WANDB_DATA_DIR")}  # fmt: skip
    env = {"WANDB_MODE": "offline", "WANDB_SILENT": "true", **homes}
    out = tmp_path / "oracle-run"
    done = cli("run", "--model", "baseline:oracle", *SMALL, "--out", str(out), "--log", "wandb",
               "--log-project", "tax-tests", env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Logged to wandb" in done.stdout, done.stdout + done.stderr
    results = results_of(out)
    summary, config, files = wandb_offline_run(out)
    assert summary["overall"] == results["overall"]["mean"]
    for task, entry in results["tasks"].items():
        assert summary[f"task/{task}/score"] == entry["score"]["mean"]
    assert summary["task/TaxCalc/em"] == results["tasks"]["TaxCalc"]["metrics"]["em"]["mean"]
    assert summary["ledger/answers"] == results["ledger"]["answers"]
    rows = len((out / "summary.csv").read_text(encoding="utf-8").splitlines()) - 1
    assert (summary["summary_table/_type"], summary["summary_table/nrows"]) == ("table-file", rows)
    assert (config["model"], config["runs"], config["log_project"]) == ("baseline:oracle", 2, "tax-tests")
    assert config["manifest"]["data_files"]["TaxCalc"]["sha256"] == \
        results["meta"]["manifest"]["data_files"]["TaxCalc"]["sha256"]  # fmt: skip
    assert sorted(files) == ["config.yaml", "report.html", "report.md", "results.json", "summary.csv"]


# ---------------------------------------------------------------------------- a missing library


@pytest.mark.parametrize("tracker", ["mlflow", "wandb"])
def test_a_missing_library_stops_the_job_before_anything_is_sent(
    tracker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, tracker, None)  # `import mlflow` now raises ImportError
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "out"
    with MockServerThread() as server:
        code, output = invoke("run", "--model", "openai:mock-model", "--base-url", server.base_url, *SMALL,
                              "--out", str(out), "--log", tracker)  # fmt: skip
        sent = server.stats.requests + server.stats.model_listings
    assert code == 2
    assert install_hint(tracker) == f"--log {tracker} needs the {tracker} package: pip install 'taxpraben[{tracker}]'"
    assert install_hint(tracker) in output
    assert sent == 0 and not out.exists()


@pytest.mark.parametrize("command", ["score", "merge"])
def test_score_and_merge_check_the_library_first(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    given = tmp_path / "never-read.jsonl"  # checked before any file is read
    args = ["--predictions", str(given)] if command == "score" else [str(given)]
    code, output = invoke(command, "--data", "sample", *args, "--out", str(tmp_path / "o"), "--log", "mlflow")
    assert code == 2 and install_hint("mlflow") in output and not (tmp_path / "o").exists()


def test_log_with_no_score_is_refused() -> None:
    code, output = invoke("run", "--model", "baseline:oracle", *SMALL, "--no-score", "--log", "mlflow")
    assert code == 2 and "--log logs the scores: it cannot be used with --no-score" in output
