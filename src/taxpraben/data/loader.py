"""Finding, streaming and checking dataset files (the contract: README, "Data format").

Layouts: ``DIR/NAME.jsonl``, ``DIR/NAME.json`` (an array of objects), ``DIR/NAME.parquet``,
or the same under ``DIR/NAME/test.*``. ``NAME`` matches a task of the registry
(case-insensitively). Records are streamed: JSON Lines line by line, JSON arrays through
ijson's incremental parser, parquet batch by batch, so a large file is never held in memory
as a whole.

Every problem is collected with its file, line (1-based for JSON Lines; the 0-based record
index for arrays and parquet) and field; :func:`load_data` refuses to continue when there is
any, so a bad record is never skipped silently. ``taxpraben validate`` prints them all.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from taxpraben.data.records import ID_FIELDS, KNOWN_FIELDS, Record

# Validation accepts a numeric gold exactly when scoring can read it: one definition.
from taxpraben.kinds import FieldMode, kind_of
from taxpraben.parsing.fields import gold_fields, record_fields
from taxpraben.tasks import Registry, TaskSpec, closest_task_name

DATA_SUFFIXES = (".jsonl", ".json", ".parquet")
SAMPLE_NAME = "sample"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a data file. ``line`` is None for file-level problems."""

    path: str
    message: str
    line: int | None = None
    field: str | None = None
    severity: Literal["error", "warning"] = "error"
    #: "line" for JSON Lines (1-based), "record" for arrays and parquet (0-based index).
    unit: Literal["line", "record"] = "line"

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}" if self.unit == "line" else f" record {self.line}"
        fld = f" field '{self.field}'" if self.field else ""
        return f"{self.severity}: {where}{fld}: {self.message}"


class DataError(ValueError):
    """Data that cannot be used; carries every problem found."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        errors = [p for p in self.problems if p.severity == "error"]
        head = f"{len(errors)} problem(s) in the data:"
        shown = "\n".join(f"  {p}" for p in errors[:50])
        more = f"\n  ... and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"{head}\n{shown}{more}\nRun `taxpraben validate --data DIR` for the full list.")


@dataclass
class DatasetFile:
    task: str
    path: Path


@dataclass
class LoadedData:
    """The records of each task, in file order, plus where they came from."""

    data_dir: Path
    records: dict[str, list[Record]]
    files: dict[str, Path]
    data_hash: str
    warnings: list[Problem] = field(default_factory=list)
    limit: int | None = None

    @property
    def n_records(self) -> int:
        return sum(len(v) for v in self.records.values())


# ---------------------------------------------------------------------------- discovery


def sample_data_dir() -> Path:
    """The bundled sample (package data)."""
    return Path(str(resources.files("taxpraben.data") / "sample"))


def resolve_data_dir(data: str | Path) -> Path:
    """``sample`` means the bundled sample; anything else is a directory path."""
    if str(data) == SAMPLE_NAME and not Path(SAMPLE_NAME).exists():
        return sample_data_dir()
    return Path(data).expanduser()


def _file_in_task_dir(directory: Path) -> Path | None:
    for suffix in DATA_SUFFIXES:
        candidate = directory / f"test{suffix}"
        if candidate.is_file():
            return candidate
    return None


def discover_files(data_dir: Path, registry: Registry) -> tuple[list[DatasetFile], list[Problem]]:
    """Map the files of ``data_dir`` to tasks; unmatched files become warnings naming the closest task."""
    problems: list[Problem] = []
    if not data_dir.is_dir():
        raise DataError([Problem(str(data_dir), "data directory does not exist or is not a directory")])
    found: dict[str, DatasetFile] = {}
    for entry in sorted(data_dir.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            path = _file_in_task_dir(entry)
            if path is None:
                continue
            name = entry.name
        elif entry.suffix.lower() in DATA_SUFFIXES:
            path, name = entry, entry.stem
        else:
            continue
        spec = registry.lookup(name)
        if spec is None:
            hint = closest_task_name(name, registry)
            extra = f"; did you mean {hint!r}?" if hint else ""
            problems.append(
                Problem(str(path), f"file matches no task{extra} (ignored)", severity="warning")
            )
            continue
        if spec.name in found:
            problems.append(
                Problem(
                    str(path),
                    f"a second file for task {spec.name} (first: {found[spec.name].path}); "
                    "keep one",
                )
            )
            continue
        found[spec.name] = DatasetFile(spec.name, path)
    order = list(registry)
    files = sorted(found.values(), key=lambda f: order.index(f.task))
    return files, problems


# ---------------------------------------------------------------------------- raw streaming


@dataclass
class RawItem:
    """One decoded object (or the problem that stopped it) with its position."""

    position: int
    obj: Any = None
    problem: Problem | None = None
    #: 0-based index among the file's records (the id of a record that has none).
    index: int = 0


def _utf8_problem(path: Path) -> Problem | None:
    """Check that the file is UTF-8 (a BOM is fine) without reading it into memory."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    line = 1
    offset = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                bad = offset + exc.start
                fh.seek(0)
                line = fh.read(bad).count(b"\n") + 1
                return Problem(
                    str(path),
                    f"not UTF-8 (byte 0x{chunk[exc.start]:02x} at offset {bad}); "
                    "save the file as UTF-8",
                    line=line,
                )
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return Problem(str(path), "not UTF-8 (truncated multi-byte character at end of file)")
    return None


