"""The sample browser's data: samples.jsonl's items regrouped by (task, id), trimmed, and embedded safely.

Size matters at full scale (36.5K samples), so the embedded data
- holds each gold once per (task, id), not once per run;
- stores a prediction identical to an earlier run's as a reference to it;
- cuts texts longer than the limits below, recording how much was cut (the page says so and
  points at samples.jsonl for the full text);
- rounds scores to four decimals and uses short keys;
- says why a format failure was not read (``item.failure``) only where there is a reason.

The JSON goes into ``<script type="application/json">`` with ``<``, ``>`` and ``&`` (and the
JavaScript line separators) written as ``\\u003c`` etc., so no data can close the element. Large
data (the full benchmark) is gzip-compressed and base64-encoded inside that element instead.
"""

from __future__ import annotations

import base64
import codecs
import gzip
import json
import pickle
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from typing import IO, TYPE_CHECKING, NamedTuple, TextIO

from markupsafe import Markup

from taxpraben.kinds import semantic_metrics
from taxpraben.results import Sample

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

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


def script_json(payload: JSONValue) -> Markup:
    """``payload`` as JSON that is safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(_SCRIPT_ESCAPE_RE.sub(lambda m: _SCRIPT_ESCAPES[m.group(0)], text))


def embedded_samples(
    payload: JSONObject, *, compress_above: int | None = COMPRESS_ABOVE
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


def _as_text(value: JSONValue) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _cut(value: JSONValue, limit: int) -> tuple[str | None, int]:
    """The text of ``value`` cut to ``limit`` characters, and how many were cut."""
    text = _as_text(value)
    if text is None or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def _round(value: JSONValue) -> JSONValue:
    if isinstance(value, float):
        return round(value, 4)
    return value


def _natural_key(item_id: str) -> tuple[int, int | str]:
    return (0, int(item_id)) if item_id.isdigit() else (1, item_id)


def _fields(fields: JSONValue) -> list[list[JSONValue]] | None:
    if not isinstance(fields, dict) or not fields:
        return None
    out = []
    for name, value in fields.items():
        value = value if isinstance(value, dict) else {"pred": value}
        pred, _ = _cut(value.get("pred"), FIELD_LIMIT)
        gold, _ = _cut(value.get("gold"), FIELD_LIMIT)
        out.append([str(name), pred, gold, _round(value.get("score")), value.get("status")])
    return out


def browser_item(task_index: int, item_id: str, items: Sequence[Sample]) -> tuple[JSONObject, list[str], int]:
    """One (task, id) of the browser with its runs side by side (``items``: its runs);
    also the score names it shows, in order, and how many of its predictions were cut."""
    return browser_entry(task_index, item_id, items)


def _field_spans(row: Sample) -> list[list[int | str]]:
    """The spans a fields task's fields were read from (``fields.NAME.evidence``), in order,
    overlaps dropped, within the shown prediction: ``[start, end, field name]``."""
    spans: list[tuple[int, int, str]] = []
    for name, figures in (row.fields or {}).items():
        span = figures.get("evidence")
        if isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) for v in span):
            start, end = int(span[0]), int(span[1])
            if start < PREDICTION_LIMIT:
                spans.append((start, min(end, PREDICTION_LIMIT), name))
    kept: list[list[int | str]] = []
    for start, end, name in sorted(spans):
        if not kept or start >= int(kept[-1][1]):
            kept.append([start, end, name])
    return kept


def browser_entry(task_index: int, item_id: str, rows: Sequence[Sample]) -> tuple[JSONObject, list[str], int]:
    """:func:`browser_item`: one (task, id) of the browser from its runs' samples."""
    rows = sorted(rows, key=lambda x: x.run)
    gold, gold_cut = _cut(rows[0].gold, GOLD_LIMIT)
    entry_of_item: JSONObject = {"t": task_index, "i": item_id, "g": gold}
    if gold_cut:
        entry_of_item["gc"] = gold_cut
    query = next((x.query for x in rows if x.query), None)
    if query is not None:  # the first run's line carries the prompt
        entry_of_item["q"], query_cut = _cut(query, GOLD_LIMIT)
        if query_cut:
            entry_of_item["qc"] = query_cut
    metrics: list[str] = []
    cut_texts = 0
    seen: dict[str, int] = {}
    # Whether each distinct prediction copies the prompt: runs often give the same text, and
    # the check (parsing.prompt_copy) is most of the work of a generation task's entry.
    copies: dict[str, bool] = {}
    runs = []
    for k, row in enumerate(rows):
        entry: JSONObject = {"n": row.run, "st": STATUS_CODES.get(row.status, "o")}
        if row.shown_failure:
            entry["w"] = _cut(row.shown_failure, EXTRACTED_LIMIT)[0]  # why it was not read
        if row.truncated:
            entry["tr"] = 1  # cut at the token budget
        if row.extracted_by == "judge":
            entry["by"] = "judge"
        if row.read_by is not None:
            entry["rb"] = row.read_by  # the rule (or judge) that read it
            if row.confidence is not None:
                entry["cf"] = row.confidence
        elif row.veto is not None and row.status == "format_failure":
            entry["vt"] = row.veto
        if row.evidence is not None and row.evidence[0] < PREDICTION_LIMIT:
            entry["ev"] = [row.evidence[0], min(row.evidence[1], PREDICTION_LIMIT)]
        field_spans = _field_spans(row)
        if field_spans:
            entry["fe"] = field_spans  # each field's own span (the page marks these, not "ev")
        if row.judge_reply is not None:
            entry["jr"] = _cut(row.judge_reply, EXTRACTED_LIMIT)[0]
        if row.judge_rejected is not None:
            entry["jn"] = _cut(row.judge_rejected, EXTRACTED_LIMIT)[0]
        if row.judge_agrees is not None:
            entry["ja"] = int(row.judge_agrees)
            judged, _ = _cut(row.judge_extracted, EXTRACTED_LIMIT)
            if judged is not None:
                entry["jx"] = judged
        prediction = row.prediction or ""
        if prediction in seen:
            entry["p"] = seen[prediction]  # same text as an earlier run: a reference
        else:
            seen[prediction] = k
            entry["p"], cut = _cut(prediction, PREDICTION_LIMIT)
            if cut:
                entry["pc"] = cut
                cut_texts += 1
        extracted, extracted_cut = _cut(row.extracted, EXTRACTED_LIMIT)
        if extracted is not None:
            entry["x"] = extracted
        if extracted_cut:
            entry["xc"] = extracted_cut
        if row.score is not None:
            entry["s"] = _round(row.score)
        scores = {k2: _round(v) for k2, v in row.scores.items()}
        if scores:
            entry["sc"] = scores
            metrics.extend(m for m in scores if m not in metrics)
        fields = _fields(row.fields)
        if fields:
            entry["f"] = fields
        if row.error:
            entry["e"] = _cut(row.error, EXTRACTED_LIMIT)[0]
        if query and _scored_as_text(row):
            if prediction not in copies:
                copies[prediction] = _copy_of(prediction, query)
            if copies[prediction]:
                entry["cp"] = 1  # scored as text, but no answer: its badge says so, not "ok"
        runs.append(entry)
    entry_of_item["r"] = runs
    return entry_of_item, metrics, cut_texts


