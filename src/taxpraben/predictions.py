"""The predictions contract (README, "Evaluate a model"; docs/results-schema.md): one JSON
object per (task, id, run)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from taxpraben.atomic import write_lines_atomically


class PredictionFileError(ValueError):
    """A predictions file that breaks the contract; the message names the file and line."""


@dataclass(slots=True)
class Prediction:
    task: str
    id: str
    run: int
    prediction: str
    model: str | None = None
    usage: dict[str, int] | None = None
    latency_s: float | None = None
    error: str | None = None
    #: Reasoning text returned apart from the answer (``reasoning_content``); never scored.
    reasoning: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.id, self.run)

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "extra" and v is not None}
        out["prediction"] = self.prediction  # always present, even when empty
        out.update(self.extra)
        return out


_KNOWN = {"task", "id", "run", "prediction", "model", "usage", "latency_s", "error", "reasoning"}


def prediction_from_json(obj: Any, where: str) -> Prediction:
    """Build a Prediction from a decoded JSON object; ``where`` is "file:line" for errors."""
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
    return Prediction(
        task=str(obj["task"]),
        id=str(obj["id"]),
        run=run,
        prediction=pred,
        model=obj.get("model"),
        usage=obj.get("usage"),
        latency_s=obj.get("latency_s"),
        error=obj.get("error"),
        reasoning=obj.get("reasoning"),
        extra={k: v for k, v in obj.items() if k not in _KNOWN},
    )


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
