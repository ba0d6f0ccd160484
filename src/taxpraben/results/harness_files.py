"""Another harness's outputs of TaxPraBen tasks read back as predictions, so that ``taxpraben
score --predictions`` rescores them with taxpraben's readers (the honest comparison of that
harness's reading with ours, item for item).

- an Inspect AI log (``.eval``, or a ``.json`` log) of the tasks of ``taxpraben/...`` (or of
  any task whose samples carry ``task`` and ``record.id`` metadata, or ids ``TASK/ID``): one
  prediction per sample and epoch (run = epoch - 1), its output's completion; read with
  Inspect's own ``read_eval_log`` (``pip install taxpraben[inspect]``);
- an lm-evaluation-harness samples file (``samples_taxpraben_TASK_DATE.jsonl``, written by
  lm-eval for the tasks of ``taxpraben lm-eval-path`` or by ``taxpraben export --to lm-eval``):
  one prediction per line and repeat (run r = the r-th answer of ``resps``); plain JSON.

Anything else is read as the predictions contract (:mod:`taxpraben.results.predictions`). A
task is named as the file names it (``TaxSCQ``, or ``taxscq`` from a log's or a file's name):
scoring matches names to the registry as it does the contract's.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from taxpraben.results.json_value import JSONValue
from taxpraben.results.predictions import Prediction, PredictionFileError, read_located_predictions

HarnessFile = Literal["inspect", "lm-eval"]
_LM_EVAL_NAME = re.compile(r"^samples_taxpraben_([a-z0-9]+)_")


def harness_file(path: Path) -> HarnessFile | None:
    """Which harness wrote ``path`` (an Inspect log, an lm-eval samples file), or None."""
    if path.suffix == ".eval" and zipfile.is_zipfile(path):
        return "inspect"
    try:
        with open(path, encoding="utf-8-sig") as fh:
            if path.suffix == ".json":
                head = json.load(fh)
                return "inspect" if isinstance(head, dict) and {"eval", "version"} <= head.keys() else None
            first = next((line for line in fh if line.strip()), "")
        obj = json.loads(first) if first else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return "lm-eval" if isinstance(obj, dict) and {"doc_id", "doc", "resps"} <= obj.keys() else None


def located_predictions(path: Path) -> Iterator[tuple[str, Prediction]]:
    """The predictions of ``path``, each with where it was read: a harness's file
    (:func:`harness_file`) as its samples, else the predictions contract's lines."""
    kind = harness_file(path)
    if kind == "inspect":
        yield from _inspect_predictions(path)
    elif kind == "lm-eval":
        yield from _lm_eval_predictions(path)
    else:
        yield from read_located_predictions(path)


def _inspect_predictions(path: Path) -> Iterator[tuple[str, Prediction]]:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        raise PredictionFileError(f"{path}: an Inspect AI log; reading it needs Inspect AI: pip install "
                                  "'taxpraben[inspect]'") from exc  # fmt: skip
    log = read_eval_log(str(path))
    log_task = log.eval.task.rsplit("/", 1)[-1]
    model = log.eval.model
    for sample in log.samples or []:
        where = f"{path}: sample {sample.id} epoch {sample.epoch}"
        meta = sample.metadata or {}
        record = meta.get("record") if isinstance(meta.get("record"), dict) else None
        sample_id = str(sample.id)
        task = str(meta.get("task") or (sample_id.split("/", 1)[0] if "/" in sample_id else log_task))
        record_id = str(record["id"]) if record and "id" in record else sample_id.split("/", 1)[-1]
        output = sample.output.completion if sample.output is not None else ""
        error = sample.error.message if sample.error is not None else None
        yield where, Prediction(task, record_id, sample.epoch - 1, output, model=model, error=error)


def _lm_eval_predictions(path: Path) -> Iterator[tuple[str, Prediction]]:
    named = _LM_EVAL_NAME.match(path.name)
    with open(path, encoding="utf-8-sig") as fh:
        for lineno, text in enumerate(fh, 1):
            if not text.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                line: JSONValue = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PredictionFileError(f"{where}: malformed JSON: {exc.msg}") from exc
            if not isinstance(line, dict) or not isinstance(line.get("doc"), dict):
                raise PredictionFileError(f"{where}: not an lm-eval sample line (no 'doc')")
            doc = line["doc"]
            task = doc.get("task") or (named.group(1) if named else None)
            if task is None or "id" not in doc:
                raise PredictionFileError(f"{where}: not a sample of TaxPraBen's lm-eval tasks (its doc has no "
                                          "'task' and 'id': run the tasks of `taxpraben lm-eval-path`)")  # fmt: skip
            resps = line.get("resps")
            answers = resps[0] if isinstance(resps, list) and resps and isinstance(resps[0], list) else None
            if answers is None:
                raise PredictionFileError(f"{where}: 'resps' is not a list of the request's answers")
            for run, answer in enumerate(answers):
                yield where, Prediction(str(task), str(doc["id"]), run, str(answer))
