"""The predictions contract (README, "Evaluate a model"; docs/results-schema.md): one JSON
object per (task, id, run).

The line itself is the :class:`taxpraben.results.Prediction` model; this module reads and
writes files of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from taxpraben.atomic import write_lines_atomically
from taxpraben.results import Prediction

__all__ = ["Prediction", "PredictionFileError", "prediction_from_json", "read_predictions", "write_predictions"]


class PredictionFileError(ValueError):
    """A predictions file that breaks the contract; the message names the file and line."""


def prediction_from_json(obj: Any, where: str) -> Prediction:
    """Build a Prediction from a decoded JSON object; ``where`` is "file:line" for errors.

    Beyond the model's own checks: ``run`` defaults to 0, a missing or null ``prediction``
    is accepted (as "") only beside an ``error``, and a non-string prediction (a JSON
    answer given as an object) is kept as its JSON text.
    """
    if not isinstance(obj, dict):
        raise PredictionFileError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("task", "id"):
        if key not in obj:
            raise PredictionFileError(f"{where}: field {key!r} is missing")
    run = obj.get("run", 0)
    if isinstance(run, bool) or not isinstance(run, int) or run < 0:
        raise PredictionFileError(f"{where}: field 'run' must be a non-negative integer, got {run!r}")
    pred = obj.get("prediction")
    if pred is None:
        pred = ""
        if not obj.get("error"):
            raise PredictionFileError(f"{where}: field 'prediction' is missing (and no 'error' given)")
    if not isinstance(pred, str):
        pred = json.dumps(pred, ensure_ascii=False)
    fields = {**obj, "task": str(obj["task"]), "id": str(obj["id"]), "run": run, "prediction": pred}
    try:
        return Prediction.model_validate(fields)
    except ValidationError as exc:
        # One message per field: a union type (latency_s: int or float) fails once per member.
        by_field = {str(e["loc"][0]) if e["loc"] else "line": e["msg"] for e in exc.errors()}
        problems = "; ".join(f"field {name!r}: {msg}" for name, msg in by_field.items())
        raise PredictionFileError(f"{where}: {problems}") from exc


def read_predictions(path: Path) -> Iterator[Prediction]:
    """Stream predictions from a JSON Lines file, failing on the first malformed line."""
    with open(path, encoding="utf-8-sig") as fh:
        lineno = 0
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise PredictionFileError(f"{where}: malformed JSON: {exc.msg}") from exc
                yield prediction_from_json(obj, where)
        except UnicodeDecodeError as exc:  # text is decoded in chunks: the line is approximate
            raise PredictionFileError(
                f"{path}: not UTF-8 after line {lineno} (byte 0x{exc.object[exc.start]:02x}); "
                "save the file as UTF-8"
            ) from exc


def write_predictions(path: Path, predictions: Iterable[Prediction]) -> int:
    """Write predictions as JSON Lines, atomically (see taxpraben.atomic)."""
    return write_lines_atomically(
        path, (json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in predictions)
    )
