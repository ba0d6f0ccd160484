"""Finding dataset files and reading their raw items (the contract: README, "Data format").

Layouts: ``DIR/NAME.jsonl``, ``DIR/NAME.json`` (an array of objects), ``DIR/NAME.parquet``,
or the same under ``DIR/NAME/test.*``. ``NAME`` matches a task of the registry
(case-insensitively). Items are streamed: JSON Lines line by line, JSON arrays through
ijson's incremental parser, parquet batch by batch, so a large file is never held in memory
as a whole. What an item must hold to be a record is checked in :mod:`taxpraben.data.checks`.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from taxpraben.data.problems import DataError, Problem
from taxpraben.tasks import Registry, closest_task_name

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

DATA_SUFFIXES = (".jsonl", ".json", ".parquet")
SAMPLE_NAME = "sample"
_CHUNK = 1 << 20


@dataclass
class DatasetFile:
    task: str
    path: Path


# ---------------------------------------------------------------------------- discovery


def sample_data_dir() -> Path:
    """The bundled sample (package data): what importlib.resources.files("taxpraben.data")
    gives for a package on disk, without importing importlib.resources (run's start)."""
    return Path(__file__).parent / "sample"


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


def looked_for(task: str) -> list[str]:
    """The file names that would hold ``task``'s data (any case of its name is matched)."""
    return [f"{task}{suffix}" for suffix in DATA_SUFFIXES] + [f"{task}/test{suffix}" for suffix in DATA_SUFFIXES]


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
    obj: JSONValue = None
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


def _array_items(fh: BinaryIO) -> Iterator[JSONValue]:
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


# ---------------------------------------------------------------------------- content hash


def hash_files(files: Iterable[DatasetFile]) -> str:
    """A content hash of the dataset files used (names and bytes), stable across machines."""
    return hash_dataset_files(files)[0]


def hash_dataset_files(files: Iterable[DatasetFile]) -> tuple[str, dict[str, str]]:
    """:func:`hash_files`' content hash and, from the same single read of each file, the
    sha256 (hex) of each task's file by task (the manifest's ``data_files``)."""
    digest = hashlib.sha256()
    per_file: dict[str, str] = {}
    for f in sorted(files, key=lambda f: f.task):
        digest.update(f.task.encode() + b"\0" + f.path.suffix.encode() + b"\0")
        own = hashlib.sha256()
        with open(f.path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
                own.update(chunk)
        digest.update(b"\0")
        per_file[f.task] = own.hexdigest()
    return "sha256:" + digest.hexdigest(), per_file
