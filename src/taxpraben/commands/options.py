"""The command line of the options declared in ``taxpraben.options``.

A command takes an option group (``DataOptions``, ``ScoringOptions`` ...) as one parameter
annotated with the group's class; :func:`with_options` puts the group's options on the
command line in that parameter's place (flags, help panels, environment variables, bounds
and checks from each option's declaration) and gathers the parsed values into the group. A
value out of its bounds, or failing its check, is refused while parsing: exit 2, naming the
option. Typer has no option groups: the options show in ``--help`` panels by
``rich_help_panel``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import typer
from rich.console import Console

from taxpraben.options import (
    DataOptions,
    Declared,
    ScoringOptions,
    check_value,
    declared_options,
    is_option_group,
)
from taxpraben.scoring.settings import ScoringSettings


def _base_type(annotation: Any) -> Any:
    """``int | None`` -> ``int``; ``list[int] | None`` -> ``int``."""
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    return annotation


def _callback(declared: Declared) -> Callable[[Any], Any]:
    """Typer's callback that refuses a value failing the declared check (exit 2, the option named)."""

    def callback(value: Any) -> Any:
        if value is None or isinstance(value, bool) or declared.check is None:
            return value
        try:
            check_value(Declared(declared.flag, "", "", check=declared.check), value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        return value

    return callback


def typer_annotation(declared: Declared, annotation: Any) -> Any:
    """``Annotated[type, typer.Option(...)]`` (or ``typer.Argument``) of one declared option."""
    if declared.argument:
        return Annotated[annotation, typer.Argument(help=declared.help, show_default=False)]
    kind = _base_type(annotation)
    bounds = {
        name: (int(value) if kind is int else value)
        for name, value in (("min", declared.min), ("max", declared.max))
        if value is not None
    }
    names = [declared.flag, *([declared.short] if declared.short else [])]
    option = typer.Option(
        *names,
        help=declared.help,
        envvar=declared.envvar,
        rich_help_panel=declared.panel,
        callback=_callback(declared) if declared.check is not None else None,
        **bounds,
    )
    return Annotated[annotation, option]


def option_annotation(group: type, name: str) -> Any:
    """The typer annotation of one option of ``group`` (for a command that takes only it)."""
    for f, declared, annotation in declared_options(group):
        if f.name == name:
            return typer_annotation(declared, annotation)
    raise KeyError(f"{group.__name__} has no option {name!r}")


DataOpt = option_annotation(DataOptions, "data")
TaskDirOpt = option_annotation(DataOptions, "task_dir")

Command = TypeVar("Command", bound=Callable[..., Any])


def with_options(command: Command) -> Command:
    """Give ``command`` the options of each of its option-group parameters, in its place.

    Typer reads a command's options from its signature: the returned function's signature
    has each group's fields (declarations, defaults) where the group's parameter was, and it
    calls ``command`` with them gathered into the groups. Called from Python, the options
    left out take their defaults. TypeError for a command without a group, or two options
    of one name.
    """
    signature = inspect.signature(command, eval_str=True)
    groups = {p.name: p.annotation for p in signature.parameters.values() if is_option_group(p.annotation)}
    if not groups:
        raise TypeError(f"{command.__name__} has no option-group parameter (such as 'scoring: ScoringOptions')")
    parameters: list[inspect.Parameter] = []
    owner: dict[str, str] = {}
    for parameter in signature.parameters.values():
        if parameter.name not in groups:  # keyword-only: typer passes every value by name
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            owner[parameter.name] = ""
            continue
        for f, declared, annotation in declared_options(parameter.annotation):
            if f.name in owner:
                raise TypeError(f"{command.__name__}: two options named {f.name!r}")
            owner[f.name] = parameter.name
            default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
            parameters.append(inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, annotation=typer_annotation(declared, annotation),
                default=default,
            ))  # fmt: skip

    @functools.wraps(command)
    def with_groups(**kwargs: Any) -> Any:
        for name, group in groups.items():
            values = {f.name: kwargs.pop(f.name) for f in dataclasses.fields(group) if f.name in kwargs}
            kwargs[name] = group(**values)
        return command(**kwargs)

    with_groups.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    # Typer also reads the annotations (get_type_hints): give it the resolved ones.
    with_groups.__annotations__ = {p.name: p.annotation for p in parameters}
    if signature.return_annotation is not inspect.Signature.empty:
        with_groups.__annotations__["return"] = signature.return_annotation
    return with_groups  # type: ignore[return-value]


def scoring_settings_or_exit(
    scoring: ScoringOptions, console: Console, *, seed: int, runs: int | None
) -> ScoringSettings:
    """``scoring.settings(...)``; an invalid option is printed and ends the command (exit 2)."""
    try:
        return scoring.settings(seed=seed, runs=runs)
    except ValueError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from exc
