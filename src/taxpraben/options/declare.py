"""Declaring an option: its metadata (:class:`Declared`: flag, help, panel, bounds, check), the
help panels, and what derives from the declarations of a group (:func:`declared_options`,
:func:`option_values`, :func:`check_options`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from taxpraben.results.json_value import JSONObject

MODEL_PANEL = "Model"
DATA_PANEL = "Data"
GENERATION_PANEL = "Generation"
ENDPOINT_PANEL = "Endpoint and retries"
SCORING_PANEL = "Scoring"
COST_PANEL = "Cost and budget"
OUTPUT_PANEL = "Output"

#: Options whose value can run code: ``serve`` (a shell command), ``model_args`` (with
#: ``trust_remote_code``, the model repository's Python); a configuration file gives such a value
#: only with ``--trust-config`` (``commands.options``, :func:`code_it_runs`). No other key of a
#: file runs code: plugins come from ``$TAXPRABEN_PLUGINS`` and entry points only, the judge is
#: built without model arguments, pricing and judge-prompt files are read as data, and
#: BARTScore's weights load with ``weights_only``.
EXECUTED_KEYS = ("serve", "model_args")


def code_it_runs(key: str, value: object) -> str | None:
    """What code ``value`` of option ``key`` would run, in words; None when it runs none."""
    if value is None or value == "":
        return None
    if key == "serve":
        return f"is a shell command ({value!r}) that would be run"
    if key == "model_args" and isinstance(value, str):
        from taxpraben.models.model_args import ModelArgsError, parse_model_args

        try:
            trusted = parse_model_args(value).get("trust_remote_code")
        except ModelArgsError:
            return None  # refused for what it is when the backend is built
        if trusted is True or str(trusted).strip().lower() in ("true", "1", "yes"):
            return "sets trust_remote_code=true, which runs the model repository's own Python code"
    return None


@dataclass(frozen=True)
class Declared:
    """What a user sees of one option besides its type and default."""

    flag: str
    help: str
    panel: str
    short: str | None = None
    #: What ``--help`` shows, when the help is longer than a line or two: the help in full is
    #: the option's entry of docs/options.md (:data:`FULL_HELP`).
    brief: str | None = None
    envvar: str | None = None
    #: Inclusive bounds of a number.
    min: float | None = None
    max: float | None = None
    #: Raises ValueError (its message says why) for a value that cannot be used.
    check: Callable[[Any], object] | None = None
    #: A positional argument rather than an option (``merge SOURCES...``).
    argument: bool = False
    #: The flag that sets a true/false/unset option false (``--no-chat-template``).
    negative: str | None = None


#: Where ``--help`` sends a reader for the rest of an option's description.
FULL_HELP = "docs/options.md"
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.")


def brief_help(declared: Declared) -> str:
    """What ``--help`` shows of an option: its brief, else the first sentence of its help (a
    full stop outside brackets, not one of an abbreviation). The whole help is the option's
    entry of docs/options.md."""
    if declared.brief:
        return declared.brief
    text = declared.help
    depth = 0
    for at, c in enumerate(text):
        if c in "([{（":
            depth += 1
        elif c in ")]}）":
            depth = max(depth - 1, 0)
        elif (c == "." and depth == 0 and text[at + 1 : at + 2] == " "
              and not any(text[: at + 1].endswith(a) for a in _ABBREVIATIONS)):
            return text[: at + 1]
    return text


def declare(default: object = dataclasses.MISSING, **declared: Any) -> Any:
    """A dataclass field whose metadata is the option's :class:`Declared`; no default: required."""
    return field(default=default, metadata={"option": Declared(**declared)})


def declared_options(group: type) -> Iterator[tuple[dataclasses.Field[object], Declared, object]]:
    """(field, declaration, resolved type) of every option of an option group, in order."""
    hints = get_type_hints(group)
    for f in dataclasses.fields(group):
        yield f, f.metadata["option"], hints[f.name]


def is_option_group(annotation: object) -> bool:
    """True for a class whose every field is a declared option."""
    if not (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)):
        return False
    return all("option" in f.metadata for f in dataclasses.fields(annotation))


def option_values(group: DataclassInstance) -> JSONObject:
    """The values of an option group by field name, paths as text (a manifest's form)."""
    out: JSONObject = {}
    for f in dataclasses.fields(group):
        value = getattr(group, f.name)
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, (list, tuple)):
            value = [str(v) if isinstance(v, Path) else v for v in value]
        out[f.name] = value
    return out


def check_options(group: DataclassInstance) -> None:
    """Run every declared check and bound of ``group``; ValueError naming the option.

    The command line checks as it parses; this is for groups built in Python (a test, a
    configuration file)."""
    for f, declared, _ in declared_options(type(group)):
        value = getattr(group, f.name)
        if value is None or isinstance(value, bool):
            continue
        try:
            check_value(declared, value)
        except ValueError as exc:
            raise ValueError(f"{declared.flag}: {exc}") from exc


def check_value(declared: Declared, value: object) -> None:
    """ValueError when ``value`` is out of the declared bounds or fails the declared check."""
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if declared.min is not None and isinstance(v, (int, float)) and v < declared.min:
            raise ValueError(f"{v} is below the minimum {declared.min:g}")
        if declared.max is not None and isinstance(v, (int, float)) and v > declared.max:
            raise ValueError(f"{v} is above the maximum {declared.max:g}")
        if declared.check is not None:
            declared.check(v)
