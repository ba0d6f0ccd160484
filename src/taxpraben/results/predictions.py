"""The predictions contract (README, "Evaluate a model"; docs/results-schema.md): one JSON
object per (task, id, run).

The line is the :class:`Prediction` model; the functions below read and write files of them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from pydantic import ValidationError

from taxpraben.atomic import write_lines_atomically
from taxpraben.results.file_object import FileObject, Number, described, required
from taxpraben.results.json_value import JSONObject, JSONValue


class Prediction(FileObject):
    """One line of ``predictions.jsonl``, imported (``score``, ``replay:``) and exported (``run``).

    ``{"task": "TaxCalc", "id": "17", "run": 0, "prediction": "..."}``, optional ``model``,
    ``usage`` (``prompt_tokens``, ``completion_tokens``), ``latency_s``, ``error``,
    ``reasoning``; any other key is kept and written back. Null optional keys are not
    written. May be built positionally: ``Prediction(task, id, run, prediction)``.
    """

    task: str = required("The dataset.")
    id: str = required("The record's id (numbers are read as text).")
    run: int = required("The run index, from 0.")
    prediction: str = required("The model's answer; empty when the generation failed.")
    model: str | None = described("The model spec that answered.", when="not null")
    usage: JSONObject | None = described("Token counts: prompt_tokens, completion_tokens.", when="not null")
    latency_s: Number | None = described("Seconds the answer took.", when="not null")
    finish_reason: str | None = described(
        "Why generation stopped, as the backend said: stop, length (cut at --max-tokens), ...", when="not null"
    )
    error: str | None = described("Why the generation failed.", when="not null")
    cached: bool | None = described(
        "True: the answer came from the completion cache (nothing was paid for it in this run).", when="true"
    )
    reasoning: str | None = described(
        "Reasoning returned apart from the answer (reasoning_content); never scored.", when="not null"
    )

    def __init__(self, task: str | None = None, id: str | None = None, run: int | None = None,
                 prediction: str | None = None, /, **data: JSONValue) -> None:
        positional = {"task": task, "id": id, "run": run, "prediction": prediction}
        super().__init__(**{k: v for k, v in positional.items() if v is not None}, **data)

    # Validation (model_validate, a file's lines) takes the keys by name: flagged as pydantic's
    # own __init__ (as its RootModel does), this one is not called by it, so a line is no
    # longer validated twice (once around this call, once inside it).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]  # pydantic's marker on a function

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.id, self.run)

    @property
    def extra(self) -> JSONObject:
        """The keys the contract does not name, as given."""
        return dict(self.model_extra or {})

    def to_json(self) -> JSONObject:
        """The predictions.jsonl object: declared keys in contract order (null ones left out,
        ``prediction`` always written), then the extra keys as given."""
        declared = {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name == "prediction" or getattr(self, name) is not None
        }
        return {**declared, **self.extra}


__all__ = [
    "Prediction",
    "PredictionFileError",
    "expected_runs",
    "prediction_from_json",
    "read_located_predictions",
    "read_predictions",
    "write_predictions",
]


class PredictionFileError(ValueError):
    """A predictions file that breaks the contract; the message names the file and line."""


def prediction_from_json(obj: JSONValue, where: str) -> Prediction:
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
    # The task and id are interned: a file repeats each many times (every line of a task,
    # every run of an id), and a full benchmark's 36.5K predictions are held while scored.
    fields = {**obj, "task": sys.intern(str(obj["task"])), "id": sys.intern(str(obj["id"])), "run": run,
              "prediction": pred}
    try:
        return Prediction.model_validate(fields)
    except ValidationError as exc:
        # One message per field: a union type (latency_s: int or float) fails once per member.
        by_field = {str(e["loc"][0]) if e["loc"] else "line": e["msg"] for e in exc.errors()}
        problems = "; ".join(f"field {name!r}: {msg}" for name, msg in by_field.items())
        raise PredictionFileError(f"{where}: {problems}") from exc


def read_predictions(path: Path) -> Iterator[Prediction]:
    """Stream predictions from a JSON Lines file, failing on the first malformed line."""
    for _, prediction in read_located_predictions(path):
        yield prediction


def read_located_predictions(path: Path) -> Iterator[tuple[str, Prediction]]:
    """:func:`read_predictions`, each with where it was read ("file:line")."""
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
                yield where, prediction_from_json(obj, where)
        except UnicodeDecodeError as exc:  # text is decoded in chunks: the line is approximate
            raise PredictionFileError(
                f"{path}: not UTF-8 after line {lineno} (byte 0x{exc.object[exc.start]:02x}); "
                "save the file as UTF-8"
            ) from exc


def expected_runs(located: Sequence[tuple[str, Prediction]], runs: int | None) -> int:
    """The number of runs the predictions are scored over.

    ``runs`` given (``--runs``): every prediction's run must be in 0..runs-1; one beyond is a
    PredictionFileError naming where it was read and the runs expected (it would otherwise
    be no run at all, or a run of its own). ``runs`` absent: the highest run + 1, provided
    every run below it holds some prediction; a run beyond runs that hold none (a ``run: 99``
    among runs 0..4) is a PredictionFileError naming its first line, since it would turn
    the runs between into runs of errors.
    """
    if runs is not None:
        for where, p in located:
            if p.run >= runs:
                raise PredictionFileError(f"{where}: run {p.run} is not one of the runs expected, 0..{runs - 1} "
                                          f"(--runs {runs})")  # fmt: skip
        return runs
    first_line: dict[int, str] = {}
    for where, p in located:
        first_line.setdefault(p.run, where)
    if not first_line:
        return 1
    present = sorted(first_line)
    for index, run in enumerate(present):
        if run != index:  # runs index..run-1 hold no prediction
            gap = f"run {index} holds" if run == index + 1 else f"runs {index}..{run - 1} hold"
            raise PredictionFileError(
                f"{first_line[run]}: run {run}, but {gap} no prediction at all: the runs of a file are "
                f"0..N-1. Fix the run number, or give --runs N to say how many runs there are (a run without "
                "predictions then scores 0 as errors)"
            )
    return present[-1] + 1


def write_predictions(path: Path, predictions: Iterable[Prediction]) -> int:
    """Write predictions as JSON Lines, atomically (see taxpraben.atomic)."""
    return write_lines_atomically(
        path, (json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in predictions)
    )
