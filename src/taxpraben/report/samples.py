"""The sample browser's data: samples.jsonl regrouped by (task, id), trimmed, and embedded safely.

Size matters at full scale (36.5K samples), so the embedded data
- holds each gold once per (task, id), not once per run;
- stores a prediction identical to an earlier run's as a reference to it;
- cuts texts longer than the limits below, recording how much was cut (the page says so and
  points at samples.jsonl for the full text);
- rounds scores to four decimals and uses short keys.

The JSON goes into ``<script type="application/json">`` with ``<``, ``>`` and ``&`` (and the
JavaScript line separators) written as ``\\u003c`` etc., so no data can close the element. Large
data (the full benchmark) is gzip-compressed and base64-encoded inside that element instead.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from markupsafe import Markup

PREDICTION_LIMIT = 2000
GOLD_LIMIT = 2000
EXTRACTED_LIMIT = 600
FIELD_LIMIT = 400
#: JSON larger than this (bytes) is embedded gzip-compressed (about 2-3x smaller for Chinese text).
COMPRESS_ABOVE = 4_000_000
STATUS_CODES = {"ok": "o", "format_failure": "f", "error": "e"}

_SCRIPT_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_SCRIPT_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def script_json(payload: Any) -> Markup:
    """``payload`` as JSON that is safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(_SCRIPT_ESCAPE_RE.sub(lambda m: _SCRIPT_ESCAPES[m.group(0)], text))


def embedded_samples(
    payload: dict[str, Any], *, compress_above: int | None = COMPRESS_ABOVE
) -> Markup:
    """The browser data for the page: plain escaped JSON, or gzip + base64 when it is large.

    Above ``compress_above`` bytes of JSON (None: never) the data travels as
    ``{"gzip_base64": "..."}``; the page inflates it with the browser's DecompressionStream.
    """
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    raw = text.encode("utf-8")
    if compress_above is None or len(raw) <= compress_above:
        return Markup(_SCRIPT_ESCAPE_RE.sub(lambda m: _SCRIPT_ESCAPES[m.group(0)], text))
    packed = base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")
    return script_json({"gzip_base64": packed, "bytes": len(raw)})


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _cut(value: Any, limit: int) -> tuple[str | None, int]:
    """The text of ``value`` cut to ``limit`` characters, and how many were cut."""
    text = _as_text(value)
    if text is None or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    return value


def _natural_key(item_id: str) -> tuple[int, int | str]:
    return (0, int(item_id)) if item_id.isdigit() else (1, item_id)


def _fields(fields: Any) -> list[list[Any]] | None:
    if not isinstance(fields, dict) or not fields:
        return None
    out = []
    for name, value in fields.items():
        value = value if isinstance(value, dict) else {"pred": value}
        pred, _ = _cut(value.get("pred"), FIELD_LIMIT)
        gold, _ = _cut(value.get("gold"), FIELD_LIMIT)
        out.append([str(name), pred, gold, _round(value.get("score")), value.get("status")])
    return out


def browser_payload(samples: Iterable[dict[str, Any]], task_order: Sequence[str]) -> dict[str, Any]:
    """The sample browser's data: one entry per (task, id) with its runs side by side."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in samples:
        grouped.setdefault((str(line.get("task")), str(line.get("id"))), []).append(line)
    tasks = list(task_order) + sorted({task for task, _ in grouped} - set(task_order))
    index = {name: i for i, name in enumerate(tasks)}
    metrics: list[str] = []
    items = []
    cut_texts = 0
    for task, item_id in sorted(grouped, key=lambda k: (index[k[0]], _natural_key(k[1]))):
        lines = sorted(grouped[(task, item_id)], key=lambda x: x.get("run", 0))
        gold, gold_cut = _cut(lines[0].get("gold"), GOLD_LIMIT)
        item: dict[str, Any] = {"t": index[task], "i": item_id, "g": gold}
        if gold_cut:
            item["gc"] = gold_cut
        query = next((x.get("query") for x in lines if x.get("query")), None)
        if query is not None:  # not in schema v1; shown when a scorer provides it
            item["q"], query_cut = _cut(query, GOLD_LIMIT)
            if query_cut:
                item["qc"] = query_cut
        seen: dict[str, int] = {}
        runs = []
        for k, line in enumerate(lines):
            entry: dict[str, Any] = {
                "n": line.get("run", k),
                "st": STATUS_CODES.get(line.get("status"), "o"),
            }
            prediction = _as_text(line.get("prediction"))
            if prediction is not None and prediction in seen:
                entry["p"] = seen[prediction]  # same text as an earlier run: a reference
            elif prediction is not None:
                seen[prediction] = k
                entry["p"], cut = _cut(prediction, PREDICTION_LIMIT)
                if cut:
                    entry["pc"] = cut
                    cut_texts += 1
            extracted, extracted_cut = _cut(line.get("extracted"), EXTRACTED_LIMIT)
            if extracted is not None:
                entry["x"] = extracted
            if extracted_cut:
                entry["xc"] = extracted_cut
            if line.get("score") is not None:
                entry["s"] = _round(line["score"])
            scores = {k2: _round(v) for k2, v in (line.get("scores") or {}).items()}
            if scores:
                entry["sc"] = scores
                metrics.extend(m for m in scores if m not in metrics)
            fields = _fields(line.get("fields"))
            if fields:
                entry["f"] = fields
            if line.get("error"):
                entry["e"] = _cut(line["error"], EXTRACTED_LIMIT)[0]
            runs.append(entry)
        item["r"] = runs
        items.append(item)
    return {
        "tasks": tasks,
        "metrics": metrics,
        "limits": {
            "prediction": PREDICTION_LIMIT,
            "gold": GOLD_LIMIT,
            "extracted": EXTRACTED_LIMIT,
        },
        "cut_predictions": cut_texts,
        "items": items,
    }