def copies_the_prompt(row: Sample, query: str) -> bool:
    """An output scored as text (a generation task: nothing is read from it, so a copy is no
    format failure) that is a copy of the prompt: "ok" would be untrue of it."""
    return _scored_as_text(row) and _copy_of(row.prediction or "", query)


def _scored_as_text(row: Sample) -> bool:
    """Whether ``row`` scored "ok" with nothing read from it (a generation task's output)."""
    return row.status == "ok" and row.extracted is None and row.fields is None and bool((row.prediction or "").strip())


def _copy_of(prediction: str, query: str) -> bool:
    from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, own_answer

    return own_answer(prediction, query).failure == COPY_OF_PROMPT


def _header(tasks: list[str], metrics: list[str], cut_texts: int) -> JSONObject:
    return {
        "tasks": tasks,
        "metrics": metrics,
        "limits": {
            "prediction": PREDICTION_LIMIT,
            "gold": GOLD_LIMIT,
            "extracted": EXTRACTED_LIMIT,
        },
        "cut_predictions": cut_texts,
    }


def _task_list(task_order: Sequence[str], present: Iterable[str]) -> list[str]:
    return list(task_order) + sorted(set(present) - set(task_order))


def browser_payload(samples: Iterable[Sample], task_order: Sequence[str]) -> JSONObject:
    """The sample browser's data: one entry per (task, id) with its runs side by side."""
    grouped: dict[tuple[str, str], list[Sample]] = {}
    for item in samples:
        grouped.setdefault((item.task, item.id), []).append(item)
    tasks = _task_list(task_order, (task for task, _ in grouped))
    index = {name: i for i, name in enumerate(tasks)}
    metrics: list[str] = []
    entries = []
    cut_texts = 0
    for task, item_id in sorted(grouped, key=lambda k: (index[k[0]], _natural_key(k[1]))):
        entry, shown_metrics, cut = browser_item(index[task], item_id, grouped[(task, item_id)])
        metrics.extend(m for m in shown_metrics if m not in metrics)
        cut_texts += cut
        entries.append(entry)
    return {**_header(tasks, metrics, cut_texts), "items": entries}


