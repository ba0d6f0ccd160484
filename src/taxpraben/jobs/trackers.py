"""Experiment trackers (``--log wandb``, ``--log mlflow``): a finished job, logged.

Once ``run``, ``score`` or ``merge`` has written results.json and the reports (and before
its ``--fail-under`` gates apply, so that a failing gate is logged too), each tracker that
``--log`` names receives:

- the configuration as parameters: ``command``, every option of the job by its name (the
  keys of config.yaml: ``model``, ``runs``, ``temperature``, ...; paths absolute, endpoints
  without secrets) and results.json's ``meta.manifest`` under ``manifest.`` (MLflow: flattened
  to dotted keys; W&B: the nested mapping as ``config``);
- every figure as a metric, in the results' 0-1 scale (a figure that was not computed,
  None, is left out rather than logged as 0). A figure's name is a path (``/``), and what is
  said of it (its spread, its interval) a suffix after a dot: ``overall`` and
  ``overall.ci95_low``, not ``overall/ci95_low``, since MLflow's file store keeps each metric
  as a file of that path and a name cannot be both a file and a directory:

  - ``task/<Task>/score``: the task score (mean over runs), with ``.std``, ``.ci95_low``,
    ``.ci95_high``, ``.bootstrap_ci95_low``, ``.bootstrap_ci95_high``;
  - ``task/<Task>/<metric>`` and ``task/<Task>/<metric>.std``: each metric's mean and std
    (``acc``, ``f1``, ``macro_f1``, ``em``, ``bertscore``, ...);
  - ``task/<Task>/format_failure_rate``, ``task/<Task>/error_rate``: the answers that could
    not be read, the generations that failed; ``task/<Task>/n`` (items),
    ``task/<Task>/truncated`` (answers cut at the token budget);
  - ``type/<type>``, ``bloom/<level>``: the groups, with ``.std``, ``.ci95_low``, ``.ci95_high``;
  - ``overall``: the Overall Average, with ``.std``, ``.ci95_low``, ``.ci95_high``,
    ``.bootstrap_ci95_low``, ``.bootstrap_ci95_high``;
  - ``ledger/<key>``: every count of results.json's ``ledger`` (``ledger/truncated``,
    ``ledger/answers``, ``ledger/generated/prompt_tokens``, ``ledger/finish_reasons/length``, ...);

- the report files as artefacts: results.json, summary.csv, report.md, report.html and
  config.yaml (those the job wrote); W&B also gets summary.csv as a ``wandb.Table``
  (``summary_table``).

Neither library's own telemetry is sent: before its import taxpraben sets, when unset,
``MLFLOW_DISABLE_TELEMETRY=true`` (MLflow's usage events and the configuration it fetches
at import; ``mlflow.telemetry.utils``) and ``WANDB_ERROR_REPORTING=false`` (W&B's error
reports from its service process) (:data:`TELEMETRY_OFF`). A value the user set is kept.

Each library is imported only when ``--log`` names it, and checked at the start of the job
(:func:`require_trackers`), before any generation is paid for: a missing one ends the job
with exit 2 and the line to install it. A tracker that fails while logging (the network, a
quota) prints a warning and the job goes on: the results are on disk.

The payload (:func:`tracked_params`, :func:`tracked_metrics`, :func:`flat_params`) is pure;
the two trackers are the only code here that talks to a library.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import json
import math
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from taxpraben.config import CONFIG_FILE, effective_values
from taxpraben.jobs.common import JobError, say, warn
from taxpraben.options import TrackerOptions

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from rich.console import Console

    from taxpraben.results.json_value import JSONObject, JSONValue

#: An item of a list cut into batches (:func:`_chunks`).
T = TypeVar("T")

#: The files logged as artefacts, those of them the job wrote (samples.jsonl is left out:
#: it can be large, and results.json holds every figure).
ARTIFACTS = ("results.json", "summary.csv", "report.md", "report.html", CONFIG_FILE)

#: tracker -> (module to import, the extra that installs it).
LIBRARIES = {"mlflow": ("mlflow", "mlflow"), "wandb": ("wandb", "wandb")}

#: tracker -> the environment that turns its library's own telemetry off (read by the library
#: at import: MLflow starts its telemetry client in ``mlflow/__init__``; W&B passes it to
#: its service process).
TELEMETRY_OFF = {"mlflow": {"MLFLOW_DISABLE_TELEMETRY": "true"}, "wandb": {"WANDB_ERROR_REPORTING": "false"}}


def telemetry_off(tracker: str) -> dict[str, str]:
    """Set ``tracker``'s :data:`TELEMETRY_OFF` variables that are unset (a value the user
    gave is kept); the ones set."""
    added = {name: value for name, value in TELEMETRY_OFF[tracker].items() if name not in os.environ}
    os.environ.update(added)
    return added


class Tracker(Protocol):
    """One experiment tracker's run: parameters, metrics and files, then the end."""

    def log_params(self, params: Mapping[str, JSONValue]) -> None: ...

    def log_metrics(self, metrics: Mapping[str, float]) -> None: ...

    def log_artifact(self, path: Path) -> None: ...

    def finish(self, failed: bool = False) -> None: ...


