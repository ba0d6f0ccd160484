"""Configuration files: the options of a command as a YAML mapping, read and written.

A configuration file (``--config FILE``) is one YAML mapping whose keys are the field names
of the command's option groups (:mod:`taxpraben.options`: ``model``, ``base_url``, ``data``,
``tasks``, ``runs``, ``temperature``, ``bertscore_model``, ...). Reading one
(:func:`config_values`, pure) checks every key and value as the command line would: an
unknown key is refused with the nearest valid name, a value of the wrong type or out of its
declared bounds or check is refused naming the key; paths are taken relative to the file's
directory. The command line applies the values as the defaults of the options
(``commands.options``), so that a flag given there wins over the file.

A key that is an option of another command (``model`` read by ``score``, ``profile`` by
``estimate``) is no error: :func:`config_values` leaves it out and says which it left out
(``ignored``), so that one file, such as a run's ``OUT/config.yaml``, serves ``run``,
``score`` and ``estimate``. A key that no command has is refused.

A configuration file can be code: ``serve`` is a shell command that ``run`` executes, and
``model_args`` with ``trust_remote_code`` runs a model repository's Python
(:data:`EXECUTED_KEYS`). The command line refuses such a value from a file unless it says
``--trust-config`` (``commands.options``), since a file can come from anywhere.
``model_args`` may be a YAML mapping (``{dtype: bfloat16, chat_template_kwargs:
{enable_thinking: false}}``), read as the command line's ``KEY=VALUE,...``
(:func:`mapping_as_pairs`).

Every ``run`` and ``score`` writes the options it ran with as ``OUT/config.yaml``
(:func:`config_text`): every option of the command's groups, in group order, with its
effective value, paths made absolute, so that ``taxpraben run --config OUT/config.yaml``
replays the run. No secret is an option (the API key is read from the variable that
``api_key_env`` names), and the endpoints are written without user info or query string.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union, cast, get_args, get_origin

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from taxpraben.results.json_value import JSONObject, JSONValue

if TYPE_CHECKING:

    pass

from taxpraben import options as declared_groups
from taxpraben.options import (
    EXECUTED_KEYS,
    Declared,
    check_value,
    code_it_runs,
    declared_options,
    is_option_group,
    option_values,
)

#: The name of the effective configuration a run writes into its output directory.
CONFIG_FILE = "config.yaml"

#: Text options that hold a path (relative to a configuration file's directory);
#: ``data`` keeps its one special value, ``sample`` (the bundled sample).
_PATH_TEXT = frozenset({"data"})
#: Text options of ``KEY=VALUE,...`` pairs that a file may also give as a mapping.
_MAPPING_TEXT = frozenset({"model_args"})
_SAMPLE = "sample"


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


# ---------------------------------------------------------------------------- reading


def read_config_file(path: Path) -> dict[object, JSONValue]:
    """The mapping of a YAML configuration file; ConfigError (the file, the line) if it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file: {exc.strerror or exc}") from exc
    import yaml  # here, not at the top: `run` imports this module before its first request (~10 ms)

    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}{where}: not valid YAML: {problem}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a configuration file is a mapping of option names to values, "
                          f"got {type(raw).__name__}")  # fmt: skip
    return raw


def load_config(path: Path, groups: Sequence[type], ignored: list[str] | None = None) -> dict[str, object]:
    """The checked values of the configuration file ``path`` for a command taking ``groups``;
    the keys of other commands' options are appended to ``ignored`` (:func:`config_values`)."""
    return config_values(read_config_file(path), groups, source=path, ignored=ignored)