def score_values(item: Sample, metrics: Sequence[str]) -> Iterator[tuple[str, float]]:
    """The semantic scores ``metrics`` (:func:`taxpraben.kinds.semantic_metrics`: BERTScore,
    BARTScore) of an item that scored ``ok`` (for the histograms)."""
    if item.status != "ok":
        return
    for metric in metrics:
        v = item.scores.get(metric)
        if isinstance(v, (int, float)):
            yield metric, float(v)


class PreparedTask(NamedTuple):
    """One task's part of the browser data, made ahead (:func:`prepare_task`; ``run`` makes
    it on the scoring thread for each task it scores while later tasks generate) and handed
    to :meth:`BrowserData.adopt`: its browser items' JSON, made for position ``index``."""

    task: str
    index: int  # type: ignore[assignment]  # shadows tuple.index(), which nothing calls on it
    items: list[Sample]
    chunks: list[str]
    metrics: list[str]
    cut: int
    scores: dict[tuple[str, str], list[float]]


def _entry_json(entry: JSONObject) -> str:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _task_part(index: int, rows: Iterable[Sample]) -> tuple[list[str], list[str], int]:
    """The browser items of one task (its rows grouped by id, ids in natural order): their
    JSON, the metrics they show (first seen first) and how many predictions were cut."""
    grouped: dict[str, list[Sample]] = {}
    for row in rows:
        grouped.setdefault(row.id, []).append(row)
    chunks: list[str] = []
    metrics: list[str] = []
    cut = 0
    for item_id in sorted(grouped, key=_natural_key):
        entry, shown_metrics, cut_here = browser_entry(index, item_id, grouped[item_id])
        metrics.extend(m for m in shown_metrics if m not in metrics)
        cut += cut_here
        chunks.append(_entry_json(entry))
    return chunks, metrics, cut


def _encoded(chunks: Iterable[str]) -> Iterator[bytes]:
    return (text.encode("utf-8") for text in chunks)


def _at_position(chunk: bytes, index: int) -> bytes:
    """A browser item's JSON (:func:`_entry_json`, UTF-8) moved to task position ``index``:
    its first key is the task's position ``"t"``, an integer, so the item is ``{"t":N,`` and
    then the same bytes wherever its task stands."""
    return b'{"t":%d,' % index + chunk[chunk.index(b",") + 1 :]


def prepare_task(task: str, index: int, items: list[Sample]) -> PreparedTask:
    """``task``'s part of the browser data, its items (finished, in scoring's order) at
    position ``index`` of the browser's tasks."""
    semantic = semantic_metrics()
    scores: dict[tuple[str, str], list[float]] = {}
    for item in items:
        for metric, value in score_values(item, semantic):
            scores.setdefault((task, metric), []).append(value)
    chunks, metrics, cut = _task_part(index, items)
    return PreparedTask(task, index, items, chunks, metrics, cut, scores)