def _iter_jsonl(path: Path) -> Iterator[RawItem]:
    index = 0
    with open(path, encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield RawItem(lineno, json.loads(line), index=index)
            except json.JSONDecodeError as exc:
                yield RawItem(
                    lineno,
                    problem=Problem(str(path), f"malformed JSON: {exc.msg} (column {exc.colno})", lineno),
                    index=index,
                )
            except RecursionError:
                yield RawItem(lineno, problem=Problem(str(path), _TOO_DEEP, lineno), index=index)
            index += 1


#: Deeper nesting than this is no benchmark record (and would exhaust the recursion limit).
_MAX_NESTING = 512
_TOO_DEEP = f"JSON nested more than {_MAX_NESTING} levels deep; not a benchmark record"


class _NestedTooDeep(Exception):
    pass


def _array_items(fh: Any) -> Iterator[Any]:
    """The elements of a top-level JSON array, built one at a time from ijson's events.

    Not ``ijson.items``: it builds a path prefix for every event, quadratic in the nesting
    depth (2 MB nested a million levels deep took more than 20 GB).
    """
    import ijson
    from ijson.common import ObjectBuilder

    events = ijson.basic_parse(fh, use_float=True)
    if next(events, (None, None))[0] != "start_array":
        raise ijson.JSONError("not a JSON array")
    depth, builder = 0, ObjectBuilder()
    for event, value in events:
        if depth == 0 and event == "end_array":
            for _ in events:  # let the parser reject anything after the array
                pass
            return
        if event in ("start_map", "start_array"):
            depth += 1
            if depth > _MAX_NESTING:
                raise _NestedTooDeep
        elif event in ("end_map", "end_array"):
            depth -= 1
        builder.event(event, value)
        if depth == 0:
            yield builder.value
            builder = ObjectBuilder()


def _iter_json_array(path: Path) -> Iterator[RawItem]:
    import ijson  # incremental parser: a JSON array is never materialised whole

    with open(path, "rb") as fh:
        head = fh.read(3)
        if head != codecs.BOM_UTF8:
            fh.seek(0)
        first = fh.read(_CHUNK).lstrip()
        fh.seek(0 if head != codecs.BOM_UTF8 else 3)
        if not first.startswith(b"["):
            yield RawItem(0, problem=Problem(str(path), "a .json data file must hold a JSON array of records"))
            return
        index = -1
        try:
            for index, obj in enumerate(_array_items(fh)):
                yield RawItem(index, obj, index=index)
        except _NestedTooDeep:
            yield RawItem(index + 1, problem=Problem(str(path), _TOO_DEEP, index + 1, unit="record"))
        except ijson.JSONError as exc:
            yield RawItem(
                index + 1,
                problem=Problem(str(path), f"malformed JSON after record {index}: {exc}", index + 1, unit="record"),
            )


def _iter_parquet(path: Path) -> Iterator[RawItem]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a bad file
        yield RawItem(0, problem=Problem(str(path), f"cannot read parquet: {exc}"))
        return
    index = 0
    for batch in pf.iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            yield RawItem(index, row, index=index)
            index += 1


def iter_raw(path: Path) -> Iterator[RawItem]:
    """Decoded objects of a data file, streamed; file-level problems come as items too."""
    suffix = path.suffix.lower()
    if path.stat().st_size == 0:
        yield RawItem(0, problem=Problem(str(path), "file is empty"))
        return
    if suffix != ".parquet":
        bad = _utf8_problem(path)
        if bad is not None:
            yield RawItem(bad.line or 0, problem=bad)
            return
    if suffix == ".jsonl":
        yield from _iter_jsonl(path)
    elif suffix == ".json":
        yield from _iter_json_array(path)
    else:
        yield from _iter_parquet(path)


# ---------------------------------------------------------------------------- record checks


def _record_id(obj: dict[str, Any], position: int) -> str:
    for key in ID_FIELDS:
        value = obj.get(key)
        if value is not None and value != "":
            return str(value)
    return str(position)


def _check_choices(obj: dict[str, Any], bad: Any, warn: Any) -> tuple[str, ...] | None:
    """The record's choices, if it has any, reporting what is wrong with them."""
    choices: tuple[str, ...] | None = None
    raw_choices = obj.get("choices")
    if raw_choices is not None:
        if not isinstance(raw_choices, list) or not raw_choices:
            bad("must be a non-empty list of strings", "choices")
        elif not all(isinstance(c, str) and c.strip() for c in raw_choices):
            bad("every choice must be a non-empty string", "choices")
        else:
            choices = tuple(raw_choices)
            repeated = sorted({c for c in choices if choices.count(c) > 1}, key=choices.index)
            if repeated:
                # Real exams repeat option texts ("以上都不对"); an answer is read by its
                # position or letter, so the record is kept as it is.
                warn(f"repeated option text(s) {repeated}: kept as given; answers are "
                     "scored by position/letter", "choices")
    return choices


def check_record(
    obj: Any, spec: TaskSpec, path: Path, position: int, unit: str, index: int | None = None
) -> tuple[Record | None, list[Problem]]:
    """Turn one decoded object into a Record, or say precisely what is wrong with it.

    ``position`` locates it for messages; ``index`` (0-based, default ``position``) is the
    id of a record that has no id field. Warnings (repeated option texts) come with a
    Record; any error comes with None.
    """
    problems: list[Problem] = []

    def bad(message: str, fld: str | None = None) -> None:
        problems.append(Problem(str(path), message, position, fld, unit=unit))  # type: ignore[arg-type]

    def warn(message: str, fld: str | None = None) -> None:
        problems.append(Problem(str(path), message, position, fld, "warning", unit))  # type: ignore[arg-type]

    if not isinstance(obj, dict):
        bad(f"a record must be a JSON object, got {type(obj).__name__}")
        return None, problems
    query = obj.get("query")
    if "query" not in obj:
        bad("required field is missing", "query")
    elif not isinstance(query, str) or not query.strip():
        bad("must be a non-empty string (the full prompt)", "query")
    answer = obj.get("answer")
    if "answer" not in obj or answer is None:
        bad("required field is missing", "answer")
    elif isinstance(answer, str) and not answer.strip():
        bad("is empty", "answer")
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        bad(f"must be a string, got {type(text).__name__}", "text")

    choices = _check_choices(obj, bad, warn)
    # The kind reads the gold as scoring will (a choice index, a number, fields).
    answer, gold = kind_of(spec).check_gold(spec, obj, answer, choices, bad)

    if any(p.severity == "error" for p in problems):
        return None, problems
    record = Record(
        task=spec.name,
        id=_record_id(obj, position if index is None else index),
        query=query,  # type: ignore[arg-type]
        answer=answer,
        text=text,
        choices=choices,
        gold=gold,
        extra={k: v for k, v in obj.items() if k not in KNOWN_FIELDS},
        source=str(path),
        line=position,
    )
    return record, problems


@dataclass
class _FieldNotes:
    """What a file's field golds leave to inference, summed up as one warning per key."""

    path: Path
    spec: TaskSpec
    unit: str
    mode: FieldMode
    #: gold key -> kind -> count; and the first record (position, id) using the key
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    first: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: "EM only" / "BERTScore only" -> count and first record
    lopsided: dict[str, int] = field(default_factory=dict)
    lopsided_first: dict[str, tuple[int, str]] = field(default_factory=dict)

    def add(self, record: Record) -> Problem | None:
        """Note one record; a record with no readable field is reported at once."""
        gold = gold_fields(record.answer)
        assert self.spec.fields is not None
        if gold is None:
            return Problem(
                str(self.path),
                "no field could be read from the gold (not an object, nor 字段：值 lines, "
                "headings or a table); the record is scored as one rationale",
                record.line, "answer", "warning", self.unit,  # type: ignore[arg-type]
            )
        fields = record_fields(gold, self.spec.field_rules, aspects=self.mode == "aspects")
        for f in fields:
            if f.inferred:
                counts = self.kinds.setdefault(f.gold_key, {})
                counts[f.rule.kind] = counts.get(f.rule.kind, 0) + 1
                self.first.setdefault(f.gold_key, (record.line, record.id))
        if self.mode == "fields":  # exact fields and a rationale are expected together
            kinds = {f.rule.kind for f in fields}
            side = None if "text" in kinds and kinds - {"text"} else ("BERTScore only" if "text" in kinds else "EM only")
            if side is not None:
                self.lopsided[side] = self.lopsided.get(side, 0) + 1
                self.lopsided_first.setdefault(side, (record.line, record.id))
        return None

    def summary(self) -> list[Problem]:
        """One warning per inferred key (kinds, count, an example) and per lopsided kind."""
        # The location is the first record concerned; the message counts all of them.
        out = []
        for key, counts in self.kinds.items():
            line, rid = self.first[key]
            kinds = ", ".join(f"{_KIND_WORDS[k]} in {n}" for k, n in counts.items())
            out.append(Problem(
                str(self.path),
                f"gold key {key!r} is not in the {self.spec.name} spec; kind inferred from its "
                f"value: {kinds} record(s) (first: id {rid!r})",
                line, "answer", "warning", self.unit,  # type: ignore[arg-type]
            ))
        for side, n in self.lopsided.items():
            line, rid = self.lopsided_first[side]
            lacks = "no text (rationale)" if side == "EM only" else "no exact"
            out.append(Problem(
                str(self.path),
                f"{n} {self.spec.name} record(s) have {lacks} field, so their item score is "
                f"{side} instead of (EM + BERTScore) / 2 (first: id {rid!r})",
                line, "answer", "warning", self.unit,  # type: ignore[arg-type]
            ))
        return out


_KIND_WORDS = {"number": "number (EM)", "category": "category (EM)", "text": "text (BERTScore)"}


def iter_checked(path: Path, spec: TaskSpec) -> Iterator[Record | Problem]:
    """Stream a dataset file as Records, with a Problem in place of anything that is wrong."""
    unit = "line" if path.suffix.lower() == ".jsonl" else "record"
    seen: dict[str, int] = {}
    mode = kind_of(spec).field_mode(spec)
    notes = _FieldNotes(path, spec, unit, mode) if mode is not None and spec.fields is not None else None
    n_items = 0
    file_problem = False
    for item in iter_raw(path):
        if item.problem is not None:
            file_problem = True
            yield item.problem
            continue
        n_items += 1
        record, problems = check_record(item.obj, spec, path, item.position, unit, item.index)
        yield from problems
        if record is None:
            continue
        if notes is not None:
            unreadable = notes.add(record)
            if unreadable is not None:
                yield unreadable
        if record.id in seen:
            yield Problem(
                str(path),
                f"duplicate id {record.id!r} (first at {unit} {seen[record.id]})",
                item.position,
                "id",
                unit=unit,  # type: ignore[arg-type]
            )
            continue
        seen[record.id] = item.position
        yield record
    if notes is not None:
        yield from notes.summary()
    if n_items == 0 and not file_problem:
        yield Problem(str(path), "file holds no records")


# ---------------------------------------------------------------------------- whole directory


def hash_files(files: Iterable[DatasetFile]) -> str:
    """A content hash of the dataset files used (names and bytes), stable across machines."""
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.task):
        digest.update(f.task.encode() + b"\0" + f.path.suffix.encode() + b"\0")
        with open(f.path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def validate_data(data: str | Path, registry: Registry) -> tuple[list[DatasetFile], list[Problem], dict[str, int]]:
    """Check every file of a data directory; returns files, all problems, and record counts."""
    data_dir = resolve_data_dir(data)
    files, problems = discover_files(data_dir, registry)
    counts: dict[str, int] = {}
    for f in files:
        spec = registry[f.task]
        n = 0
        for item in iter_checked(f.path, spec):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                n += 1
        counts[f.task] = n
    if not files and not any(p.severity == "error" for p in problems):
        problems.append(Problem(str(data_dir), "no dataset file matches a task (expected e.g. TaxCalc.jsonl)"))
    return files, problems, counts


class DataStream:
    """The records of the chosen tasks, yielded as each is read and checked.

    Iterating yields the records :func:`load_data` would keep, in the same order (a task's
    file after the previous one's; at most ``limit`` per task, though every record is
    checked), while the problems are collected on the side. Once the iteration has ended,
    :meth:`result` gives the :class:`LoadedData`, or raises :class:`DataError` with every
    problem, exactly as :func:`load_data` does. This lets `taxpraben run` send the first
    request as soon as the first record is read instead of after the whole directory.

    Selection problems (an unknown task name: ``KeyError``; a data directory that is not
    one: :class:`DataError`) are raised by the constructor, before any record is read.
    """

    def __init__(
        self,
        data: str | Path,
        registry: Registry,
        tasks: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> None:
        self.data_dir = resolve_data_dir(data)
        self.registry = registry
        self.limit = limit
        files, self.problems = discover_files(self.data_dir, registry)
        if tasks is not None:
            wanted = [s.name for s in registry.select(tasks)]
            by_task = {f.task: f for f in files}
            absent = [t for t in wanted if t not in by_task]
            if absent:
                self.problems.append(Problem(str(self.data_dir), f"no data file for task(s) {absent}"))
            files = [by_task[t] for t in wanted if t in by_task]
        self.files = files
        self.records: dict[str, list[Record]] = {}
        self._done = False

    def __iter__(self) -> Iterator[Record]:
        if self._done or self.records:
            raise RuntimeError("a DataStream is read once")
        for f in self.files:
            spec = self.registry[f.task]
            kept = self.records.setdefault(f.task, [])
            for item in iter_checked(f.path, spec):
                if isinstance(item, Problem):
                    self.problems.append(item)
                elif self.limit is None or len(kept) < self.limit:
                    kept.append(item)
                    yield item
        self._done = True

    def result(self) -> LoadedData:
        """The loaded data once every record was read; DataError if anything was wrong."""
        if not self._done:
            raise RuntimeError("DataStream.result() before the records were read")
        problems = self.problems
        if not self.files and not any(p.severity == "error" for p in problems):
            problems.append(
                Problem(str(self.data_dir), "no dataset file matches a task (expected e.g. TaxCalc.jsonl)")
            )
        if any(p.severity == "error" for p in problems):
            raise DataError(problems)
        return LoadedData(
            data_dir=self.data_dir,
            records=self.records,
            files={f.task: f.path for f in self.files},
            data_hash=hash_files(self.files),
            warnings=[p for p in problems if p.severity == "warning"],
            limit=self.limit,
        )


def load_data(
    data: str | Path,
    registry: Registry,
    tasks: Sequence[str] | None = None,
    limit: int | None = None,
) -> LoadedData:
    """Load the records of the chosen tasks, raising :class:`DataError` on any problem.

    ``tasks`` (names, case-insensitive) defaults to every task that has a file. Asking
    for a task with no file is an error, not an empty result. ``limit`` keeps the first
    N records of each task (all of them are still checked).
    """
    stream = DataStream(data, registry, tasks, limit)
    for _ in stream:
        pass
    return stream.result()