# ---------------------------------------------------------------------------- the payload


def tracked_params(command: str, groups: Iterable[DataclassInstance], manifest: Mapping[str, JSONValue] | None,
                   out_dir: Path) -> JSONObject:  # fmt: skip
    """The configuration of a job as a nested mapping: the command, every option by its name
    (as config.yaml writes it: ``out`` the directory written, ``log_uri`` without secrets) and
    the manifest under ``manifest``."""
    from taxpraben.models.base import redact_url

    params: JSONObject = {"command": command}
    for group in groups:
        params.update(effective_values(group))
    if "out" in params:
        params["out"] = os.path.abspath(out_dir)
    if params.get("log_uri"):
        params["log_uri"] = redact_url(params["log_uri"])
    params["manifest"] = dict(manifest or {})
    return params


def flat_params(params: Mapping[str, JSONValue], prefix: str = "") -> JSONObject:
    """``{"manifest": {"python": "3.11"}}`` -> ``{"manifest.python": "3.11"}``: nested mappings
    as dotted keys; lists and other leaves as they are."""
    flat: JSONObject = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flat_params(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _number(value: JSONValue) -> float | None:
    """A finite number as a float; None for None, booleans, text, NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _put(out: dict[str, float], name: str, value: JSONValue) -> None:
    number = _number(value)
    if number is not None:
        out[name] = number


def _figure(out: dict[str, float], name: str, figure: JSONValue, parts: Sequence[str]) -> None:
    """A figure of results.json (mean, std, ci95, bootstrap_ci95) as ``name`` (the mean) and
    ``name.std``, ``name.ci95_low`` ... for each of ``parts``; a bare number as ``name``."""
    if not isinstance(figure, Mapping):
        _put(out, name, figure)
        return
    _put(out, name, figure.get("mean"))
    for part in parts:
        value = figure.get(part)
        if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
            _put(out, f"{name}.{part}_low", value[0])
            _put(out, f"{name}.{part}_high", value[1])
        else:
            _put(out, f"{name}.{part}", value)


def _counts(out: dict[str, float], prefix: str, ledger: JSONValue) -> None:
    """Every number of a ledger mapping, by its path (``ledger/generated/prompt_tokens``)."""
    if isinstance(ledger, Mapping):
        for key, value in ledger.items():
            _counts(out, f"{prefix}/{key}", value)
    else:
        _put(out, prefix, ledger)


_SCORE_PARTS = ("std", "ci95", "bootstrap_ci95")


def tracked_metrics(results: Mapping[str, JSONValue]) -> dict[str, float]:
    """Every figure of results.json (its object) by the names of the module's scheme, in the
    results' 0-1 scale; figures that are None (not computed) are left out."""
    out: dict[str, float] = {}
    for task, entry in (results.get("tasks") or {}).items():
        base = f"task/{task}"
        _figure(out, f"{base}/score", entry.get("score"), _SCORE_PARTS)
        for metric, figure in (entry.get("metrics") or {}).items():
            _figure(out, f"{base}/{metric}", figure, ("std",))
        _figure(out, f"{base}/format_failure_rate", entry.get("format_failure_rate"), ())
        _figure(out, f"{base}/error_rate", entry.get("error_rate"), ())
        _put(out, f"{base}/n", entry.get("n"))
        _put(out, f"{base}/truncated", (entry.get("ledger") or {}).get("truncated"))
    groups = results.get("groups") or {}
    for kind in ("type", "bloom"):
        for name, figure in (groups.get(kind) or {}).items():
            _figure(out, f"{kind}/{name}", figure, ("std", "ci95"))
    _figure(out, "overall", results.get("overall"), _SCORE_PARTS)
    _counts(out, "ledger", results.get("ledger") or {})
    return out


def artifact_paths(out_dir: Path) -> list[Path]:
    """The report files of :data:`ARTIFACTS` that ``out_dir`` holds, in that order."""
    return [out_dir / name for name in ARTIFACTS if (out_dir / name).is_file()]


# ---------------------------------------------------------------------------- MLflow

#: MLflow's metric (and parameter) names: alphanumerics, ``_ - . / :`` and spaces.
_MLFLOW_NAME = re.compile(r"[^A-Za-z0-9_\-./: ]")


def mlflow_name(name: str) -> str:
    """``name`` with every character MLflow refuses in a metric or parameter name as ``_``."""
    return _MLFLOW_NAME.sub("_", name)


def mlflow_value(value: JSONValue, limit: int) -> str:
    """A parameter's value as MLflow stores it (text; lists as JSON), cut to ``limit``
    characters, MLflow's limit on a parameter's value: a longer one is refused by the
    store (the manifest's prompt template can be longer), so it is truncated, marked."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def mlflow_uri(given: str | None) -> str:
    """``--log-uri``, else ``$MLFLOW_TRACKING_URI``, else the file store ``./mlruns``."""
    uri = given or os.environ.get("MLFLOW_TRACKING_URI") or Path("mlruns").resolve().as_uri()
    if re.match(r"^(file:|[^:]*$)", uri) or re.match(r"^[A-Za-z]:[\\/]", uri):
        # MLflow 3 refuses its file store unless asked for it (it prefers a database, which
        # mlflow-skinny cannot open): a file store is what the user named, or the default.
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    else:
        # MLflow's own HTTP retries take ~4 minutes to give up on a server that is down (measured:
        # 248 s); the results are on disk by then, so fail fast unless the user asked otherwise.
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
    return uri


def _chunks(items: list[T], size: int) -> Iterable[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class MLflowTracker:
    """A run of the MLflow experiment ``project`` (created when missing), named ``name``,
    through ``MlflowClient`` (no process-wide active run)."""

    def __init__(self, project: str, name: str, uri: str | None = None) -> None:
        from mlflow.tracking import MlflowClient

        self.uri = mlflow_uri(uri)
        self.client = MlflowClient(tracking_uri=self.uri)
        experiment = self.client.get_experiment_by_name(project)
        experiment_id = experiment.experiment_id if experiment is not None else self.client.create_experiment(project)
        self.run_id: str = self.client.create_run(experiment_id, run_name=name).info.run_id

    def log_params(self, params: Mapping[str, JSONValue]) -> None:
        from mlflow.entities import Param
        from mlflow.utils import validation

        limit = getattr(validation, "MAX_PARAM_VAL_LENGTH", 500)  # 500 before MLflow 2.3, 6000 since
        batch = getattr(validation, "MAX_PARAMS_TAGS_PER_BATCH", 100)
        entries = [Param(mlflow_name(k), mlflow_value(v, limit)) for k, v in flat_params(params).items()]
        for chunk in _chunks(entries, batch):
            self.client.log_batch(self.run_id, params=chunk)

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        from mlflow.entities import Metric
        from mlflow.utils import validation

        batch = getattr(validation, "MAX_METRICS_PER_BATCH", 1000)
        stamp = int(time.time() * 1000)  # the logging's own timestamp, not the job's timing
        entries = [Metric(mlflow_name(k), v, stamp, 0) for k, v in metrics.items()]
        for chunk in _chunks(entries, batch):
            self.client.log_batch(self.run_id, metrics=chunk)

    def log_artifact(self, path: Path) -> None:
        self.client.log_artifact(self.run_id, str(path))

    def finish(self, failed: bool = False) -> None:
        self.client.set_terminated(self.run_id, "FAILED" if failed else "FINISHED")


# ---------------------------------------------------------------------------- W&B

_ARTIFACT_NAME = re.compile(r"[^A-Za-z0-9_\-.]")


def csv_table(path: Path) -> tuple[list[str], list[list[float | str | None]]]:
    """summary.csv as (columns, rows): numbers as floats, empty cells as None."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        return [], []

    def cell(text: str) -> float | str | None:
        if text == "":
            return None
        try:
            return float(text)
        except ValueError:
            return text

    return rows[0], [[cell(text) for text in row] for row in rows[1:]]


class WandbTracker:
    """A W&B run of ``project`` named ``name``, its files under ``OUT/wandb`` (``WANDB_MODE``
    as the user sets it: ``offline`` logs without a network, for ``wandb sync`` later)."""

    def __init__(self, project: str, name: str, out_dir: Path, config: Mapping[str, JSONValue]) -> None:
        import wandb

        self.wandb = wandb
        self.name = name
        self.run = wandb.init(project=project, name=name, dir=str(out_dir), config=dict(config),
                              settings=wandb.Settings(console="off"))  # fmt: skip
        self.files: list[Path] = []

    def log_params(self, params: Mapping[str, JSONValue]) -> None:
        """The configuration is given to ``wandb.init``; later parameters are added to it."""
        self.run.config.update(dict(params), allow_val_change=True)

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        self.run.log(dict(metrics))
        self.run.summary.update(dict(metrics))

    def log_artifact(self, path: Path) -> None:
        """Kept for the run's one artefact (logged at :meth:`finish`); summary.csv is also
        logged as a table."""
        self.files.append(path)
        if path.name == "summary.csv":
            columns, rows = csv_table(path)
            if columns:
                table = self.wandb.Table(columns=[*columns], data=rows, allow_mixed_types=True)
                self.run.log({"summary_table": table})

    def finish(self, failed: bool = False) -> None:
        try:
            if self.files and not failed:
                name = _ARTIFACT_NAME.sub("-", f"{self.name}-reports")
                artifact = self.wandb.Artifact(name, type="evaluation")
                for path in self.files:
                    artifact.add_file(str(path))
                self.run.log_artifact(artifact)
        finally:
            self.run.finish(exit_code=1 if failed else 0)


# ---------------------------------------------------------------------------- the jobs' side


def install_hint(tracker: str) -> str:
    """The one line that says how to install ``tracker``'s library."""
    module, extra = LIBRARIES[tracker]
    return f"--log {tracker} needs the {module} package: pip install 'taxpraben[{extra}]'"


def require_trackers(options: TrackerOptions, *, scoring: bool = True) -> list[str]:
    """At the start of a job, before anything is sent: the trackers ``--log`` names, each
    library imported; JobError (exit 2) with the install line for a missing one, and for
    ``--log`` on a job that scores nothing (``run --no-score``)."""
    names = options.trackers
    if names and not scoring:
        raise JobError("--log logs the scores: it cannot be used with --no-score (log the merge instead)", code=2)
    for name in names:
        telemetry_off(name)  # before the import, which starts MLflow's telemetry
        try:
            importlib.import_module(LIBRARIES[name][0])
        except ImportError as exc:
            raise JobError(install_hint(name), code=2) from exc
    return names


def open_tracker(name: str, options: TrackerOptions, out_dir: Path, params: Mapping[str, JSONValue]) -> Tracker:
    """The tracker ``name``'s run for the job written into ``out_dir`` (named after it)."""
    run_name = Path(os.path.abspath(out_dir)).name
    telemetry_off(name)
    if name == "mlflow":
        return MLflowTracker(options.log_project, run_name, options.log_uri)
    return WandbTracker(options.log_project, run_name, out_dir, params)


def publish(tracker: Tracker, params: Mapping[str, JSONValue], metrics: Mapping[str, float], files: Sequence[Path]) -> None:
    """Everything a job logs, to one tracker, which it then finishes (as failed when logging
    failed part-way, so that no run is left 'running')."""
    try:
        tracker.log_params(params)
        tracker.log_metrics(metrics)
        for path in files:
            tracker.log_artifact(path)
    except BaseException:
        with contextlib.suppress(Exception):  # the first failure is the one to report
            tracker.finish(failed=True)
        raise
    tracker.finish()


def log_to_trackers(options: TrackerOptions, command: str, groups: Iterable[DataclassInstance], out_dir: Path,
                    results: Mapping[str, JSONValue], console: Console) -> None:  # fmt: skip
    """Log a finished job (results.json's object ``results``, written into ``out_dir``) to
    every tracker ``--log`` names; one that fails prints a warning and the job goes on."""
    names = options.trackers
    if not names:
        return
    params = tracked_params(command, groups, (results.get("meta") or {}).get("manifest"), out_dir)
    metrics = tracked_metrics(results)
    files = artifact_paths(out_dir)
    for name in names:
        try:
            publish(open_tracker(name, options, out_dir, params), params, metrics, files)
        except Exception as exc:  # the network, a quota, a refused value: the results are on disk
            detail = " ".join(str(exc).split()) or type(exc).__name__
            warn(console, f"--log {name}: the run could not be logged ({type(exc).__name__}: {detail[:300]}); "
                          f"the results are in {out_dir}.")  # fmt: skip
            continue
        say(console, f"Logged to {name}: {len(metrics)} metrics, {len(files)} files.")
