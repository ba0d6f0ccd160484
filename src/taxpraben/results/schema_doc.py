"""docs/results-schema.md, generated from the models' fields and descriptions
(``python -m taxpraben.results --markdown > docs/results-schema.md``)."""

from __future__ import annotations

import argparse
import sys
import types
import typing
from collections.abc import Iterator
from typing import Any, Literal, Union

from pydantic import BaseModel

import taxpraben.results as r
from taxpraben.results.file_object import SCHEMA_VERSION, FileObject

#: The models documented, in the order of docs/results-schema.md.
DOCUMENTED: tuple[type[FileObject], ...] = (
    r.Results, r.Meta, r.Manifest, r.ManifestVersion, r.ManifestFile, r.ManifestSpec, r.ManifestScorer,
    r.GenerationMeta, r.GenerationStats, r.EndpointFigures, r.ScorerInfo, r.Counts,
    r.ShardInfo, r.MergedFrom, r.ShardRef, r.JudgeMeta, r.TaskResult, r.RunFigures, r.RunCounts, r.FieldFigures,
    r.JudgeTask, r.JudgeAudit, r.Groups, r.Review, r.ReviewDraw, r.ReviewFigure,
    r.Stat, r.OverallStat, r.Sample, r.FieldScore, r.JudgeEdit, r.Prediction,
)

_INTRO = """\
# Output files of `taxpraben run`, `score` and `merge`

<!-- Generated from src/taxpraben/results/; do not edit by hand. Regenerate with:
     python -m taxpraben.results --markdown > docs/results-schema.md -->

Other tools read these files; this page is their contract (the README, "Evaluate a model",
shows how they are made).
Each table below is one JSON object; the models in `src/taxpraben/results/` are the same
description in code, used by the writer, the report and the leaderboard.

- `results.json`: one [`Results`](#results) object, written with `indent=2`.
- `samples.jsonl`: one [`Sample`](#sample) per line, one line per (task, id, run).
- `predictions.jsonl`: one [`Prediction`](#prediction) per line, one per (task, id, run).

Reading rules: `schema_version` is {version}; a reader refuses another version (the layout
or a key's meaning changed). Keys may be added without a new version, so a reader keeps
keys it does not know. "Written" says when the writer writes a key; "always" keys may still
be absent from files of older versions of this code. `Stat` is one figure over the runs;
a figure that could not be computed at all is `null`.

A task of `results.json` and one line of `samples.jsonl`, shortened:

```jsonc
"TaxCalc": {"name_zh": "税额计算", "type": "structured", "bloom": "apply", "n": 12,
            "status": "ok", "reason": null,
            "metrics": {"em": STAT}, "score": STAT, "format_failure_rate": STAT, "error_rate": STAT,
            "per_run": [{"run": 0, "metrics": {"em": 0.75}, "score": 0.75, "format_failure_rate": 0.083,
                         "error_rate": 0.0, "counts": {"ok": 11, "format_failure": 1, "error": 0}}]}
// STAT: {"mean": 0.81, "std": 0.02, "ci95": [0.78, 0.84], "runs": [0.8, ...], "bootstrap_ci95": [0.76, 0.86]}

{"task": "TaxCalc", "id": "3", "run": 0, "status": "ok", "prediction": "...", "gold": "1560.00",
 "extracted": "1560", "scores": {"em": 1.0}, "score": 1.0, "error": null, "query": "..."}
```
"""


def _type_label(annotation: Any) -> str:
    """A short, readable name of a field's type for the docs."""
    if annotation is Any:
        return "any"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[`{annotation.__name__}`](#{annotation.__name__.lower()})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in names:
        return names[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        labels = list(dict.fromkeys(_type_label(a) for a in args))
        if "integer" in labels and "number" in labels:
            labels.remove("integer")
        return " or ".join(labels)
    if origin is Literal:
        return " \\| ".join(f'`"{a}"`' for a in args)
    if origin is list:
        return f"list of {_type_label(args[0])}"
    if origin is dict:
        return f"{{name: {_type_label(args[1])}}}"
    return str(annotation)


def _cell(text: str) -> str:
    """Docstring text as one Markdown table cell (reST ``code`` becomes Markdown `code`)."""
    return " ".join(text.split()).replace("``", "`").replace("|", "\\|")


def _model_section(model: type[FileObject]) -> Iterator[str]:
    model.model_rebuild()  # deferred: its forward references (a model defined below) resolved
    yield f"## {model.__name__}"
    yield ""
    yield _cell(typing.cast(str, model.__doc__))
    yield ""
    yield "| Key | Type | Written | Meaning |"
    yield "|---|---|---|---|"
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        when = str(extra.get("when") or "always")
        shown = extra.get("doc_type", info.annotation)
        yield f"| `{name}` | {_type_label(shown)} | {_cell(when)} | {_cell(info.description or '')} |"
    yield ""


def schema_markdown() -> str:
    """docs/results-schema.md, generated from the models' fields and descriptions."""
    parts = [_INTRO.replace("{version}", str(SCHEMA_VERSION))]
    for model in DOCUMENTED:
        parts.append("\n".join(_model_section(model)))
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m taxpraben.results", description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print docs/results-schema.md")
    args = parser.parse_args(argv)
    if not args.markdown:
        parser.print_help()
        return 2
    sys.stdout.write(schema_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