def config_values(
    raw: Mapping[object, JSONValue], groups: Sequence[type], *, source: Path, ignored: list[str] | None = None
) -> dict[str, object]:
    """``raw`` (a configuration file's mapping) checked against the option groups: values by
    option name, converted to the option's type, paths relative to ``source``'s directory.

    A key that is an option of another command only is left out and appended to
    ``ignored`` (the caller says so once). ConfigError for a key that is no command's option
    (with the nearest valid name), a value of the wrong type, or one out of the declared
    bounds or failing the declared check (naming the key and flag).
    """
    known: dict[str, tuple[Declared, object]] = {}
    for group in groups:
        for f, declared, annotation in declared_options(group):
            known[f.name] = (declared, annotation)
    elsewhere = every_option_name()
    base = source.parent
    out: dict[str, object] = {}
    for key, value in raw.items():
        if isinstance(key, str) and key not in known and key in elsewhere:
            if ignored is not None:
                ignored.append(key)
            continue
        if not isinstance(key, str) or key not in known:
            raise ConfigError(f"{source}: unknown key {key!r}{_nearest_hint(str(key), known)}")
        declared, annotation = known[key]
        where = f"{source}: key {key!r} ({declared.flag})"
        if key in _MAPPING_TEXT and isinstance(value, dict):
            value = mapping_as_pairs(value)
        try:
            converted = convert_value(value, annotation)
        except TypeError as exc:
            raise ConfigError(f"{where}: {exc}") from exc
        if converted is not None and not isinstance(converted, bool):
            try:
                check_value(declared, converted)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from exc
        out[key] = _relative_to(base, key, converted)
    return out


def mapping_as_pairs(mapping: Mapping[object, JSONValue]) -> str:
    """A YAML mapping as ``--model-args`` text: ``KEY=VALUE`` pairs, each value as JSON (which
    ``models.model_args`` reads back as it was: a nested mapping stays one)."""
    import json

    return ",".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in mapping.items())


def every_option_name() -> frozenset[str]:
    """The option names of every command (every option group of :mod:`taxpraben.options`)."""
    return frozenset(
        f.name for group in vars(declared_groups).values() if is_option_group(group) for f in dataclasses.fields(group)
    )


