"""The command line of the options declared in ``taxpraben.options``.

A command takes an option group (``DataOptions``, ``ScoringOptions`` ...) as one parameter
annotated with the group's class; :func:`with_options` puts the group's options on the
command line in that parameter's place (flags, help panels, environment variables, bounds
and checks from each option's declaration) and gathers the parsed values into the group. A
value out of its bounds, or failing its check, is refused while parsing: exit 2, naming the
option. Typer has no option groups: the options show in ``--help`` panels by
``rich_help_panel``.

Every such command also takes ``--config FILE`` (YAML; keys are the groups' field names,
see :mod:`taxpraben.config`). The file is read first (an eager option) and becomes click's
``default_map``: a value given on the command line or by its environment variable wins over
the file, the file over the declared default, and a required option (``--model``) may come
from the file. A bad file, key or value is refused before anything runs: exit 2, naming the
file and the key. A key that is an option of another command only (``model`` in a file
given to ``score``) is left out, and the keys left out are named in one warning line: a
run's ``OUT/config.yaml`` serves ``run``, ``score`` and ``estimate``.

A file's value that runs code (``serve``, a shell command; ``model_args`` with
``trust_remote_code=true``: ``options.EXECUTED_KEYS``, ``options.code_it_runs``) is refused
(exit 2, naming the key, the file and the flag) unless the command line says
``--trust-config``, which the commands that take such an option have; the option given on
the command line wins as usual.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar, Union, get_args, get_origin

import typer

from taxpraben.commands.common import OPTION_SOURCES, cli_console
from taxpraben.options import (
    DATA_PANEL,
    EXECUTED_KEYS,
    DataOptions,
    Declared,
    ScoringOptions,
    brief_help,
    check_value,
    code_it_runs,
    declared_options,
    is_option_group,
)
from taxpraben.scoring.settings import ScoringSettings

if TYPE_CHECKING:
    from rich.console import Console
    from typer._click.core import Context as ClickContext


def _base_type(annotation: Any) -> Any:
    """``int | None`` -> ``int``; ``list[int] | None`` -> ``int``."""
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    return annotation


def _is_number_union(annotation: object) -> bool:
    """``int | float`` (or ``int | float | None``): an option that is a count or a fraction."""
    if get_origin(annotation) not in (Union, types.UnionType):
        return False
    return {a for a in get_args(annotation) if a is not type(None)} == {int, float}


def parse_number(value: object) -> int | float:
    """``"3"`` -> 3, ``"0.1"`` -> 0.1, ``"2.0"`` -> 2: an integer stays an integer (a count),
    anything else is a float; typer's parser of an ``int | float`` option (a value of a
    configuration file arrives already a number)."""
    if isinstance(value, bool):
        raise typer.BadParameter(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        number: int | float = value
    else:
        text = str(value).strip()
        try:
            number = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise typer.BadParameter(f"{text!r} is not a number") from None
    if isinstance(number, float) and number.is_integer() and number >= 1:
        return int(number)
    return number


def _callback(declared: Declared) -> Callable[[object], object]:
    """Typer's callback that refuses a value failing the declared check (exit 2, the option named)."""

    def callback(value: object) -> object:
        if value is None or isinstance(value, bool) or declared.check is None:
            return value
        try:
            check_value(Declared(declared.flag, "", "", check=declared.check), value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        return value

    return callback


def rich_help(text: str) -> str:
    """``text`` as typer's help shows it: its square brackets escaped from rich's markup
    (``'taxpraben[mlflow]'`` would otherwise lose ``[mlflow]``, read as a style)."""
    return text.replace("[", "\\[")


#: The metavar of an option by its type (typer's default, ``<int range>``, is wider than its value).
_METAVARS: dict[object, str] = {int: "N", float: "X", str: "TEXT", Path: "PATH"}


def typer_annotation(declared: Declared, annotation: Any) -> Any:
    """``Annotated[type, typer.Option(...)]`` (or ``typer.Argument``) of one declared option."""
    if declared.argument:
        return Annotated[annotation, typer.Argument(help=declared.help, show_default=False)]
    parser: dict[str, Any] = {}
    if _is_number_union(annotation):  # typer takes no unions: a float option with our parser, named as a number
        annotation, parser = Optional[float], {"parser": parse_number, "metavar": "NUMBER"}  # noqa: UP045 (typer reads it)
    kind = _base_type(annotation)
    bounds: dict[str, Any] = {
        name: (int(value) if kind is int else value)
        for name, value in (("min", declared.min), ("max", declared.max))
        if value is not None
    }
    flag = f"{declared.flag}/{declared.negative}" if declared.negative else declared.flag
    names = [flag, *([declared.short] if declared.short else [])]
    if "metavar" not in parser and kind is not bool:
        parser["metavar"] = _METAVARS.get(kind, "TEXT")
    option = typer.Option(
        *names,
        help=rich_help(brief_help(declared)),
        envvar=declared.envvar,
        rich_help_panel=declared.panel,
        callback=_callback(declared) if declared.check is not None else None,
        **(bounds | parser),  # one mapping: mypy matches no overload of Option with two
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

Command = TypeVar("Command", bound=Callable[..., object])


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
    if CONFIG_PARAMETER in signature.parameters:
        raise TypeError(f"{command.__name__}: {CONFIG_PARAMETER!r} is the --config option of every command")
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
    parameters.append(_config_parameter(list(groups.values())))
    executed = [key for key in EXECUTED_KEYS if owner.get(key)]
    if executed:
        parameters.append(_trust_parameter())
    parameters.append(inspect.Parameter(CONTEXT_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))

    @functools.wraps(command)
    def with_groups(**kwargs: Any) -> object:
        ctx = kwargs.pop(CONTEXT_PARAMETER, None)  # typer's; none when called from Python
        config = kwargs.pop(CONFIG_PARAMETER, None)  # already applied, as the defaults it gave
        trusted = bool(kwargs.pop(TRUST_PARAMETER, False))
        sources = option_sources(ctx, [name for name, group in owner.items() if group])
        if config is not None and not trusted:
            refuse_executed_keys(config, {key: kwargs.get(key) for key in executed}, sources)
        for name, group in groups.items():
            values = {f.name: kwargs.pop(f.name) for f in dataclasses.fields(group) if f.name in kwargs}
            kwargs[name] = group(**values)
        token = OPTION_SOURCES.set(sources)
        try:
            return command(**kwargs)
        finally:
            OPTION_SOURCES.reset(token)

    with_groups.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]  # typer reads it; no function type declares it
    # Typer also reads the annotations (get_type_hints): give it the resolved ones.
    with_groups.__annotations__ = {p.name: p.annotation for p in parameters}
    if signature.return_annotation is not inspect.Signature.empty:
        with_groups.__annotations__["return"] = signature.return_annotation
    return with_groups  # type: ignore[return-value]  # the command, its options grouped


#: The parameter of ``--config`` in every command :func:`with_options` builds.
CONFIG_PARAMETER = "config"
#: The parameter of ``--trust-config`` (commands that take an option in ``EXECUTED_KEYS``).
TRUST_PARAMETER = "trust_config"

_TRUST_HELP = "Let --config's file give what runs code (serve; model_args with trust_remote_code)."


#: The hidden parameter through which typer hands a command its context.
CONTEXT_PARAMETER = "typer_context"

def option_sources(ctx: ClickContext | None, names: list[str]) -> dict[str, str]:
    """The source of each option ``names`` (``commands.common.OPTION_SOURCES``); {} without a context."""
    if ctx is None:
        return {}
    return {name: getattr(ctx.get_parameter_source(name), "name", "") for name in names}


def refuse_executed_keys(config: Path, values: dict[str, object], sources: dict[str, str]) -> None:
    """BadParameter (exit 2) when a value of ``values`` that runs code (:func:`code_it_runs`)
    came from the configuration file ``config`` (not from the command line): it needs
    ``--trust-config``."""
    for key, value in values.items():
        runs = code_it_runs(key, value) if sources.get(key) == "DEFAULT_MAP" else None
        if runs is not None:
            raise typer.BadParameter(
                f"{config}: key {key!r} {runs}; a configuration file's code runs only with --trust-config (or "
                f"give it on the command line as --{key.replace('_', '-')})", param_hint="'--config'",
            )  # fmt: skip


def _trust_parameter() -> inspect.Parameter:
    option = typer.Option("--trust-config", help=_TRUST_HELP, rich_help_panel=DATA_PANEL)
    return inspect.Parameter(
        TRUST_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[bool, option], default=False
    )

_CONFIG_HELP = "YAML file of options (snake_case keys); a flag given here wins over it."


def _config_parameter(groups: list[type]) -> inspect.Parameter:
    """The ``--config FILE`` parameter: read eagerly, before the other options are parsed."""

    def load(ctx: typer.Context, value: Path | None) -> Path | None:
        if value is None or ctx.resilient_parsing:
            return value
        from taxpraben.config import ConfigError, load_config

        ignored: list[str] = []
        try:
            values = load_config(value, groups, ignored)
        except ConfigError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param_hint="'--config'") from exc
        if ignored:
            say_ignored(value, ctx.info_name or "this command", ignored)
        # click's own precedence: the command line, then the environment, then default_map
        ctx.default_map = {**(ctx.default_map or {}), **values}
        return value

    option = typer.Option(
        "--config", help=_CONFIG_HELP, rich_help_panel=DATA_PANEL, is_eager=True, callback=load,
        exists=False, dir_okay=False,
    )  # fmt: skip
    return inspect.Parameter(
        CONFIG_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[Optional[Path], option], default=None  # noqa: UP045
    )


def say_ignored(path: Path, command: str, keys: list[str]) -> None:
    """One warning line on stderr: the keys of ``path`` that ``command`` does not take."""
    cli_console(stderr=True).print(
        f"{path}: ignored by `{command}`, which does not take them: {', '.join(keys)}",
        style="yellow", markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip


def scoring_settings_or_exit(
    scoring: ScoringOptions, console: Console, *, seed: int, runs: int | None
) -> ScoringSettings:
    """``scoring.settings(...)``; an invalid option is printed and ends the command (exit 2)."""
    try:
        return scoring.settings(seed=seed, runs=runs)
    except ValueError as exc:
        console.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from exc