class BrowserData:
    """The sample browser's data built in one pass over the samples, one task at a time.

    The whole benchmark has 36.5K samples; holding them (or the browser's JSON for them) in
    memory at once would make the report the peak of a run. So the items are first sorted
    into one temporary file per task (each sample pickled:
    they are this process's own), then each task is read back, grouped by id and written as
    browser items into one more temporary file. :meth:`json_chunks` then yields exactly the
    bytes of ``json.dumps(browser_payload(...))`` (compact), and the histograms' values are
    gathered on the way (``scores``). Built from an iterable at once, or item by item
    (:meth:`add`, then :meth:`finish`) as a scoring run finishes its items, or task by task
    (:meth:`add_task`): a scoring run that hands over each task's items once all are
    finished has them made into browser items at once, as JSON in a temporary file, so that
    no sample is written out and read back.
    """

    def __init__(self, samples: Iterable[Sample] = (), task_order: Sequence[str] | None = None) -> None:
        """The data of ``samples`` in ``task_order`` (tasks not in it follow, sorted); without
        ``task_order``, items are then :meth:`add`-ed one by one until :meth:`finish`."""
        self.n_samples = 0
        #: (task, metric) -> the values of the histograms (plots.score_histograms).
        self.scores: dict[tuple[str, str], list[float]] = {}
        self.tasks: list[str] = []
        self.metrics: list[str] = []
        self.cut_predictions = 0
        self.items_bytes = 0
        self.finished = False
        self._spilled: dict[str, IO[bytes]] = {}
        self._adopted: dict[str, PreparedTask] = {}
        #: Per task added whole (:meth:`add_task`): its items' JSON made for position 0, one
        #: a line, the metrics they show and how many predictions were cut.
        self._made: dict[str, tuple[IO[bytes], list[str], int]] = {}
        self._spills = ExitStack()
        self._semantic = semantic_metrics()  # once, not per line
        self._items: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        try:
            for item in samples:
                self.add(item)
            if task_order is not None:
                self.finish(task_order)
        except BaseException:
            self.close()
            raise

    def add(self, item: Sample) -> None:
        """One more item (any task, any order; a scoring run hands them over as it finishes
        them, so that its report does not read samples.jsonl back)."""
        if self.finished:
            raise RuntimeError("the browser data is finished: no item can be added")
        task = item.task
        if task in self._adopted or task in self._made:
            raise ValueError(f"the browser data has {task} made already: its items cannot be added")
        fh = self._spilled.get(task)
        if fh is None:
            fh = self._spilled[task] = self._spills.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (the ExitStack closes it)
        pickle.dump(item, fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.n_samples += 1
        for metric, value in score_values(item, self._semantic):
            self.scores.setdefault((task, metric), []).append(value)

    def add_task(self, task: str, items: Sequence[Sample]) -> None:
        """Every item of ``task`` at once (finished, in scoring's order): its browser items are
        made now and kept as JSON until :meth:`finish` puts them in place; the items are not
        kept. ValueError when items of ``task`` were given before."""
        if self.finished:
            raise RuntimeError("the browser data is finished: no task can be added")
        if task in self._spilled or task in self._adopted or task in self._made:
            raise ValueError(f"the browser data already has items of {task}")
        for item in items:
            for metric, value in score_values(item, self._semantic):
                self.scores.setdefault((task, metric), []).append(value)
        chunks, metrics, cut = _task_part(0, items)  # made for position 0, moved in finish()
        fh = self._spills.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (the ExitStack closes it)
        for text in chunks:
            fh.write(text.encode("utf-8") + b"\n")  # JSON text holds no raw line break
        self._made[task] = (fh, metrics, cut)
        self.n_samples += len(items)

    def adopt(self, part: PreparedTask) -> None:
        """A task's part made ahead (:func:`prepare_task`), in place of adding its items."""
        if self.finished:
            raise RuntimeError("the browser data is finished: no task can be adopted")
        if part.task in self._spilled or part.task in self._adopted or part.task in self._made:
            raise ValueError(f"the browser data already has items of {part.task}")
        self._adopted[part.task] = part
        self.n_samples += len(part.items)

    def finish(self, task_order: Sequence[str]) -> None:
        """Group what was added by task (``task_order`` first) and id into the browser's items."""
        if self.finished:
            raise RuntimeError("the browser data is already finished")
        self.finished = True
        with self._spills:
            self.tasks = _task_list(task_order, [*self._spilled, *self._adopted, *self._made])
            for index, task in enumerate(self.tasks):
                if task in self._adopted:
                    part = self._adopted[task]
                    if part.index != index:  # made for another position: made again
                        part = prepare_task(task, index, part.items)
                    self._write_part(_encoded(part.chunks), part.metrics, part.cut)
                elif task in self._made:
                    fh, metrics, cut = self._made[task]
                    fh.seek(0)
                    self._write_part((_at_position(line[:-1], index) for line in fh), metrics, cut)
                elif task in self._spilled:
                    chunks, metrics, cut = _task_part(index, self._read_back(self._spilled[task]))
                    self._write_part(_encoded(chunks), metrics, cut)
        if self._adopted:  # the histograms' values in task order, as adding them all gives
            added, self.scores = self.scores, {}
            for task in self.tasks:
                made = self._adopted.get(task)
                self.scores.update(made.scores if made is not None else
                                   {key: values for key, values in added.items() if key[0] == task})  # fmt: skip
        self._spilled = {}
        self._adopted = {}
        self._made = {}

    @staticmethod
    def _read_back(spilled: IO[bytes]) -> Iterator[Sample]:
        spilled.seek(0)
        while True:
            try:
                yield pickle.load(spilled)
            except EOFError:
                return

    def _write_part(self, chunks: Iterable[bytes], metrics: list[str], cut: int) -> None:
        self.metrics.extend(m for m in metrics if m not in self.metrics)
        self.cut_predictions += cut
        for item in chunks:
            chunk = (b"," if self.items_bytes else b"") + item
            self._items.write(chunk)
            self.items_bytes += len(chunk)

    def _head(self) -> bytes:
        header = json.dumps(
            _header(self.tasks, self.metrics, self.cut_predictions),
            ensure_ascii=False, separators=(",", ":"), allow_nan=False,
        )  # fmt: skip
        return header[:-1].encode("utf-8") + b',"items":['

    @property
    def size(self) -> int:
        """Bytes of the whole JSON."""
        return len(self._head()) + self.items_bytes + len(b"]}")

    def json_chunks(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """The JSON of the browser data (UTF-8), in pieces."""
        if not self.finished:
            raise RuntimeError("the browser data is not finished (BrowserData.finish)")
        yield self._head()
        self._items.seek(0)
        while chunk := self._items.read(chunk_size):
            yield chunk
        yield b"]}"

    def close(self) -> None:
        self._spills.close()
        self._items.close()

    def __enter__(self) -> BrowserData:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_embedded(out: TextIO, data: BrowserData, *, compress_above: int | None = COMPRESS_ABOVE) -> None:
    """:func:`embedded_samples` of ``data``, streamed into ``out`` (the same text)."""
    if compress_above is None or data.size <= compress_above:
        decoder = codecs.getincrementaldecoder("utf-8")()
        for chunk in data.json_chunks():
            text = decoder.decode(chunk)
            out.write(_SCRIPT_ESCAPE_RE.sub(lambda m: _SCRIPT_ESCAPES[m.group(0)], text))
        out.write(decoder.decode(b"", final=True))
        return
    # gzip.compress(raw, 6, mtime=0) is zlib with wbits=31; the same stream, fed in pieces.
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    out.write('{"gzip_base64":"')
    carry = b""
    for chunk in data.json_chunks():
        carry += packer.compress(chunk)
        whole = len(carry) - len(carry) % 3  # base64 of whole 3-byte groups only
        out.write(base64.b64encode(carry[:whole]).decode("ascii"))
        carry = carry[whole:]
    out.write(base64.b64encode(carry + packer.flush()).decode("ascii"))
    out.write(f'","bytes":{data.size}}}')