def _nearest_hint(key: str, known: Mapping[str, object]) -> str:
    """``; did you mean 'base_url'?`` (difflib; a flag's spelling ``--base-url`` too), else the keys."""
    spelled = key.strip().lstrip("-").replace("-", "_").lower()
    if spelled in known:
        return f"; did you mean {spelled!r}?"
    nearest = difflib.get_close_matches(spelled, list(known), n=1, cutoff=0.6)
    if nearest:
        return f"; did you mean {nearest[0]!r}?"
    return f"; valid keys: {', '.join(known)}"


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in get_args(annotation))
    if get_origin(annotation) is list:
        return f"a list of {_type_name(get_args(annotation)[0])}"
    names = {str: "text", int: "an integer", float: "a number", bool: "true or false", Path: "a path",
             type(None): "null"}  # fmt: skip
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def convert_value(value: JSONValue, annotation: Any) -> object:
    """``value`` (as YAML read it) as an option of type ``annotation``; TypeError saying what
    was expected. Numbers are not text and text is not a number: ``runs: "5"`` is refused,
    as a mistyped value that would otherwise be taken for another."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if value is None:
            if len(args) < len(get_args(annotation)):
                return None
            raise TypeError(f"needs {_type_name(annotation)}, got null")
        if set(args) == {int, float}:  # a count or a fraction (--limit)
            number = cast(float, _convert_one(value, float))  # a float: the kind asked for
            return int(number) if number.is_integer() and number >= 1 else number
        if len(args) == 1:
            return convert_value(value, args[0])
        raise TypeError(f"an option of type {annotation} cannot be read from a file")  # pragma: no cover
    if get_origin(annotation) is list:
        item = get_args(annotation)[0]
        values = value if isinstance(value, list) else [value]
        return [_convert_one(v, item) for v in values]
    if value is None:
        raise TypeError(f"needs {_type_name(annotation)}, got null")
    return _convert_one(value, annotation)


def _convert_one(value: JSONValue, kind: object) -> object:
    if kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is Path:
        if isinstance(value, str) and value.strip():
            return Path(value).expanduser()
    elif kind is str:
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):  # tasks: [TaxCalc, TaxQA]
            return ",".join(value)
    else:  # pragma: no cover - every declared option is one of the kinds above
        raise TypeError(f"an option of type {kind} cannot be read from a file")
    shown = "null" if value is None else f"{value!r} ({type(value).__name__})"
    raise TypeError(f"needs {_type_name(kind)}, got {shown}")


def _relative_to(base: Path, key: str, value: object) -> object:
    """Paths of a file are relative to its directory; ``data: sample`` stays the sample."""
    if isinstance(value, Path):
        return value if value.is_absolute() else base / value
    if isinstance(value, list):
        return [_relative_to(base, key, v) for v in value]
    if key in _PATH_TEXT and isinstance(value, str) and value != _SAMPLE and not Path(value).expanduser().is_absolute():
        return str(base / Path(value).expanduser())
    return value


# ---------------------------------------------------------------------------- writing


def effective_values(group: DataclassInstance) -> JSONObject:
    """The values of an option group as config.yaml writes them: paths absolute (so that
    the file replays the run from any directory), endpoints without secrets."""
    from taxpraben.models.base import redact_url

    values = option_values(group)
    for f, _, annotation in declared_options(type(group)):
        value = values[f.name]
        if value is None:
            continue
        if _holds_path(annotation) or (f.name in _PATH_TEXT and value != _SAMPLE):
            values[f.name] = [os.path.abspath(v) for v in value] if isinstance(value, list) else os.path.abspath(value)
        if f.name == "base_url":
            values[f.name] = [redact_url(v) for v in value]
    return values


def _holds_path(annotation: object) -> bool:
    if annotation is Path:
        return True
    return any(_holds_path(a) for a in get_args(annotation))


def group_title(group: type) -> str:
    """``RunOutputOptions`` -> ``Run output options``: a group's heading in config.yaml (its
    class name in words; the docstring is for the code's readers, not the file's)."""
    words = re.findall(r"[A-Z][a-z0-9]*", group.__name__) or [group.__name__]
    return " ".join([words[0], *(w.lower() for w in words[1:])])


def config_text(command: str, groups: Sequence[DataclassInstance], version: str) -> str:
    """config.yaml of a command run with ``groups`` (option group instances, in the command's
    order): a header naming the command and the version, then each group's options."""
    lines = [
        f"# The effective configuration of `taxpraben {command}` (taxpraben {version}).",
        f"# Replay it with: taxpraben {command} --config THIS_FILE (a flag given there wins over the file).",
        "# run, score and estimate all take it: each ignores (and names) the options it does not have.",
    ]
    if any(code_it_runs(key, getattr(group, key, None)) for group in groups for key in EXECUTED_KEYS):
        lines.append("# It holds what runs code (serve, trust_remote_code): a replay runs it only with --trust-config.")
    import yaml  # see read_config_file (run: loaded on the scoring thread, jobs.read_ahead)

    for group in groups:
        if not dataclasses.is_dataclass(group):  # pragma: no cover - the jobs pass option groups
            raise TypeError(f"{group!r} is not an option group")
        lines += ["", f"# {group_title(type(group))}"]
        dumped = yaml.safe_dump(effective_values(group), sort_keys=False, allow_unicode=True, width=1000)
        lines.append(dumped.rstrip("\n"))
    return "\n".join(lines) + "\n"


def job_groups(job: DataclassInstance) -> list[DataclassInstance]:
    """The option groups of a job (``RunJob``, ``ScoreJob``: one group per field, in the
    command's order)."""
    return [getattr(job, f.name) for f in dataclasses.fields(job)]


def write_config_file(out_dir: Path, command: str, groups: Sequence[DataclassInstance]) -> Path:
    """Write ``OUT/config.yaml`` (:func:`config_text`) atomically; OSError if it cannot be."""
    from taxpraben.atomic import write_text_atomically
    from taxpraben.manifest import package_version

    path = out_dir / CONFIG_FILE
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, config_text(command, groups, package_version()))
    return path
