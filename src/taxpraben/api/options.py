"""Keyword arguments of the library calls as the command's option groups.

``evaluate(model, data, concurrency=32, no_semantic=True)`` takes the options of
``taxpraben run`` by their declared names (the keys of a configuration file: ``base_url``,
``runs``, ``bertscore_model``, ...), checked as a configuration file's values are
(:func:`taxpraben.config.config_values`: an unknown name is refused with the nearest one, a
value of the wrong type or out of its bounds is refused naming the option and its flag); an
option not given takes its environment variable when it declares one, as on the command line,
else its default.
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from taxpraben.config import ConfigError, config_values
from taxpraben.options import declared_options, is_option_group

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from taxpraben.results.json_value import JSONValue

JobT = TypeVar("JobT")


def job_of(job_class: type[JobT], caller: str, given: Mapping[str, object]) -> JobT:
    """The job ``job_class`` (a dataclass of option groups) of ``given`` (option name -> value);
    TypeError naming ``caller`` for a name that is no option of it, ValueError for a value that
    cannot be used (the option and its flag named)."""
    by_field = _option_groups(job_class)
    groups = list(by_field.values())
    raw: dict[object, JSONValue] = {key: _as_json(value) for key, value in given.items() if value is not None}
    try:
        values = config_values(raw, groups, source=Path(f"{caller}()"))
    except ConfigError as exc:
        message = str(exc)
        raise (TypeError if "unknown key" in message else ValueError)(message.replace("key ", "option ", 1)) from None
    for group in groups:
        for f, declared, annotation in declared_options(group):
            if f.name not in values and f.name not in given and declared.envvar and os.environ.get(declared.envvar):
                values[f.name] = _from_environment(os.environ[declared.envvar], annotation)
    built: dict[str, object] = {}
    for name, group in by_field.items():
        names = {f.name for f in dataclasses.fields(group)}
        built[name] = group(**{k: v for k, v in values.items() if k in names})
    return job_class(**built)


def _option_groups(job_class: type) -> dict[str, type[DataclassInstance]]:
    """Each field of a job class that is an option group, with its class, a generic job's type
    variable resolved (``ScoreJob(ScoringJob[ScoreInputOptions])``: ``inputs``)."""
    hints = get_type_hints(job_class)
    bound: dict[object, object] = {}
    for base in getattr(job_class, "__orig_bases__", ()):
        origin = get_origin(base)
        params = getattr(origin, "__parameters__", ())
        bound.update(zip(params, get_args(base), strict=False))
    fields = dataclasses.fields(cast("type[DataclassInstance]", job_class))
    types_of = {f.name: bound.get(hints[f.name], hints[f.name]) for f in fields}
    return {name: cast("type[DataclassInstance]", group) for name, group in types_of.items() if is_option_group(group)}


def _as_json(value: object) -> JSONValue:
    """A Python value as a configuration file would hold it: paths as text, tuples as lists."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    return cast("JSONValue", value)  # checked by config_values


def _from_environment(raw: str, annotation: object) -> object:
    """An environment variable's text as an option of type ``annotation`` (as the command
    line's parser takes it: text stays text, a number is parsed, a list is split on spaces)."""
    args = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    kind = next((a for a in args if a is not type(None)), str)
    if get_origin(kind) is list:
        item = get_args(kind)[0]
        return [_from_environment(part, item) for part in raw.split()]
    if kind is Path:
        return Path(raw).expanduser()
    if kind is int:
        return int(raw)
    if kind is float:
        return float(raw)
    if kind is bool:
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    return raw
